//! Conformance cases, a visitor's place and session: joins, capacity, stock, the rate
//! cap, heartbeats and reaping, releases, renewal, hidden pages, the per-network cap. Run
//! by the `conformance!` macro in `conformance.rs` against every backend.

use super::*;

pub(super) async fn fifo_order(b: Backend) {
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

pub(super) async fn join_is_idempotent(b: Backend) {
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
pub(super) async fn joins_sent_together_take_one_place_each_in_the_order_sent(b: Backend) {
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

/// Joins of newly drawn visitor ids (`JoinOptions::fresh`) sent together (on Redis one
/// `join_many` call, which writes the admission serial, the minute's counters and the
/// admission message once for the call): each walk-in gets its own serial in the order
/// sent and its own published admission, the report counts every one, and those who find
/// the room full queue in the order sent; a fresh id joined again keeps what it got.
pub(super) async fn fresh_visitors_sent_together_are_each_admitted_counted_and_published(
    b: Backend,
) {
    const N: usize = 40;
    const CAPACITY: u64 = 25;
    let b = b.with_room(room("r", CAPACITY)).await;
    let s = b.store.clone();
    let mut events = s.subscribe().await.unwrap();
    let fresh = anteroom::store::JoinOptions {
        fresh: true,
        ..Default::default()
    };
    let snaps = join_all((0..N).map(|i| {
        let (s, o) = (s.clone(), fresh.clone());
        async move { s.join_with("r", &v(i), &o).await.unwrap() }
    }))
    .await;
    let walk_ins = CAPACITY as usize;
    for (i, x) in snaps.iter().enumerate() {
        if i < walk_ins {
            assert_eq!(x.state, VisitorState::Admitted, "visitor {i} walks in");
            assert_eq!(
                x.admission.as_ref().unwrap().serial,
                i as u64 + 1,
                "visitor {i}'s serial"
            );
            assert_eq!(
                x.admits,
                i as u64 + 1,
                "visitor {i}: the serials given so far"
            );
        } else {
            assert_eq!(
                (x.state, x.position),
                (VisitorState::Queued, (i - walk_ins + 1) as u64),
                "visitor {i} queues in the order sent"
            );
            assert_eq!(x.admits, CAPACITY, "visitor {i}: the serials given so far");
        }
    }
    let mut published = Vec::new();
    while published.len() < walk_ins {
        let ev = tokio::time::timeout(DEADLINE, events.next())
            .await
            .expect("an admission event")
            .expect("stream open");
        published.push((ev.visitor, ev.admission.serial));
    }
    published.sort_by_key(|p| p.1);
    let expected: Vec<(String, u64)> = (0..walk_ins).map(|i| (v(i), i as u64 + 1)).collect();
    assert_eq!(published, expected, "every admission published once");
    let r = s.report("r", 30).await.unwrap();
    assert_eq!(r.admitted_total, CAPACITY);
    let admissions: u64 = r.minutes.iter().map(|m| m.admissions).sum();
    let waited_0: u64 = r.minutes.iter().map(|m| m.waits[0]).sum();
    assert_eq!((admissions, waited_0), (CAPACITY, CAPACITY));
    let again = s.join("r", &v(0)).await.unwrap();
    assert_eq!(again.admission, snaps[0].admission, "the same session");
    let again = s.join("r", &v(N - 1)).await.unwrap();
    assert_eq!(
        (again.state, again.position, again.queue_length),
        (
            VisitorState::Queued,
            (N - walk_ins) as u64,
            (N - walk_ins) as u64
        ),
        "the same place"
    );
    // The next admission, from the line, takes the next serial.
    s.release("r", &v(0)).await.unwrap();
    let next = s.status("r", &v(walk_ins)).await.unwrap();
    assert_eq!(next.admission.unwrap().serial, CAPACITY + 1);
}

pub(super) async fn capacity_is_never_exceeded(b: Backend) {
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

pub(super) async fn release_and_expiry_admit_the_next(b: Backend) {
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

pub(super) async fn stock_is_never_oversold(b: Backend) {
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

pub(super) async fn stock_unit_is_taken_once_per_visitor(b: Backend) {
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

pub(super) async fn rate_cap_is_honoured(b: Backend) {
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

pub(super) async fn silent_visitors_are_reaped(b: Backend) {
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
pub(super) async fn a_heartbeat_holds_for_the_timeout_and_at_most_a_step_more(b: Backend) {
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

pub(super) async fn expired_sessions_are_pruned_in_batches(b: Backend) {
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

pub(super) async fn pause_stops_admissions_but_not_the_queue(b: Backend) {
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
pub(super) async fn a_newcomer_never_walks_in_past_a_waiting_visitor(b: Backend) {
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

pub(super) async fn session_liveness_follows_release(b: Backend) {
    let b = b.with_room(room("r", 2)).await;
    let s = &b.store;
    let a = s.join("r", &v(0)).await.unwrap().admission.unwrap();
    assert!(s.session_live("r", &v(0), a.serial).await.unwrap());
    assert!(!s.session_live("r", &v(0), a.serial + 1).await.unwrap());
    s.release("r", &v(0)).await.unwrap();
    assert!(!s.session_live("r", &v(0), a.serial).await.unwrap());
}

pub(super) async fn fixed_window_limits_and_resets(b: Backend) {
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
pub(super) async fn figures_stay_exact_through_the_admissions_a_call_makes(b: Backend) {
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
pub(super) async fn unclaimed_sessions_are_quiet_and_not_stays(b: Backend) {
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
pub(super) async fn places_per_group_are_capped_and_free_up(b: Backend) {
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

/// A release reports the live session it ended (what the revocation log needs when no
/// pass was presented): none for a place in the line, for nothing held, or for a session
/// that had run out.
pub(super) async fn release_reports_the_live_session_it_ended(b: Backend) {
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
pub(super) async fn a_live_session_is_extended_up_to_its_cap(b: Backend) {
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
pub(super) async fn a_hidden_page_keeps_its_place_past_the_heartbeat_timeout(b: Backend) {
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
pub(super) async fn a_hidden_page_is_held_a_grace_from_its_first_hide_however_often_it_says_so(
    b: Backend,
) {
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
