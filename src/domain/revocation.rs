//! Ending a session early from its pass (`Engine::revoke`): the origin's
//! `Anteroom-Command: revoke` through the gateway, `POST /api/rooms/{room}/revoke`, and a
//! release presented with the pass. The session is released (its slot frees and the
//! promoter lets the next visitor in) and the pass is written to the store's revocation
//! log, which every gateway reads within [`crate::gateway::revoked::POLL_INTERVAL`]: the
//! gateway checks passes without the store, so without the log a released pass would
//! keep getting through it until its expiry.

use crate::domain::admission::Engine;
use crate::domain::pass::Claims;
use crate::error::DomainError;
use crate::store::Revocation;

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
            self.release(room, &claims.sub).await?;
        }
        Ok(live)
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
        self.store
            .revoke(&r)
            .await
            .map_err(|e| self.store_failed("revoke", room, e))
    }
}
