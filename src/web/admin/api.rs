//! The admin JSON API under `/api/admin/…`: thin handlers over the admin service
//! ([`crate::domain::admin`]), which applies each change and writes it to the audit log.

use actix_web::{delete, get, post, put, web, HttpResponse, ResponseError};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::auth::Admin;
use crate::domain::admin::visitors::{self, Removal, Wanted};
use crate::domain::admin::{self as service, PutOutcome, Switch};
use crate::domain::admission::Engine;
use crate::domain::identity::{SupportCode, VisitorId};
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
        .service(find_visitors)
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
    let (config, version, live) = service::room(&engine, &room).await?;
    Ok(HttpResponse::Ok().json(json!({ "config": config, "version": version, "live": live })))
}

/// An error in the one shape, with more members beside `error` (the `409`s that carry
/// what the client needs to decide: the current config, or the matching visitors).
fn error_with(err: ApiError, members: Value) -> HttpResponse {
    let mut body = json!({ "error": { "code": err.code(), "message": err.to_string() } });
    if let (Some(b), Value::Object(m)) = (body.as_object_mut(), members) {
        b.extend(m);
    }
    err.error_response()
        .set_body(actix_web::body::BoxBody::new(body.to_string()))
}

/// The body of a `PUT`: any room fields, plus the optional `version` the change is based
/// on. Read as an object first so `version` can sit beside the fields of [`RoomPatch`],
/// which refuses unknown fields.
fn put_body(mut body: Map<String, Value>) -> Result<(RoomPatch, Option<u64>), ApiError> {
    let malformed = |message: String| ApiError::BadRequest {
        code: "malformed_json",
        message,
    };
    let version = match body.remove("version") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            malformed("`version` must be a whole number (the one GET answered)".into())
        })?),
    };
    let patch = serde_json::from_value(Value::Object(body))
        .map_err(|e| malformed(format!("the request body is not valid JSON: {e}")))?;
    Ok((patch, version))
}

/// Creates a room (`target_url` required) or changes the given fields of an existing one;
/// with `version`, only if nobody changed the room since that version (else `409`).
#[put("/api/admin/rooms/{room}")]
async fn put_room(
    a: Admin,
    room: web::Path<String>,
    body: web::Json<Map<String, Value>>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (patch, expected) = put_body(body.into_inner())?;
    Ok(
        match service::put_room(&engine, &a.who, &room, &patch, expected).await? {
            PutOutcome::Created { config, version } => {
                HttpResponse::Created().json(json!({ "config": config, "version": version }))
            }
            PutOutcome::Changed { config, version } => {
                HttpResponse::Ok().json(json!({ "config": config, "version": version }))
            }
            PutOutcome::Stale { config, version } => error_with(
                ApiError::Conflict(format!(
                    "`{room}` was changed by someone else since version {}: it is at \
                     version {version}; nothing was changed",
                    expected.unwrap_or_default()
                )),
                json!({ "config": config, "version": version }),
            ),
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
    let (config, version) = service::switch(&engine, &a.who, &room, action).await?;
    Ok(HttpResponse::Ok().json(json!({ "config": config, "version": version })))
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

/// `?code=K7QX-M2PD` or `?id=<32 hex>`: exactly one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FindQuery {
    code: Option<String>,
    id: Option<String>,
}

#[get("/api/admin/rooms/{room}/visitors")]
async fn find_visitors(
    _a: Admin,
    room: web::Path<String>,
    q: web::Query<FindQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let wanted = match (&q.code, &q.id) {
        (Some(code), None) => Wanted::Code(SupportCode::parse(code).ok_or_else(|| {
            ApiError::invalid_field(
                "code",
                "must be a support code: 8 characters of 0-9 and A-Z (no I, L, O, U), like K7QX-M2PD",
            )
        })?),
        (None, Some(id)) => Wanted::Id(
            VisitorId::parse(&id.trim().to_ascii_lowercase())
                .ok_or_else(|| ApiError::invalid_field("id", "must be 32 hex digits"))?,
        ),
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of ?code=<support code> or ?id=<visitor id>",
            ))
        }
    };
    let found = visitors::find(&engine, &room, &wanted).await?;
    Ok(HttpResponse::Ok().json(json!({ "visitors": found })))
}

/// `{id}` is a full visitor id or a support code; a code that matches several visitors
/// removes nobody and answers `409` with the matches.
#[delete("/api/admin/rooms/{room}/visitors/{id}")]
async fn remove_visitor(
    a: Admin,
    path: web::Path<(String, String)>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (room, id) = path.into_inner();
    let room = room_id(&room)?;
    Ok(match visitors::remove(&engine, &a.who, &room, &id).await? {
        Removal::Removed(_) => HttpResponse::NoContent().finish(),
        Removal::Ambiguous(matches) => error_with(
            ApiError::Conflict(format!(
                "{} visitors have the support code {}; nobody was removed: remove one by its id",
                matches.len(),
                id.trim()
            )),
            json!({ "visitors": matches }),
        ),
    })
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
