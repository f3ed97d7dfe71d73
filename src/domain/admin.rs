//! The admin service, free of HTTP: reading rooms with their live figures, changing
//! them, and writing every change to the audit log. The web layer (`web::admin`) checks
//! who is asking and calls these; the same rules apply whoever calls.
//!
//! Every change takes effect at once on every instance: the configuration lives in the
//! store, and the promotions a change causes are published like any other.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::config::{valid_room_id, RoomConfig};
use crate::domain::admission::Engine;
use crate::domain::identity::VisitorId;
use crate::domain::live::{room_live, totals, RoomLive, Totals, SERIES_MINUTES};
use crate::error::DomainError;
use crate::store::{RoomPatch, StockChange};

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

/// The live figures of every room (the dashboard's payload).
#[derive(Serialize)]
pub struct Overview {
    pub rooms: Vec<RoomLive>,
    pub totals: Totals,
    pub audit: Vec<AuditEntry>,
    pub at: u64,
    /// When this instance last found the store's data gone (ms), if it did.
    pub store_data_lost_at: Option<u64>,
}

/// A room flag an admin can flip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    Pause,
    Resume,
    Close,
    Open,
}

impl Switch {
    pub fn parse(action: &str) -> Option<Self> {
        Some(match action {
            "pause" => Switch::Pause,
            "resume" => Switch::Resume,
            "close" => Switch::Close,
            "open" => Switch::Open,
            _ => return None,
        })
    }

    fn patch(self) -> RoomPatch {
        let mut p = RoomPatch::default();
        match self {
            Switch::Pause => p.paused = Some(true),
            Switch::Resume => p.paused = Some(false),
            Switch::Close => p.closed = Some(true),
            Switch::Open => p.closed = Some(false),
        }
        p
    }
}

/// Whether `put_room` created the room or changed it.
pub enum PutOutcome {
    Created(RoomConfig),
    Changed(RoomConfig),
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

/// Every room with its live figures, the totals and the newest `audit_entries` entries.
pub async fn overview(engine: &Engine, audit_entries: u32) -> Result<Overview, DomainError> {
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
        let forecast = engine.forecast(&id).await;
        rooms.push(room_live(&cfg, &report, &sockets, forecast.as_deref()));
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
        // unwrap: never poisoned.
        store_data_lost_at: *engine.data_lost_at.lock().unwrap(),
    })
}

/// The newest `limit` audit entries, of one room or of all.
pub async fn read_audit(
    engine: &Engine,
    limit: u32,
    room: Option<&str>,
) -> Result<Vec<AuditEntry>, DomainError> {
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

/// One room's configuration and live figures.
pub async fn room(engine: &Engine, room: &str) -> Result<(RoomConfig, RoomLive), DomainError> {
    let cfg = engine.room_config(room).await?;
    let report = engine
        .store
        .report(&cfg.id, SERIES_MINUTES)
        .await
        .map_err(|e| engine.store_failed("admin", &cfg.id, e))?;
    let sockets = engine.store.sockets().await.unwrap_or_default();
    let forecast = engine.forecast(&cfg.id).await;
    let live = room_live(&cfg, &report, &sockets, forecast.as_deref());
    Ok((cfg, live))
}

/// Checks a configuration, naming the first bad field.
fn validate(cfg: &RoomConfig) -> Result<(), DomainError> {
    cfg.check()
        .map_err(|(field, message)| DomainError::invalid_field(field, message))
}

/// Applies a patch, audits each changed field, answers with the new config.
async fn apply(
    engine: &Engine,
    who: &str,
    room: &str,
    patch: &RoomPatch,
) -> Result<RoomConfig, DomainError> {
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
                &format!("set {k}"),
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
pub async fn put_room(
    engine: &Engine,
    who: &str,
    room: &str,
    patch: &RoomPatch,
) -> Result<PutOutcome, DomainError> {
    if !valid_room_id(room) {
        return Err(DomainError::invalid_field(
            "id",
            "must match [A-Za-z0-9_-]{1,64}",
        ));
    }
    let exists = engine
        .store
        .room(room)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?
        .is_some();
    if exists {
        return apply(engine, who, room, patch)
            .await
            .map(PutOutcome::Changed);
    }
    let base = RoomConfig {
        id: room.to_string(),
        ..engine.settings.room_defaults.clone()
    };
    let cfg = patch.applied_to(&base);
    validate(&cfg)?;
    if !engine
        .store
        .put_room(&cfg, true)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?
    {
        return Err(DomainError::Conflict(format!(
            "room `{room}` was just created"
        )));
    }
    audit(engine, who, room, "create room", Value::Null, json!(cfg)).await;
    Ok(PutOutcome::Created(cfg))
}

pub async fn delete_room(engine: &Engine, who: &str, room: &str) -> Result<(), DomainError> {
    let old = engine.room_config(room).await?;
    if engine.is_declared(room) {
        // The keeper would bring it back within a second.
        return Err(DomainError::Conflict(format!(
            "room `{room}` is declared in the configuration; remove it there (or close it here)"
        )));
    }
    engine
        .store
        .delete_room(room)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    engine.metrics.forget_room(room);
    engine.forecasts.forget(room);
    audit(engine, who, room, "delete room", json!(old), Value::Null).await;
    Ok(())
}

/// Pause, resume, close or open.
pub async fn switch(
    engine: &Engine,
    who: &str,
    room: &str,
    action: Switch,
) -> Result<RoomConfig, DomainError> {
    apply(engine, who, room, &action.patch()).await
}

/// Changes the stock atomically; answers the old and new values (`None` = unlimited).
pub async fn change_stock(
    engine: &Engine,
    who: &str,
    room: &str,
    change: StockChange,
) -> Result<(Option<u64>, Option<u64>), DomainError> {
    let (old, new, _) = engine
        .store
        .change_stock(room, change)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    audit(engine, who, room, "set stock", json!(old), json!(new)).await;
    Ok((old, new))
}

/// Ends one visitor's place or session.
pub async fn remove_visitor(
    engine: &Engine,
    who: &str,
    room: &str,
    id: &str,
) -> Result<(), DomainError> {
    let visitor = VisitorId::parse(id)
        .ok_or_else(|| DomainError::invalid_field("id", "must be a visitor id (32 hex digits)"))?;
    let (removed, _) = engine
        .store
        .release(room, visitor.as_str())
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    if !removed {
        return Err(DomainError::NotFound(format!(
            "visitor {id} is neither queued nor admitted in `{room}`"
        )));
    }
    audit(engine, who, room, "remove visitor", json!(id), Value::Null).await;
    Ok(())
}

/// Empties the queue; answers how many places were removed.
pub async fn flush(engine: &Engine, who: &str, room: &str) -> Result<u64, DomainError> {
    let n = engine
        .store
        .flush(room)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    audit(engine, who, room, "flush queue", json!(n), json!(0)).await;
    Ok(n)
}
