//! The built-in demo origin: the "protected site" of the demo room. It checks the pass
//! the way a real origin would (here through the engine: signature, expiry, room, live
//! session) and says whether the visitor is in.

use actix_web::{get, web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use crate::domain::admission::Engine;
use crate::domain::pass::pass_cookie;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(origin);
}

#[derive(Template)]
#[template(path = "demo_origin.html")]
struct OriginPage {
    room: String,
    admitted: bool,
    visitor: String,
    expires_in: u64,
    reason: String,
}

#[derive(Deserialize)]
struct OriginQuery {
    anteroom_pass: Option<String>,
    room: Option<String>,
}

#[get("/demo/origin")]
async fn origin(
    req: HttpRequest,
    q: web::Query<OriginQuery>,
    engine: web::Data<Engine>,
) -> actix_web::Result<HttpResponse> {
    let q = q.into_inner();
    let room = q.room.unwrap_or_else(|| "demo".to_string());
    if !engine.settings.demo || !crate::config::valid_room_id(&room) {
        return Ok(HttpResponse::NotFound().finish());
    }
    let token = q.anteroom_pass.or_else(|| {
        req.cookie(&pass_cookie(&room))
            .map(|c| c.value().to_string())
    });
    let page = match token {
        None => OriginPage {
            room,
            admitted: false,
            visitor: String::new(),
            expires_in: 0,
            reason: "You have no pass for this page yet.".into(),
        },
        Some(t) => match engine.verify_pass(&room, &t).await {
            Ok(v) => OriginPage {
                room,
                admitted: true,
                visitor: v.claims.sub,
                expires_in: v
                    .claims
                    .exp
                    .saturating_sub(jsonwebtoken::get_current_timestamp()),
                reason: String::new(),
            },
            Err(e) => OriginPage {
                room,
                admitted: false,
                visitor: String::new(),
                expires_in: 0,
                reason: e.to_string(),
            },
        },
    };
    let html = page
        .render()
        .map_err(actix_web::error::ErrorInternalServerError)?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .content_type("text/html; charset=utf-8")
        .body(html))
}
