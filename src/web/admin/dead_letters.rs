//! `/api/admin/rooms/{room}/webhook/dead-letters…`: a room's webhook dead letters, read
//! and replayed (thin over [`crate::domain::admin::webhooks`]).

use actix_web::{get, post, web, HttpResponse};
use utoipa::OpenApi;

use super::auth::Admin;
use super::responses::{AdminReadErrors, AdminWriteErrors};
use crate::domain::admin::webhooks::{self, DeadLetter, DeadLetters, Replayed};
use crate::domain::admission::Engine;
use crate::web::error::{ApiError, ErrorBody};
use crate::web::support::room_id;

/// The OpenAPI description of these routes (merged into `/api/openapi.json` with the
/// other admin routes').
#[derive(OpenApi)]
#[openapi(
    paths(list, replay_one, replay_all),
    components(schemas(DeadLetters, DeadLetter, Replayed))
)]
pub struct Doc;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(list).service(replay_all).service(replay_one);
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The room's kept dead letters (the newest 1000), newest first, and its webhook figures.", body = DeadLetters),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminReadErrors,
    )
)]
#[get("/api/admin/rooms/{room}/webhook/dead-letters")]
async fn list(
    _a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    Ok(HttpResponse::Ok().json(webhooks::dead_letters(&engine, &room).await?))
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "Every kept dead letter is a retry again, due now, with all its attempts; the event ids (none when there was none).", body = Replayed),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminWriteErrors,
    )
)]
#[post("/api/admin/rooms/{room}/webhook/dead-letters/replay")]
async fn replay_all(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let replayed = webhooks::replay(&engine, &a.who, &room, None).await?;
    Ok(HttpResponse::Ok().json(Replayed { replayed }))
}

#[utoipa::path(
    tag = "admin",
    params(
        ("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`."),
        ("event_id" = String, Path, description = "The dead letter's `event_id` (`<ms>-<seq>`)."),
    ),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The letter is a retry again, due now, with all its attempts.", body = Replayed),
        (status = 400, description = "`invalid_field` (`event_id`): not an event id.", body = ErrorBody),
        (status = 404, description = "`unknown_room`; `not_found`: the room keeps no dead letter for this event (never given up, replayed already, pushed out), or the admin interface is off.", body = ErrorBody),
        AdminWriteErrors,
    )
)]
#[post("/api/admin/rooms/{room}/webhook/dead-letters/{event_id}/replay")]
async fn replay_one(
    a: Admin,
    path: web::Path<(String, String)>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (room, event_id) = path.into_inner();
    let room = room_id(&room)?;
    let replayed = webhooks::replay(&engine, &a.who, &room, Some(&event_id)).await?;
    Ok(HttpResponse::Ok().json(Replayed { replayed }))
}
