//! One suite, two stores: every rule of the admission engine, run against the memory
//! store and against a real Redis started for the test. If both pass, they agree.

use std::sync::Arc;
use std::time::Duration;

use crate::helpers::{redis_store, room, wait_until, RedisCluster, RedisServer};
use anteroom::config::RoomConfig;
use anteroom::store::{
    heartbeat_step, PatchOutcome, RoomPatch, StockChange, Store, StoreError, VisitorState,
    WatchEntry,
};
use futures_util::future::join_all;
use futures_util::StreamExt;

mod caps;
mod drops;
mod line;
mod modes;
mod noshow;
mod webhooks;
use caps::*;
use drops::*;
use line::*;
use modes::*;
use noshow::*;
use webhooks::*;

/// A store under test, keeping its Redis (if any) alive.
struct Backend {
    store: Arc<dyn Store>,
    _redis: Option<RedisServer>,
}

impl Backend {
    async fn memory() -> Self {
        Self {
            store: Arc::new(anteroom::store::memory::MemoryStore::new()),
            _redis: None,
        }
    }
    async fn redis() -> Self {
        let r = RedisServer::start();
        let store = redis_store(&r.url(), &crate::helpers::prefix()).await;
        Self {
            store: Arc::new(store),
            _redis: Some(r),
        }
    }
    async fn cluster(c: &RedisCluster) -> Self {
        Self {
            store: Arc::new(redis_store(&c.url(), &crate::helpers::prefix()).await),
            _redis: None,
        }
    }
    async fn with_room(self, cfg: RoomConfig) -> Self {
        assert!(self.store.put_room(&cfg, true).await.unwrap());
        self
    }
}

fn v(i: usize) -> String {
    format!("{i:032x}")
}

const DEADLINE: Duration = Duration::from_secs(10);

/// `cfg` with a 1 s heartbeat timeout: its queued visitors are dropped after 1 s of silence.
fn quiet_after_1s(cfg: RoomConfig) -> RoomConfig {
    RoomConfig {
        heartbeat_timeout_secs: 1,
        ..cfg
    }
}

/// The store's clock now (ms): Redis `TIME`, or the memory store's clock.
async fn store_now(s: &dyn Store, room: &str) -> u64 {
    s.fairness(room).await.unwrap().now_ms
}

/// Waits until the store's clock reaches `at` (ms).
async fn until_store_time(s: &dyn Store, room: &str, at: u64) {
    wait_until(DEADLINE, "the store's clock to reach the time", || async {
        (store_now(s, room).await >= at).then_some(())
    })
    .await
}

/// Waits until `ms` have passed on the store's clock (a timeout that must run out).
async fn store_time_passes(s: &dyn Store, room: &str, ms: u64) {
    let at = store_now(s, room).await + ms;
    until_store_time(s, room, at).await
}

async fn fifo_order(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    for i in 1..=5 {
        let snap = s.join("r", &v(i)).await.unwrap();
        assert_eq!(snap.state, VisitorState::Queued);
        assert_eq!(snap.position, i as u64);
        assert_eq!(snap.queue_length, i as u64);
    }
    // Each release admits exactly the next in line.
    for i in 0..5 {
        let (released, promoted) = s.release("r", &v(i)).await.unwrap();
        assert!(released);
        assert_eq!(promoted, vec![v(i + 1)]);
        let next = s.status("r", &v(i + 1)).await.unwrap();
        assert_eq!(next.state, VisitorState::Admitted);
        if i + 2 <= 5 {
            assert_eq!(s.status("r", &v(i + 2)).await.unwrap().position, 1);
        }
    }
}

async fn join_is_idempotent(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    let first = s.join("r", &v(0)).await.unwrap();
    let again = s.join("r", &v(0)).await.unwrap();
    assert_eq!(
        first.admission, again.admission,
        "same admission, same pass"
    );
    assert_eq!(again.active, 1);
    s.join("r", &v(1)).await.unwrap();
    s.join("r", &v(2)).await.unwrap();
    let again = s.join("r", &v(1)).await.unwrap();
    assert_eq!((again.state, again.position), (VisitorState::Queued, 1));
    assert_eq!(
        again.queue_length, 2,
        "a repeated join never adds a second place"
    );
}

/// Joins sent together (on Redis they go to the store in one call: `store.batch_joins`)
/// each take one place, in the order they were sent, and a visitor sent twice gets the
/// same place twice.
async fn joins_sent_together_take_one_place_each_in_the_order_sent(b: Backend) {
    let b = b.with_room(room("r", 2)).await;
    let s = b.store.clone();
    const N: usize = 60;
    // Polled in turn by one task: they reach the store in this order, every visitor twice.
    let snaps = join_all((0..2 * N).map(|k| {
        let s = s.clone();
        async move { s.join("r", &v(k % N)).await.unwrap() }
    }))
    .await;
    let (first, again) = snaps.split_at(N);
    for i in 0..N {
        let (a, b) = (&first[i], &again[i]);
        if i < 2 {
            assert_eq!(a.state, VisitorState::Admitted, "visitor {i} walks in");
            assert_eq!(a.admission, b.admission, "visitor {i}: one admission");
        } else {
            assert_eq!(
                (a.state, a.position),
                (VisitorState::Queued, (i - 1) as u64),
                "visitor {i} is queued in the order sent"
            );
            assert_eq!(
                (b.state, b.position, b.ticket, b.joined_at_ms),
                (a.state, a.position, a.ticket, a.joined_at_ms),
                "visitor {i} sent again keeps its place"
            );
            if i > 2 {
                assert!(a.ticket > first[i - 1].ticket, "tickets follow the order");
            }
        }
    }
    assert_eq!(again[N - 1].queue_length, (N - 2) as u64);
    let stats = s.stats("r").await.unwrap();
    assert_eq!((stats.active, stats.queue_length), (2, (N - 2) as u64));
    for i in 2..N {
        assert_eq!(s.status("r", &v(i)).await.unwrap().position, (i - 1) as u64);
    }
}

async fn capacity_is_never_exceeded(b: Backend) {
    let b = b.with_room(room("r", 3)).await;
    let s = b.store.clone();
    let snaps = join_all((0..40).map(|i| {
        let s = s.clone();
        async move { s.join("r", &v(i)).await.unwrap() }
    }))
    .await;
    let admitted = snaps
        .iter()
        .filter(|x| x.state == VisitorState::Admitted)
        .count();
    assert_eq!(admitted, 3);
    let mut positions: Vec<u64> = snaps
        .iter()
        .filter(|x| x.state == VisitorState::Queued)
        .map(|x| x.position)
        .collect();
    positions.sort();
    assert_eq!(positions, (1..=37).collect::<Vec<u64>>());
    assert!(s.promote("r", 1000).await.unwrap().is_empty());
    assert_eq!(s.stats("r").await.unwrap().active, 3);
}

async fn release_and_expiry_admit_the_next(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    assert_eq!(
        s.join("r", &v(2)).await.unwrap().state,
        VisitorState::Queued
    );
    // Release frees the slot at once.
    assert_eq!(s.release("r", &v(0)).await.unwrap().1, vec![v(1)]);
    // Expiry frees it when the TTL runs out; promote (run by the timer) admits the next.
    let promoted = wait_until(DEADLINE, "v1's session to expire", || async {
        let p = s.promote("r", 1000).await.unwrap();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert_eq!(promoted, vec![v(2)]);
    assert!(!s.session_live("r", &v(1), 2).await.unwrap());
}

async fn stock_is_never_oversold(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            stock: Some(3),
            session_ttl_secs: 1,
            ..room("r", 100)
        })
        .await;
    let s = b.store.clone();
    let snaps = join_all((0..20).map(|i| {
        let s = s.clone();
        async move { s.join("r", &v(i)).await.unwrap() }
    }))
    .await;
    let admitted: Vec<_> = snaps
        .iter()
        .enumerate()
        .filter(|(_, x)| x.state == VisitorState::Admitted)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(admitted.len(), 3);
    assert_eq!(
        snaps
            .iter()
            .filter(|x| x.state == VisitorState::SoldOut)
            .count(),
        17
    );
    assert_eq!(s.stats("r").await.unwrap().stock, Some(0));
    assert_eq!(
        s.stats("r").await.unwrap().queue_length,
        0,
        "sold out joins are not queued"
    );
    // A unit holder whose session expired comes back: no second unit, and no admission
    // beyond the stock either.
    let holder = v(admitted[0]);
    wait_until(DEADLINE, "sessions to expire", || async {
        (s.stats("r").await.unwrap().active == 0).then_some(())
    })
    .await;
    let back = s.join("r", &holder).await.unwrap();
    assert_eq!(back.state, VisitorState::SoldOut);
    assert_eq!(back.stock, Some(0));
}

async fn stock_unit_is_taken_once_per_visitor(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            stock: Some(2),
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    assert_eq!(s.join("r", &v(0)).await.unwrap().stock, Some(1));
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().stock,
        Some(1),
        "idempotent join takes no unit"
    );
    s.join("r", &v(1)).await.unwrap();
    s.join("r", &v(2)).await.unwrap();
    assert_eq!(s.release("r", &v(0)).await.unwrap().1, vec![v(1)]);
    assert_eq!(
        s.status("r", &v(2)).await.unwrap().state,
        VisitorState::SoldOut
    );
    assert!(
        s.release("r", &v(1)).await.unwrap().1.is_empty(),
        "no stock, no admission"
    );
}

async fn rate_cap_is_honoured(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            max_admissions_per_minute: 3,
            ..room("r", 100)
        })
        .await;
    let s = &b.store;
    let mut states = Vec::new();
    for i in 0..6 {
        states.push(s.join("r", &v(i)).await.unwrap().state);
    }
    assert_eq!(
        states,
        [
            VisitorState::Admitted,
            VisitorState::Admitted,
            VisitorState::Admitted,
            VisitorState::Queued,
            VisitorState::Queued,
            VisitorState::Queued
        ]
    );
    assert!(s.promote("r", 1000).await.unwrap().is_empty());
    // Releasing frees capacity but not the arrival-rate budget.
    s.release("r", &v(0)).await.unwrap();
    assert_eq!(
        s.status("r", &v(3)).await.unwrap().state,
        VisitorState::Queued
    );
}

async fn silent_visitors_are_reaped(b: Backend) {
    let b = b.with_room(quiet_after_1s(room("r", 1))).await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap(); // holds the slot
    s.join("r", &v(1)).await.unwrap(); // goes silent
    s.join("r", &v(2)).await.unwrap(); // keeps polling
    let dropped = wait_until(DEADLINE, "the silent visitor to be reaped", || async {
        assert_eq!(
            s.status("r", &v(2)).await.unwrap().state,
            VisitorState::Queued
        );
        let b = s.reap("r", 1000).await.unwrap();
        (b.dropped > 0).then_some(b.dropped)
    })
    .await;
    assert_eq!(dropped, 1);
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::NotQueued
    );
    assert_eq!(s.status("r", &v(2)).await.unwrap().position, 1);
    assert_eq!(s.stats("r").await.unwrap().reaped_total, 1);
    // The admitted visitor is never reaped for silence.
    assert_eq!(
        s.status("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    // Coming back, the dropped visitor queues at the back and the join says why; once.
    assert!(!s.join("r", &v(3)).await.unwrap().rejoined_after_absence);
    let back = s.join("r", &v(1)).await.unwrap();
    assert!(back.rejoined_after_absence);
    assert_eq!(back.position, 3);
    assert!(!s.join("r", &v(1)).await.unwrap().rejoined_after_absence);
}

/// A sign of life moves the heartbeat at most a step ahead (`heartbeat_step`, and none
/// while it is still ahead): the reaper never drops a visitor sooner than the timeout after
/// it, and always once the timeout and one step have passed.
async fn a_heartbeat_holds_for_the_timeout_and_at_most_a_step_more(b: Backend) {
    let b = b.with_room(quiet_after_1s(room("r", 1))).await;
    let s = &b.store;
    let step = heartbeat_step(1000);
    s.join("r", &v(0)).await.unwrap(); // holds the slot
    s.join("r", &v(1)).await.unwrap();
    // The status's own time lies between these two readings of the store's clock.
    let before = store_now(s.as_ref(), "r").await;
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    let after = store_now(s.as_ref(), "r").await;
    // A step short of the timeout: a heartbeat set behind the sign of life could be due. Whatever
    // the reap says is checked only if it ran before the timeout was up.
    until_store_time(s.as_ref(), "r", before + 1000 - step).await;
    let early = s.reap("r", 1000).await.unwrap().dropped;
    if store_now(s.as_ref(), "r").await < before + 1000 {
        assert_eq!(early, 0, "dropped before its timeout was up");
    }
    // A step past the timeout: due, whatever the grid.
    until_store_time(s.as_ref(), "r", after + 1000 + step + 1).await;
    assert_eq!(s.reap("r", 1000).await.unwrap().dropped, 1);
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::NotQueued
    );
}

async fn expired_sessions_are_pruned_in_batches(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 10)
        })
        .await;
    let s = &b.store;
    for i in 0..5 {
        s.join("r", &v(i)).await.unwrap();
    }
    // Wait until all five have expired (they joined a few ms apart), then prune.
    wait_until(DEADLINE, "sessions to expire", || async {
        (s.stats("r").await.unwrap().active == 0).then_some(())
    })
    .await;
    assert_eq!(
        s.reap("r", 2).await.unwrap().expired,
        2,
        "a batch never exceeds its bound"
    );
    assert_eq!(s.reap("r", 2).await.unwrap().expired, 2);
    assert_eq!(s.reap("r", 2).await.unwrap().expired, 1);
    assert_eq!(s.reap("r", 2).await.unwrap().expired, 0);
}

async fn pause_stops_admissions_but_not_the_queue(b: Backend) {
    let mut cfg = RoomConfig {
        paused: true,
        ..room("r", 5)
    };
    let b = b.with_room(cfg.clone()).await;
    let s = &b.store;
    let a = s.join("r", &v(0)).await.unwrap();
    assert_eq!((a.state, a.position), (VisitorState::Paused, 1));
    s.join("r", &v(1)).await.unwrap();
    assert!(s.promote("r", 1000).await.unwrap().is_empty());
    assert_eq!(s.stats("r").await.unwrap().queue_length, 2);
    cfg.paused = false;
    s.put_room(&cfg, false).await.unwrap();
    assert_eq!(s.promote("r", 1000).await.unwrap(), vec![v(0), v(1)]);
}

/// When a join's promote leaves a free slot and a stock unit while someone still waits
/// (the heads it admitted already held units, so they used none), a newcomer queues
/// behind: it never walks in past a waiting visitor.
async fn a_newcomer_never_walks_in_past_a_waiting_visitor(b: Backend) {
    let cfg = RoomConfig {
        stock: Some(4),
        session_ttl_secs: 1,
        ..room("r", 3)
    };
    let b = b.with_room(cfg).await;
    let s = &b.store;
    let (x, y, a, w, z) = (v(1), v(2), v(3), v(4), v(5));
    for id in [&x, &y, &a] {
        assert_eq!(s.join("r", id).await.unwrap().state, VisitorState::Admitted);
    }
    // Paused, with every session expired: x and y come back (they hold units) and w
    // joins after them; one unit is left.
    let pause = RoomPatch {
        paused: Some(true),
        ..RoomPatch::default()
    };
    s.patch_room("r", &pause).await.unwrap();
    wait_until(DEADLINE, "the sessions to expire", || async {
        (s.stats("r").await.unwrap().active == 0).then_some(())
    })
    .await;
    for id in [&x, &y, &w] {
        assert_eq!(s.join("r", id).await.unwrap().state, VisitorState::Paused);
    }
    // Resuming admits x (a unit holder: the unit stays); z's join then admits y the same
    // way, leaving a slot and a unit free while w waits.
    let patch = RoomPatch {
        paused: Some(false),
        ..RoomPatch::default()
    };
    assert_eq!(s.patch_room("r", &patch).await.unwrap(), vec![x.clone()]);
    let zs = s.join("r", &z).await.unwrap();
    assert_eq!(
        (zs.state, zs.position, zs.queue_length),
        (VisitorState::Queued, 2, 2),
        "z queues behind w"
    );
    // The next promote lets w in first.
    let next = s.promote("r", 1000).await.unwrap();
    assert_eq!(next, vec![w.clone()]);
}

async fn the_epoch_is_written_once_and_then_read(b: Backend) {
    let s = &b.store;
    assert_eq!(s.epoch("first").await.unwrap(), "first");
    assert_eq!(s.epoch("second").await.unwrap(), "first");
}

async fn capacity_changes_apply_live(b: Backend) {
    let mut cfg = room("r", 3);
    let b = b.with_room(cfg.clone()).await;
    let s = &b.store;
    for i in 0..5 {
        s.join("r", &v(i)).await.unwrap();
    }
    cfg.capacity = 1;
    s.put_room(&cfg, false).await.unwrap();
    assert_eq!(
        s.stats("r").await.unwrap().active,
        3,
        "lowering kicks nobody"
    );
    s.release("r", &v(0)).await.unwrap();
    assert!(
        s.promote("r", 1000).await.unwrap().is_empty(),
        "2 active >= capacity 1"
    );
    cfg.capacity = 5;
    s.put_room(&cfg, false).await.unwrap();
    assert_eq!(s.promote("r", 1000).await.unwrap(), vec![v(3), v(4)]);
    assert_eq!(s.stats("r").await.unwrap().active, 4);
}

async fn rooms_are_independent(b: Backend) {
    let b = b
        .with_room(room("held", 1))
        .await
        .with_room(room("free", 10))
        .await;
    let s = &b.store;
    s.join("held", &v(0)).await.unwrap();
    for i in 1..4 {
        assert_eq!(
            s.join("held", &v(i)).await.unwrap().state,
            VisitorState::Queued
        );
    }
    let other = s.join("free", &v(1)).await.unwrap();
    assert_eq!(
        other.state,
        VisitorState::Admitted,
        "a full room never holds up another"
    );
    assert_eq!((other.queue_length, other.active), (0, 1));
    assert_eq!(s.stats("held").await.unwrap().queue_length, 3);
}

async fn closed_room_turns_newcomers_away_and_tells_the_queue(b: Backend) {
    let mut cfg = room("r", 1);
    let b = b.with_room(cfg.clone()).await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    cfg.closed = true;
    s.put_room(&cfg, false).await.unwrap();
    let newcomer = s.join("r", &v(2)).await.unwrap();
    assert_eq!(
        (newcomer.state, newcomer.position),
        (VisitorState::Closed, 0)
    );
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Closed
    );
    assert_eq!(
        s.status("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    assert_eq!(s.stats("r").await.unwrap().queue_length, 1);
}

async fn unknown_rooms_are_reported(b: Backend) {
    let s = &b.store;
    assert!(matches!(
        s.join("nope", &v(0)).await,
        Err(StoreError::NoSuchRoom)
    ));
    assert!(matches!(
        s.status("nope", &v(0)).await,
        Err(StoreError::NoSuchRoom)
    ));
    assert!(matches!(
        s.release("nope", &v(0)).await,
        Err(StoreError::NoSuchRoom)
    ));
}

async fn session_liveness_follows_release(b: Backend) {
    let b = b.with_room(room("r", 2)).await;
    let s = &b.store;
    let a = s.join("r", &v(0)).await.unwrap().admission.unwrap();
    assert!(s.session_live("r", &v(0), a.serial).await.unwrap());
    assert!(!s.session_live("r", &v(0), a.serial + 1).await.unwrap());
    s.release("r", &v(0)).await.unwrap();
    assert!(!s.session_live("r", &v(0), a.serial).await.unwrap());
}

async fn room_config_round_trips(b: Backend) {
    let cfg = RoomConfig {
        name: "Big sale".into(),
        max_admissions_per_minute: 9,
        stock: Some(4),
        paused: true,
        embed_origins: vec!["https://shop.example".into()],
        entry: anteroom::config::EntryMode::Token,
        challenge: anteroom::config::ChallengeMode::Pow,
        pow_max_number: 5000,
        max_places_per_ip: 3,
        entry_secret: Some(anteroom::config::Secret::new(
            "site-entry-secret-0123456789abcdef",
        )),
        ..room("r", 7)
    };
    let b = b.with_room(cfg.clone()).await;
    let s = &b.store;
    assert_eq!(s.room("r").await.unwrap(), Some(cfg.clone()));
    // The other key instead: the secret is gone, not left behind.
    let by_key = RoomConfig {
        entry_secret: None,
        entry_public_key: Some("-----BEGIN PUBLIC KEY-----x".into()),
        ..cfg.clone()
    };
    assert!(s.put_room(&by_key, false).await.unwrap());
    assert_eq!(s.room("r").await.unwrap(), Some(by_key));
    assert!(s.put_room(&cfg, false).await.unwrap());
    let other = RoomConfig {
        capacity: 1,
        ..cfg.clone()
    };
    assert!(
        !s.put_room(&other, true).await.unwrap(),
        "create_only keeps the live config"
    );
    assert_eq!(s.room("r").await.unwrap().unwrap().capacity, 7);
    assert_eq!(s.rooms().await.unwrap(), vec!["r".to_string()]);
    assert!(s.delete_room("r").await.unwrap());
    assert_eq!(s.room("r").await.unwrap(), None);
}

/// The scripts keep each room's parsed config between calls (Redis: in the node's Lua VM,
/// keyed by the hash's `version` and `rev`). Whatever writes the config, the next
/// decision sees it: a patch, the stock running out under admissions (no version bump),
/// and a room deleted and written again, whose version starts at 1 again each time.
async fn a_room_written_again_is_read_afresh(b: Backend) {
    let s = &b.store;
    assert!(s.put_room(&room("r", 1), true).await.unwrap());
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Admitted
    );
    let queued = s.join("r", &v(2)).await.unwrap();
    assert_eq!((queued.state, queued.capacity), (VisitorState::Queued, 1));
    s.patch_room(
        "r",
        &RoomPatch {
            capacity: Some(3),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(s.status("r", &v(2)).await.unwrap().capacity, 3);
    for cap in [2, 5] {
        assert!(s.delete_room("r").await.unwrap());
        assert!(s.put_room(&room("r", cap), true).await.unwrap());
        let snap = s.join("r", &v(10 + cap as usize)).await.unwrap();
        assert_eq!(
            (snap.state, snap.capacity),
            (VisitorState::Admitted, cap),
            "the room written again, at version 1 again"
        );
    }
    // Units taken by admissions are seen by the next join, though the config's version
    // does not move with them.
    assert!(s.delete_room("r").await.unwrap());
    let stocked = RoomConfig {
        stock: Some(2),
        ..room("r", 10)
    };
    assert!(s.put_room(&stocked, true).await.unwrap());
    for i in 1..=2 {
        assert_eq!(
            s.join("r", &v(20 + i)).await.unwrap().state,
            VisitorState::Admitted
        );
    }
    let late = s.join("r", &v(23)).await.unwrap();
    assert_eq!((late.state, late.stock), (VisitorState::SoldOut, Some(0)));
}

async fn leases_exclude_renew_and_expire(b: Backend) {
    let s = &b.store;
    assert!(s.acquire_lease("r/reaper", "A", 500).await.unwrap());
    assert!(!s.acquire_lease("r/reaper", "B", 500).await.unwrap());
    assert!(
        s.acquire_lease("r/reaper", "A", 500).await.unwrap(),
        "holder renews"
    );
    assert!(
        !s.release_lease("r/reaper", "B").await.unwrap(),
        "non-holder cannot release"
    );
    assert!(!s.acquire_lease("r/reaper", "B", 500).await.unwrap());
    // A "crashes": it never renews or releases. B takes over once the lease runs out.
    wait_until(DEADLINE, "the crashed holder's lease to expire", || async {
        s.acquire_lease("r/reaper", "B", 5000)
            .await
            .unwrap()
            .then_some(())
    })
    .await;
    assert!(!s.release_lease("r/reaper", "A").await.unwrap());
    assert!(s.release_lease("r/reaper", "B").await.unwrap());
    assert!(s.acquire_lease("r/reaper", "A", 500).await.unwrap());
}

async fn fixed_window_limits_and_resets(b: Backend) {
    let s = &b.store;
    for i in 1..=3 {
        let d = s.hit_window("visitor", 3, 1000).await.unwrap();
        assert!(d.allowed);
        assert_eq!(d.count, i);
    }
    let refused = s.hit_window("visitor", 3, 1000).await.unwrap();
    assert!(!refused.allowed);
    assert!(refused.reset_ms <= 1000);
    assert!(
        s.hit_window("other", 3, 1000).await.unwrap().allowed,
        "keys are separate"
    );
    wait_until(DEADLINE, "the window to reset", || async {
        s.hit_window("visitor", 3, 1000)
            .await
            .unwrap()
            .allowed
            .then_some(())
    })
    .await;
}

/// The figures a join or status answers are exact in the same call that admits: the
/// count of live sessions follows the admissions the call itself made (Lua counts them
/// once per script run), and a visitor promoted by their own join is told so.
async fn figures_stay_exact_through_the_admissions_a_call_makes(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let walk_in = s.join("r", &v(0)).await.unwrap();
    assert_eq!((walk_in.state, walk_in.active), (VisitorState::Admitted, 1));
    let q1 = s.join("r", &v(1)).await.unwrap();
    assert_eq!((q1.position, q1.active, q1.queue_length), (1, 1, 1));
    let q2 = s.join("r", &v(2)).await.unwrap();
    assert_eq!((q2.position, q2.active, q2.queue_length), (2, 1, 2));
    // v0's session runs out; no promote has run since (tests start no promoter).
    wait_until(DEADLINE, "v0's session to expire", || async {
        (s.status("r", &v(0)).await.unwrap().state != VisitorState::Admitted).then_some(())
    })
    .await;
    // v1's own join promotes v1: admitted, and the live count includes them.
    let own = s.join("r", &v(1)).await.unwrap();
    assert_eq!(own.state, VisitorState::Admitted);
    assert_eq!(own.promoted, vec![v(1)]);
    assert_eq!(own.active, 1);
    let st = s.status("r", &v(2)).await.unwrap();
    assert_eq!(
        (st.state, st.position, st.active, st.queue_length),
        (VisitorState::Queued, 1, 1, 1)
    );
    // A release frees the slot and promotes v2 in the same call.
    s.release("r", &v(1)).await.unwrap();
    let after = s.status("r", &v(2)).await.unwrap();
    assert_eq!(
        (after.state, after.active, after.queue_length),
        (VisitorState::Admitted, 1, 0)
    );
    assert_eq!(s.stats("r").await.unwrap().admitted_total, 3);
}

/// A visitor let in from the line who never comes to claim the session (no status, no
/// socket, no pass check, no release) is quiet once half the heartbeat timeout has
/// passed: the ETA's basis lists the session apart, and its expiry is not a stay.
async fn unclaimed_sessions_are_quiet_and_not_stays(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 2,
            heartbeat_timeout_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    // A walk-in is there (it gets the answer); its release is a stay.
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    s.join("r", &v(1)).await.unwrap();
    s.join("r", &v(2)).await.unwrap();
    s.release("r", &v(0)).await.unwrap();
    // v1 was let in by that release and has not been seen since.
    let quiet = wait_until(DEADLINE, "v1's session to turn quiet", || async {
        let e = s.eta_basis("r").await.unwrap();
        (!e.quiet.is_empty()).then_some(e)
    })
    .await;
    assert_eq!((quiet.active, quiet.quiet.len()), (1, 1));
    assert!(quiet.sessions.is_empty(), "{:?}", quiet.sessions);
    assert_eq!(quiet.ends.len(), 1, "only v0's release: {:?}", quiet.ends);
    // v1 comes back: claimed, an ordinary live session again, and its release a stay.
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Admitted
    );
    let claimed = s.eta_basis("r").await.unwrap();
    assert_eq!((claimed.sessions.len(), claimed.quiet.len()), (1, 0));
    s.release("r", &v(1)).await.unwrap();
    // v2, let in by that release, never comes: its session runs out unclaimed.
    wait_until(DEADLINE, "v2's session to expire", || async {
        (s.eta_basis("r").await.unwrap().active == 0).then_some(())
    })
    .await;
    let e = s.eta_basis("r").await.unwrap();
    assert_eq!(e.ends.len(), 2, "v0's and v1's releases only: {:?}", e.ends);
    // Pruning the expired session does not record it either.
    s.reap("r", 100).await.unwrap();
    assert_eq!(s.eta_basis("r").await.unwrap().ends.len(), 2);
}

/// `join_limited`: a group (one client network) holds at most `max` places or live
/// sessions; a refused join takes nothing; places that end stop counting; joins that take
/// no new place are never refused.
async fn places_per_group_are_capped_and_free_up(b: Backend) {
    use anteroom::store::PlaceLimit;
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    let g = PlaceLimit {
        group: "203.0.113.9".into(),
        max: 2,
    };
    let other = PlaceLimit {
        group: "2001:db8:1:2::/64".into(),
        max: 2,
    };
    let join = |i: usize, l: &PlaceLimit| {
        let l = l.clone();
        async move { s.join_limited("r", &v(i), Some(&l)).await }
    };
    assert_eq!(join(0, &g).await.unwrap().state, VisitorState::Admitted);
    assert_eq!(join(1, &g).await.unwrap().position, 1);
    assert!(matches!(join(2, &g).await, Err(StoreError::TooManyPlaces)));
    assert_eq!(
        s.stats("r").await.unwrap().queue_length,
        1,
        "the refused join took nothing"
    );
    // Joining again takes no new place: never refused.
    assert_eq!(join(1, &g).await.unwrap().position, 1);
    assert_eq!(join(0, &g).await.unwrap().state, VisitorState::Admitted);
    // Another group is counted on its own; a join without a limit is not counted.
    assert_eq!(join(3, &other).await.unwrap().position, 2);
    assert_eq!(s.join("r", &v(4)).await.unwrap().position, 3);
    // v1 leaves the line: the group holds one (v0's session) and may take another.
    s.release("r", &v(1)).await.unwrap();
    assert_eq!(join(2, &g).await.unwrap().position, 3);
    assert!(matches!(join(5, &g).await, Err(StoreError::TooManyPlaces)));
    // v0's session ends (released): v3 is let in, and the group has room again.
    s.release("r", &v(0)).await.unwrap();
    assert!(join(5, &g).await.is_ok());
}

async fn watch_reports_each_visitor_in_one_call(b: Backend) {
    let b = b.with_room(quiet_after_1s(room("r", 1))).await;
    let s = &b.store;
    for i in 0..3 {
        s.join("r", &v(i)).await.unwrap();
    }
    let (view, entries) = s.watch("r", &[v(0), v(1), v(2), v(9)]).await.unwrap();
    assert_eq!((view.queue_length, view.active, view.capacity), (2, 1, 1));
    assert!(matches!(&entries[0], WatchEntry::Admitted(a) if a.serial == 1));
    assert_eq!(
        entries[1..],
        [
            WatchEntry::Queued { position: 1 },
            WatchEntry::Queued { position: 2 },
            WatchEntry::Gone
        ]
    );
    assert_eq!(view.state_of(&entries[1]), VisitorState::Queued);
    // Watching keeps v2 alive while v1, unwatched, is reaped.
    wait_until(DEADLINE, "v1 to be reaped", || async {
        s.watch("r", &[v(2)]).await.unwrap();
        (s.reap("r", 100).await.unwrap().dropped > 0).then_some(())
    })
    .await;
    let (_, e) = s.watch("r", &[v(1), v(2)]).await.unwrap();
    assert_eq!(e, [WatchEntry::Gone, WatchEntry::Queued { position: 1 }]);
}

async fn admissions_are_published(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    let mut events = s.subscribe().await.unwrap();
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    s.release("r", &v(0)).await.unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        let ev = tokio::time::timeout(DEADLINE, events.next())
            .await
            .expect("an admission event")
            .expect("stream open");
        got.push((ev.room, ev.visitor, ev.admission.serial));
    }
    assert_eq!(got, [("r".into(), v(0), 1), ("r".into(), v(1), 2)]);
}

async fn patches_change_only_named_fields_and_promote(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            stock: Some(10),
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    for i in 0..4 {
        s.join("r", &v(i)).await.unwrap();
    }
    let admitted = s
        .patch_room(
            "r",
            &RoomPatch {
                capacity: Some(3),
                name: Some("Renamed".into()),
                ..RoomPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        admitted,
        vec![v(1), v(2)],
        "a raised capacity admits at once"
    );
    let cfg = s.room("r").await.unwrap().unwrap();
    assert_eq!((cfg.capacity, cfg.name.as_str()), (3, "Renamed"));
    assert_eq!(cfg.stock, Some(7), "stock is never overwritten by a patch");
    assert_eq!(cfg.session_ttl_secs, 60);
    let paused = RoomPatch {
        paused: Some(true),
        ..RoomPatch::default()
    };
    s.patch_room("r", &paused).await.unwrap();
    s.release("r", &v(0)).await.unwrap();
    assert_eq!(
        s.status("r", &v(3)).await.unwrap().state,
        VisitorState::Paused
    );
    let resumed = RoomPatch {
        paused: Some(false),
        ..RoomPatch::default()
    };
    assert_eq!(s.patch_room("r", &resumed).await.unwrap(), vec![v(3)]);
    assert!(matches!(
        s.patch_room("nope", &resumed).await,
        Err(StoreError::NoSuchRoom)
    ));
}

async fn stock_changes_are_atomic_and_promote(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            stock: Some(1),
            ..room("r", 10)
        })
        .await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap();
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::SoldOut
    );
    // Sold-out joins are not queued; queue someone while stock is topped up.
    let (old, new, admitted) = s.change_stock("r", StockChange::Add(2)).await.unwrap();
    assert_eq!((old, new), (Some(0), Some(2)));
    assert!(admitted.is_empty());
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Admitted
    );
    assert_eq!(
        s.change_stock("r", StockChange::Set(5)).await.unwrap().1,
        Some(5)
    );
    assert_eq!(
        s.change_stock("r", StockChange::Unlimited).await.unwrap().1,
        None
    );
    assert_eq!(
        s.change_stock("r", StockChange::Add(3)).await.unwrap().1,
        None,
        "unlimited stays unlimited"
    );
}

async fn flush_empties_the_queue_but_keeps_sessions(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    for i in 0..4 {
        s.join("r", &v(i)).await.unwrap();
    }
    assert_eq!(s.flush("r").await.unwrap(), 3);
    let st = s.stats("r").await.unwrap();
    assert_eq!((st.queue_length, st.active), (0, 1));
    assert_eq!(
        s.status("r", &v(2)).await.unwrap().state,
        VisitorState::NotQueued
    );
}

async fn reports_keep_a_per_minute_history(b: Backend) {
    let b = b.with_room(quiet_after_1s(room("r", 1))).await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap(); // walk-in, waited 0
    s.join("r", &v(1)).await.unwrap();
    s.join("r", &v(2)).await.unwrap(); // will go silent and be reaped
    s.release("r", &v(0)).await.unwrap(); // v1 admitted after a short wait
    wait_until(DEADLINE, "v2 to be reaped", || async {
        (s.reap("r", 100).await.unwrap().dropped == 1).then_some(())
    })
    .await;
    s.promote("r", 10).await.unwrap(); // samples the queue length
    let r = s.report("r", 30).await.unwrap();
    assert_eq!((r.admitted_total, r.reaped_total), (2, 1));
    let admissions: u64 = r.minutes.iter().map(|m| m.admissions).sum();
    let reaped: u64 = r.minutes.iter().map(|m| m.reaped).sum();
    let waits: u64 = r.minutes.iter().map(|m| m.waits.iter().sum::<u64>()).sum();
    assert_eq!((admissions, reaped, waits), (2, 1, 2));
    assert_eq!(r.minutes.last().unwrap().queue_length, Some(0));
    assert_eq!(
        r.minutes.iter().map(|m| m.waits[0]).sum::<u64>(),
        2,
        "both waited under a second"
    );
}

async fn socket_counts_and_audit_are_kept(b: Backend) {
    let s = &b.store;
    s.report_sockets("i1", &[("a".into(), 3), ("b".into(), 1)])
        .await
        .unwrap();
    s.report_sockets("i2", &[("a".into(), 5)]).await.unwrap();
    let mut got: Vec<(String, String, u64)> = s
        .sockets()
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.instance, c.room, c.count))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("i1".into(), "a".into(), 3),
            ("i1".into(), "b".into(), 1),
            ("i2".into(), "a".into(), 5)
        ]
    );
    for i in 0..5 {
        s.audit_push(&format!("entry {i}"), 3).await.unwrap();
    }
    assert_eq!(
        s.audit(10).await.unwrap(),
        ["entry 4", "entry 3", "entry 2"]
    );
}

/// The configuration version: 1 at creation, one more per change of value (patch, stock,
/// overwrite), checked and bumped atomically with the write; admissions and patches that
/// change nothing leave it.
async fn config_versions_count_changes_and_refuse_stale_patches(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            stock: Some(5),
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let version = || async { s.room_versioned("r").await.unwrap().unwrap().1 };
    assert_eq!(version().await, 1, "a new room is at version 1");
    let cap = |n| RoomPatch {
        capacity: Some(n),
        ..RoomPatch::default()
    };
    let applied = s.patch_room_if("r", &cap(3), Some(1)).await.unwrap();
    assert_eq!(
        applied,
        PatchOutcome::Applied {
            version: 2,
            admitted: vec![]
        }
    );
    assert_eq!(
        s.patch_room_if("r", &cap(3), None).await.unwrap(),
        PatchOutcome::Applied {
            version: 2,
            admitted: vec![]
        },
        "a patch that changes nothing keeps the version"
    );
    // A change based on version 1 comes too late: nothing is written.
    assert_eq!(
        s.patch_room_if("r", &cap(9), Some(1)).await.unwrap(),
        PatchOutcome::Stale { version: 2 }
    );
    let (cfg, ver) = s.room_versioned("r").await.unwrap().unwrap();
    assert_eq!((cfg.capacity, ver), (3, 2));
    // Admissions consume stock without changing the version.
    s.join("r", &v(0)).await.unwrap();
    let (cfg, ver) = s.room_versioned("r").await.unwrap().unwrap();
    assert_eq!((cfg.stock, ver), (Some(4), 2));
    s.change_stock("r", StockChange::Set(10)).await.unwrap();
    assert_eq!(version().await, 3, "a stock change is a change");
    s.change_stock("r", StockChange::Set(10)).await.unwrap();
    assert_eq!(version().await, 3, "setting the same stock is not");
    let paused = RoomPatch {
        paused: Some(true),
        ..RoomPatch::default()
    };
    assert_eq!(
        s.patch_room_if("r", &paused, Some(3)).await.unwrap(),
        PatchOutcome::Applied {
            version: 4,
            admitted: vec![]
        }
    );
    s.put_room(&cfg, false).await.unwrap();
    assert_eq!(version().await, 5, "an overwrite is a change");
    assert!(matches!(
        s.patch_room_if("nope", &paused, Some(1)).await,
        Err(StoreError::NoSuchRoom)
    ));
    assert_eq!(s.room_versioned("nope").await.unwrap(), None);
}

/// An admin's search by id prefix (a support code's 10 hex digits, or a whole id):
/// queued visitors with their position, admitted ones with their session; gone ones
/// (released, expired) are not found, and looking up refreshes no heartbeat.
async fn visitors_are_found_by_id_prefix(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let id = |p: &str, i: usize| format!("{p}{i:0>w$x}", w = 32 - p.len());
    let (held, q1, q2, other) = (
        id("aaaaaaaaaa", 1),
        id("bbbbbbbbbb", 2),
        id("aaaaaaaaaa", 3),
        id("cccccccccc", 4),
    );
    for x in [&held, &q1, &q2, &other] {
        s.join("r", x).await.unwrap();
    }
    let found = s.find_visitors("r", "aaaaaaaaaa", 20).await.unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].visitor, held, "admitted first");
    assert!(matches!(found[0].place, WatchEntry::Admitted(ref a) if a.serial == 1));
    assert_eq!(
        (found[1].visitor.as_str(), &found[1].place),
        (q2.as_str(), &WatchEntry::Queued { position: 2 })
    );
    let exact = s.find_visitors("r", &q1, 20).await.unwrap();
    assert_eq!(exact.len(), 1);
    assert_eq!(exact[0].place, WatchEntry::Queued { position: 1 });
    assert_eq!(
        s.find_visitors("r", "aaaaaaaaaa", 1).await.unwrap().len(),
        1
    );
    assert!(s
        .find_visitors("r", "dddddddddd", 20)
        .await
        .unwrap()
        .is_empty());
    s.release("r", &q2).await.unwrap();
    // The held session expires (not yet pruned): neither is found any more.
    wait_until(DEADLINE, "the session to expire", || async {
        (s.stats("r").await.unwrap().active == 0).then_some(())
    })
    .await;
    assert!(s
        .find_visitors("r", "aaaaaaaaaa", 20)
        .await
        .unwrap()
        .is_empty());
    assert!(matches!(
        s.find_visitors("nope", "aaaaaaaaaa", 20).await,
        Err(StoreError::NoSuchRoom)
    ));
}

fn lanes(list: &[(&str, f64)]) -> Vec<anteroom::config::Lane> {
    list.iter()
        .map(|(name, share)| anteroom::config::Lane {
            name: name.to_string(),
            share: *share,
        })
        .collect()
}

/// A join in `lane` ("" = none).
async fn join_in(s: &Arc<dyn Store>, i: usize, lane: &str) -> anteroom::store::Snapshot {
    let opts = anteroom::store::JoinOptions {
        limit: None,
        lane: (!lane.is_empty()).then(|| lane.to_string()),
        score: None,
    };
    s.join_with("r", &v(i), &opts).await.unwrap()
}

/// Everyone's position in line, in one call.
async fn positions(s: &Arc<dyn Store>, ids: &[String]) -> Vec<u64> {
    let (_, entries) = s.watch("r", ids).await.unwrap();
    entries
        .iter()
        .map(|e| match e {
            WatchEntry::Queued { position } => *position,
            _ => 0,
        })
        .collect()
}

/// Priority lanes: over 1,000 admissions each lane gets its share (members 30 %, the
/// general line the rest), FIFO inside each lane, and the positions shown before are
/// the real order: exactly the first 1,000 shown are let in. The lanes' counts follow.
async fn lanes_get_their_shares_fifo_inside_and_positions_are_the_real_order(b: Backend) {
    let cfg = RoomConfig {
        paused: true,
        lanes: lanes(&[("members", 0.3)]),
        ..room("r", 1000)
    };
    let b = b.with_room(cfg).await;
    let s = &b.store;
    // 1,500 of each, arriving alternately.
    let n = 3000;
    let lane_of = |i: usize| if i.is_multiple_of(2) { "" } else { "members" };
    for i in 0..n {
        join_in(s, i, lane_of(i)).await;
    }
    let ids: Vec<String> = (0..n).map(v).collect();
    let pos = positions(s, &ids).await;
    let mut sorted = pos.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (1..=n as u64).collect::<Vec<_>>(),
        "positions are a permutation"
    );
    for lane in ["", "members"] {
        let in_lane: Vec<u64> = (0..n)
            .filter(|i| lane_of(*i) == lane)
            .map(|i| pos[i])
            .collect();
        assert!(
            in_lane.windows(2).all(|w| w[0] < w[1]),
            "FIFO inside lane {lane:?}"
        );
    }
    let report = s.report("r", 1).await.unwrap();
    let waiting: Vec<(String, u64)> = report
        .lanes
        .iter()
        .map(|l| (l.lane.clone(), l.waiting))
        .collect();
    assert_eq!(waiting, vec![("".into(), 1500), ("members".into(), 1500)]);

    // Resume: the promotion lets in 1,000 (capacity), in the order the positions said.
    let patch = RoomPatch {
        paused: Some(false),
        ..RoomPatch::default()
    };
    let mut admitted = s.patch_room("r", &patch).await.unwrap();
    admitted.sort();
    let mut expected: Vec<String> = (0..n).filter(|i| pos[*i] <= 1000).map(v).collect();
    expected.sort();
    assert_eq!(admitted.len(), 1000);
    assert_eq!(
        admitted, expected,
        "the first 1,000 positions shown are the ones let in"
    );
    let members = admitted
        .iter()
        .filter(|id| ids.iter().position(|x| x == *id).unwrap() % 2 == 1)
        .count();
    assert!(
        (299..=301).contains(&members),
        "members got {members} of 1,000 admissions (share 0.3)"
    );
    let report = s.report("r", 1).await.unwrap();
    let counts: Vec<(String, u64, u64)> = report
        .lanes
        .iter()
        .map(|l| (l.lane.clone(), l.waiting, l.admitted))
        .collect();
    assert_eq!(
        counts,
        vec![
            (
                "".into(),
                1500 - (1000 - members as u64),
                1000 - members as u64
            ),
            ("members".into(), 1500 - members as u64, members as u64),
        ]
    );
}

/// A lane that was idle banks no credit: members arriving after a long line has been
/// moving get their share of what follows, not a burst; a lane empty lends its share to
/// the others; a lane the room does not have queues in the general line; leaving,
/// silence and a flush keep the lanes' counts.
async fn an_idle_lane_banks_no_credit_and_counts_follow_the_line(b: Backend) {
    let cfg = RoomConfig {
        paused: true,
        lanes: lanes(&[("members", 0.3)]),
        ..room("r", 10)
    };
    let b = b.with_room(cfg).await;
    let s = &b.store;
    for i in 0..100 {
        join_in(s, i, "").await;
    }
    let resume = RoomPatch {
        paused: Some(false),
        ..RoomPatch::default()
    };
    // The members' lane is empty: all 10 slots go to the general line, in order.
    let first = s.patch_room("r", &resume).await.unwrap();
    assert_eq!(first, (0..10).map(v).collect::<Vec<_>>());
    for i in 0..10 {
        s.release("r", &v(i)).await.unwrap();
    }
    // Members arrive only now.
    for i in 100..120 {
        join_in(s, i, "members").await;
    }
    let mut next = Vec::new();
    for i in 10..20 {
        next.extend(s.release("r", &v(i)).await.unwrap().1);
    }
    let members = next.iter().filter(|id| **id >= v(100)).count();
    assert!(
        (2..=4).contains(&members),
        "members got {members} of the next 10 (share 0.3), not a burst: {next:?}"
    );
    // A lane the room does not have: the general line.
    join_in(s, 200, "no-such-lane").await;
    let lanes_now = |r: anteroom::store::RoomReport| -> Vec<(String, u64)> {
        r.lanes.into_iter().map(|l| (l.lane, l.waiting)).collect()
    };
    let queued = s.stats("r").await.unwrap().queue_length;
    let in_members = 20 - members as u64;
    assert_eq!(
        lanes_now(s.report("r", 1).await.unwrap()),
        vec![
            ("".into(), queued - in_members),
            ("members".into(), in_members)
        ]
    );
    // A member leaves the line; then a flush empties every lane.
    assert!(s.release("r", &v(119)).await.unwrap().0);
    assert_eq!(
        lanes_now(s.report("r", 1).await.unwrap())[1],
        ("members".into(), in_members - 1)
    );
    s.flush("r").await.unwrap();
    assert_eq!(
        lanes_now(s.report("r", 1).await.unwrap()),
        vec![("".into(), 0), ("members".into(), 0)]
    );
    // Members and a general visitor wait (the members' tickets run past the general
    // line's); lanes switched off: no lane figures, and newcomers (a lane token's too)
    // queue behind everyone, FIFO.
    for i in 250..280 {
        join_in(s, i, "members").await;
    }
    join_in(s, 280, "").await;
    let off = RoomPatch {
        lanes: Some(Vec::new()),
        ..RoomPatch::default()
    };
    s.patch_room("r", &off).await.unwrap();
    assert!(s.report("r", 1).await.unwrap().lanes.is_empty());
    let a = join_in(s, 300, "members").await;
    let b2 = join_in(s, 301, "").await;
    assert_eq!(
        (a.position, b2.position),
        (32, 33),
        "behind all, FIFO again"
    );
}

/// Silent visitors in a lane are reaped and leave its count.
async fn reaped_lane_visitors_leave_its_count(b: Backend) {
    let cfg = RoomConfig {
        paused: true,
        heartbeat_timeout_secs: 1,
        lanes: lanes(&[("members", 0.3)]),
        ..room("r", 1)
    };
    let b = b.with_room(cfg).await;
    let s = &b.store;
    join_in(s, 0, "members").await;
    join_in(s, 1, "").await;
    wait_until(DEADLINE, "both to be reaped", || async {
        s.reap("r", 100).await.unwrap();
        (s.stats("r").await.unwrap().queue_length == 0).then_some(())
    })
    .await;
    let r = s.report("r", 1).await.unwrap();
    assert_eq!(
        r.lanes.iter().map(|l| l.waiting).collect::<Vec<_>>(),
        vec![0, 0]
    );
}

/// A store that lost its data gets places back with their original tickets: put back in
/// any order they keep their order, later joins queue behind them, a visitor who holds a
/// place or a session keeps it, and `status` leaves the ticket out (it stays cheap).
async fn restored_places_keep_their_original_order(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    let mut places = Vec::new();
    for i in 1..=5 {
        let snap = s.join("r", &v(i)).await.unwrap();
        assert!(snap.ticket > 0 && snap.joined_at_ms > 0, "{snap:?}");
        places.push((snap.ticket, snap.joined_at_ms));
    }
    assert!(
        places.windows(2).all(|w| w[0].0 < w[1].0),
        "tickets rise: {places:?}"
    );
    // Joining again reports the same place; status leaves it out.
    assert_eq!(s.join("r", &v(3)).await.unwrap().ticket, places[2].0);
    assert_eq!(s.status("r", &v(3)).await.unwrap().ticket, 0);
    // The store forgets everything (as after FLUSHALL); the room comes back empty.
    assert!(s.delete_room("r").await.unwrap());
    assert!(s.put_room(&room("r", 1), true).await.unwrap());
    for i in [5, 2, 4, 1, 3] {
        let (t, j) = places[i - 1];
        let snap = s.restore_place("r", &v(i), t, j).await.unwrap();
        assert_eq!(
            snap.state,
            VisitorState::Queued,
            "not promoted by the restore"
        );
        assert_eq!((snap.ticket, snap.joined_at_ms), (t, j));
    }
    // A second restore changes nothing.
    let again = s.restore_place("r", &v(2), 1, 1).await.unwrap();
    assert_eq!((again.position, again.ticket), (2, places[1].0));
    for i in 1..=5 {
        assert_eq!(s.status("r", &v(i)).await.unwrap().position, i as u64);
    }
    // A newcomer's join lets in the first (the free slot) and queues behind the rest.
    let newcomer = s.join("r", &v(9)).await.unwrap();
    assert_eq!(
        (newcomer.promoted.clone(), newcomer.position),
        (vec![v(1)], 5)
    );
    // An admitted visitor is not put back in line.
    let admitted = s
        .restore_place("r", &v(1), places[0].0, places[0].1)
        .await
        .unwrap();
    assert_eq!(admitted.state, VisitorState::Admitted);
    assert!(matches!(
        s.restore_place("nope", &v(1), 1, 1).await,
        Err(StoreError::NoSuchRoom)
    ));
}

/// An admission the store forgot comes back from the pass: it counts against capacity,
/// later admissions take later serials, and nothing is put back for an expired pass, a
/// visitor back in line, or over another session.
async fn restored_sessions_count_again(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    let a0 = s.join("r", &v(0)).await.unwrap().admission.unwrap();
    assert!(s.delete_room("r").await.unwrap());
    assert!(s.put_room(&room("r", 1), true).await.unwrap());
    assert!(s.restore_session("r", &v(0), &a0).await.unwrap());
    assert!(
        s.restore_session("r", &v(0), &a0).await.unwrap(),
        "idempotent"
    );
    assert_eq!(s.stats("r").await.unwrap().active, 1);
    assert!(s.session_live("r", &v(0), a0.serial).await.unwrap());
    // It holds the slot: the next visitor waits.
    assert_eq!(s.join("r", &v(1)).await.unwrap().position, 1);
    // Not over another session, not for someone in line, not when expired.
    let other = anteroom::store::Admission {
        serial: a0.serial + 7,
        ..a0.clone()
    };
    assert!(!s.restore_session("r", &v(0), &other).await.unwrap());
    assert!(!s.restore_session("r", &v(1), &a0).await.unwrap());
    let expired = anteroom::store::Admission {
        expires_at_ms: 1,
        ..a0.clone()
    };
    assert!(!s.restore_session("r", &v(2), &expired).await.unwrap());
    // The next admission takes a later serial than the one put back.
    let (_, promoted) = s.release("r", &v(0)).await.unwrap();
    assert_eq!(promoted, vec![v(1)]);
    let a1 = s.status("r", &v(1)).await.unwrap().admission.unwrap();
    assert!(a1.serial > a0.serial, "{a1:?} after {a0:?}");
    // A session its visitor released is not revived by a restore a moment later (a
    // failover whose new master had it, then a list read before).
    assert!(!s.restore_session("r", &v(0), &a0).await.unwrap());
    // A serial known but not put back still moves the counter: no later admission
    // reuses it.
    let gone = anteroom::store::Admission {
        serial: a1.serial + 50,
        expires_at_ms: 1,
        ..a1.clone()
    };
    assert!(!s.restore_session("r", &v(7), &gone).await.unwrap());
    s.join("r", &v(8)).await.unwrap();
    s.release("r", &v(1)).await.unwrap();
    let a8 = s.status("r", &v(8)).await.unwrap().admission.unwrap();
    assert!(a8.serial > gone.serial, "{a8:?} after {gone:?}");
    // A session the store forgot and its visitor then released is not put back by an
    // instance restoring a moment later.
    assert!(s.delete_room("r").await.unwrap());
    assert!(s.put_room(&room("r", 1), true).await.unwrap());
    assert_eq!(s.release("r", &v(1)).await.unwrap(), (false, vec![]));
    assert!(!s.restore_session("r", &v(1), &a1).await.unwrap());
    assert_eq!(s.stats("r").await.unwrap().active, 0);
}

/// A room re-created after the store lost its data holds admissions and new places for a
/// while: the places and sessions put back during the hold come first, and a newcomer
/// queues behind them once it ends.
async fn a_recreated_room_holds_admissions_while_places_come_back(b: Backend) {
    let s = &b.store;
    let cfg = room("r", 2);
    let a0 = {
        assert!(s.put_room(&cfg, true).await.unwrap());
        let a0 = s.join("r", &v(0)).await.unwrap().admission.unwrap();
        assert!(s.delete_room("r").await.unwrap());
        a0
    };
    assert!(s.recreate_room(&cfg, 400).await.unwrap());
    assert!(!s.recreate_room(&cfg, 400).await.unwrap(), "create-only");
    match s.join("r", &v(9)).await {
        Err(StoreError::Held { retry_after_ms }) => {
            assert!((1..=400).contains(&retry_after_ms), "{retry_after_ms}")
        }
        other => panic!("a newcomer got {other:?} during the hold"),
    }
    assert!(s.restore_session("r", &v(0), &a0).await.unwrap());
    for (i, ticket) in [(2, 7000), (1, 5000)] {
        s.restore_place("r", &v(i), ticket, 1).await.unwrap();
    }
    // A free slot, a line, and no admission while held (promote, and the join of someone
    // in line, which promotes first).
    assert_eq!(s.promote("r", 10).await.unwrap(), Vec::<String>::new());
    let v1 = s.join("r", &v(1)).await.unwrap();
    assert_eq!((v1.state, v1.position), (VisitorState::Queued, 1));
    // Once the hold ends the head goes in, and the newcomer queues behind the rest.
    let late = wait_until(DEADLINE, "the hold to end", || async {
        s.join("r", &v(9)).await.ok()
    })
    .await;
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Admitted
    );
    assert_eq!(s.status("r", &v(2)).await.unwrap().position, 1);
    assert_eq!((late.state, late.position), (VisitorState::Queued, 2));
    // Without a hold, a re-created room admits at once.
    assert!(s.delete_room("r").await.unwrap());
    assert!(s.recreate_room(&cfg, 0).await.unwrap());
    assert_eq!(
        s.join("r", &v(3)).await.unwrap().state,
        VisitorState::Admitted
    );
}

/// The live sessions listed (what each instance keeps to put them back after a loss):
/// each with its admission, soonest expiry first, ended ones left out, at most `limit`.
async fn live_sessions_are_listed_with_their_admissions(b: Backend) {
    use anteroom::store::SessionsQuery;
    let b = b.with_room(room("r", 2)).await;
    let s = &b.store;
    let all = |limit| SessionsQuery {
        expires_from: 0,
        gone_after: None,
        limit,
    };
    let a0 = s.join("r", &v(0)).await.unwrap().admission.unwrap();
    let a1 = s.join("r", &v(1)).await.unwrap().admission.unwrap();
    assert_eq!(s.join("r", &v(2)).await.unwrap().position, 1);
    let page = s.sessions("r", &all(10)).await.unwrap();
    let mut listed = page.sessions.clone();
    listed.sort_by_key(|(_, a)| a.serial);
    assert_eq!(listed, vec![(v(0), a0.clone()), (v(1), a1.clone())]);
    assert!(page.gone.is_empty(), "not asked");
    assert_eq!(s.sessions("r", &all(1)).await.unwrap().sessions.len(), 1);
    // What changed since: the release of v0 and the admission of v2 it made (the cursor
    // is inclusive: a session expiring in the same millisecond as the last seen comes
    // again; one expiring before it does not).
    let cursor = a0.expires_at_ms.max(a1.expires_at_ms);
    s.release("r", &v(0)).await.unwrap();
    let a2 = s.status("r", &v(2)).await.unwrap().admission.unwrap();
    let changed = s
        .sessions(
            "r",
            &SessionsQuery {
                expires_from: cursor,
                gone_after: Some(page.now_ms),
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert!(
        changed.sessions.contains(&(v(2), a2.clone())),
        "{changed:?}"
    );
    assert!(changed.sessions.iter().all(|(w, _)| *w != v(0)));
    assert_eq!(
        changed
            .gone
            .iter()
            .map(|(g, _)| g.clone())
            .collect::<Vec<_>>(),
        vec![v(0)]
    );
    assert!(changed.gone[0].1 >= page.now_ms && changed.gone[0].1 <= changed.now_ms);
    let mut listed = s.sessions("r", &all(10)).await.unwrap().sessions;
    listed.sort_by_key(|(_, a)| a.serial);
    assert_eq!(listed, vec![(v(1), a1), (v(2), a2)]);
    assert!(matches!(
        s.sessions("nope", &all(10)).await,
        Err(StoreError::NoSuchRoom)
    ));
}

async fn revocations_are_read_in_order_from_a_cursor(b: Backend) {
    use anteroom::store::Revocation;
    let s = &b.store;
    let far = anteroom::clock::wall_ms() + 600_000;
    let rev = |i: usize, exp: u64| Revocation {
        room: "r".into(),
        visitor: v(i),
        serial: i as u64,
        expires_at_ms: exp,
    };
    assert!(s.revocations_since(0, 10).await.unwrap().entries.is_empty());
    s.revoke(&rev(1, far)).await.unwrap();
    s.revoke(&rev(2, far)).await.unwrap();
    // Already expired: not written.
    s.revoke(&rev(3, 1)).await.unwrap();
    let all = s.revocations_since(0, 10).await.unwrap();
    assert_eq!(all.entries, vec![rev(1, far), rev(2, far)]);
    assert!(!all.more);
    // A limit stops the read and says more is waiting; the cursor goes on from there.
    let one = s.revocations_since(0, 1).await.unwrap();
    assert_eq!((one.entries.clone(), one.more), (vec![rev(1, far)], true));
    let two = s.revocations_since(one.cursor, 1).await.unwrap();
    assert_eq!((two.entries, two.more), (vec![rev(2, far)], false));
    // Nothing new: nothing read, the cursor stays.
    let none = s.revocations_since(all.cursor, 10).await.unwrap();
    assert!(none.entries.is_empty());
    assert_eq!(none.cursor, all.cursor);
    // A pass revoked again comes after the cursor once more.
    s.revoke(&rev(1, far)).await.unwrap();
    let again = s.revocations_since(all.cursor, 10).await.unwrap();
    assert_eq!(again.entries, vec![rev(1, far)]);
    // A cursor past the log's end (the store lost it) reads from the start.
    let lost = s.revocations_since(again.cursor + 1000, 10).await.unwrap();
    assert_eq!(lost.entries, vec![rev(2, far), rev(1, far)]);
}

/// A release reports the live session it ended (what the revocation log needs when no
/// pass was presented): none for a place in the line, for nothing held, or for a session
/// that had run out.
async fn release_reports_the_live_session_it_ended(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let a0 = s.join("r", &v(0)).await.unwrap().admission.unwrap();
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    let left = s.release_ended("r", &v(1)).await.unwrap();
    assert!(left.held && left.session.is_none() && left.admitted.is_empty());
    let ended = s.release_ended("r", &v(0)).await.unwrap();
    assert!(ended.held);
    assert_eq!(ended.session, Some(a0));
    let again = s.release_ended("r", &v(0)).await.unwrap();
    assert!(!again.held && again.session.is_none());
    // A session that ran out (not yet pruned) is no live session to revoke.
    let a2 = s.join("r", &v(2)).await.unwrap().admission.unwrap();
    wait_until(DEADLINE, "the session to run out", || async {
        (!s.session_live("r", &v(2), a2.serial).await.unwrap()).then_some(())
    })
    .await;
    assert_eq!(s.release_ended("r", &v(2)).await.unwrap().session, None);
}

/// `renew_on_activity`'s store half: only the live session with the given serial is
/// extended, to now + ttl but never past issue + cap and never earlier than it was, and
/// an extended session keeps counting against capacity past its first end.
async fn a_live_session_is_extended_up_to_its_cap(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let a0 = s.join("r", &v(0)).await.unwrap().admission.unwrap();
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    assert_eq!(
        s.extend_session("r", &v(0), a0.serial + 1, 60_000, 60_000)
            .await
            .unwrap(),
        None,
        "another serial"
    );
    assert_eq!(
        s.extend_session("r", &v(1), 1, 60_000, 60_000)
            .await
            .unwrap(),
        None,
        "a queued visitor"
    );
    // Capped at issue + 3 s however long the ttl asked.
    let cap = a0.issued_at_ms + 3000;
    let e = s
        .extend_session("r", &v(0), a0.serial, 60_000, 3000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (e.serial, e.issued_at_ms, e.expires_at_ms),
        (a0.serial, a0.issued_at_ms, cap)
    );
    // Never shortened.
    let again = s
        .extend_session("r", &v(0), a0.serial, 10, 3000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.expires_at_ms, cap);
    let all = anteroom::store::SessionsQuery {
        expires_from: 0,
        gone_after: None,
        limit: 10,
    };
    let listed = s.sessions("r", &all).await.unwrap().sessions;
    assert_eq!(listed, vec![(v(0), e.clone())]);
    // Past its first end it is still live and still holds the only slot.
    wait_until(DEADLINE, "the session's first end to pass", || async {
        (anteroom::clock::wall_ms() > a0.expires_at_ms + 100).then_some(())
    })
    .await;
    assert!(s.session_live("r", &v(0), a0.serial).await.unwrap());
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    // Ended: nothing to extend.
    s.release("r", &v(0)).await.unwrap();
    assert_eq!(
        s.extend_session("r", &v(0), a0.serial, 60_000, 60_000)
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        s.extend_session("nope", &v(0), 1, 1, 1).await,
        Err(StoreError::NoSuchRoom)
    ));
}

/// A page gone to the background holds a queued place past the heartbeat timeout; later
/// heartbeats never move it back; nothing for a visitor not in line.
async fn a_hidden_page_keeps_its_place_past_the_heartbeat_timeout(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            paused: true,
            heartbeat_timeout_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    assert!(s.hold_away("r", &v(0), 60_000).await.unwrap());
    assert!(
        !s.hold_away("r", &v(9), 60_000).await.unwrap(),
        "not in line"
    );
    // A heartbeat after it (a status) does not shorten the hold.
    s.status("r", &v(0)).await.unwrap();
    wait_until(DEADLINE, "the silent visitor to be reaped", || async {
        s.reap("r", 100).await.unwrap();
        (s.stats("r").await.unwrap().queue_length == 1).then_some(())
    })
    .await;
    assert_eq!(s.status("r", &v(0)).await.unwrap().position, 1, "held");
    assert!(matches!(
        s.hold_away("nope", &v(0), 1).await,
        Err(StoreError::NoSuchRoom)
    ));
}

/// Issue 28 finding 11: one `away` beacon every so often held a place forever (each
/// moved the hold to now + grace). The hold is counted from the first hide: beacons sent
/// all along do not stretch it, and the silent visitor is reaped about a grace after it.
async fn a_hidden_page_is_held_a_grace_from_its_first_hide_however_often_it_says_so(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            paused: true,
            heartbeat_timeout_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    let grace_ms = 2_000;
    let first_hide = std::time::Instant::now();
    assert!(s.hold_away("r", &v(0), grace_ms).await.unwrap());
    // A beacon every 200 ms (the old code held 2 s past the last one: never reaped),
    // while v1 stays with its heartbeats (a status).
    wait_until(DEADLINE, "the hidden visitor to be reaped", || async {
        let _ = s.hold_away("r", &v(0), grace_ms).await.unwrap();
        s.status("r", &v(1)).await.unwrap();
        s.reap("r", 100).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        (s.stats("r").await.unwrap().queue_length == 1).then_some(())
    })
    .await;
    let held = first_hide.elapsed();
    assert!(
        held >= Duration::from_millis(grace_ms - 300),
        "held only {held:?}"
    );
    assert_eq!(s.status("r", &v(1)).await.unwrap().position, 1);
}

/// The room's stream of events for the shop: each change adds its event in the same
/// atomic step (admission, stock unit claimed, sold out, release, closed, opened,
/// expiry), read in order from any id on.
async fn every_change_adds_its_event_to_the_rooms_stream(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            session_ttl_secs: 1,
            stock: Some(2),
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    assert!(s.events("r", "0", 100).await.unwrap().is_empty());
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    s.release("r", &v(0)).await.unwrap(); // lets v1 in: the last unit
    let closed = RoomPatch {
        closed: Some(true),
        ..RoomPatch::default()
    };
    s.patch_room("r", &closed).await.unwrap();
    s.patch_room(
        "r",
        &RoomPatch {
            closed: Some(false),
            ..RoomPatch::default()
        },
    )
    .await
    .unwrap();
    wait_until(DEADLINE, "v1's session to expire", || async {
        (s.reap("r", 100).await.unwrap().expired == 1).then_some(())
    })
    .await;
    let got = s.events("r", "0", 100).await.unwrap();
    let seen: Vec<(&str, Option<String>, Option<u64>)> = got
        .iter()
        .map(|e| (e.kind.as_str(), e.visitor.clone(), e.serial))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("admission", Some(v(0)), Some(1)),
            ("stock_unit_claimed", Some(v(0)), Some(1)),
            ("release", Some(v(0)), Some(1)),
            ("admission", Some(v(1)), Some(2)),
            ("stock_unit_claimed", Some(v(1)), Some(2)),
            ("sold_out", None, None),
            ("closed", None, None),
            ("opened", None, None),
            ("expiry", Some(v(1)), Some(2)),
        ]
    );
    // Read on from any id, a page at a time.
    let rest = s.events("r", &got[5].id, 2).await.unwrap();
    assert_eq!(rest, got[6..8].to_vec());
    assert!(s.events("r", &got[8].id, 10).await.unwrap().is_empty());
}

/// An admission from the line carries the ticket its visitor held (a walk-in none), so
/// the FIFO audit can compare admission order with ticket order: in a FIFO room the
/// tickets rise (no discordant pair).
async fn admissions_from_the_line_carry_their_ticket(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    s.join("r", &v(0)).await.unwrap(); // a walk-in
    for i in 1..=3 {
        s.join("r", &v(i)).await.unwrap();
    }
    for i in 0..3 {
        s.release("r", &v(i)).await.unwrap(); // lets the next in
    }
    let got = s.events("r", "0", 100).await.unwrap();
    let admissions: Vec<(Option<String>, Option<u64>)> = got
        .iter()
        .filter(|e| e.kind == "admission")
        .map(|e| (e.visitor.clone(), e.ticket))
        .collect();
    assert_eq!(admissions.len(), 4, "{got:?}");
    assert_eq!(
        admissions[0],
        (Some(v(0)), None),
        "a walk-in holds no ticket"
    );
    let tickets: Vec<u64> = admissions[1..]
        .iter()
        .map(|(_, t)| t.expect("an admission from the line has its ticket"))
        .collect();
    assert!(tickets.windows(2).all(|w| w[0] < w[1]), "{tickets:?}");
    let audit = anteroom::domain::fifo_audit::FifoAudit::of_events(&got);
    assert_eq!((audit.admissions, audit.discordant_pairs), (3, 0));
    assert!(got
        .iter()
        .filter(|e| e.kind != "admission")
        .all(|e| e.ticket.is_none()));
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::memory().await).await })*
        }
        mod redis {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::redis().await).await })*
        }
        /// Every case again on a local three-master Redis Cluster (one cluster, cases in
        /// turn, each under its own key prefix).
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn redis_cluster_passes_every_case() {
            let cluster = RedisCluster::start();
            $( $name(Backend::cluster(&cluster).await).await; )*
        }
    };
}

conformance!(
    a_room_written_again_is_read_afresh,
    a_hub_counts_every_position_from_the_line_log,
    a_held_visitor_is_kept_until_its_hub_lets_go_or_its_lease_lapses,
    a_flush_starts_a_new_line_log_epoch,
    fifo_order,
    join_is_idempotent,
    joins_sent_together_take_one_place_each_in_the_order_sent,
    capacity_is_never_exceeded,
    release_and_expiry_admit_the_next,
    stock_is_never_oversold,
    stock_unit_is_taken_once_per_visitor,
    rate_cap_is_honoured,
    silent_visitors_are_reaped,
    a_heartbeat_holds_for_the_timeout_and_at_most_a_step_more,
    a_queued_reply_carries_its_heartbeat_and_the_line_cursor,
    expired_sessions_are_pruned_in_batches,
    pause_stops_admissions_but_not_the_queue,
    a_newcomer_never_walks_in_past_a_waiting_visitor,
    the_epoch_is_written_once_and_then_read,
    capacity_changes_apply_live,
    rooms_are_independent,
    closed_room_turns_newcomers_away_and_tells_the_queue,
    unknown_rooms_are_reported,
    session_liveness_follows_release,
    room_config_round_trips,
    leases_exclude_renew_and_expire,
    fixed_window_limits_and_resets,
    figures_stay_exact_through_the_admissions_a_call_makes,
    unclaimed_sessions_are_quiet_and_not_stays,
    places_per_group_are_capped_and_free_up,
    the_places_per_group_cap_agrees_with_an_exact_count,
    watch_reports_each_visitor_in_one_call,
    admissions_are_published,
    patches_change_only_named_fields_and_promote,
    stock_changes_are_atomic_and_promote,
    flush_empties_the_queue_but_keeps_sessions,
    reports_keep_a_per_minute_history,
    socket_counts_and_audit_are_kept,
    config_versions_count_changes_and_refuse_stale_patches,
    visitors_are_found_by_id_prefix,
    lanes_get_their_shares_fifo_inside_and_positions_are_the_real_order,
    an_idle_lane_banks_no_credit_and_counts_follow_the_line,
    reaped_lane_visitors_leave_its_count,
    restored_places_keep_their_original_order,
    restored_sessions_count_again,
    a_recreated_room_holds_admissions_while_places_come_back,
    live_sessions_are_listed_with_their_admissions,
    a_hidden_page_keeps_its_place_past_the_heartbeat_timeout,
    a_hidden_page_is_held_a_grace_from_its_first_hide_however_often_it_says_so,
    every_change_adds_its_event_to_the_rooms_stream,
    admissions_from_the_line_carry_their_ticket,
    revocations_are_read_in_order_from_a_cursor,
    release_reports_the_live_session_it_ended,
    a_live_session_is_extended_up_to_its_cap,
    passthrough_lets_everyone_in_past_capacity_and_the_rate_cap,
    passthrough_still_keeps_stock,
    switching_to_passthrough_lets_the_whole_line_in,
    reject_gives_no_place_admits_nobody_and_keeps_places,
    queue_all_queues_every_newcomer_and_admits_nobody,
    queue_all_overrides_passthrough_and_reject,
    back_from_passthrough_the_rate_cap_counts_its_admissions,
    webhook_retries_cursor_and_dead_letters_are_kept,
    dead_letters_are_kept_with_their_reason_and_replayed_as_fresh_retries,
    only_the_newest_dead_letters_are_kept,
    a_prequeue_is_shuffled_once_in_the_published_order,
    a_scheduled_room_takes_no_place_and_an_ended_event_closes,
    event_overrides_apply_only_inside_the_window,
    random_mode_admits_in_the_seeds_hmac_order,
    leaving_random_mode_queues_newcomers_behind_the_draw,
    a_scheduled_opening_and_end_go_into_the_stream_once,
    an_open_socket_is_enrolled_in_the_prequeue,
    the_prequeue_counts_against_the_places_per_group_cap,
    a_pass_not_presented_in_time_is_a_no_show_and_frees_the_slot,
    a_presented_pass_keeps_its_session_past_the_claim_timeout,
    a_no_show_rejoins_at_the_back,
    without_a_claim_timeout_or_after_a_release_nothing_is_taken_back,
    a_quiet_session_ends_at_its_no_show_deadline_for_the_eta,
);
