//! Launch-day drops end to end: a scheduled room on a controllable clock (memory store),
//! a drop across two instances on one Redis (exactly one shuffle, the published order,
//! sockets moved from the pre-queue into the line without a reload), the fairness
//! endpoints, and every bad input a 400 or a start-up error naming its field.

use std::sync::Arc;
use std::time::Duration;

use anteroom::drops::{shuffle_once, ShuffleOutcome};
use anteroom::room::RoomConfig;
use anteroom::store::memory::{ManualClock, MemoryStore};
use anteroom::store::prelude::*;
use anteroom::store::VisitorState;
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::helpers::admin::{admin, admin_app};
use crate::helpers::fairness::{digest, hex, unhex};
use crate::helpers::ws::{connect, next_json};
use crate::helpers::{
    command_calls, prefix, room, spawn_app, test_settings, wait_until, RedisServer,
};

const DEADLINE: Duration = Duration::from_secs(15);

fn v(i: usize) -> String {
    format!("{i:032x}")
}

#[tokio::test]
async fn on_a_manual_clock_a_drop_opens_its_prequeue_shuffles_and_closes() {
    let t0 = 1_800_000_000_000;
    let clock = ManualClock::new(t0);
    let s = MemoryStore::with_clock(Arc::new(clock.clone()));
    let cfg = RoomConfig {
        prequeue_opens_at: Some(t0 + 10_000),
        opens_at: Some(t0 + 20_000),
        closes_at: Some(t0 + 30_000),
        ..room("r", 2)
    };
    s.put_room(&cfg, true).await.unwrap();
    assert_eq!(
        s.join("r", &v(0)).await.unwrap().state,
        VisitorState::Scheduled
    );
    assert_eq!(s.fairness("r").await.unwrap().commitment, None);

    clock.advance(10_000);
    for i in 0..6 {
        assert_eq!(
            s.join("r", &v(i)).await.unwrap().state,
            VisitorState::Prequeue
        );
    }
    assert_eq!(
        shuffle_once(&s, "r", "a", 5_000).await.unwrap(),
        ShuffleOutcome::NotDue,
        "not before the opening"
    );
    let commitment = s.fairness("r").await.unwrap().commitment.unwrap();

    clock.advance(10_000);
    assert_eq!(
        s.join("r", &v(50)).await.unwrap().state,
        VisitorState::Queued
    );
    let ShuffleOutcome::Shuffled { order, placed } =
        shuffle_once(&s, "r", "a", 5_000).await.unwrap()
    else {
        panic!("the opening came: the pre-queue is shuffled");
    };
    assert_eq!(placed, 6);
    let f = s.fairness("r").await.unwrap();
    let seed = f.seed.unwrap();
    assert_eq!(hex(&Sha256::digest(unhex(&seed))), commitment);
    let mut expected: Vec<String> = (0..6).map(v).collect();
    expected.sort_by_key(|x| digest(&seed, x));
    assert_eq!(order, expected);
    // Capacity 2: the first two of the order are let in, the late one is last.
    for (rank, x) in expected.iter().enumerate() {
        let snap = s.status("r", x).await.unwrap();
        if rank < 2 {
            assert_eq!(snap.state, VisitorState::Admitted);
        } else {
            assert_eq!(snap.position, rank as u64 - 1);
        }
    }
    assert_eq!(s.status("r", &v(50)).await.unwrap().position, 5);

    clock.advance(10_000);
    assert_eq!(
        s.status("r", &v(50)).await.unwrap().state,
        VisitorState::Closed
    );
    assert_eq!(
        s.join("r", &v(51)).await.unwrap().state,
        VisitorState::Closed
    );
}

/// Waits until a socket is told it is in the line (a `queued` status) or let in.
async fn until_in_line(ws: &mut crate::helpers::ws::Ws) -> Value {
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        assert!(
            !left.is_zero(),
            "the socket was not moved into the line in time"
        );
        let m = next_json(ws, left).await;
        if m["type"] == "admitted" || (m["type"] == "status" && m["state"] == "queued") {
            return m;
        }
    }
}

#[tokio::test]
async fn a_drop_on_two_instances_is_shuffled_once_in_the_published_order() {
    let redis = RedisServer::start();
    let prefix = prefix();
    // Redis runs here, so its TIME is this machine's clock: the opening 3 s ahead.
    let now = anteroom::clock::wall_ms();
    let open = now + 3_000;
    let cfg = RoomConfig {
        prequeue_opens_at: Some(now - 1_000),
        opens_at: Some(open),
        ..room("r", 1)
    };
    let a = spawn_app(test_settings(Some(redis.url()), &prefix, vec![cfg.clone()])).await;
    let b = spawn_app(test_settings(Some(redis.url()), &prefix, vec![cfg])).await;

    let mut tokens = Vec::new();
    for i in 0..12 {
        let app = if i % 2 == 0 { &a } else { &b };
        let r = app.join("r").await;
        assert_eq!(r.state(), "prequeue", "{:?}", r.body);
        assert_eq!(r.body["position"], 0);
        assert_eq!(r.body["opens_at"], open / 1000);
        assert_eq!(r.body["prequeue_opens_at"], (now - 1_000) / 1000);
        assert!(r.body["now_ms"].as_u64().unwrap() >= now - 1_000);
        tokens.push(r.token());
    }
    // A reload keeps the one place.
    assert_eq!(a.join_as("r", &tokens[3]).await.state(), "prequeue");
    let f = a.get("/api/rooms/r/fairness").await;
    assert_eq!(f.status, 200);
    assert_eq!(f.body["seed"], Value::Null);
    assert_eq!(f.body["prequeue_count"], 12);
    assert_eq!(f.body["mode"], "fifo");
    assert_eq!(
        f.body["algorithm"],
        "hmac-sha256(seed, visitor_id) ascending hex"
    );
    let commitment = f.body["commitment"].as_str().unwrap().to_string();
    assert_eq!(
        b.get("/api/rooms/r/fairness/digests").await.body["digests"],
        json!([])
    );

    // A socket in the pre-queue is told so, with the countdown's figures, then moved into
    // the line at the opening without a reload.
    let mut ws = connect(&b, "r", &tokens[1], None).await.unwrap();
    let first = next_json(&mut ws, DEADLINE).await;
    assert_eq!(
        (&first["type"], &first["state"]),
        (&json!("status"), &json!("prequeue")),
        "{first}"
    );
    assert_eq!(first["opens_at"], open / 1000, "{first}");
    assert!(first["now_ms"].as_u64().is_some(), "{first}");
    // The pre-queue is not a pause for the ETA (so the opening is no `resumed`).
    assert!(
        !b.engine
            .admission_store()
            .eta_basis("r")
            .await
            .unwrap()
            .paused
    );
    b.engine.forecast("r").await;
    let moved = until_in_line(&mut ws).await;
    let at = anteroom::clock::wall_ms();
    assert!(
        at < open + 2_000,
        "moved {} ms after the opening",
        at - open
    );

    let f = wait_until(DEADLINE, "the seed to be revealed", || async {
        let f = a.get("/api/rooms/r/fairness").await;
        (!f.body["seed"].is_null()).then_some(f)
    })
    .await;
    let seed = f.body["seed"].as_str().unwrap().to_string();
    assert_eq!(hex(&Sha256::digest(unhex(&seed))), commitment);
    // Both instances ran the drop loop; the store counted one shuffle.
    assert_eq!(
        a.engine
            .fairness_store()
            .fairness("r")
            .await
            .unwrap()
            .shuffles,
        1
    );

    // Each visitor finds their rank from the digests; the line follows it.
    let digests: Vec<String> = serde_json::from_value(
        b.get("/api/rooms/r/fairness/digests").await.body["digests"].clone(),
    )
    .unwrap();
    let mut sorted = digests.clone();
    sorted.sort();
    assert_eq!((digests.len(), &digests), (12, &sorted));
    for t in &tokens {
        let id = t.split('.').next().unwrap();
        let rank = digests
            .iter()
            .position(|d| *d == digest(&seed, id))
            .unwrap()
            + 1;
        let st = a.status("r", t).await;
        if rank == 1 {
            assert_eq!(st.state(), "admitted");
        } else {
            assert_eq!(
                (st.state(), st.body["position"].as_u64()),
                ("queued", Some(rank as u64 - 1))
            );
        }
        if t == &tokens[1] && rank > 1 {
            assert_eq!(moved["state"], "queued");
        }
    }
    // The opening is not a resume: nobody was told of a pause (b's hub read the ETA
    // basis through the pre-queue, for its socket).
    for t in &tokens {
        let st = b.status("r", t).await;
        assert_ne!(st.body["eta_reason"], "resumed", "{:?}", st.body);
    }
    // A newcomer queues behind the whole pre-queue.
    assert_eq!(a.join("r").await.body["position"], 12);
}

#[tokio::test]
async fn the_fairness_endpoints_answer_404_for_an_unknown_room() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &prefix(),
        vec![room("r", 1)],
    ))
    .await;
    for path in [
        "/api/rooms/nope/fairness",
        "/api/rooms/nope/fairness/digests",
    ] {
        let r = app.get(path).await;
        assert_eq!((r.status, r.error_code()), (404, "unknown_room"), "{path}");
    }
    let r = app.get("/api/rooms/r/fairness").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        (&r.body["commitment"], &r.body["opens_at"]),
        (&Value::Null, &Value::Null)
    );
}

#[tokio::test]
async fn bad_event_settings_are_refused_naming_the_field() {
    let (app, _redis) = admin_app(vec![room("r", 1)]).await;
    let cases = [
        (json!({"opens_at": "tomorrow at six"}), "opens_at"),
        (
            json!({"prequeue_opens_at": "2026-13-01T00:00:00Z"}),
            "prequeue_opens_at",
        ),
        (json!({"closes_at": 1795802400}), "closes_at"),
        (
            json!({"prequeue_opens_at": "2026-11-27T18:00:00Z", "opens_at": "2026-11-27T17:00:00Z"}),
            "opens_at",
        ),
        (
            json!({"opens_at": "2026-11-27T18:00:00Z", "closes_at": "2026-11-27T17:00:00Z"}),
            "closes_at",
        ),
        (
            json!({"prequeue_opens_at": "2026-11-27T18:00:00Z"}),
            "prequeue_opens_at",
        ),
        (json!({"event_capacity": 5}), "event_capacity"),
        (
            json!({"event_session_ttl_secs": 5}),
            "event_session_ttl_secs",
        ),
        (
            json!({"event_max_admissions_per_minute": 5}),
            "event_max_admissions_per_minute",
        ),
        (json!({"mode": "lottery"}), "mode"),
    ];
    for (body, field) in cases {
        let r = admin(&app, Method::PUT, "/api/admin/rooms/r", Some(body.clone())).await;
        assert_eq!(
            (r.status, r.error_code()),
            (400, "invalid_field"),
            "{body}: {:?}",
            r.body
        );
        assert_eq!(r.body["error"]["field"], field, "{body}");
    }
    // Nothing was written; a good schedule is taken and read back in RFC 3339.
    let good = json!({
        "prequeue_opens_at": "2026-11-27T17:30:00Z",
        "opens_at": "2026-11-27T18:00:00Z",
        "closes_at": "2026-11-27T20:00:00Z",
        "event_capacity": 500,
        "mode": "random",
    });
    let r = admin(&app, Method::PUT, "/api/admin/rooms/r", Some(good)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.body["config"]["opens_at"], "2026-11-27T18:00:00Z");
    assert_eq!(
        r.body["config"]["prequeue_opens_at"],
        "2026-11-27T17:30:00Z"
    );
    assert_eq!(r.body["config"]["event_capacity"], 500);
    assert_eq!(r.body["config"]["mode"], "random");
    // "" removes a time.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"closes_at": ""})),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.body["config"]["closes_at"], Value::Null);
}

#[test]
fn bad_event_settings_in_the_config_file_stop_start_up_naming_the_field() {
    let cases = [
        ("opens_at = \"soon\"\n", "opens_at"),
        (
            "prequeue_opens_at = \"2026-11-27T18:00:00Z\"\nopens_at = \"2026-11-27T17:00:00Z\"\n",
            "opens_at",
        ),
        (
            "opens_at = \"2026-11-27T18:00:00Z\"\ncloses_at = \"2026-11-27T18:00:00Z\"\n",
            "closes_at",
        ),
        ("event_capacity = 10\n", "event_capacity"),
    ];
    for (extra, field) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anteroom.toml");
        std::fs::write(
            &path,
            format!("[[rooms]]\nid = \"r\"\ntarget_url = \"https://x.example/\"\n{extra}"),
        )
        .unwrap();
        let err = anteroom::config::Settings::load(Some(&path))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "{extra}: {err}");
    }
}

/// Waits for a `status` in `state`, skipping other messages.
async fn status_in(ws: &mut crate::helpers::ws::Ws, state: &str) -> Value {
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        assert!(!left.is_zero(), "no status in state {state} in time");
        let m = next_json(ws, left).await;
        if m["type"] == "status" && m["state"] == state {
            return m;
        }
    }
}

#[tokio::test]
async fn a_page_left_open_goes_from_scheduled_to_the_prequeue_to_the_line_without_a_reload() {
    let redis = RedisServer::start();
    let now = anteroom::clock::wall_ms();
    let (pq, open) = (now + 2_000, now + 4_000);
    let cfg = RoomConfig {
        prequeue_opens_at: Some(pq),
        opens_at: Some(open),
        ..room("r", 1)
    };
    let app = spawn_app(test_settings(Some(redis.url()), &prefix(), vec![cfg])).await;
    let r = app.join("r").await;
    assert_eq!((r.state(), &r.body["position"]), ("scheduled", &json!(0)));
    assert_eq!(r.body["prequeue_opens_at"], pq / 1000);
    let mut ws = connect(&app, "r", &r.token(), None).await.unwrap();
    let first = status_in(&mut ws, "scheduled").await;
    assert_eq!(first["opens_at"], open / 1000, "{first}");
    // The pre-queue opens: the open page is enrolled and told so, with the countdown.
    let m = status_in(&mut ws, "prequeue").await;
    assert!(anteroom::clock::wall_ms() >= pq - 1_000, "{m}");
    assert_eq!(
        app.engine
            .fairness_store()
            .fairness("r")
            .await
            .unwrap()
            .prequeue_count,
        1
    );
    // The opening: the shuffle runs and the page is let in (the only one, capacity 1)
    // within a moment of it.
    let m = until_in_line(&mut ws).await;
    let at = anteroom::clock::wall_ms();
    assert_eq!(m["type"], "admitted", "{m}");
    assert!(
        at < open + 2_000,
        "moved {} ms after the opening",
        at - open
    );
}

/// The shuffle of a 10,000-visitor pre-queue, counted in Redis commands (deterministic;
/// no timing): one listing in pages of 5,000, 20 steps of 500, and per visitor a fixed
/// number of commands inside the steps (about 3,500 per step). Run with `--nocapture` to see the table.
#[tokio::test]
async fn a_10000_visitor_prequeue_is_shuffled_in_20_bounded_steps() {
    let redis = RedisServer::start();
    let s = crate::helpers::redis_store(&redis.url(), &prefix()).await;
    let now = anteroom::clock::wall_ms();
    let open = now + 4_000;
    let cfg = RoomConfig {
        prequeue_opens_at: Some(now - 1_000),
        opens_at: Some(open),
        ..room("r", 100)
    };
    s.put_room(&cfg, true).await.unwrap();
    let mut pending = futures_util::stream::iter((0..10_000).map(|i| {
        let s = &s;
        async move { s.join("r", &v(i)).await.unwrap() }
    }))
    .buffer_unordered(64);
    while let Some(snap) = pending.next().await {
        assert_eq!(snap.state, VisitorState::Prequeue);
    }
    drop(pending);
    wait_until(DEADLINE, "the opening", || async {
        (s.fairness("r").await.unwrap().now_ms >= open).then_some(())
    })
    .await;
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query::<()>(&mut redis.conn())
        .unwrap();
    let out = shuffle_once(&s, "r", "bench", 30_000).await.unwrap();
    assert!(matches!(
        out,
        ShuffleOutcome::Shuffled { placed: 10_000, .. }
    ));
    let calls = command_calls(&redis);
    println!("commands for the shuffle of 10,000: {calls:?}");
    assert_eq!(
        calls.get("fcall"),
        Some(&(1 + 1 + 20)),
        "fairness, seed, 20 steps"
    );
    assert_eq!(
        calls.get("zrange"),
        Some(&4),
        "the listing (two full pages and an empty one), the promotion's heads"
    );
    // Per visitor: ZSCORE ×3 (pre-queue, placed, session), ZADD ×3 (placed, line,
    // heartbeat), HSET (join time); plus the head's admission.
    assert!(
        calls["zadd"] >= 30_000 && calls["zadd"] < 30_000 + 500,
        "{calls:?}"
    );
    let f = s.fairness("r").await.unwrap();
    assert_eq!((f.shuffles, f.prequeue_count), (1, 10_000));
    assert_eq!(s.stats("r").await.unwrap().active, 100);
}

#[tokio::test]
async fn random_mode_through_the_api_draws_in_the_order_of_the_seed_revealed_at_close() {
    let cfg = RoomConfig {
        mode: anteroom::room::QueueMode::Random,
        ..room("r", 1)
    };
    let (app, _redis) = crate::helpers::redis_app(vec![cfg]).await;
    let holder = app.join("r").await;
    assert_eq!(holder.state(), "admitted");
    let mut ids = Vec::new();
    for i in 1..=8u64 {
        let r = app.join("r").await;
        assert_eq!(r.state(), "queued");
        // Any of those waiting may be next: the position shown is the number waiting.
        assert_eq!(
            (r.body["position"].as_u64(), r.body["queue_length"].as_u64()),
            (Some(i), Some(i))
        );
        ids.push(r.token().split('.').next().unwrap().to_string());
    }
    assert_eq!(
        app.get("/api/rooms/r/fairness").await.body["seed"],
        Value::Null
    );
    let store = app.engine.shared_store();
    let mut order = Vec::new();
    let mut current = holder.token().split('.').next().unwrap().to_string();
    for _ in 0..ids.len() {
        let (_, admitted) = store.release("r", &current).await.unwrap();
        if admitted.is_empty() {
            // The promoter got there first: whoever holds the session now is next.
            let next = wait_until(DEADLINE, "the next admission", || async {
                for id in &ids {
                    if !order.contains(id)
                        && store.status("r", id).await.unwrap().state == VisitorState::Admitted
                    {
                        return Some(id.clone());
                    }
                }
                None
            })
            .await;
            current = next;
        } else {
            current = admitted[0].clone();
        }
        order.push(current.clone());
    }
    store
        .patch_room(
            "r",
            &anteroom::store::RoomPatch {
                closed: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let f = app.get("/api/rooms/r/fairness").await;
    let seed = f.body["seed"]
        .as_str()
        .expect("revealed at close")
        .to_string();
    assert_eq!(f.body["mode"], "random");
    let mut expected = ids.clone();
    expected.sort_by_key(|id| digest(&seed, id));
    assert_eq!(order, expected);
}

/// Issue 28 finding 6: nothing a waiting visitor receives in random mode tells their
/// draw: not the receipt (which carried the ticket, that is the draw), not the position,
/// not the estimate (which was the one of their rank). A script cycling identities could
/// keep the best draws.
#[tokio::test]
async fn random_mode_tells_no_visitor_their_draw_before_admission() {
    let cfg = RoomConfig {
        mode: anteroom::room::QueueMode::Random,
        ..room("r", 1)
    };
    let (app, _redis) = crate::helpers::redis_app(vec![cfg]).await;
    assert_eq!(app.join("r").await.state(), "admitted");
    let mut waiting = Vec::new();
    for _ in 0..8 {
        let r = app.join("r").await;
        assert_eq!(r.state(), "queued");
        waiting.push(r.token());
    }
    let seed = app
        .engine
        .fairness_store()
        .event_seed("r", "unused")
        .await
        .unwrap();
    let mut estimates = std::collections::BTreeSet::new();
    let mut draws = Vec::new();
    for token in &waiting {
        let id = token.split('.').next().unwrap();
        let draw = anteroom::store::random_score(&seed, id);
        draws.push(draw);
        let r = app.status("r", token).await;
        let text = r.body.to_string();
        for shown in [draw.to_string(), format!("{draw:x}")] {
            assert!(!text.contains(&shown), "the draw {shown} is in {text}");
        }
        assert_eq!(r.body["position"], r.body["queue_length"]);
        estimates.insert((
            r.body["eta_seconds"].as_u64(),
            r.body["eta_low_seconds"].as_u64(),
            r.body["eta_high_seconds"].as_u64(),
        ));
    }
    // The draws differ, so their ranks do; the estimates do not.
    assert!(draws.windows(2).any(|w| w[0] != w[1]));
    assert_eq!(estimates.len(), 1, "estimates by rank: {estimates:?}");
}
