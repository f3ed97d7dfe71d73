//! The RoomStore role of the store (see [`super::Store`]).

use async_trait::async_trait;

use super::{PatchOutcome, RoomPatch, StockChange, StoreError, StoreResult};
use crate::room::RoomConfig;

/// A room's settings: written by the admin API and startup, read by every task (each
/// looks at [`RoomStore::rooms`]), and the store's liveness check.
#[async_trait]
pub trait RoomStore: Send + Sync {
    /// Writes a room's live configuration. With `create_only`, an existing room is left
    /// untouched and `false` is returned.
    async fn put_room(&self, cfg: &RoomConfig, create_only: bool) -> StoreResult<bool>;
    /// The live configuration of a room and its version, read together.
    async fn room_versioned(&self, room: &str) -> StoreResult<Option<(RoomConfig, u64)>>;
    /// The live configuration of a room.
    async fn room(&self, room: &str) -> StoreResult<Option<RoomConfig>> {
        Ok(self.room_versioned(room).await?.map(|(cfg, _)| cfg))
    }
    /// All room ids, sorted.
    async fn rooms(&self) -> StoreResult<Vec<String>>;
    /// Removes a room and everything in it. Returns whether it existed.
    async fn delete_room(&self, room: &str) -> StoreResult<bool>;
    /// Changes the given config fields atomically, then promotes. With `expected`, only
    /// if the room is at that version (checked in the same atomic step as the write).
    async fn patch_room_if(
        &self,
        room: &str,
        patch: &RoomPatch,
        expected: Option<u64>,
    ) -> StoreResult<PatchOutcome>;
    /// Changes the given config fields atomically, then promotes; returns who was admitted.
    async fn patch_room(&self, room: &str, patch: &RoomPatch) -> StoreResult<Vec<String>> {
        match self.patch_room_if(room, patch, None).await? {
            PatchOutcome::Applied { admitted, .. } => Ok(admitted),
            PatchOutcome::Stale { .. } => Err(StoreError::Protocol(
                "a patch without a version came back stale".into(),
            )),
        }
    }
    /// Sets or tops up stock atomically with admissions, then promotes.
    /// Returns (old, new, admitted).
    async fn change_stock(
        &self,
        room: &str,
        change: StockChange,
    ) -> StoreResult<(Option<u64>, Option<u64>, Vec<String>)>;
    /// Cheap liveness check (readiness probe).
    async fn ping(&self) -> StoreResult<()>;
}
