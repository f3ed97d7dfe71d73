//! The RecoveryStore role of the store (see [`super::Store`]).

use async_trait::async_trait;

use super::{Admission, SessionsPage, SessionsQuery, Snapshot, StoreResult};
use crate::room::RoomConfig;

/// Putting back what a store lost (docs/design.md, data loss): the epoch, failovers,
/// re-created rooms, restored places and sessions, and the session list each instance keeps;
/// the keeper's role.
#[async_trait]
pub trait RecoveryStore: Send + Sync {
    /// How many times the store failed over to another node (Redis Sentinel) since this
    /// instance connected. Replication is asynchronous, so each may have lost the last
    /// writes: the keeper then puts back what it knows, as after a data loss.
    fn failovers(&self) -> u64 {
        0
    }
    /// Re-creates a room missing from the store (create-only, as `put_room`) and holds
    /// it for `hold_ms`: no admissions and no new places (a join that needs one gets
    /// [`StoreError::Held`](super::StoreError::Held)) while the instances put back the
    /// places and sessions the store lost (`restore_place`, `restore_session`, which the
    /// hold does not stop).
    async fn recreate_room(&self, cfg: &RoomConfig, hold_ms: u64) -> StoreResult<bool>;
    /// Puts back a place the store forgot (it lost its data) with its original `ticket`
    /// and join time, so places put back in any order keep their order, and later tickets
    /// come after it. It does not promote (the promoter lets the restored in, in ticket
    /// order, once every instance has put its places back). A visitor who holds a place or
    /// a session keeps it.
    async fn restore_place(
        &self,
        room: &str,
        visitor: &str,
        ticket: u64,
        joined_at_ms: u64,
    ) -> StoreResult<Snapshot>;
    /// A page of the room's live sessions (those expiring at or after `q.expires_from`,
    /// from now on when that is past; soonest expiry first, at most `q.limit`) and, with
    /// `q.gone_after`, the releases since: each instance keeps a picture of the live
    /// sessions this way to put them back after a data loss
    /// ([`KnownSessions`](crate::domain::known_sessions::KnownSessions)).
    async fn sessions(&self, room: &str, q: &SessionsQuery) -> StoreResult<SessionsPage>;
    /// Puts back an admission the store forgot, from the visitor's unexpired pass, so it
    /// counts against capacity again (`admits` raised to its serial). Nothing happens if
    /// it has expired, or the visitor holds a session (answer: is it this one) or a place.
    /// Returns whether this admission is live now.
    async fn restore_session(
        &self,
        room: &str,
        visitor: &str,
        admission: &Admission,
    ) -> StoreResult<bool>;
    /// The store's epoch: sets it to `candidate` if the store has none, and returns the
    /// value it holds. A store that lost its data (restarted empty, failed over to an
    /// empty replica, FLUSHALL) answers with a value this instance has not seen before.
    async fn epoch(&self, candidate: &str) -> StoreResult<String>;
}
