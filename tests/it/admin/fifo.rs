//! The FIFO audit in a room's detail: admission order against ticket order over the
//! last hour, read from the room's event stream.

use std::time::Duration;

use crate::helpers::admin::{admin, admin_app};
use crate::helpers::{room, wait_until};
use anteroom::room::RoomConfig;
use anteroom::store::fairness_digest;
use reqwest::Method;

#[tokio::test]
async fn a_fifo_rooms_detail_shows_no_discordant_pairs() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let mut tokens = Vec::new();
    for _ in 0..4 {
        let j = app.join("r").await;
        assert_eq!(j.status, 200, "{:?}", j.body);
        tokens.push(j.body["visitor_token"].as_str().unwrap().to_string());
    }
    // The first walked in; each release lets the next one in from the line.
    for t in &tokens[..3] {
        assert_eq!(app.release("r", t).await.status, 204);
    }

    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.status, 200);
    let a = &r.body["fifo_audit"];
    assert_eq!(a["admissions"], 3, "{a}");
    assert_eq!(a["discordant_pairs"], 0, "{a}");
    assert_eq!(a["normalised"], 0.0, "{a}");
    assert_eq!(a["window_secs"], 3600, "{a}");
}

/// A drop's pre-queue, shuffled at the opening, is let in in its tickets' order: the
/// shuffle gives the tickets in the drawn order, so the audit stays at 0 through it.
#[tokio::test]
async fn a_drop_keeps_the_fifo_audit_at_zero() {
    let now = anteroom::clock::wall_ms();
    let (app, _r) = admin_app(vec![RoomConfig {
        prequeue_opens_at: Some(now - 60_000),
        opens_at: Some(now + 1_500),
        ..room("r", 1)
    }])
    .await;
    let mut tokens = Vec::new();
    for _ in 0..5 {
        let j = app.join("r").await;
        assert_eq!(j.body["state"], "prequeue", "{:?}", j.body);
        tokens.push(j.token());
    }
    let seed = wait_until(Duration::from_secs(15), "the shuffle", || async {
        let f = app.get("/api/rooms/r/fairness").await;
        f.body["seed"].as_str().map(str::to_string)
    })
    .await;
    // In the drawn order: each release lets the next one in (capacity 1).
    tokens.sort_by_key(|t| fairness_digest(&seed, t.split_once('.').unwrap().0));
    for t in &tokens {
        assert_eq!(app.status("r", t).await.body["state"], "admitted");
        assert_eq!(app.release("r", t).await.status, 204);
    }

    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    let a = &r.body["fifo_audit"];
    assert_eq!(a["admissions"], 5, "{a}");
    assert_eq!(a["discordant_pairs"], 0, "{a}");
}
