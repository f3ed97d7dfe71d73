//! Ending a session early. From its pass (`Engine::revoke`): the origin's
//! `Anteroom-Command: revoke` through the gateway, `POST /api/rooms/{room}/revoke`, and a
//! release presented with the pass. Without it ([`Engine::release`]): a release by
//! visitor token, the admin API's remove-visitor. Either way the session is released (its
//! slot frees and the promoter lets the next visitor in) and its serial is written to the
//! store's revocation log, which every gateway reads within
//! [`crate::gateway::revoked::POLL_INTERVAL`]: the gateway checks passes without the
//! store, so without the log an ended session's pass would keep getting through it until
//! its expiry. The store's release reports the live session it ended
//! ([`crate::store::Released::session`]), so the log gets the serial even when nobody
//! presented the pass.

use crate::domain::admission::Engine;
use crate::domain::error::DomainError;
use crate::domain::pass::Claims;
use crate::store::{Released, Revocation};

impl Engine {
    /// Revokes the pass whose `claims` were verified: records the revocation, then
    /// releases the session if it is still this pass's one (an older pass of the same
    /// visitor revokes itself but never ends a newer session). Returns whether a session
    /// ended. A fail-open pass has no session behind it: nothing to do.
    pub async fn revoke(&self, room: &str, claims: &Claims) -> Result<bool, DomainError> {
        let Some(serial) = claims.serial() else {
            return Ok(false);
        };
        // The log first: once the caller is told "revoked", no gateway lets the pass in,
        // even if the release below fails (the session then runs out on its own).
        self.record_revocation(room, claims).await?;
        let live = self
            .store
            .session_live(room, &claims.sub, serial)
            .await
            .map_err(|e| self.store_failed("revoke", room, e))?;
        if live {
            self.release_revoking(room, &claims.sub, Some(serial))
                .await?;
        }
        Ok(live)
    }

    /// Releases the visitor's session or place and writes the live session it ended to
    /// the log, unless its serial is `logged` (the caller has just written it). The
    /// session has ended either way: if the log cannot be written (the store failed
    /// between the two calls), `verify` still refuses its passes and only the gateways
    /// may let them in until they expire; that is logged and counted, not returned.
    pub(crate) async fn release_revoking(
        &self,
        room: &str,
        visitor: &str,
        logged: Option<u64>,
    ) -> Result<Released, DomainError> {
        self.line_views.forget(room, visitor);
        let released = self
            .store
            .release_ended(room, visitor)
            .await
            .map_err(|e| self.store_failed("release", room, e))?;
        // Those the release let in: their next status is the store's (admitted), not the
        // line view's, which is a tick behind and hears of admissions by pub/sub only
        // (slow or lost while the store fails over).
        for v in &released.admitted {
            self.line_views.forget(room, v);
        }
        // What ended stays ended, whatever the store forgets later (domain::ended).
        let now = crate::clock::wall_ms();
        if released.held {
            let until = now + self.end_keep_ms(room);
            self.ended.left(room, visitor, now, until);
        }
        let Some(a) = released.session.as_ref() else {
            return Ok(released);
        };
        self.ended.session_ended(room, visitor, a);
        self.known_sessions.forget(room, visitor);
        if Some(a.serial) == logged {
            return Ok(released);
        }
        let r = Revocation {
            room: room.to_string(),
            visitor: visitor.to_string(),
            serial: a.serial,
            // The pass's `exp` is the session's end rounded up to a second: the entry
            // lasts as long as any pass of the session could.
            expires_at_ms: a.expires_at_ms.div_ceil(1000).saturating_mul(1000),
        };
        if let Err(e) = self.store.revoke(&r).await {
            self.metrics
                .store_errors
                .with_label_values(&["revoke"])
                .inc();
            tracing::warn!(room, error = %e, "session ended, but its passes could not be written to the revocation log: gateways accept them until they expire");
        }
        Ok(released)
    }

    /// Releases the session of a verified pass (a release presented with the pass): the
    /// pass is logged first, as in [`Self::revoke`], then whatever the visitor holds is
    /// released without writing the same serial twice.
    pub async fn release_pass(&self, room: &str, claims: &Claims) -> Result<(), DomainError> {
        self.record_revocation(room, claims).await?;
        self.release_revoking(room, &claims.sub, claims.serial())
            .await?;
        Ok(())
    }

    /// Writes the pass to the revocation log only (its session already ended).
    pub async fn record_revocation(&self, room: &str, claims: &Claims) -> Result<(), DomainError> {
        let Some(serial) = claims.serial() else {
            return Ok(());
        };
        let r = Revocation {
            room: room.to_string(),
            visitor: claims.sub.clone(),
            serial,
            expires_at_ms: claims.exp.saturating_mul(1000),
        };
        self.ended.session_ended(
            room,
            &claims.sub,
            &crate::store::Admission {
                serial,
                issued_at_ms: claims.iat.saturating_mul(1000),
                expires_at_ms: r.expires_at_ms,
            },
        );
        self.store
            .revoke(&r)
            .await
            .map_err(|e| self.store_failed("revoke", room, e))
    }
}
