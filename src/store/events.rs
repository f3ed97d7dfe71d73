//! The EventStore role of the store (see [`super::Store`]).

use async_trait::async_trait;

use super::{
    RoomEvent, StoreResult, WebhookCounts, WebhookDeadLetter, WebhookRetry, WebhookSettle,
};

/// The room's event stream and the webhook deliverer's state (cursor, retries, dead
/// letters); the webhook task and the FIFO audit read it.
#[async_trait]
pub trait EventStore: Send + Sync {
    /// The room's events after the stream id `after` ("0" or "" for the oldest kept), at
    /// most `count`, oldest first. Each is added by the atomic change it records.
    async fn events(&self, room: &str, after: &str, count: u32) -> StoreResult<Vec<RoomEvent>>;
    /// The webhook deliverer's cursor in the room's stream: the last event id delivered
    /// or parked for a retry ("" before the first).
    async fn webhook_cursor(&self, room: &str) -> StoreResult<String>;
    /// Moves the cursor to `cursor`, parks `retries` and keeps (and counts) the `dead`
    /// letters, in one atomic step (an event is never both behind the cursor and lost).
    async fn webhook_advance(
        &self,
        room: &str,
        cursor: &str,
        retries: &[WebhookRetry],
        dead: &[WebhookDeadLetter],
    ) -> StoreResult<()>;
    /// Parked deliveries due at `now_ms` or before, soonest first, at most `limit`.
    async fn webhook_due(
        &self,
        room: &str,
        now_ms: u64,
        limit: u32,
    ) -> StoreResult<Vec<WebhookRetry>>;
    /// Records what a retry of `event_id` did. Settling a record that is not there does
    /// nothing.
    async fn webhook_settle(
        &self,
        room: &str,
        event_id: &str,
        outcome: &WebhookSettle,
    ) -> StoreResult<()>;
    /// The room's pending retries and dead letters.
    async fn webhook_counts(&self, room: &str) -> StoreResult<WebhookCounts>;
    /// The dead letters the room keeps (the newest
    /// [`MAX_DEAD_LETTERS_KEPT`](super::MAX_DEAD_LETTERS_KEPT)), newest first.
    async fn webhook_dead_letters(&self, room: &str) -> StoreResult<Vec<WebhookDeadLetter>>;
    /// Moves the kept dead letter of `event_id` (every kept one, with `None`) back to the
    /// retries, due at `due_ms` with no attempt made (the deliverer then gives it all of
    /// `webhooks.max_attempts` again); answers the event ids moved, none when there was
    /// no such letter. Atomic per letter: two replays of one letter move it once.
    async fn webhook_replay(
        &self,
        room: &str,
        event_id: Option<&str>,
        due_ms: u64,
    ) -> StoreResult<Vec<String>>;
}
