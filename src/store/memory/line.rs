//! The memory store's line log and holds (the rules: `store::line`), as `tick.lua`,
//! `places.lua` and the liveness part of `reap.lua` do them in Redis.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Room;
use crate::store::line::{CHANGES_KEEP, HOLD_LEASE_MS};
use crate::store::{LineChange, LineCursor, Placed, RoomTick, TickRequest, WatchEntry};

/// Tells apart epochs started in the same millisecond.
static EPOCHS: AtomicU64 = AtomicU64::new(0);

impl Room {
    /// Records that these places (ticket, visitor) left the line, or were put back.
    pub(super) fn log_line(&mut self, back: bool, places: impl IntoIterator<Item = (u64, String)>) {
        for (ticket, visitor) in places {
            self.line_seq += 1;
            self.line_log.push_back(LineChange {
                seq: self.line_seq,
                ticket,
                visitor,
                back,
            });
        }
        while self.line_log.len() as u64 > CHANGES_KEEP {
            self.line_log.pop_front();
        }
    }

    /// The log starts afresh (`flush`): hubs see a new epoch.
    pub(super) fn reset_line_log(&mut self) {
        self.line_log.clear();
        self.line_epoch.clear();
    }

    fn line_cursor(&mut self, now: u64) -> LineCursor {
        if self.line_epoch.is_empty() {
            self.line_epoch = format!("{now}-{}", EPOCHS.fetch_add(1, Ordering::Relaxed));
        }
        LineCursor {
            epoch: self.line_epoch.clone(),
            seq: self.line_seq,
        }
    }

    /// Where v stands, with its ticket when queued (as `placed()` in Lua).
    fn placed(&mut self, v: &str, now: u64) -> Placed {
        if self.is_admitted(v, now) {
            self.unclaimed.remove(v);
            // unwrap: is_admitted checked the session exists.
            let a = self.sessions.get(v).unwrap().clone();
            return Placed {
                entry: WatchEntry::Admitted(a),
                ticket: 0,
            };
        }
        match self.queue.ticket(v) {
            Some(ticket) => Placed {
                entry: WatchEntry::Queued {
                    position: self.queue.position(v),
                },
                ticket,
            },
            None => Placed {
                entry: WatchEntry::Gone,
                ticket: 0,
            },
        }
    }

    fn drop_heartbeat(&mut self, v: &str) {
        if let Some(hb) = self.heartbeats.remove(v) {
            self.hb_order.remove(&(hb, v.to_string()));
        }
    }

    pub(super) fn tick(&mut self, req: &TickRequest<'_>, now: u64) -> RoomTick {
        let hold = self
            .holders
            .entry(req.instance.to_string())
            .or_insert_with(|| (0, HashSet::new()));
        let rehold = hold.0 <= now;
        hold.0 = now + HOLD_LEASE_MS;
        for v in req.unhold {
            hold.1.remove(v);
        }
        hold.1.extend(req.hold.iter().cloned());
        for v in req.unhold {
            if self.queue.contains(v) {
                self.beat(v, now);
            }
        }
        let placed = req
            .hold
            .iter()
            .map(|v| {
                self.drop_heartbeat(v);
                self.placed(v, now)
            })
            .collect();
        let cursor = self.line_cursor(now);
        let changes = req.since.and_then(|since| {
            if since.epoch != cursor.epoch
                || since.seq > cursor.seq
                || cursor.seq - since.seq > CHANGES_KEEP
            {
                return None;
            }
            let out: Vec<LineChange> = self
                .line_log
                .iter()
                .filter(|c| c.seq > since.seq)
                .cloned()
                .collect();
            (out.len() as u64 == cursor.seq - since.seq).then_some(out)
        });
        RoomTick {
            view: self.view(now),
            cursor,
            // As tick.lua: no lanes, not random mode, no event before its shuffle.
            exact: self.cfg.lanes.is_empty()
                && self.cfg.mode != crate::room::QueueMode::Random
                && self.phase == crate::room::schedule::EventPhase::Open,
            changes,
            placed,
            rehold,
        }
    }

    pub(super) fn places(&mut self, visitors: &[String], now: u64) -> (Vec<Placed>, LineCursor) {
        let placed = visitors.iter().map(|v| self.placed(v, now)).collect();
        (placed, self.line_cursor(now))
    }

    /// The liveness part of a reap pass, first step (as `reap.lua`): the visitors of one
    /// instance whose lease lapsed go back to heartbeats, at most `batch`, with the time
    /// it last vouched for them.
    pub(super) fn release_lapsed(&mut self, batch: usize, now: u64) {
        let lapsed = self
            .holders
            .iter()
            .find(|(_, (until, _))| *until <= now)
            .map(|(i, _)| i.clone());
        if let Some(inst) = lapsed {
            // unwrap: found just above, under the same lock.
            let (until, held) = self.holders.get_mut(&inst).unwrap();
            let vouched_at = until.saturating_sub(HOLD_LEASE_MS);
            let back: Vec<String> = held.iter().take(batch).cloned().collect();
            for v in &back {
                held.remove(v);
            }
            if held.is_empty() {
                self.holders.remove(&inst);
            }
            for v in back {
                if self.queue.contains(&v) {
                    self.set_heartbeat(&v, vouched_at);
                }
            }
        }
    }

    /// The second step: of the silent-looking `candidates`, those a live instance holds
    /// are vouched for (taken off the heartbeats). Returns the candidates left to drop
    /// and how many were vouched.
    pub(super) fn vouch(&mut self, candidates: Vec<String>, now: u64) -> (Vec<String>, u64) {
        let (held, stale): (Vec<String>, Vec<String>) = candidates.into_iter().partition(|v| {
            self.holders
                .values()
                .any(|(until, set)| *until > now && set.contains(v))
        });
        for v in &held {
            self.drop_heartbeat(v);
        }
        (stale, held.len() as u64)
    }
}
