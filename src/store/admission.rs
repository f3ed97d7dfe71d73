//! The AdmissionStore role of the store (see [`super::Store`]).

use async_trait::async_trait;

use super::{
    Admission, EtaBasis, JoinOptions, PlaceLimit, ReapBatch, Released, Snapshot, StoreResult,
    WindowDecision,
};

/// A visitor's place and session: join, status, release, renewal and the promoter;
/// what the web layer, the gateway and the reaper use.
#[async_trait]
pub trait AdmissionStore: Send + Sync {
    /// Join (idempotent); see the module rules.
    async fn join(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        self.join_limited(room, visitor, None).await
    }
    /// Join, and when it takes a new place (a queue place or a walk-in session) count it
    /// against `limit`'s group: a group already holding `limit.max` places or live
    /// sessions in the room gets
    /// [`StoreError::TooManyPlaces`](super::StoreError::TooManyPlaces) and nothing
    /// changes.
    /// Places that ended (admitted and expired, released, reaped, flushed) stop counting.
    async fn join_limited(
        &self,
        room: &str,
        visitor: &str,
        limit: Option<&PlaceLimit>,
    ) -> StoreResult<Snapshot> {
        let opts = JoinOptions {
            limit: limit.cloned(),
            lane: None,
            score: None,
            fresh: false,
        };
        self.join_with(room, visitor, &opts).await
    }
    /// [`Self::join_limited`], and a new queue place goes in `opts.lane` (see
    /// [`LANE_STRIDE`](super::LANE_STRIDE)); an existing place or session is kept as it is.
    async fn join_with(
        &self,
        room: &str,
        visitor: &str,
        opts: &JoinOptions,
    ) -> StoreResult<Snapshot>;
    /// Where the visitor stands; refreshes a queued visitor's heartbeat.
    async fn status(&self, room: &str, visitor: &str) -> StoreResult<Snapshot>;
    /// [`Self::status`] with a queued visitor's ticket and join time (two more reads: for
    /// the place receipt the status API hands out).
    async fn status_placed(&self, room: &str, visitor: &str) -> StoreResult<Snapshot>;
    /// The visitor's page went to the background and said so: a queued visitor keeps the
    /// place for `grace_ms` from now without a heartbeat (the heartbeat is moved forward,
    /// never back; no effect when `grace_ms` is not longer than the room's heartbeat
    /// timeout). Returns whether the visitor is queued.
    async fn hold_away(&self, room: &str, visitor: &str, grace_ms: u64) -> StoreResult<bool>;
    /// Leaves the queue or ends the session at once, then promotes. Returns whether the
    /// visitor held a session or a place, the live session it ended (so its pass can be
    /// written to the revocation log), and who was admitted as a result.
    async fn release_ended(&self, room: &str, visitor: &str) -> StoreResult<Released>;
    /// [`Self::release_ended`] without the ended session: whether the visitor held a
    /// session or a place, and who was admitted.
    async fn release(&self, room: &str, visitor: &str) -> StoreResult<(bool, Vec<String>)> {
        let r = self.release_ended(room, visitor).await?;
        Ok((r.held, r.admitted))
    }
    /// Admits queue heads while capacity, stock and the rate cap allow (at most `limit`).
    async fn promote(&self, room: &str, limit: u32) -> StoreResult<Vec<String>>;
    /// Whether this admission is still live (not released, removed or expired). A live
    /// one is claimed: its visitor is there (see [`EtaBasis::quiet`]); `status`, `watch`
    /// and `release` claim too.
    async fn session_live(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool>;
    /// Renews the live session `serial` of `visitor` on activity (a room's
    /// `renew_on_activity`): its expiry becomes now + `ttl_ms`, capped at its issue time +
    /// `cap_ms`, never earlier than it was. Returns the session as it is now, or `None`
    /// when that session is not live (ended, expired, or superseded by a newer one).
    async fn extend_session(
        &self,
        room: &str,
        visitor: &str,
        serial: u64,
        ttl_ms: u64,
        cap_ms: u64,
    ) -> StoreResult<Option<Admission>>;
    /// Drops up to `batch` silent queued visitors and prunes up to `batch` expired sessions.
    async fn reap(&self, room: &str, batch: u32) -> StoreResult<ReapBatch>;
    /// Counts one request against `key` in a fixed window.
    async fn hit_window(
        &self,
        key: &str,
        limit: u64,
        window_ms: u64,
    ) -> StoreResult<WindowDecision>;
    /// Promotes (so the basis is what snapshots read after it see), then reads what the
    /// ETA is computed from ([`EtaBasis`]).
    async fn eta_basis(&self, room: &str) -> StoreResult<EtaBasis>;
}
