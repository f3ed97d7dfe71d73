//! The simulated room: the admission rules of the store, on a manual clock, and the
//! [`EtaBasis`] the store's `eta_basis` script would read from it.
//!
//! Rules kept (each as the Lua scripts and the memory store apply them): FIFO; at most
//! `capacity` live sessions; a slot freed by a release or a join filled at once (both
//! scripts promote), one freed by an expiry, a reap or the rate cap's minute at the next
//! promote (here: the next whole second: sockets and the basis read promote at least
//! once a second); the rate cap's sliding minute; stock; pause (no admissions);
//! capacity changes taking effect at the next promote; queued visitors silent for the
//! heartbeat timeout reaped; a session let in while its visitor is already gone never
//! claimed, quiet after half the heartbeat timeout, holding its slot to expiry and
//! left out of the ends; the last 64 claimed ends kept.

use std::collections::{BTreeSet, BinaryHeap, VecDeque};

use super::scenario::{Admin, Scenario};
use crate::store::{EtaBasis, ENDS_KEEP, WINDOW_MS};

/// What happened to one visitor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fate {
    pub admitted_at: Option<u64>,
    pub reaped: bool,
}

pub struct Room<'a> {
    sc: &'a Scenario,
    pub now: u64,
    pub capacity: u64,
    pub paused: bool,
    pub stock: Option<u64>,
    /// Visitor ids in line, FIFO; reaped ones are skipped lazily.
    queue: VecDeque<usize>,
    pub queued: u64,
    /// (expires, issued, visitor) of live sessions.
    live: BTreeSet<(u64, u64, usize)>,
    /// Live sessions by when their slot frees, soonest first.
    ending: BinaryHeap<std::cmp::Reverse<Ending>>,
    ends: VecDeque<(u64, u64)>,
    window: VecDeque<u64>,
    /// (when, admitted: true / reaped: false) over the last five minutes.
    exits: VecDeque<(u64, bool)>,
    /// (reap time, visitor) of queued visitors who went silent.
    reaping: BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
    pub admits: u64,
    pub fates: Vec<Fate>,
    in_line: Vec<bool>,
}

/// A live session's (slot free at, end, expires, issued, visitor).
type Ending = (u64, u64, u64, u64, usize);

/// The first whole second at or after `t` (the next promote for a slot freed by time).
fn next_second(t: u64) -> u64 {
    t.div_ceil(1000) * 1000
}

impl<'a> Room<'a> {
    pub fn new(sc: &'a Scenario) -> Self {
        Self {
            sc,
            now: 0,
            capacity: sc.capacity,
            paused: false,
            stock: sc.stock,
            queue: VecDeque::new(),
            queued: 0,
            live: BTreeSet::new(),
            ending: BinaryHeap::new(),
            ends: VecDeque::new(),
            window: VecDeque::new(),
            exits: VecDeque::new(),
            reaping: BinaryHeap::new(),
            admits: 0,
            fates: vec![Fate::default(); sc.visitors.len()],
            in_line: vec![false; sc.visitors.len()],
        }
    }

    pub fn join(&mut self, v: usize) {
        self.queue.push_back(v);
        self.queued += 1;
        self.in_line[v] = true;
        if let Some(s) = self.sc.visitors[v].silent_at {
            self.reaping
                .push(std::cmp::Reverse((s + self.sc.heartbeat_ms, v)));
        }
    }

    pub fn apply(&mut self, a: Admin) {
        match a {
            Admin::Capacity(c) => self.capacity = c,
            Admin::Pause => self.paused = true,
            Admin::Resume => self.paused = false,
            Admin::TopUp(n) => self.stock = self.stock.map(|s| s + n),
        }
    }

    /// Moves the clock to `t`: sessions end, silent visitors are reaped, then one promote.
    pub fn advance(&mut self, t: u64) {
        self.now = t;
        while let Some(&std::cmp::Reverse((free, end, expires, issued, v))) = self.ending.peek() {
            if free > t {
                break;
            }
            self.ending.pop();
            self.live.remove(&(expires, issued, v));
            let claimed = self.claimed(v, issued);
            if claimed {
                self.ends.push_front((end, end - issued));
                self.ends.truncate(ENDS_KEEP);
            }
        }
        while let Some(&std::cmp::Reverse((at, v))) = self.reaping.peek() {
            if at > t {
                break;
            }
            self.reaping.pop();
            if self.in_line[v] {
                self.in_line[v] = false;
                self.queued -= 1;
                self.fates[v].reaped = true;
                self.exits.push_back((at, false));
            }
        }
        while self.exits.front().is_some_and(|e| e.0 + 300_000 <= t) {
            self.exits.pop_front();
        }
        while self.window.front().is_some_and(|&w| w + WINDOW_MS <= t) {
            self.window.pop_front();
        }
        self.promote();
    }

    fn claimed(&self, v: usize, issued: u64) -> bool {
        self.sc.visitors[v].silent_at.is_none_or(|s| s > issued)
    }

    fn promote(&mut self) {
        let t = self.now;
        while !self.paused
            && (self.live.len() as u64) < self.capacity
            && self.stock != Some(0)
            && (self.sc.rate_cap == 0 || (self.window.len() as u64) < self.sc.rate_cap)
        {
            let Some(v) = self.queue.pop_front() else {
                break;
            };
            if !self.in_line[v] {
                continue;
            }
            self.in_line[v] = false;
            self.queued -= 1;
            let expires = t + self.sc.ttl_ms;
            let end = if self.claimed(v, t) {
                t + self.sc.visitors[v].stay_ms.min(self.sc.ttl_ms)
            } else {
                expires
            };
            let free = if end < expires {
                end
            } else {
                next_second(expires)
            };
            self.live.insert((expires, t, v));
            self.ending
                .push(std::cmp::Reverse((free, end, expires, t, v)));
            self.fates[v].admitted_at = Some(t);
            self.admits += 1;
            self.stock = self.stock.map(|s| s - 1);
            self.exits.push_back((t, true));
            if self.sc.rate_cap > 0 {
                self.window.push_back(t);
            }
        }
    }

    /// Places (1-based) of the visitors in line, in order.
    pub fn line(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.queue
            .iter()
            .filter(|&&v| self.in_line[v])
            .enumerate()
            .map(|(i, &v)| (i as u64 + 1, v))
    }

    pub fn in_line(&self, v: usize) -> bool {
        self.in_line[v]
    }

    /// The earliest time something changes by itself after `now` (a session end, a
    /// reap, a rate-cap slot), if anything is waiting for it.
    pub fn next_change(&self) -> Option<u64> {
        let end = self.ending.peek().map(|e| e.0 .0);
        let reap = self.reaping.peek().map(|e| next_second(e.0 .0));
        let cap = (self.sc.rate_cap > 0 && self.queued > 0)
            .then(|| self.window.front().map(|&w| next_second(w + WINDOW_MS)))
            .flatten();
        [end, reap, cap].into_iter().flatten().min()
    }

    /// What `eta_basis` would read now.
    pub fn basis(&self) -> EtaBasis {
        let t = self.now;
        let hb = self.sc.heartbeat_ms;
        let (mut sessions, mut quiet) = (Vec::new(), Vec::new());
        for &(expires, issued, v) in &self.live {
            if !self.claimed(v, issued) && t - issued >= hb / 2 {
                quiet.push(expires);
            } else {
                sessions.push((issued, expires));
            }
        }
        let silent = self
            .line()
            .filter(|&(_, v)| {
                self.sc.visitors[v]
                    .silent_at
                    .is_some_and(|s| s + hb / 2 <= t)
            })
            .count() as u64;
        EtaBasis {
            now_ms: t,
            lanes: false,
            capacity: self.capacity,
            session_ttl_ms: self.sc.ttl_ms,
            rate_cap_per_minute: self.sc.rate_cap,
            stock: self.stock,
            paused: self.paused,
            closed: false,
            queue_length: self.queued,
            active: self.live.len() as u64,
            sessions,
            quiet,
            ends: self.ends.iter().copied().collect(),
            window: if self.sc.rate_cap > 0 {
                self.window.iter().copied().collect()
            } else {
                Vec::new()
            },
            admitted_recent: self.exits.iter().filter(|e| e.1).count() as u64,
            reaped_recent: self.exits.iter().filter(|e| !e.1).count() as u64,
            silent,
            admits: self.admits,
        }
    }
}
