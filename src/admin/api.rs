//! The admin JSON API under `/api/admin/…`. Every change takes effect at once on every
//! instance (the configuration lives in the store, and promotions are published), and
//! is written to the audit log.

use actix_web::{delete, get, post, put, web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::auth::Admin;
use super::live::{room_live, totals, RoomLive, Totals, SERIES_MINUTES};
use crate::admission::Engine;
use crate::config::RoomConfig;
use crate::error::ApiError;
use crate::identity::VisitorId;
use crate::routes::room_id;
use crate::store::{RoomPatch, StockChange};

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

/// One audit log entry.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AuditEntry {
    /// Milliseconds since the epoch.
    pub at: u64,
    pub who: String,
    pub room: String,
    pub action: String,
    pub old: Value,
    pub new: Value,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Writes an audit entry. A failure is logged, not returned: the change itself is done.
async fn audit(engine: &Engine, who: &str, room: &str, action: &str, old: Value, new: Value) {
    let e = AuditEntry {
        at: now_ms(),
        who: who.into(),
        room: room.into(),
        action: action.into(),
        old,
        new,
    };
    tracing::info!(who, room, action, old = %e.old, new = %e.new, "admin change");
    // unwrap: the entry always serialises.
    let line = serde_json::to_string(&e).unwrap();
    if let Err(err) = engine
        .store
        .audit_push(&line, engine.settings.admin.audit_keep)
        .await
    {
        tracing::error!(error = %err, "could not write the audit log");
    }
}

/// The live figures of every room (the dashboard's payload).
#[derive(Serialize)]
pub struct Overview {
    pub rooms: Vec<RoomLive>,
    pub totals: Totals,
    pub audit: Vec<AuditEntry>,
    pub at: u64,
}

pub async fn overview(engine: &Engine, audit_entries: u32) -> Result<Overview, ApiError> {
    let store = &engine.store;
    let ids = store
        .rooms()
        .await
        .map_err(|e| engine.store_failed("admin", "*", e))?;
    let sockets = store.sockets().await.unwrap_or_default();
    let mut rooms = Vec::with_capacity(ids.len());
    for id in ids {
        let (Ok(Some(cfg)), Ok(report)) = (
            store.room(&id).await,
            store.report(&id, SERIES_MINUTES).await,
        ) else {
            continue; // deleted meanwhile
        };
        rooms.push(room_live(&cfg, &report, &sockets));
    }
    let audit = if audit_entries > 0 {
        read_audit(engine, audit_entries, None).await?
    } else {
        Vec::new()
    };
    Ok(Overview {
        totals: totals(&rooms),
        rooms,
        audit,
        at: now_ms(),
    })
}

async fn read_audit(
    engine: &Engine,
    limit: u32,
    room: Option<&str>,
) -> Result<Vec<AuditEntry>, ApiError> {
    let fetch = if room.is_some() {
        engine.settings.admin.audit_keep
    } else {
        limit
    };
    let lines = engine
        .store
        .audit(fetch)
        .await
        .map_err(|e| engine.store_failed("audit", "*", e))?;
    Ok(lines
        .iter()
        .filter_map(|l| serde_json::from_str::<AuditEntry>(l).ok())
        .filter(|e| room.is_none_or(|r| e.room == r))
        .take(limit as usize)
        .collect())
}

async fn live_of(engine: &Engine, cfg: &RoomConfig) -> Result<RoomLive, ApiError> {
    let report = engine
        .store
        .report(&cfg.id, SERIES_MINUTES)
        .await
        .map_err(|e| engine.store_failed("admin", &cfg.id, e))?;
    let sockets = engine.store.sockets().await.unwrap_or_default();
    Ok(room_live(cfg, &report, &sockets))
}

#[get("/api/admin/rooms")]
async fn list_rooms(_a: Admin, engine: web::Data<Engine>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(overview(&engine, 0).await?))
}

#[get("/api/admin/rooms/{room}")]
async fn get_room(
    _a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let cfg = engine.room_config(&room).await?;
    let live = live_of(&engine, &cfg).await?;
    Ok(HttpResponse::Ok().json(json!({ "config": cfg, "live": live })))
}

/// Checks a configuration, naming the first bad field.
fn validate(cfg: &RoomConfig) -> Result<(), ApiError> {
    cfg.check()
        .map_err(|(field, message)| ApiError::invalid_field(field, &message))
}

/// Applies a patch, audits each changed field, answers with the new config.
async fn apply(
    engine: &Engine,
    who: &str,
    room: &str,
    patch: &RoomPatch,
    action_prefix: &str,
) -> Result<RoomConfig, ApiError> {
    let old = engine.room_config(room).await?;
    let new = patch.applied_to(&old);
    validate(&new)?;
    engine
        .store
        .patch_room(room, patch)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    let (o, n) = (json!(old), json!(new));
    for (k, v) in n.as_object().into_iter().flatten() {
        if o.get(k) != Some(v) && k != "stock" {
            audit(
                engine,
                who,
                room,
                &format!("{action_prefix}{k}"),
                o[k].clone(),
                v.clone(),
            )
            .await;
        }
    }
    Ok(RoomConfig {
        stock: old.stock,
        ..new
    })
}

/// Creates a room (`target_url` required) or changes the given fields of an existing one.
#[put("/api/admin/rooms/{room}")]
async fn put_room(
    a: Admin,
    room: web::Path<String>,
    patch: web::Json<RoomPatch>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = crate::config::valid_room_id(&room)
        .then(|| room.to_string())
        .ok_or_else(|| ApiError::invalid_field("id", "must match [A-Za-z0-9_-]{1,64}"))?;
    let exists = engine
        .store
        .room(&room)
        .await
        .map_err(|e| engine.store_failed("admin", &room, e))?
        .is_some();
    if exists {
        let cfg = apply(&engine, &a.who, &room, &patch, "set ").await?;
        return Ok(HttpResponse::Ok().json(json!({ "config": cfg })));
    }
    let base = RoomConfig {
        id: room.clone(),
        ..RoomConfig::default()
    };
    let cfg = patch.applied_to(&base);
    validate(&cfg)?;
    if !engine
        .store
        .put_room(&cfg, true)
        .await
        .map_err(|e| engine.store_failed("admin", &room, e))?
    {
        return Err(ApiError::Conflict(format!(
            "room `{room}` was just created"
        )));
    }
    audit(
        &engine,
        &a.who,
        &room,
        "create room",
        Value::Null,
        json!(cfg),
    )
    .await;
    Ok(HttpResponse::Created().json(json!({ "config": cfg })))
}

#[delete("/api/admin/rooms/{room}")]
async fn delete_room(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let old = engine.room_config(&room).await?;
    engine
        .store
        .delete_room(&room)
        .await
        .map_err(|e| engine.store_failed("admin", &room, e))?;
    engine.metrics.forget_room(&room);
    audit(
        &engine,
        &a.who,
        &room,
        "delete room",
        json!(old),
        Value::Null,
    )
    .await;
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
    let patch = match action.as_str() {
        "pause" => RoomPatch {
            paused: Some(true),
            ..RoomPatch::default()
        },
        "resume" => RoomPatch {
            paused: Some(false),
            ..RoomPatch::default()
        },
        "close" => RoomPatch {
            closed: Some(true),
            ..RoomPatch::default()
        },
        _ => RoomPatch {
            closed: Some(false),
            ..RoomPatch::default()
        },
    };
    let cfg = apply(&engine, &a.who, &room, &patch, "set ").await?;
    Ok(HttpResponse::Ok().json(json!({ "config": cfg })))
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
    let (old, new, _) = engine
        .store
        .change_stock(&room, change)
        .await
        .map_err(|e| engine.store_failed("admin", &room, e))?;
    audit(&engine, &a.who, &room, "set stock", json!(old), json!(new)).await;
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
    let visitor = VisitorId::parse(&id)
        .ok_or_else(|| ApiError::invalid_field("id", "must be a visitor id (32 hex digits)"))?;
    let (removed, _) = engine
        .store
        .release(&room, visitor.as_str())
        .await
        .map_err(|e| engine.store_failed("admin", &room, e))?;
    if !removed {
        return Err(ApiError::NotFound(format!(
            "visitor {id} is neither queued nor admitted in `{room}`"
        )));
    }
    audit(
        &engine,
        &a.who,
        &room,
        "remove visitor",
        json!(id),
        Value::Null,
    )
    .await;
    Ok(HttpResponse::NoContent().finish())
}

#[post("/api/admin/rooms/{room}/flush")]
async fn flush(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let n = engine
        .store
        .flush(&room)
        .await
        .map_err(|e| engine.store_failed("admin", &room, e))?;
    audit(&engine, &a.who, &room, "flush queue", json!(n), json!(0)).await;
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
    let entries = read_audit(&engine, q.limit.unwrap_or(100).min(1000), Some(&room)).await?;
    Ok(HttpResponse::Ok().json(json!({ "entries": entries })))
}

#[get("/api/admin/audit")]
async fn all_audit(
    _a: Admin,
    q: web::Query<AuditQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let entries = read_audit(&engine, q.limit.unwrap_or(100).min(1000), None).await?;
    Ok(HttpResponse::Ok().json(json!({ "entries": entries })))
}
