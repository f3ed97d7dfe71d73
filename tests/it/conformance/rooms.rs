//! Conformance cases, a room's settings and the admin's reads and writes: live changes,
//! patches and versions, stock, flush, reports, socket counts and the audit log, finding
//! visitors, leases. Run by the `conformance!` macro in `conformance.rs` against every
//! backend.

use super::*;

pub(super) async fn capacity_changes_apply_live(b: Backend) {
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

pub(super) async fn rooms_are_independent(b: Backend) {
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

pub(super) async fn closed_room_turns_newcomers_away_and_tells_the_queue(b: Backend) {
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

pub(super) async fn unknown_rooms_are_reported(b: Backend) {
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

pub(super) async fn room_config_round_trips(b: Backend) {
    let cfg = RoomConfig {
        name: "Big sale".into(),
        max_admissions_per_minute: 9,
        stock: Some(4),
        paused: true,
        embed_origins: vec!["https://shop.example".into()],
        entry: anteroom::room::EntryMode::Token,
        challenge: anteroom::room::ChallengeMode::Pow,
        pow_max_number: 5000,
        max_places_per_ip: 3,
        entry_secret: Some(anteroom::room::Secret::new(
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
pub(super) async fn a_room_written_again_is_read_afresh(b: Backend) {
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

pub(super) async fn leases_exclude_renew_and_expire(b: Backend) {
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

pub(super) async fn patches_change_only_named_fields_and_promote(b: Backend) {
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

pub(super) async fn stock_changes_are_atomic_and_promote(b: Backend) {
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

pub(super) async fn flush_empties_the_queue_but_keeps_sessions(b: Backend) {
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

pub(super) async fn reports_keep_a_per_minute_history(b: Backend) {
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

pub(super) async fn socket_counts_and_audit_are_kept(b: Backend) {
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
pub(super) async fn config_versions_count_changes_and_refuse_stale_patches(b: Backend) {
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
pub(super) async fn visitors_are_found_by_id_prefix(b: Backend) {
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
