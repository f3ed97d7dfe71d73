//! A model-based test: `proptest` drives random sequences of operations (join, status,
//! release, promote, capacity change, pause and resume, stock change, flush, reap, and
//! time advancing) against a small reference model and the stores, and compares every
//! answer. Two runs: without time moving, on the model, the memory store and a real Redis
//! at once; with time moving (sessions expiring, silent visitors reaped), on the model and
//! the memory store on a manual clock — Redis keeps its own clock, so its expiry and
//! silence rules are proven equal to the memory store's by the conformance suite
//! (`conformance.rs`). Rare corners the random sequences seldom reach (a newcomer when the
//! head already holds a stock unit) have their own conformance cases
//! (`a_newcomer_never_walks_in_past_a_waiting_visitor`).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use anteroom::room::RoomConfig;
use anteroom::store::memory::{ManualClock, MemoryStore};
use anteroom::store::{RoomPatch, Snapshot, StockChange, Store, VisitorState, HB_STEPS};

use crate::helpers::{redis_store, room, RedisServer};

const CASES: u32 = 64;
const VISITORS: usize = 6;

#[derive(Clone, Debug)]
enum Op {
    Join(usize),
    Status(usize),
    Release(usize),
    Promote,
    Capacity(u64),
    Pause(bool),
    Stock(Option<u64>),
    Flush,
    Reap,
    /// Time moves on by this many ms (the run with a manual clock only).
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..VISITORS).prop_map(Op::Join),
        2 => (0..VISITORS).prop_map(Op::Status),
        2 => (0..VISITORS).prop_map(Op::Release),
        1 => Just(Op::Promote),
        1 => (1u64..4).prop_map(Op::Capacity),
        1 => any::<bool>().prop_map(Op::Pause),
        1 => prop_oneof![Just(None), (0u64..5).prop_map(Some)].prop_map(Op::Stock),
        1 => Just(Op::Flush),
        1 => Just(Op::Reap),
    ]
}

/// The same, with time moving: by less than the heartbeat timeout, past it, past a
/// session's lifetime.
fn op_in_time() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => op(),
        2 => prop_oneof![Just(1_000u64), Just(3_000), Just(6_000), Just(11_000)].prop_map(Op::Advance),
    ]
}

/// Session lifetime and heartbeat timeout of the room with time moving (ms).
const TTL_MS: u64 = 10_000;
const HB_MS: u64 = 5_000;

/// The rules, written out as plainly as possible.
#[derive(Debug)]
struct Model {
    capacity: u64,
    paused: bool,
    stock: Option<u64>,
    queue: VecDeque<usize>,
    /// Sessions (live or expired, until reaped or released) → when they end.
    admitted: BTreeMap<usize, u64>,
    units: HashSet<usize>,
    /// The clock, a session's lifetime and the heartbeat timeout (ms).
    now: u64,
    ttl: u64,
    hb_timeout: u64,
    /// Queued visitor → last heartbeat.
    heartbeats: HashMap<usize, u64>,
}

/// What a visitor is told, as the model and the stores both say it.
#[derive(Debug, PartialEq, Eq)]
struct Told {
    state: VisitorState,
    position: u64,
    queue_length: u64,
    active: u64,
}

impl Model {
    fn new(now: u64, ttl: u64, hb_timeout: u64) -> Self {
        Self {
            capacity: 2,
            paused: false,
            stock: None,
            queue: VecDeque::new(),
            admitted: BTreeMap::new(),
            units: HashSet::new(),
            now,
            ttl,
            hb_timeout,
            heartbeats: HashMap::new(),
        }
    }

    fn is_admitted(&self, v: usize) -> bool {
        self.admitted.get(&v).is_some_and(|end| *end > self.now)
    }

    fn active(&self) -> u64 {
        self.admitted
            .values()
            .filter(|end| **end > self.now)
            .count() as u64
    }

    fn free(&self) -> u64 {
        let free = self.capacity.saturating_sub(self.active());
        self.stock.map_or(free, |s| free.min(s))
    }

    fn admit(&mut self, v: usize) {
        self.admitted.insert(v, self.now + self.ttl);
        self.heartbeats.remove(&v);
        if let Some(s) = self.stock.as_mut() {
            if self.units.insert(v) {
                *s = s.saturating_sub(1);
            }
        }
    }

    /// The heads let in now: as many as were free when the call began.
    fn promote(&mut self) -> Vec<usize> {
        if self.paused {
            return Vec::new();
        }
        let n = self.free() as usize;
        let heads: Vec<usize> = self.queue.iter().take(n).copied().collect();
        for v in &heads {
            self.queue.pop_front();
            self.admit(*v);
        }
        heads
    }

    /// Drops the queued visitors silent past the timeout, then the expired sessions.
    fn reap(&mut self) -> (u64, u64) {
        let cutoff = self.now.saturating_sub(self.hb_timeout);
        let stale: Vec<usize> = self
            .heartbeats
            .iter()
            .filter(|(_, at)| **at <= cutoff)
            .map(|(v, _)| *v)
            .collect();
        for v in &stale {
            self.heartbeats.remove(v);
            self.queue.retain(|q| q != v);
        }
        let now = self.now;
        let before = self.admitted.len();
        self.admitted.retain(|_, end| *end > now);
        (stale.len() as u64, (before - self.admitted.len()) as u64)
    }

    /// A sign of life moves a heartbeat that is behind `now` to a step ahead of it (a step:
    /// the timeout / `HB_STEPS`); one at or after `now` stays.
    fn heartbeat(&mut self, v: usize) {
        if self.queue.contains(&v) {
            let ahead = self.now + (self.hb_timeout / HB_STEPS).max(1);
            let at = self.heartbeats.entry(v).or_insert(ahead);
            if *at < self.now {
                *at = ahead;
            }
        }
    }

    fn waiting_state(&self, queued: bool) -> VisitorState {
        if self.stock == Some(0) {
            VisitorState::SoldOut
        } else if !queued {
            VisitorState::NotQueued
        } else if self.paused {
            VisitorState::Paused
        } else {
            VisitorState::Queued
        }
    }

    fn told(&self, v: usize) -> Told {
        let (state, position) = if self.is_admitted(v) {
            (VisitorState::Admitted, 0)
        } else {
            match self.queue.iter().position(|q| *q == v) {
                Some(i) => (self.waiting_state(true), i as u64 + 1),
                None => (self.waiting_state(false), 0),
            }
        };
        Told {
            state,
            position,
            queue_length: self.queue.len() as u64,
            active: self.active(),
        }
    }

    fn join(&mut self, v: usize) -> Told {
        if !self.is_admitted(v) && !self.queue.contains(&v) {
            self.promote();
            if !self.is_admitted(v) && self.stock != Some(0) {
                if !self.paused && self.queue.is_empty() && self.free() > 0 {
                    self.admit(v);
                } else {
                    self.queue.push_back(v);
                    self.heartbeat(v);
                }
            }
        } else if self.queue.contains(&v) {
            self.promote();
            self.heartbeat(v);
        }
        self.told(v)
    }

    fn status(&mut self, v: usize) -> Told {
        if !self.is_admitted(v) {
            self.heartbeat(v);
        }
        self.told(v)
    }

    fn release(&mut self, v: usize) -> (bool, Vec<usize>) {
        let held = self.admitted.remove(&v).is_some();
        self.heartbeats.remove(&v);
        let before = self.queue.len();
        self.queue.retain(|q| *q != v);
        let left = self.queue.len() < before;
        (held || left, self.promote())
    }
}

fn told(s: &Snapshot) -> Told {
    Told {
        state: s.state,
        position: s.position,
        queue_length: s.queue_length,
        active: s.active,
    }
}

fn id(v: usize) -> String {
    format!("{v:032x}")
}

fn ids(vs: &[usize]) -> Vec<String> {
    vs.iter().map(|v| id(*v)).collect()
}

/// Runs one sequence on the model and the stores; the first disagreement fails it. With
/// `clock` (the stores' manual clock), time moves and sessions expire; without, nobody
/// expires or falls silent within the run.
async fn run(
    ops: &[Op],
    stores: &[Arc<dyn Store>],
    room_id: &str,
    clock: Option<&ManualClock>,
) -> Result<(), TestCaseError> {
    use anteroom::store::memory::Clock;
    let (ttl, hb) = match clock {
        Some(_) => (TTL_MS, HB_MS),
        None => (3_600_000, 3_600_000),
    };
    let cfg = RoomConfig {
        session_ttl_secs: ttl / 1000,
        heartbeat_timeout_secs: hb / 1000,
        ..room(room_id, 2)
    };
    for s in stores {
        prop_assert!(s.put_room(&cfg, true).await.unwrap());
    }
    // Without a clock the model's time stands still, well past its epoch (so that no
    // heartbeat is older than the timeout).
    let mut m = Model::new(clock.map_or(10 * hb, |c| c.now_ms()), ttl, hb);
    for (step, op) in ops.iter().enumerate() {
        let at = format!("step {step}, {op:?}, model {m:?}");
        match op {
            Op::Join(v) | Op::Status(v) => {
                let want = match op {
                    Op::Join(_) => m.join(*v),
                    _ => m.status(*v),
                };
                for s in stores {
                    let got = match op {
                        Op::Join(_) => s.join(room_id, &id(*v)).await,
                        _ => s.status(room_id, &id(*v)).await,
                    }
                    .unwrap();
                    prop_assert_eq!(&told(&got), &want, "{}", at);
                }
            }
            Op::Release(v) => {
                let (held, promoted) = m.release(*v);
                for s in stores {
                    let got = s.release(room_id, &id(*v)).await.unwrap();
                    prop_assert_eq!(&got, &(held, ids(&promoted)), "{}", at);
                }
            }
            Op::Promote => {
                let want = ids(&m.promote());
                for s in stores {
                    prop_assert_eq!(&s.promote(room_id, 1000).await.unwrap(), &want, "{}", at);
                }
            }
            Op::Capacity(_) | Op::Pause(_) => {
                let patch = match op {
                    Op::Capacity(c) => {
                        m.capacity = *c;
                        RoomPatch {
                            capacity: Some(*c),
                            ..RoomPatch::default()
                        }
                    }
                    Op::Pause(p) => {
                        m.paused = *p;
                        RoomPatch {
                            paused: Some(*p),
                            ..RoomPatch::default()
                        }
                    }
                    _ => unreachable!(),
                };
                let want = ids(&m.promote());
                for s in stores {
                    prop_assert_eq!(
                        &s.patch_room(room_id, &patch).await.unwrap(),
                        &want,
                        "{}",
                        at
                    );
                }
            }
            Op::Stock(n) => {
                let old = m.stock;
                m.stock = *n;
                let want = (old, *n, ids(&m.promote()));
                let change = n.map_or(StockChange::Unlimited, StockChange::Set);
                for s in stores {
                    prop_assert_eq!(
                        &s.change_stock(room_id, change).await.unwrap(),
                        &want,
                        "{}",
                        at
                    );
                }
            }
            Op::Flush => {
                let n = m.queue.len() as u64;
                m.queue.clear();
                m.heartbeats.clear();
                for s in stores {
                    prop_assert_eq!(s.flush(room_id).await.unwrap(), n, "{}", at);
                }
            }
            Op::Reap => {
                let want = m.reap();
                for s in stores {
                    let b = s.reap(room_id, 100).await.unwrap();
                    prop_assert_eq!((b.dropped, b.expired), want, "{}", at);
                }
            }
            Op::Advance(ms) => {
                m.now += ms;
                if let Some(c) = clock {
                    c.advance(*ms);
                }
            }
        }
        if clock.is_some() {
            // With time moving, the figures agree after every step (a watch would
            // refresh the queued visitors' heartbeats, and nobody would fall silent).
            let want = (m.queue.len() as u64, m.active());
            for s in stores {
                let st = s.stats(room_id).await.unwrap();
                prop_assert_eq!((st.queue_length, st.active), want, "{} (stats)", at);
            }
            continue;
        }
        // After every step, everyone's view agrees too.
        for v in 0..VISITORS {
            let want = m.told(v);
            for s in stores {
                let (_, entries) = s.watch(room_id, &[id(v)]).await.unwrap();
                let got = match &entries[0] {
                    anteroom::store::WatchEntry::Admitted(_) => (true, 0),
                    anteroom::store::WatchEntry::Queued { position } => (false, *position),
                    anteroom::store::WatchEntry::Gone => (false, 0),
                };
                let expected = (want.state == VisitorState::Admitted, want.position);
                prop_assert_eq!(got, expected, "{} visitor {}", at, v);
            }
        }
    }
    Ok(())
}

#[test]
fn random_sequences_give_the_same_answers_on_the_model_memory_and_redis() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let redis = RedisServer::start();
    let redis_store: Arc<dyn Store> =
        Arc::new(rt.block_on(redis_store(&redis.url(), &crate::helpers::prefix())));
    let case = std::cell::Cell::new(0u32);
    let steps = std::cell::Cell::new(0usize);
    TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    })
    .run(&prop::collection::vec(op(), 1..40), |ops| {
        case.set(case.get() + 1);
        steps.set(steps.get() + ops.len());
        // A fresh memory store, and a fresh room on the one Redis, per case.
        let stores: Vec<Arc<dyn Store>> = vec![Arc::new(MemoryStore::new()), redis_store.clone()];
        rt.block_on(run(&ops, &stores, &format!("m{}", case.get()), None))
    })
    .unwrap();
    eprintln!(
        "model-based: {} sequences, {} operations, every answer equal on the model, memory and Redis",
        case.get(),
        steps.get()
    );
}

#[test]
fn random_sequences_with_time_moving_give_the_same_answers_on_the_model_and_memory() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (cases, steps, advances) = (
        std::cell::Cell::new(0u32),
        std::cell::Cell::new(0usize),
        std::cell::Cell::new(0usize),
    );
    TestRunner::new(Config {
        cases: 4 * CASES,
        failure_persistence: None,
        ..Config::default()
    })
    .run(&prop::collection::vec(op_in_time(), 1..60), |ops| {
        cases.set(cases.get() + 1);
        steps.set(steps.get() + ops.len());
        advances.set(advances.get() + ops.iter().filter(|o| matches!(o, Op::Advance(_))).count());
        let clock = ManualClock::new(1_000_000);
        let stores: Vec<Arc<dyn Store>> =
            vec![Arc::new(MemoryStore::with_clock(Arc::new(clock.clone())))];
        rt.block_on(run(&ops, &stores, "t", Some(&clock)))
    })
    .unwrap();
    eprintln!(
        "model-based with time: {} sequences, {} operations ({} time advances), every answer equal on the model and memory",
        cases.get(),
        steps.get(),
        advances.get()
    );
}
