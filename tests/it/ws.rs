//! The queue WebSocket without a browser: message schema, upgrade checks, frame
//! validation, reconnects, pushes across instances, and the hub's store budget.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::helpers::ws::{close_code, connect, next_json, wait_for};
use crate::helpers::{
    command_calls, redis_app, room, spawn_app, test_settings, wait_until, RedisServer,
};
use anteroom::room::RoomConfig;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn the_first_message_is_a_full_status() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await;
    let me = app.join("r").await.token();
    let mut ws = connect(&app, "r", &me, None).await.unwrap();
    let m = next_json(&mut ws, DEADLINE).await;
    assert_eq!(m["type"], "status");
    assert_eq!(m["state"], "queued");
    assert_eq!(m["position"], 1);
    for k in [
        "queue_length",
        "eta_seconds",
        "eta_low_seconds",
        "eta_high_seconds",
        "active",
        "capacity",
    ] {
        assert!(m[k].is_u64(), "{k} missing in {m}");
    }
    ws.send(Message::Text(r#"{"type":"ping"}"#.into()))
        .await
        .unwrap();
    let pong = tokio::time::timeout(DEADLINE, ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(pong, Message::Text(r#"{"type":"pong"}"#.into()));
}

#[tokio::test]
async fn cross_site_upgrades_are_refused_before_the_upgrade() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let me = app.join("r").await.token();
    match connect(&app, "r", &me, Some("https://evil.example")).await {
        Err(WsError::Http(res)) => assert_eq!(res.status(), 403),
        other => panic!("expected 403, got {:?}", other.map(|_| ())),
    }
    let same = format!("http://127.0.0.1:{}", app.port);
    assert!(connect(&app, "r", &me, Some(&same)).await.is_ok());
}

#[tokio::test]
async fn upgrades_need_a_genuine_identity_and_a_real_room() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let me = app.join("r").await.token();
    let forged = format!("{}x", &me[..me.len() - 1]);
    for (room, token, status) in [("r", forged.as_str(), 401), ("nope", me.as_str(), 404)] {
        match connect(&app, room, token, None).await {
            Err(WsError::Http(res)) => assert_eq!(res.status(), status),
            other => panic!("expected {status}, got {:?}", other.map(|_| ())),
        }
    }
}

#[tokio::test]
async fn upgrades_go_through_the_ip_limiter() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    s.rate_limit.ip_per_second = 1;
    s.rate_limit.ip_burst = 2;
    let app = spawn_app(s).await;
    let me = app.join("r").await.token(); // 1 of the burst
    let _first = connect(&app, "r", &me, None).await.unwrap(); // 2
    match connect(&app, "r", &me, None).await {
        Err(WsError::Http(res)) => assert_eq!(res.status(), 429),
        other => panic!("expected 429, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test]
async fn bad_frames_close_the_socket_with_the_right_code() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await;
    let me = app.join("r").await.token();
    let cases: Vec<(Message, CloseCode)> = vec![
        (Message::Text("x".repeat(5000).into()), CloseCode::Size),
        (Message::Text("not json".into()), CloseCode::Invalid),
        (
            Message::Text(r#"{"type":"launch_missiles"}"#.into()),
            CloseCode::Policy,
        ),
        (
            Message::Binary(vec![1, 2, 3].into()),
            CloseCode::Unsupported,
        ),
    ];
    for (frame, code) in cases {
        let mut ws = connect(&app, "r", &me, None).await.unwrap();
        next_json(&mut ws, DEADLINE).await;
        ws.send(frame).await.unwrap();
        assert_eq!(close_code(&mut ws).await, code);
    }
    // Nothing was lost: still first in line.
    assert_eq!(app.status("r", &me).await.body["position"], 1);
}

#[tokio::test]
async fn a_reconnect_keeps_the_place() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await;
    app.join("r").await;
    let me = app.join("r").await.token();
    app.join("r").await;
    let mut ws = connect(&app, "r", &me, None).await.unwrap();
    let before = next_json(&mut ws, DEADLINE).await;
    drop(ws);
    let mut again = connect(&app, "r", &me, None).await.unwrap();
    let after = next_json(&mut again, DEADLINE).await;
    assert_eq!(before["position"], 2);
    assert_eq!(after["position"], 2);
    assert_eq!(
        after["queue_length"], before["queue_length"],
        "no duplicate place"
    );
    // A second tab at the same time sees the same place.
    let mut tab2 = connect(&app, "r", &me, None).await.unwrap();
    assert_eq!(next_json(&mut tab2, DEADLINE).await["position"], 2);
}

#[tokio::test]
async fn positions_are_pushed_as_the_line_moves() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let holder = app.join("r").await.token();
    let first = app.join("r").await.token();
    let me = app.join("r").await.token();
    let mut ws = connect(&app, "r", &me, None).await.unwrap();
    assert_eq!(next_json(&mut ws, DEADLINE).await["position"], 2);
    app.release("r", &holder).await;
    let m = wait_for(&mut ws, "status", DEADLINE).await;
    assert_eq!(m["position"], 1);
    app.release("r", &first).await;
    let m = wait_for(&mut ws, "admitted", DEADLINE).await;
    let pass = m["pass"].as_str().unwrap();
    assert!(m["redirect_url"]
        .as_str()
        .unwrap()
        .contains("anteroom_pass="));
    assert!(m["expires_at"].is_u64());
    assert_eq!(app.verify("r", pass).await.status, 200);
}

/// A socket told of its admission claims the session, even when the page leaves at once
/// (as it does, to the site): the session is a stay for the ETA, not a quiet one.
#[tokio::test]
async fn a_socket_told_of_its_admission_claims_the_session() {
    let cfg = RoomConfig {
        heartbeat_timeout_secs: 1,
        ..room("r", 1)
    };
    let (app, _r) = redis_app(vec![cfg]).await;
    let holder = app.join("r").await.token();
    let me = app.join("r").await.token();
    let mut ws = connect(&app, "r", &me, None).await.unwrap();
    assert_eq!(next_json(&mut ws, DEADLINE).await["state"], "queued");
    app.release("r", &holder).await;
    wait_for(&mut ws, "admitted", DEADLINE).await;
    drop(ws);
    let admitted = Instant::now();
    // Past half the heartbeat timeout an unclaimed session would be listed as quiet.
    let basis = wait_until(DEADLINE, "half the heartbeat timeout to pass", || async {
        let b = app.engine.admission_store().eta_basis("r").await.unwrap();
        (admitted.elapsed() >= Duration::from_millis(600)).then_some(b)
    })
    .await;
    assert_eq!(
        (basis.sessions.len(), basis.quiet.len()),
        (1, 0),
        "{basis:?}"
    );
}

#[tokio::test]
async fn an_admission_on_one_instance_reaches_a_socket_on_another_within_a_second() {
    let r = RedisServer::start();
    let settings = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    let a = spawn_app(settings.clone()).await;
    let b = spawn_app(settings).await;
    let holder = a.join("r").await.token();
    let me = a.join("r").await.token();
    let mut ws = connect(&b, "r", &me, None).await.unwrap();
    assert_eq!(next_json(&mut ws, DEADLINE).await["state"], "queued");
    let released = Instant::now();
    assert_eq!(a.release("r", &holder).await.status, 204);
    let m = wait_for(&mut ws, "admitted", Duration::from_secs(1)).await;
    let latency = released.elapsed();
    assert!(latency < Duration::from_secs(1), "took {latency:?}");
    assert_eq!(b.verify("r", m["pass"].as_str().unwrap()).await.status, 200);
}

#[tokio::test]
async fn room_state_changes_are_pushed() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await;
    let me = app.join("r").await.token();
    let mut ws = connect(&app, "r", &me, None).await.unwrap();
    next_json(&mut ws, DEADLINE).await;
    let store = app.engine.shared_store();
    let mut cfg = store.room("r").await.unwrap().unwrap();
    for (change, expect) in [
        (
            &(|c: &mut RoomConfig| c.paused = true) as &dyn Fn(&mut RoomConfig),
            "paused",
        ),
        (&|c: &mut RoomConfig| c.paused = false, "resumed"),
        (&|c: &mut RoomConfig| c.stock = Some(0), "sold_out"),
        (&|c: &mut RoomConfig| c.stock = None, "resumed"),
        (&|c: &mut RoomConfig| c.closed = true, "closed"),
    ] {
        change(&mut cfg);
        store.put_room(&cfg, false).await.unwrap();
        wait_for(&mut ws, expect, DEADLINE).await;
    }
}

#[tokio::test]
async fn an_open_socket_keeps_its_visitor_from_being_reaped() {
    let (app, _r) = redis_app(vec![RoomConfig {
        heartbeat_timeout_secs: 1,
        ..room("r", 1)
    }])
    .await;
    app.join("r").await;
    let silent = app.join("r").await.token();
    let connected = app.join("r").await.token();
    let mut ws = connect(&app, "r", &connected, None).await.unwrap();
    next_json(&mut ws, DEADLINE).await;
    // Only the store's figures are read here: a status call would refresh a heartbeat.
    wait_until(DEADLINE, "the silent visitor to be reaped", || async {
        let s = app.engine.admin_store().stats("r").await.unwrap();
        (s.reaped_total == 1).then_some(())
    })
    .await;
    assert_eq!(app.store_state("r", &silent).await, "not_queued");
    assert_eq!(app.store_state("r", &connected).await, "queued");
    // Moved up when the silent one was dropped (earlier statuses may still be queued).
    let start = Instant::now();
    while wait_for(&mut ws, "status", DEADLINE).await["position"] != 1 {
        assert!(start.elapsed() < DEADLINE, "never moved up to 1");
    }
}

/// Script and function calls Redis ran.
fn script_calls(r: &RedisServer) -> u64 {
    let calls = command_calls(r);
    ["evalsha", "eval", "fcall"]
        .iter()
        .filter_map(|c| calls.get(*c))
        .sum()
}

/// Every command Redis ran, those inside scripts and functions included (`INFO` itself
/// left out).
fn redis_commands(r: &RedisServer) -> u64 {
    command_calls(r)
        .iter()
        .filter(|(c, _)| c.as_str() != "info")
        .map(|(_, n)| n)
        .sum()
}

/// (script calls, all Redis commands, hub ticks) over at least five ticks with `n`
/// sockets open.
async fn redis_work_over_ticks(n: usize) -> (u64, u64, u64) {
    let r = RedisServer::start();
    // 500 sockets from one address: the per-address cap (300 by default) is off here.
    let cfg = anteroom::room::RoomConfig {
        max_places_per_ip: 0,
        ..room("r", 1)
    };
    let mut s = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![cfg]);
    // Only the hub (and the revocation log's reader) talk to Redis during the measurement.
    s.reaper.interval_ms = 600_000;
    s.reaper.promote_interval_ms = 600_000;
    s.reaper.keeper_interval_ms = 600_000;
    let app = spawn_app(s).await;
    app.join("r").await;
    let mut sockets = Vec::new();
    for _ in 0..n {
        let t = app.join("r").await.token();
        let mut ws = connect(&app, "r", &t, None).await.unwrap();
        next_json(&mut ws, DEADLINE).await;
        sockets.push(ws);
    }
    wait_until(DEADLINE, "every socket registered", || async {
        (app.hub.stats.sockets.load(Ordering::SeqCst) == n as u64).then_some(())
    })
    .await;
    let ticks = || app.hub.stats.ticks.load(Ordering::SeqCst);
    // Two tick boundaries: the first holds the new sockets (a one-off, O(changes)).
    let t0 = ticks();
    wait_until(DEADLINE, "two tick boundaries", || async {
        (ticks() > t0 + 1).then_some(())
    })
    .await;
    let (t1, c1, k1) = (ticks(), script_calls(&r), redis_commands(&r));
    wait_until(Duration::from_secs(20), "five more ticks", || async {
        (ticks() >= t1 + 5).then_some(())
    })
    .await;
    let (t2, c2, k2) = (ticks(), script_calls(&r), redis_commands(&r));
    (c2 - c1, k2 - k1, t2 - t1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_work_per_tick_does_not_grow_with_the_number_of_sockets() {
    // Budget (see src/hub.rs): one tick call per room per tick, one ETA basis read per
    // room per second (domain::forecast::REFRESH, the tick's period), plus one
    // socket-count report every 3 ticks; beside the hub, the revocation log read every
    // POLL_INTERVAL (250 ms: 4 a tick, per instance, whatever the sockets) that lets
    // admitted statuses be answered here (tests/it/budget.rs prices it). The counters
    // are read between ticks, so a call in flight at either end may add one of each.
    let polls_per_tick = 1000 / anteroom::domain::revoked::POLL_INTERVAL.as_millis() as u64;
    let mut calls_seen = Vec::new();
    let mut commands_seen = Vec::new();
    for n in [10, 500] {
        let (calls, commands, ticks) = redis_work_over_ticks(n).await;
        let budget = 2 * ticks + ticks.div_ceil(3) + 2 + polls_per_tick * ticks + 1;
        assert!(
            calls <= budget,
            "{n} sockets: {calls} script calls in {ticks} ticks (budget {budget})"
        );
        assert!(
            calls + 1 >= ticks,
            "{n} sockets: the hub polled ({calls} in {ticks} ticks)"
        );
        eprintln!(
            "{n} sockets: {:.2} script calls and {:.2} Redis commands per tick",
            calls as f64 / ticks as f64,
            commands as f64 / ticks as f64
        );
        calls_seen.push(calls as f64 / ticks as f64);
        commands_seen.push(commands as f64 / ticks as f64);
    }
    // 50 times the sockets, the same work: store calls and the commands inside them
    // (one heartbeat per socket per tick would be 490 more commands a tick).
    assert!(
        calls_seen[1] <= calls_seen[0] + 0.5,
        "per-tick calls grew with sockets: {calls_seen:?}"
    );
    assert!(
        commands_seen[1] <= commands_seen[0] * 1.2 + 2.0,
        "per-tick Redis commands grew with sockets: {commands_seen:?}"
    );
}

#[tokio::test]
async fn a_queued_socket_hears_a_status_at_least_every_five_seconds_when_nothing_changes() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await; // holds the only slot for the whole test
    let token = app.join("r").await.token();
    let mut ws = connect(&app, "r", &token, None).await.unwrap();
    let first = next_json(&mut ws, DEADLINE).await;
    assert_eq!(
        (first["type"].as_str(), first["position"].as_u64()),
        (Some("status"), Some(1))
    );
    // Nothing changes in the room; the hub still re-sends the status.
    for _ in 0..2 {
        let started = Instant::now();
        let again = next_json(&mut ws, Duration::from_secs(6)).await;
        assert_eq!(again["type"], "status");
        assert_eq!(again["position"], 1);
        assert!(
            started.elapsed() <= Duration::from_millis(5500),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn the_websocket_upgrade_counts_against_the_per_visitor_limit() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    s.rate_limit.visitor_requests = 3;
    let app = spawn_app(s).await;
    let token = app.join("r").await.token(); // 1
    let a = connect(&app, "r", &token, None).await; // 2
    let b = connect(&app, "r", &token, None).await; // 3
    assert!(a.is_ok() && b.is_ok());
    match connect(&app, "r", &token, None).await {
        Err(WsError::Http(res)) => assert_eq!(res.status(), 429),
        other => panic!("expected 429, got {:?}", other.map(|_| ())),
    }
}
