//! The queueing modes (`mode`: fifo, passthrough, reject; the `queue_all` switch), run
//! by the `conformance!` macro against every backend like the rest of the suite.

use anteroom::room::{QueueMode, RoomConfig};
use anteroom::store::{RoomPatch, StockChange, VisitorState, WatchEntry};

use super::{v, Backend};
use crate::helpers::room;

fn with_mode(mode: QueueMode, queue_all: bool) -> RoomPatch {
    RoomPatch {
        mode: Some(mode),
        queue_all: Some(queue_all),
        ..RoomPatch::default()
    }
}

pub(super) async fn passthrough_lets_everyone_in_past_capacity_and_the_rate_cap(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            mode: QueueMode::Passthrough,
            max_admissions_per_minute: 2,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let mut last = None;
    for i in 0..6 {
        let snap = s.join("r", &v(i)).await.unwrap();
        assert_eq!(snap.state, VisitorState::Admitted, "visitor {i}");
        last = snap.admission;
    }
    let stats = s.stats("r").await.unwrap();
    assert_eq!((stats.active, stats.queue_length), (6, 0));
    // Sessions are recorded as ever: each one is live and counts in the figures.
    assert!(s
        .session_live("r", &v(5), last.unwrap().serial)
        .await
        .unwrap());
    assert_eq!(s.report("r", 1).await.unwrap().admitted_total, 6);
    let cfg = s.room("r").await.unwrap().unwrap();
    assert_eq!((cfg.mode, cfg.queue_all), (QueueMode::Passthrough, false));
}

pub(super) async fn passthrough_still_keeps_stock(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            mode: QueueMode::Passthrough,
            stock: Some(2),
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
        VisitorState::Admitted
    );
    assert_eq!(
        s.join("r", &v(2)).await.unwrap().state,
        VisitorState::SoldOut
    );
    assert_eq!(s.stats("r").await.unwrap().active, 2);
}

pub(super) async fn switching_to_passthrough_lets_the_whole_line_in(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    for i in 0..4 {
        s.join("r", &v(i)).await.unwrap();
    }
    assert_eq!(s.stats("r").await.unwrap().queue_length, 3);
    let mut admitted = s
        .patch_room("r", &with_mode(QueueMode::Passthrough, false))
        .await
        .unwrap();
    admitted.sort();
    assert_eq!(admitted, vec![v(1), v(2), v(3)]);
    let stats = s.stats("r").await.unwrap();
    assert_eq!((stats.active, stats.queue_length), (4, 0));
}

pub(super) async fn reject_gives_no_place_admits_nobody_and_keeps_places(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = &b.store;
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    assert_eq!(s.join("r", &v(1)).await.unwrap().position, 1);
    s.patch_room("r", &with_mode(QueueMode::Reject, false))
        .await
        .unwrap();

    // A newcomer gets neither a place nor a session.
    let newcomer = s.join("r", &v(2)).await.unwrap();
    assert_eq!(
        (newcomer.state, newcomer.position, newcomer.admission),
        (VisitorState::Rejected, 0, None)
    );
    // The one already in line keeps the place, told `rejected`.
    let kept = s.join("r", &v(1)).await.unwrap();
    assert_eq!((kept.state, kept.position), (VisitorState::Rejected, 1));
    let kept = s.status("r", &v(1)).await.unwrap();
    assert_eq!((kept.state, kept.position), (VisitorState::Rejected, 1));
    // A live session runs on.
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    // A freed slot is not filled, by a release, the promoter or a stock change.
    let (held, admitted) = s.release("r", &v(0)).await.unwrap();
    assert!(held && admitted.is_empty());
    assert!(s.promote("r", 1000).await.unwrap().is_empty());
    assert!(s
        .change_stock("r", StockChange::Unlimited)
        .await
        .unwrap()
        .2
        .is_empty());
    let (view, entries) = s.watch("r", &[v(1), v(2)]).await.unwrap();
    assert_eq!(
        (view.mode, view.queue_length, view.active),
        (QueueMode::Reject, 1, 0)
    );
    assert_eq!(view.state_of(&entries[0]), VisitorState::Rejected);
    assert_eq!(entries[1], WatchEntry::Gone);
    assert_eq!(view.state_of(&entries[1]), VisitorState::Rejected);
    assert!(s.eta_basis("r").await.unwrap().paused, "no countdown");

    // Back to fifo: the kept place is let in first.
    let admitted = s
        .patch_room("r", &with_mode(QueueMode::Fifo, false))
        .await
        .unwrap();
    assert_eq!(admitted, vec![v(1)]);
    assert_eq!(
        s.join("r", &v(2)).await.unwrap().state,
        VisitorState::Queued
    );
}

pub(super) async fn queue_all_queues_every_newcomer_and_admits_nobody(b: Backend) {
    let b = b.with_room(room("r", 5)).await;
    let s = &b.store;
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    s.patch_room("r", &with_mode(QueueMode::Fifo, true))
        .await
        .unwrap();
    // Slots are free, yet newcomers queue, shown as paused (no countdown).
    for i in 1..=3 {
        let snap = s.join("r", &v(i)).await.unwrap();
        assert_eq!(
            (snap.state, snap.position),
            (VisitorState::Paused, i as u64)
        );
    }
    assert!(s.promote("r", 1000).await.unwrap().is_empty());
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    let (view, entries) = s.watch("r", &[v(1)]).await.unwrap();
    assert!(view.queue_all && !view.paused);
    assert_eq!(view.state_of(&entries[0]), VisitorState::Paused);
    assert!(s.eta_basis("r").await.unwrap().paused);
    // Switched off: the line goes in, in order.
    let admitted = s
        .patch_room("r", &with_mode(QueueMode::Fifo, false))
        .await
        .unwrap();
    assert_eq!(admitted, vec![v(1), v(2), v(3)]);
}

pub(super) async fn queue_all_overrides_passthrough_and_reject(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            mode: QueueMode::Passthrough,
            queue_all: true,
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    let snap = s.join("r", &v(0)).await.unwrap();
    assert_eq!((snap.state, snap.position), (VisitorState::Paused, 1));
    s.patch_room("r", &with_mode(QueueMode::Reject, true))
        .await
        .unwrap();
    let snap = s.join("r", &v(1)).await.unwrap();
    assert_eq!((snap.state, snap.position), (VisitorState::Paused, 2));
    assert!(s.promote("r", 1000).await.unwrap().is_empty());
    // queue_all off leaves the reject mode in charge: the line is kept, told rejected.
    assert!(s
        .patch_room("r", &with_mode(QueueMode::Reject, false))
        .await
        .unwrap()
        .is_empty());
    let snap = s.status("r", &v(1)).await.unwrap();
    assert_eq!((snap.state, snap.position), (VisitorState::Rejected, 2));
    let cfg = s.room("r").await.unwrap().unwrap();
    assert_eq!((cfg.mode, cfg.queue_all), (QueueMode::Reject, false));
}

pub(super) async fn back_from_passthrough_the_rate_cap_counts_its_admissions(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            mode: QueueMode::Passthrough,
            max_admissions_per_minute: 2,
            ..room("r", 10)
        })
        .await;
    let s = &b.store;
    for i in 0..4 {
        assert_eq!(
            s.join("r", &v(i)).await.unwrap().state,
            VisitorState::Admitted
        );
    }
    s.patch_room("r", &with_mode(QueueMode::Fifo, false))
        .await
        .unwrap();
    // Capacity is free, but the last minute already holds more admissions than the cap.
    let snap = s.join("r", &v(9)).await.unwrap();
    assert_eq!((snap.state, snap.position), (VisitorState::Queued, 1));
}
