//! The admission store: every decision about who is queued and who is admitted is made
//! here, atomically. Two backends implement [`Store`] with the same rules:
//!
//! - [`redis::RedisStore`] — production. Each operation is one Lua script (see
//!   `src/store/lua/`), using Redis's `TIME` as the only clock, so any number of Anteroom
//!   instances can share a queue.
//! - [`memory::MemoryStore`] — the embedded demo backend, one process only.
//!
//! `tests/it/conformance.rs` runs one suite against both to prove they agree.
//!
//! ## Rules (both backends)
//! - `join` is idempotent: admitted → same admission; queued → same place (heartbeat
//!   refreshed); otherwise admitted at once if the queue is empty and a slot is free
//!   (capacity, arrival-rate cap and stock permitting), else appended with a ticket that
//!   orders the line: rising by a fixed stride in the general line, or interleaved by
//!   share with the room's priority lanes (see [`LANE_STRIDE`]).
//! - Active sessions are stored with their expiry and *counted* (sessions whose expiry is
//!   in the future), never tracked with a free-running counter.
//! - `promote` admits queue heads while slots, stock and the rate cap allow, unless the
//!   room is paused, closed, rejecting or queueing all.
//! - Modes (`RoomConfig::mode`, `queue_all`): `passthrough` lets every join in at once
//!   and promotes the whole line, ignoring capacity and the rate cap (stock still
//!   holds); `reject` gives no new place and admits nobody (a join answers `rejected`;
//!   places already held are kept, and their visitors are told `rejected`); `queue_all`
//!   queues every newcomer and admits nobody, whatever the mode (its visitors are told
//!   `paused`). A live session always stays live.
//! - Stock: each admission of a visitor who has not had a unit consumes one; stock 0 means
//!   sold out (no new joins, no admissions).
//! - Configuration version: a room is created at version 1. A patch or a stock change
//!   that changes a value adds one, and so does every overwrite by `put_room`, in the same
//!   atomic step as the write. A patch that changes nothing leaves it, and so do
//!   admissions consuming stock (they are not configuration changes). A
//!   patch may name the version it was based on ([`Store::patch_room_if`]): if the room
//!   has moved on, nothing is written (optimistic concurrency for the admin API).

mod admin;
mod admission;
mod events;
mod fairness;
pub(crate) mod join_batch;
mod lease;
pub(crate) mod line;
pub mod memory;
pub mod outflow;
mod recovery;
pub mod redis;
pub(crate) mod revocation;
mod rooms;
pub(crate) mod sentinel;
pub mod timed;
pub(crate) mod webhook;

pub use admin::AdminStore;
pub use admission::AdmissionStore;
pub use events::EventStore;
pub use fairness::{commitment_of, new_seed, seed_revealed, Fairness, FairnessStore, ShuffleStep};
pub use lease::LeaseStore;
pub use line::{LineChange, LineCursor, LineStore, Placed, RoomTick, TickRequest};
pub use outflow::OutflowStore;
pub use recovery::RecoveryStore;
pub use revocation::{Revocation, RevocationPage, RevocationStore};
pub use rooms::RoomStore;

/// Every role trait, for code that calls store methods on a concrete backend
/// (`MemoryStore`, `RedisStore`) rather than through `dyn Store`:
/// `use anteroom::store::prelude::*;`.
pub mod prelude {
    pub use super::{
        AdminStore, AdmissionStore, EventStore, FairnessStore, LeaseStore, LineStore, OutflowStore,
        RecoveryStore, RevocationStore, RoomStore,
    };
}
pub use webhook::{
    WebhookCounts, WebhookDeadLetter, WebhookRetry, WebhookSettle, MAX_DEAD_LETTERS_KEPT,
};

use serde::Serialize;

use crate::room::RoomConfig;
pub use crate::room::RoomPatch;

/// What a visitor is, as far as one room is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VisitorState {
    Queued,
    Admitted,
    NotQueued,
    Paused,
    SoldOut,
    Closed,
    /// The room's `mode` is `reject`: nobody is let in or given a new place (a visitor
    /// already in line keeps their place, shown in `position`).
    Rejected,
    /// The room's event has not opened its pre-queue (or, without one, has not opened):
    /// no place is taken.
    Scheduled,
    /// In the event's pre-queue: the order is drawn at `opens_at` (the shuffle).
    Prequeue,
    /// Was let in, but never presented the pass at the origin within the room's
    /// `claim_timeout_secs`: the admission was taken back (docs/outflow.md#no-shows). Said
    /// until the session would have expired; joining again queues at the back.
    NoShow,
}

impl VisitorState {
    pub fn as_str(self) -> &'static str {
        match self {
            VisitorState::Queued => "queued",
            VisitorState::Admitted => "admitted",
            VisitorState::NotQueued => "not_queued",
            VisitorState::Paused => "paused",
            VisitorState::SoldOut => "sold_out",
            VisitorState::Closed => "closed",
            VisitorState::Rejected => "rejected",
            VisitorState::Scheduled => "scheduled",
            VisitorState::Prequeue => "prequeue",
            VisitorState::NoShow => "no_show",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "queued" => VisitorState::Queued,
            "admitted" => VisitorState::Admitted,
            "not_queued" => VisitorState::NotQueued,
            "paused" => VisitorState::Paused,
            "sold_out" => VisitorState::SoldOut,
            "closed" => VisitorState::Closed,
            "rejected" => VisitorState::Rejected,
            "scheduled" => VisitorState::Scheduled,
            "prequeue" => VisitorState::Prequeue,
            "no_show" => VisitorState::NoShow,
            _ => return None,
        })
    }
}

/// One admission: the session a pass stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    /// Serial number of this admission within the room (the pass's `jti` is built from it).
    pub serial: u64,
    /// When it was granted (store clock, ms since the epoch).
    pub issued_at_ms: u64,
    /// When it ends (store clock, ms since the epoch).
    pub expires_at_ms: u64,
}

/// What [`Store::release_ended`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Released {
    /// The visitor held a session or a place.
    pub held: bool,
    /// The session it ended, if one was live (not expired): its serial names the passes
    /// that must stop working.
    pub session: Option<Admission>,
    /// Who was admitted as a result.
    pub admitted: Vec<String>,
}

/// How long a visitor dropped for silence is remembered, so that coming back they are
/// told they lost their place (`Snapshot::rejoined_after_absence`).
pub const AWAY_KEEP_MS: u64 = 3_600_000;

/// How long a release is remembered (`st:gone`), so that a session its visitor ended is
/// not put back by an instance restoring the sessions it knew after the store lost its
/// data or failed over (`restore_session`), which may come a moment later.
pub const GONE_KEEP_MS: u64 = 60_000;

/// About how many events a room's stream keeps (`XADD … MAXLEN ~`; the memory store
/// keeps exactly this many): a consumer further behind than that loses the oldest.
pub const STREAM_KEEP: u64 = 10_000;

/// Session ends a room keeps for the ETA (`ENDS_KEEP` in Lua comes from here).
pub const ENDS_KEEP: usize = 64;
/// Live sessions the ETA basis reads, soonest expiry first (`BASIS_SESSIONS` in Lua).
pub const BASIS_SESSIONS: usize = 1000;
/// The rate-cap window, in ms (`WINDOW_MS` in Lua).
pub const WINDOW_MS: u64 = 60_000;

/// A queued visitor's heartbeat is refreshed at most once per step of this many steps
/// per heartbeat timeout (`HB_STEPS` in Lua): a sign of life at `now` from a visitor whose
/// heartbeat is before `now` moves it to `now + step` ([`heartbeat_step`]); one whose
/// heartbeat is still at or after `now` changes nothing in the store (no write, nothing
/// replicated). A visitor polling every few seconds thus costs Redis one heartbeat write
/// per step, not one per poll. The reaper's bound moves by at most one step: a silent
/// visitor is dropped between the timeout and the timeout plus a step after their last
/// sign of life, never sooner.
pub const HB_STEPS: u64 = 16;

/// The step of the heartbeat (see [`HB_STEPS`]) of a room whose heartbeat timeout is
/// `hb_ms`: `hb_ms / HB_STEPS`, at least 1 ms.
pub fn heartbeat_step(hb_ms: u64) -> u64 {
    (hb_ms / HB_STEPS).max(1)
}

/// What the ETA model ([`crate::domain::eta`]) is computed from: the room's settings and
/// what it really did lately. Read once a second per room per instance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EtaBasis {
    pub now_ms: u64,
    /// The room has priority lanes (a place can move back as lane visitors arrive).
    pub lanes: bool,
    pub capacity: u64,
    pub session_ttl_ms: u64,
    pub rate_cap_per_minute: u64,
    /// Units left; `None` = unlimited.
    pub stock: Option<u64>,
    /// Admissions held: paused, `queue_all`, or `mode = "reject"` (no countdown).
    pub paused: bool,
    pub closed: bool,
    pub queue_length: u64,
    /// Live sessions (all of them, even past `sessions`).
    pub active: u64,
    /// (issued_ms, expires_ms) of the live sessions among the first [`BASIS_SESSIONS`]
    /// by soonest expiry, except the quiet ones.
    pub sessions: Vec<(u64, u64)>,
    /// Expiries (ms) of the quiet live sessions among those read: let in from the line
    /// half the heartbeat timeout ago or more and never claimed since (no status answer,
    /// no socket told, no pass checked, no release). Their visitors left before their
    /// turn, so they hold the slot until it expires; such sessions are not stays and
    /// are left out of `ends` (and of `sessions`).
    pub quiet: Vec<u64>,
    /// (end_ms, duration_ms) of the last [`ENDS_KEEP`] session ends (releases and
    /// expiries), newest first, except expiries of sessions never claimed.
    pub ends: Vec<(u64, u64)>,
    /// Admission times in the last [`WINDOW_MS`] (only when the rate cap is on).
    pub window: Vec<u64>,
    /// Admissions and visitors reaped for silence over the last five minutes.
    pub admitted_recent: u64,
    pub reaped_recent: u64,
    /// Queued visitors silent for more than half the heartbeat timeout.
    pub silent: u64,
    /// Admissions so far (see [`Snapshot::admits`]).
    pub admits: u64,
}

/// A cap on the places one group of visitors (one client address, or one IPv6 /64) may
/// hold in a room at once (`max_places_per_ip`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceLimit {
    /// The group, e.g. `203.0.113.9` or `2001:db8:1:2::/64` (no spaces).
    pub group: String,
    pub max: u64,
}

/// What a join brings besides the visitor ([`Store::join_with`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JoinOptions {
    /// Count a new place against this group's cap.
    pub limit: Option<PlaceLimit>,
    /// Queue a new place in this lane (a lane the room does not have: the general line).
    pub lane: Option<String>,
    /// In `random` mode: the new place's ticket ([`random_score`] of the visitor under the
    /// room's seed), so the line is a uniform draw among those waiting. Ignored in other
    /// modes.
    pub score: Option<u64>,
    /// The visitor id was drawn for this join (a visitor who brought none): it holds no
    /// place yet, so the store need not look for one or for an away mark (the Redis store
    /// skips 2 reads, and takes the new place only if it is still absent). `false`
    /// whenever the id was presented or derived (an enqueue token's person), which is
    /// always correct.
    pub fresh: bool,
}

/// Lowercase hex of `HMAC-SHA256(key = seed bytes, message = visitor id)`: the published
/// order of the pre-queue shuffle and of `random` mode (ascending).
pub fn fairness_digest(seed_hex: &str, visitor: &str) -> String {
    use hmac::{Hmac, Mac};
    // unwrap: HMAC takes a key of any length.
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&crate::hex::bytes(seed_hex)).unwrap();
    mac.update(visitor.as_bytes());
    crate::hex::lower(&mac.finalize().into_bytes())
}

/// A `random`-mode ticket: the first 48 bits of [`fairness_digest`] (exact as a Redis
/// score, a double), so ascending tickets follow ascending digests.
pub fn random_score(seed_hex: &str, visitor: &str) -> u64 {
    let d = fairness_digest(seed_hex, visitor);
    u64::from_str_radix(&d[..12], 16).unwrap_or(0)
}

/// Ticket spacing: a lane with share `s` spaces its tickets `LANE_STRIDE / s` apart, the
/// general line of a room without lanes `LANE_STRIDE` apart (`LANE_STRIDE` in Lua comes
/// from here). The line is ordered by ticket, so lanes interleave by their shares (a
/// weighted fair queue: a new ticket is `max(last admitted ticket, the lane's last
/// ticket) + its spacing`, so an idle lane banks no credit).
pub const LANE_STRIDE: u64 = 1000;

/// `(lane, spacing)` for a room's lanes: the general line (`""`) first, then each lane.
pub fn lane_strides(lanes: &[crate::room::Lane]) -> Vec<(String, u64)> {
    let stride = |share: f64| ((LANE_STRIDE as f64) / share).round().max(1.0) as u64;
    let rest = 1.0 - lanes.iter().map(|l| l.share).sum::<f64>();
    std::iter::once((String::new(), stride(rest.max(0.01))))
        .chain(lanes.iter().map(|l| (l.name.clone(), stride(l.share))))
        .collect()
}

/// One lane's figures ([`RoomReport::lanes`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaneCount {
    /// `""`: the general line.
    pub lane: String,
    pub waiting: u64,
    /// Let in from this lane since the room had lanes.
    pub admitted: u64,
}

/// How long a group's record of places lives after its last new place (ms).
pub const PLACE_GROUP_TTL_MS: u64 = 86_400_000;

/// The most stock a room may hold (a room setting's bound, kept with the settings).
pub use crate::room::MAX_STOCK;

/// A visitor's view of a room, as returned by `join` and `status`.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub state: VisitorState,
    /// 1-based place in the queue; 0 when not queued.
    pub position: u64,
    pub queue_length: u64,
    pub active: u64,
    pub capacity: u64,
    pub session_ttl_ms: u64,
    /// Units left; `None` = unlimited.
    pub stock: Option<u64>,
    /// Present when `state == Admitted`.
    pub admission: Option<Admission>,
    /// The store's clock when the snapshot was taken.
    pub now_ms: u64,
    /// Visitors this call admitted from the head of the queue (join promotes first).
    pub promoted: Vec<String>,
    /// The room's arrival-rate cap (admissions per minute, 0 = off).
    pub rate_cap_per_minute: u64,
    /// This join queued a visitor whom the reaper had dropped for silence (within the
    /// last [`AWAY_KEEP_MS`]): they lost their place and are at the back.
    pub rejoined_after_absence: bool,
    /// Admissions the room has made so far (its serial), to line a visitor's position up
    /// with an ETA schedule computed a moment earlier.
    pub admits: u64,
    /// Where admitted visitors go.
    pub target_url: String,
    /// A queued visitor's ticket (the line's order) and join time, from `join` and
    /// `restore_place` (0 otherwise, and from `status`, which stays cheap).
    pub ticket: u64,
    pub joined_at_ms: u64,
    /// A queued visitor's heartbeat after this call (ms, the store's clock; 0 otherwise):
    /// a sign of life before it writes nothing ([`heartbeat_step`]), so an instance may
    /// answer such a status itself ([`crate::domain::line_view`]).
    pub heartbeat_ms: u64,
    /// Where the room's line log stood when the snapshot was taken (epoch `""`: no log
    /// yet): `position` is exact at this cursor.
    pub line: LineCursor,
}

/// Room-wide figures shared by every visitor of a room at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomView {
    pub queue_length: u64,
    pub active: u64,
    pub capacity: u64,
    pub session_ttl_ms: u64,
    pub stock: Option<u64>,
    pub now_ms: u64,
    pub rate_cap_per_minute: u64,
    pub target_url: String,
    pub paused: bool,
    pub closed: bool,
    pub mode: crate::room::QueueMode,
    pub queue_all: bool,
    /// Admissions so far (see [`Snapshot::admits`]).
    pub admits: u64,
    /// Where the room's scheduled event stands (`Open` without one).
    pub phase: crate::room::schedule::EventPhase,
}

/// One watched visitor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEntry {
    Queued {
        position: u64,
    },
    Admitted(Admission),
    /// Neither queued nor admitted (reaped, released, or never joined).
    Gone,
}

/// A room's own state, by the precedence the scripts use: closed, then sold out, then
/// `queue_all` (shown as paused), then rejecting (`mode = "reject"`, which `queue_all`
/// overrides), then paused, else open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomState {
    Open,
    Paused,
    SoldOut,
    Closed,
    Rejected,
    /// The event has not opened its (pre-)queue.
    Scheduled,
    /// The event's pre-queue is open.
    Prequeue,
}

impl RoomState {
    pub fn as_str(self) -> &'static str {
        match self {
            RoomState::Open => "open",
            RoomState::Paused => "paused",
            RoomState::SoldOut => "sold_out",
            RoomState::Closed => "closed",
            RoomState::Rejected => "rejected",
            RoomState::Scheduled => "scheduled",
            RoomState::Prequeue => "prequeue",
        }
    }
}

impl RoomView {
    /// The room's state.
    pub fn room_state(&self) -> RoomState {
        use crate::room::schedule::EventPhase;
        if self.closed || self.phase == EventPhase::Ended {
            RoomState::Closed
        } else if self.phase == EventPhase::Scheduled {
            RoomState::Scheduled
        } else if self.phase == EventPhase::Prequeue {
            RoomState::Prequeue
        } else if self.stock == Some(0) {
            RoomState::SoldOut
        } else if self.queue_all {
            RoomState::Paused
        } else if self.mode == crate::room::QueueMode::Reject {
            RoomState::Rejected
        } else if self.paused {
            RoomState::Paused
        } else {
            RoomState::Open
        }
    }

    /// The state a visitor in `entry` is in, by the same precedence the scripts use.
    pub fn state_of(&self, entry: &WatchEntry) -> VisitorState {
        match (entry, self.room_state()) {
            (WatchEntry::Admitted(_), _) => VisitorState::Admitted,
            (_, RoomState::Closed) => VisitorState::Closed,
            (_, RoomState::SoldOut) => VisitorState::SoldOut,
            (_, RoomState::Rejected) => VisitorState::Rejected,
            (_, RoomState::Scheduled) => VisitorState::Scheduled,
            // Late arrivals queued behind a pre-queue not shuffled yet see their place.
            (WatchEntry::Queued { .. }, RoomState::Prequeue) => VisitorState::Queued,
            (_, RoomState::Prequeue) => VisitorState::Prequeue,
            (WatchEntry::Gone, _) => VisitorState::NotQueued,
            (_, RoomState::Paused) => VisitorState::Paused,
            (WatchEntry::Queued { .. }, RoomState::Open) => VisitorState::Queued,
        }
    }

    /// The per-visitor snapshot for `entry`.
    pub fn snapshot(&self, entry: &WatchEntry) -> Snapshot {
        let (position, admission) = match entry {
            WatchEntry::Queued { position } => (*position, None),
            WatchEntry::Admitted(a) => (0, Some(a.clone())),
            WatchEntry::Gone => (0, None),
        };
        Snapshot {
            state: self.state_of(entry),
            position,
            queue_length: self.queue_length,
            active: self.active,
            capacity: self.capacity,
            session_ttl_ms: self.session_ttl_ms,
            stock: self.stock,
            admission,
            now_ms: self.now_ms,
            promoted: Vec::new(),
            rate_cap_per_minute: self.rate_cap_per_minute,
            rejoined_after_absence: false,
            admits: self.admits,
            target_url: self.target_url.clone(),
            ticket: 0,
            joined_at_ms: 0,
            heartbeat_ms: 0,
            line: LineCursor::default(),
        }
    }
}

/// An admission, as published to every instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmittedEvent {
    pub room: String,
    pub visitor: String,
    pub admission: Admission,
}

/// What a patch based on a version did ([`Store::patch_room_if`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchOutcome {
    /// Written (the version moves only if a value changed), then promoted.
    Applied {
        version: u64,
        /// Who the promotion admitted.
        admitted: Vec<String>,
    },
    /// The room was not at the expected version: nothing was written.
    Stale { version: u64 },
}

/// A visitor an admin looked up by id prefix ([`Store::find_visitors`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundVisitor {
    pub visitor: String,
    /// [`WatchEntry::Queued`] or [`WatchEntry::Admitted`], never `Gone`.
    pub place: WatchEntry,
}

/// A stock change (admin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StockChange {
    Set(u64),
    Add(u64),
    Unlimited,
}

/// Most admissions one join, release, stock change, patch or ETA read makes (`PROMOTE_LIMIT`
/// in Lua comes from here).
pub const PROMOTE_LIMIT: u64 = 1000;
/// Minutes of per-minute history a room keeps (the chart shows 30; Lua's minute hashes
/// live `MINUTE_TTL_MS`, derived from this).
pub const HISTORY_MINUTES: u64 = 31;

/// Upper bounds (ms) of the wait histogram buckets; one more bucket holds the rest
/// (`WAIT_BOUNDS` in Lua comes from here).
pub const WAIT_BOUNDS_MS: [u64; 14] = [
    1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000,
    1_800_000, 3_600_000, 7_200_000,
];

/// The histogram bucket of a wait.
pub fn wait_bucket(ms: u64) -> usize {
    WAIT_BOUNDS_MS
        .iter()
        .position(|b| ms <= *b)
        .unwrap_or(WAIT_BOUNDS_MS.len())
}

/// One minute of a room's history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MinuteStats {
    /// Minutes since the epoch.
    pub minute: u64,
    pub admissions: u64,
    /// Queued visitors dropped for silence.
    pub reaped: u64,
    /// Last queue length sampled in the minute.
    pub queue_length: Option<u64>,
    /// Wait-time histogram of the minute's admissions (see [`WAIT_BOUNDS_MS`]).
    pub waits: [u64; 15],
}

/// Everything the admin view shows about a room.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomReport {
    pub view: RoomView,
    pub admitted_total: u64,
    pub reaped_total: u64,
    /// Minutes with data, oldest first.
    pub minutes: Vec<MinuteStats>,
    /// With lanes: the general line, then each configured lane (visitors in a lane the
    /// room no longer has count in the general line); empty without lanes.
    pub lanes: Vec<LaneCount>,
}

/// Open sockets one instance reported for one room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SocketCount {
    pub instance: String,
    pub room: String,
    pub count: u64,
    pub age_ms: u64,
}

/// Room figures for metrics and the admin view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoomStats {
    pub queue_length: u64,
    pub active: u64,
    pub capacity: u64,
    pub paused: bool,
    pub closed: bool,
    pub stock: Option<u64>,
    pub admitted_total: u64,
    pub reaped_total: u64,
}

/// What one bounded reap call removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReapBatch {
    /// Queued visitors dropped for silence.
    pub dropped: u64,
    /// Expired sessions pruned.
    pub expired: u64,
    /// Silent-looking visitors kept because a live hub holds their sockets.
    pub vouched: u64,
}

/// One event of a room's stream ([`Store::events`]): what the shop's order pipeline
/// reads (seed document 001).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomEvent {
    /// The stream entry's id (`<ms>-<seq>`): read on after it.
    pub id: String,
    /// `admission`, `release`, `expiry`, `stock_unit_claimed`, `sold_out`, `opened` or
    /// `closed`.
    pub kind: String,
    pub visitor: Option<String>,
    pub serial: Option<u64>,
    /// On an `admission` from the line: the ticket the visitor held (the line is in
    /// ticket order, so admissions in a FIFO room come with rising tickets: the FIFO
    /// audit, [`crate::domain::fifo_audit`]). None on a walk-in.
    pub ticket: Option<u64>,
}

/// What [`Store::sessions`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionsQuery {
    /// Sessions expiring at or after this (ms, store clock); 0 or a past time: every live
    /// session.
    pub expires_from: u64,
    /// Releases (`st:gone`) at or after this (ms), or none.
    pub gone_after: Option<u64>,
    /// Most sessions in the page.
    pub limit: u32,
}

/// What [`Store::sessions`] answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionsPage {
    /// The store's clock when it read them.
    pub now_ms: u64,
    /// (visitor, admission), soonest expiry first.
    pub sessions: Vec<(String, Admission)>,
    /// (visitor, when released), when asked.
    pub gone: Vec<(String, u64)>,
    /// When the room's queue was last flushed (ms, store clock), if it was: every place
    /// taken before then ended ([`crate::domain::ended`]).
    pub flushed_at_ms: Option<u64>,
}

/// Fixed-window limiter answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowDecision {
    pub allowed: bool,
    /// Requests counted in the current window (including this one).
    pub count: u64,
    /// Milliseconds until the window resets.
    pub reset_ms: u64,
}

#[derive(Clone, Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no such room")]
    NoSuchRoom,
    /// A join that needs a new place from an address already holding the most allowed.
    #[error("this address already holds the most places allowed in this room")]
    TooManyPlaces,
    /// A join that needs a new place in a room re-created after the store lost its data,
    /// while the places and sessions that were lost are put back (`recreate_room`).
    #[error("new places are held for {retry_after_ms} ms while lost places are put back")]
    Held { retry_after_ms: u64 },
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("unexpected store reply: {0}")]
    Protocol(String),
}

impl From<::redis::RedisError> for StoreError {
    fn from(e: ::redis::RedisError) -> Self {
        StoreError::Unavailable(e.to_string())
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// The admission store, every role together (`Arc<dyn Store>` is what the application
/// holds). All methods are atomic per room. A backend implements each role; a task that
/// needs one role takes only that one (docs/design.md, "The store's roles").
pub trait Store:
    RoomStore
    + AdmissionStore
    + LineStore
    + AdminStore
    + RecoveryStore
    + EventStore
    + LeaseStore
    + FairnessStore
    + RevocationStore
    + OutflowStore
    + Send
    + Sync
    + 'static
{
}

impl<T> Store for T where
    T: RoomStore
        + AdmissionStore
        + LineStore
        + AdminStore
        + RecoveryStore
        + EventStore
        + LeaseStore
        + FairnessStore
        + RevocationStore
        + OutflowStore
        + Send
        + Sync
        + 'static
{
}

/// Admitted visitors first (by id), then queued ones by position: the order
/// [`Store::find_visitors`] answers in, whichever backend.
pub fn sort_found(found: &mut [FoundVisitor]) {
    found.sort_by_key(|f| match &f.place {
        WatchEntry::Admitted(_) => (0, 0, f.visitor.clone()),
        WatchEntry::Queued { position } => (1, *position, String::new()),
        WatchEntry::Gone => (2, 0, f.visitor.clone()),
    });
}

#[cfg(test)]
mod tests {
    use super::{heartbeat_step, wait_bucket};

    #[test]
    fn a_heartbeat_step_is_a_sixteenth_of_the_timeout_at_least_a_ms() {
        assert_eq!(heartbeat_step(120_000), 7_500);
        assert_eq!(heartbeat_step(1_000), 62);
        assert_eq!(heartbeat_step(10), 1);
    }

    #[test]
    fn waits_fall_in_the_right_bucket() {
        assert_eq!(wait_bucket(0), 0);
        assert_eq!(wait_bucket(1_000), 0);
        assert_eq!(wait_bucket(1_001), 1);
        assert_eq!(wait_bucket(59_000), 6);
        assert_eq!(wait_bucket(10_000_000), 14);
    }
}
