//! Finding and removing one visitor. A visitor who calls for help reads out their
//! support code (`K7QX-M2PD`, the first 40 bits of their id: [`VisitorId::support_code`]);
//! an admin may also paste the full id (from a pass's `sub`, or `verify`'s
//! `X-Anteroom-Visitor`). A code names an id *prefix*, so in a big crowd it can match
//! more than one visitor (two ids share 40 bits with odds of about n²/2⁴¹: 1 in 2,400
//! for a crowd of 30,000). Removing by a code that matches several removes nobody and
//! answers the matches, so the admin picks the right one by its full id.

use serde::Serialize;
use serde_json::{json, Value};

use super::audit::audit;
use crate::domain::admission::Engine;
use crate::domain::error::DomainError;
use crate::domain::identity::{SupportCode, VisitorId};
use crate::store::{FoundVisitor, WatchEntry};

/// The most matches a search answers (a code matches more than one visitor only in
/// crowds of tens of thousands, and then rarely more than two).
pub const MATCH_LIMIT: usize = 20;

/// Who an admin is looking for: a full visitor id or a support code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wanted {
    Id(VisitorId),
    Code(SupportCode),
}

impl Wanted {
    /// A full id (32 hex digits, either case) or a support code; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if let Some(id) = VisitorId::parse(&s.to_ascii_lowercase()) {
            return Some(Wanted::Id(id));
        }
        SupportCode::parse(s).map(Wanted::Code)
    }

    fn id_prefix(&self) -> &str {
        match self {
            Wanted::Id(id) => id.as_str(),
            Wanted::Code(code) => code.id_prefix(),
        }
    }
}

/// A visitor as the admin API shows them.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct VisitorMatch {
    /// The full visitor id (32 hex digits).
    pub id: String,
    pub support_code: String,
    /// `queued` or `admitted`.
    pub state: &'static str,
    /// 1-based place in the queue (queued only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    /// When the session began, ms since the epoch, by the store's clock (admitted only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admitted_at: Option<u64>,
    /// When the session ends, Unix seconds, as the pass's `exp` (admitted only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

impl VisitorMatch {
    fn of(f: &FoundVisitor) -> Option<Self> {
        // Only this service writes ids; a member written by hand is skipped, not shown.
        let id = VisitorId::parse(&f.visitor)?;
        let mut m = VisitorMatch {
            support_code: id.support_code(),
            id: f.visitor.clone(),
            state: "queued",
            position: None,
            admitted_at: None,
            expires_at: None,
        };
        match &f.place {
            WatchEntry::Queued { position } => m.position = Some(*position),
            WatchEntry::Admitted(a) => {
                m.state = "admitted";
                m.admitted_at = Some(a.issued_at_ms);
                m.expires_at = Some(a.expires_at_ms.div_ceil(1000));
            }
            WatchEntry::Gone => return None,
        }
        Some(m)
    }
}

/// The queued and admitted visitors matching `wanted`, admitted first, then by position.
pub async fn find(
    engine: &Engine,
    room: &str,
    wanted: &Wanted,
) -> Result<Vec<VisitorMatch>, DomainError> {
    let found = engine
        .store
        .find_visitors(room, wanted.id_prefix(), MATCH_LIMIT)
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    Ok(found.iter().filter_map(VisitorMatch::of).collect())
}

/// What a removal did.
pub enum Removal {
    /// This visitor's place or session ended.
    Removed,
    /// The code matched several visitors; nobody was removed.
    Ambiguous(Vec<VisitorMatch>),
}

/// Ends one visitor's place or session, named by full id or support code.
pub async fn remove(
    engine: &Engine,
    who: &str,
    room: &str,
    raw: &str,
) -> Result<Removal, DomainError> {
    let wanted = Wanted::parse(raw).ok_or_else(|| {
        DomainError::invalid_field(
            "id",
            "must be a visitor id (32 hex digits) or a support code (like K7QX-M2PD)",
        )
    })?;
    let visitor = match wanted {
        Wanted::Id(id) => id,
        Wanted::Code(_) => {
            let mut matches = find(engine, room, &wanted).await?;
            match matches.len() {
                0 => return Err(not_found(raw, room)),
                1 => {
                    // unwrap: VisitorMatch ids come from VisitorId::parse.
                    VisitorId::parse(&matches.remove(0).id).unwrap()
                }
                _ => return Ok(Removal::Ambiguous(matches)),
            }
        }
    };
    // Through the engine: a live session it ends goes to the revocation log too.
    let removed = engine.release(room, visitor.as_str()).await?.held;
    if !removed {
        return Err(not_found(raw, room));
    }
    audit(
        engine,
        who,
        room,
        "remove visitor",
        json!(visitor.as_str()),
        Value::Null,
    )
    .await;
    Ok(Removal::Removed)
}

fn not_found(raw: &str, room: &str) -> DomainError {
    DomainError::NotFound(format!(
        "visitor {} is neither queued nor admitted in `{room}`",
        raw.trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_or_a_code_is_wanted_and_anything_else_is_not() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            Wanted::parse(&id.to_uppercase()),
            Some(Wanted::Id(VisitorId::parse(id).unwrap()))
        );
        let code = Wanted::parse(" 04hm-asw9 ").unwrap();
        assert_eq!(code.id_prefix(), "0123456789");
        for bad in ["", "0123", "../x", "04HM-ASW9-04HM", &id[1..]] {
            assert_eq!(Wanted::parse(bad), None, "{bad}");
        }
    }
}
