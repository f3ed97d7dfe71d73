//! Redis going away, pausing, restarting and losing its script cache — Anteroom answers
//! 503 quickly, loses nothing, never admits twice, and recovers without a restart.

use std::time::{Duration, Instant};

use crate::helpers::{room, spawn_app, test_settings, wait_until, RedisServer};
use anteroom::domain::identity::VisitorId;
use anteroom::domain::ratelimit::LimitedAction;

/// Generous bound on how long a request may take while Redis is down: the configured
/// timeouts are 500 ms; anything near this bound means a request hung.
const NO_HANG: Duration = Duration::from_secs(5);

#[tokio::test]
async fn redis_killed_mid_run_gives_503_then_recovers_without_losing_places() {
    let mut redis = RedisServer::start_persistent();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    ))
    .await;
    let a = app.join("r").await;
    let b = app.join("r").await;
    assert_eq!((a.state(), b.state()), ("admitted", "queued"));

    redis.kill();
    let t = Instant::now();
    let r = app.join("r").await;
    assert!(t.elapsed() < NO_HANG, "join hung for {:?}", t.elapsed());
    assert_eq!((r.status, r.error_code()), (503, "store_unavailable"));
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(app.status("r", &b.token()).await.status, 503);
    // An admitted visitor's pass still verifies, offline, and says so (issue 16: the
    // protected site must not go down with the queue).
    let v = app.verify("r", a.body["pass"].as_str().unwrap()).await;
    assert_eq!(
        (
            v.status,
            v.headers
                .get("x-anteroom-degraded")
                .map(|h| h.to_str().unwrap())
        ),
        (200, Some("store-unreachable"))
    );
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status, 503);
    assert_eq!(
        app.get("/healthz").await.status,
        200,
        "the process itself is fine"
    );

    redis.restart();
    wait_until(Duration::from_secs(15), "Anteroom to reconnect", || async {
        (app.get("/readyz").await.status == 200).then_some(())
    })
    .await;
    let a_again = app.join_as("r", &a.token()).await;
    assert_eq!(
        a_again.body["pass"], a.body["pass"],
        "the admission survived"
    );
    let b_again = app.status("r", &b.token()).await;
    assert_eq!(
        (b_again.state(), b_again.body["position"].as_u64()),
        ("queued", Some(1))
    );
}

#[tokio::test]
async fn a_frozen_redis_times_out_and_a_retried_join_is_never_admitted_twice() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 5)],
    ))
    .await;
    let x = app.join("r").await; // x is admitted; now a newcomer joins during the freeze
    assert_eq!(x.state(), "admitted");
    let y_token = app.engine.visitors.token(&VisitorId::random());

    redis.pause();
    let t = Instant::now();
    let r = app.join_as("r", &y_token).await;
    assert!(t.elapsed() < NO_HANG, "join hung for {:?}", t.elapsed());
    assert_eq!(r.status, 503);
    redis.resume();

    // The timed-out script may still have run once Redis woke up; the retry is
    // idempotent either way.
    let again = wait_until(Duration::from_secs(10), "Redis to answer again", || async {
        let r = app.join_as("r", &y_token).await;
        (r.status == 200).then_some(r)
    })
    .await;
    assert_eq!(again.state(), "admitted");
    let stats = app.engine.store.stats("r").await.unwrap();
    assert_eq!(
        (stats.active, stats.admitted_total),
        (2, 2),
        "y admitted exactly once"
    );
}

#[tokio::test]
async fn scripts_and_the_room_library_are_reloaded_after_a_flush() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 5)],
    ))
    .await;
    assert_eq!(app.join("r").await.status, 200);
    let lib = anteroom::store::redis::RoomLibrary::get().name.clone();
    let listed = |redis: &RedisServer| -> bool {
        let v: redis::Value = redis::cmd("FUNCTION")
            .arg("LIST")
            .arg("LIBRARYNAME")
            .arg(&lib)
            .query(&mut redis.conn())
            .unwrap();
        matches!(v, redis::Value::Array(ref a) if !a.is_empty())
    };
    assert!(listed(&redis), "{lib} is loaded");
    for what in ["SCRIPT", "FUNCTION"] {
        let _: () = redis::cmd(what)
            .arg("FLUSH")
            .query(&mut redis.conn())
            .unwrap();
    }
    assert!(!listed(&redis));
    // The next call finds no function, loads the library and succeeds.
    assert_eq!(app.join("r").await.status, 200);
    assert!(listed(&redis), "{lib} is loaded again");
    assert_eq!(app.engine.store.stats("r").await.unwrap().active, 2);
    // The per-visitor limiter is a plain script: reloaded on NOSCRIPT.
    let v = anteroom::domain::identity::VisitorId::random();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut redis.conn())
        .unwrap();
    assert!(app
        .engine
        .check_visitor_limit(&v, anteroom::domain::ratelimit::LimitedAction::Status)
        .await
        .is_ok());
}

#[tokio::test]
async fn the_visitor_limiter_fails_open_when_redis_is_down() {
    let mut redis = RedisServer::start();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 5)],
    );
    s.rate_limit.visitor_requests = 1;
    let app = spawn_app(s).await;
    let v = VisitorId::random();
    assert!(app
        .engine
        .check_visitor_limit(&v, LimitedAction::Status)
        .await
        .is_ok());
    assert!(app
        .engine
        .check_visitor_limit(&v, LimitedAction::Status)
        .await
        .is_err());
    redis.kill();
    assert!(
        app.engine
            .check_visitor_limit(&v, LimitedAction::Status)
            .await
            .is_ok(),
        "limiting is protection, not correctness: it lets the request through"
    );
    let m = app.get("/metrics").await.body;
    assert!(m
        .as_str()
        .unwrap()
        .contains("anteroom_store_errors_total{op=\"rate_limit\"} 1"));
}
