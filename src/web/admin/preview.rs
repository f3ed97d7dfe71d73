//! `GET /admin/rooms/{room}/preview?state=…&lang=…`: a room's queue page in any state,
//! with sample figures, for a signed-in admin (a viewer is enough: it reads). The page
//! itself is built in `web::visitor::preview`; here are the route, its query and what
//! a browser without a session sees (the sign-in page).

use actix_web::{get, web, HttpRequest, HttpResponse, ResponseError};
use serde::Deserialize;

use super::auth::Admin;
use crate::domain::admission::Engine;
use crate::web::error::ApiError;
use crate::web::support::room_id;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(preview);
}

#[derive(Deserialize)]
struct PreviewQuery {
    /// A state from `domain::preview::states()`; `queued` when left out.
    state: Option<String>,
    /// The page's language (as `?lang=` on the queue page).
    lang: Option<String>,
}

#[get("/admin/rooms/{room}/preview")]
async fn preview(
    req: HttpRequest,
    room: web::Path<String>,
    q: web::Query<PreviewQuery>,
    admin: Result<Admin, ApiError>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    match admin {
        Ok(_) => {}
        // A browser that is not signed in: to the sign-in page, then back by hand.
        Err(ApiError::Unauthorized { .. }) => {
            return HttpResponse::SeeOther()
                .insert_header(("Location", "/admin"))
                .finish()
        }
        Err(e) => return e.error_response(),
    }
    let result = async {
        let room = room_id(&room)?;
        let state = q.state.as_deref().unwrap_or("queued");
        crate::web::visitor::preview_page(&req, &engine, &room, state, q.lang.as_deref()).await
    }
    .await;
    result.unwrap_or_else(|e| e.error_response())
}
