//! The estimate a visitor is shown, end to end on a real Redis: a reason when the room
//! changes, no countdown while paused, "not known yet" without a basis, and the page
//! saying so. The model itself is unit-tested in `src/domain/eta.rs` on a fixed clock;
//! its accuracy is measured by `anteroom-loadtest eta` (BENCHMARKS.md).

use std::time::Duration;

use anteroom::room::RoomConfig;
use anteroom::store::RoomPatch;

use crate::helpers::{redis_app, room, wait_until};

const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_capacity_cut_gives_a_reason_in_the_view_and_on_the_page() {
    let (app, _r) = redis_app(vec![RoomConfig {
        session_ttl_secs: 60,
        ..room("r", 2)
    }])
    .await;
    app.join("r").await;
    app.join("r").await;
    let waiting = app.join("r").await;
    assert_eq!(waiting.state(), "queued");
    let token = waiting.token();
    // Nothing has ended and every session is fresh: no basis yet. The worst case (the
    // sessions run out) is the upper bound, and no made-up point estimate.
    let v = &waiting.body;
    assert_eq!(v["eta_known"], false, "{v}");
    assert_eq!(v["eta_low_seconds"], 0);
    assert!(v["eta_high_seconds"].as_u64().unwrap() >= 59, "{v}");
    assert!(v.get("eta_reason").is_none(), "{v}");
    app.engine
        .room_store()
        .patch_room(
            "r",
            &RoomPatch {
                capacity: Some(1),
                ..RoomPatch::default()
            },
        )
        .await
        .unwrap();
    let v = wait_until(DEADLINE, "the reason for the capacity cut", || async {
        let v = app.status("r", &token).await.body;
        (v["eta_reason"] == "capacity_lowered").then_some(v)
    })
    .await;
    assert_eq!(v["state"], "queued");
    let page = app.page_as("/r/r", &token).await;
    assert!(
        page.contains("letting fewer people in at a time"),
        "the page says why: {page}"
    );
}

#[tokio::test]
async fn a_paused_room_has_no_countdown_and_says_paused() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await;
    let token = app.join("r").await.token();
    app.engine
        .room_store()
        .patch_room(
            "r",
            &RoomPatch {
                paused: Some(true),
                ..RoomPatch::default()
            },
        )
        .await
        .unwrap();
    let v = app.status("r", &token).await.body;
    assert_eq!(v["state"], "paused");
    assert_eq!(
        (&v["eta_seconds"], &v["eta_known"], &v["eta_reason"]),
        (
            &serde_json::json!(0),
            &serde_json::json!(false),
            &serde_json::json!("paused")
        ),
        "{v}"
    );
    let page = app.page_as("/r/r", &token).await;
    assert!(page.contains("on hold while the line is paused"), "{page}");
    assert!(
        page.contains("No one is ahead of you"),
        "not \"You're next!\": {page}"
    );
    assert!(!page.contains("You&#x27;re next!") && !page.contains("You're next!</"));
}

#[tokio::test]
async fn full_sessions_give_a_known_estimate_once_one_has_ended() {
    // Sessions of 1 s that nobody releases: once one has run out, the model knows they
    // last the TTL, and the estimate is known with a range that holds it.
    let (app, _r) = redis_app(vec![RoomConfig {
        session_ttl_secs: 1,
        ..room("r", 1)
    }])
    .await;
    app.join("r").await;
    let a = app.join("r").await.token();
    let b = app.join("r").await.token();
    let v = wait_until(DEADLINE, "a known estimate for b", || async {
        app.status("r", &a).await;
        let v = app.status("r", &b).await.body;
        (v["state"] == "queued" && v["eta_known"] == true).then_some(v)
    })
    .await;
    let (low, eta, high) = (
        v["eta_low_seconds"].as_u64().unwrap(),
        v["eta_seconds"].as_u64().unwrap(),
        v["eta_high_seconds"].as_u64().unwrap(),
    );
    assert!(low <= eta && eta <= high && high <= 5, "{v}");
}
