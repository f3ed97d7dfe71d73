//! A queued visitor's status answered by this instance, from its view of the line, when
//! the store would only have read (docs/design.md#status-from-the-line-view).
//!
//! A status of a queued visitor reads the room and the visitor's rank, and writes only
//! the heartbeat, and that only once per heartbeat step ([`crate::store::heartbeat_step`]).
//! Each join and status reply says until when the heartbeat holds and the line log's
//! cursor its position is exact at ([`Snapshot::heartbeat_ms`], [`Snapshot::line`]); the
//! hub follows the line log of every room it answered for (its one `tick` a second, as for
//! its sockets) and publishes the room's figures and the log's last entries here. Until the
//! heartbeat is due, a status is then answered here: the position the store gave, moved up
//! by each place that left the line ahead of it since and down by each put back (the
//! sockets' rule, [`crate::hub::count`]), the room's figures from the hub's last tick.
//!
//! Only where that is exact: a room that is open, first come first served, without lanes
//! (every new place at the back); a view at most [`FRESH`] old (a hub that cannot reach the
//! store stops answering, and the store's own answer, or its error, comes back); a
//! heartbeat at least [`HEARTBEAT_MARGIN_MS`] ahead of the store's clock; the visitor's own
//! place not in the log since. Anything else asks the store, as before.
//!
//! ## Admitted visitors
//! An admitted visitor's status (issue 35) reads the session and the room's figures, and
//! writes only the session's first claim (`claim` in status.lua: the visitor came back for
//! the answer; an unclaimed session is left out of the ETA's stays). So once the store has
//! answered one status of the session ([`LineViews::learn_admitted`]: that answer made the
//! claim), the next are answered here from the session it gave and the hub's view of the
//! room, in any room state (admitted is admitted, closed or paused), while:
//! - the view is at most [`FRESH`] old and of the line epoch the session was learned in (a
//!   flushed or lost line, a deleted room: ask the store);
//! - the session ends at least [`HEARTBEAT_MARGIN_MS`] after the store's clock (its expiry
//!   is the store's to tell, and the reaper's to act on);
//! - the session is not in the revocation log as this instance last read it, within
//!   [`crate::domain::revoked::FRESH`] (checked by the engine): every early end — a
//!   release or removal on any instance, a revoked pass, a no-show taken back — is written
//!   there, so an ended session is answered here at most one poll (250 ms) after its end
//!   reached the log, as a status racing the release would be. A release through this
//!   instance forgets the visitor at once, and the visitors it let in (their admission's
//!   pub/sub message may come late).
//!
//! What stays the store's: the first status after an admission (the claim), every status
//! near the session's end, and rooms that renew sessions on activity (another instance's
//! renewal moves the end, and no log says so: the engine does not learn them).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::room::QueueMode;
use crate::store::line::CHANGES_KEEP;
use crate::store::{
    Admission, LineChange, LineCursor, RoomState, RoomTick, RoomView, Snapshot, VisitorState,
    WatchEntry,
};

/// How old the hub's view of a room may be for a status answered from it (its tick is
/// one a second).
pub const FRESH: Duration = Duration::from_millis(2_500);

/// How far ahead of the store's clock (as this instance reckons it from the last tick) a
/// heartbeat must be for a status answered here: the store writes a heartbeat only once it
/// is behind its clock, and the reckoning may lag by a tick's round trip.
pub const HEARTBEAT_MARGIN_MS: u64 = 1_000;

/// How long the hub follows a room's line after the last status it learned there.
pub const FOLLOW_FOR: Duration = Duration::from_secs(60);

/// The most visitors remembered per shard (16 shards): 65,536 each, ~1 M in all.
const MAX_PER_SHARD: usize = 1 << 16;
const SHARDS: usize = 16;

/// What the store last said of one queued or admitted visitor.
#[derive(Clone, Debug)]
struct Learned {
    room: String,
    /// The (claimed) session of an admitted visitor; `None`: queued.
    admission: Option<Admission>,
    ticket: u64,
    joined_at_ms: u64,
    position: u64,
    queue_length: u64,
    active: u64,
    admits: u64,
    /// Until when (store ms) an answer here may stand: the heartbeat of a queued
    /// visitor, the session's end of an admitted one.
    until_ms: u64,
    line: LineCursor,
}

/// The hub's view of one room's line.
#[derive(Debug)]
struct RoomLine {
    view: RoomView,
    cursor: LineCursor,
    exact: bool,
    /// When the tick's answer arrived.
    at: Instant,
    /// The log's entries after `from` up to `cursor.seq`, in order.
    from: u64,
    changes: VecDeque<LineChange>,
}

/// The rooms' views and the visitors learned, shared by the hub (writes once a tick) and
/// the status handlers (read).
pub struct LineViews {
    enabled: bool,
    rooms: RwLock<HashMap<String, RoomLine>>,
    learned: Vec<Mutex<HashMap<String, Learned>>>,
    follow: Mutex<HashMap<String, Instant>>,
}

impl LineViews {
    /// `enabled`: `store.local_status`; off, nothing is learned and every status asks
    /// the store.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            rooms: RwLock::default(),
            learned: (0..SHARDS).map(|_| Mutex::default()).collect(),
            follow: Mutex::default(),
        }
    }

    fn shard(&self, visitor: &str) -> &Mutex<HashMap<String, Learned>> {
        // FNV-1a: visitor ids are HMAC-signed, so any spread will do.
        let h = visitor.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        &self.learned[(h % SHARDS as u64) as usize]
    }

    /// Remembers what the store just said of `visitor` in `room` (a join or a status):
    /// a queued place with its ticket, heartbeat and cursor is kept (and the room
    /// followed); anything else forgets the visitor.
    pub fn learn(&self, room: &str, visitor: &str, s: &Snapshot, now: Instant) {
        if !self.enabled {
            return;
        }
        let usable =
            s.state == VisitorState::Queued && s.position > 0 && s.ticket > 0 && s.heartbeat_ms > 0;
        if !usable {
            return self.forget(room, visitor);
        }
        self.keep(
            room,
            visitor,
            Learned {
                room: room.to_string(),
                admission: None,
                ticket: s.ticket,
                joined_at_ms: s.joined_at_ms,
                position: s.position,
                queue_length: s.queue_length,
                active: s.active,
                admits: s.admits,
                until_ms: s.heartbeat_ms,
                line: s.line.clone(),
            },
            now,
        );
    }

    /// Remembers the session a store *status* just gave an admitted `visitor` (that status
    /// claimed it: a join's answer does not, so joins go through [`Self::learn`], which
    /// forgets them). Anything else forgets the visitor. A session in a line without an
    /// epoch yet is not kept either, but its room is followed: the hub's first tick
    /// starts one, and the visitor's next status learns it.
    pub fn learn_admitted(&self, room: &str, visitor: &str, s: &Snapshot, now: Instant) {
        if !self.enabled {
            return;
        }
        let a = match (&s.admission, s.state) {
            (Some(a), VisitorState::Admitted) => a,
            _ => return self.forget(room, visitor),
        };
        if s.line.epoch.is_empty() {
            self.forget(room, visitor);
            return self.follow_room(room, now);
        }
        self.keep(
            room,
            visitor,
            Learned {
                room: room.to_string(),
                admission: Some(a.clone()),
                ticket: 0,
                joined_at_ms: 0,
                position: 0,
                queue_length: s.queue_length,
                active: s.active,
                admits: s.admits,
                until_ms: a.expires_at_ms,
                line: s.line.clone(),
            },
            now,
        );
    }

    /// Keeps `l` for `visitor` (room permitting) and follows its room.
    fn keep(&self, room: &str, visitor: &str, l: Learned, now: Instant) {
        let mut shard = self.shard(visitor).lock().unwrap();
        if shard.len() < MAX_PER_SHARD || shard.contains_key(visitor) {
            shard.insert(visitor.to_string(), l);
        }
        drop(shard);
        self.follow_room(room, now);
    }

    /// Follows `room`'s line for [`FOLLOW_FOR`] from `now`.
    fn follow_room(&self, room: &str, now: Instant) {
        // Follow the room even before its log has an epoch: the hub's tick starts one.
        // (Every join and store status passes here: the room's name is copied only the
        // first time.)
        let mut follow = self.follow.lock().unwrap();
        match follow.get_mut(room) {
            Some(until) => *until = now + FOLLOW_FOR,
            None => {
                follow.insert(room.to_string(), now + FOLLOW_FOR);
            }
        }
    }

    /// Forgets `visitor` in `room` (admitted, released): its next status asks the store.
    pub fn forget(&self, room: &str, visitor: &str) {
        let mut shard = self.shard(visitor).lock().unwrap();
        if shard.get(visitor).is_some_and(|l| l.room == room) {
            shard.remove(visitor);
        }
    }

    /// Forgets `room`'s view (an admin changed the room here): its statuses ask the store
    /// until the hub's next tick.
    pub fn drop_room(&self, room: &str) {
        self.rooms.write().unwrap().remove(room);
    }

    /// Forgets every room's view (the store lost its data): statuses ask the store until
    /// the hub's next tick, whose new epoch no visitor learned before matches.
    pub fn clear(&self) {
        self.rooms.write().unwrap().clear();
    }

    /// The rooms the hub should follow at `now` (those learned in lately); forgets the
    /// rest, with their views.
    pub fn followed(&self, now: Instant) -> Vec<String> {
        if !self.enabled {
            return Vec::new();
        }
        let mut follow = self.follow.lock().unwrap();
        follow.retain(|_, until| *until > now);
        let rooms: Vec<String> = follow.keys().cloned().collect();
        drop(follow);
        self.rooms.write().unwrap().retain(|r, _| rooms.contains(r));
        rooms
    }

    /// The rooms learned in lately that have no view yet (the hub looks at them at once).
    pub fn unviewed(&self, now: Instant) -> Vec<String> {
        if !self.enabled {
            return Vec::new();
        }
        let follow = self.follow.lock().unwrap();
        let rooms = self.rooms.read().unwrap();
        follow
            .iter()
            .filter(|(r, until)| **until > now && !rooms.contains_key(*r))
            .map(|(r, _)| r.clone())
            .collect()
    }

    /// Where the hub's view of `room`'s log stands (to ask the store from).
    pub fn cursor(&self, room: &str) -> Option<LineCursor> {
        let rooms = self.rooms.read().unwrap();
        rooms.get(room).map(|l| l.cursor.clone())
    }

    /// The hub's tick of `room` (asked with `since`) answered at `at`: its figures and the
    /// log's new entries. Rooms nobody learned in lately are not kept.
    pub fn publish(&self, room: &str, since: Option<&LineCursor>, t: &RoomTick, at: Instant) {
        if !self.enabled || !self.follow.lock().unwrap().contains_key(room) {
            return;
        }
        let mut rooms = self.rooms.write().unwrap();
        let line = rooms.entry(room.to_string()).or_insert_with(|| RoomLine {
            view: t.view.clone(),
            cursor: t.cursor.clone(),
            exact: t.exact,
            at,
            from: t.cursor.seq,
            changes: VecDeque::new(),
        });
        // The new entries continue the kept ones only if the tick was asked from where
        // they end, and every entry is there, in order.
        let continues = since == Some(&line.cursor)
            && t.cursor.epoch == line.cursor.epoch
            && t.changes.as_ref().is_some_and(|c| {
                c.iter()
                    .zip(line.cursor.seq + 1..)
                    .all(|(c, seq)| c.seq == seq)
                    && line.cursor.seq + c.len() as u64 == t.cursor.seq
            });
        if continues {
            line.changes.extend(t.changes.iter().flatten().cloned());
            while line.changes.len() as u64 > CHANGES_KEEP {
                line.changes.pop_front();
                line.from += 1;
            }
        } else {
            line.changes.clear();
            line.from = t.cursor.seq;
        }
        line.view = t.view.clone();
        line.cursor = t.cursor.clone();
        line.exact = t.exact;
        line.at = at;
    }

    /// `visitor`'s status in `room` answered here at `now`, or `None`: ask the store.
    pub fn answer(&self, room: &str, visitor: &str, now: Instant) -> Option<Snapshot> {
        if !self.enabled {
            return None;
        }
        let rooms = self.rooms.read().unwrap();
        let line = rooms.get(room)?;
        let age = now.checked_duration_since(line.at)?;
        if age > FRESH {
            return None;
        }
        // The store's clock now, as reckoned from the tick's reading of it.
        let store_now = line.view.now_ms + age.as_millis() as u64;
        let mut shard = self.shard(visitor).lock().unwrap();
        let l = shard.get_mut(visitor)?;
        if l.room != room
            || l.line.epoch != line.cursor.epoch
            || l.until_ms < store_now + HEARTBEAT_MARGIN_MS
        {
            return None;
        }
        if let Some(a) = &l.admission {
            // Admitted whatever the room's state; its figures are the view's.
            let mut s = line.view.snapshot(&WatchEntry::Admitted(a.clone()));
            s.now_ms = store_now;
            s.line = line.cursor.clone();
            return Some(s);
        }
        if !line.exact
            || line.view.room_state() != RoomState::Open
            || line.view.mode != QueueMode::Fifo
        {
            return None;
        }
        let (position, queue_length, active, admits) = if l.line.seq > line.cursor.seq {
            // Learned after the hub's last tick: the store's own figures are newer.
            (l.position, l.queue_length, l.active, l.admits)
        } else {
            if l.line.seq < line.from {
                return None; // the kept entries no longer reach back that far
            }
            let mut position = l.position;
            for c in line.changes.iter().skip((l.line.seq - line.from) as usize) {
                if c.visitor == visitor {
                    return None; // its own place left the line (or came back)
                }
                if c.ticket < l.ticket {
                    position = if c.back {
                        position + 1
                    } else {
                        position.checked_sub(1)?
                    };
                }
            }
            if position == 0 {
                return None;
            }
            // Counted up to the hub's cursor: the next answer counts from there.
            l.position = position;
            l.line.seq = line.cursor.seq;
            let v = &line.view;
            (position, v.queue_length.max(position), v.active, v.admits)
        };
        let mut s = line.view.snapshot(&WatchEntry::Queued { position });
        s.queue_length = queue_length;
        s.active = active;
        s.admits = admits;
        s.now_ms = store_now;
        s.ticket = l.ticket;
        s.joined_at_ms = l.joined_at_ms;
        s.heartbeat_ms = l.until_ms;
        s.line = l.line.clone();
        Some(s)
    }

    /// Forgets the visitors whose heartbeat is due (or whose session ends) by
    /// `store_now_ms` (no status of theirs can be answered here any more); returns how
    /// many are left.
    pub fn sweep(&self, store_now_ms: u64) -> usize {
        self.learned
            .iter()
            .map(|s| {
                let mut s = s.lock().unwrap();
                s.retain(|_, l| l.until_ms >= store_now_ms + HEARTBEAT_MARGIN_MS);
                s.len()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::schedule::EventPhase;

    fn view(now_ms: u64, queue_length: u64) -> RoomView {
        RoomView {
            queue_length,
            active: 1,
            capacity: 1,
            session_ttl_ms: 60_000,
            stock: None,
            now_ms,
            rate_cap_per_minute: 0,
            target_url: "http://t/".into(),
            paused: false,
            closed: false,
            mode: QueueMode::Fifo,
            queue_all: false,
            admits: 1,
            phase: EventPhase::Open,
        }
    }

    fn cursor(seq: u64) -> LineCursor {
        LineCursor {
            epoch: "e1".into(),
            seq,
        }
    }

    fn tick(now_ms: u64, qlen: u64, seq: u64, changes: Vec<LineChange>) -> RoomTick {
        RoomTick {
            view: view(now_ms, qlen),
            cursor: cursor(seq),
            exact: true,
            changes: Some(changes),
            placed: Vec::new(),
            rehold: false,
        }
    }

    fn left(seq: u64, ticket: u64, visitor: &str) -> LineChange {
        LineChange {
            seq,
            ticket,
            visitor: visitor.into(),
            back: false,
        }
    }

    /// What a status reply says of a queued visitor at ticket `ticket`, position `pos`.
    fn queued(pos: u64, ticket: u64, hb: u64, seq: u64) -> Snapshot {
        let mut s = view(10_000, 10).snapshot(&WatchEntry::Queued { position: pos });
        s.ticket = ticket;
        s.joined_at_ms = 9_000;
        s.heartbeat_ms = hb;
        s.line = cursor(seq);
        s
    }

    #[test]
    fn places_that_left_ahead_move_a_learned_visitor_up_and_none_behind() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn("r", "v5", &queued(5, 5000, 20_000, 3), t0);
        lv.learn("r", "v2", &queued(2, 2000, 20_000, 3), t0);
        lv.publish("r", None, &tick(10_000, 10, 3, vec![]), t0);
        // 1000 and 3000 left (ahead of v5; 1000 ahead of v2), 9000 behind both; 1500 came back.
        let mut back = left(7, 1500, "b");
        back.back = true;
        let changes = vec![
            left(4, 1000, "a"),
            left(5, 3000, "c"),
            left(6, 9000, "z"),
            back,
        ];
        lv.publish("r", Some(&cursor(3)), &tick(11_000, 12, 7, changes), t0);
        let s = lv.answer("r", "v5", t0).expect("answered here");
        assert_eq!(
            (s.state, s.position, s.queue_length),
            (VisitorState::Queued, 4, 12)
        );
        assert_eq!(
            (s.ticket, s.joined_at_ms, s.heartbeat_ms),
            (5000, 9_000, 20_000)
        );
        assert_eq!(s.line, cursor(7));
        assert_eq!(lv.answer("r", "v2", t0).unwrap().position, 2);
        // Counted once: a later tick with nothing new leaves the places as they are.
        lv.publish("r", Some(&cursor(7)), &tick(11_500, 12, 7, vec![]), t0);
        assert_eq!(lv.answer("r", "v5", t0).unwrap().position, 4);
    }

    #[test]
    fn a_visitor_whose_own_place_is_in_the_log_asks_the_store() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn("r", "v", &queued(2, 2000, 20_000, 0), t0);
        lv.publish("r", None, &tick(10_000, 2, 0, vec![]), t0);
        assert!(lv.answer("r", "v", t0).is_some());
        lv.publish(
            "r",
            Some(&cursor(0)),
            &tick(10_100, 1, 1, vec![left(1, 2000, "v")]),
            t0,
        );
        assert!(lv.answer("r", "v", t0).is_none(), "admitted or released");
    }

    #[test]
    fn a_due_heartbeat_a_stale_view_or_a_room_not_plainly_open_asks_the_store() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn("r", "v", &queued(2, 2000, 12_000, 0), t0);
        lv.publish("r", None, &tick(10_000, 2, 0, vec![]), t0);
        assert!(lv.answer("r", "v", t0).is_some(), "2 s of heartbeat left");
        // The store's clock, reckoned from the tick, within the margin of the heartbeat.
        assert!(lv
            .answer("r", "v", t0 + Duration::from_millis(1_100))
            .is_none());
        // A view older than FRESH.
        lv.learn("r", "v", &queued(2, 2000, 60_000, 0), t0);
        assert!(lv
            .answer("r", "v", t0 + FRESH + Duration::from_millis(1))
            .is_none());
        // Paused, random, lanes (not exact).
        let mut t = tick(10_000, 2, 0, vec![]);
        t.view.paused = true;
        lv.publish("r", Some(&cursor(0)), &t, t0);
        assert!(lv.answer("r", "v", t0).is_none());
        let mut t = tick(10_000, 2, 0, vec![]);
        t.view.mode = QueueMode::Random;
        lv.publish("r", Some(&cursor(0)), &t, t0);
        assert!(lv.answer("r", "v", t0).is_none());
        let mut t = tick(10_000, 2, 0, vec![]);
        t.exact = false;
        lv.publish("r", Some(&cursor(0)), &t, t0);
        assert!(lv.answer("r", "v", t0).is_none());
        lv.publish("r", Some(&cursor(0)), &tick(10_000, 2, 0, vec![]), t0);
        assert!(lv.answer("r", "v", t0).is_some());
        // Another room, another epoch.
        assert!(lv.answer("s", "v", t0).is_none());
        let mut t = tick(10_000, 2, 0, vec![]);
        t.cursor.epoch = "e2".into();
        lv.publish("r", Some(&cursor(0)), &t, t0);
        assert!(lv.answer("r", "v", t0).is_none());
    }

    #[test]
    fn a_gap_in_the_log_or_a_visitor_learned_before_the_kept_entries_asks_the_store() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn("r", "v", &queued(5, 5000, 60_000, 2), t0);
        lv.publish("r", None, &tick(10_000, 5, 3, vec![]), t0);
        // Learned at seq 2, the view's entries start after 3.
        assert!(lv.answer("r", "v", t0).is_none());
        lv.learn("r", "v", &queued(5, 5000, 60_000, 3), t0);
        assert_eq!(lv.answer("r", "v", t0).unwrap().position, 5);
        // A tick from a cursor the view does not end at: the kept entries start over.
        lv.publish(
            "r",
            Some(&cursor(1)),
            &tick(10_000, 4, 4, vec![left(4, 1, "a")]),
            t0,
        );
        assert!(lv.answer("r", "v", t0).is_none());
        // Entries missing in the middle (seq 5 absent): the same.
        lv.learn("r", "v", &queued(4, 5000, 60_000, 4), t0);
        lv.publish(
            "r",
            Some(&cursor(4)),
            &tick(10_000, 2, 6, vec![left(6, 2, "b")]),
            t0,
        );
        assert!(lv.answer("r", "v", t0).is_none());
    }

    #[test]
    fn a_learned_visitor_newer_than_the_view_keeps_the_stores_figures() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.publish("r", None, &tick(10_000, 3, 3, vec![]), t0); // not followed yet: dropped
        assert!(lv.cursor("r").is_none());
        lv.learn("r", "v", &queued(7, 7000, 60_000, 0), t0);
        lv.publish("r", None, &tick(10_000, 3, 0, vec![]), t0);
        lv.learn("r", "v", &queued(7, 7000, 60_000, 5), t0);
        let s = lv.answer("r", "v", t0).unwrap();
        assert_eq!((s.position, s.queue_length), (7, 10), "the reply's figures");
    }

    #[test]
    fn what_is_not_a_queued_place_is_forgotten_and_nothing_is_kept_when_off() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn("r", "v", &queued(2, 2000, 60_000, 0), t0);
        lv.publish("r", None, &tick(10_000, 2, 0, vec![]), t0);
        assert!(lv.answer("r", "v", t0).is_some());
        let mut admitted = queued(0, 0, 0, 0);
        admitted.state = VisitorState::Admitted;
        lv.learn("r", "v", &admitted, t0);
        assert!(lv.answer("r", "v", t0).is_none());
        lv.learn("r", "v", &queued(2, 2000, 60_000, 0), t0);
        lv.forget("s", "v");
        assert!(lv.answer("r", "v", t0).is_some(), "another room's");
        lv.forget("r", "v");
        assert!(
            lv.answer("r", "v", t0).is_none(),
            "admitted, as the hub heard"
        );
        assert_eq!(lv.followed(t0), vec!["r".to_string()]);
        assert!(lv.unviewed(t0).is_empty(), "r has a view");
        lv.drop_room("r");
        assert_eq!(lv.unviewed(t0), vec!["r".to_string()]);
        lv.publish("r", None, &tick(10_000, 2, 0, vec![]), t0);
        lv.clear();
        assert_eq!(lv.unviewed(t0), vec!["r".to_string()], "cleared");
        assert!(lv.followed(t0 + FOLLOW_FOR).is_empty());
        assert!(lv.cursor("r").is_none(), "its view forgotten with it");
        let off = LineViews::new(false);
        off.learn("r", "v", &queued(2, 2000, 60_000, 0), t0);
        off.publish("r", None, &tick(10_000, 2, 0, vec![]), t0);
        assert!(off.answer("r", "v", t0).is_none());
        assert!(off.followed(t0).is_empty());
    }

    /// What a store status says of an admitted visitor whose session ends at `exp`.
    fn admitted(serial: u64, exp: u64, epoch: &str) -> Snapshot {
        let a = Admission {
            serial,
            issued_at_ms: 9_000,
            expires_at_ms: exp,
        };
        let mut s = view(10_000, 10).snapshot(&WatchEntry::Admitted(a));
        s.line = LineCursor {
            epoch: epoch.into(),
            seq: 0,
        };
        s
    }

    #[test]
    fn an_admitted_visitor_is_answered_from_the_view_in_any_room_state_until_near_the_end() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn_admitted("r", "v", &admitted(7, 13_000, "e1"), t0);
        assert_eq!(
            lv.unviewed(t0),
            vec!["r".to_string()],
            "its room is followed"
        );
        let mut t = tick(10_000, 4, 0, vec![]);
        t.view.paused = true; // admitted all the same
        t.exact = false;
        lv.publish("r", None, &t, t0);
        let s = lv.answer("r", "v", t0).expect("answered here");
        assert_eq!(s.state, VisitorState::Admitted);
        assert_eq!(s.admission.as_ref().map(|a| a.serial), Some(7));
        assert_eq!((s.queue_length, s.position, s.now_ms), (4, 0, 10_000));
        assert_eq!(s.target_url, "http://t/");
        // 2 s before its end: answered; within the margin of it: the store's.
        assert!(lv
            .answer("r", "v", t0 + Duration::from_millis(1_900))
            .is_some());
        assert!(lv
            .answer("r", "v", t0 + Duration::from_millis(2_100))
            .is_none());
        // A stale view, another epoch (a flushed or lost line), another room: the store's.
        assert!(lv
            .answer("r", "v", t0 + FRESH + Duration::from_millis(1))
            .is_none());
        let mut t = tick(10_000, 4, 0, vec![]);
        t.cursor.epoch = "e2".into();
        lv.publish("r", Some(&cursor(0)), &t, t0);
        assert!(lv.answer("r", "v", t0).is_none());
        assert!(lv.answer("s", "v", t0).is_none());
        // Released here (or re-admitted, as the hub heard): forgotten.
        lv.learn_admitted("r", "v", &admitted(7, 13_000, "e2"), t0);
        assert!(lv.answer("r", "v", t0).is_some());
        lv.forget("r", "v");
        assert!(lv.answer("r", "v", t0).is_none());
        // Swept once its end is due.
        lv.learn_admitted("r", "v", &admitted(7, 13_000, "e2"), t0);
        assert_eq!(lv.sweep(11_900), 1);
        assert_eq!(lv.sweep(12_100), 0);
    }

    #[test]
    fn an_admitted_answer_without_a_line_epoch_or_a_session_is_not_learned() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn_admitted("r", "v", &admitted(7, 60_000, ""), t0);
        lv.publish("r", None, &tick(10_000, 4, 0, vec![]), t0);
        assert!(lv.answer("r", "v", t0).is_none(), "no epoch when learned");
        lv.learn_admitted("r", "v", &admitted(7, 60_000, "e1"), t0);
        assert!(lv.answer("r", "v", t0).is_some());
        // A status that is not admitted (released elsewhere, told by the store) forgets.
        lv.learn_admitted("r", "v", &queued(0, 0, 0, 0), t0);
        assert!(lv.answer("r", "v", t0).is_none());
        // A join's admitted answer (no claim made) goes through learn: forgotten too.
        lv.learn_admitted("r", "v", &admitted(7, 60_000, "e1"), t0);
        lv.learn("r", "v", &admitted(7, 60_000, "e1"), t0);
        assert!(lv.answer("r", "v", t0).is_none());
        let off = LineViews::new(false);
        off.learn_admitted("r", "v", &admitted(7, 60_000, "e1"), t0);
        off.publish("r", None, &tick(10_000, 4, 0, vec![]), t0);
        assert!(off.answer("r", "v", t0).is_none());
    }

    #[test]
    fn visitors_whose_heartbeat_is_due_are_swept() {
        let lv = LineViews::new(true);
        let t0 = Instant::now();
        lv.learn("r", "a", &queued(2, 2000, 20_000, 0), t0);
        lv.learn("r", "b", &queued(3, 3000, 40_000, 0), t0);
        assert_eq!(lv.sweep(10_000), 2);
        assert_eq!(lv.sweep(19_500), 1);
    }
}
