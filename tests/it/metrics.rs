//! The metrics the alerts and the dashboard rest on (issue 32, `deploy/prometheus`,
//! `deploy/grafana`) move when what they measure happens, read from a real server's
//! `/metrics` on a real Redis: HTTP answers by class, readiness, the wait from join to
//! admission, store call times, the longest socket silence, sockets per room and the
//! estimate's error.

use std::time::{Duration, Instant};

use crate::helpers::ws::{connect, next_json};
use crate::helpers::{redis_app, room, wait_until, TestApp};
use anteroom::metrics::StoreOp;
use anteroom::room::RoomConfig;

const DEADLINE: Duration = Duration::from_secs(20);

async fn scrape(app: &TestApp) -> String {
    app.client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The value of `series` (name and labels exactly as exposed) in `text`.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().unwrap())
}

#[tokio::test]
async fn a_5xx_is_counted_by_class_and_the_probes_are_not() {
    let (app, mut redis) = redis_app(vec![room("r", 5)]).await;
    let before = scrape(&app).await;
    assert_eq!(
        value(&before, r#"anteroom_http_responses_total{class="5xx"}"#),
        Some(0.0),
        "every class is exported from the start:\n{before}"
    );
    let ok_before = value(&before, r#"anteroom_http_responses_total{class="2xx"}"#).unwrap();
    assert_eq!(app.join("r").await.state(), "admitted");

    redis.kill();
    let failed = app.join("r").await;
    assert_eq!(failed.status, 503, "{:?}", failed.body);
    // Probes answer 503 too, and are not counted.
    for _ in 0..3 {
        assert_eq!(app.get("/readyz").await.status, 503);
    }
    let after = scrape(&app).await;
    assert_eq!(
        value(&after, r#"anteroom_http_responses_total{class="5xx"}"#),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        value(&after, r#"anteroom_http_responses_total{class="2xx"}"#),
        Some(ok_before + 1.0),
        "the join that was admitted, not the scrape: {after}"
    );
}

#[tokio::test]
async fn readiness_is_1_while_ready_and_0_once_redis_is_killed() {
    let (app, mut redis) = redis_app(vec![room("r", 5)]).await;
    assert_eq!(value(&scrape(&app).await, "anteroom_ready"), Some(1.0));
    assert_eq!(app.get("/readyz").await.status, 200);

    redis.kill();
    let text = wait_until(DEADLINE, "anteroom_ready 0", || async {
        let t = scrape(&app).await;
        (value(&t, "anteroom_ready") == Some(0.0)).then_some(t)
    })
    .await;
    assert_eq!(app.get("/readyz").await.status, 503, "{text}");
    assert_eq!(app.engine.metrics().ready.get(), 0, "the probe agrees");
}

#[tokio::test]
async fn the_wait_histogram_observes_each_admission_of_the_room() {
    // One slot of 1 s: the first visitor walks in (a wait of 0), the second waits for
    // the first session to run out.
    let (app, _redis) = redis_app(vec![RoomConfig {
        session_ttl_secs: 1,
        ..room("r", 1)
    }])
    .await;
    assert_eq!(app.join("r").await.state(), "admitted");
    let second = app.join("r").await;
    assert_eq!(second.state(), "queued");
    let token = second.token();
    let joined = Instant::now();
    wait_until(DEADLINE, "the second visitor let in", || async {
        (app.status("r", &token).await.state() == "admitted").then_some(())
    })
    .await;
    let waited = joined.elapsed().as_secs_f64();

    let text = scrape(&app).await;
    assert_eq!(
        value(&text, r#"anteroom_wait_seconds_count{room="r"}"#),
        Some(2.0),
        "{text}"
    );
    // The walk-in is in the first bucket (up to 1 s); the second visitor's wait is
    // within the bucket that holds the time this test saw it take.
    assert!(
        value(&text, r#"anteroom_wait_seconds_bucket{room="r",le="1"}"#).unwrap() >= 1.0,
        "{text}"
    );
    let bound = [1.0, 2.0, 5.0, 10.0, 20.0]
        .into_iter()
        .find(|b| *b >= waited)
        .unwrap();
    assert_eq!(
        value(
            &text,
            &format!(r#"anteroom_wait_seconds_bucket{{room="r",le="{bound}"}}"#)
        ),
        Some(2.0),
        "waited {waited:.2} s: {text}"
    );
    // A second scrape adds nothing that did not happen.
    let again = scrape(&app).await;
    assert_eq!(
        value(&again, r#"anteroom_wait_seconds_count{room="r"}"#),
        Some(2.0)
    );
}

#[tokio::test]
async fn store_calls_are_timed_by_class() {
    let (app, _redis) = redis_app(vec![room("r", 1)]).await;
    let l = &app.engine.metrics().store_latency;
    let joins = l.count(StoreOp::Join);
    let statuses = l.count(StoreOp::Status);
    app.join("r").await;
    let token = app.join("r").await.token();
    app.status("r", &token).await;
    assert_eq!(l.count(StoreOp::Join), joins + 2);
    assert!(l.count(StoreOp::Status) > statuses);

    let text = scrape(&app).await;
    for class in ["join", "status", "read"] {
        let n = value(
            &text,
            &format!(r#"anteroom_store_call_seconds_count{{class="{class}"}}"#),
        )
        .unwrap_or(0.0);
        assert!(n >= 1.0, "no {class} call timed:\n{text}");
    }
    assert!(
        value(
            &text,
            r#"anteroom_store_call_seconds_bucket{class="join",le="2.5"}"#
        )
        .unwrap()
            >= 2.0,
        "{text}"
    );
}

#[tokio::test]
async fn socket_silence_stays_within_the_promise_and_grows_once_the_store_is_gone() {
    let (app, mut redis) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await;
    let token = app.join("r").await.token();
    let mut ws = connect(&app, "r", &token, None).await.unwrap();
    assert_eq!(next_json(&mut ws, DEADLINE).await["type"], "status");
    let text = wait_until(DEADLINE, "the socket counted in its room", || async {
        let t = scrape(&app).await;
        (value(&t, r#"anteroom_room_sockets{room="r"}"#) == Some(1.0)).then_some(t)
    })
    .await;
    assert_eq!(
        value(&text, "anteroom_ws_silence_promise_seconds"),
        Some(5.0)
    );

    // Eight seconds of scrapes (two refreshes and more): never past the promise. The
    // socket is read meanwhile, as a page would.
    let started = Instant::now();
    let mut longest = 0.0f64;
    while started.elapsed() < Duration::from_secs(8) {
        let t = scrape(&app).await;
        longest = longest.max(value(&t, "anteroom_ws_longest_silence_seconds").unwrap());
        let _ =
            tokio::time::timeout(Duration::from_millis(250), next_json(&mut ws, DEADLINE)).await;
    }
    eprintln!("longest socket silence over 8 s of scrapes: {longest} s");
    assert!(
        longest > 0.0 && longest <= 5.0,
        "longest silence {longest} s"
    );

    // No store, no tick: the waiting socket hears nothing, and the figure says so.
    redis.kill();
    wait_until(DEADLINE, "a silence past the promise", || async {
        let t = scrape(&app).await;
        (value(&t, "anteroom_ws_longest_silence_seconds").unwrap() > 5.0).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_sockets_first_known_estimate_is_judged_when_it_is_let_in() {
    // Sessions of 1 s in one slot: once one has run out the estimate is known
    // (eta::full_sessions_give_a_known_estimate_once_one_has_ended), and each socket's
    // visitor is let in a second after the one before.
    let (app, _redis) = redis_app(vec![RoomConfig {
        session_ttl_secs: 1,
        ..room("r", 1)
    }])
    .await;
    app.join("r").await;
    let mut sockets = Vec::new();
    for _ in 0..4 {
        let token = app.join("r").await.token();
        sockets.push(connect(&app, "r", &token, None).await.unwrap());
    }
    let text = wait_until(Duration::from_secs(30), "an estimate judged", || async {
        let t = scrape(&app).await;
        t.contains("anteroom_eta_judged_total{").then_some(t)
    })
    .await;
    let judged: f64 = ["inside", "before", "after"]
        .iter()
        .filter_map(|o| {
            value(
                &text,
                &format!(r#"anteroom_eta_judged_total{{outcome="{o}",room="r"}}"#),
            )
        })
        .sum();
    assert_eq!(
        value(&text, r#"anteroom_eta_error_ratio_count{room="r"}"#),
        Some(judged),
        "{text}"
    );
    drop(sockets);
}
