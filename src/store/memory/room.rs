//! A room's state under the store's lock: the line (FIFO or lanes, with the Fenwick tree
//! behind positions), sessions, the rules every operation applies (as the Lua scripts do).

use super::*;

/// Counts queued tickets at or below a ticket in O(log n) (a Fenwick tree), so a
/// position costs the same at the head of a million-long queue as at its tail. Indexes
/// are `ticket - base`; when a ticket falls outside, the tree is rebuilt from the queue
/// with the oldest queued ticket as the new base, so memory follows the queue's span,
/// not the number of tickets ever issued.
#[derive(Default)]
pub(super) struct RankIndex {
    pub(super) base: u64,
    pub(super) tree: Vec<i32>,
}

impl RankIndex {
    pub(super) fn fits(&self, t: u64) -> bool {
        t >= self.base && ((t - self.base + 1) as usize) < self.tree.len()
    }

    pub(super) fn add(&mut self, t: u64, d: i32) {
        let mut i = (t - self.base + 1) as usize;
        while i < self.tree.len() {
            self.tree[i] += d;
            i += i & i.wrapping_neg();
        }
    }

    /// Queued tickets `<= t`.
    pub(super) fn rank(&self, t: u64) -> u64 {
        if self.tree.is_empty() || t < self.base {
            return 0;
        }
        let mut i = ((t - self.base + 1) as usize).min(self.tree.len() - 1);
        let mut sum = 0i64;
        while i > 0 {
            sum += i64::from(self.tree[i]);
            i -= i & i.wrapping_neg();
        }
        sum.max(0) as u64
    }

    /// Rebuilds over the queue's tickets (which must include any new one).
    pub(super) fn rebuild(&mut self, queue: &BTreeMap<u64, String>) {
        let (Some(first), Some(last)) = (queue.keys().next(), queue.keys().next_back()) else {
            self.tree.clear();
            return;
        };
        self.base = *first;
        let span = (last - first + 1) as usize;
        self.tree = vec![0; (span * 2).next_power_of_two() + 1];
        // Built in one pass over the tree (each node hands its sum to its parent), not
        // one `add` per ticket: O(tree) rather than O(n log n) under the store's lock,
        // where a rebuild of a long line was a join's stall (issue 35).
        for t in queue.keys() {
            self.tree[(t - self.base + 1) as usize] += 1;
        }
        for i in 1..self.tree.len() {
            let parent = i + (i & i.wrapping_neg());
            if parent < self.tree.len() {
                self.tree[parent] += self.tree[i];
            }
        }
    }
}

/// The line, ordered as a Redis sorted set orders it (ticket, then visitor id), with each
/// lane's members also kept in their own arrival order: inside a lane tickets rise with
/// arrival, so a position is the sum over the lanes of the members at or before the
/// visitor's ticket, each counted in O(log n) ([`RankIndex`] over the lane's arrival
/// numbers). Tickets themselves are spaced by the lanes' strides (see
/// [`crate::store::LANE_STRIDE`]), too far apart to index directly.
#[derive(Default)]
pub(super) struct Line {
    pub(super) order: BTreeSet<(u64, String)>,
    pub(super) places: HashMap<String, Place>,
    /// Lane (`""`: the general line) → its members.
    pub(super) lanes: HashMap<String, LaneLine>,
}

pub(super) struct Place {
    pub(super) ticket: u64,
    pub(super) lane: String,
    /// Arrival number inside the lane.
    pub(super) seq: u64,
}

#[derive(Default)]
pub(super) struct LaneLine {
    pub(super) next: u64,
    /// Arrival number → visitor.
    pub(super) by_seq: BTreeMap<u64, String>,
    /// (ticket, visitor) → arrival number.
    pub(super) by_ticket: BTreeMap<(u64, String), u64>,
    pub(super) ranks: RankIndex,
}

impl Line {
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub(super) fn contains(&self, v: &str) -> bool {
        self.places.contains_key(v)
    }

    pub(super) fn clear(&mut self) {
        *self = Line::default();
    }

    pub(super) fn insert(&mut self, v: &str, ticket: u64, lane: &str) {
        let l = self.lanes.entry(lane.to_string()).or_default();
        // A place put back after a data loss may come before places already in its lane:
        // number the lane again in ticket order (rare: only restores do this).
        let behind = l
            .by_ticket
            .keys()
            .next_back()
            .is_some_and(|last| *last > (ticket, v.to_string()));
        l.next += 1;
        let seq = l.next;
        l.by_seq.insert(seq, v.to_string());
        l.by_ticket.insert((ticket, v.to_string()), seq);
        if l.ranks.fits(seq) {
            l.ranks.add(seq, 1);
        } else {
            l.ranks.rebuild(&l.by_seq);
        }
        self.order.insert((ticket, v.to_string()));
        self.places.insert(
            v.to_string(),
            Place {
                ticket,
                lane: lane.to_string(),
                seq,
            },
        );
        if behind {
            self.renumber(lane);
        }
    }

    /// Numbers `lane`'s members 1, 2, … in ticket order.
    pub(super) fn renumber(&mut self, lane: &str) {
        let Some(l) = self.lanes.get_mut(lane) else {
            return;
        };
        let keys: Vec<(u64, String)> = l.by_ticket.keys().cloned().collect();
        l.by_seq.clear();
        l.by_ticket.clear();
        for (i, key) in keys.into_iter().enumerate() {
            let seq = i as u64 + 1;
            l.by_seq.insert(seq, key.1.clone());
            if let Some(p) = self.places.get_mut(&key.1) {
                p.seq = seq;
            }
            l.by_ticket.insert(key, seq);
        }
        l.next = l.by_seq.len() as u64;
        l.ranks.rebuild(&l.by_seq);
    }

    /// Takes v out of the line; returns its lane.
    pub(super) fn remove(&mut self, v: &str) -> Option<String> {
        let p = self.places.remove(v)?;
        let key = (p.ticket, v.to_string());
        self.order.remove(&key);
        if let Some(l) = self.lanes.get_mut(&p.lane) {
            l.by_seq.remove(&p.seq);
            l.by_ticket.remove(&key);
            l.ranks.add(p.seq, -1);
            if l.by_seq.is_empty() {
                self.lanes.remove(&p.lane);
            }
        }
        Some(p.lane)
    }

    pub(super) fn ticket(&self, v: &str) -> Option<u64> {
        self.places.get(v).map(|p| p.ticket)
    }

    /// 1-based position (0: not in line).
    pub(super) fn position(&self, v: &str) -> u64 {
        let Some(p) = self.places.get(v) else {
            return 0;
        };
        let key = (p.ticket, v.to_string());
        self.lanes
            .values()
            .map(|l| match l.by_ticket.range(..=&key).next_back() {
                Some((_, seq)) => l.ranks.rank(*seq),
                None => 0,
            })
            .sum()
    }

    /// The first `n` in line.
    pub(super) fn heads(&self, n: usize) -> Vec<(u64, String)> {
        self.order.iter().take(n).cloned().collect()
    }

    /// Visitors waiting in `lane`.
    pub(super) fn waiting_in(&self, lane: &str) -> u64 {
        self.lanes.get(lane).map_or(0, |l| l.by_seq.len() as u64)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &String> {
        self.places.keys()
    }
}

#[derive(Default)]
pub(super) struct Room {
    pub(super) cfg: RoomConfig,
    /// The configuration's version (see the parent module's rules).
    pub(super) version: u64,
    /// The line, in admission order.
    pub(super) queue: Line,
    /// The last ticket let in from the line (`vt` in Lua).
    pub(super) last_let_in: u64,
    /// Each named lane's last ticket (`lf:<lane>` in Lua; the general line's is `seq`).
    pub(super) lane_tails: HashMap<String, u64>,
    /// Let in from each lane while the room had lanes (`a:<lane>` in Lua).
    pub(super) lane_admits: HashMap<String, u64>,
    /// queued visitor → last heartbeat.
    pub(super) heartbeats: HashMap<String, u64>,
    /// (last heartbeat, visitor), for reaping in order.
    pub(super) hb_order: BTreeSet<(u64, String)>,
    /// admitted visitor → admission.
    pub(super) sessions: HashMap<String, Admission>,
    /// (expiry, visitor), for counting live sessions and pruning in order.
    pub(super) expiries: BTreeSet<(u64, String)>,
    /// The general line's last ticket.
    pub(super) seq: u64,
    pub(super) admits: u64,
    pub(super) reaped: u64,
    /// Admission times in the last 60 s (rate cap).
    pub(super) window: VecDeque<u64>,
    pub(super) units: HashSet<String>,
    /// Admissions made by the current operation, published after it.
    pub(super) outbox: Vec<(String, Admission)>,
    /// queued visitor → join time (wait statistics).
    pub(super) join_times: HashMap<String, u64>,
    /// When the queue was last flushed (`flushed` in `st`, Lua).
    pub(super) flushed_at: Option<u64>,
    /// Visitors who released → when (`st:gone` in Lua), kept `GONE_KEEP_MS`:
    /// `restore_session` does not put back a session issued before that.
    pub(super) gone: HashMap<String, u64>,
    /// The room's stream (`st:stream` in Lua), at most `STREAM_KEEP` events, and the
    /// last id given (ms, seq).
    pub(super) stream: VecDeque<RoomEvent>,
    pub(super) stream_last: (u64, u64),
    /// Admissions and new places held until then (ms; `hold_until` in Lua): a room
    /// re-created after the store lost its data (`recreate_room`).
    pub(super) hold_until: u64,
    /// Visitors dropped for silence → when (kept for `AWAY_KEEP_MS`).
    pub(super) away: HashMap<String, u64>,
    /// Queued visitors whose page is hidden → their spell's first hide (`st:hidden` in
    /// Lua, `hold_away`), pruned two graces on.
    pub(super) hidden: HashMap<String, u64>,
    /// Places by group (`join_limited`): group → visitors, pruned lazily.
    pub(super) groups: HashMap<String, Vec<String>>,
    /// Visitors let in from the line and not seen since (as `:u` in the Lua session
    /// record; see `EtaBasis::quiet`).
    pub(super) unclaimed: HashSet<String>,
    /// (end_ms, duration_ms) of the last `ENDS_KEEP` session ends, newest first.
    pub(super) ends: VecDeque<(u64, u64)>,
    /// Per-minute history, the last [`HISTORY_MINUTES`].
    pub(super) minutes: BTreeMap<u64, MinuteStats>,
    /// The webhook deliverer's cursor, retries and dead letters (`wh:*` in Redis).
    pub(super) webhook: crate::store::webhook::WebhookState,
    /// (capacity, session_ttl_secs, max_admissions_per_minute) in force for the current
    /// operation: the event's overrides inside its window (set by [`Room::enter`]).
    pub(super) eff: (u64, u64, u64),
    /// The event's phase for the current operation (set by [`Room::enter`]).
    pub(super) phase: EventPhase,
    /// The event seed (`seed` in `st`), the pre-queue (visitor → joined, `st:pq`), its
    /// placed members (`st:pqd`), where its tickets start (`pq_base`), and whether (and
    /// how many times) it was shuffled.
    pub(super) seed: Option<String>,
    pub(super) prequeue: HashMap<String, u64>,
    pub(super) pq_placed: HashSet<String>,
    pub(super) pq_base: Option<u64>,
    pub(super) shuffled: bool,
    pub(super) shuffles: u64,
    /// The last phase of the event the stream was told of (`ev_mark` in Lua).
    pub(super) ev_mark: Option<&'static str>,
    /// The line log (`st:log` in Lua), its last seq and its epoch (`""`: none yet).
    pub(super) line_log: VecDeque<LineChange>,
    pub(super) line_seq: u64,
    pub(super) line_epoch: String,
    /// Instance → (lease end, the visitors it holds sockets for) (`st:holders` and
    /// `st:hold:<instance>` in Lua).
    pub(super) holders: HashMap<String, (u64, HashSet<String>)>,
    /// No-shows (docs/outflow.md#no-shows): admitted visitor → the deadline to present
    /// the pass (`st:claim` in Lua); visitor → until when their status says `no_show`
    /// (`st:noshow`); how many there were (`noshows` in `st`).
    pub(super) claims: HashMap<String, u64>,
    pub(super) no_shows: HashMap<String, u64>,
    pub(super) no_shows_total: u64,
}

impl Room {
    /// Starts an operation at `now`: the event's phase and the limits in force.
    pub(super) fn enter(&mut self, now: u64) {
        let c = &self.cfg;
        self.phase = EventPhase::at(
            now,
            c.prequeue_opens_at,
            c.opens_at,
            c.closes_at,
            self.shuffled,
        );
        self.eff = c.effective_limits(now);
        // The event's opening (without a pre-queue: with one, the shuffle tells it) and
        // its end go into the stream once, from the first operation after them (as
        // `mark_event` in Lua).
        let mark = match self.phase {
            EventPhase::Ended => Some("closed"),
            EventPhase::Open if c.opens_at.is_some() && c.prequeue_opens_at.is_none() => {
                Some("opened")
            }
            _ => None,
        };
        if let Some(m) = mark.filter(|m| self.ev_mark != Some(*m)) {
            self.ev_mark = Some(m);
            self.event(now, m, None, None);
        }
    }

    /// Counts a new place of v against `limit`'s group: false, taking nothing, when the
    /// group already holds the most it may (places in line, in the pre-queue, or live
    /// sessions). As in the Redis store (join_one.lua), the group's places are read, and
    /// those that ended dropped, only when it has taken `max` since it was last pruned.
    pub(super) fn take_group_place(
        &mut self,
        v: &str,
        limit: Option<&crate::store::PlaceLimit>,
        now: u64,
    ) -> bool {
        let Some(l) = limit else {
            return true;
        };
        let mut held = self.groups.remove(&l.group).unwrap_or_default();
        if held.len() as u64 >= l.max {
            held.retain(|m| {
                self.queue.contains(m) || self.prequeue.contains_key(m) || self.is_admitted(m, now)
            });
        }
        let full = held.len() as u64 >= l.max;
        if !full && !held.iter().any(|m| m == v) {
            held.push(v.to_string());
        }
        self.groups.insert(l.group.clone(), held);
        !full
    }

    /// Pre-queued visitors the shuffle has not placed yet, once the opening came: ahead
    /// of everyone in the line (as `unplaced` in Lua). 0 otherwise.
    pub(super) fn unplaced(&self, now: u64) -> u64 {
        let opened = self.cfg.opens_at.is_some_and(|o| now >= o);
        if self.phase != EventPhase::Prequeue || !opened {
            return 0;
        }
        self.prequeue.len().saturating_sub(self.pq_placed.len()) as u64
    }

    /// Closed by hand, or the event ended.
    pub(super) fn closed(&self) -> bool {
        self.cfg.closed || self.phase == EventPhase::Ended
    }

    /// As `reserve_prequeue` in Lua: once the opening came, the pre-queue's tickets are
    /// set aside so later joins queue behind all of it.
    pub(super) fn reserve_prequeue(&mut self) {
        if self.pq_base.is_some() {
            return;
        }
        let base = self.seq.max(self.last_let_in);
        self.pq_base = Some(base);
        self.seq = base + (self.prequeue.len() as u64 + 1) * crate::store::LANE_STRIDE;
    }

    pub(super) fn minute(&mut self, now: u64) -> &mut MinuteStats {
        let m = now / 60_000;
        while self
            .minutes
            .first_key_value()
            .is_some_and(|(k, _)| *k + HISTORY_MINUTES <= m)
        {
            self.minutes.pop_first();
        }
        self.minutes.entry(m).or_insert_with(|| MinuteStats {
            minute: m,
            ..MinuteStats::default()
        })
    }

    pub(super) fn view(&self, now: u64) -> RoomView {
        RoomView {
            queue_length: self.queue.len() as u64 + self.unplaced(now),
            active: self.active(now),
            capacity: self.eff.0,
            session_ttl_ms: self.eff.1 * 1000,
            stock: self.cfg.stock,
            now_ms: now,
            rate_cap_per_minute: self.eff.2,
            target_url: self.cfg.target_url.clone(),
            paused: self.cfg.paused,
            closed: self.closed(),
            mode: self.cfg.mode,
            queue_all: self.cfg.queue_all,
            admits: self.admits,
            phase: self.phase,
        }
    }

    pub(super) fn active(&self, now: u64) -> u64 {
        // Entries at or before `now` are expired but not yet reaped.
        let expired = self.expiries.range(..(now + 1, String::new())).count();
        (self.expiries.len() - expired) as u64
    }

    pub(super) fn is_admitted(&self, v: &str, now: u64) -> bool {
        self.sessions.get(v).is_some_and(|a| a.expires_at_ms > now)
    }

    /// A sign of life from a queued visitor at `now`: a heartbeat before `now` moves a
    /// step ahead of it ([`crate::store::HB_STEPS`], `beat` in Lua); one at or after `now` stays.
    pub(super) fn beat(&mut self, v: &str, now: u64) {
        if self.heartbeats.get(v).is_some_and(|&at| at >= now) {
            return;
        }
        let step = crate::store::heartbeat_step(self.cfg.heartbeat_timeout_secs * 1000);
        self.set_heartbeat(v, now + step);
    }

    /// Moves the visitor's heartbeat to `at`, never back (`ZADD GT` in Lua: a page that
    /// went to the background may have moved it ahead, `hold_away`).
    pub(super) fn set_heartbeat(&mut self, v: &str, at: u64) {
        let at = match self.heartbeats.get(v) {
            Some(old) if *old >= at => return,
            _ => at,
        };
        if let Some(old) = self.heartbeats.insert(v.to_string(), at) {
            self.hb_order.remove(&(old, v.to_string()));
        }
        self.hb_order.insert((at, v.to_string()));
    }

    pub(super) fn dequeue(&mut self, v: &str) -> bool {
        if let Some(hb) = self.heartbeats.remove(v) {
            self.hb_order.remove(&(hb, v.to_string()));
        }
        let ticket = self.queue.ticket(v);
        let left = self.queue.remove(v).is_some();
        if let Some(t) = ticket.filter(|_| left) {
            self.log_line(false, [(t, v.to_string())]);
        }
        left
    }

    /// A new configuration. Lanes switched off: from here a join only adds to `seq`, so
    /// `seq` moves past every ticket given in any lane (as `settle_tickets` in Lua).
    pub(super) fn set_cfg(&mut self, cfg: RoomConfig) {
        // Moving the pre-queue's opening or the opening starts a new event (as
        // `event_reset` in Lua).
        if (cfg.prequeue_opens_at, cfg.opens_at) != (self.cfg.prequeue_opens_at, self.cfg.opens_at)
        {
            self.seed = None;
            self.prequeue.clear();
            self.pq_placed.clear();
            self.pq_base = None;
            self.shuffled = false;
            self.shuffles = 0;
            self.ev_mark = None;
        }
        if !self.cfg.lanes.is_empty() && cfg.lanes.is_empty() {
            let top = self.lane_tails.values().copied().max().unwrap_or(0);
            self.seq = self.seq.max(self.last_let_in).max(top);
        }
        // Random mode switched off: its draws are tickets up to 2^48, so `seq` moves past
        // the line's last ticket and later arrivals queue behind those still in the draw
        // (as `settle_after_random` in Lua).
        if self.cfg.mode == QueueMode::Random && cfg.mode != QueueMode::Random {
            let top = self.queue.order.last().map_or(0, |(t, _)| *t);
            self.seq = self.seq.max(top);
        }
        self.cfg = cfg;
    }

    /// Puts v at the back of its lane (as `enqueue` in Lua).
    pub(super) fn enqueue(&mut self, v: &str, lane: Option<&str>) {
        if self.cfg.lanes.is_empty() {
            // No lanes: `seq` is past every ticket given (see set_cfg).
            self.seq += crate::store::LANE_STRIDE;
            self.queue.insert(v, self.seq, "");
            return;
        }
        let strides = crate::store::lane_strides(&self.cfg.lanes);
        let (name, stride) = match lane.and_then(|l| strides.iter().find(|(n, _)| n == l)) {
            Some((n, s)) if !n.is_empty() => (n.clone(), *s),
            _ => (String::new(), strides[0].1),
        };
        let tail = if name.is_empty() {
            self.seq
        } else {
            self.lane_tails.get(&name).copied().unwrap_or(0)
        };
        let ticket = self.last_let_in.max(tail) + stride;
        if name.is_empty() {
            self.seq = ticket;
        } else {
            self.lane_tails.insert(name.clone(), ticket);
        }
        self.queue.insert(v, ticket, &name);
    }

    /// Each lane's figures, as `lane_counts` in Lua.
    pub(super) fn lane_counts(&self) -> Vec<crate::store::LaneCount> {
        if self.cfg.lanes.is_empty() {
            return Vec::new();
        }
        let named: Vec<crate::store::LaneCount> = self
            .cfg
            .lanes
            .iter()
            .map(|l| crate::store::LaneCount {
                lane: l.name.clone(),
                waiting: self.queue.waiting_in(&l.name),
                admitted: self.lane_admits.get(&l.name).copied().unwrap_or(0),
            })
            .collect();
        let general = crate::store::LaneCount {
            lane: String::new(),
            waiting: (self.queue.len() as u64)
                .saturating_sub(named.iter().map(|l| l.waiting).sum::<u64>()),
            admitted: self.lane_admits.get("").copied().unwrap_or(0),
        };
        std::iter::once(general).chain(named).collect()
    }

    /// Records the end of v's session at `end_ms` (release or expiry), for the ETA.
    /// Unclaimed sessions are not stays: they are left out.
    pub(super) fn session_ended(&mut self, v: &str, end_ms: u64) {
        if self.unclaimed.contains(v) {
            return;
        }
        if let Some(a) = self.sessions.get(v) {
            let end = end_ms.min(a.expires_at_ms);
            self.ends
                .push_front((end, end.saturating_sub(a.issued_at_ms)));
            self.ends.truncate(crate::store::ENDS_KEEP);
        }
    }

    pub(super) fn end_session(&mut self, v: &str) -> bool {
        self.unclaimed.remove(v);
        match self.sessions.remove(v) {
            Some(a) => {
                self.expiries.remove(&(a.expires_at_ms, v.to_string()));
                true
            }
            None => false,
        }
    }

    /// The room gives no new place and admits nobody (`mode = reject`, unless `queue_all`).
    pub(super) fn rejecting(&self) -> bool {
        self.cfg.mode == QueueMode::Reject && !self.cfg.queue_all
    }

    /// Nobody is let in now: paused, closed, held, rejecting or queueing all.
    pub(super) fn holding(&self, now: u64) -> bool {
        self.cfg.paused
            || self.closed()
            || self.cfg.queue_all
            || self.cfg.mode == QueueMode::Reject
            || self.hold_until > now
            || self.phase != EventPhase::Open
    }

    /// Drops admissions older than the rate-cap window.
    pub(super) fn prune_window(&mut self, now: u64) {
        while self
            .window
            .front()
            .is_some_and(|&t| t <= now - WINDOW_MS.min(now))
        {
            self.window.pop_front();
        }
    }

    pub(super) fn free_slots(&mut self, now: u64) -> u64 {
        // Passthrough: only stock limits admissions (capacity and the rate cap ignored).
        // The window is still pruned, so it stays one minute long while admissions pour
        // in (and the cap counts them again at once after a switch back to fifo).
        if self.cfg.mode == QueueMode::Passthrough {
            self.prune_window(now);
            return self.cfg.stock.unwrap_or(u64::MAX);
        }
        let mut free = self.eff.0.saturating_sub(self.active(now));
        if let Some(stock) = self.cfg.stock {
            free = free.min(stock);
        }
        if self.eff.2 > 0 && free > 0 {
            self.prune_window(now);
            let left = self.eff.2.saturating_sub(self.window.len() as u64);
            free = free.min(left);
        }
        free
    }

    /// Adds an event to the room's stream (`event()` in Lua), ids `<ms>-<seq>` as Redis
    /// makes them.
    pub(super) fn event(&mut self, now: u64, kind: &str, v: Option<&str>, serial: Option<u64>) {
        self.event_with_ticket(now, kind, v, serial, None);
    }

    /// [`Self::event`] with the ticket an admission from the line held.
    pub(super) fn event_with_ticket(
        &mut self,
        now: u64,
        kind: &str,
        v: Option<&str>,
        serial: Option<u64>,
        ticket: Option<u64>,
    ) {
        let (ms, seq) = self.stream_last;
        self.stream_last = if now > ms { (now, 0) } else { (ms, seq + 1) };
        self.stream.push_back(RoomEvent {
            id: format!("{}-{}", self.stream_last.0, self.stream_last.1),
            kind: kind.to_string(),
            visitor: v.map(str::to_string),
            serial,
            ticket,
        });
        while self.stream.len() as u64 > STREAM_KEEP {
            self.stream.pop_front();
        }
    }

    /// Lets `v` in; `ticket`: the one it held in the line (None: a walk-in).
    pub(super) fn admit(&mut self, v: &str, now: u64, ticket: Option<u64>) {
        self.admits += 1;
        let wait = self
            .join_times
            .remove(v)
            .map(|t| now.saturating_sub(t))
            .unwrap_or(0);
        let m = self.minute(now);
        m.admissions += 1;
        m.waits[wait_bucket(wait)] += 1;
        // A re-admission replaces an expired, not yet reaped session.
        self.end_session(v);
        let a = Admission {
            serial: self.admits,
            issued_at_ms: now,
            expires_at_ms: now + self.eff.1 * 1000,
        };
        self.expiries.insert((a.expires_at_ms, v.to_string()));
        self.outbox.push((v.to_string(), a.clone()));
        let serial = a.serial;
        self.sessions.insert(v.to_string(), a);
        // The pass must be presented by now + the claim timeout (`present`), or
        // `reap_no_shows` ends the session; a new admission clears an earlier no-show.
        if self.cfg.claim_timeout_secs > 0 {
            self.claims
                .insert(v.to_string(), now + self.cfg.claim_timeout_secs * 1000);
            self.no_shows.remove(v);
        }
        self.event_with_ticket(now, "admission", Some(v), Some(serial), ticket);
        if self.cfg.stock.is_some() && self.units.insert(v.to_string()) {
            let left = self.cfg.stock.map_or(0, |s| s.saturating_sub(1));
            self.cfg.stock = Some(left);
            self.event(now, "stock_unit_claimed", Some(v), Some(serial));
            if left == 0 {
                self.event(now, "sold_out", None, None);
            }
        }
        if self.eff.2 > 0 {
            self.window.push_back(now);
        }
    }

    pub(super) fn promote(&mut self, now: u64, limit: u64) -> Vec<String> {
        if self.holding(now) {
            return Vec::new();
        }
        let free = self.free_slots(now).min(limit);
        let heads = self.queue.heads(free as usize);
        if let Some((ticket, _)) = heads.last() {
            self.last_let_in = *ticket;
        }
        let count_admits = !self.cfg.lanes.is_empty();
        self.log_line(false, heads.iter().cloned());
        heads
            .into_iter()
            .map(|(ticket, v)| {
                let lane = self.queue.remove(&v).unwrap_or_default();
                if let Some(hb) = self.heartbeats.remove(&v) {
                    self.hb_order.remove(&(hb, v.clone()));
                }
                if count_admits {
                    *self.lane_admits.entry(lane).or_default() += 1;
                }
                self.admit(&v, now, Some(ticket));
                self.unclaimed.insert(v.clone());
                v
            })
            .collect()
    }

    pub(super) fn waiting_state(&self, queued: bool) -> VisitorState {
        if self.closed() {
            VisitorState::Closed
        } else if self.phase == EventPhase::Scheduled {
            VisitorState::Scheduled
        } else if self.phase == EventPhase::Prequeue && !queued {
            VisitorState::Prequeue
        } else if self.cfg.stock == Some(0) {
            VisitorState::SoldOut
        } else if self.rejecting() {
            VisitorState::Rejected
        } else if !queued {
            VisitorState::NotQueued
        } else if self.cfg.paused || self.cfg.queue_all {
            VisitorState::Paused
        } else {
            VisitorState::Queued
        }
    }

    pub(super) fn snapshot(
        &self,
        state: VisitorState,
        v: &str,
        now: u64,
        promoted: Vec<String>,
    ) -> Snapshot {
        let ahead = self.unplaced(now);
        let (position, admission) = if state == VisitorState::Admitted {
            (0, self.sessions.get(v).cloned())
        } else {
            let p = self.queue.position(v);
            (if p > 0 { p + ahead } else { 0 }, None)
        };
        Snapshot {
            state,
            position,
            queue_length: self.queue.len() as u64 + ahead,
            active: self.active(now),
            capacity: self.eff.0,
            session_ttl_ms: self.eff.1 * 1000,
            stock: self.cfg.stock,
            admission,
            now_ms: now,
            promoted,
            rate_cap_per_minute: self.eff.2,
            rejoined_after_absence: false,
            admits: self.admits,
            target_url: self.cfg.target_url.clone(),
            ticket: 0,
            joined_at_ms: 0,
            heartbeat_ms: if position > 0 {
                self.heartbeats.get(v).copied().unwrap_or(0)
            } else {
                0
            },
            line: LineCursor {
                epoch: self.line_epoch.clone(),
                seq: self.line_seq,
            },
        }
    }

    /// Where v stands (see `Store::status`); `placed`: with a queued visitor's ticket and
    /// join time (`Store::status_placed`).
    pub(super) fn status(&mut self, v: &str, now: u64, placed: bool) -> Snapshot {
        if self.is_admitted(v, now) {
            self.unclaimed.remove(v);
            return self.snapshot(VisitorState::Admitted, v, now, Vec::new());
        }
        let queued = self.queue.contains(v);
        if queued {
            self.beat(v, now);
        }
        let mut state = self.waiting_state(queued);
        if state == VisitorState::NotQueued
            && self.cfg.claim_timeout_secs > 0
            && self.no_shows.get(v).is_some_and(|&until| until > now)
        {
            state = VisitorState::NoShow;
        }
        if placed {
            self.snapshot_placed(state, v, now, Vec::new())
        } else {
            self.snapshot(state, v, now, Vec::new())
        }
    }

    /// [`Self::snapshot`] with a queued visitor's ticket and join time (join, restore).
    pub(super) fn snapshot_placed(
        &self,
        state: VisitorState,
        v: &str,
        now: u64,
        promoted: Vec<String>,
    ) -> Snapshot {
        let mut s = self.snapshot(state, v, now, promoted);
        if s.position > 0 {
            s.ticket = self.queue.ticket(v).unwrap_or(0);
            s.joined_at_ms = self.join_times.get(v).copied().unwrap_or(0);
        }
        s
    }

    /// `Store::present` (docs/outflow.md#no-shows).
    pub(super) fn present(&mut self, v: &str, serial: u64, now: u64) -> bool {
        let live =
            self.is_admitted(v, now) && self.sessions.get(v).is_some_and(|a| a.serial == serial);
        if live {
            self.unclaimed.remove(v);
            self.claims.remove(v);
        }
        live
    }

    /// `Store::reap_no_shows`: as reap.lua's no-show part, the same rule.
    pub(super) fn reap_no_shows(&mut self, now: u64, batch: usize) -> Vec<(String, Admission)> {
        let mut out = Vec::new();
        if self.cfg.claim_timeout_secs == 0 {
            return out;
        }
        let mut due: Vec<(u64, String)> = self
            .claims
            .iter()
            .filter(|(_, &at)| at <= now)
            .map(|(v, &at)| (at, v.clone()))
            .collect();
        due.sort();
        due.truncate(batch);
        for (_, v) in due {
            self.claims.remove(&v);
            if !self.is_admitted(&v, now) {
                continue;
            }
            let Some(a) = self.sessions.get(&v).cloned() else {
                continue;
            };
            self.end_session(&v);
            self.no_shows.insert(v.clone(), a.expires_at_ms);
            self.gone.insert(v.clone(), now);
            self.no_shows_total += 1;
            self.event(now, "no_show", Some(&v), Some(a.serial));
            out.push((v, a));
        }
        self.no_shows.retain(|_, &mut until| until > now);
        out
    }
}
