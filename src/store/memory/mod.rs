//! In-process backend for the demo and for single-instance use. Same rules as the Redis
//! scripts (see the parent module). Rooms sit behind one mutex (limiter windows and leases
//! have their own): every operation is atomic because it runs entirely under the lock,
//! and none of them awaits while holding it.
//!
//! Time comes from a [`Clock`], so tests can drive expiry and heartbeats by hand.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_util::stream::{BoxStream, StreamExt};
use tokio::sync::broadcast;

use super::{
    sort_found, wait_bucket, Admission, AdmittedEvent, FoundVisitor, MinuteStats, PatchOutcome,
    ReapBatch, RoomPatch, RoomReport, RoomStats, RoomView, Snapshot, SocketCount, StockChange,
    StoreError, StoreResult, VisitorState, WatchEntry, WindowDecision,
};
use super::{
    AdminStore, AdmissionStore, EventStore, FairnessStore, LeaseStore, LineStore, RecoveryStore,
    RevocationStore, RoomStore,
};
use crate::room::schedule::EventPhase;
use crate::room::{QueueMode, RoomConfig};

mod line;
mod outflow;
mod room;
#[cfg(test)]
mod tests;

use room::*;

use super::{LineChange, LineCursor, Placed, RoomTick, TickRequest};
use super::{
    Released, RoomEvent, SessionsPage, SessionsQuery, GONE_KEEP_MS, HISTORY_MINUTES, PROMOTE_LIMIT,
    STREAM_KEEP, WINDOW_MS,
};

/// A source of "now" in milliseconds since the epoch.
pub trait Clock: Send + Sync + 'static {
    fn now_ms(&self) -> u64;
}

/// The wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        crate::clock::wall_ms()
    }
}

/// A clock that moves only when told to.
#[derive(Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    pub fn new(start_ms: u64) -> Self {
        Self(Arc::new(AtomicU64::new(start_ms)))
    }
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// How long an operation may hold the rooms' lock before it is logged (see `with_room`).
const SLOW_HOLD: std::time::Duration = std::time::Duration::from_millis(5);

/// Logs, when dropped, a hold of the rooms' lock longer than [`SLOW_HOLD`].
struct SlowHold(std::time::Instant, &'static std::panic::Location<'static>);

impl Drop for SlowHold {
    fn drop(&mut self) {
        let took = self.0.elapsed();
        if took >= SLOW_HOLD {
            tracing::warn!(
                at = %self.1,
                ms = took.as_secs_f64() * 1e3,
                "memory store: an operation held the rooms' lock long"
            );
        }
    }
}

/// The in-memory store.
pub struct MemoryStore {
    rooms: Mutex<HashMap<String, Room>>,
    windows: Mutex<HashMap<String, (u64, u64)>>,
    leases: Mutex<HashMap<String, (String, u64)>>,
    sockets: Mutex<HashMap<(String, String), (u64, u64)>>,
    audit: Mutex<VecDeque<String>>,
    epoch: Mutex<Option<String>>,
    revocations: Mutex<super::revocation::MemoryLog>,
    /// Each room's outflow reports and decisions (`super::outflow`).
    outflow: Mutex<HashMap<String, super::outflow::MemoryOutflow>>,
    clock: Arc<dyn Clock>,
    events: broadcast::Sender<AdmittedEvent>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            rooms: Mutex::new(HashMap::new()),
            windows: Mutex::new(HashMap::new()),
            leases: Mutex::new(HashMap::new()),
            sockets: Mutex::new(HashMap::new()),
            audit: Mutex::new(VecDeque::new()),
            epoch: Mutex::new(None),
            revocations: Mutex::default(),
            outflow: Mutex::default(),
            clock,
            events: broadcast::channel(4096).0,
        }
    }

    /// Runs `f` on `room` under the rooms' lock. A hold of [`SLOW_HOLD`] or more is logged
    /// with the operation's place in this file: every other caller waited that long
    /// (issue 35's stall hunt).
    #[track_caller]
    fn with_room<T>(&self, room: &str, f: impl FnOnce(&mut Room, u64) -> T) -> StoreResult<T> {
        let caller = std::panic::Location::caller();
        let now = self.clock.now_ms();
        // unwrap: a poisoned lock means a panic mid-update; the state is not trustworthy.
        let mut rooms = self.rooms.lock().unwrap();
        let held = std::time::Instant::now();
        let _slow = SlowHold(held, caller);
        let r = rooms.get_mut(room).ok_or(StoreError::NoSuchRoom)?;
        r.enter(now);
        let out = f(r, now);
        for (visitor, admission) in r.outbox.drain(..) {
            // No receivers is fine: nobody is watching.
            let _ = self.events.send(AdmittedEvent {
                room: room.to_string(),
                visitor,
                admission,
            });
        }
        Ok(out)
    }

    /// `put_room`, a new room holding admissions and new places for `hold_ms` (as
    /// `put_room.lua`; `recreate_room`).
    fn write_room(&self, cfg: &RoomConfig, create_only: bool, hold_ms: u64) -> bool {
        let now = self.clock.now_ms();
        // unwrap: a poisoned lock means a panic mid-update; the state is not trustworthy.
        let mut rooms = self.rooms.lock().unwrap();
        match rooms.get_mut(&cfg.id) {
            Some(_) if create_only => false,
            Some(r) => {
                r.set_cfg(cfg.clone());
                r.version += 1;
                true
            }
            None => {
                rooms.insert(
                    cfg.id.clone(),
                    Room {
                        cfg: cfg.clone(),
                        version: 1,
                        hold_until: now + hold_ms,
                        ..Room::default()
                    },
                );
                true
            }
        }
    }
}

#[async_trait]
impl RoomStore for MemoryStore {
    async fn put_room(&self, cfg: &RoomConfig, create_only: bool) -> StoreResult<bool> {
        Ok(self.write_room(cfg, create_only, 0))
    }

    async fn room_versioned(&self, room: &str) -> StoreResult<Option<(RoomConfig, u64)>> {
        Ok(self
            .rooms
            .lock()
            .unwrap()
            .get(room)
            .map(|r| (r.cfg.clone(), r.version)))
    }

    async fn rooms(&self) -> StoreResult<Vec<String>> {
        let mut ids: Vec<String> = self.rooms.lock().unwrap().keys().cloned().collect();
        ids.sort();
        Ok(ids)
    }

    async fn delete_room(&self, room: &str) -> StoreResult<bool> {
        self.outflow.lock().unwrap().remove(room);
        Ok(self.rooms.lock().unwrap().remove(room).is_some())
    }

    async fn patch_room_if(
        &self,
        room: &str,
        patch: &RoomPatch,
        expected: Option<u64>,
    ) -> StoreResult<PatchOutcome> {
        self.with_room(room, |r, now| {
            if expected.is_some_and(|v| v != r.version) {
                return PatchOutcome::Stale { version: r.version };
            }
            // Stock is not part of a patch; keep the live value.
            let cfg = RoomConfig {
                stock: r.cfg.stock,
                ..patch.applied_to(&r.cfg)
            };
            if cfg != r.cfg {
                let was_closed = r.closed();
                let was_ended = r.phase == EventPhase::Ended;
                r.set_cfg(cfg);
                r.enter(now);
                r.version += 1;
                // An event's end (or its end moved away) is told by `enter`.
                let ended = r.phase == EventPhase::Ended;
                if r.closed() != was_closed && !(ended || was_ended) {
                    let kind = if r.closed() { "closed" } else { "opened" };
                    r.event(now, kind, None, None);
                }
            }
            PatchOutcome::Applied {
                version: r.version,
                admitted: r.promote(now, PROMOTE_LIMIT),
            }
        })
    }

    async fn change_stock(
        &self,
        room: &str,
        change: StockChange,
    ) -> StoreResult<(Option<u64>, Option<u64>, Vec<String>)> {
        self.with_room(room, |r, now| {
            let old = r.cfg.stock;
            r.cfg.stock = match change {
                StockChange::Set(n) => Some(n),
                StockChange::Add(n) => old.map(|o| o.saturating_add(n).min(super::MAX_STOCK)),
                StockChange::Unlimited => None,
            };
            if r.cfg.stock != old {
                r.version += 1;
            }
            if r.cfg.stock == Some(0) && old != Some(0) {
                r.event(now, "sold_out", None, None);
            }
            (old, r.cfg.stock, r.promote(now, PROMOTE_LIMIT))
        })
    }

    async fn ping(&self) -> StoreResult<()> {
        Ok(())
    }
}

#[async_trait]
impl AdmissionStore for MemoryStore {
    async fn join_with(
        &self,
        room: &str,
        v: &str,
        opts: &super::JoinOptions,
    ) -> StoreResult<Snapshot> {
        let limit = opts.limit.as_ref();
        self.with_room(room, |r, now| {
            if r.is_admitted(v, now) {
                return Ok(r.snapshot(VisitorState::Admitted, v, now, Vec::new()));
            }
            if r.closed() {
                return Ok(r.snapshot(VisitorState::Closed, v, now, Vec::new()));
            }
            // A scheduled event (as in join.lua): no place before the pre-queue; in it, an
            // unordered wait; after the opening, until the shuffle is done, newcomers
            // queue behind the whole pre-queue.
            if r.phase == EventPhase::Scheduled {
                return Ok(r.snapshot(VisitorState::Scheduled, v, now, Vec::new()));
            }
            if r.phase == EventPhase::Prequeue && !r.queue.contains(v) {
                if r.prequeue.contains_key(v) {
                    return Ok(r.snapshot(VisitorState::Prequeue, v, now, Vec::new()));
                }
                if r.cfg.opens_at.is_some_and(|o| now < o) {
                    if r.cfg.stock == Some(0) {
                        return Ok(r.snapshot(VisitorState::SoldOut, v, now, Vec::new()));
                    }
                    if !r.take_group_place(v, limit, now) {
                        return Err(StoreError::TooManyPlaces);
                    }
                    r.seed.get_or_insert_with(super::new_seed);
                    r.prequeue.insert(v.to_string(), now);
                    return Ok(r.snapshot(VisitorState::Prequeue, v, now, Vec::new()));
                }
                r.reserve_prequeue();
            }
            // Rejecting: no promotion and no new place; a place already held is kept.
            if r.rejecting() {
                let queued = r.queue.contains(v);
                if queued {
                    r.beat(v, now);
                }
                return Ok(r.snapshot(r.waiting_state(queued), v, now, Vec::new()));
            }
            let promoted = r.promote(now, PROMOTE_LIMIT);
            if r.is_admitted(v, now) {
                return Ok(r.snapshot(VisitorState::Admitted, v, now, promoted));
            }
            if r.queue.contains(v) {
                r.beat(v, now);
                return Ok(r.snapshot_placed(r.waiting_state(true), v, now, promoted));
            }
            // A re-created room gives no new place while lost places are put back.
            if r.hold_until > now {
                return Err(StoreError::Held {
                    retry_after_ms: r.hold_until - now,
                });
            }
            let away = r.away.remove(v).is_some();
            if r.cfg.stock == Some(0) {
                return Ok(r.snapshot(VisitorState::SoldOut, v, now, promoted));
            }
            // A new place: count it against the group's cap first.
            if !r.take_group_place(v, limit, now) {
                return Err(StoreError::TooManyPlaces);
            }
            // A walk-in: nobody waiting ahead (in passthrough there is no line to
            // respect) and a slot free; never while paused or queueing all.
            let walk_in = r.cfg.mode == QueueMode::Passthrough || r.queue.is_empty();
            let open = r.phase == EventPhase::Open;
            if !r.cfg.paused && !r.cfg.queue_all && open && walk_in && r.free_slots(now) > 0 {
                r.admit(v, now, None);
                return Ok(r.snapshot(VisitorState::Admitted, v, now, promoted));
            }
            match opts.score.filter(|_| r.cfg.mode == QueueMode::Random) {
                // Random mode: the ticket is the visitor's draw (as join.lua).
                Some(score) => r.queue.insert(v, score, ""),
                None => r.enqueue(v, opts.lane.as_deref()),
            }
            r.join_times.insert(v.to_string(), now);
            r.beat(v, now);
            let mut s = r.snapshot_placed(r.waiting_state(true), v, now, promoted);
            s.rejoined_after_absence = away;
            Ok(s)
        })?
    }

    async fn status(&self, room: &str, v: &str) -> StoreResult<Snapshot> {
        self.with_room(room, |r, now| r.status(v, now, false))
    }

    async fn status_placed(&self, room: &str, v: &str) -> StoreResult<Snapshot> {
        self.with_room(room, |r, now| r.status(v, now, true))
    }

    async fn hold_away(&self, room: &str, v: &str, grace_ms: u64) -> StoreResult<bool> {
        self.with_room(room, |r, now| {
            if !r.queue.contains(v) {
                return false;
            }
            // As away.lua: held until grace_ms after the first hide of this hidden spell
            // (a new spell once the heartbeat moved past the old spell's hold).
            let hb_ms = r.cfg.heartbeat_timeout_secs * 1000;
            if grace_ms > hb_ms {
                let hb = r.heartbeats.get(v).copied().unwrap_or(0);
                let first = match r.hidden.get(v) {
                    Some(&first) if hb <= first + grace_ms - hb_ms => first,
                    _ => {
                        r.hidden.insert(v.to_string(), now);
                        now
                    }
                };
                r.set_heartbeat(v, first + grace_ms - hb_ms);
                r.hidden.retain(|_, at| *at + 2 * grace_ms >= now);
            }
            true
        })
    }

    async fn release_ended(&self, room: &str, v: &str) -> StoreResult<Released> {
        self.with_room(room, |r, now| {
            // Releasing is being there: the session was a stay.
            let live = r.is_admitted(v, now);
            if live {
                r.unclaimed.remove(v);
            }
            let session = live.then(|| r.sessions.get(v).cloned()).flatten();
            r.session_ended(v, now);
            let ended = r.end_session(v);
            let mut left = r.dequeue(v);
            // Leaving the pre-queue before the shuffle placed it (as release.lua).
            if r.phase != EventPhase::Open && !r.pq_placed.contains(v) {
                left |= r.prequeue.remove(v).is_some();
            }
            r.join_times.remove(v);
            r.gone.retain(|_, at| *at + GONE_KEEP_MS > now);
            r.gone.insert(v.to_string(), now);
            if let Some(a) = &session {
                r.event(now, "release", Some(v), Some(a.serial));
            }
            Released {
                held: ended || left,
                session,
                admitted: r.promote(now, PROMOTE_LIMIT),
            }
        })
    }

    async fn promote(&self, room: &str, limit: u32) -> StoreResult<Vec<String>> {
        self.with_room(room, |r, now| {
            // The chart's queue-length sample: the promoter's job alone (as in Lua).
            let qlen = r.queue.len() as u64;
            r.minute(now).queue_length = Some(qlen);
            r.promote(now, limit as u64)
        })
    }

    async fn session_live(&self, room: &str, v: &str, serial: u64) -> StoreResult<bool> {
        self.with_room(room, |r, now| {
            let live =
                r.is_admitted(v, now) && r.sessions.get(v).is_some_and(|a| a.serial == serial);
            if live {
                r.unclaimed.remove(v);
            }
            live
        })
    }

    async fn extend_session(
        &self,
        room: &str,
        v: &str,
        serial: u64,
        ttl_ms: u64,
        cap_ms: u64,
    ) -> StoreResult<Option<Admission>> {
        self.with_room(room, |r, now| {
            if !r.is_admitted(v, now) {
                return None;
            }
            let a = r.sessions.get(v).filter(|a| a.serial == serial)?.clone();
            let want = (now + ttl_ms).min(a.issued_at_ms + cap_ms);
            if want <= a.expires_at_ms {
                return Some(a);
            }
            r.expiries.remove(&(a.expires_at_ms, v.to_string()));
            r.expiries.insert((want, v.to_string()));
            let renewed = Admission {
                expires_at_ms: want,
                ..a
            };
            r.sessions.insert(v.to_string(), renewed.clone());
            Some(renewed)
        })
    }

    async fn reap(&self, room: &str, batch: u32) -> StoreResult<ReapBatch> {
        self.with_room(room, |r, now| {
            let cutoff = now.saturating_sub(r.cfg.heartbeat_timeout_secs * 1000);
            r.release_lapsed(batch as usize, now);
            let candidates: Vec<String> = r
                .hb_order
                .range(..(cutoff + 1, String::new()))
                .take(batch as usize)
                .map(|(_, v)| v.clone())
                .collect();
            let (stale, vouched) = r.vouch(candidates, now);
            for v in &stale {
                r.dequeue(v);
                r.join_times.remove(v);
                r.away.insert(v.clone(), now);
            }
            let keep_from = now.saturating_sub(super::AWAY_KEEP_MS);
            r.away.retain(|_, at| *at >= keep_from);
            r.reaped += stale.len() as u64;
            if !stale.is_empty() {
                r.minute(now).reaped += stale.len() as u64;
            }
            let expired: Vec<String> = r
                .expiries
                .range(..(now + 1, String::new()))
                .take(batch as usize)
                .map(|(_, v)| v.clone())
                .collect();
            for v in &expired {
                let serial = r.sessions.get(v).map(|a| a.serial);
                r.session_ended(v, now);
                r.end_session(v);
                r.event(now, "expiry", Some(v), serial);
            }
            ReapBatch {
                dropped: stale.len() as u64,
                expired: expired.len() as u64,
                vouched,
            }
        })
    }

    async fn hit_window(
        &self,
        key: &str,
        limit: u64,
        window_ms: u64,
    ) -> StoreResult<WindowDecision> {
        let now = self.clock.now_ms();
        let mut w = self.windows.lock().unwrap();
        // Keep the map bounded: drop finished windows once it grows.
        if w.len() > 100_000 {
            w.retain(|_, (_, end)| *end > now);
        }
        let e = w.entry(key.to_string()).or_insert((0, now + window_ms));
        if e.1 <= now {
            *e = (0, now + window_ms);
        }
        e.0 += 1;
        Ok(WindowDecision {
            allowed: e.0 <= limit,
            count: e.0,
            reset_ms: e.1 - now,
        })
    }

    async fn eta_basis(&self, room: &str) -> StoreResult<super::EtaBasis> {
        self.with_room(room, |r, now| {
            r.promote(now, PROMOTE_LIMIT);
            let half = now.saturating_sub(r.cfg.heartbeat_timeout_secs * 500);
            let silent = r.hb_order.range(..(half, String::new())).count() as u64;
            let (quiet, sessions): (Vec<_>, Vec<_>) = r
                .expiries
                .range((now + 1, String::new())..)
                .take(super::BASIS_SESSIONS)
                .filter_map(|(_, v)| {
                    let a = r.sessions.get(v)?;
                    let quiet = r.unclaimed.contains(v)
                        && now.saturating_sub(a.issued_at_ms) >= r.cfg.heartbeat_timeout_secs * 500;
                    // A quiet session not presented ends at its no-show deadline.
                    let due = r.claims.get(v).copied().unwrap_or(u64::MAX);
                    Some((quiet, a, due))
                })
                .partition(|(q, _, _)| *q);
            let sessions: Vec<(u64, u64)> = sessions
                .into_iter()
                .map(|(_, a, _)| (a.issued_at_ms, a.expires_at_ms))
                .collect();
            let mut quiet: Vec<u64> = quiet
                .into_iter()
                .map(|(_, a, due)| a.expires_at_ms.min(due))
                .collect();
            quiet.sort_unstable();
            let window = if r.eff.2 > 0 {
                let from = now.saturating_sub(WINDOW_MS);
                r.window.iter().copied().filter(|&t| t >= from).collect()
            } else {
                Vec::new()
            };
            let m = now / 60_000;
            let recent = r.minutes.range(m.saturating_sub(4)..=m);
            let (admitted_recent, reaped_recent) =
                recent.fold((0, 0), |(a, d), (_, s)| (a + s.admissions, d + s.reaped));
            super::EtaBasis {
                now_ms: now,
                lanes: !r.cfg.lanes.is_empty(),
                capacity: r.eff.0,
                session_ttl_ms: r.eff.1 * 1000,
                rate_cap_per_minute: r.eff.2,
                stock: r.cfg.stock,
                // Held by queue_all or the reject mode too: no countdown.
                // Not a scheduled event's wait: nobody was told of a pause, and its
                // opening is not a resume (no `resumed` reason at a drop's opening).
                paused: r.cfg.paused || r.cfg.queue_all || r.cfg.mode == QueueMode::Reject,
                closed: r.closed(),
                queue_length: r.queue.len() as u64,
                active: r.active(now),
                sessions,
                quiet,
                // Expired sessions not yet pruned ended at their expiry.
                ends: r
                    .expiries
                    .range(..(now + 1, String::new()))
                    .filter(|(_, v)| !r.unclaimed.contains(v))
                    .filter_map(|(_, v)| r.sessions.get(v))
                    .map(|a| (a.expires_at_ms, a.expires_at_ms - a.issued_at_ms))
                    .chain(r.ends.iter().copied())
                    .take(super::ENDS_KEEP)
                    .collect(),
                window,
                admitted_recent,
                reaped_recent,
                silent,
                admits: r.admits,
            }
        })
    }
}

#[async_trait]
impl LineStore for MemoryStore {
    async fn watch(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<WatchEntry>)> {
        self.with_room(room, |r, now| {
            // An open socket in the pre-queue's time is in the pre-queue (as watch.lua):
            // a page left open while the event was scheduled is enrolled when it opens.
            let enrol = r.phase == EventPhase::Prequeue
                && r.cfg.opens_at.is_some_and(|o| now < o)
                && r.cfg.stock != Some(0);
            let entries = visitors
                .iter()
                .map(|v| {
                    if enrol && !r.queue.contains(v) && !r.is_admitted(v, now) {
                        r.prequeue.entry(v.clone()).or_insert(now);
                    }
                    if r.is_admitted(v, now) {
                        r.unclaimed.remove(v);
                        // unwrap: is_admitted checked the session exists.
                        WatchEntry::Admitted(r.sessions.get(v).unwrap().clone())
                    } else if r.queue.contains(v) {
                        r.beat(v, now);
                        WatchEntry::Queued {
                            position: r.queue.position(v) + r.unplaced(now),
                        }
                    } else {
                        WatchEntry::Gone
                    }
                })
                .collect();
            (r.view(now), entries)
        })
    }

    async fn tick(&self, room: &str, req: &TickRequest<'_>) -> StoreResult<RoomTick> {
        self.with_room(room, |r, now| r.tick(req, now))
    }

    async fn places(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<Placed>, LineCursor)> {
        self.with_room(room, |r, now| {
            let (placed, cursor) = r.places(visitors, now);
            (r.view(now), placed, cursor)
        })
    }

    async fn subscribe(&self) -> StoreResult<BoxStream<'static, AdmittedEvent>> {
        let rx = self.events.subscribe();
        Ok(futures_util::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => return Some((ev, rx)),
                    // A slow reader skips ahead; the hub's tick catches what it missed.
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed())
    }

    async fn report_sockets(&self, instance: &str, counts: &[(String, u64)]) -> StoreResult<()> {
        let now = self.clock.now_ms();
        let mut s = self.sockets.lock().unwrap();
        for (room, n) in counts {
            s.insert((instance.to_string(), room.clone()), (*n, now));
        }
        Ok(())
    }

    async fn sockets(&self) -> StoreResult<Vec<SocketCount>> {
        let now = self.clock.now_ms();
        let mut s = self.sockets.lock().unwrap();
        s.retain(|_, (_, at)| now.saturating_sub(*at) <= 60_000);
        let mut out: Vec<SocketCount> = s
            .iter()
            .map(|((instance, room), (count, at))| SocketCount {
                instance: instance.clone(),
                room: room.clone(),
                count: *count,
                age_ms: now.saturating_sub(*at),
            })
            .collect();
        out.sort_by(|a, b| (&a.instance, &a.room).cmp(&(&b.instance, &b.room)));
        Ok(out)
    }
}

#[async_trait]
impl AdminStore for MemoryStore {
    async fn stats(&self, room: &str) -> StoreResult<RoomStats> {
        self.with_room(room, |r, now| RoomStats {
            queue_length: r.queue.len() as u64,
            active: r.active(now),
            capacity: r.eff.0,
            paused: r.cfg.paused,
            closed: r.closed(),
            stock: r.cfg.stock,
            admitted_total: r.admits,
            reaped_total: r.reaped,
        })
    }

    async fn find_visitors(
        &self,
        room: &str,
        id_prefix: &str,
        limit: usize,
    ) -> StoreResult<Vec<FoundVisitor>> {
        self.with_room(room, |r, now| {
            let admitted = r
                .sessions
                .iter()
                .filter(|(v, a)| v.starts_with(id_prefix) && a.expires_at_ms > now)
                .map(|(v, a)| FoundVisitor {
                    visitor: v.clone(),
                    place: WatchEntry::Admitted(a.clone()),
                });
            let queued = r
                .queue
                .iter()
                .filter(|v| v.starts_with(id_prefix))
                .map(|v| FoundVisitor {
                    visitor: v.clone(),
                    place: WatchEntry::Queued {
                        position: r.queue.position(v),
                    },
                });
            let mut found: Vec<FoundVisitor> = admitted.chain(queued).collect();
            sort_found(&mut found);
            found.truncate(limit);
            found
        })
    }

    async fn flush(&self, room: &str) -> StoreResult<u64> {
        self.with_room(room, |r, now| {
            let n = r.queue.len() as u64;
            r.queue.clear();
            r.flushed_at = Some(now);
            r.reset_line_log();
            r.heartbeats.clear();
            r.hb_order.clear();
            r.join_times.clear();
            n
        })
    }

    async fn report(&self, room: &str, minutes: u32) -> StoreResult<RoomReport> {
        self.with_room(room, |r, now| {
            let current = now / 60_000;
            let from = (current + 1).saturating_sub(u64::from(minutes));
            RoomReport {
                view: r.view(now),
                admitted_total: r.admits,
                reaped_total: r.reaped,
                minutes: r
                    .minutes
                    .range(from..=current)
                    .map(|(_, m)| m.clone())
                    .collect(),
                lanes: r.lane_counts(),
            }
        })
    }

    async fn audit_push(&self, entry: &str, keep: u32) -> StoreResult<()> {
        let mut a = self.audit.lock().unwrap();
        a.push_front(entry.to_string());
        a.truncate(keep as usize);
        Ok(())
    }

    async fn audit(&self, limit: u32) -> StoreResult<Vec<String>> {
        Ok(self
            .audit
            .lock()
            .unwrap()
            .iter()
            .take(limit as usize)
            .cloned()
            .collect())
    }
}

#[async_trait]
impl RecoveryStore for MemoryStore {
    async fn recreate_room(&self, cfg: &RoomConfig, hold_ms: u64) -> StoreResult<bool> {
        Ok(self.write_room(cfg, true, hold_ms))
    }

    async fn restore_place(
        &self,
        room: &str,
        v: &str,
        ticket: u64,
        joined_at_ms: u64,
    ) -> StoreResult<Snapshot> {
        self.with_room(room, |r, now| {
            if r.is_admitted(v, now) {
                return r.snapshot(VisitorState::Admitted, v, now, Vec::new());
            }
            if r.queue.contains(v) {
                r.beat(v, now);
                return r.snapshot_placed(r.waiting_state(true), v, now, Vec::new());
            }
            if r.closed() {
                return r.snapshot(VisitorState::Closed, v, now, Vec::new());
            }
            r.queue.insert(v, ticket, "");
            r.beat(v, now);
            r.log_line(true, [(ticket, v.to_string())]);
            r.join_times.insert(v.to_string(), joined_at_ms);
            r.seq = r.seq.max(ticket);
            r.snapshot_placed(r.waiting_state(true), v, now, Vec::new())
        })
    }

    async fn sessions(&self, room: &str, q: &SessionsQuery) -> StoreResult<SessionsPage> {
        self.with_room(room, |r, now| {
            let from = q.expires_from.max(now + 1);
            let sessions = r
                .expiries
                .range((from, String::new())..)
                .filter_map(|(_, v)| Some((v.clone(), r.sessions.get(v)?.clone())))
                .take(q.limit as usize)
                .collect();
            let mut gone: Vec<(String, u64)> = match q.gone_after {
                Some(after) => r
                    .gone
                    .iter()
                    .filter(|(_, at)| **at >= after && **at + GONE_KEEP_MS > now)
                    .map(|(v, at)| (v.clone(), *at))
                    .collect(),
                None => Vec::new(),
            };
            gone.sort_by_key(|(_, at)| *at);
            SessionsPage {
                now_ms: now,
                sessions,
                gone,
                flushed_at_ms: r.flushed_at,
            }
        })
    }

    async fn restore_session(&self, room: &str, v: &str, a: &Admission) -> StoreResult<bool> {
        self.with_room(room, |r, now| {
            // No later admission reuses a serial someone was given, put back or not.
            r.admits = r.admits.max(a.serial);
            if a.expires_at_ms <= now {
                return false;
            }
            if r.is_admitted(v, now) {
                return r.sessions.get(v).is_some_and(|s| s.serial == a.serial);
            }
            if r.queue.contains(v) {
                return false;
            }
            // Released after this admission was issued (st:gone in Lua).
            if r.gone
                .get(v)
                .is_some_and(|at| *at + GONE_KEEP_MS > now && *at >= a.issued_at_ms)
            {
                return false;
            }
            // An expired, not yet pruned session of this visitor goes first.
            r.end_session(v);
            r.expiries.insert((a.expires_at_ms, v.to_string()));
            r.sessions.insert(v.to_string(), a.clone());
            true
        })
    }

    async fn epoch(&self, candidate: &str) -> StoreResult<String> {
        // unwrap: see with_room.
        let mut e = self.epoch.lock().unwrap();
        Ok(e.get_or_insert_with(|| candidate.to_string()).clone())
    }
}

#[async_trait]
impl EventStore for MemoryStore {
    async fn events(&self, room: &str, after: &str, count: u32) -> StoreResult<Vec<RoomEvent>> {
        // Ids compare as (ms, seq), as Redis compares them.
        let key = |id: &str| -> (u64, u64) {
            let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
            (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
        };
        let after = if after.is_empty() { (0, 0) } else { key(after) };
        self.with_room(room, |r, _| {
            r.stream
                .iter()
                .filter(|e| key(&e.id) > after)
                .take(count as usize)
                .cloned()
                .collect()
        })
    }

    async fn webhook_cursor(&self, room: &str) -> StoreResult<String> {
        self.with_room(room, |r, _| r.webhook.cursor())
    }

    async fn webhook_advance(
        &self,
        room: &str,
        cursor: &str,
        retries: &[super::WebhookRetry],
        dead: &[super::WebhookDeadLetter],
    ) -> StoreResult<()> {
        self.with_room(room, |r, _| r.webhook.advance(cursor, retries, dead))
    }

    async fn webhook_due(
        &self,
        room: &str,
        now_ms: u64,
        limit: u32,
    ) -> StoreResult<Vec<super::WebhookRetry>> {
        self.with_room(room, |r, _| r.webhook.due(now_ms, limit))
    }

    async fn webhook_settle(
        &self,
        room: &str,
        event_id: &str,
        outcome: &super::WebhookSettle,
    ) -> StoreResult<()> {
        self.with_room(room, |r, _| r.webhook.settle(event_id, outcome))
    }

    async fn webhook_counts(&self, room: &str) -> StoreResult<super::WebhookCounts> {
        self.with_room(room, |r, _| r.webhook.counts())
    }

    async fn webhook_dead_letters(&self, room: &str) -> StoreResult<Vec<super::WebhookDeadLetter>> {
        self.with_room(room, |r, _| r.webhook.dead_letters())
    }

    async fn webhook_replay(
        &self,
        room: &str,
        event_id: Option<&str>,
        due_ms: u64,
    ) -> StoreResult<Vec<String>> {
        self.with_room(room, |r, _| r.webhook.replay(event_id, due_ms))
    }
}

#[async_trait]
impl LeaseStore for MemoryStore {
    async fn acquire_lease(&self, name: &str, token: &str, ttl_ms: u64) -> StoreResult<bool> {
        let now = self.clock.now_ms();
        let mut leases = self.leases.lock().unwrap();
        match leases.get(name) {
            Some((holder, until)) if *until > now && holder != token => Ok(false),
            _ => {
                leases.insert(name.to_string(), (token.to_string(), now + ttl_ms));
                Ok(true)
            }
        }
    }

    async fn release_lease(&self, name: &str, token: &str) -> StoreResult<bool> {
        let now = self.clock.now_ms();
        let mut leases = self.leases.lock().unwrap();
        match leases.get(name) {
            Some((holder, until)) if holder == token && *until > now => {
                leases.remove(name);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

#[async_trait]
impl FairnessStore for MemoryStore {
    async fn event_seed(&self, room: &str, candidate: &str) -> StoreResult<String> {
        self.with_room(room, |r, _| {
            r.seed.get_or_insert_with(|| candidate.to_string()).clone()
        })
    }

    async fn fairness(&self, room: &str) -> StoreResult<super::Fairness> {
        self.with_room(room, |r, now| {
            let c = &r.cfg;
            super::Fairness::from_parts(
                c.mode,
                [c.prequeue_opens_at, c.opens_at, c.closes_at],
                r.seed.clone().unwrap_or_default(),
                r.shuffled,
                r.prequeue.len() as u64,
                r.shuffles,
                now,
                (r.closed(), r.phase == EventPhase::Ended),
            )
        })
    }

    async fn prequeue_page(&self, room: &str, offset: u64, count: u32) -> StoreResult<Vec<String>> {
        self.with_room(room, |r, _| {
            // By arrival, as the ZSET in Redis (score = join time, then id).
            let mut all: Vec<(u64, &String)> = r.prequeue.iter().map(|(v, t)| (*t, v)).collect();
            all.sort();
            all.into_iter()
                .skip(offset as usize)
                .take(count as usize)
                .map(|(_, v)| v.clone())
                .collect()
        })
    }

    async fn shuffle_step(
        &self,
        room: &str,
        seed: &str,
        first_rank: u64,
        visitors: &[String],
        last: bool,
    ) -> StoreResult<super::ShuffleStep> {
        use super::ShuffleStep;
        self.with_room(room, |r, now| {
            if r.shuffled {
                return ShuffleStep::AlreadyDone;
            }
            let due = r.cfg.prequeue_opens_at.is_some() && r.cfg.opens_at.is_some_and(|o| now >= o);
            if !due {
                return ShuffleStep::NotDue;
            }
            if r.seed.as_deref() != Some(seed) {
                return ShuffleStep::WrongSeed;
            }
            r.reserve_prequeue();
            let base = r.pq_base.unwrap_or(0);
            let mut placed = 0;
            for (i, v) in visitors.iter().enumerate() {
                let Some(&joined) = r.prequeue.get(v) else {
                    continue;
                };
                if !r.pq_placed.insert(v.clone()) {
                    continue;
                }
                if !r.is_admitted(v, now) {
                    let rank = first_rank + i as u64;
                    r.queue
                        .insert(v, base + (rank + 1) * super::LANE_STRIDE, "");
                    r.beat(v, now);
                    r.join_times.insert(v.clone(), joined);
                }
                placed += 1;
            }
            if last {
                r.shuffled = true;
                r.shuffles += 1;
                r.event(now, "opened", None, None);
                r.enter(now);
                r.promote(now, PROMOTE_LIMIT);
            }
            ShuffleStep::Placed(placed)
        })
    }
}

#[async_trait]
impl RevocationStore for MemoryStore {
    async fn revoke(&self, r: &super::Revocation) -> StoreResult<()> {
        let now = self.clock.now_ms();
        // unwrap: see with_room.
        self.revocations.lock().unwrap().push(r, now);
        Ok(())
    }

    async fn revocations_since(
        &self,
        cursor: u64,
        limit: usize,
    ) -> StoreResult<super::RevocationPage> {
        // unwrap: see with_room.
        Ok(self.revocations.lock().unwrap().since(cursor, limit))
    }
}
