//! [`Timed`]: the store the application holds, timing every call of the backend it wraps
//! for `anteroom_store_call_seconds{class}` (`metrics::StoreLatency` observes them). Each
//! method is the backend's, called once, between two clock reads; the class is fixed per
//! method ([`StoreOp`]), so the label takes ten values whatever the traffic. Nothing else
//! changes: no call is added, retried or reordered, and errors pass through as they came
//! (they are timed too: a timeout is the slow call an operator wants to see).

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::stream::BoxStream;

use super::*;

/// What a store call does, for its latency's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// A join (one visitor, or a batch).
    Join,
    /// A visitor's status.
    Status,
    /// The hub's per-room calls: `tick`, `places`, `watch`.
    Tick,
    /// Admissions and sessions: promote, release, claim, extend, hold, restore, present.
    Admit,
    /// The reaper's passes over a room (silent visitors, no-shows).
    Reap,
    /// Reads for figures, the admin view, the ETA, fairness and the room configuration.
    Read,
    /// Room changes: create, patch, stock, flush, delete, the audit log.
    Write,
    /// The webhook deliverer's calls.
    Webhook,
    /// Coordination between instances: leases, rate windows, socket counts, the store's
    /// epoch, the event seed and shuffle, revocations, the admission subscription, ping.
    Coordinate,
    /// The adaptive outflow's reports and decisions.
    Outflow,
}

impl StoreOp {
    pub const ALL: [StoreOp; 10] = [
        StoreOp::Join,
        StoreOp::Status,
        StoreOp::Tick,
        StoreOp::Admit,
        StoreOp::Reap,
        StoreOp::Read,
        StoreOp::Write,
        StoreOp::Webhook,
        StoreOp::Coordinate,
        StoreOp::Outflow,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StoreOp::Join => "join",
            StoreOp::Status => "status",
            StoreOp::Tick => "tick",
            StoreOp::Admit => "admit",
            StoreOp::Reap => "reap",
            StoreOp::Read => "read",
            StoreOp::Write => "write",
            StoreOp::Webhook => "webhook",
            StoreOp::Coordinate => "coordinate",
            StoreOp::Outflow => "outflow",
        }
    }
}

/// Where the times go (`metrics::StoreLatency`).
pub trait TimeCalls: Send + Sync + 'static {
    /// One call of class `op` that took `took`.
    fn observe(&self, op: StoreOp, took: Duration);
}

/// A store whose calls are timed.
pub struct Timed<T: TimeCalls> {
    inner: Arc<dyn Store>,
    timer: T,
}

impl<T: TimeCalls> Timed<T> {
    pub fn new(inner: Arc<dyn Store>, timer: T) -> Self {
        Self { inner, timer }
    }
}

/// `$call` (a future of the wrapped store), observed as one call of class `$op`.
macro_rules! timed {
    ($self:ident, $op:ident, $call:expr) => {{
        let started = Instant::now();
        let out = $call.await;
        $self.timer.observe(StoreOp::$op, started.elapsed());
        out
    }};
}

#[async_trait]
impl<T: TimeCalls> RoomStore for Timed<T> {
    async fn put_room(&self, cfg: &RoomConfig, create_only: bool) -> StoreResult<bool> {
        timed!(self, Write, self.inner.put_room(cfg, create_only))
    }
    async fn room_versioned(&self, room: &str) -> StoreResult<Option<(RoomConfig, u64)>> {
        timed!(self, Read, self.inner.room_versioned(room))
    }
    async fn room(&self, room: &str) -> StoreResult<Option<RoomConfig>> {
        timed!(self, Read, self.inner.room(room))
    }
    async fn rooms(&self) -> StoreResult<Vec<String>> {
        timed!(self, Read, self.inner.rooms())
    }
    async fn delete_room(&self, room: &str) -> StoreResult<bool> {
        timed!(self, Write, self.inner.delete_room(room))
    }
    async fn patch_room_if(
        &self,
        room: &str,
        patch: &RoomPatch,
        expected: Option<u64>,
    ) -> StoreResult<PatchOutcome> {
        timed!(self, Write, self.inner.patch_room_if(room, patch, expected))
    }
    async fn patch_room(&self, room: &str, patch: &RoomPatch) -> StoreResult<Vec<String>> {
        timed!(self, Write, self.inner.patch_room(room, patch))
    }
    async fn change_stock(
        &self,
        room: &str,
        change: StockChange,
    ) -> StoreResult<(Option<u64>, Option<u64>, Vec<String>)> {
        timed!(self, Write, self.inner.change_stock(room, change))
    }
    async fn ping(&self) -> StoreResult<()> {
        timed!(self, Coordinate, self.inner.ping())
    }
}

#[async_trait]
impl<T: TimeCalls> AdmissionStore for Timed<T> {
    async fn join(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        timed!(self, Join, self.inner.join(room, visitor))
    }
    async fn join_limited(
        &self,
        room: &str,
        visitor: &str,
        limit: Option<&PlaceLimit>,
    ) -> StoreResult<Snapshot> {
        timed!(self, Join, self.inner.join_limited(room, visitor, limit))
    }
    async fn join_with(
        &self,
        room: &str,
        visitor: &str,
        opts: &JoinOptions,
    ) -> StoreResult<Snapshot> {
        timed!(self, Join, self.inner.join_with(room, visitor, opts))
    }
    async fn status(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        timed!(self, Status, self.inner.status(room, visitor))
    }
    async fn status_placed(&self, room: &str, visitor: &str) -> StoreResult<Snapshot> {
        timed!(self, Status, self.inner.status_placed(room, visitor))
    }
    async fn hold_away(&self, room: &str, visitor: &str, grace_ms: u64) -> StoreResult<bool> {
        timed!(self, Admit, self.inner.hold_away(room, visitor, grace_ms))
    }
    async fn release_ended(&self, room: &str, visitor: &str) -> StoreResult<Released> {
        timed!(self, Admit, self.inner.release_ended(room, visitor))
    }
    async fn release(&self, room: &str, visitor: &str) -> StoreResult<(bool, Vec<String>)> {
        timed!(self, Admit, self.inner.release(room, visitor))
    }
    async fn promote(&self, room: &str, limit: u32) -> StoreResult<Vec<String>> {
        timed!(self, Admit, self.inner.promote(room, limit))
    }
    async fn session_live(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool> {
        timed!(self, Admit, self.inner.session_live(room, visitor, serial))
    }
    async fn extend_session(
        &self,
        room: &str,
        visitor: &str,
        serial: u64,
        ttl_ms: u64,
        cap_ms: u64,
    ) -> StoreResult<Option<Admission>> {
        timed!(
            self,
            Admit,
            self.inner
                .extend_session(room, visitor, serial, ttl_ms, cap_ms)
        )
    }
    async fn reap(&self, room: &str, batch: u32) -> StoreResult<ReapBatch> {
        timed!(self, Reap, self.inner.reap(room, batch))
    }
    async fn hit_window(
        &self,
        key: &str,
        limit: u64,
        window_ms: u64,
    ) -> StoreResult<WindowDecision> {
        timed!(
            self,
            Coordinate,
            self.inner.hit_window(key, limit, window_ms)
        )
    }
    async fn eta_basis(&self, room: &str) -> StoreResult<EtaBasis> {
        timed!(self, Read, self.inner.eta_basis(room))
    }
}

#[async_trait]
impl<T: TimeCalls> LineStore for Timed<T> {
    async fn watch(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<WatchEntry>)> {
        timed!(self, Tick, self.inner.watch(room, visitors))
    }
    async fn tick(&self, room: &str, req: &TickRequest<'_>) -> StoreResult<RoomTick> {
        timed!(self, Tick, self.inner.tick(room, req))
    }
    async fn places(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<Placed>, LineCursor)> {
        timed!(self, Tick, self.inner.places(room, visitors))
    }
    async fn subscribe(&self) -> StoreResult<BoxStream<'static, AdmittedEvent>> {
        timed!(self, Coordinate, self.inner.subscribe())
    }
    async fn report_sockets(&self, instance: &str, counts: &[(String, u64)]) -> StoreResult<()> {
        timed!(
            self,
            Coordinate,
            self.inner.report_sockets(instance, counts)
        )
    }
    async fn sockets(&self) -> StoreResult<Vec<SocketCount>> {
        timed!(self, Read, self.inner.sockets())
    }
}

#[async_trait]
impl<T: TimeCalls> AdminStore for Timed<T> {
    async fn stats(&self, room: &str) -> StoreResult<RoomStats> {
        timed!(self, Read, self.inner.stats(room))
    }
    async fn find_visitors(
        &self,
        room: &str,
        id_prefix: &str,
        limit: usize,
    ) -> StoreResult<Vec<FoundVisitor>> {
        timed!(self, Read, self.inner.find_visitors(room, id_prefix, limit))
    }
    async fn flush(&self, room: &str) -> StoreResult<u64> {
        timed!(self, Write, self.inner.flush(room))
    }
    async fn report(&self, room: &str, minutes: u32) -> StoreResult<RoomReport> {
        timed!(self, Read, self.inner.report(room, minutes))
    }
    async fn audit_push(&self, entry: &str, keep: u32) -> StoreResult<()> {
        timed!(self, Write, self.inner.audit_push(entry, keep))
    }
    async fn audit(&self, limit: u32) -> StoreResult<Vec<String>> {
        timed!(self, Read, self.inner.audit(limit))
    }
}

#[async_trait]
impl<T: TimeCalls> RecoveryStore for Timed<T> {
    fn failovers(&self) -> u64 {
        self.inner.failovers()
    }
    async fn recreate_room(&self, cfg: &RoomConfig, hold_ms: u64) -> StoreResult<bool> {
        timed!(self, Write, self.inner.recreate_room(cfg, hold_ms))
    }
    async fn restore_place(
        &self,
        room: &str,
        visitor: &str,
        ticket: u64,
        joined_at_ms: u64,
    ) -> StoreResult<Snapshot> {
        timed!(
            self,
            Admit,
            self.inner
                .restore_place(room, visitor, ticket, joined_at_ms)
        )
    }
    async fn sessions(&self, room: &str, q: &SessionsQuery) -> StoreResult<SessionsPage> {
        timed!(self, Read, self.inner.sessions(room, q))
    }
    async fn restore_session(
        &self,
        room: &str,
        visitor: &str,
        admission: &Admission,
    ) -> StoreResult<bool> {
        timed!(
            self,
            Admit,
            self.inner.restore_session(room, visitor, admission)
        )
    }
    async fn epoch(&self, candidate: &str) -> StoreResult<String> {
        timed!(self, Coordinate, self.inner.epoch(candidate))
    }
}

#[async_trait]
impl<T: TimeCalls> EventStore for Timed<T> {
    async fn events(&self, room: &str, after: &str, count: u32) -> StoreResult<Vec<RoomEvent>> {
        timed!(self, Webhook, self.inner.events(room, after, count))
    }
    async fn webhook_cursor(&self, room: &str) -> StoreResult<String> {
        timed!(self, Webhook, self.inner.webhook_cursor(room))
    }
    async fn webhook_advance(
        &self,
        room: &str,
        cursor: &str,
        retries: &[WebhookRetry],
        dead: &[WebhookDeadLetter],
    ) -> StoreResult<()> {
        timed!(
            self,
            Webhook,
            self.inner.webhook_advance(room, cursor, retries, dead)
        )
    }
    async fn webhook_due(
        &self,
        room: &str,
        now_ms: u64,
        limit: u32,
    ) -> StoreResult<Vec<WebhookRetry>> {
        timed!(self, Webhook, self.inner.webhook_due(room, now_ms, limit))
    }
    async fn webhook_settle(
        &self,
        room: &str,
        event_id: &str,
        outcome: &WebhookSettle,
    ) -> StoreResult<()> {
        timed!(
            self,
            Webhook,
            self.inner.webhook_settle(room, event_id, outcome)
        )
    }
    async fn webhook_counts(&self, room: &str) -> StoreResult<WebhookCounts> {
        timed!(self, Webhook, self.inner.webhook_counts(room))
    }
    async fn webhook_dead_letters(&self, room: &str) -> StoreResult<Vec<WebhookDeadLetter>> {
        timed!(self, Webhook, self.inner.webhook_dead_letters(room))
    }
    async fn webhook_replay(
        &self,
        room: &str,
        event_id: Option<&str>,
        due_ms: u64,
    ) -> StoreResult<Vec<String>> {
        timed!(
            self,
            Webhook,
            self.inner.webhook_replay(room, event_id, due_ms)
        )
    }
}

#[async_trait]
impl<T: TimeCalls> LeaseStore for Timed<T> {
    async fn acquire_lease(&self, name: &str, token: &str, ttl_ms: u64) -> StoreResult<bool> {
        timed!(
            self,
            Coordinate,
            self.inner.acquire_lease(name, token, ttl_ms)
        )
    }
    async fn release_lease(&self, name: &str, token: &str) -> StoreResult<bool> {
        timed!(self, Coordinate, self.inner.release_lease(name, token))
    }
}

#[async_trait]
impl<T: TimeCalls> FairnessStore for Timed<T> {
    async fn event_seed(&self, room: &str, candidate: &str) -> StoreResult<String> {
        timed!(self, Coordinate, self.inner.event_seed(room, candidate))
    }
    async fn fairness(&self, room: &str) -> StoreResult<Fairness> {
        timed!(self, Read, self.inner.fairness(room))
    }
    async fn prequeue_page(&self, room: &str, offset: u64, count: u32) -> StoreResult<Vec<String>> {
        timed!(
            self,
            Coordinate,
            self.inner.prequeue_page(room, offset, count)
        )
    }
    async fn shuffle_step(
        &self,
        room: &str,
        seed: &str,
        first_rank: u64,
        visitors: &[String],
        last: bool,
    ) -> StoreResult<ShuffleStep> {
        timed!(
            self,
            Coordinate,
            self.inner
                .shuffle_step(room, seed, first_rank, visitors, last)
        )
    }
}

#[async_trait]
impl<T: TimeCalls> RevocationStore for Timed<T> {
    async fn revoke(&self, r: &Revocation) -> StoreResult<()> {
        timed!(self, Coordinate, self.inner.revoke(r))
    }
    async fn revocations_since(&self, cursor: u64, limit: usize) -> StoreResult<RevocationPage> {
        timed!(
            self,
            Coordinate,
            self.inner.revocations_since(cursor, limit)
        )
    }
}

#[async_trait]
impl<T: TimeCalls> OutflowStore for Timed<T> {
    async fn put_origin_report(
        &self,
        room: &str,
        source: &str,
        report: &str,
        ttl_ms: u64,
    ) -> StoreResult<()> {
        timed!(
            self,
            Outflow,
            self.inner.put_origin_report(room, source, report, ttl_ms)
        )
    }
    async fn origin_reports(&self, room: &str) -> StoreResult<Vec<String>> {
        timed!(self, Outflow, self.inner.origin_reports(room))
    }
    async fn push_outflow_point(&self, room: &str, point: &str) -> StoreResult<()> {
        timed!(self, Outflow, self.inner.push_outflow_point(room, point))
    }
    async fn outflow_points(&self, room: &str, n: u64) -> StoreResult<Vec<String>> {
        timed!(self, Outflow, self.inner.outflow_points(room, n))
    }
    async fn present(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool> {
        timed!(self, Admit, self.inner.present(room, visitor, serial))
    }
    async fn reap_no_shows(&self, room: &str, batch: u32) -> StoreResult<Vec<(String, Admission)>> {
        timed!(self, Reap, self.inner.reap_no_shows(room, batch))
    }
    async fn no_shows(&self, room: &str) -> StoreResult<u64> {
        timed!(self, Read, self.inner.no_shows(room))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::store::memory::MemoryStore;

    /// Counts calls per class.
    #[derive(Clone, Default)]
    struct Counts(Arc<Mutex<Vec<StoreOp>>>);

    impl TimeCalls for Counts {
        fn observe(&self, op: StoreOp, _took: Duration) {
            self.0.lock().unwrap().push(op);
        }
    }

    impl Counts {
        fn of(&self, op: StoreOp) -> usize {
            self.0.lock().unwrap().iter().filter(|o| **o == op).count()
        }
    }

    #[tokio::test]
    async fn each_call_is_timed_once_under_its_class_and_answers_as_the_backend() {
        let counts = Counts::default();
        let t = Timed::new(Arc::new(MemoryStore::new()), counts.clone());
        let cfg = RoomConfig {
            id: "r".into(),
            capacity: 1,
            session_ttl_secs: 60,
            heartbeat_timeout_secs: 60,
            target_url: "https://origin.example/in".into(),
            ..RoomConfig::default()
        };
        assert!(t.put_room(&cfg, true).await.unwrap());
        let first = t.join("r", "v1").await.unwrap();
        let second = t.join("r", "v2").await.unwrap();
        assert!(first.admission.is_some() && second.position == 1);
        assert_eq!(t.status("r", "v2").await.unwrap().position, 1);
        assert!(matches!(
            t.status("nope", "v").await,
            Err(StoreError::NoSuchRoom)
        ));
        assert_eq!(counts.of(StoreOp::Write), 1);
        assert_eq!(
            counts.of(StoreOp::Join),
            2,
            "join → join_limited → join_with: once"
        );
        assert_eq!(counts.of(StoreOp::Status), 2, "an error is timed too");
        assert_eq!(counts.of(StoreOp::Tick), 0);
    }

    #[test]
    fn all_is_in_declaration_order() {
        for (i, op) in StoreOp::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i);
        }
    }
}
