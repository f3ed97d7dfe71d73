//! The audit log: every admin change, kept in the store (newest first, trimmed to
//! `admin.audit_keep`) and written to the server log.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::admission::Engine;
use crate::domain::error::DomainError;

/// One audit log entry.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
pub struct AuditEntry {
    /// Milliseconds since the epoch.
    pub at: u64,
    pub who: String,
    pub room: String,
    pub action: String,
    pub old: Value,
    pub new: Value,
}

/// Writes an audit entry. A failure is logged, not returned: the change itself is done.
pub async fn audit(engine: &Engine, who: &str, room: &str, action: &str, old: Value, new: Value) {
    let e = AuditEntry {
        at: crate::clock::wall_ms(),
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
