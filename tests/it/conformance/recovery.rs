//! Conformance cases, after a data loss: the epoch, places and sessions put back, a re-
//! created room's hold, the live-session list, the revocation log. Run by the
//! `conformance!` macro in `conformance.rs` against every backend.

use super::*;

pub(super) async fn the_epoch_is_written_once_and_then_read(b: Backend) {
    let s = &b.store;
    assert_eq!(s.epoch("first").await.unwrap(), "first");
    assert_eq!(s.epoch("second").await.unwrap(), "first");
}

/// A store that lost its data gets places back with their original tickets: put back in
/// any order they keep their order, later joins queue behind them, a visitor who holds a
/// place or a session keeps it, and `status` leaves the ticket out (it stays cheap).
pub(super) async fn restored_places_keep_their_original_order(b: Backend) {
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
pub(super) async fn restored_sessions_count_again(b: Backend) {
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
pub(super) async fn a_recreated_room_holds_admissions_while_places_come_back(b: Backend) {
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
pub(super) async fn live_sessions_are_listed_with_their_admissions(b: Backend) {
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

pub(super) async fn revocations_are_read_in_order_from_a_cursor(b: Backend) {
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
