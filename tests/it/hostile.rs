//! What a red-team pass broke, each kept broken-proof: unbounded WebSocket buffering,
//! floods and slow readers, forwarded-header tricks, ghost places after a store stall,
//! stale passes, and the smaller ones. (Admin-token guessing is in `admin.rs`; the
//! hostile-input table in `hostile_table.rs`; generated inputs in `fuzz.rs`.)

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::ws::{close_code, connect};
use crate::helpers::{
    client, client_frame_header, prefix, raw_ws_handshake, redis_app, room, spawn_app,
    test_settings, wait_until, RedisServer, Reply, ServerProcess, TestApp,
};

#[tokio::test]
async fn a_huge_declared_frame_is_refused_before_its_bytes_are_buffered() {
    let server = ServerProcess::start(
        "[[rooms]]\nid = \"r\"\ncapacity = 1\ntarget_url = \"https://origin.example/\"\n",
    );
    let joined: serde_json::Value = client()
        .post(server.url("/api/rooms/r/join"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = joined["visitor_token"].as_str().unwrap().to_string();
    let before = server.rss_kib();

    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    raw_ws_handshake(&mut s, server.port, "r", &token).await;
    s.write_all(&client_frame_header(0x1, 1 << 40))
        .await
        .unwrap();
    // Stream bytes behind the header (100 MB and more, as fast as loopback takes them).
    // The server refuses the frame at its header, closes, drains what is in flight for
    // at most its disconnect timeout (1 s), then hangs up.
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0usize;
    let started = Instant::now();
    let hung_up = loop {
        if started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        match tokio::time::timeout(Duration::from_secs(5), s.write_all(&chunk)).await {
            Ok(Ok(())) => sent += chunk.len(),
            _ => break true, // reset, closed, or no longer read
        }
    };
    let grown_kib = server.rss_kib().saturating_sub(before);
    assert!(
        grown_kib < 16 * 1024,
        "server memory grew by {grown_kib} KiB after {sent} bytes"
    );
    assert!(
        hung_up && started.elapsed() < Duration::from_secs(10),
        "the server still read after {:?} ({sent} bytes)",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_oversized_frame_closes_with_1009_at_once() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let token = app.join("r").await.token();
    let mut ws = connect(&app, "r", &token, None).await.unwrap();
    let _first = crate::helpers::ws::next_json(&mut ws, Duration::from_secs(5)).await;
    ws.send(Message::text("x".repeat(5000))).await.unwrap();
    assert_eq!(close_code(&mut ws).await, CloseCode::Size);
}

/// An upgraded connection reads into a 512-byte buffer (vendor/README.md): a frame up to
/// the limit arrives whole over many reads, and the answer follows.
#[tokio::test]
async fn a_frame_bigger_than_the_read_buffer_is_read_whole() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let token = app.join("r").await.token();
    let mut ws = connect(&app, "r", &token, None).await.unwrap();
    let _first = crate::helpers::ws::next_json(&mut ws, Duration::from_secs(5)).await;
    let ping = format!("{{\"type\":\"ping\"}}{}", " ".repeat(4000));
    assert!(ping.len() <= anteroom::web::ws::MAX_FRAME && ping.len() > 7 * 512);
    for _ in 0..3 {
        ws.send(Message::text(ping.clone())).await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let msg = tokio::time::timeout_at(deadline, futures_util::StreamExt::next(&mut ws))
                .await
                .expect("a pong in time")
                .expect("socket open")
                .expect("no socket error");
            if matches!(&msg, Message::Text(t) if t.contains(r#""type":"pong""#)) {
                break;
            }
        }
    }
}

#[tokio::test]
async fn a_frame_flood_is_closed_with_1008() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let token = app.join("r").await.token();
    let mut ws = connect(&app, "r", &token, None).await.unwrap();
    for _ in 0..1000 {
        if ws.send(Message::Ping(vec![1].into())).await.is_err() {
            break;
        }
    }
    assert_eq!(close_code(&mut ws).await, CloseCode::Policy);
}

#[tokio::test]
async fn a_client_that_stops_reading_does_not_hold_its_socket() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    app.join("r").await; // fills the room: our visitor queues
    let token = app.join("r").await.token();
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(1024).unwrap();
    let mut s = sock
        .connect(format!("127.0.0.1:{}", app.port).parse().unwrap())
        .await
        .unwrap();
    raw_ws_handshake(&mut s, app.port, "r", &token).await;
    wait_until(
        Duration::from_secs(5),
        "the socket to reach the hub",
        || async { (app.hub.stats.sockets.load(Ordering::Relaxed) == 1).then_some(()) },
    )
    .await;
    // Pings with the largest payload as fast as the socket takes them, never reading a
    // pong: on the old code the server's writes backed up until the session loop hung
    // in a write forever, keeping the visitor's place. Now the frame budget ends it (and
    // every write has a deadline, so a loop can never hang in one).
    let mut ping = client_frame_header(0x9, 125);
    ping.extend(std::iter::repeat_n(b'p', 125));
    let flood: Vec<u8> = ping
        .iter()
        .copied()
        .cycle()
        .take(ping.len() * 20_000)
        .collect();
    let writer = tokio::spawn(async move {
        let _ = tokio::time::timeout(Duration::from_secs(60), s.write_all(&flood)).await;
        s
    });
    wait_until(
        Duration::from_secs(30),
        "the flooding, non-reading socket to be dropped",
        || async { (app.hub.stats.sockets.load(Ordering::Relaxed) == 0).then_some(()) },
    )
    .await;
    writer.abort();
}

#[tokio::test]
async fn a_second_x_forwarded_for_line_does_not_escape_the_per_ip_limit() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &prefix(), vec![room("r", 1)]);
    s.trust_forwarded_for = true;
    s.rate_limit.ip_per_second = 1;
    s.rate_limit.ip_burst = 3;
    let app = spawn_app(s).await;
    let mut codes = Vec::new();
    for i in 0..10 {
        // The client forges a fresh first line each time; the proxy appends its own.
        let mut h = reqwest::header::HeaderMap::new();
        h.append("x-forwarded-for", format!("6.6.{i}.6").parse().unwrap());
        h.append("x-forwarded-for", "203.0.113.9".parse().unwrap());
        let res = app
            .client
            .post(app.url("/api/rooms/r/join"))
            .headers(h)
            .send()
            .await
            .unwrap();
        codes.push(res.status().as_u16());
    }
    assert!(
        codes.iter().filter(|c| **c == 429).count() >= 6,
        "{codes:?}"
    );
}

#[tokio::test]
async fn a_forwarded_host_header_does_not_make_a_foreign_origin_same_origin() {
    let r = RedisServer::start();
    let mut s = crate::helpers::admin::admin_settings(&r, &prefix(), vec![room("r", 1)]);
    s.trust_forwarded_for = false;
    let app = spawn_app(s).await;
    let token = app.join("r").await.token();
    for (name, value) in [
        ("x-forwarded-host", "evil.example"),
        ("forwarded", "host=evil.example;proto=http"),
    ] {
        // The WebSocket upgrade.
        let url = format!("ws://127.0.0.1:{}/r/r/ws?token={token}", app.port);
        let mut req =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
                .unwrap();
        req.headers_mut()
            .insert("origin", "http://evil.example".parse().unwrap());
        req.headers_mut().insert(name, value.parse().unwrap());
        match tokio_tungstenite::connect_async(req).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
                assert_eq!(res.status(), 403, "{name}")
            }
            other => panic!("{name}: expected 403, got {:?}", other.map(|_| ())),
        }
        // The admin API with the right token.
        let res = app
            .client
            .get(app.url("/api/admin/rooms"))
            .bearer_auth(crate::helpers::admin::TOKEN)
            .header("origin", "http://evil.example")
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{name}");
    }
}

#[tokio::test]
async fn joins_that_time_out_in_a_store_stall_leave_no_ghost_places() {
    let r = RedisServer::start();
    let app = spawn_app(test_settings(Some(r.url()), &prefix(), vec![room("r", 5)])).await;
    r.pause();
    let first: Vec<crate::helpers::Reply> =
        futures_util::future::join_all((0..30).map(|_| app.join("r"))).await;
    r.resume();
    let mut tokens = Vec::new();
    for reply in &first {
        assert_eq!(reply.status, 503, "{:?}", reply.body);
        assert_eq!(reply.error_code(), "store_unavailable");
        let cookie = reply
            .headers
            .get("set-cookie")
            .expect("the identity cookie");
        assert!(cookie.to_str().unwrap().starts_with("anteroom_vid="));
        tokens.push(
            reply.body["visitor_token"]
                .as_str()
                .expect("visitor_token")
                .to_string(),
        );
    }
    // Whatever ran late, each visitor's retry finds (or makes) exactly its own place.
    for t in &tokens {
        let again = wait_until(Duration::from_secs(10), "the store to answer", || async {
            let r = app.join_as("r", t).await;
            (r.status == 200).then_some(r)
        })
        .await;
        assert!(
            matches!(again.state(), "admitted" | "queued"),
            "{:?}",
            again.body
        );
    }
    let stats = app.engine.admin_store().stats("r").await.unwrap();
    assert_eq!(
        (stats.active, stats.queue_length),
        (5, 25),
        "every place belongs to a visitor who holds its token"
    );
}

#[tokio::test]
async fn an_old_pass_cannot_end_the_visitors_newer_session() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    let first = app.join("r").await;
    let token = first.token();
    let old_pass = first.body["pass"].as_str().unwrap().to_string();
    assert_eq!(app.release("r", &token).await.status, 204);
    let second = app.join_as("r", &token).await;
    assert_eq!(second.state(), "admitted");
    let new_pass = second.body["pass"].as_str().unwrap().to_string();
    assert_ne!(old_pass, new_pass);

    let stale = app.release("r", &old_pass).await;
    assert_eq!((stale.status, stale.error_code()), (401, "invalid_pass"));
    assert_eq!(
        app.verify("r", &new_pass).await.status,
        200,
        "still admitted"
    );
}

#[tokio::test]
async fn an_authorization_header_that_is_not_text_is_refused() {
    let (app, _r) = redis_app(vec![room("r", 1)]).await;
    for path in ["/api/rooms/r/join", "/api/rooms/r/release"] {
        let res = app
            .client
            .post(app.url(path))
            .header(
                "authorization",
                reqwest::header::HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap(),
            )
            .send()
            .await
            .unwrap();
        let r = crate::helpers::Reply::from(res).await;
        assert_eq!((r.status, r.error_code()), (401, "invalid_token"), "{path}");
    }
    assert_eq!(app.engine.admin_store().stats("r").await.unwrap().active, 0);
}

#[tokio::test]
async fn stock_beyond_the_exact_range_and_wildcard_embed_origins_are_refused() {
    use crate::helpers::admin::{admin, admin_app};
    use reqwest::Method;
    use serde_json::json;
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    for body in [json!({"set": 1u64 << 60}), json!({"add": u64::MAX})] {
        let r = admin(&app, Method::POST, "/api/admin/rooms/r/stock", Some(body)).await;
        assert_eq!(
            (r.status, r.body["error"]["field"].as_str()),
            (400, Some("stock"))
        );
    }
    // A top-up that would pass the bound stops at it, exactly.
    let max = anteroom::store::MAX_STOCK;
    let r = admin(
        &app,
        Method::POST,
        "/api/admin/rooms/r/stock",
        Some(json!({"set": max - 1})),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = admin(
        &app,
        Method::POST,
        "/api/admin/rooms/r/stock",
        Some(json!({"add": 5})),
    )
    .await;
    assert_eq!(r.body["new"], json!(max));
    let cfg = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(cfg.body["config"]["stock"], json!(max));

    let wild = json!({"embed_origins": ["http://*.a.example"]});
    let r = admin(&app, Method::PUT, "/api/admin/rooms/r", Some(wild)).await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("embed_origins"))
    );
}

/// Sends a join whose headers promise a body that never comes; returns the status line.
async fn join_without_its_body(port: u16) -> String {
    use tokio::io::AsyncReadExt;
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    s.write_all(
        format!(
            "POST /api/rooms/r/join HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut buf = vec![0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(15), s.read(&mut buf))
        .await
        .expect("an answer without waiting for the body")
        .unwrap();
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn a_join_is_limited_before_its_body_is_read_and_a_slow_body_times_out() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &prefix(), vec![room("r", 1)]);
    s.rate_limit.ip_per_second = 1;
    s.rate_limit.ip_burst = 1;
    let limited = spawn_app(s).await;
    assert_eq!(limited.join("r").await.status, 200); // the one allowed request
                                                     // Over the limit: refused at once, without waiting for the body.
    let t = Instant::now();
    assert!(join_without_its_body(limited.port).await.contains("429"));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // Within the limit: the body never completes, so its deadline answers.
    let open = spawn_app(test_settings(Some(r.url()), &prefix(), vec![room("r", 1)])).await;
    let t = Instant::now();
    assert!(join_without_its_body(open.port).await.contains("408"));
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn metrics_can_require_a_bearer_token() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &prefix(), vec![room("secret-room", 1)]);
    s.metrics_token = Some(anteroom::room::Secret::new(
        "metrics-token-0123456789abcdef",
    ));
    let app = spawn_app(s).await;
    let anonymous = app.get("/metrics").await;
    assert_eq!(
        (anonymous.status, anonymous.error_code()),
        (401, "invalid_token")
    );
    let wrong = app
        .client
        .get(app.url("/metrics"))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let ok = app
        .client
        .get(app.url("/metrics"))
        .bearer_auth("metrics-token-0123456789abcdef")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok.text().await.unwrap().contains("secret-room"));
}

/// A script minting identities from one address stops at `max_places_per_ip` (`429
/// too_many_places`, with `Retry-After`), counted in the store so every instance agrees;
/// IPv6 counts per /64; another network is not affected; the page says what happened.
#[tokio::test]
async fn minting_identities_from_one_network_stops_at_max_places_per_ip() {
    let r = RedisServer::start();
    let mut settings = test_settings(
        Some(r.url()),
        &crate::helpers::prefix(),
        vec![anteroom::room::RoomConfig {
            max_places_per_ip: 2,
            ..room("drop", 1)
        }],
    );
    settings.trust_forwarded_for = true;
    let a = spawn_app(settings.clone()).await;
    let b = spawn_app(settings).await;
    let join = |app: &TestApp, ip: &str| {
        let req = reqwest::Client::new()
            .post(app.url("/api/rooms/drop/join"))
            .header("X-Forwarded-For", ip);
        async move { Reply::from(req.send().await.unwrap()).await }
    };
    assert_eq!(join(&a, "198.51.100.7").await.status, 200);
    assert_eq!(join(&b, "198.51.100.7").await.status, 200);
    // The third fresh identity from that address, on either instance: refused.
    for app in [&a, &b] {
        let r = join(app, "198.51.100.7").await;
        assert_eq!(r.status, 429);
        assert_eq!(r.body["error"]["code"], "too_many_places");
        assert_eq!(r.headers["retry-after"], "30");
    }
    // IPv6: two hosts in one /64 are one network; another /64 is another.
    assert_eq!(join(&a, "2001:db8:7:1::1").await.status, 200);
    assert_eq!(join(&a, "2001:db8:7:1::2").await.status, 200);
    assert_eq!(join(&b, "2001:db8:7:1:dead:beef::9").await.status, 429);
    assert_eq!(join(&b, "2001:db8:7:2::1").await.status, 200);
    assert_eq!(
        a.engine
            .admin_store()
            .stats("drop")
            .await
            .unwrap()
            .queue_length,
        4,
        "refused joins took no place"
    );
    // The queue page explains it.
    let page = reqwest::Client::new()
        .get(a.url("/r/drop"))
        .header("X-Forwarded-For", "198.51.100.7")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 429);
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("Your network already has its places in this line"));
}
