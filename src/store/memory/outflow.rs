//! The memory store's outflow state ([`crate::store::outflow`]), on the store's clock.

use super::*;
use crate::store::outflow::OutflowStore;

#[async_trait]
impl OutflowStore for MemoryStore {
    async fn put_origin_report(
        &self,
        room: &str,
        source: &str,
        report: &str,
        ttl_ms: u64,
    ) -> StoreResult<()> {
        let until = self.clock.now_ms() + ttl_ms;
        // unwrap: never poisoned (no panics while held).
        let mut of = self.outflow.lock().unwrap();
        of.entry(room.to_string())
            .or_default()
            .put(source, report, until);
        Ok(())
    }

    async fn origin_reports(&self, room: &str) -> StoreResult<Vec<String>> {
        let now = self.clock.now_ms();
        let mut of = self.outflow.lock().unwrap();
        Ok(of.get_mut(room).map(|o| o.reports(now)).unwrap_or_default())
    }

    async fn push_outflow_point(&self, room: &str, point: &str) -> StoreResult<()> {
        let mut of = self.outflow.lock().unwrap();
        of.entry(room.to_string()).or_default().push(point);
        Ok(())
    }

    async fn outflow_points(&self, room: &str, n: u64) -> StoreResult<Vec<String>> {
        let of = self.outflow.lock().unwrap();
        Ok(of.get(room).map(|o| o.points(n)).unwrap_or_default())
    }

    async fn present(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool> {
        self.with_room(room, |r, now| r.present(visitor, serial, now))
    }

    async fn reap_no_shows(&self, room: &str, batch: u32) -> StoreResult<Vec<(String, Admission)>> {
        self.with_room(room, |r, now| r.reap_no_shows(now, batch as usize))
    }

    async fn no_shows(&self, room: &str) -> StoreResult<u64> {
        self.with_room(room, |r, _| r.no_shows_total)
    }
}
