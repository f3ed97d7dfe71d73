//! No-shows (docs/outflow.md#no-shows): a room with `claim_timeout_secs` takes back the
//! slot of an admitted visitor whose pass is not presented at the origin (the built-in
//! gateway, or `verify`) within that time. The first presentation clears the session's
//! deadline in the store (`Store::present`); this cache remembers, per instance, the
//! sessions it has cleared, so that the gateway (which checks passes without the store)
//! and `verify` (which asks the store whether the session is live anyway) add no Redis
//! command per request after the first: a visitor sends the same pass with every page and
//! asset. The cache is [`Presented`](super::presented::Presented).
//!
//! Why per instance and not shared: a presentation at another instance clears the
//! deadline in the store all the same; this instance only asks once more, the first
//! time that visitor's pass reaches it.
//!
//! Taking the slot back ([`reclaim_once`], run by the outflow task every
//! [`RECLAIM_EVERY_MS`]): the store ends the sessions past their deadline
//! (`Store::reap_no_shows`, atomic, so instances running it side by side never end one
//! twice); the instance that ended one writes its pass to the revocation log (the
//! gateways stop it within their poll), keeps it ended in its ledger (so no recovery
//! revives it after a data loss, [`super::ended`]), counts it
//! (`anteroom_no_shows_total`) and promotes the room, so the next in line is let in.

use crate::domain::admission::Engine;
use crate::domain::pass::Claims;
use crate::store::{Revocation, StoreError};

/// How often each instance looks for no-shows in the rooms with a claim timeout (ms):
/// the timeout is in whole seconds, so a slot comes back within a second of it.
pub const RECLAIM_EVERY_MS: u64 = 1_000;
/// Most no-shows ended per room per call; the rest wait for the next look.
pub const RECLAIM_BATCH: u32 = 500;
/// Most admissions per promote after a reclaim.
const PROMOTE_LIMIT: u32 = 1_000;

impl Engine {
    /// The pass with `claims` reached the origin (the gateway let it in, or `verify`
    /// answered for it): the first time this instance sees its session in a room with a
    /// claim timeout, its deadline is cleared in the store. A failure is no reason to
    /// refuse anyone: the next request tries again.
    pub(crate) async fn presented(&self, room: &str, claims: &Claims) {
        let Some(serial) = claims.serial() else {
            return;
        };
        if self.presented.seen(room, &claims.sub, serial) {
            return;
        }
        if !self
            .room_config_cached(room)
            .await
            .is_ok_and(|c| c.claim_timeout_secs > 0)
        {
            return;
        }
        match self.store.present(room, &claims.sub, serial).await {
            Ok(true) => self.presented.note(
                room,
                &claims.sub,
                serial,
                claims.exp.saturating_mul(1000),
                crate::clock::wall_ms(),
            ),
            Ok(false) => {}
            Err(e) => tracing::debug!(room, error = %e, "could not clear a no-show deadline"),
        }
    }

    /// Whether `verify` should present the pass (clear its deadline) rather than only ask
    /// whether its session is live: a room with a claim timeout, a session not presented
    /// here yet. Same cost either way (one store call); none more after the first.
    pub(crate) async fn should_present(&self, room: &str, visitor: &str, serial: u64) -> bool {
        !self.presented.seen(room, visitor, serial)
            && self
                .room_config_cached(room)
                .await
                .is_ok_and(|c| c.claim_timeout_secs > 0)
    }

    /// Notes a presentation `verify` made (`Store::present` answered live).
    pub(crate) fn note_presented(&self, room: &str, claims: &Claims, serial: u64) {
        self.presented.note(
            room,
            &claims.sub,
            serial,
            claims.exp.saturating_mul(1000),
            crate::clock::wall_ms(),
        );
    }

    /// Takes back the slots of the room's no-shows (see the module doc); returns the
    /// visitors whose admission it ended.
    pub async fn reclaim_no_shows(&self, room: &str) -> Result<Vec<String>, StoreError> {
        let ended = self.store.reap_no_shows(room, RECLAIM_BATCH).await?;
        if ended.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(ended.len());
        for (visitor, a) in ended {
            self.ended.session_ended(room, &visitor, &a);
            self.known_sessions.forget(room, &visitor);
            let r = Revocation {
                room: room.to_string(),
                visitor: visitor.clone(),
                serial: a.serial,
                expires_at_ms: a.expires_at_ms.div_ceil(1000).saturating_mul(1000),
            };
            if let Err(e) = self.store.revoke(&r).await {
                self.metrics
                    .store_errors
                    .with_label_values(&["revoke"])
                    .inc();
                tracing::warn!(room, error = %e, "no-show ended, but its pass could not be written to the revocation log: gateways accept it until it expires");
            }
            out.push(visitor);
        }
        self.metrics
            .no_shows
            .with_label_values(&[room])
            .inc_by(out.len() as u64);
        tracing::info!(
            room,
            no_shows = out.len(),
            "no-shows: admissions taken back"
        );
        self.store.promote(room, PROMOTE_LIMIT).await?;
        Ok(out)
    }
}

/// What one look for no-shows did.
#[derive(Debug, Default)]
pub struct ReclaimOutcome {
    /// (room, visitors whose admission was taken back).
    pub ended: Vec<(String, Vec<String>)>,
    /// Rooms that failed, with the error; the look goes on with the others.
    pub failed: Vec<(String, String)>,
}

/// One look at every room with a claim timeout.
pub async fn reclaim_once(engine: &Engine) -> Result<ReclaimOutcome, StoreError> {
    let mut out = ReclaimOutcome::default();
    for room in engine.store.rooms().await? {
        let Ok(cfg) = engine.room_config_cached(&room).await else {
            continue; // deleted meanwhile, or the store failing: next look
        };
        if cfg.claim_timeout_secs == 0 {
            continue;
        }
        match engine.reclaim_no_shows(&room).await {
            Ok(v) if !v.is_empty() => out.ended.push((room, v)),
            Ok(_) | Err(StoreError::NoSuchRoom) => {}
            Err(e) => out.failed.push((room, e.to_string())),
        }
    }
    Ok(out)
}
