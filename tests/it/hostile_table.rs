//! The hostile-input table in RELIABILITY.md, from a real run: every input below is sent
//! to a real server (admin on, a real Redis), its answer is compared with what it must
//! be, and the table is written to `target/hostile-inputs.md` (copy it into
//! RELIABILITY.md after a change). The test fails on the first row that differs.

use std::fmt::Write as _;
use std::time::Duration;

use anteroom::domain::pass::{Claims, PassKeys};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use futures_util::{SinkExt, StreamExt};
use reqwest::{Method, RequestBuilder};
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::admin::{admin_settings, TOKEN};
use crate::helpers::{prefix, room, spawn_app, RedisServer, Reply, TestApp, SIGNING_KEY};

struct Table {
    rows: Vec<(String, String, String, String)>,
    failures: Vec<String>,
}

impl Table {
    fn record(&mut self, area: &str, input: &str, expected: &str, observed: &str) {
        if expected != observed {
            self.failures.push(format!(
                "{area} / {input}: expected {expected}, got {observed}"
            ));
        }
        self.rows
            .push((area.into(), input.into(), expected.into(), observed.into()));
    }

    /// Sends `req` and records `status code` against `expected`.
    async fn http(&mut self, area: &str, input: &str, expected: &str, req: RequestBuilder) {
        let observed = match req.send().await {
            Ok(res) => {
                let r = Reply::from(res).await;
                let code = r.error_code().to_string();
                if code.is_empty() {
                    r.status.to_string()
                } else {
                    format!("{} {code}", r.status)
                }
            }
            Err(e) => format!("no answer ({e})"),
        };
        self.record(area, input, expected, &observed);
    }
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

/// The close code (or what else happened) after sending `frame` on a fresh socket.
async fn ws_close(app: &TestApp, token: &str, frame: Message) -> String {
    let Ok(mut ws) = crate::helpers::ws::connect(app, "r", token, None).await else {
        return "no upgrade".into();
    };
    let _ = ws.send(frame).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(Message::Close(Some(f))))) => return format!("close {}", u16::from(f.code)),
            Ok(Some(Ok(_))) => continue,
            Ok(other) => return format!("{other:?}"),
            Err(_) => return "still open".into(),
        }
    }
}

#[tokio::test]
async fn hostile_inputs_get_the_answers_in_the_reliability_table() {
    let redis = RedisServer::start();
    let mut s = admin_settings(&redis, &prefix(), vec![room("r", 1), room("other", 5)]);
    s.rate_limit.visitor_requests = 0;
    let app = spawn_app(s).await;
    let c = app.client.clone();
    let url = |p: &str| app.url(p);
    let mut t = Table {
        rows: Vec::new(),
        failures: Vec::new(),
    };

    // A real visitor holding the one slot, and a queued one.
    let holder = app.join("r").await;
    let token = holder.token();
    let pass = holder.body["pass"].as_str().unwrap().to_string();
    let queued = app.join("r").await.token();
    let (id, tag) = token.split_once('.').unwrap();
    let keys = PassKeys::from_base64(SIGNING_KEY).unwrap();
    let claims: Claims = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(pass.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();

    // Visitor tokens.
    let a = "visitor token";
    let flipped = format!("{:032x}.{tag}", u128::from_str_radix(id, 16).unwrap() ^ 1);
    t.http(
        a,
        "id changed, tag kept",
        "401 invalid_token",
        c.get(url("/api/rooms/r/status")).bearer_auth(&flipped),
    )
    .await;
    t.http(
        a,
        "tag truncated",
        "401 invalid_token",
        c.get(url("/api/rooms/r/status"))
            .bearer_auth(&token[..token.len() - 4]),
    )
    .await;
    t.http(
        a,
        "no dot",
        "401 invalid_token",
        c.get(url("/api/rooms/r/status")).bearer_auth(id),
    )
    .await;
    t.http(
        a,
        "8 KiB of junk",
        "401 invalid_token",
        c.get(url("/api/rooms/r/status"))
            .bearer_auth("x".repeat(8192)),
    )
    .await;
    t.http(
        a,
        "forged token on join",
        "401 invalid_token",
        c.post(url("/api/rooms/r/join")).bearer_auth(&flipped),
    )
    .await;
    t.http(
        a,
        "forged token in the join body",
        "401 invalid_token",
        c.post(url("/api/rooms/r/join"))
            .body(format!(r#"{{"visitor_token":"{flipped}"}}"#)),
    )
    .await;
    t.http(
        a,
        "forged token on release",
        "401 invalid_token",
        c.post(url("/api/rooms/r/release")).bearer_auth(&flipped),
    )
    .await;
    t.http(
        a,
        "Authorization not valid text",
        "401 invalid_token",
        c.get(url("/api/rooms/r/status")).header(
            "authorization",
            reqwest::header::HeaderValue::from_bytes(b"Bearer \xff").unwrap(),
        ),
    )
    .await;
    t.http(
        a,
        "no identity on status",
        "401 no_visitor",
        c.get(url("/api/rooms/r/status")),
    )
    .await;
    t.http(
        a,
        "forged cookie on status",
        "401 no_visitor",
        c.get(url("/api/rooms/r/status"))
            .header("cookie", format!("anteroom_vid={flipped}")),
    )
    .await;

    // Passes.
    let a = "pass";
    let expired = keys.sign(&Claims {
        iat: now() - 120,
        exp: now() - 60,
        ..claims.clone()
    });
    let mut tampered = pass.clone().into_bytes();
    let i = pass.rfind('.').unwrap() + 5;
    tampered[i] = if tampered[i] == b'x' { b'y' } else { b'x' };
    let tampered = String::from_utf8(tampered).unwrap();
    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        pass.split('.').nth(1).unwrap()
    );
    let hs256 = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(b"guess"),
    )
    .unwrap();
    let (foreign, _) = PassKeys::generate();
    let unknown_serial = keys.sign(&Claims {
        jti: "r.999999".into(),
        ..claims.clone()
    });
    let longer = keys.sign(&Claims {
        exp: now() + 86_400,
        ..claims.clone()
    });
    for (input, p, want) in [
        ("expired", expired.as_str(), "401 expired_pass"),
        (
            "signature byte changed",
            tampered.as_str(),
            "401 invalid_pass",
        ),
        ("alg: none", none.as_str(), "401 invalid_pass"),
        (
            "HS256 with a guessed key",
            hs256.as_str(),
            "401 invalid_pass",
        ),
        (
            "signed by another key",
            &foreign.sign(&claims),
            "401 invalid_pass",
        ),
        (
            "valid signature, admission that never was",
            unknown_serial.as_str(),
            "401 invalid_pass",
        ),
        (
            "control: expiry pushed out a day, re-signed with the server's key (which an attacker lacks)",
            longer.as_str(),
            "200",
        ),
        ("not a JWT", "a.b.c", "401 invalid_pass"),
    ] {
        t.http(
            a,
            &format!("verify: {input}"),
            want,
            c.get(url("/api/rooms/r/verify")).bearer_auth(p),
        )
        .await;
    }
    t.http(
        a,
        "verify: another room's pass",
        "401 invalid_pass",
        c.get(url("/api/rooms/other/verify")).bearer_auth(&pass),
    )
    .await;
    t.http(
        a,
        "verify: none presented",
        "401 invalid_pass",
        c.get(url("/api/rooms/r/verify")),
    )
    .await;
    t.http(
        a,
        "release: signed by another key",
        "401 invalid_pass",
        c.post(url("/api/rooms/r/release"))
            .bearer_auth(foreign.sign(&claims)),
    )
    .await;

    // Bodies and rooms.
    let a = "request";
    t.http(
        a,
        "join body not JSON",
        "400 malformed_json",
        c.post(url("/api/rooms/r/join")).body("{nope"),
    )
    .await;
    t.http(
        a,
        "join body with an unknown field",
        "400 malformed_json",
        c.post(url("/api/rooms/r/join"))
            .body(r#"{"admit_me":true}"#),
    )
    .await;
    t.http(
        a,
        "join body a JSON array",
        "400 malformed_json",
        c.post(url("/api/rooms/r/join")).body("[1,2]"),
    )
    .await;
    t.http(
        a,
        "join body of 5,000 bytes",
        "400 body_too_large",
        c.post(url("/api/rooms/r/join")).body("x".repeat(5000)),
    )
    .await;
    t.http(
        a,
        "unknown room",
        "404 unknown_room",
        c.post(url("/api/rooms/nope/join")),
    )
    .await;
    t.http(
        a,
        "room id with a brace",
        "404 unknown_room",
        c.post(url("/api/rooms/%7Bx%7D/join")),
    )
    .await;
    t.http(
        a,
        "room id of 65 characters",
        "404 unknown_room",
        c.post(url(&format!("/api/rooms/{}/join", "a".repeat(65)))),
    )
    .await;
    t.http(
        a,
        "room id ../admin",
        "404 unknown_room",
        c.post(url("/api/rooms/..%2Fadmin/join")),
    )
    .await;
    t.http(
        a,
        "admin stock 2^60",
        "400 invalid_field",
        c.post(url("/api/admin/rooms/r/stock"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"set": 1u64 << 60})),
    )
    .await;
    t.http(
        a,
        "admin embed origin with a wildcard",
        "400 invalid_field",
        c.put(url("/api/admin/rooms/r"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"embed_origins": ["http://*.a.example"]})),
    )
    .await;
    t.http(
        a,
        "admin capacity 0",
        "400 invalid_field",
        c.put(url("/api/admin/rooms/r"))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({"capacity": 0})),
    )
    .await;

    // Open redirects through ?return= (the page sends an admitted visitor to the
    // target's origin only; a refused return falls back to the target itself).
    let a = "return";
    for ret in [
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
        "javascript:alert(1)",
        "/%2F%2Fevil.example",
        "http:evil.example",
    ] {
        let res = c
            .get(url(&format!("/r/r?return={}", urlencode(ret))))
            .header("cookie", format!("anteroom_vid={token}"))
            .send()
            .await
            .unwrap();
        let loc = res
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .unwrap_or("")
            .to_string();
        let stays = loc.starts_with("https://origin.example/");
        t.record(
            a,
            &format!("?return={ret}"),
            "303 to the target's origin",
            &format!(
                "{} {}",
                res.status().as_u16(),
                if stays {
                    "to the target's origin"
                } else {
                    loc.as_str()
                }
            ),
        );
    }

    // Forwarded headers and origins.
    let a = "origin";
    t.http(
        a,
        "admin API, right token, Origin evil",
        "403 forbidden",
        c.get(url("/api/admin/rooms"))
            .bearer_auth(TOKEN)
            .header("origin", "http://evil.example"),
    )
    .await;
    t.http(
        a,
        "admin API, Origin evil + X-Forwarded-Host evil",
        "403 forbidden",
        c.get(url("/api/admin/rooms"))
            .bearer_auth(TOKEN)
            .header("origin", "http://evil.example")
            .header("x-forwarded-host", "evil.example"),
    )
    .await;
    t.http(
        a,
        "admin API, Origin evil + Forwarded host=evil",
        "403 forbidden",
        c.get(url("/api/admin/rooms"))
            .bearer_auth(TOKEN)
            .header("origin", "http://evil.example")
            .header("forwarded", "host=evil.example"),
    )
    .await;
    for (input, extra) in [
        ("WebSocket, Origin evil", None),
        (
            "WebSocket, Origin evil + X-Forwarded-Host evil",
            Some(("x-forwarded-host", "evil.example")),
        ),
    ] {
        let mut req =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                format!("ws://127.0.0.1:{}/r/r/ws?token={queued}", app.port),
            )
            .unwrap();
        req.headers_mut()
            .insert("origin", "http://evil.example".parse().unwrap());
        if let Some((k, v)) = extra {
            req.headers_mut().insert(k, v.parse().unwrap());
        }
        let observed = match tokio_tungstenite::connect_async(req).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(r)) => r.status().as_u16().to_string(),
            Ok(_) => "upgraded".into(),
            Err(e) => e.to_string(),
        };
        t.record(a, input, "403", &observed);
    }

    // WebSocket frames (each on a fresh socket of the queued visitor).
    let a = "websocket";
    for (input, frame, want) in [
        (
            "text of 5,000 bytes",
            Message::text("x".repeat(5000)),
            "close 1009",
        ),
        ("binary frame", Message::binary(vec![1, 2, 3]), "close 1003"),
        (
            "text that is not JSON",
            Message::text("hello"),
            "close 1007",
        ),
        (
            "unknown message type",
            Message::text(r#"{"type":"admit_me"}"#),
            "close 1008",
        ),
        (
            "JSON without a type",
            Message::text(r#"{"x":1}"#),
            "close 1007",
        ),
    ] {
        let observed = ws_close(&app, &queued, frame).await;
        t.record(a, input, want, &observed);
    }
    let observed = match crate::helpers::ws::connect(&app, "r", &flipped, None).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => r.status().as_u16().to_string(),
        other => format!("{:?}", other.map(|_| ())),
    };
    t.record(a, "upgrade with a forged token", "401", &observed);
    let flood = async {
        let mut ws = crate::helpers::ws::connect(&app, "r", &queued, None)
            .await
            .unwrap();
        for _ in 0..500 {
            if ws.send(Message::Ping(vec![0].into())).await.is_err() {
                break;
            }
        }
        format!(
            "close {}",
            u16::from(crate::helpers::ws::close_code(&mut ws).await)
        )
    }
    .await;
    t.record(a, "500 pings at once", "close 1008", &flood);

    // Admin credentials.
    let a = "admin";
    t.http(
        a,
        "no credential",
        "401 no_credential",
        c.get(url("/api/admin/rooms")),
    )
    .await;
    t.http(
        a,
        "forged session cookie",
        "401 no_credential",
        c.get(url("/api/admin/rooms")).header(
            "cookie",
            format!(
                "anteroom_admin={}.00112233445566778899aabbccddeeff.token.AAAA",
                now() + 3600
            ),
        ),
    )
    .await;
    t.http(
        a,
        "a visitor token as admin token",
        "401 invalid_token",
        c.get(url("/api/admin/rooms")).bearer_auth(&token),
    )
    .await;
    for i in 2..=app.engine.settings().admin.failed_auth_per_minute {
        let _ = c
            .get(url("/api/admin/rooms"))
            .bearer_auth(format!("guess-{i}"))
            .send()
            .await;
    }
    t.http(
        a,
        "one more wrong guess after 10 in a minute",
        "429 rate_limited",
        c.get(url("/api/admin/rooms")).bearer_auth("guess-11"),
    )
    .await;
    t.http(
        a,
        "the right token while blocked",
        "429 rate_limited",
        c.request(Method::GET, url("/api/admin/rooms"))
            .bearer_auth(TOKEN),
    )
    .await;

    // Nothing above changed the room.
    let stats = app.engine.admin_store().stats("r").await.unwrap();
    t.record(
        "outcome",
        "room r after every row",
        "1 admitted, 1 queued",
        &format!("{} admitted, {} queued", stats.active, stats.queue_length),
    );

    let mut md = String::from("| area | input | must get | got |\n|---|---|---|---|\n");
    for (area, input, expected, observed) in &t.rows {
        let esc = |s: &str| s.replace('|', "\\|");
        let _ = writeln!(
            md,
            "| {area} | {} | {} | {} |",
            esc(input),
            esc(expected),
            esc(observed)
        );
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hostile-inputs.md"), &md).unwrap();
    assert!(t.failures.is_empty(), "{:#?}", t.failures);
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
