//! Store loss: declared rooms come back by themselves, a store that lost its data is
//! noticed, and `/readyz` tells the truth while a declared room is missing.

use std::time::{Duration, Instant};

use crate::helpers::admin::{admin, admin_settings};
use crate::helpers::ws::{connect, next_json};
use crate::helpers::{prefix, room, spawn_app, test_settings, wait_until, RedisServer};
use reqwest::Method;

fn flushall(r: &RedisServer) {
    let _: () = redis::cmd("FLUSHALL").query(&mut r.conn()).unwrap();
}

#[tokio::test]
async fn declared_rooms_come_back_after_the_store_lost_its_data() {
    let r = RedisServer::start();
    let app = spawn_app(test_settings(Some(r.url()), &prefix(), vec![room("r", 1)])).await;
    app.join("r").await;
    let token = app.join("r").await.token();
    let mut ws = connect(&app, "r", &token, None).await.unwrap();
    assert_eq!(
        next_json(&mut ws, Duration::from_secs(5)).await["type"],
        "status"
    );

    flushall(&r);
    let t = Instant::now();
    wait_until(Duration::from_secs(3), "the room to be back", || async {
        (app.join("r").await.status == 200).then_some(())
    })
    .await;
    let back_after = t.elapsed();
    let metrics = app.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains("anteroom_store_data_loss_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"anteroom_rooms_recreated_total{room="r"} 1"#),
        "{metrics}"
    );
    // The open socket was never told the room closed, and is still open.
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let m = next_json(&mut ws, Duration::from_secs(6)).await;
        assert_ne!(m["type"], "closed", "{m}");
    }
    eprintln!("room back after {back_after:?}");
}

#[tokio::test]
async fn readyz_is_503_while_a_declared_room_is_missing() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &prefix(), vec![room("r", 1)]);
    s.reaper.keeper_interval_ms = 3_600_000; // the keeper stays out of this test
    let app = spawn_app(s).await;
    assert_eq!(app.get("/readyz").await.status, 200);
    flushall(&r);
    let ready = app.get("/readyz").await;
    assert_eq!((ready.status, ready.error_code()), (503, "room_missing"));
    assert_eq!(ready.body["missing_rooms"], serde_json::json!(["r"]));

    let mut known = Some("an epoch from before".to_string());
    let out = anteroom::keeper::keep_once(
        app.engine.store.as_ref(),
        &app.engine.declared_rooms,
        &mut known,
    )
    .await
    .unwrap();
    assert!(out.data_lost);
    assert_eq!(out.recreated, vec!["r".to_string()]);
    assert_eq!(app.get("/readyz").await.status, 200);
    // Nothing changed since: the next look finds nothing to do.
    let again = anteroom::keeper::keep_once(
        app.engine.store.as_ref(),
        &app.engine.declared_rooms,
        &mut known,
    )
    .await
    .unwrap();
    assert_eq!(again, anteroom::keeper::KeepOutcome::default());
}

#[tokio::test]
async fn a_declared_room_cannot_be_deleted_through_the_admin_api() {
    let r = RedisServer::start();
    let app = spawn_app(admin_settings(&r, &prefix(), vec![room("r", 1)])).await;
    let res = admin(&app, Method::DELETE, "/api/admin/rooms/r", None).await;
    assert_eq!((res.status, res.error_code()), (409, "conflict"));
    assert_eq!(app.join("r").await.status, 200);
}

#[tokio::test]
async fn the_dashboard_feed_says_when_the_store_lost_its_data() {
    let r = RedisServer::start();
    let app = spawn_app(admin_settings(&r, &prefix(), vec![room("r", 1)])).await;
    let before = admin(&app, Method::GET, "/api/admin/rooms", None).await;
    assert!(before.body["store_data_lost_at"].is_null());
    flushall(&r);
    wait_until(Duration::from_secs(3), "the loss to be noticed", || async {
        let o = admin(&app, Method::GET, "/api/admin/rooms", None).await;
        o.body["store_data_lost_at"].as_u64()
    })
    .await;
}
