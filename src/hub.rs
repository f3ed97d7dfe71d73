//! The WebSocket hub: one task per instance that owns every open queue socket and keeps
//! it up to date.
//!
//! ## Why it scales
//! A naive design asks the store for each socket's position every second: 50,000 sockets
//! would be 50,000 round trips a second, and even batched, the store would still read and
//! write something per socket. Instead the hub's store work per tick is O(rooms +
//! changes) (docs/design.md#socket-updates): per room, **one `tick` call** returns the
//! room's figures and the room's line log since the hub's cursor (the places that left the
//! line or were put back), and the hub counts each socket's new position itself
//! ([`count`]). Liveness is one lease per instance per room: the same call holds the
//! visitors whose sockets opened and lets go of those whose sockets closed, so no socket
//! refreshes a heartbeat (the reaper keeps held visitors; see `reap.lua`). A socket whose
//! own place is in the log, or every socket after a gap in the log, is read with `places`
//! (one call per 1,000 such sockets). Rooms with lanes keep the older path, one `watch`
//! call per 1,000 sockets. On top: one ETA basis read per room (`domain::forecast`,
//! shared with the HTTP handlers: at most one a second per room per instance) and one
//! small socket-count report every 3 ticks for the admin view (`tests/it/ws.rs` counts
//! the commands).
//!
//! From each snapshot the hub pushes **only what changed**: a `status` when the
//! visitor's position, the queue length or the state changed (so at most once per tick),
//! otherwise a refresher so that no socket waits more than 5 s; `paused`/`resumed`/`sold_out`/`closed`/`rejected` once when the
//! room's state flips; `admitted` once.
//!
//! Admissions do not wait for a tick: every admission is published by the store
//! (Redis pub/sub from inside the admitting script, or an in-process channel for the
//! memory store), so a visitor's socket hears it within milliseconds whichever instance
//! admitted them. The tick is the safety net if a message is lost while the
//! subscription reconnects.
//!
//! Connections reach the hub through a cloneable [`HubHandle`] and a [`Command`] enum;
//! each socket gets a channel of [`Push`] messages.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::domain::admission::{eta_for, Engine, VisitorView};
use crate::domain::eta::Eta;
use crate::domain::identity::VisitorId;
use crate::domain::told::{decide, RoomKind, Told};
use crate::store::{
    AdmittedEvent, LineCursor, Placed, RoomState, RoomTick, StoreError, TickRequest, VisitorState,
    WatchEntry,
};

pub mod count;
pub mod mailbox;
pub mod promise;
use count::{Counted, Counts};

/// How often rooms are refreshed.
pub const TICK: Duration = Duration::from_secs(1);
/// A status older than this is re-sent at the next tick, so with the 1 s tick a queued
/// visitor hears from us at least every 5 s (measured: 4 s here gives a longest silence
/// just under 5 s; 5 s gave ~6 s).
pub const REFRESH_EVERY: Duration = Duration::from_secs(4);
/// Visitors per `watch` or `places` call.
pub const WATCH_BATCH: usize = 1000;
/// Rooms whose scheduled event opens (its pre-queue, or its line) within this are
/// looked at every [`OPENING_TICK`] until they are open, so their sockets are moved on
/// within a fraction of a second of the opening and its shuffle, not at the next tick.
const OPENING_SOON_MS: u64 = 1_500;
/// How often a room about to open is looked at.
pub const OPENING_TICK: Duration = Duration::from_millis(200);
/// Most visitors a tick starts holding (and places) in one room; more wait a tick.
pub const HOLD_BATCH: usize = 1000;
/// A socket whose visitor holds no place (nothing in the log can tell it that changed)
/// is read again every this many ticks.
const GONE_RECHECK_TICKS: u64 = 5;
/// Socket counts are reported to the store every this many ticks.
const REPORT_EVERY_TICKS: u64 = 3;

/// Every this many ticks, the visitors learned for statuses whose heartbeat is due are
/// forgotten (`LineViews::sweep`).
const SWEEP_EVERY_TICKS: u64 = 10;

/// A message for one socket.
#[derive(Debug, Clone)]
pub enum Push {
    /// A JSON text frame.
    Text(String),
    /// Close the socket (room deleted).
    Close,
}

pub enum Command {
    Connect {
        room: String,
        visitor: String,
        conn: u64,
        /// Redirect target override (`?return=`), already validated.
        redirect_base: Option<String>,
        /// The state the socket's first message told the visitor.
        told: VisitorState,
        /// The position and queue length it told.
        told_figures: (u64, u64),
        /// The place's (ticket, join time), when queued: put back if the store loses its
        /// data.
        place: Option<(u64, u64)>,
        tx: mailbox::Sender,
    },
    Disconnect {
        room: String,
        visitor: String,
        conn: u64,
    },
}

/// Counters for tests and metrics.
#[derive(Default, Debug)]
pub struct HubStats {
    pub ticks: AtomicU64,
    pub store_calls: AtomicU64,
    pub sockets: AtomicU64,
    pub pushes: AtomicU64,
    /// When the waiting socket written to longest ago was last written to, as of the
    /// last tick (`promise`; 0: none).
    pub oldest_write: AtomicU64,
}

/// A cheap handle on the hub.
#[derive(Clone)]
pub struct HubHandle {
    tx: mpsc::UnboundedSender<Command>,
    next_conn: Arc<AtomicU64>,
    pub stats: Arc<HubStats>,
}

impl HubHandle {
    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }
    pub fn send(&self, c: Command) {
        // The hub only stops at shutdown; a lost message then does not matter.
        let _ = self.tx.send(c);
    }
}

/// The `status` message for a view.
pub fn status_message(v: &VisitorView) -> String {
    let told = Told {
        message: v.message,
        figures: v.figures,
        notes: v.notes.clone(),
    };
    let msg = status_json(
        v.state,
        v.position,
        v.queue_length,
        v.eta(),
        v.eta_reason,
        v.active,
        v.capacity,
        &told,
    );
    let extra = event_fields(
        v.prequeue_opens_at.flatten(),
        v.opens_at.flatten(),
        v.now_ms,
        v.closed_reason,
    );
    with_fields(msg, &extra)
}

/// A scheduled event's fields of a `status` (docs/websocket.md): on `scheduled` and
/// `prequeue`, `prequeue_opens_at` and `opens_at` (seconds, or null) and the store's
/// `now_ms`; on an ended event's `closed`, its `closed_reason`. Empty otherwise.
pub fn event_fields(
    prequeue_opens_at: Option<u64>,
    opens_at: Option<u64>,
    now_ms: Option<u64>,
    closed_reason: Option<&str>,
) -> String {
    let num = |v: Option<u64>| v.map_or("null".to_string(), |x| x.to_string());
    let mut out = String::new();
    if let Some(now) = now_ms {
        out = format!(
            r#","prequeue_opens_at":{},"opens_at":{},"now_ms":{now}"#,
            num(prequeue_opens_at),
            num(opens_at)
        );
    }
    if let Some(r) = closed_reason {
        out.push_str(&format!(r#","closed_reason":"{r}""#));
    }
    out
}

/// `msg` (a JSON object) with `extra` (`,"k":v…`) added at its end.
fn with_fields(mut msg: String, extra: &str) -> String {
    if !extra.is_empty() && msg.ends_with('}') {
        msg.pop();
        msg.push_str(extra);
        msg.push('}');
    }
    msg
}

/// The `status` message, formatted directly: the hub sends thousands per tick, and every
/// field is a number, a fixed state name or a fixed reason code, so no JSON value needs
/// building.
#[allow(clippy::too_many_arguments)]
pub fn status_json(
    state: VisitorState,
    position: u64,
    queue_length: u64,
    eta: Eta,
    reason: Option<&'static str>,
    active: u64,
    capacity: u64,
    told: &Told,
) -> String {
    let reason = match reason {
        Some(r) => format!(r#","eta_reason":"{r}""#),
        None => String::new(),
    };
    // Codes are fixed identifiers (domain::told): quoting needs no escaping.
    let list = |codes: &[&str]| {
        let quoted: Vec<String> = codes.iter().map(|c| format!(r#""{c}""#)).collect();
        quoted.join(",")
    };
    format!(
        r#"{{"type":"status","state":"{}","position":{position},"queue_length":{queue_length},"eta_seconds":{},"eta_low_seconds":{},"eta_high_seconds":{},"eta_known":{}{reason},"active":{active},"capacity":{capacity},"message":"{}","figures":[{}],"notes":[{}]}}"#,
        state.as_str(),
        eta.seconds,
        eta.low,
        eta.high,
        eta.known,
        told.message,
        list(told.figures),
        list(&told.notes),
    )
}

/// The `admitted` message for a view (which must carry a pass). `admitted_at` is when
/// the store admitted the visitor (ms since the epoch), so clients and the load
/// generator can measure how long the push took.
pub fn admitted_message(v: &VisitorView) -> String {
    json!({
        "type": "admitted",
        "redirect_url": v.redirect_url,
        "pass": v.pass,
        "expires_at": v.expires_at,
        "admitted_at": v.admitted_at,
    })
    .to_string()
}

/// The room state a visitor in `state` has been told about (none once admitted).
fn told_state(state: VisitorState) -> Option<RoomState> {
    match state {
        VisitorState::Queued | VisitorState::NotQueued | VisitorState::NoShow => {
            Some(RoomState::Open)
        }
        VisitorState::Paused => Some(RoomState::Paused),
        VisitorState::SoldOut => Some(RoomState::SoldOut),
        VisitorState::Closed => Some(RoomState::Closed),
        VisitorState::Rejected => Some(RoomState::Rejected),
        VisitorState::Scheduled => Some(RoomState::Scheduled),
        VisitorState::Prequeue => Some(RoomState::Prequeue),
        VisitorState::Admitted => None,
    }
}

/// The message pushed once when a room's state flips to `s`.
fn flip_message(s: RoomState) -> &'static str {
    match s {
        RoomState::Open => r#"{"type":"resumed"}"#,
        RoomState::Paused => r#"{"type":"paused"}"#,
        RoomState::SoldOut => r#"{"type":"sold_out"}"#,
        RoomState::Closed => r#"{"type":"closed"}"#,
        RoomState::Rejected => r#"{"type":"rejected"}"#,
        RoomState::Scheduled => r#"{"type":"scheduled"}"#,
        RoomState::Prequeue => r#"{"type":"prequeue"}"#,
    }
}

struct Conn {
    id: u64,
    redirect_base: Option<String>,
    tx: mailbox::Sender,
}

#[derive(Default)]
struct Watched {
    conns: Vec<Conn>,
    /// (position, queue_length, state, reason, when) of the last status pushed.
    last: Option<(u64, u64, VisitorState, Option<&'static str>, Instant)>,
    admitted: bool,
    /// The room state this visitor was last told about; a change is pushed once.
    flag: Option<RoomState>,
    /// The place's (ticket, join time) while queued, and the store data losses this
    /// instance had counted when it learnt them.
    place: Option<(u64, u64)>,
    losses_seen: u64,
    /// When its place was put back after a loss (the status says so for a while).
    restored_at: Option<Instant>,
    /// Its place as counted locally (rooms without lanes).
    counted: Counted,
    /// An admission read by `places`, to push at this tick.
    found: Option<WatchEntry>,
    /// The first known estimate it was sent (judged when it is let in).
    estimate: promise::FirstEstimate,
}

/// How long a socket whose place was put back is told so (`eta_reason: "places_restored"`).
const RESTORED_NOTE: Duration = Duration::from_secs(60);

#[derive(Default)]
struct RoomConns {
    visitors: HashMap<String, Watched>,
    /// The room's target URL as of the last tick (for admissions pushed between ticks).
    target: Option<String>,
    /// Where the line log stood at the last tick (positions are counted from it).
    cursor: Option<LineCursor>,
    /// Visitors whose first socket opened since: held (and placed) at the next tick.
    to_hold: Vec<String>,
}

struct Hub {
    engine: Arc<Engine>,
    rooms: HashMap<String, RoomConns>,
    /// Rooms whose last socket closed since the last report (reported as 0 once).
    emptied: std::collections::HashSet<String>,
    /// Rooms whose scheduled event opens about now: looked at every [`OPENING_TICK`].
    opening: std::collections::HashSet<String>,
    /// Per room, visitors whose last socket closed: let go at the next tick.
    unhold: HashMap<String, Vec<String>>,
    stats: Arc<HubStats>,
}

/// Starts the hub; returns its handle and its two tasks (the hub itself and the
/// admission subscription), which end when `cancel` fires.
pub fn start(
    engine: Arc<Engine>,
    cancel: CancellationToken,
) -> (HubHandle, Vec<tokio::task::JoinHandle<()>>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let stats = Arc::new(HubStats::default());
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let forwarder = tokio::spawn(forward_admissions(engine.clone(), ev_tx, cancel.clone()));
    let hub = Hub {
        engine,
        rooms: HashMap::new(),
        emptied: Default::default(),
        opening: Default::default(),
        unhold: HashMap::new(),
        stats: stats.clone(),
    };
    let task = tokio::spawn(hub.run(rx, ev_rx, cancel));
    let handle = HubHandle {
        tx,
        next_conn: Arc::new(AtomicU64::new(1)),
        stats,
    };
    (handle, vec![task, forwarder])
}

/// Keeps a subscription to the store's admissions open, re-subscribing with capped
/// backoff whenever it breaks.
async fn forward_admissions(
    engine: Arc<Engine>,
    out: mpsc::UnboundedSender<AdmittedEvent>,
    cancel: CancellationToken,
) {
    let mut backoff = Duration::from_millis(100);
    loop {
        let sub = tokio::select! {
            _ = cancel.cancelled() => return,
            s = engine.line_store().subscribe() => s,
        };
        match sub {
            Ok(mut events) => {
                backoff = Duration::from_millis(100);
                loop {
                    tokio::select! {
                        _ = cancel.cancelled() => return,
                        ev = events.next() => match ev {
                            Some(ev) => { let _ = out.send(ev); }
                            None => break,
                        }
                    }
                }
                tracing::debug!("admission subscription ended; re-subscribing");
            }
            Err(e) => tracing::debug!(error = %e, "admission subscription failed"),
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

impl Hub {
    async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut admissions: mpsc::UnboundedReceiver<AdmittedEvent>,
        cancel: CancellationToken,
    ) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut opening = tokio::time::interval(OPENING_TICK);
        opening.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // A room just learned in (domain::line_view) is looked at within this, not at
        // the next whole tick.
        let mut first_look = tokio::time::interval(OPENING_TICK);
        first_look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => break,
                Some(c) = commands.recv() => self.command(c),
                Some(ev) = admissions.recv() => self.admitted(ev).await,
                _ = tick.tick() => self.tick().await,
                _ = first_look.tick() => {
                    for room in self.engine.line_views().unviewed(Instant::now()) {
                        if !self.rooms.contains_key(&room) {
                            self.follow_room(&room).await;
                        }
                    }
                }
                _ = opening.tick(), if !self.opening.is_empty() => {
                    let started = Instant::now();
                    let rooms: Vec<String> = self.opening.iter().cloned().collect();
                    let n = self.stats.ticks.load(Ordering::Relaxed);
                    for room in rooms {
                        self.tick_room(&room, started, n).await;
                    }
                }
            }
        }
    }

    fn command(&mut self, c: Command) {
        match c {
            Command::Connect {
                room,
                visitor,
                conn,
                redirect_base,
                told,
                told_figures,
                place,
                tx,
            } => {
                self.stats.sockets.fetch_add(1, Ordering::Relaxed);
                if let Some(u) = self.unhold.get_mut(&room) {
                    u.retain(|v| *v != visitor);
                }
                let r = self.rooms.entry(room).or_default();
                if !r.visitors.contains_key(&visitor) {
                    r.to_hold.push(visitor.clone());
                }
                let w = r.visitors.entry(visitor).or_default();
                if w.conns.is_empty() {
                    // Almost every visitor has one socket: no room for four.
                    w.conns.reserve_exact(1);
                    w.flag = told_state(told);
                    w.admitted = told == VisitorState::Admitted;
                    w.last = Some((told_figures.0, told_figures.1, told, None, Instant::now()));
                }
                if place.is_some() {
                    w.place = place;
                    w.losses_seen = self.engine.data_losses().load(Ordering::SeqCst);
                }
                w.conns.push(Conn {
                    id: conn,
                    redirect_base,
                    tx,
                });
            }
            Command::Disconnect {
                room,
                visitor,
                conn,
            } => {
                let Some(r) = self.rooms.get_mut(&room) else {
                    return;
                };
                if let Some(w) = r.visitors.get_mut(&visitor) {
                    let before = w.conns.len();
                    w.conns.retain(|c| c.id != conn);
                    if w.conns.len() < before {
                        self.stats.sockets.fetch_sub(1, Ordering::Relaxed);
                    }
                    if w.conns.is_empty() {
                        r.visitors.remove(&visitor);
                        r.to_hold.retain(|v| *v != visitor);
                        self.unhold.entry(room.clone()).or_default().push(visitor);
                    }
                }
                if r.visitors.is_empty() {
                    self.rooms.remove(&room);
                    self.opening.remove(&room);
                    self.emptied.insert(room);
                }
            }
        }
    }

    /// An admission published by the store (from any instance).
    async fn admitted(&mut self, ev: AdmittedEvent) {
        // Its status is the store's to answer from now (not the line's view, a tick behind).
        self.engine.line_views().forget(&ev.room, &ev.visitor);
        let Some(r) = self.rooms.get(&ev.room) else {
            return;
        };
        match r.visitors.get(&ev.visitor) {
            Some(w) if !w.admitted => {}
            _ => return,
        }
        let Some(id) = VisitorId::parse(&ev.visitor) else {
            return;
        };
        let target = match &r.target {
            Some(t) => t.clone(),
            // Connected since the last tick: look the target up once.
            None => match self.engine.room_store().room(&ev.room).await {
                Ok(Some(cfg)) => cfg.target_url,
                _ => return, // the tick will deliver it
            },
        };
        let Some(r) = self.rooms.get_mut(&ev.room) else {
            return;
        };
        r.target = Some(target.clone());
        let Some(w) = r.visitors.get_mut(&ev.visitor) else {
            return;
        };
        w.admitted = true;
        w.estimate
            .judge(self.engine.metrics(), &ev.room, Instant::now());
        for c in &w.conns {
            let to = c.redirect_base.as_deref().unwrap_or(&target);
            let view = self.engine.admitted_view(&ev.room, &id, &ev.admission, to);
            let _ = c.tx.send(Push::Text(admitted_message(&view)));
            self.stats.pushes.fetch_add(1, Ordering::Relaxed);
        }
        // The visitor is there to be told: claim the session (an unclaimed one counts as
        // abandoned for the ETA). Off the hub's loop; a failure only leaves it unclaimed
        // until the next tick's watch.
        let store = self.engine.shared_store();
        let (room, visitor, serial) = (ev.room, ev.visitor, ev.admission.serial);
        tokio::spawn(async move {
            let _ = store.session_live(&room, &visitor, serial).await;
        });
    }

    async fn tick(&mut self) {
        let n = self.stats.ticks.fetch_add(1, Ordering::Relaxed);
        if n.is_multiple_of(REPORT_EVERY_TICKS) {
            // Open sockets per room, for the admin view (every instance reports its own).
            let counts: Vec<(String, u64)> = self
                .rooms
                .iter()
                .map(|(room, r)| {
                    let n = r.visitors.values().map(|w| w.conns.len() as u64).sum();
                    (room.clone(), n)
                })
                .chain(self.emptied.drain().map(|room| (room, 0)))
                .collect();
            if let Err(e) = self
                .engine
                .line_store()
                .report_sockets(self.engine.instance(), &counts)
                .await
            {
                tracing::debug!(error = %e, "socket report failed");
            }
        }
        // One timestamp per tick: refresh ages are counted in whole ticks, however long
        // the store calls of this tick take.
        let started = Instant::now();
        let mut rooms: Vec<String> = self.rooms.keys().cloned().collect();
        // Rooms whose last socket closed still have holds to let go.
        rooms.extend(
            self.unhold
                .keys()
                .filter(|r| !self.rooms.contains_key(*r))
                .cloned(),
        );
        for room in &rooms {
            self.tick_room(room, started, n).await;
        }
        // Rooms this instance answered statuses in lately and holds no socket in: their
        // line is followed all the same (domain::line_view).
        for room in self.engine.line_views().followed(started) {
            if !rooms.contains(&room) {
                self.follow_room(&room).await;
            }
        }
        if n.is_multiple_of(SWEEP_EVERY_TICKS) {
            self.engine.line_views().sweep(crate::clock::wall_ms());
        }
        self.stats.note_oldest_write(&self.rooms);
    }

    /// One tick of a room followed only for its statuses (no socket here): the room's
    /// figures and its line log since the last one, for `domain::line_view`.
    async fn follow_room(&mut self, room: &str) {
        let since = self.engine.line_views().cursor(room);
        let instance = self.engine.instance().clone();
        let req = TickRequest {
            instance: &instance,
            since: since.as_ref(),
            hold: &[],
            unhold: &[],
        };
        self.stats.store_calls.fetch_add(1, Ordering::Relaxed);
        match self.engine.line_store().tick(room, &req).await {
            Ok(t) => self
                .engine
                .line_views()
                .publish(room, since.as_ref(), &t, Instant::now()),
            // Statuses ask the store (and see its error) until a tick succeeds again.
            Err(e) => {
                self.engine.line_views().drop_room(room);
                tracing::debug!(room, error = %e, "line follow failed");
            }
        }
    }

    /// One room's tick: one `tick` call (the room figures, the line log since the last
    /// one, this instance's holds), positions counted locally, then only what changed is
    /// pushed. Sockets whose place the log cannot account for (just after a gap, their
    /// own place changed) are read with `places`, O(changes). Rooms where a new place may
    /// go ahead of others (the store's `exact` is false) fall back to [`Self::watch_room`].
    async fn tick_room(&mut self, room: &str, now: Instant, tick_no: u64) {
        let (hold, since) = match self.rooms.get(room) {
            Some(r) => (
                r.to_hold
                    .iter()
                    .take(HOLD_BATCH)
                    .cloned()
                    .collect::<Vec<_>>(),
                r.cursor.clone(),
            ),
            None => (Vec::new(), None),
        };
        let unhold = self.unhold.get(room).cloned().unwrap_or_default();
        let instance = self.engine.instance().clone();
        let req = TickRequest {
            instance: &instance,
            since: since.as_ref(),
            hold: &hold,
            unhold: &unhold,
        };
        self.stats.store_calls.fetch_add(1, Ordering::Relaxed);
        let t = match self.engine.line_store().tick(room, &req).await {
            Ok(t) => t,
            Err(e) => return self.tick_failed(room, e, "tick"),
        };
        self.engine
            .line_views()
            .publish(room, since.as_ref(), &t, Instant::now());
        self.unhold.remove(room);
        let Some(r) = self.rooms.get_mut(room) else {
            return;
        };
        r.to_hold.drain(..hold.len());
        r.target = Some(t.view.target_url.clone());
        let RoomTick {
            view,
            cursor,
            exact,
            changes,
            placed,
            rehold,
        } = t;
        for (v, p) in hold.iter().zip(placed) {
            if let Some(w) = r.visitors.get_mut(v) {
                w.place_at(p, cursor.seq);
            }
        }
        let epoch_moved = since.as_ref().is_some_and(|c| c.epoch != cursor.epoch);
        r.cursor = exact.then(|| cursor.clone());
        if !exact {
            return self.watch_room(room, now).await;
        }
        if epoch_moved || rehold {
            // The log started afresh (the store lost its data, or a flush), or this
            // instance's lease lapsed (a stall: the reaper may have let its visitors go):
            // hold every socket's visitor again.
            let held: std::collections::HashSet<&String> = r.to_hold.iter().collect();
            let again: Vec<String> = r
                .visitors
                .keys()
                .filter(|v| !held.contains(v) && !hold.contains(v))
                .cloned()
                .collect();
            r.to_hold.extend(again);
        }
        match &changes {
            Some(changes) => count::recount(&mut r.visitors, changes, cursor.seq),
            None => {
                for (v, w) in r.visitors.iter_mut() {
                    if !hold.contains(v) {
                        w.counted.synced = false;
                    }
                }
            }
        }
        if tick_no.is_multiple_of(GONE_RECHECK_TICKS) {
            for w in r.visitors.values_mut() {
                if w.counted.ticket == 0 && !w.admitted {
                    w.counted.synced = false;
                }
            }
        }
        let unsynced: Vec<String> = r
            .visitors
            .iter()
            .filter(|(_, w)| !w.counted.synced && !w.admitted)
            .map(|(v, _)| v.clone())
            .collect();
        for chunk in unsynced.chunks(WATCH_BATCH) {
            self.stats.store_calls.fetch_add(1, Ordering::Relaxed);
            match self.engine.line_store().places(room, chunk).await {
                Ok((_, placed, at)) => {
                    let Some(r) = self.rooms.get_mut(room) else {
                        return;
                    };
                    for (v, p) in chunk.iter().zip(placed) {
                        if let Some(w) = r.visitors.get_mut(v) {
                            w.place_at(p, at.seq);
                        }
                    }
                }
                Err(e) => return self.tick_failed(room, e, "places"),
            }
        }
        let Some(r) = self.rooms.get_mut(room) else {
            return;
        };
        let mut results: Vec<(String, WatchEntry)> = r
            .visitors
            .iter_mut()
            .filter(|(_, w)| w.counted.synced && !w.admitted)
            .map(|(v, w)| {
                let entry = match (w.found.take(), w.counted.ticket) {
                    (Some(admitted), _) => admitted,
                    (None, 0) => WatchEntry::Gone,
                    (None, _) => WatchEntry::Queued {
                        position: w.counted.position,
                    },
                };
                (v.clone(), entry)
            })
            .collect();
        let restored = self.restore_lost_places(room, &mut results, now).await;
        if let Some(r) = self.rooms.get_mut(room) {
            // Their places came back after the cursor: read them again next tick.
            for v in restored {
                if let Some(w) = r.visitors.get_mut(&v) {
                    w.counted.synced = false;
                }
            }
        }
        self.push(room, &view, results, now).await;
    }

    /// A failed room call: a deleted room closes its sockets, a declared room that the
    /// store lost waits for the keeper, anything else waits for the next tick.
    fn tick_failed(&mut self, room: &str, e: StoreError, what: &'static str) {
        // Statuses ask the store (and see its error) until a tick succeeds again.
        self.engine.line_views().drop_room(room);
        match e {
            StoreError::NoSuchRoom if self.engine.is_declared(room) => {}
            StoreError::NoSuchRoom => {
                self.unhold.remove(room);
                if let Some(r) = self.rooms.remove(room) {
                    for w in r.visitors.values() {
                        for c in &w.conns {
                            let _ =
                                c.tx.send(Push::Text(flip_message(RoomState::Closed).into()));
                            let _ = c.tx.send(Push::Close);
                        }
                    }
                }
            }
            e => {
                tracing::debug!(room, error = %e, "hub {what} failed");
                self.engine
                    .metrics()
                    .store_errors
                    .with_label_values(&[what])
                    .inc();
            }
        }
    }

    /// The old path, one `watch` call per 1,000 sockets: rooms where a new place may go
    /// between others (lanes, random mode, an event before its shuffle).
    async fn watch_room(&mut self, room: &str, now: Instant) {
        let Some(r) = self.rooms.get(room) else {
            return;
        };
        let visitors: Vec<String> = r.visitors.keys().cloned().collect();
        let mut results = Vec::with_capacity(visitors.len());
        let mut view = None;
        // One chunk at a time: firing a room's chunks all at once was measured no better
        // at 50,000 sockets (more ramp-up timeouts), and this keeps Redis's queue short.
        for chunk in visitors.chunks(WATCH_BATCH) {
            self.stats.store_calls.fetch_add(1, Ordering::Relaxed);
            match self.engine.line_store().watch(room, chunk).await {
                Ok((v, entries)) => {
                    results.extend(chunk.iter().cloned().zip(entries));
                    view = Some(v);
                }
                // A deleted room closes its sockets; a declared room the store lost, or
                // any other failure, keeps them (their last figures) until a later tick.
                Err(e) => return self.tick_failed(room, e, "watch"),
            }
        }
        let Some(view) = view else { return };
        self.restore_lost_places(room, &mut results, now).await;
        self.push(room, &view, results, now).await;
    }

    /// Pushes to each listed visitor's sockets what changed for it: a state flip, an
    /// admission, a status when its figures changed or it has not heard from us for
    /// [`REFRESH_EVERY`].
    async fn push(
        &mut self,
        room: &str,
        view: &crate::store::RoomView,
        results: Vec<(String, WatchEntry)>,
        now: Instant,
    ) {
        let engine = self.engine.clone();
        let forecast = engine.forecast(room).await;
        // A scheduled event's times (the cached configuration): what `scheduled` and
        // `prequeue` sockets count down to, and whether a closed room's event ended.
        let schedule = match view.phase {
            crate::room::schedule::EventPhase::Open if !view.closed => None,
            crate::room::schedule::EventPhase::Scheduled => {
                engine.event_config(room, VisitorState::Scheduled).await
            }
            crate::room::schedule::EventPhase::Prequeue => {
                engine.event_config(room, VisitorState::Prequeue).await
            }
            _ => engine.room_config_cached(room).await.ok(),
        };
        // What the room is, for what its visitors are told: the configuration already
        // cached here (no store read per tick), its mode from this tick's view.
        let mut kind = match &schedule {
            Some(c) => RoomKind::of(c),
            None => engine
                .room_config_known(room)
                .await
                .map(|c| RoomKind::of(&c))
                .unwrap_or_default(),
        };
        kind.random = view.mode == crate::room::QueueMode::Random;
        // About to open (its pre-queue, or its line, with the shuffle): look again soon.
        let next_opening = schedule.as_ref().and_then(|c| match view.phase {
            crate::room::schedule::EventPhase::Scheduled => c.prequeue_opens_at.or(c.opens_at),
            crate::room::schedule::EventPhase::Prequeue => c.opens_at,
            _ => None,
        });
        if next_opening.is_some_and(|t| t <= view.now_ms + OPENING_SOON_MS) {
            self.opening.insert(room.to_string());
        } else {
            self.opening.remove(room);
        }
        let Some(r) = self.rooms.get_mut(room) else {
            return;
        };

        let flag = view.room_state();
        r.target = Some(view.target_url.clone());
        for (visitor, entry) in results {
            let Some(w) = r.visitors.get_mut(&visitor) else {
                continue;
            };
            let Some(id) = VisitorId::parse(&visitor) else {
                continue;
            };
            let flipped = !w.admitted && w.flag != Some(flag);
            if flipped {
                w.flag = Some(flag);
                for c in &w.conns {
                    let _ = c.tx.send(Push::Text(flip_message(flag).into()));
                }
            }
            match &entry {
                WatchEntry::Admitted(a) => {
                    if !w.admitted {
                        w.admitted = true;
                        w.estimate.judge(engine.metrics(), room, now);
                        for c in &w.conns {
                            let to = c.redirect_base.as_deref().unwrap_or(&view.target_url);
                            let v = engine.admitted_view(room, &id, a, to);
                            let _ = c.tx.send(Push::Text(admitted_message(&v)));
                        }
                        self.stats.pushes.fetch_add(1, Ordering::Relaxed);
                    }
                }
                _ => {
                    w.admitted = false;
                    let mut snap = view.snapshot(&entry);
                    // Random mode: any waiting visitor may be next (docs/http-api.md).
                    if view.mode == crate::room::QueueMode::Random && snap.position > 0 {
                        snap.position = snap.queue_length;
                    }
                    let (mut eta, mut reason) = eta_for(&snap, forecast.as_deref());
                    // Random mode: the wait over all draws, the same for everyone.
                    if let (true, Some(f)) = (
                        view.mode == crate::room::QueueMode::Random && snap.position > 0,
                        forecast.as_deref(),
                    ) {
                        eta = f.schedule.drawn(snap.now_ms);
                    }
                    if snap.position > 0
                        && w.restored_at
                            .is_some_and(|t| now.duration_since(t) < RESTORED_NOTE)
                    {
                        reason = Some(crate::domain::eta::reason::PLACES_RESTORED);
                    }
                    let changed = match w.last {
                        Some((p, q, s, r, at)) => {
                            p != snap.position
                                || q != snap.queue_length
                                || s != snap.state
                                || r != reason
                                || now.duration_since(at) + TICK / 2 >= REFRESH_EVERY
                        }
                        None => true,
                    };
                    if changed || flipped {
                        let ended = snap.state == VisitorState::Closed
                            && schedule
                                .as_ref()
                                .is_some_and(|c| c.closes_at.is_some_and(|t| view.now_ms >= t));
                        let counting = match (&schedule, snap.state) {
                            (Some(c), VisitorState::Scheduled) => {
                                c.prequeue_opens_at.or(c.opens_at).is_some()
                            }
                            (Some(c), VisitorState::Prequeue) => c.opens_at.is_some(),
                            _ => false,
                        };
                        let told =
                            decide(snap.state, snap.position > 0, reason, kind, ended, counting);
                        let msg = status_json(
                            snap.state,
                            snap.position,
                            snap.queue_length,
                            eta,
                            reason,
                            snap.active,
                            snap.capacity,
                            &told,
                        );
                        let msg = match (&schedule, snap.state) {
                            (Some(c), VisitorState::Scheduled | VisitorState::Prequeue) => {
                                let extra = event_fields(
                                    c.prequeue_opens_at.map(|t| t / 1000),
                                    c.opens_at.map(|t| t / 1000),
                                    Some(view.now_ms),
                                    None,
                                );
                                with_fields(msg, &extra)
                            }
                            (Some(c), VisitorState::Closed)
                                if c.closes_at.is_some_and(|t| view.now_ms >= t) =>
                            {
                                let reason = crate::domain::admission::CLOSED_EVENT_ENDED;
                                with_fields(msg, &event_fields(None, None, None, Some(reason)))
                            }
                            _ => msg,
                        };
                        for c in &w.conns {
                            let _ = c.tx.send(Push::Text(msg.clone()));
                        }
                        w.last = Some((snap.position, snap.queue_length, snap.state, reason, now));
                        if snap.state == VisitorState::Queued {
                            w.estimate.shown(&eta, now);
                        }
                        self.stats.pushes.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    }
}

impl Hub {
    /// Sockets whose visitor is gone from the line although it held a place: when the
    /// store lost its data, put each place back with its ticket (every instance does so
    /// for its own sockets; the tickets keep the order) and report it as queued. A place
    /// that ended otherwise (let in, removed by an admin, flushed) is left gone.
    /// Returns the visitors whose place was put back.
    async fn restore_lost_places(
        &mut self,
        room: &str,
        results: &mut [(String, WatchEntry)],
        now: Instant,
    ) -> Vec<String> {
        let mut back = Vec::new();
        let Some(r) = self.rooms.get(room) else {
            return back;
        };
        let gone: Vec<(usize, u64, u64, u64)> = results
            .iter()
            .enumerate()
            .filter(|(_, (_, e))| matches!(e, WatchEntry::Gone))
            .filter_map(|(i, (v, _))| {
                let w = r.visitors.get(v)?;
                let (ticket, joined) = w.place.filter(|_| !w.admitted)?;
                // A place that ended on purpose (left, removed, flushed, let in) stays
                // ended, whichever instance ended it (domain::ended).
                let e = &self.engine;
                if e.ended().place_is_ended(room, v, ticket, joined)
                    || e.known_sessions().admitted_since(room, v, joined)
                {
                    return None;
                }
                Some((i, ticket, joined, w.losses_seen))
            })
            .collect();
        if gone.is_empty() {
            return back;
        }
        let losses = self.engine.data_losses().load(Ordering::SeqCst);
        // The epoch is read only when some place is not explained by a loss already noted.
        let epoch_moved = if gone.iter().any(|g| g.3 >= losses) {
            self.engine.store_epoch_moved().await
        } else {
            false
        };
        let mut restored = 0u64;
        for (i, ticket, joined, seen) in gone {
            if seen >= losses && !epoch_moved {
                continue;
            }
            let visitor = results[i].0.clone();
            self.stats.store_calls.fetch_add(1, Ordering::Relaxed);
            match self
                .engine
                .recovery_store()
                .restore_place(room, &visitor, ticket, joined)
                .await
            {
                Ok(s) => {
                    results[i].1 = match s.admission {
                        Some(a) => WatchEntry::Admitted(a),
                        None if s.position > 0 => WatchEntry::Queued {
                            position: s.position,
                        },
                        None => WatchEntry::Gone,
                    };
                    restored += 1;
                    back.push(visitor.clone());
                    if let Some(w) = self
                        .rooms
                        .get_mut(room)
                        .and_then(|r| r.visitors.get_mut(&visitor))
                    {
                        w.losses_seen = losses;
                        w.restored_at = Some(now);
                    }
                }
                Err(e) => {
                    tracing::debug!(room, error = %e, "putting a place back failed; next tick")
                }
            }
        }
        if restored > 0 {
            tracing::warn!(
                room,
                restored,
                "the store lost its data: put back the places of this instance's sockets"
            );
            self.engine
                .metrics()
                .places_restored
                .with_label_values(&[room])
                .inc_by(restored);
        }
        back
    }
}

impl Watched {
    fn place_at(&mut self, p: Placed, at: u64) {
        self.counted.place_at(&p, at);
        // An admission read here is pushed by `push` (it is not yet `admitted`).
        if let WatchEntry::Admitted(_) = p.entry {
            self.found = Some(p.entry);
        }
    }
}

impl Counts for Watched {
    fn counted(&mut self) -> Option<&mut Counted> {
        (!self.admitted).then_some(&mut self.counted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_message_is_the_documented_json() {
        let m = status_json(
            VisitorState::Paused,
            3,
            10,
            Eta {
                seconds: 30,
                low: 20,
                high: 45,
                known: true,
            },
            Some("capacity_lowered"),
            7,
            8,
            &decide(
                VisitorState::Paused,
                true,
                Some("capacity_lowered"),
                RoomKind::default(),
                false,
                false,
            ),
        );
        let v: serde_json::Value = serde_json::from_str(&m).unwrap();
        assert_eq!(
            v,
            json!({"type": "status", "state": "paused", "position": 3, "queue_length": 10,
                   "eta_seconds": 30, "eta_low_seconds": 20, "eta_high_seconds": 45,
                   "eta_known": true, "eta_reason": "capacity_lowered",
                   "active": 7, "capacity": 8, "message": "paused",
                   "figures": ["place", "eta", "in_line"], "notes": ["capacity_lowered"]})
        );
    }
}
