//! The visitor JSON API through a real HTTP server on a real Redis.

use crate::helpers::{room, spawn_app, test_settings, RedisServer, TestApp, SIGNING_KEY};
use anteroom::domain::pass::{Claims, PassKeys, ISSUER};
use anteroom::room::RoomConfig;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

async fn app_with(rooms: Vec<RoomConfig>) -> (TestApp, RedisServer) {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        rooms,
    ))
    .await;
    (app, redis)
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

#[tokio::test]
async fn a_queued_visitor_is_admitted_when_the_holder_releases() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    let a = app.join("r").await;
    assert_eq!((a.status, a.state()), (200, "admitted"));
    let pass = a.body["pass"].as_str().unwrap();
    assert!(a.body["redirect_url"]
        .as_str()
        .unwrap()
        .starts_with("https://origin.example/in?anteroom_pass=ey"));
    let cookies: Vec<_> = a.headers.get_all("set-cookie").iter().collect();
    let vid = cookies
        .iter()
        .find(|c| c.to_str().unwrap().starts_with("anteroom_vid="))
        .expect("visitor cookie")
        .to_str()
        .unwrap();
    assert!(
        vid.contains("HttpOnly") && vid.contains("SameSite=Lax"),
        "{vid}"
    );
    assert!(cookies
        .iter()
        .any(|c| c.to_str().unwrap().starts_with("anteroom_pass_r=")));

    let b = app.join("r").await;
    assert_eq!(
        (b.state(), b.body["position"].as_u64()),
        ("queued", Some(1))
    );
    assert!(b.body.get("pass").is_none());
    for key in [
        "queue_length",
        "active",
        "capacity",
        "eta_seconds",
        "eta_low_seconds",
        "eta_high_seconds",
    ] {
        assert!(b.body[key].is_u64(), "{key} missing: {}", b.body);
    }
    assert!(b.body["eta_seconds"].as_u64().unwrap() > 0);
    let b_token = b.token();
    assert_eq!(app.status("r", &b_token).await.state(), "queued");

    assert_eq!(app.verify("r", pass).await.status, 200);
    assert_eq!(app.release("r", &a.token()).await.status, 204);
    assert_eq!(
        app.verify("r", pass).await.status,
        401,
        "a released pass fails at once"
    );

    let b_now = app.status("r", &b_token).await;
    assert_eq!(b_now.state(), "admitted");
    let v = app.verify("r", b_now.body["pass"].as_str().unwrap()).await;
    assert_eq!(v.status, 200);
    assert_eq!(v.body["sub"], b_token.split('.').next().unwrap());
    assert_eq!(v.body["room"], "r");
}

#[tokio::test]
async fn a_repeated_join_returns_the_same_place_and_the_same_pass() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    let a = app.join("r").await;
    let again = app.join_as("r", &a.token()).await;
    assert_eq!(again.body["pass"], a.body["pass"]);
    let b = app.join("r").await;
    let b_again = app.join_as("r", &b.token()).await;
    assert_eq!(b_again.body["position"], 1);
    assert_eq!(b_again.body["queue_length"], 1);
}

#[tokio::test]
async fn the_visitor_cookie_identifies_the_visitor() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    app.join("r").await;
    let b = app.join("r").await;
    let r = app
        .client
        .get(app.url("/api/rooms/r/status"))
        .header("cookie", format!("anteroom_vid={}", b.token()))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["position"], 1);
}

#[tokio::test]
async fn verify_rejects_expired_tampered_foreign_and_alg_none_passes() {
    let (app, _r) = app_with(vec![room("r", 5), room("other", 5)]).await;
    let a = app.join("r").await;
    let pass = a.body["pass"].as_str().unwrap().to_string();
    let keys = PassKeys::from_base64(SIGNING_KEY).unwrap();
    let claims: Claims = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(pass.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();

    let expired = keys.sign(&Claims {
        iat: now() - 120,
        exp: now() - 60,
        ..claims.clone()
    });
    let r = app.verify("r", &expired).await;
    assert_eq!((r.status, r.error_code()), (401, "expired_pass"));

    let mut tampered = pass.clone().into_bytes();
    let i = pass.rfind('.').unwrap() + 5;
    tampered[i] = if tampered[i] == b'x' { b'y' } else { b'x' };
    let r = app.verify("r", &String::from_utf8(tampered).unwrap()).await;
    assert_eq!((r.status, r.error_code()), (401, "invalid_pass"));

    let r = app.verify("other", &pass).await;
    assert_eq!(
        (
            r.status,
            r.error_code(),
            r.body["error"]["message"].as_str()
        ),
        (401, "invalid_pass", Some("the pass is for another room")),
        "a pass is valid for its own room only (the room check, not the session lookup)"
    );

    let (foreign, _) = PassKeys::generate();
    let r = app.verify("r", &foreign.sign(&claims)).await;
    assert_eq!(r.status, 401, "a pass minted with another key");

    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        pass.split('.').nth(1).unwrap()
    );
    assert_eq!(app.verify("r", &none).await.status, 401);

    let forged_serial = keys.sign(&Claims {
        jti: "r.999".into(),
        ..claims.clone()
    });
    assert_eq!(
        app.verify("r", &forged_serial).await.status,
        401,
        "a correctly signed pass for an admission that does not exist"
    );

    let r = app.get("/api/rooms/r/verify").await;
    assert_eq!((r.status, r.error_code()), (401, "invalid_pass"));

    let by_cookie = app
        .client
        .get(app.url("/api/rooms/r/verify"))
        .header("cookie", format!("anteroom_pass_r={pass}"))
        .send()
        .await
        .unwrap();
    assert_eq!(by_cookie.status(), 200);
    assert_eq!(claims.iss, ISSUER);
}

#[tokio::test]
async fn passes_verify_offline_with_the_published_jwks() {
    let (app, _r) = app_with(vec![room("r", 5)]).await;
    let pass = app.join("r").await.body["pass"]
        .as_str()
        .unwrap()
        .to_string();
    let jwks = app.get("/.well-known/jwks.json").await.body;
    let key = &jwks["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["alg"].as_str()),
        (Some("OKP"), Some("EdDSA"))
    );
    let decoding =
        jsonwebtoken::DecodingKey::from_ed_components(key["x"].as_str().unwrap()).unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::EdDSA);
    v.set_issuer(&[ISSUER]);
    let data = jsonwebtoken::decode::<Claims>(&pass, &decoding, &v).unwrap();
    assert_eq!(data.claims.room, "r");
    assert!(data.claims.exp > now() + 50 && data.claims.exp <= now() + 61);
}

#[tokio::test]
async fn forged_and_missing_identities_are_rejected() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    let real = app.join("r").await.token();
    let (id, tag) = real.split_once('.').unwrap();
    let other_id = format!("{:032x}", u128::from_str_radix(id, 16).unwrap() ^ 1);
    let forged = format!("{other_id}.{tag}");

    let r = app.status("r", &forged).await;
    assert_eq!((r.status, r.error_code()), (401, "invalid_token"));
    let r = app.join_as("r", &forged).await;
    assert_eq!((r.status, r.error_code()), (401, "invalid_token"));
    let r = app.release("r", &forged).await;
    assert_eq!(r.status, 401);

    let r = app.get("/api/rooms/r/status").await;
    assert_eq!((r.status, r.error_code()), (401, "no_visitor"));

    // A forged cookie is never trusted: the join starts a fresh identity instead.
    let r = app
        .client
        .post(app.url("/api/rooms/r/join"))
        .header("cookie", format!("anteroom_vid={forged}"))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(!body["visitor_token"]
        .as_str()
        .unwrap()
        .starts_with(&other_id));
    assert_eq!(body["state"], "queued");
}

#[tokio::test]
async fn malformed_input_gets_a_clear_400_and_changes_nothing() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    for body in [
        "{not json",
        "[1,2]",
        r#"{"visitor_token": 5}"#,
        r#"{"surprise": true}"#,
    ] {
        let r = crate::helpers::Reply::from(
            app.client
                .post(app.url("/api/rooms/r/join"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (r.status, r.error_code()),
            (400, "malformed_json"),
            "{body}"
        );
        assert!(r.body["error"]["message"].as_str().unwrap().len() > 10);
    }
    let stats = app.engine.admin_store().stats("r").await.unwrap();
    assert_eq!(
        (stats.active, stats.queue_length),
        (0, 0),
        "nothing was joined"
    );
    // A valid body token works.
    let a = app.join("r").await;
    let r = crate::helpers::Reply::from(
        app.client
            .post(app.url("/api/rooms/r/join"))
            .json(&serde_json::json!({"visitor_token": a.token()}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.body["pass"], a.body["pass"]);
}

#[tokio::test]
async fn unknown_rooms_answer_404_everywhere() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    let token = app.join("r").await.token();
    for r in [
        app.join("nope").await,
        app.status("nope", &token).await,
        app.release("nope", &token).await,
        app.join("bad%20id").await,
        app.join("%7Bx%7D").await,
    ] {
        assert_eq!(
            (r.status, r.error_code()),
            (404, "unknown_room"),
            "{}",
            r.body
        );
    }
}

#[tokio::test]
async fn the_per_visitor_window_answers_429_with_retry_after() {
    let redis = RedisServer::start();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    );
    s.rate_limit.visitor_requests = 3;
    s.rate_limit.visitor_window_secs = 60;
    let app = spawn_app(s).await;
    let token = app.join("r").await.token(); // 1
    assert_eq!(app.status("r", &token).await.status, 200); // 2
    assert_eq!(app.status("r", &token).await.status, 200); // 3
    let r = app.status("r", &token).await;
    assert_eq!((r.status, r.error_code()), (429, "rate_limited"));
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // Another visitor is unaffected.
    let other = app.join("r").await;
    assert_eq!(other.status, 200);
    let metrics = app.get("/metrics").await.body;
    assert!(metrics
        .as_str()
        .unwrap()
        .contains("anteroom_rate_limited_total{limiter=\"visitor_status\"} 1"));
}

#[tokio::test]
async fn the_per_ip_limiter_stops_join_floods() {
    let redis = RedisServer::start();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 100)],
    );
    s.rate_limit.ip_per_second = 1;
    s.rate_limit.ip_burst = 3;
    let app = spawn_app(s).await;
    let mut codes = Vec::new();
    for _ in 0..5 {
        codes.push(app.join("r").await.status);
    }
    assert_eq!(&codes[..3], &[200, 200, 200]);
    assert!(codes[3..].contains(&429), "{codes:?}");
    let r = app.join("r").await;
    assert_eq!(r.status, 429);
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(r.error_code(), "rate_limited");
}

#[tokio::test]
async fn release_accepts_the_pass_itself() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    let a = app.join("r").await;
    let b = app.join("r").await;
    let pass = a.body["pass"].as_str().unwrap();
    assert_eq!(app.release("r", pass).await.status, 204);
    assert_eq!(app.status("r", &b.token()).await.state(), "admitted");
}

#[tokio::test]
async fn health_readiness_and_metrics_report() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    app.join("r").await;
    app.join("r").await;
    assert_eq!(app.get("/healthz").await.status, 200);
    let ready = app.get("/readyz").await;
    assert_eq!(
        (ready.status, ready.body["status"].as_str()),
        (200, Some("ready"))
    );
    let m = app.get("/metrics").await.body;
    let m = m.as_str().unwrap();
    for line in [
        "anteroom_queue_length{room=\"r\"} 1",
        "anteroom_active{room=\"r\"} 1",
        "anteroom_capacity{room=\"r\"} 1",
        "anteroom_admissions_total{room=\"r\"} 1",
        "anteroom_reaped_total{kind=\"abandoned\",room=\"r\"} 0",
    ] {
        assert!(m.contains(line), "missing {line} in\n{m}");
    }
}

#[tokio::test]
async fn the_demo_origin_checks_the_pass() {
    let redis = RedisServer::start();
    let mut s = test_settings(Some(redis.url()), &crate::helpers::prefix(), vec![]);
    s.demo = true;
    s.apply_defaults();
    let app = spawn_app(s).await;
    let a = app.join("demo").await;
    assert_eq!(a.state(), "admitted");
    let redirect = a.body["redirect_url"].as_str().unwrap();
    assert!(redirect.starts_with(&format!("{}/demo/origin?anteroom_pass=", app.address)));
    let page = app
        .client
        .get(redirect)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("You're in"), "{page}");
    let page = app.get("/demo/origin").await.body;
    assert!(page.as_str().unwrap().contains("No valid pass"));
}

#[tokio::test]
async fn every_static_asset_is_served_from_the_binary() {
    let (app, _r) = app_with(vec![room("r", 1)]).await;
    for (name, ctype) in [
        ("queue.js", "text/javascript"),
        ("embed.js", "text/javascript"),
        ("admin.js", "text/javascript"),
        ("demo.js", "text/javascript"),
        ("anteroom.css", "text/css"),
    ] {
        let r = app
            .client
            .get(app.url(&format!("/static/{name}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{name}");
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(ctype),
            "{name}"
        );
        assert!(r.text().await.unwrap().len() > 100, "{name}");
    }
    assert_eq!(app.get("/static/nope.js").await.status, 404);
    assert_eq!(app.get("/static/..%2FCargo.toml").await.status, 404);
}

/// Each `[[bypass]]` condition on `verify`, with its near miss (which needs a pass as
/// before): the client IP (behind a trusted proxy), the `User-Agent`, the secret header
/// and the original path.
#[tokio::test]
async fn bypass_rules_pass_verify_and_near_misses_do_not() {
    use anteroom::config::BypassRule;
    use anteroom::room::Secret;
    let r = RedisServer::start();
    let mut settings = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    settings.trust_forwarded_for = true;
    let rule = |name: &str| BypassRule {
        name: name.into(),
        ..BypassRule::default()
    };
    settings.bypass = vec![
        BypassRule {
            cidr: Some("203.0.113.0/24".into()),
            ..rule("partner")
        },
        BypassRule {
            user_agent: Some("ExampleBot/".into()),
            ..rule("crawler")
        },
        BypassRule {
            header: Some("X-Anteroom-Bypass".into()),
            value: Some(Secret::new("health-check-secret-42")),
            ..rule("monitor")
        },
        BypassRule {
            path: Some("/static/*".into()),
            ..rule("static")
        },
    ];
    let app = spawn_app(settings).await;
    let verify = |headers: &[(&str, &str)]| {
        let mut req = app.client.get(app.url("/api/rooms/r/verify"));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        async move { crate::helpers::Reply::from(req.send().await.unwrap()).await }
    };
    for (headers, rule) in [
        (vec![("X-Forwarded-For", "203.0.113.9")], "partner"),
        (
            vec![("User-Agent", "Mozilla/5.0 ExampleBot/1.0")],
            "crawler",
        ),
        (
            vec![("X-Anteroom-Bypass", "health-check-secret-42")],
            "monitor",
        ),
        (vec![("X-Original-URI", "/static/app.js?v=2")], "static"),
    ] {
        let res = verify(&headers).await;
        assert_eq!(res.status, 200, "{headers:?}");
        assert_eq!(res.headers["x-anteroom-bypass"], rule);
        assert_eq!(res.body["bypass"], rule);
    }
    for headers in [
        vec![("X-Forwarded-For", "203.0.114.9")],
        vec![("User-Agent", "Mozilla/5.0 examplebot/1.0")],
        vec![("X-Anteroom-Bypass", "health-check-secret-4")],
        vec![("X-Original-URI", "/static/js/app.js")],
        vec![],
    ] {
        let res = verify(&headers).await;
        assert_eq!(res.status, 401, "{headers:?}");
        assert_eq!(res.body["error"]["code"], "invalid_pass");
        assert!(res.headers.get("x-anteroom-bypass").is_none());
    }
    let m = app.get("/metrics").await.body;
    assert!(m
        .as_str()
        .unwrap()
        .contains("anteroom_bypass_total{rule=\"monitor\"} 1"));
}

/// A configuration with a bad bypass rule does not start, and says which rule and why.
#[test]
fn a_bad_bypass_rule_is_refused_at_start() {
    let mut s = test_settings(None, "p", vec![]);
    s.bypass = vec![anteroom::config::BypassRule {
        name: "both".into(),
        cidr: Some("10.0.0.0/8".into()),
        user_agent: Some("bot".into()),
        ..Default::default()
    }];
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains("bypass[0]") && err.contains("exactly one condition"),
        "{err}"
    );
}

/// Issue 29: the trusted proxies and `[[bypass]]` rules the engine uses are the ones
/// start-up's check parsed; start-up does not parse the settings' lists again (lists
/// spoiled after the check do not stop it, where a second parse would fail).
#[tokio::test]
async fn start_up_uses_the_proxies_and_bypass_rules_the_check_parsed() {
    let r = RedisServer::start();
    let mut s = test_settings(Some(r.url()), &crate::helpers::prefix(), vec![room("r", 1)]);
    s.trust_forwarded_for = true;
    s.trusted_proxies = vec!["127.0.0.1".into(), "198.51.100.0/24".into()];
    s.bypass = vec![anteroom::config::BypassRule {
        name: "office".into(),
        cidr: Some("203.0.113.0/24".into()),
        ..Default::default()
    }];
    let prepared = s.check().unwrap();
    s.trusted_proxies = vec!["not an address".into()];
    s.bypass[0].cidr = Some("not a network".into());
    let e = s.validate().unwrap_err().to_string();
    assert!(e.contains("`trusted_proxies[0]`"), "{e}");

    let app = anteroom::startup::Application::build_prepared(s, prepared)
        .await
        .unwrap();
    let port = app.port();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    tokio::spawn(app.run_until_stopped(shutdown));
    // The client behind two proxies (this test at 127.0.0.1, then 198.51.100.7) is found
    // with the parsed proxies, and is in the office network of the parsed rule.
    let res = crate::helpers::client()
        .get(format!("http://127.0.0.1:{port}/api/rooms/r/verify"))
        .header("X-Forwarded-For", "203.0.113.9, 198.51.100.7")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["x-anteroom-bypass"], "office");
}
