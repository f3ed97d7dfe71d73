//! Proof of work at join (ALTCHA's format) against a hostile client: no solution, a wrong
//! one, a reused one, an expired one; a visitor with a place never solves again.

use crate::helpers::{room, spawn_app, test_settings, RedisServer, Reply, TestApp};
use anteroom::domain::pow::{self, Challenge};
use anteroom::room::{ChallengeMode, RoomConfig};
use base64::Engine as _;

async fn app() -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(r.url()),
        &crate::helpers::prefix(),
        vec![
            RoomConfig {
                challenge: ChallengeMode::Pow,
                pow_max_number: 2_000,
                ..room("drop", 1)
            },
            room("plain", 1),
        ],
    ))
    .await;
    (app, r)
}

/// A join from a fresh client: optional solution header, optional JSON body.
async fn join(app: &TestApp, header: Option<&str>, body: Option<serde_json::Value>) -> Reply {
    let mut req = reqwest::Client::new().post(app.url("/api/rooms/drop/join"));
    if let Some(h) = header {
        req = req.header("X-Anteroom-Challenge", h);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    Reply::from(req.send().await.unwrap()).await
}

async fn challenge(app: &TestApp) -> Challenge {
    let r = app.get("/api/rooms/drop/challenge").await;
    assert_eq!(r.status, 200);
    serde_json::from_value(r.body).unwrap()
}

fn refused(r: &Reply, code: &str) {
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], code);
    // A fresh challenge to solve comes with every refusal.
    let c: Challenge = serde_json::from_value(r.body["challenge"].clone()).unwrap();
    assert_eq!((c.algorithm.as_str(), c.maxnumber), ("SHA-256", 2_000));
}

#[tokio::test]
async fn a_join_needs_a_fresh_solution_and_a_place_holder_never_solves_again() {
    let (app, _r) = app().await;
    // No solution: refused, nobody in line.
    refused(&join(&app, None, None).await, "challenge_required");

    let c = challenge(&app).await;
    assert!(c.salt.contains("room=drop"), "{}", c.salt);
    let solution = pow::solve(&c).expect("solvable within maxnumber");
    let first = join(&app, Some(&solution), None).await;
    assert_eq!((first.status, first.state()), (200, "admitted"));

    // The same solution again, from another client: refused.
    refused(&join(&app, Some(&solution), None).await, "challenge_reused");

    // A wrong number, or another room's challenge: solve again.
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut v: serde_json::Value = serde_json::from_slice(&b64.decode(&solution).unwrap()).unwrap();
    v["number"] = serde_json::json!((v["number"].as_u64().unwrap() + 1) % 2001);
    let wrong = b64.encode(serde_json::to_vec(&v).unwrap());
    refused(&join(&app, Some(&wrong), None).await, "challenge_required");
    let other = app
        .engine
        .pow()
        .challenge("plain", 2_000, anteroom::clock::wall_ms() / 1000);
    refused(
        &join(&app, Some(&pow::solve(&other).unwrap()), None).await,
        "challenge_required",
    );

    // Made more than five minutes ago: expired.
    let old = app.engine.pow().challenge(
        "drop",
        2_000,
        anteroom::clock::wall_ms() / 1000 - pow::CHALLENGE_TTL_SECS - 5,
    );
    refused(
        &join(&app, Some(&pow::solve(&old).unwrap()), None).await,
        "challenge_expired",
    );

    // In the body as `altcha`, a second visitor queues.
    let second = join(
        &app,
        None,
        Some(serde_json::json!({"altcha": pow::solve(&challenge(&app).await).unwrap()})),
    )
    .await;
    assert_eq!(
        (second.status, second.body["position"].as_u64()),
        (200, Some(1))
    );

    // Both hold a place: their own visitor tokens join again without solving.
    for held in [&first, &second] {
        let again = join(
            &app,
            None,
            Some(serde_json::json!({"visitor_token": held.token()})),
        )
        .await;
        assert_eq!(again.status, 200, "{:?}", again.body);
    }
}

#[tokio::test]
async fn a_room_without_proof_of_work_offers_no_challenge_and_needs_none() {
    let (app, _r) = app().await;
    assert_eq!(app.get("/api/rooms/plain/challenge").await.status, 404);
    assert_eq!(app.get("/api/rooms/nope/challenge").await.status, 404);
    let r = Reply::from(
        reqwest::Client::new()
            .post(app.url("/api/rooms/plain/join"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
}

/// The socket's handshake joins too: a newcomer's socket gets no place without a proof
/// of work; a place holder's socket works.
#[tokio::test]
async fn the_socket_handshake_gives_no_place_without_a_proof_of_work() {
    use crate::helpers::ws::{connect, next_json};
    use tokio_tungstenite::tungstenite::Error as WsError;
    let (app, _r) = app().await;
    let elsewhere = app.join("plain").await.token();
    match connect(&app, "drop", &elsewhere, None).await {
        Err(WsError::Http(res)) => assert_eq!(res.status(), 403),
        other => panic!("expected 403, got {:?}", other.map(|_| ())),
    }
    let solved = join(
        &app,
        Some(&pow::solve(&challenge(&app).await).unwrap()),
        None,
    )
    .await;
    assert_eq!(solved.state(), "admitted");
    let mut ws = connect(&app, "drop", &solved.token(), None).await.unwrap();
    let first = next_json(&mut ws, std::time::Duration::from_secs(10)).await;
    assert_eq!(first["type"], "admitted");
}

/// The queue page of a proof-of-work room: the newcomer's browser solves the challenge in
/// a worker (the page shows its progress and stays responsive), joins, and listens. The
/// solve time at the default difficulty is printed (BENCHMARKS.md quotes it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_page_solves_the_challenge_in_a_worker_and_joins() {
    use crate::helpers::browser::{assert_accessible, screenshot, wait_text, Driver};
    let redis = RedisServer::start();
    let port = crate::helpers::free_port();
    let mut settings = crate::helpers::demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            challenge: ChallengeMode::Pow,
            pow_max_number: anteroom::room::DEFAULT_POW_MAX_NUMBER,
            ..room("drop", 1)
        }],
        "127.0.0.1",
    );
    // One request a minute per visitor: the page that does not join must not spend it,
    // or the script's join after solving would be refused.
    settings.rate_limit.visitor_requests = 1;
    settings.rate_limit.visitor_window_secs = 60;
    let app = spawn_app(settings).await;
    // Someone holds the only slot (solving as an API client does), so the page waits.
    let c = app.engine.pow().challenge(
        "drop",
        anteroom::room::DEFAULT_POW_MAX_NUMBER,
        anteroom::clock::wall_ms() / 1000,
    );
    let holder = Reply::from(
        reqwest::Client::new()
            .post(app.url("/api/rooms/drop/join"))
            .header("X-Anteroom-Challenge", pow::solve(&c).unwrap())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(holder.state(), "admitted");
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    let started = std::time::Instant::now();
    c.goto(&app.url("/r/drop")).await.unwrap();
    // Rendered without a place: nobody joined yet.
    assert_eq!(
        app.engine
            .admin_store()
            .stats("drop")
            .await
            .unwrap()
            .queue_length,
        0
    );
    wait_text(&c, "#position", "1").await;
    let took = started.elapsed();
    wait_text(&c, "#conn", "Live").await;
    assert_eq!(
        app.engine
            .admin_store()
            .stats("drop")
            .await
            .unwrap()
            .queue_length,
        1
    );
    eprintln!(
        "proof of work at the default difficulty ({}): page load to place shown in {:.2} s",
        anteroom::room::DEFAULT_POW_MAX_NUMBER,
        took.as_secs_f64()
    );
    screenshot(&c, "pow-joined").await;
    assert_accessible(&c, "the page after the proof of work").await;
}
