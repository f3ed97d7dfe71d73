//! The AdminStore role of the store (see [`super::Store`]).

use async_trait::async_trait;

use super::{FoundVisitor, RoomReport, RoomStats, StoreResult};

/// An operator's reads and writes on a room's people and history: search, flush,
/// figures, the report and the audit log.
#[async_trait]
pub trait AdminStore: Send + Sync {
    /// Figures for one room.
    async fn stats(&self, room: &str) -> StoreResult<RoomStats>;
    /// The queued and admitted visitors whose id starts with `id_prefix` (lowercase hex),
    /// at most `limit`: admitted ones first (by id), then queued ones by position. Reads
    /// only; a queued visitor's heartbeat is not refreshed. Scans the queue and the
    /// sessions in steps, so a long queue never blocks the store.
    async fn find_visitors(
        &self,
        room: &str,
        id_prefix: &str,
        limit: usize,
    ) -> StoreResult<Vec<FoundVisitor>>;
    /// Empties the queue (sessions stay). Returns how many were waiting.
    async fn flush(&self, room: &str) -> StoreResult<u64>;
    /// Figures and the last `minutes` minutes of history.
    async fn report(&self, room: &str, minutes: u32) -> StoreResult<RoomReport>;
    /// Appends to the audit log, keeping the newest `keep` entries.
    async fn audit_push(&self, entry: &str, keep: u32) -> StoreResult<()>;
    /// The newest `limit` audit entries, newest first.
    async fn audit(&self, limit: u32) -> StoreResult<Vec<String>>;
}
