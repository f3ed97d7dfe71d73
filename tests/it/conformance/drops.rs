//! Scheduled events, the pre-queue shuffle and `random` mode (issue 12's launch-day
//! drops), run by the `conformance!` macro against every backend like the rest of the
//! suite: memory (wall clock), Redis and Redis Cluster (Redis `TIME`). Times are set a
//! second or two ahead of the store's own clock and waited on with a deadline.

use anteroom::drops::{shuffle_once, ShuffleOutcome};
use anteroom::room::QueueMode;
use anteroom::store::{JoinOptions, RoomPatch, VisitorState};
use sha2::{Digest, Sha256};

use super::{store_now, until_store_time, v, Backend};
use crate::helpers::fairness::{by_digest, hex, unhex};
use crate::helpers::room;

fn times(pq: Option<u64>, open: Option<u64>, close: Option<u64>) -> RoomPatch {
    RoomPatch {
        prequeue_opens_at: Some(pq),
        opens_at: Some(open),
        closes_at: Some(close),
        ..RoomPatch::default()
    }
}

pub(super) async fn a_prequeue_is_shuffled_once_in_the_published_order(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    let now = store_now(s, "r").await;
    let open = now + 1_500;
    s.patch_room("r", &times(Some(now - 1_000), Some(open), None))
        .await
        .unwrap();
    let early: Vec<String> = (0..40).map(v).collect();
    for x in &early {
        let snap = s.join("r", x).await.unwrap();
        assert_eq!((snap.state, snap.position), (VisitorState::Prequeue, 0));
    }
    // A rejoin (a reload) keeps the one place in the pre-queue.
    assert_eq!(
        s.join("r", &v(3)).await.unwrap().state,
        VisitorState::Prequeue
    );
    let f = s.fairness("r").await.unwrap();
    assert_eq!((f.prequeue_count, f.shuffled, f.shuffles), (40, false, 0));
    let commitment = f
        .commitment
        .expect("a commitment once the pre-queue is open");
    assert_eq!(f.seed, None, "the seed stays hidden until the shuffle");
    assert_eq!(s.stats("r").await.unwrap().active, 0);

    until_store_time(s, "r", open).await;
    // Opened, not shuffled yet: nobody is let in, newcomers queue behind the pre-queue.
    let late = s.join("r", &v(100)).await.unwrap();
    assert_eq!(late.state, VisitorState::Queued);
    // Behind the whole pre-queue, not yet placed, already counted ahead.
    assert_eq!((late.position, late.queue_length), (41, 41));
    let (view, entries) = s.watch("r", &[v(100)]).await.unwrap();
    assert_eq!(
        (view.queue_length, entries[0].clone()),
        (41, anteroom::store::WatchEntry::Queued { position: 41 })
    );
    assert_eq!(
        s.status("r", &v(5)).await.unwrap().state,
        VisitorState::Prequeue
    );
    assert_eq!(s.stats("r").await.unwrap().active, 0);

    // Two instances race for the shuffle: exactly one does it.
    let (a, c) = tokio::join!(
        shuffle_once(s, "r", "instance-a", 5_000),
        shuffle_once(s, "r", "instance-b", 5_000)
    );
    let outcomes = [a.unwrap(), c.unwrap()];
    let shuffled: Vec<_> = outcomes
        .iter()
        .filter(|o| matches!(o, ShuffleOutcome::Shuffled { .. }))
        .collect();
    assert_eq!(shuffled.len(), 1, "{outcomes:?}");
    assert_eq!(
        shuffle_once(s, "r", "instance-a", 5_000).await.unwrap(),
        ShuffleOutcome::AlreadyDone
    );
    let f = s.fairness("r").await.unwrap();
    assert_eq!((f.shuffled, f.shuffles, f.prequeue_count), (true, 1, 40));
    let seed = f.seed.expect("the seed is revealed after the shuffle");
    assert_eq!(hex(&Sha256::digest(unhex(&seed))), commitment);
    assert_eq!(f.commitment.as_deref(), Some(commitment.as_str()));

    // The line is the published order, computed here from the revealed seed; the head
    // was let in at once (capacity 1), the late arrival is behind all of them.
    let expected = by_digest(&seed, early.clone());
    if let ShuffleOutcome::Shuffled { order, placed } = shuffled[0] {
        assert_eq!((order, *placed), (&expected, 40));
    }
    assert_eq!(
        s.status("r", &expected[0]).await.unwrap().state,
        VisitorState::Admitted
    );
    for (rank, x) in expected.iter().enumerate().skip(1) {
        let snap = s.status("r", x).await.unwrap();
        assert_eq!(
            (snap.state, snap.position),
            (VisitorState::Queued, rank as u64)
        );
    }
    assert_eq!(s.status("r", &v(100)).await.unwrap().position, 40);
    assert_eq!(s.join("r", &v(101)).await.unwrap().position, 41);
    // A rejoin after the shuffle keeps the rank.
    assert_eq!(s.join("r", &expected[7]).await.unwrap().position, 7);
    // Admissions come in ticket order, and each admission event carries its ticket.
    for x in expected.iter().take(4) {
        s.release("r", x).await.unwrap();
    }
    let admitted: Vec<(String, u64)> = s
        .events("r", "0", 1000)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "admission")
        .map(|e| {
            (
                e.visitor.unwrap(),
                e.ticket.expect("a ticket on the admission"),
            )
        })
        .collect();
    let opened = s.events("r", "0", 1000).await.unwrap();
    assert_eq!(
        opened.iter().filter(|e| e.kind == "opened").count(),
        1,
        "one `opened` event, from the shuffle"
    );
    let names: Vec<&String> = admitted.iter().map(|(x, _)| x).collect();
    assert_eq!(names, expected.iter().take(5).collect::<Vec<_>>());
    assert!(admitted.windows(2).all(|w| w[0].1 < w[1].1), "{admitted:?}");
}

pub(super) async fn a_scheduled_room_takes_no_place_and_an_ended_event_closes(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    let now = store_now(s, "r").await;
    s.patch_room("r", &times(None, Some(now + 60_000), None))
        .await
        .unwrap();
    let snap = s.join("r", &v(0)).await.unwrap();
    assert_eq!(
        (snap.state, snap.position, snap.queue_length),
        (VisitorState::Scheduled, 0, 0)
    );
    let (view, entries) = s.watch("r", &[v(0)]).await.unwrap();
    assert_eq!(view.state_of(&entries[0]), VisitorState::Scheduled);
    // Opened (without a pre-queue: straight to the line), closing shortly.
    let close = now + 1_500;
    s.patch_room("r", &times(None, Some(now - 1_000), Some(close)))
        .await
        .unwrap();
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    until_store_time(s, "r", close).await;
    assert_eq!(
        s.join("r", &v(2)).await.unwrap().state,
        VisitorState::Closed
    );
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Closed
    );
    assert!(s.promote("r", 10).await.unwrap().is_empty());
    let (view, entries) = s.watch("r", &[v(1)]).await.unwrap();
    assert_eq!(view.state_of(&entries[0]), VisitorState::Closed);
    // The room's own `closed` flag is untouched: the event's end closes it.
    assert!(!s.room("r").await.unwrap().unwrap().closed);
}

pub(super) async fn event_overrides_apply_only_inside_the_window(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    let now = store_now(s, "r").await;
    let overrides = RoomPatch {
        event_capacity: Some(3),
        event_session_ttl_secs: Some(5),
        event_max_admissions_per_minute: Some(100),
        ..times(None, Some(now + 60_000), None)
    };
    s.patch_room("r", &overrides).await.unwrap();
    assert_eq!(s.stats("r").await.unwrap().capacity, 1, "before the window");
    let close = now + 2_000;
    s.patch_room("r", &times(None, Some(now - 1_000), Some(close)))
        .await
        .unwrap();
    assert_eq!(s.stats("r").await.unwrap().capacity, 3, "inside the window");
    for i in 0..3 {
        let snap = s.join("r", &v(i)).await.unwrap();
        assert_eq!(snap.state, VisitorState::Admitted, "visitor {i}");
        let a = snap.admission.unwrap();
        assert_eq!(a.expires_at_ms - a.issued_at_ms, 5_000);
    }
    assert_eq!(
        s.join("r", &v(3)).await.unwrap().state,
        VisitorState::Queued
    );
    until_store_time(s, "r", close).await;
    assert_eq!(s.stats("r").await.unwrap().capacity, 1, "after the window");
    // The stored configuration keeps both: the room's own values and the overrides.
    let cfg = s.room("r").await.unwrap().unwrap();
    assert_eq!((cfg.capacity, cfg.event_capacity), (1, Some(3)));
    assert_eq!(cfg.event_session_ttl_secs, Some(5));
    assert_eq!(cfg.event_max_admissions_per_minute, Some(100));
}

pub(super) async fn random_mode_admits_in_the_seeds_hmac_order(b: Backend) {
    let b = b
        .with_room(anteroom::room::RoomConfig {
            mode: QueueMode::Random,
            ..room("r", 1)
        })
        .await;
    let s = b.store.as_ref();
    let seed = s
        .event_seed("r", &anteroom::store::new_seed())
        .await
        .unwrap();
    let join = |x: String| {
        let opts = JoinOptions {
            score: Some(anteroom::store::random_score(&seed, &x)),
            ..JoinOptions::default()
        };
        async move { s.join_with("r", &x, &opts).await.unwrap() }
    };
    assert_eq!(join(v(0)).await.state, VisitorState::Admitted);
    let waiting: Vec<String> = (1..=20).map(v).collect();
    for x in &waiting {
        assert_eq!(join(x.clone()).await.state, VisitorState::Queued);
    }
    assert_eq!(
        s.fairness("r").await.unwrap().seed,
        None,
        "hidden while open"
    );
    // Every waiting visitor is let in, one release at a time, in the seed's HMAC order.
    let mut order = Vec::new();
    let mut holder = v(0);
    for _ in 0..waiting.len() {
        let (_, admitted) = s.release("r", &holder).await.unwrap();
        assert_eq!(admitted.len(), 1);
        holder = admitted[0].clone();
        order.push(holder.clone());
    }
    assert_eq!(order, by_digest(&seed, waiting));
    s.patch_room(
        "r",
        &RoomPatch {
            closed: Some(true),
            ..RoomPatch::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        s.fairness("r").await.unwrap().seed.as_deref(),
        Some(seed.as_str()),
        "revealed once the room is closed"
    );
}

/// An event without a pre-queue opens, and an event ends, because time passes: the first
/// operation after each tells the room's stream, once.
pub(super) async fn a_scheduled_opening_and_end_go_into_the_stream_once(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    let now = store_now(s, "r").await;
    let (open, close) = (now + 1_000, now + 2_000);
    s.patch_room("r", &times(None, Some(open), Some(close)))
        .await
        .unwrap();
    let kinds = || async {
        s.events("r", "0", 100)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .filter(|k| k == "opened" || k == "closed")
            .collect::<Vec<_>>()
    };
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Scheduled
    );
    assert_eq!(kinds().await, Vec::<String>::new(), "not open yet");
    until_store_time(s, "r", open).await;
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
    s.status("r", &v(0)).await.unwrap();
    assert_eq!(kinds().await, ["opened"], "told once");
    until_store_time(s, "r", close).await;
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Closed
    );
    s.status("r", &v(1)).await.unwrap();
    assert_eq!(kinds().await, ["opened", "closed"], "the end told once");
}

/// Random mode's draws are tickets up to 2^48: a room switched back to FIFO queues later
/// arrivals behind everyone still in the draw, not ahead of them.
pub(super) async fn leaving_random_mode_queues_newcomers_behind_the_draw(b: Backend) {
    let b = b
        .with_room(anteroom::room::RoomConfig {
            mode: QueueMode::Random,
            ..room("r", 1)
        })
        .await;
    let s = b.store.as_ref();
    let seed = s
        .event_seed("r", &anteroom::store::new_seed())
        .await
        .unwrap();
    let opts = |x: &str| JoinOptions {
        score: Some(anteroom::store::random_score(&seed, x)),
        ..JoinOptions::default()
    };
    assert_eq!(
        s.join_with("r", &v(0), &opts(&v(0))).await.unwrap().state,
        VisitorState::Admitted
    );
    for i in 1..=5 {
        s.join_with("r", &v(i), &opts(&v(i))).await.unwrap();
    }
    s.patch_room(
        "r",
        &RoomPatch {
            mode: Some(QueueMode::Fifo),
            ..RoomPatch::default()
        },
    )
    .await
    .unwrap();
    let late = s.join("r", &v(6)).await.unwrap();
    assert_eq!(late.state, VisitorState::Queued);
    assert_eq!(late.position, 6, "behind the five still in the draw");
    assert_eq!(late.queue_length, 6);
}

pub(super) async fn an_open_socket_is_enrolled_in_the_prequeue(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    let now = store_now(s, "r").await;
    s.patch_room("r", &times(Some(now + 60_000), Some(now + 120_000), None))
        .await
        .unwrap();
    let (view, entries) = s.watch("r", &[v(0)]).await.unwrap();
    assert_eq!(view.state_of(&entries[0]), VisitorState::Scheduled);
    assert_eq!(s.fairness("r").await.unwrap().prequeue_count, 0);
    s.patch_room("r", &times(Some(now - 1_000), Some(now + 120_000), None))
        .await
        .unwrap();
    let (view, entries) = s.watch("r", &[v(0), v(1)]).await.unwrap();
    assert_eq!(view.state_of(&entries[0]), VisitorState::Prequeue);
    assert_eq!(s.fairness("r").await.unwrap().prequeue_count, 2);
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::Prequeue
    );
    // Deleting the room deletes its pre-queue and seed with it.
    assert!(s.event_seed("r", &"ab".repeat(32)).await.is_ok());
    assert!(s.delete_room("r").await.unwrap());
    s.put_room(&room("r", 1), true).await.unwrap();
    let f = s.fairness("r").await.unwrap();
    assert_eq!((f.prequeue_count, f.commitment), (0, None));
}

pub(super) async fn the_prequeue_counts_against_the_places_per_group_cap(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    let now = store_now(s, "r").await;
    s.patch_room("r", &times(Some(now - 1_000), Some(now + 120_000), None))
        .await
        .unwrap();
    let limit = anteroom::store::PlaceLimit {
        group: "203.0.113.9".into(),
        max: 2,
    };
    for i in 0..2 {
        let snap = s.join_limited("r", &v(i), Some(&limit)).await.unwrap();
        assert_eq!(snap.state, VisitorState::Prequeue);
    }
    assert!(matches!(
        s.join_limited("r", &v(2), Some(&limit)).await,
        Err(anteroom::store::StoreError::TooManyPlaces)
    ));
    assert_eq!(s.fairness("r").await.unwrap().prequeue_count, 2);
    // Leaving the pre-queue frees the place.
    s.release("r", &v(0)).await.unwrap();
    let snap = s.join_limited("r", &v(2), Some(&limit)).await.unwrap();
    assert_eq!(snap.state, VisitorState::Prequeue);
}
