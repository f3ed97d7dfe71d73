//! The admin API and dashboard auth, on a real Redis, across two instances.

mod fifo;
mod sso;
mod stock;
mod users;
mod versions;
mod visitors;

use std::time::{Duration, Instant};

use crate::helpers::admin::{admin, admin_app, admin_settings, login, session_cookie, TOKEN};
use crate::helpers::ws::{connect, next_json, wait_for};
use crate::helpers::{room, spawn_app, test_settings, RedisServer, Reply};
use anteroom::room::Secret;
use anteroom::startup::Application;
use reqwest::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn the_api_needs_the_right_token_and_same_origin() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let none = app.get("/api/admin/rooms").await;
    assert_eq!((none.status, none.error_code()), (401, "no_credential"));
    let wrong = Reply::from(
        app.client
            .get(app.url("/api/admin/rooms"))
            .bearer_auth("nope")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((wrong.status, wrong.error_code()), (401, "invalid_token"));
    let cross = Reply::from(
        app.client
            .post(app.url("/api/admin/rooms/r/pause"))
            .bearer_auth(TOKEN)
            .header("origin", "https://evil.example")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((cross.status, cross.error_code()), (403, "forbidden"));
    assert!(
        !app.engine
            .room_store()
            .room("r")
            .await
            .unwrap()
            .unwrap()
            .paused
    );
    let ok = admin(&app, Method::GET, "/api/admin/rooms", None).await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["rooms"][0]["id"], "r");
    assert_eq!(ok.body["totals"]["rooms"], 1);
}

#[tokio::test]
async fn setting_capacity_validates_and_is_audited() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    for (body, field) in [
        (json!({"capacity": 0}), "capacity"),
        (json!({"session_ttl_secs": 0}), "session_ttl_secs"),
        (
            json!({"heartbeat_timeout_secs": 0}),
            "heartbeat_timeout_secs",
        ),
        (json!({"target_url": "ftp://x"}), "target_url"),
        (
            json!({"embed_origins": ["https://shop.example/path"]}),
            "embed_origins",
        ),
    ] {
        let r = admin(&app, Method::PUT, "/api/admin/rooms/r", Some(body.clone())).await;
        assert_eq!((r.status, r.error_code()), (400, "invalid_field"), "{body}");
        assert_eq!(r.body["error"]["field"], field, "{body}");
    }
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"capacityy": 5})),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, "malformed_json"));
    assert_eq!(
        app.engine
            .room_store()
            .room("r")
            .await
            .unwrap()
            .unwrap()
            .capacity,
        1,
        "nothing changed"
    );

    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"capacity": 1000})),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["config"]["capacity"], 1000);
    let audit = admin(&app, Method::GET, "/api/admin/rooms/r/audit", None).await;
    let e = &audit.body["entries"][0];
    assert_eq!(
        (e["who"].as_str(), e["action"].as_str()),
        (Some("token"), Some("set capacity"))
    );
    assert_eq!(
        (e["old"].as_u64(), e["new"].as_u64()),
        (Some(1), Some(1000))
    );
    assert!(e["at"].as_u64().unwrap() > 1_700_000_000_000);
}

#[tokio::test]
async fn every_control_works() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let holder = app.join("r").await.token();
    let waiting = app.join("r").await.token();
    app.join("r").await;

    let r = admin(&app, Method::POST, "/api/admin/rooms/r/pause", None).await;
    assert_eq!(r.body["config"]["paused"], true);
    assert_eq!(app.status("r", &waiting).await.state(), "paused");
    admin(&app, Method::POST, "/api/admin/rooms/r/resume", None).await;
    assert_eq!(app.status("r", &waiting).await.state(), "queued");

    admin(&app, Method::POST, "/api/admin/rooms/r/close", None).await;
    assert_eq!(app.join("r").await.state(), "closed");
    admin(&app, Method::POST, "/api/admin/rooms/r/open", None).await;

    let r = admin(
        &app,
        Method::POST,
        "/api/admin/rooms/r/stock",
        Some(json!({"set": 5})),
    )
    .await;
    assert_eq!(
        (r.body["old"].clone(), r.body["new"].clone()),
        (Value::Null, json!(5))
    );
    let r = admin(
        &app,
        Method::POST,
        "/api/admin/rooms/r/stock",
        Some(json!({"add": 2})),
    )
    .await;
    assert_eq!(r.body["new"], 7);
    let r = admin(
        &app,
        Method::POST,
        "/api/admin/rooms/r/stock",
        Some(json!({"unlimited": true})),
    )
    .await;
    assert_eq!(r.body["new"], Value::Null);
    let r = admin(
        &app,
        Method::POST,
        "/api/admin/rooms/r/stock",
        Some(json!({"set": 1, "add": 1})),
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("stock"))
    );

    // Remove one visitor: the holder's slot goes to the next in line.
    let holder_id = holder.split('.').next().unwrap();
    let r = admin(
        &app,
        Method::DELETE,
        &format!("/api/admin/rooms/r/visitors/{holder_id}"),
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(app.status("r", &waiting).await.state(), "admitted");
    let r = admin(
        &app,
        Method::DELETE,
        &format!("/api/admin/rooms/r/visitors/{holder_id}"),
        None,
    )
    .await;
    assert_eq!((r.status, r.error_code()), (404, "not_found"));
    let r = admin(
        &app,
        Method::DELETE,
        "/api/admin/rooms/r/visitors/not-an-id",
        None,
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("id"))
    );

    let r = admin(&app, Method::POST, "/api/admin/rooms/r/flush", None).await;
    assert_eq!(r.body["flushed"], 1);
    assert_eq!(
        app.engine
            .admin_store()
            .stats("r")
            .await
            .unwrap()
            .queue_length,
        0
    );

    // Create and delete a room.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/new-room",
        Some(json!({"capacity": 3})),
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("target_url"))
    );
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/new-room",
        Some(json!({"capacity": 3, "target_url": "https://shop.example/"})),
    )
    .await;
    assert_eq!(r.status, 201);
    assert_eq!(app.join("new-room").await.state(), "admitted");
    assert_eq!(
        admin(&app, Method::DELETE, "/api/admin/rooms/new-room", None)
            .await
            .status,
        204
    );
    assert_eq!(app.join("new-room").await.status, 404);
    assert_eq!(
        admin(&app, Method::DELETE, "/api/admin/rooms/new-room", None)
            .await
            .status,
        404
    );

    let audit = admin(&app, Method::GET, "/api/admin/audit?limit=50", None).await;
    let actions: Vec<&str> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    for a in [
        "set paused",
        "set closed",
        "set stock",
        "remove visitor",
        "flush queue",
        "create room",
        "delete room",
    ] {
        assert!(actions.contains(&a), "{a} missing from {actions:?}");
    }
}

#[tokio::test]
async fn raising_capacity_on_one_instance_admits_a_visitor_waiting_on_another_within_a_second() {
    let r = RedisServer::start();
    let s = admin_settings(&r, &crate::helpers::prefix(), vec![room("r", 1)]);
    let a = spawn_app(s.clone()).await;
    let b = spawn_app(s).await;
    b.join("r").await;
    let me = b.join("r").await.token();
    let mut ws = connect(&b, "r", &me, None).await.unwrap();
    assert_eq!(
        next_json(&mut ws, Duration::from_secs(10)).await["state"],
        "queued"
    );
    let t = Instant::now();
    let res = admin(
        &a,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"capacity": 2})),
    )
    .await;
    assert_eq!(res.status, 200);
    wait_for(&mut ws, "admitted", Duration::from_secs(1)).await;
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "took {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn pausing_on_one_instance_stops_admissions_on_another_at_once() {
    let r = RedisServer::start();
    let s = admin_settings(&r, &crate::helpers::prefix(), vec![room("r", 5)]);
    let a = spawn_app(s.clone()).await;
    let b = spawn_app(s).await;
    assert_eq!(b.join("r").await.state(), "admitted");
    admin(&a, Method::POST, "/api/admin/rooms/r/pause", None).await;
    let next = b.join("r").await;
    assert_eq!(
        (next.state(), next.body["position"].as_u64()),
        ("paused", Some(1))
    );
    assert_eq!(b.engine.admin_store().stats("r").await.unwrap().active, 1);
}

#[tokio::test]
async fn the_live_stream_pushes_figures() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    app.join("r").await;
    app.join("r").await;
    let mut res = app
        .client
        .get(app.url("/admin/live"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    // The first event, however the body is cut into chunks.
    let (events, _) = sse_events(&mut res, Duration::from_secs(10), |e| {
        e.starts_with("data:")
    })
    .await;
    let text = events.last().expect("an event within 10 s");
    let data: Value = serde_json::from_str(text.strip_prefix("data: ").unwrap().trim()).unwrap();
    let r = &data["rooms"][0];
    assert_eq!(
        (r["queue_length"].as_u64(), r["active"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(r["series"].as_array().unwrap().len(), 30);
    assert_eq!(data["totals"]["queue_length"], 1);
}

#[tokio::test]
async fn dashboard_login_sets_a_strict_cookie_and_changes_need_csrf() {
    let r = RedisServer::start();
    let mut s = admin_settings(&r, &crate::helpers::prefix(), vec![room("r", 1)]);
    s.admin.login_attempts_per_minute = 3;
    let app = spawn_app(s).await;

    let page = app.client.get(app.url("/admin")).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");

    let wrong = login(&app, "not-it").await;
    assert_eq!(wrong.status(), 401);
    assert!(session_cookie(&wrong).is_none());
    let ok = login(&app, TOKEN).await;
    assert_eq!(ok.status(), 303);
    let cookie = session_cookie(&ok).unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let session = cookie.split(';').next().unwrap().to_string();

    let dash = app
        .client
        .get(app.url("/admin"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(dash.contains("data-csrf="));
    let csrf = dash
        .split("data-csrf=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();

    // Reads need only the session; changes need the CSRF token too.
    let read = app
        .client
        .get(app.url("/api/admin/rooms"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    let no_csrf = app
        .client
        .post(app.url("/api/admin/rooms/r/pause"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status(), 403);
    let with_csrf = app
        .client
        .post(app.url("/api/admin/rooms/r/pause"))
        .header("cookie", &session)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(with_csrf.status(), 200);
    let audit = admin(&app, Method::GET, "/api/admin/audit", None).await;
    assert_eq!(audit.body["entries"][0]["who"], "token");

    // The limiter allows 3 attempts a minute: after a third, the 4th is refused even with
    // the right token.
    assert_eq!(login(&app, "not-it-either").await.status(), 401);
    let limited = login(&app, TOKEN).await;
    assert_eq!(limited.status(), 429);
    assert!(session_cookie(&limited).is_none());
}

#[tokio::test]
async fn a_password_hash_lets_the_admin_log_in() {
    use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
    let hash = argon2::Argon2::default()
        .hash_password(b"correct horse", &SaltString::generate(&mut OsRng))
        .unwrap()
        .to_string();
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    s.admin.enabled = true;
    s.admin.password_hash = Some(Secret::new(hash));
    let app = spawn_app(s).await;
    assert_eq!(login(&app, "wrong horse").await.status(), 401);
    let ok = login(&app, "correct horse").await;
    assert_eq!(ok.status(), 303);
    assert!(session_cookie(&ok).is_some());
}

#[tokio::test]
async fn a_forged_session_cookie_is_refused() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let far = jsonwebtoken::get_current_timestamp() + 3600;
    let forged = format!("anteroom_admin={far}.00112233445566778899aabbccddeeff.token.AAAA");
    let r = app
        .client
        .get(app.url("/api/admin/rooms"))
        .header("cookie", forged)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn the_server_refuses_to_start_with_admin_on_and_no_credential() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    s.admin.enabled = true;
    let err = Application::build(s)
        .await
        .err()
        .expect("must refuse")
        .to_string();
    assert!(err.contains("admin") && err.contains("credential"), "{err}");
    let mut off = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    off.admin.enabled = false;
    let app = spawn_app(off).await;
    assert_eq!(app.get("/api/admin/rooms").await.status, 404);
}

#[tokio::test]
async fn guessing_the_admin_token_is_throttled_per_client() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let limit = app.engine.settings().admin.failed_auth_per_minute;
    let guess = |t: &'static str| {
        let c = app.client.clone();
        let url = app.url("/api/admin/rooms");
        async move { Reply::from(c.get(url).bearer_auth(t).send().await.unwrap()).await }
    };
    for _ in 0..limit {
        let r = guess("wrong-guess-wrong-guess-wrong-guess").await;
        assert_eq!((r.status, r.error_code()), (401, "invalid_token"));
    }
    // Past the limit even the right token is refused, before it is looked at: a guesser
    // learns nothing from a right guess made while blocked.
    let blocked = guess("wrong-guess-wrong-guess-wrong-guess").await;
    assert_eq!(
        (blocked.status, blocked.error_code()),
        (429, "rate_limited")
    );
    assert!(blocked.headers.contains_key("retry-after"));
    let right = guess(TOKEN).await;
    assert_eq!(right.status, 429);
}

#[test]
fn an_admin_token_shorter_than_32_characters_stops_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(&path, "[admin]\ntoken = \"a\"\n").unwrap();
    let err = anteroom::config::Settings::load(Some(&path))
        .unwrap_err()
        .to_string();
    assert!(err.contains("admin.token") && err.contains("32"), "{err}");
}

/// During an attack an operator turns the bot defences on live through the admin API:
/// proof of work (and its difficulty), the per-network place cap, and token-only entry;
/// bad combinations are refused naming the field, and the entry secret never reaches the
/// audit log.
#[tokio::test]
async fn bot_defences_are_switched_on_live_and_the_secret_stays_out_of_the_audit() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    for (body, field) in [
        (json!({"entry": "token"}), "entry"),
        (json!({"entry_secret": "short"}), "entry"),
        (json!({"pow_max_number": 0}), "pow_max_number"),
        (json!({"max_places_per_ip": 5000}), "max_places_per_ip"),
    ] {
        let r = admin(&app, Method::PUT, "/api/admin/rooms/r", Some(body.clone())).await;
        assert_eq!((r.status, r.error_code()), (400, "invalid_field"), "{body}");
        assert_eq!(r.body["error"]["field"], field, "{body}");
    }
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"challenge": "pow", "pow_max_number": 500, "max_places_per_ip": 3})),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let cfg = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(cfg.body["config"]["challenge"], "pow");
    assert_eq!(cfg.body["config"]["pow_max_number"], 500);
    assert_eq!(cfg.body["config"]["max_places_per_ip"], 3);
    // It takes effect: a join without a proof of work is refused (within the 1 s cache).
    crate::helpers::wait_until(
        Duration::from_secs(5),
        "the challenge to be asked",
        || async {
            let j = Reply::from(
                reqwest::Client::new()
                    .post(app.url("/api/rooms/r/join"))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            (j.status == 403 && j.body["challenge"]["maxnumber"] == 500).then_some(())
        },
    )
    .await;
    // Token-only entry with its key; the secret is not in the audit log.
    let secret = "site-entry-secret-0123456789abcdef";
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"entry": "token", "entry_secret": secret})),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let audit = admin(&app, Method::GET, "/api/admin/rooms/r/audit", None).await;
    let text = audit.body.to_string();
    assert!(text.contains("set entry_secret"), "{text}");
    assert!(!text.contains(secret), "{text}");
}

/// Reads server-sent events from `res` until `until` says stop (or `deadline` passes):
/// every event's text (`data:` JSON, or a comment) and the bytes they took.
async fn sse_events(
    res: &mut reqwest::Response,
    deadline: Duration,
    mut until: impl FnMut(&str) -> bool,
) -> (Vec<String>, usize) {
    let end = tokio::time::Instant::now() + deadline;
    let (mut buf, mut events, mut bytes) = (String::new(), Vec::new(), 0);
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(end, res.chunk()).await {
        bytes += chunk.len();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(i) = buf.find("\n\n") {
            let ev: String = buf.drain(..i + 2).collect();
            let stop = until(&ev);
            events.push(ev);
            if stop {
                return (events, bytes);
            }
        }
    }
    (events, bytes)
}

/// Issue 30 finding 11: with 100 idle rooms the live feed sent the whole overview every
/// second (~240 KB/s). Now the first message is the whole overview and each one after
/// it only what changed: an idle second is a two-byte comment, and a join in one room
/// sends that room alone.
#[tokio::test]
async fn the_live_stream_sends_only_what_changed() {
    let (app, _r) = admin_app(vec![room("r0", 1)]).await;
    for i in 1..100 {
        let cfg = room(&format!("r{i}"), 1);
        app.engine.room_store().put_room(&cfg, true).await.unwrap();
    }
    let mut res = app
        .client
        .get(app.url("/admin/live"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let (first, full_bytes) = sse_events(&mut res, Duration::from_secs(10), |e| {
        e.starts_with("data:")
    })
    .await;
    let data: Value =
        serde_json::from_str(first.last().unwrap().strip_prefix("data: ").unwrap().trim()).unwrap();
    assert_eq!(data["full"], true);
    assert_eq!(data["rooms"].as_array().unwrap().len(), 100);
    // Three idle seconds, then a join in r7: the next data message carries r7.
    let (idle, idle_bytes) = sse_events(&mut res, Duration::from_secs(3), |_| false).await;
    app.join("r7").await;
    let (after, _) = sse_events(&mut res, Duration::from_secs(10), |e| {
        e.starts_with("data:") && e.contains("\"r7\"")
    })
    .await;
    let msg: Value =
        serde_json::from_str(after.last().unwrap().strip_prefix("data: ").unwrap().trim()).unwrap();
    assert_eq!(msg["full"], false);
    let ids: Vec<&str> = msg["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"r7"), "{ids:?}");
    // Only r7 changed; another room may travel only for its chart (a new minute's point
    // arrives room by room as each room's minute is written), never for its figures.
    let chart_aside = |r: &Value| {
        let mut r = r.clone();
        if let Some(m) = r.as_object_mut() {
            m.remove("series");
            m.remove("series_tail");
        }
        r
    };
    let mut last_sent = std::collections::HashMap::new();
    for e in first.iter().chain(&idle).chain(&after[..after.len() - 1]) {
        if let Some(d) = e.strip_prefix("data: ") {
            let v: Value = serde_json::from_str(d.trim()).unwrap();
            for r in v["rooms"].as_array().unwrap() {
                last_sent.insert(r["id"].as_str().unwrap().to_string(), chart_aside(r));
            }
        }
    }
    for r in msg["rooms"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        if id != "r7" {
            assert_eq!(
                chart_aside(r),
                last_sent[id],
                "{id} changed beyond its chart: {ids:?} in {msg}"
            );
        }
    }
    assert!(
        msg["rooms"][0].get("series").is_none(),
        "only the chart's tail"
    );
    assert_eq!(msg["rooms"][0]["series_tail"].as_array().unwrap().len(), 2);
    assert_eq!(
        msg["totals"]["queue_length"], 0,
        "r7's one visitor is admitted"
    );
    println!(
        "live feed, 100 rooms: first message {full_bytes} bytes; {} idle events in 3 s, {idle_bytes} bytes",
        idle.len()
    );
    // An idle second is a comment; a minute's chart points for 100 rooms, once a
    // minute, about 100 × 1 KB.
    assert!(idle_bytes < 150_000, "{idle_bytes} bytes idle: {idle:?}");
}
