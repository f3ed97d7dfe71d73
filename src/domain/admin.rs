//! The admin service, free of HTTP: reading rooms with their live figures, changing
//! them, and writing every change to the audit log. The web layer (`web::admin`) checks
//! who is asking and calls these; the same rules apply whoever calls.
//!
//! Every change takes effect at once on every instance: the configuration lives in the
//! store, and the promotions a change causes are published like any other.
//!
//! Two admins (or an admin and a script) may change the same room at once. Each room
//! configuration has a version ([`crate::store`]'s rules); a change that names the
//! version it was based on is refused with the current values when the room has moved
//! on ([`PutOutcome::Stale`]), instead of silently writing over a colleague's change.
//! A change without a version is applied as before.

pub mod audit;
pub mod visitors;
pub mod webhooks;

pub use audit::{read_audit, AuditEntry};

use serde::Serialize;
use serde_json::{json, Value};

use self::audit::audit;
use crate::domain::admission::Engine;
use crate::domain::error::DomainError;
use crate::domain::live::{room_live, totals, RoomLive, Totals, SERIES_MINUTES};
use crate::room::{redact, valid_room_id, RoomConfig};
use crate::store::{PatchOutcome, RoomPatch, StockChange};

/// One room on the dashboard: its live figures, plus what the controls need — the
/// configuration's version (the settings form's base), the raw `paused` and `closed`
/// flags, and the queueing `mode` and `queue_all` (`state` shows only the one that wins).
#[derive(Serialize, utoipa::ToSchema)]
pub struct DashboardRoom {
    #[serde(flatten)]
    pub live: RoomLive,
    pub version: u64,
    pub paused: bool,
    pub closed: bool,
    pub mode: crate::room::QueueMode,
    pub queue_all: bool,
}

/// The live figures of every room (the dashboard's payload).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Overview {
    pub rooms: Vec<DashboardRoom>,
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

/// What `put_room` did.
pub enum PutOutcome {
    Created {
        config: RoomConfig,
        version: u64,
    },
    Changed {
        config: RoomConfig,
        version: u64,
    },
    /// The change named a version the room is no longer at: nothing was written. The
    /// room's current configuration and version, read together.
    Stale {
        config: RoomConfig,
        version: u64,
    },
}

/// Every room with its live figures, the totals and the newest `audit_entries` entries.
pub async fn overview(engine: &Engine, audit_entries: u32) -> Result<Overview, DomainError> {
    let store = &engine.store;
    let ids = store
        .rooms()
        .await
        .map_err(|e| engine.store_failed("admin", "*", e))?;
    let sockets = store.sockets().await.unwrap_or_default();
    // The charts are per minute: if a minute turned while the rooms were read, rooms read
    // before it would show the old minute and the rest the new one, so the next overview
    // would change rooms nobody touched. Read again (once) so all show the same minute.
    let minute = crate::clock::wall_ms() / 60_000;
    let (mut lives, mut controls) = room_figures(engine, &ids, &sockets).await;
    if crate::clock::wall_ms() / 60_000 != minute {
        (lives, controls) = room_figures(engine, &ids, &sockets).await;
    }
    let audit = if audit_entries > 0 {
        read_audit(engine, audit_entries, None).await?
    } else {
        Vec::new()
    };
    Ok(Overview {
        totals: totals(&lives),
        rooms: lives
            .into_iter()
            .zip(controls)
            .map(
                |(live, (version, paused, closed, mode, queue_all))| DashboardRoom {
                    live,
                    version,
                    paused,
                    closed,
                    mode,
                    queue_all,
                },
            )
            .collect(),
        audit,
        at: crate::clock::wall_ms(),
        // unwrap: never poisoned.
        store_data_lost_at: *engine.data_lost_at.lock().unwrap(),
    })
}

/// Each room's live figures and dashboard controls, in the order of `ids` (a room
/// deleted meanwhile is left out).
async fn room_figures(
    engine: &Engine,
    ids: &[String],
    sockets: &[crate::store::SocketCount],
) -> (
    Vec<RoomLive>,
    Vec<(u64, bool, bool, crate::room::QueueMode, bool)>,
) {
    let store = &engine.store;
    let mut lives = Vec::with_capacity(ids.len());
    let mut controls = Vec::with_capacity(ids.len());
    for id in ids {
        // The version is read with the config and before the report, so the figures are
        // never older than the version they are shown with: a form filled from them can
        // be refused as stale, but never write over a change it did not see.
        let (Ok(Some((cfg, version))), Ok(report)) = (
            store.room_versioned(id).await,
            store.report(id, SERIES_MINUTES).await,
        ) else {
            continue; // deleted meanwhile
        };
        let forecast = engine.forecast(id).await;
        let mut live = room_live(&cfg, &report, sockets, forecast.as_deref());
        live.webhook = webhook_live(engine, &cfg).await;
        lives.push(live);
        let v = &report.view;
        controls.push((version, v.paused, v.closed, v.mode, v.queue_all));
    }
    (lives, controls)
}

/// A room's configuration and its version, read together.
async fn versioned(engine: &Engine, room: &str) -> Result<(RoomConfig, u64), DomainError> {
    engine
        .store
        .room_versioned(room)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?
        .ok_or_else(|| DomainError::UnknownRoom(room.to_string()))
}

/// One room's configuration, its version and its live figures.
pub async fn room(engine: &Engine, room: &str) -> Result<(RoomConfig, u64, RoomLive), DomainError> {
    let (cfg, version) = versioned(engine, room).await?;
    let report = engine
        .store
        .report(&cfg.id, SERIES_MINUTES)
        .await
        .map_err(|e| engine.store_failed("admin", &cfg.id, e))?;
    let sockets = engine.store.sockets().await.unwrap_or_default();
    let forecast = engine.forecast(&cfg.id).await;
    let mut live = room_live(&cfg, &report, &sockets, forecast.as_deref());
    live.webhook = webhook_live(engine, &cfg).await;
    Ok((cfg, version, live))
}

/// A room's webhook figures, when it has a webhook or has dead letters (a figure the
/// store cannot read now is left out rather than failing the page).
async fn webhook_live(engine: &Engine, cfg: &RoomConfig) -> Option<crate::store::WebhookCounts> {
    let c = engine.store.webhook_counts(&cfg.id).await.ok()?;
    (cfg.webhook_url.is_some() || c != Default::default()).then_some(c)
}

/// Checks a configuration, naming the first bad field. With `template`, the room's custom
/// template is read and parsed too, so a change naming a file that is missing, outside
/// `template_dir` or does not parse is refused (naming the file and line); a change that
/// leaves the template as it is does not read it, so pausing a room never depends on a
/// file being there.
fn validate(engine: &Engine, cfg: &RoomConfig, template: bool) -> Result<(), DomainError> {
    crate::domain::room_check::check(cfg)
        .map_err(|(field, message)| DomainError::invalid_field(field, message))?;
    if !template {
        return Ok(());
    }
    crate::domain::custom_page::check_room(&engine.settings, cfg)
        .map_err(|message| DomainError::invalid_field("template", message))
}

/// Applies a patch (if the room is still at `expected`, when given), audits each changed
/// field, answers with the new config and version.
async fn apply(
    engine: &Engine,
    who: &str,
    room: &str,
    patch: &RoomPatch,
    expected: Option<u64>,
) -> Result<PutOutcome, DomainError> {
    let (old, version) = versioned(engine, room).await?;
    if expected.is_some_and(|v| v != version) {
        return Ok(PutOutcome::Stale {
            config: old,
            version,
        });
    }
    // A `webhook_url` sent back as it was shown (its credentials `[set]`) keeps the
    // stored one, credentials and all.
    let kept;
    let patch = match (&patch.webhook_url, &old.webhook_url) {
        (Some(sent), Some(stored)) if redact::url_hides(stored) && *sent == redact::url(stored) => {
            kept = RoomPatch {
                webhook_url: None,
                ..patch.clone()
            };
            &kept
        }
        _ => patch,
    };
    let new = patch.applied_to(&old);
    validate(engine, &new, patch.template.is_some())?;
    let version = match engine
        .store
        .patch_room_if(room, patch, expected)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?
    {
        PatchOutcome::Applied { version, .. } => version,
        // Changed between the read above and the script's check.
        PatchOutcome::Stale { .. } => {
            let (config, version) = versioned(engine, room).await?;
            return Ok(PutOutcome::Stale { config, version });
        }
    };
    // Statuses here ask the store until the hub's next tick sees the change; joins
    // here read the new configuration.
    engine.line_views.drop_room(room);
    engine.room_cache.forget(room);
    let (o, n) = (json!(old), json!(new));
    // The webhook fields are left out of the JSON when unset (so a removal would not
    // show below), and the secrets serialise as "[set]" (so a changed one would not
    // either): these are compared as stored and audited here, shown as the JSON shows
    // them — a secret never, a URL with its credentials `[set]` (`config::redact`).
    let shown = |x: Option<&str>| x.map_or(Value::Null, |_| json!(redact::SET));
    let secrets = [
        (
            "webhook_url",
            old.webhook_url != new.webhook_url,
            json!(old.webhook_url.as_deref().map(redact::url)),
            json!(new.webhook_url.as_deref().map(redact::url)),
        ),
        (
            "webhook_secret",
            old.webhook_secret != new.webhook_secret,
            shown(old.webhook_secret.as_ref().map(|_| "")),
            shown(new.webhook_secret.as_ref().map(|_| "")),
        ),
        (
            "entry_secret",
            old.entry_secret != new.entry_secret,
            shown(old.entry_secret.as_ref().map(|_| "")),
            shown(new.entry_secret.as_ref().map(|_| "")),
        ),
    ];
    for (field, changed, before, after) in secrets {
        if changed {
            audit(engine, who, room, &format!("set {field}"), before, after).await;
        }
    }
    for (k, v) in n.as_object().into_iter().flatten() {
        if o.get(k) != Some(v)
            && !matches!(
                k.as_str(),
                "stock" | "webhook_url" | "webhook_secret" | "entry_secret"
            )
        {
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
    Ok(PutOutcome::Changed {
        config: RoomConfig {
            stock: old.stock,
            ..new
        },
        version,
    })
}

/// Creates a room (`target_url` required) or changes the given fields of an existing one;
/// with `expected`, only if the room exists and is still at that version.
pub async fn put_room(
    engine: &Engine,
    who: &str,
    room: &str,
    patch: &RoomPatch,
    expected: Option<u64>,
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
        return apply(engine, who, room, patch, expected).await;
    }
    if expected.is_some() {
        // A change based on a version is for the room that had it: a deleted room is not
        // brought back by a form left open.
        return Err(DomainError::UnknownRoom(room.to_string()));
    }
    let base = RoomConfig {
        id: room.to_string(),
        ..engine.settings.room_defaults.clone()
    };
    let cfg = patch.applied_to(&base);
    validate(engine, &cfg, true)?;
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
    // A room deleted elsewhere and created again here: joins here read the new one.
    engine.room_cache.forget(room);
    audit(engine, who, room, "create room", Value::Null, json!(cfg)).await;
    // Every store creates a room at version 1.
    Ok(PutOutcome::Created {
        config: cfg,
        version: 1,
    })
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
    engine.line_views.drop_room(room);
    engine.room_cache.forget(room);
    engine.metrics.forget_room(room);
    engine.forecasts.forget(room);
    audit(engine, who, room, "delete room", json!(old), Value::Null).await;
    Ok(())
}

/// Pause, resume, close or open; answers the new config and version.
pub async fn switch(
    engine: &Engine,
    who: &str,
    room: &str,
    action: Switch,
) -> Result<(RoomConfig, u64), DomainError> {
    match apply(engine, who, room, &action.patch(), None).await? {
        PutOutcome::Changed { config, version } => Ok((config, version)),
        _ => Err(DomainError::Internal(
            "a switch, applied without a version, did not change the room".into(),
        )),
    }
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
    engine.line_views.drop_room(room);
    audit(engine, who, room, "set stock", json!(old), json!(new)).await;
    Ok((old, new))
}

/// Empties the queue; answers how many places were removed.
pub async fn flush(engine: &Engine, who: &str, room: &str) -> Result<u64, DomainError> {
    let n = engine
        .store
        .flush(room)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    engine.line_views.drop_room(room);
    // No place taken before now comes back after a data loss (domain::ended); the other
    // instances read the flush's time from the store at their next look.
    engine.ended.flushed(room, crate::clock::wall_ms());
    audit(engine, who, room, "flush queue", json!(n), json!(0)).await;
    Ok(n)
}
