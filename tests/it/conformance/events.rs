//! Conformance cases, what the store tells others: the watch, published admissions, the
//! room's event stream. Run by the `conformance!` macro in `conformance.rs` against every
//! backend.

use super::*;

pub(super) async fn watch_reports_each_visitor_in_one_call(b: Backend) {
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

pub(super) async fn admissions_are_published(b: Backend) {
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

/// The room's stream of events for the shop: each change adds its event in the same
/// atomic step (admission, stock unit claimed, sold out, release, closed, opened,
/// expiry), read in order from any id on.
pub(super) async fn every_change_adds_its_event_to_the_rooms_stream(b: Backend) {
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
pub(super) async fn admissions_from_the_line_carry_their_ticket(b: Backend) {
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
