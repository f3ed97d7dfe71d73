//! The admission domain, free of HTTP: join, status, release and pass verification on top
//! of a [`Store`], turning store snapshots into what a visitor is told (ETA, pass,
//! redirect). Handlers parse, call the [`Engine`], and render.

use std::sync::Arc;

use serde::Serialize;

use crate::config::Settings;
use crate::domain::error::DomainError;
use crate::domain::eta::{reason, Eta};
use crate::domain::forecast::{Forecast, Forecasts};
use crate::domain::identity::{VisitorId, VisitorSigner};
use crate::domain::pass::{Claims, PassKeys};
use crate::domain::ratelimit::{IpLimiter, LimitedAction};
use crate::metrics::Metrics;
use crate::store::{Admission, Released, Snapshot, Store, StoreError, VisitorState};

mod parts;
mod redirect;
mod status;
mod told_view;

pub use redirect::{redirect_with_pass, resolve_return};

pub use parts::EngineParts;

/// What a visitor is told; the JSON body of join and status.
#[derive(Clone, Debug, Serialize, PartialEq, utoipa::ToSchema)]
pub struct VisitorView {
    pub room: String,
    pub state: VisitorState,
    pub position: u64,
    pub queue_length: u64,
    pub active: u64,
    pub capacity: u64,
    pub eta_seconds: u64,
    pub eta_low_seconds: u64,
    pub eta_high_seconds: u64,
    /// `false` when there is no estimate to give: no basis yet (then `eta_seconds` and
    /// `eta_high_seconds` are the worst case and `eta_low_seconds` is 0), a paused room,
    /// or a place past the stock left.
    pub eta_known: bool,
    /// The quantiles (percent) of the wait that `eta_low_seconds` and
    /// `eta_high_seconds` are (`[5, 95]`: one visitor in twenty waits less than the low
    /// end, one in twenty more than the high end); `eta_seconds` is the median.
    pub eta_quantiles: [u8; 2],
    /// Units left, when the room has finite stock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stock: Option<u64>,
    pub visitor_token: String,
    /// The short code the visitor can read out to support (`K7QX-M2PD`); the admin
    /// finds and removes the visitor by it.
    pub support_code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirect_url: Option<String>,
    /// When the pass expires (seconds since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When the visitor was admitted (milliseconds since the epoch, store clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admitted_at: Option<u64>,
    /// Why the visitor's place or estimate is what it is, when there is something to say
    /// (a code from [`reason`]): `"you_were_away"` when this join put at the back a
    /// visitor the reaper had dropped for silence, `"paused"` while paused, the room's
    /// latest change within a minute (`capacity_lowered`, `capacity_raised`, `resumed`,
    /// `sessions_longer_than_usual`, `sessions_shorter_than_usual`), `rate_limited`
    /// while the rate cap sets the pace, `stock_may_run_out` past the stock left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_reason: Option<&'static str>,
    /// Set when this answer was given without the store (`"store-unreachable"`: a
    /// fail-open admission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<&'static str>,
    /// A queued visitor's (ticket, join time) when the store reported them (a join): the
    /// hub keeps them to put the place back if the store loses its data.
    #[serde(skip)]
    pub place: Option<(u64, u64)>,
    /// A queued visitor's signed place receipt (join and status): presented to the join
    /// after the store lost its data, it puts the place back. Good for the room's
    /// heartbeat timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place_receipt: Option<String>,
    /// A scheduled event's pre-queue opening and opening (seconds since the epoch; null
    /// when the event has none), on `scheduled` and `prequeue` views.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prequeue_opens_at: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<Option<u64>>,
    /// The store's clock (ms) on `scheduled` and `prequeue` views: the page's countdown
    /// runs on it, not on the visitor's clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now_ms: Option<u64>,
    /// Why a `closed` room is closed, when it has its own reason: `"event_ended"` after
    /// the event's `closes_at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_reason: Option<&'static str>,
    /// What the visitor is told, decided here for every client
    /// ([`crate::domain::told`], docs/visitor-page.md#what-a-visitor-is-told): the
    /// headline and lead's code (`queued`, `queued_random`, `closed_kept`, …).
    pub message: &'static str,
    /// The figures shown with it (`place`, `eta`, `in_line`, `progress`, `chances`,
    /// `countdown`).
    #[schema(value_type = Vec<String>)]
    pub figures: &'static [&'static str],
    /// The notes shown with it, by code (every `eta_reason`, `eta_explain`,
    /// `random_draw`, `any_time_before`); each lives exactly as long as it is sent, but
    /// `you_were_away`, which the page keeps until the visitor dismisses it.
    pub notes: Vec<&'static str>,
}

/// The `closed_reason` of a room whose event ended.
pub const CLOSED_EVENT_ENDED: &str = "event_ended";

/// The value of `X-Anteroom-Degraded` (and `degraded`) when the store is unreachable.
pub const DEGRADED_STORE_UNREACHABLE: &str = "store-unreachable";

/// Who joins, and in which lane ([`Engine::entry_visitor`]).
#[derive(Debug)]
pub struct Entrant {
    pub visitor: VisitorId,
    /// A lane the room has (`None`: the general line).
    pub lane: Option<String>,
}

/// A pass that verified; `degraded` when it was checked offline (store unreachable).
#[derive(Debug)]
pub struct Verified {
    pub claims: Claims,
    pub degraded: bool,
}

/// Everything a request needs; shared by all workers.
pub struct Engine {
    pub(super) store: Arc<dyn Store>,
    pub(super) passes: PassKeys,
    pub(super) visitors: VisitorSigner,
    pub(super) metrics: Metrics,
    pub(super) ip_limiter: IpLimiter,
    pub(super) settings: Settings,
    /// Set `Secure` on cookies (TLS deployments).
    pub(super) secure_cookies: bool,
    /// Base URL visitors reach this server at, without a trailing slash.
    pub(super) public_base: String,
    /// This instance's name in leases and socket reports (`<addr>-<random>`).
    pub(super) instance: String,
    /// `trusted_proxies`, parsed.
    pub(super) trusted_proxies: Vec<ipnet::IpNet>,
    /// `[[bypass]]` rules, parsed.
    pub(super) bypass: crate::domain::bypass::Bypass,
    /// The rooms declared in the configuration (as seeded: the demo room's target and
    /// embed origins filled in). The keeper re-creates them when they go missing.
    pub(super) declared_rooms: Vec<crate::room::RoomConfig>,
    /// When this instance last found the store's data gone (ms since the epoch), for
    /// the dashboard.
    pub(super) data_lost_at: std::sync::Mutex<Option<u64>>,
    /// How many times this instance found the store's data gone, and the store epoch it
    /// knows (the keeper's): the hub puts its sockets' places back after a loss.
    pub(super) data_losses: std::sync::atomic::AtomicU64,
    pub(super) known_epoch: std::sync::Mutex<Option<String>>,
    /// The live sessions this instance knows: the keeper puts them back after the store
    /// lost its data.
    pub(super) known_sessions: crate::domain::known_sessions::KnownSessions,
    /// The sessions and places this instance knows ended: no recovery puts them back.
    pub(super) ended: crate::domain::ended::EndedLedger,
    /// Per-room ETA schedules, refreshed once a second.
    pub(super) forecasts: Forecasts,
    /// Room configurations for the join's entry check, read at most once a second.
    pub(super) room_cache: RoomCache,
    /// Each room's parsed entry key, kept while its configured key is the same.
    pub(super) entry_keys: crate::domain::entry::EntryKeys,
    /// Proof-of-work challenges (`challenge = "pow"` rooms).
    pub(super) pow: crate::domain::pow::PowKeys,
    /// Queued and admitted visitors' statuses answered from this instance's view of the
    /// line.
    pub(super) line_views: crate::domain::line_view::LineViews,
    /// The passes revoked anywhere, from the store's log (read by the poller start-up
    /// runs with the gateway or `store.local_status`): the gateway refuses them, and an
    /// admitted status is answered here only for a session not in it.
    pub(super) revoked: std::sync::Arc<crate::domain::revoked::RevokedSet>,
    /// Sessions whose pass this instance saw presented at the origin (no-shows:
    /// `crate::domain::noshow`).
    pub(super) presented: crate::domain::presented::Presented,
}

/// How long a cached room configuration serves joins (an `entry` change reaches every
/// instance within this).
pub const ROOM_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(1);

/// Room configurations read at most once per [`ROOM_CACHE_TTL`] per room.
#[derive(Default)]
pub struct RoomCache(
    std::sync::Mutex<
        std::collections::HashMap<
            String,
            (std::time::Instant, std::sync::Arc<crate::room::RoomConfig>),
        >,
    >,
);

impl RoomCache {
    /// Drops `room`'s cached configuration: a change made through this instance is
    /// seen by its next join at once (other instances within [`ROOM_CACHE_TTL`]).
    pub fn forget(&self, room: &str) {
        self.0.lock().unwrap().remove(room);
    }
}

impl VisitorView {
    /// The estimate this view carries, as one value.
    pub fn eta(&self) -> Eta {
        Eta {
            seconds: self.eta_seconds,
            low: self.eta_low_seconds,
            high: self.eta_high_seconds,
            known: self.eta_known,
        }
    }
}

/// The ETA a visitor in this snapshot is shown, and its reason (see
/// [`VisitorView::eta_reason`]). Zero unless queued or paused: closed and sold-out rooms
/// admit nobody, and no estimate is better than a false one; paused has no countdown.
pub fn eta_for(s: &Snapshot, f: Option<&Forecast>) -> (Eta, Option<&'static str>) {
    let away = s.rejoined_after_absence.then_some(reason::YOU_WERE_AWAY);
    if s.position == 0 {
        return (Eta::default(), away);
    }
    match (s.state, f) {
        (VisitorState::Paused, _) => (Eta::default(), away.or(Some(reason::PAUSED))),
        (VisitorState::Queued, Some(f)) => {
            let eta = f.schedule.at(s.position, s.now_ms, s.admits);
            let stock = f
                .schedule
                .past_stock(s.position, s.admits)
                .then_some(reason::STOCK_MAY_RUN_OUT);
            (eta, away.or(stock).or(f.reason))
        }
        _ => (Eta::default(), away),
    }
}

impl Engine {
    /// Remembers that the store lost its data just now.
    pub(crate) fn note_data_loss(&self) {
        // No status is answered from a view of the lost line from here on, and one being
        // answered now sees the count move (Self::status): a place receipt issued after
        // the loss would not put the place back.
        self.line_views.clear();
        self.data_losses
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let now = crate::clock::wall_ms();
        // unwrap: never poisoned (no panics while held).
        *self.data_lost_at.lock().unwrap() = Some(now);
    }

    /// A pass whose session the store does not have: if the store lost its data after the
    /// pass was issued, and this instance knew the session live (listed by its keeper, or
    /// signed here since its last look) and not ended since, put the admission back (it
    /// counts against capacity again) and say whether it is live now. A pass whose
    /// session this instance did not know live is refused: presenting a pass proves it
    /// was issued, not that its session was still running at the loss
    /// (docs/operations.md#what-ended-stays-ended).
    async fn restore_session_from(
        &self,
        room: &str,
        claims: &crate::domain::pass::Claims,
        serial: u64,
    ) -> bool {
        let issued_ms = claims.iat * 1000;
        let Some(a) = self.known_sessions.knows(room, &claims.sub, serial) else {
            return false;
        };
        if self
            .ended
            .session_is_ended(room, &claims.sub, serial, a.issued_at_ms)
        {
            return false;
        }
        if !self.store_lost_data_after(issued_ms).await {
            return false;
        }
        match self.store.restore_session(room, &claims.sub, &a).await {
            Ok(true) => {
                self.metrics
                    .sessions_restored
                    .with_label_values(&[room])
                    .inc();
                true
            }
            _ => false,
        }
    }

    /// Whether the store lost its data after `ms` (ms since the epoch): a loss this
    /// instance noted since, or [`Self::store_epoch_moved`].
    async fn store_lost_data_after(&self, ms: u64) -> bool {
        // unwrap: never poisoned (no panics while held).
        let noted = self.data_lost_at.lock().unwrap().is_some_and(|at| ms <= at);
        noted || self.store_epoch_moved().await
    }

    /// Whether the store's epoch is not the one this instance's keeper knows: it lost its
    /// data and this instance has not noted it yet (another instance, or nobody yet,
    /// noticed first). Reading the epoch writes a fresh one if it is missing, as the
    /// keeper's look does.
    pub(crate) async fn store_epoch_moved(&self) -> bool {
        // unwrap: never poisoned (no panics while held).
        let known = self.known_epoch.lock().unwrap().clone();
        match (known, self.store.epoch(VisitorId::random().as_str()).await) {
            (Some(k), Ok(e)) => k != e,
            _ => false,
        }
    }

    /// How long an end in `room` is remembered in [`Self::ended`] past now (ms): as long
    /// as a pass issued now or a place receipt could be presented, plus a minute.
    pub(crate) fn end_keep_ms(&self, room: &str) -> u64 {
        self.declared_rooms
            .iter()
            .find(|r| r.id == room)
            .map_or(3_600_000, |r| {
                r.session_ttl_secs.max(r.heartbeat_timeout_secs) * 1000 + 60_000
            })
    }

    /// Whether `room` draws its admissions at random (its cached configuration).
    async fn is_random(&self, room: &str) -> bool {
        self.room_config_cached(room)
            .await
            .is_ok_and(|c| c.mode == crate::room::QueueMode::Random)
    }

    /// Whether `room` is declared in the configuration.
    pub(crate) fn is_declared(&self, room: &str) -> bool {
        self.declared_rooms.iter().any(|r| r.id == room)
    }

    /// Declared rooms the store does not have (`/readyz` is 503 while any is missing).
    pub(crate) async fn missing_rooms(&self) -> Result<Vec<String>, DomainError> {
        let present = self
            .store
            .rooms()
            .await
            .map_err(|e| self.store_failed("rooms", "*", e))?;
        Ok(self
            .declared_rooms
            .iter()
            .filter(|r| !present.contains(&r.id))
            .map(|r| r.id.clone())
            .collect())
    }

    /// Logs and counts a store failure, then maps it to a domain error: the one place
    /// where store errors are turned into what a caller is told.
    pub(crate) fn store_failed(&self, op: &'static str, room: &str, e: StoreError) -> DomainError {
        match e {
            // A declared room missing from the store is being re-created by the keeper
            // (within a second): a moment's wait, not an unknown room.
            StoreError::NoSuchRoom if self.is_declared(room) => DomainError::Restoring {
                retry_after_secs: 1,
            },
            StoreError::NoSuchRoom => DomainError::UnknownRoom(room.to_string()),
            StoreError::Held { retry_after_ms } => {
                self.metrics
                    .degraded
                    .with_label_values(&["held_for_restore"])
                    .inc();
                DomainError::Restoring {
                    retry_after_secs: retry_after_ms.div_ceil(1000).max(1),
                }
            }
            StoreError::TooManyPlaces => {
                self.metrics
                    .rate_limited
                    .with_label_values(&["ip_places"])
                    .inc();
                DomainError::TooManyPlaces
            }
            StoreError::Unavailable(_) => {
                tracing::warn!(op, room, error = %e, "store operation failed");
                self.metrics.store_errors.with_label_values(&[op]).inc();
                DomainError::Unavailable
            }
            StoreError::Protocol(m) => {
                tracing::warn!(op, room, error = %m, "store operation failed");
                self.metrics.store_errors.with_label_values(&[op]).inc();
                DomainError::Internal(m)
            }
        }
    }

    /// The room's forecast (cached for a second; `None` only if the store never
    /// answered).
    pub async fn forecast(&self, room: &str) -> Option<std::sync::Arc<Forecast>> {
        self.forecasts.get(self.store.as_ref(), room).await
    }

    /// Builds the visitor's view from a snapshot, with the room's current forecast.
    pub(crate) async fn view(&self, room: &str, visitor: &VisitorId, s: &Snapshot) -> VisitorView {
        self.view_to(room, visitor, s, None).await
    }

    /// The view of a visitor just admitted (from a published admission).
    pub(crate) fn admitted_view(
        &self,
        room: &str,
        visitor: &VisitorId,
        a: &Admission,
        target: &str,
    ) -> VisitorView {
        let pass = self.passes.issue(room, visitor.as_str(), a);
        self.pass_view(
            room,
            visitor,
            pass,
            target,
            a.expires_at_ms.div_ceil(1000),
            a.issued_at_ms,
            None,
        )
    }

    /// An admitted visitor's view around a pass (a published admission, or a fail-open
    /// one), sent on to `target`.
    #[allow(clippy::too_many_arguments)]
    fn pass_view(
        &self,
        room: &str,
        visitor: &VisitorId,
        pass: String,
        target: &str,
        expires_at: u64,
        admitted_at: u64,
        degraded: Option<&'static str>,
    ) -> VisitorView {
        VisitorView {
            room: room.to_string(),
            state: VisitorState::Admitted,
            position: 0,
            queue_length: 0,
            active: 0,
            capacity: 0,
            eta_seconds: 0,
            eta_low_seconds: 0,
            eta_high_seconds: 0,
            eta_known: false,
            eta_quantiles: crate::domain::eta::QUANTILES,
            stock: None,
            visitor_token: self.visitors.token(visitor),
            support_code: visitor.support_code(),
            redirect_url: Some(redirect_with_pass(target, &pass)),
            pass: Some(pass),
            expires_at: Some(expires_at),
            admitted_at: Some(admitted_at),
            eta_reason: None,
            degraded,
            place: None,
            place_receipt: None,
            prequeue_opens_at: None,
            opens_at: None,
            now_ms: None,
            closed_reason: None,
            message: crate::domain::told::message::ADMITTED,
            figures: &[],
            notes: Vec::new(),
        }
    }

    /// Like [`Engine::view`], sending an admitted visitor to `redirect_base` (a validated
    /// `?return=` target) instead of the room's target.
    pub(crate) async fn view_to(
        &self,
        room: &str,
        visitor: &VisitorId,
        s: &Snapshot,
        redirect_base: Option<&str>,
    ) -> VisitorView {
        let forecast = match s.state {
            VisitorState::Queued if s.position > 0 => self.forecast(room).await,
            _ => None,
        };
        // Random mode: the visitor's rank is their draw, which nothing they receive may
        // tell before admission; the estimate is the wait over all draws
        // (`Schedule::drawn`), the same for everyone waiting, as the socket gives it.
        let random =
            s.state == VisitorState::Queued && s.position > 0 && self.is_random(room).await;
        let drawn;
        let for_eta = if random {
            drawn = Snapshot {
                position: s.queue_length,
                ..s.clone()
            };
            &drawn
        } else {
            s
        };
        let (mut eta, eta_reason) = eta_for(for_eta, forecast.as_deref());
        if let (true, Some(f)) = (random, forecast.as_deref()) {
            eta = f.schedule.drawn(s.now_ms);
        }
        let (pass, redirect_url, expires_at, admitted_at) = match (&s.admission, s.state) {
            (Some(a), VisitorState::Admitted) => {
                let pass = self.passes.issue(room, visitor.as_str(), a);
                // Only a declared room is re-created after a loss, and only its passes
                // are dropped again at the keeper's next look (others would pile up).
                if self.is_declared(room) {
                    self.known_sessions
                        .signed(room, visitor.as_str(), a, crate::clock::wall_ms());
                }
                let redirect = redirect_with_pass(redirect_base.unwrap_or(&s.target_url), &pass);
                (
                    Some(pass),
                    Some(redirect),
                    Some(a.expires_at_ms.div_ceil(1000)),
                    Some(a.issued_at_ms),
                )
            }
            _ => (None, None, None, None),
        };
        let mut view = VisitorView {
            room: room.to_string(),
            state: s.state,
            position: s.position,
            queue_length: s.queue_length,
            active: s.active,
            capacity: s.capacity,
            eta_seconds: eta.seconds,
            eta_low_seconds: eta.low,
            eta_high_seconds: eta.high,
            eta_known: eta.known,
            eta_quantiles: crate::domain::eta::QUANTILES,
            stock: s.stock,
            visitor_token: self.visitors.token(visitor),
            support_code: visitor.support_code(),
            pass,
            redirect_url,
            expires_at,
            admitted_at,
            eta_reason,
            degraded: None,
            place: (s.ticket > 0).then_some((s.ticket, s.joined_at_ms)),
            place_receipt: self.receipt_for(room, visitor, s).await,
            prequeue_opens_at: None,
            opens_at: None,
            now_ms: None,
            closed_reason: None,
            message: crate::domain::told::message::ADMITTED,
            figures: &[],
            notes: Vec::new(),
        };
        self.add_event_fields(room, s, &mut view).await;
        view
    }

    /// The place receipt for a snapshot that carries the place (see
    /// [`VisitorView::place_receipt`]).
    async fn receipt_for(&self, room: &str, visitor: &VisitorId, s: &Snapshot) -> Option<String> {
        if s.ticket == 0 || s.position == 0 {
            return None;
        }
        let hb = self
            .room_config_cached(room)
            .await
            .map(|c| c.heartbeat_timeout_secs)
            .ok()?;
        let now_s = crate::clock::wall_ms() / 1000;
        let p = crate::domain::identity::PlaceReceipt {
            ticket: s.ticket,
            joined_at_ms: s.joined_at_ms,
            iat_s: now_s,
            exp_s: now_s + hb,
        };
        Some(self.visitors.place_receipt(room, visitor, &p))
    }

    /// A join that brings a place receipt: when the store lost its data after the
    /// receipt was issued (a loss this instance noted, or an epoch other than its
    /// keeper's), the place is put back with its ticket; otherwise the receipt has
    /// nothing to restore and the join is an ordinary one (`None`: go on). A refused
    /// receipt is an error.
    pub(crate) async fn join_with_receipt(
        &self,
        room: &str,
        visitor: &VisitorId,
        receipt: &str,
    ) -> Result<Option<VisitorView>, DomainError> {
        let now_s = crate::clock::wall_ms() / 1000;
        let p = self
            .visitors
            .check_place_receipt(receipt, room, visitor, now_s)?;
        if self.holds_place(room, visitor).await? {
            return Ok(None);
        }
        if !self.store_lost_data_after(p.iat_s * 1000).await {
            return Ok(None);
        }
        // Only a place this instance can vouch did not end: it saw every end in the
        // room since the place was taken (its keeper's first look came before), and
        // none of them (released, left, removed, flushed, let in) was this place's. An
        // ended place's receipt is an ordinary join: at the back.
        let ended = !self.ended.covers(p.joined_at_ms)
            || self
                .ended
                .place_is_ended(room, visitor.as_str(), p.ticket, p.joined_at_ms)
            || self
                .known_sessions
                .admitted_since(room, visitor.as_str(), p.joined_at_ms);
        if ended {
            self.metrics
                .receipts_refused
                .with_label_values(&[room])
                .inc();
            return Ok(None);
        }
        let s = self
            .store
            .restore_place(room, visitor.as_str(), p.ticket, p.joined_at_ms)
            .await
            .map_err(|e| self.store_failed("restore_place", room, e))?;
        if s.position > 0 {
            self.metrics
                .places_restored
                .with_label_values(&[room])
                .inc();
        }
        Ok(Some(self.view(room, visitor, &s).await))
    }

    /// A room's live configuration; unknown rooms are an error. With `store.fail_open`,
    /// a declared room's configuration stands in while the store is unreachable, so the
    /// queue page and the socket reach the fail-open join too.
    pub(crate) async fn room_config(
        &self,
        room: &str,
    ) -> Result<crate::room::RoomConfig, DomainError> {
        match self.store.room(room).await {
            Ok(Some(cfg)) => Ok(cfg),
            Ok(None) => Err(self.store_failed("room", room, StoreError::NoSuchRoom)),
            Err(e) => {
                let e = self.store_failed("room", room, e);
                let declared = self.declared_rooms.iter().find(|r| r.id == room);
                match (&e, declared) {
                    (DomainError::Unavailable, Some(cfg)) if self.settings.store.fail_open => {
                        Ok(cfg.clone())
                    }
                    _ => Err(e),
                }
            }
        }
    }

    /// Who joins `cfg`'s line, and in which lane. With an enqueue token: the token's
    /// person, the same visitor for every browser presenting that `sub` (one place, one
    /// stock unit), in the token's `lane` when the room has it. Without one: `visitor` (a
    /// new identity when `None`) in the general line; in an `entry = "token"` room only a
    /// visitor who already holds a place or a session may come back that way.
    pub(crate) async fn entry_visitor(
        &self,
        cfg: &crate::room::RoomConfig,
        token: Option<&str>,
        visitor: Option<VisitorId>,
    ) -> Result<Entrant, DomainError> {
        if let Some(t) = token {
            let claims = self.entry_keys.check(cfg, t)?;
            return Ok(Entrant {
                visitor: self.visitors.entry_id(&cfg.id, &claims.sub),
                lane: self.lane_of(cfg, claims.lane.as_deref()),
            });
        }
        let refused = DomainError::Entry(crate::domain::entry::EntryError::Required);
        let general = |visitor| Entrant {
            visitor,
            lane: None,
        };
        if cfg.entry != crate::room::EntryMode::Token {
            return Ok(general(visitor.unwrap_or_else(VisitorId::random)));
        }
        let Some(v) = visitor else {
            return Err(refused);
        };
        if self.holds_place(&cfg.id, &v).await? {
            Ok(general(v))
        } else {
            Err(refused)
        }
    }

    /// The lane a token's `lane` claim puts its visitor in: the room's lane of that name;
    /// a lane the room does not have puts them in the general line (a site's typo on
    /// launch day must not turn its members away) and is counted
    /// (`anteroom_lane_unknown_total`).
    fn lane_of(&self, cfg: &crate::room::RoomConfig, lane: Option<&str>) -> Option<String> {
        let lane = lane.filter(|l| !l.is_empty())?;
        if cfg.lanes.iter().any(|l| l.name == lane) {
            return Some(lane.to_string());
        }
        self.metrics
            .lane_unknown
            .with_label_values(&[&cfg.id])
            .inc();
        tracing::debug!(room = %cfg.id, lane, "enqueue token names a lane the room does not have");
        None
    }

    /// Whether `visitor` holds a place in line or a live session in `room` (the rooms
    /// that gate new places let such a visitor through without a token or a proof of
    /// work).
    async fn holds_place(&self, room: &str, visitor: &VisitorId) -> Result<bool, DomainError> {
        let s = self
            .store
            .status(room, visitor.as_str())
            .await
            .map_err(|e| self.store_failed("status", room, e))?;
        Ok(s.position > 0 || s.state == VisitorState::Admitted)
    }

    /// A fresh proof-of-work challenge for `cfg`'s room.
    pub(crate) fn pow_challenge(
        &self,
        cfg: &crate::room::RoomConfig,
    ) -> crate::domain::pow::Challenge {
        self.pow
            .challenge(&cfg.id, cfg.pow_max_number, crate::clock::wall_ms() / 1000)
    }

    /// The proof of work a join must bring in a `challenge = "pow"` room: none for a
    /// visitor who already holds a place or a session; otherwise a valid solution
    /// (`solution`, base64), used once (counted in the store until the challenge expires).
    pub(crate) async fn check_pow(
        &self,
        cfg: &crate::room::RoomConfig,
        visitor: &VisitorId,
        solution: Option<&str>,
    ) -> Result<(), DomainError> {
        use crate::domain::pow::PowError;
        if cfg.challenge != crate::room::ChallengeMode::Pow {
            return Ok(());
        }
        let refuse = |error: PowError| DomainError::Challenge {
            error,
            fresh: Box::new(self.pow_challenge(cfg)),
        };
        let Some(solution) = solution else {
            if self.holds_place(&cfg.id, visitor).await? {
                return Ok(());
            }
            return Err(refuse(PowError::Required));
        };
        let now_secs = crate::clock::wall_ms() / 1000;
        let (challenge, expires) = self
            .pow
            .check(solution, &cfg.id, cfg.pow_max_number, now_secs)
            .map_err(refuse)?;
        let ttl_ms = (expires.saturating_sub(now_secs) + 1) * 1000;
        let once = self
            .store
            .hit_window(&format!("pow:{challenge}"), 1, ttl_ms)
            .await
            .map_err(|e| self.store_failed("pow", &cfg.id, e))?;
        if once.allowed {
            Ok(())
        } else {
            Err(refuse(PowError::Reused))
        }
    }

    /// [`Self::room_config`], read at most once per [`ROOM_CACHE_TTL`] per room.
    pub(crate) async fn room_config_cached(
        &self,
        room: &str,
    ) -> Result<std::sync::Arc<crate::room::RoomConfig>, DomainError> {
        if let Some((at, cfg)) = self.room_cache.0.lock().unwrap().get(room) {
            if at.elapsed() < ROOM_CACHE_TTL {
                return Ok(cfg.clone());
            }
        }
        let cfg = std::sync::Arc::new(self.room_config(room).await?);
        self.room_cache
            .0
            .lock()
            .unwrap()
            .insert(room.to_string(), (std::time::Instant::now(), cfg.clone()));
        Ok(cfg)
    }

    /// Per-visitor fixed window; fails open when the store is unreachable.
    pub async fn check_visitor_limit(
        &self,
        visitor: &VisitorId,
        action: LimitedAction,
    ) -> Result<(), DomainError> {
        self.check_window(visitor.as_str(), action).await
    }

    /// The `away` beacon's own window, as large as the visitor's: a page hidden or
    /// reloaded sends one, and a reload must cost one request of the visitor's limit
    /// (the page), not two (docs/visitor-page.md).
    pub async fn check_away_limit(&self, visitor: &VisitorId) -> Result<(), DomainError> {
        self.check_window(&format!("away:{}", visitor.as_str()), LimitedAction::Status)
            .await
    }

    async fn check_window(&self, key: &str, action: LimitedAction) -> Result<(), DomainError> {
        let rl = &self.settings.rate_limit;
        if rl.visitor_requests == 0 {
            return Ok(());
        }
        let window_ms = u64::from(rl.visitor_window_secs) * 1000;
        match self
            .store
            .hit_window(key, u64::from(rl.visitor_requests), window_ms)
            .await
        {
            Ok(d) if d.allowed => Ok(()),
            Ok(d) => {
                self.metrics
                    .rate_limited
                    .with_label_values(&[&format!("visitor_{}", action.label())])
                    .inc();
                Err(DomainError::RateLimited {
                    retry_after_secs: d.reset_ms.div_ceil(1000).max(1),
                })
            }
            Err(e) => {
                // Fail open: limiting is protection, not correctness.
                tracing::warn!(error = %e, "visitor rate limiter unavailable; failing open");
                self.metrics
                    .store_errors
                    .with_label_values(&["rate_limit"])
                    .inc();
                Ok(())
            }
        }
    }

    /// Per-IP limiter (in process).
    pub(crate) fn check_ip_limit(
        &self,
        ip: std::net::IpAddr,
        action: LimitedAction,
    ) -> Result<(), DomainError> {
        self.ip_limiter.check(ip).map_err(|retry_after_secs| {
            self.metrics
                .rate_limited
                .with_label_values(&[&format!("ip_{}", action.label())])
                .inc();
            DomainError::RateLimited {
                retry_after_secs: retry_after_secs.max(1),
            }
        })
    }

    /// The cap a join from `ip` counts against in `cfg`'s room (`max_places_per_ip`, by
    /// the address's [`place_group`](crate::domain::ratelimit::place_group)); `None`
    /// when the room has none.
    pub(crate) fn place_limit(
        cfg: &crate::room::RoomConfig,
        ip: std::net::IpAddr,
    ) -> Option<crate::store::PlaceLimit> {
        (cfg.max_places_per_ip > 0).then(|| crate::store::PlaceLimit {
            group: crate::domain::ratelimit::place_group(ip),
            max: cfg.max_places_per_ip,
        })
    }

    /// Joins (idempotent per visitor), sending an admitted visitor to `redirect_base`
    /// (see [`resolve_return`]); a new place counts against `opts.limit` (see
    /// [`Self::place_limit`]) and is queued in `opts.lane`. The doors join through
    /// [`Engine::enter`], which checks the room's rules first.
    pub(crate) async fn join_from(
        &self,
        room: &str,
        visitor: &VisitorId,
        redirect_base: Option<&str>,
        mut opts: crate::store::JoinOptions,
    ) -> Result<VisitorView, DomainError> {
        opts.score = self.random_score(room, visitor).await;
        let s = match self.store.join_with(room, visitor.as_str(), &opts).await {
            Ok(s) => {
                self.line_views
                    .learn(room, visitor.as_str(), &s, std::time::Instant::now());
                s
            }
            Err(e) => {
                let e = self.store_failed("join", room, e);
                if matches!(e, DomainError::Unavailable) && self.settings.store.fail_open {
                    if let Some(view) = self.fail_open_view(room, visitor, redirect_base) {
                        return Ok(view);
                    }
                }
                return Err(e);
            }
        };
        Ok(self.view_to(room, visitor, &s, redirect_base).await)
    }

    /// In a `random`-mode room, the visitor's draw: the ticket a new place gets
    /// ([`crate::store::random_score`] under the room's seed, drawn here if the room has
    /// none yet). `None` in other modes, or when the store cannot say (the join then
    /// fails on its own, or queues in arrival order).
    async fn random_score(&self, room: &str, visitor: &VisitorId) -> Option<u64> {
        let cfg = self.room_config_cached(room).await.ok()?;
        if cfg.mode != crate::room::QueueMode::Random {
            return None;
        }
        let seed = self
            .store
            .event_seed(room, &crate::store::new_seed())
            .await
            .ok()?;
        Some(crate::store::random_score(&seed, visitor.as_str()))
    }

    /// The visitor's page went to the background: a queued visitor keeps the place for
    /// `reaper.hidden_grace_secs` without a heartbeat. Returns whether they are queued.
    pub(crate) async fn hold_away(
        &self,
        room: &str,
        visitor: &VisitorId,
    ) -> Result<bool, DomainError> {
        let grace_ms = self.settings.reaper.hidden_grace_secs * 1000;
        let held = self
            .store
            .hold_away(room, visitor.as_str(), grace_ms)
            .await
            .map_err(|e| self.store_failed("away", room, e))?;
        if held {
            self.metrics.hidden_holds.with_label_values(&[room]).inc();
        }
        Ok(held)
    }

    /// Ends the visitor's session or place; returns what the store released. A live
    /// session it ends is written to the revocation log, so the gateways, which check
    /// passes without the store, stop letting its passes in too.
    pub(crate) async fn release(&self, room: &str, visitor: &str) -> Result<Released, DomainError> {
        self.release_revoking(room, visitor, None).await
    }

    /// Full pass check: signature, algorithm, expiry, room, and that the session behind
    /// it is still live in the store (released or removed sessions fail at once). When
    /// the store is unreachable the check falls back to what can be checked offline
    /// (signature, algorithm, expiry, room) and says so (`degraded`), so admitted
    /// visitors keep using the site through an outage. A fail-open pass verifies only
    /// while the store is unreachable.
    pub(crate) async fn verify_pass(
        &self,
        room: &str,
        token: &str,
    ) -> Result<Verified, DomainError> {
        let claims = self.passes.verify(token, room)?;
        // Ended here or read ended from the store: refused whatever the store says now (a
        // replica that missed the release, a store that lost it). The issue second's
        // last millisecond stands for the issue time, so a release just before this
        // session began never counts against it.
        if let Some(serial) = claims.serial() {
            let issued_by = claims.iat.saturating_mul(1000) + 999;
            if self
                .ended
                .session_is_ended(room, &claims.sub, serial, issued_by)
            {
                return Err(DomainError::SessionEnded);
            }
        }
        let live = match claims.serial() {
            // The first `verify` of a session in a room with a claim timeout presents it
            // (clears its no-show deadline) in the same one call.
            Some(serial) if self.should_present(room, &claims.sub, serial).await => {
                let live = self.store.present(room, &claims.sub, serial).await;
                if matches!(live, Ok(true)) {
                    self.note_presented(room, &claims, serial);
                }
                live
            }
            Some(serial) => self.store.session_live(room, &claims.sub, serial).await,
            None if claims.is_fail_open() => self.store.ping().await.map(|()| false),
            None => return Err(DomainError::Pass(crate::domain::pass::PassError::Invalid)),
        };
        match live {
            Ok(true) => Ok(Verified {
                claims,
                degraded: false,
            }),
            Ok(false) => match claims.serial() {
                Some(serial) if self.restore_session_from(room, &claims, serial).await => {
                    Ok(Verified {
                        claims,
                        degraded: false,
                    })
                }
                _ => Err(DomainError::SessionEnded),
            },
            // A declared room missing from the store is being re-created after a data
            // loss (within a second): the store cannot answer for it yet, as in an outage.
            Err(e)
                if matches!(e, StoreError::Unavailable(_))
                    || (matches!(e, StoreError::NoSuchRoom) && self.is_declared(room)) =>
            {
                // Without the store, a release read from it in the pass's issue second
                // counts too: the pass may be refused for a session that began after a
                // release in the same second (a good pass refused during an outage),
                // never accepted for one that ended.
                if let Some(serial) = claims.serial() {
                    let issued_from = claims.iat.saturating_mul(1000);
                    if self
                        .ended
                        .session_is_ended(room, &claims.sub, serial, issued_from)
                    {
                        return Err(DomainError::SessionEnded);
                    }
                }
                // Counted, not logged per request: an outage under load would flood the log
                // (the store failures themselves are logged by the store's callers).
                tracing::debug!(room, error = %e, "store unreachable: pass checked offline");
                self.metrics
                    .store_errors
                    .with_label_values(&["verify"])
                    .inc();
                self.metrics
                    .degraded
                    .with_label_values(&["verify_offline"])
                    .inc();
                Ok(Verified {
                    claims,
                    degraded: true,
                })
            }
            Err(e) => Err(self.store_failed("verify", room, e)),
        }
    }

    /// The view of a visitor let through without the store (`store.fail_open`).
    fn fail_open_view(
        &self,
        room: &str,
        visitor: &VisitorId,
        redirect_base: Option<&str>,
    ) -> Option<VisitorView> {
        let target = redirect_base.map(str::to_string).or_else(|| {
            self.declared_rooms
                .iter()
                .find(|r| r.id == room)
                .map(|r| r.target_url.clone())
        })?;
        let now_ms = crate::clock::wall_ms();
        let ttl = self.settings.store.fail_open_pass_secs;
        let pass = self
            .passes
            .issue_fail_open(room, visitor.as_str(), now_ms, ttl);
        self.metrics
            .degraded
            .with_label_values(&["fail_open_admission"])
            .inc();
        tracing::warn!(room, "store unreachable: a visitor let through (fail_open)");
        Some(self.pass_view(
            room,
            visitor,
            pass,
            &target,
            now_ms / 1000 + ttl,
            now_ms,
            Some(DEGRADED_STORE_UNREACHABLE),
        ))
    }
}
