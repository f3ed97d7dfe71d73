//! Conformance cases, priority lanes: shares, FIFO inside each lane, counts. Run by the
//! `conformance!` macro in `conformance.rs` against every backend.

use super::*;

pub(super) fn lanes(list: &[(&str, f64)]) -> Vec<anteroom::room::Lane> {
    list.iter()
        .map(|(name, share)| anteroom::room::Lane {
            name: name.to_string(),
            share: *share,
        })
        .collect()
}

/// A join in `lane` ("" = none).
pub(super) async fn join_in(s: &Arc<dyn Store>, i: usize, lane: &str) -> anteroom::store::Snapshot {
    let opts = anteroom::store::JoinOptions {
        limit: None,
        lane: (!lane.is_empty()).then(|| lane.to_string()),
        score: None,
        fresh: false,
    };
    s.join_with("r", &v(i), &opts).await.unwrap()
}

/// Everyone's position in line, in one call.
pub(super) async fn positions(s: &Arc<dyn Store>, ids: &[String]) -> Vec<u64> {
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
pub(super) async fn lanes_get_their_shares_fifo_inside_and_positions_are_the_real_order(
    b: Backend,
) {
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
pub(super) async fn an_idle_lane_banks_no_credit_and_counts_follow_the_line(b: Backend) {
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
pub(super) async fn reaped_lane_visitors_leave_its_count(b: Backend) {
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
