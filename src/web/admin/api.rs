//! The admin JSON API under `/api/admin/…`: thin handlers over the admin service
//! ([`crate::domain::admin`]), which applies each change and writes it to the audit log.

use actix_web::{delete, get, post, put, web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::auth::Admin;
use crate::domain::admin::{self as service, PutOutcome, Switch};
use crate::domain::admission::Engine;
use crate::store::{RoomPatch, StockChange, MAX_STOCK};
use crate::web::error::ApiError;
use crate::web::support::room_id;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(list_rooms)
        .service(get_room)
        .service(put_room)
        .service(delete_room)
        .service(switch)
        .service(stock)
        .service(remove_visitor)
        .service(flush)
        .service(room_audit)
        .service(all_audit);
}

#[get("/api/admin/rooms")]
async fn list_rooms(_a: Admin, engine: web::Data<Engine>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(service::overview(&engine, 0).await?))
}

#[get("/api/admin/rooms/{room}")]
async fn get_room(
    _a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let (config, live) = service::room(&engine, &room).await?;
    Ok(HttpResponse::Ok().json(json!({ "config": config, "live": live })))
}

/// Creates a room (`target_url` required) or changes the given fields of an existing one.
#[put("/api/admin/rooms/{room}")]
async fn put_room(
    a: Admin,
    room: web::Path<String>,
    patch: web::Json<RoomPatch>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    Ok(
        match service::put_room(&engine, &a.who, &room, &patch).await? {
            PutOutcome::Created(config) => {
                HttpResponse::Created().json(json!({ "config": config }))
            }
            PutOutcome::Changed(config) => HttpResponse::Ok().json(json!({ "config": config })),
        },
    )
}

#[delete("/api/admin/rooms/{room}")]
async fn delete_room(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    service::delete_room(&engine, &a.who, &room).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST …/pause`, `…/resume`, `…/close` and `…/open`: one flag each.
#[post("/api/admin/rooms/{room}/{action:pause|resume|close|open}")]
async fn switch(
    a: Admin,
    path: web::Path<(String, String)>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (room, action) = path.into_inner();
    let room = room_id(&room)?;
    // unwrap: the route's pattern admits only the four actions.
    let action = Switch::parse(&action).unwrap();
    let config = service::switch(&engine, &a.who, &room, action).await?;
    Ok(HttpResponse::Ok().json(json!({ "config": config })))
}

/// Body of `POST …/stock`: exactly one of the fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StockBody {
    set: Option<u64>,
    add: Option<u64>,
    unlimited: Option<bool>,
}

#[post("/api/admin/rooms/{room}/stock")]
async fn stock(
    a: Admin,
    room: web::Path<String>,
    body: web::Json<StockBody>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let change = match (body.set, body.add, body.unlimited) {
        (Some(n), None, None) | (None, Some(n), None) if n > MAX_STOCK => {
            return Err(ApiError::invalid_field(
                "stock",
                &format!("must be at most {MAX_STOCK}"),
            ))
        }
        (Some(n), None, None) => StockChange::Set(n),
        (None, Some(n), None) if n > 0 => StockChange::Add(n),
        (None, None, Some(true)) => StockChange::Unlimited,
        _ => {
            return Err(ApiError::invalid_field(
                "stock",
                "send exactly one of {\"set\": N}, {\"add\": N > 0} or {\"unlimited\": true}",
            ))
        }
    };
    let (old, new) = service::change_stock(&engine, &a.who, &room, change).await?;
    Ok(HttpResponse::Ok().json(json!({ "old": old, "new": new })))
}

#[delete("/api/admin/rooms/{room}/visitors/{id}")]
async fn remove_visitor(
    a: Admin,
    path: web::Path<(String, String)>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (room, id) = path.into_inner();
    let room = room_id(&room)?;
    service::remove_visitor(&engine, &a.who, &room, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[post("/api/admin/rooms/{room}/flush")]
async fn flush(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let n = service::flush(&engine, &a.who, &room).await?;
    Ok(HttpResponse::Ok().json(json!({ "flushed": n })))
}

#[derive(Deserialize)]
struct AuditQuery {
    limit: Option<u32>,
}

#[get("/api/admin/rooms/{room}/audit")]
async fn room_audit(
    _a: Admin,
    room: web::Path<String>,
    q: web::Query<AuditQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let limit = q.limit.unwrap_or(100).min(1000);
    let entries = service::read_audit(&engine, limit, Some(&room)).await?;
    Ok(HttpResponse::Ok().json(json!({ "entries": entries })))
}

#[get("/api/admin/audit")]
async fn all_audit(
    _a: Admin,
    q: web::Query<AuditQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let limit = q.limit.unwrap_or(100).min(1000);
    let entries = service::read_audit(&engine, limit, None).await?;
    Ok(HttpResponse::Ok().json(json!({ "entries": entries })))
}
