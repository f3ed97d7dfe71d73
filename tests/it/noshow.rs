//! No-shows (docs/outflow.md#no-shows), end to end on a real Redis: an admitted visitor
//! whose pass never reaches the origin (through the built-in gateway, or `verify`) within
//! the room's `claim_timeout_secs` loses the admission, is told so, may join again at the
//! back, and the next in line is let in.

use std::time::Duration;

use anteroom::config::{GatewayRoute, Settings};

use anteroom::room::RoomConfig;

use crate::helpers::admin::{admin, admin_app, admin_settings};
use crate::helpers::origin::{Shape, SlowOrigin};
use crate::helpers::ws::{connect, next_json};
use crate::helpers::{
    free_port, prefix, room, spawn_app, test_settings, wait_until, RedisServer, TestApp,
};

const WITHIN: Duration = Duration::from_secs(15);

fn claiming(capacity: u64) -> RoomConfig {
    RoomConfig {
        claim_timeout_secs: 1,
        ..room("r", capacity)
    }
}

/// A server with room `r` behind its gateway on `/shop`, in front of a fast origin.
async fn behind_gateway(redis: &RedisServer, cfg: RoomConfig) -> (TestApp, SlowOrigin, u16) {
    let origin = SlowOrigin::start(Shape {
        base_ms: 1.0,
        knee: 1000.0,
        limit: 10_000,
    })
    .await;
    let gw_port = free_port();
    let mut s = test_settings(Some(redis.url()), &prefix(), vec![cfg]);
    s.rooms[0].target_url = format!("http://127.0.0.1:{gw_port}/");
    s.gateway.listen = Some(format!("127.0.0.1:{gw_port}"));
    s.gateway.upstream = Some(origin.url());
    s.gateway.routes = vec![GatewayRoute {
        host: None,
        path_prefix: "/shop".into(),
        room: "r".into(),
    }];
    (spawn_app(s).await, origin, gw_port)
}

/// The status of the page at the gateway with `pass` (redirects not followed).
async fn shop_page(gw_port: u16, pass: &str) -> u16 {
    let c = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    c.get(format!("http://127.0.0.1:{gw_port}/shop/page"))
        .header("cookie", format!("anteroom_pass_r={pass}"))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn state(app: &TestApp, token: &str) -> String {
    app.status("r", token).await.state().to_string()
}

/// Two let in, one waiting: the one who browses through the gateway is kept past the
/// timeout; the one who never comes is a no-show (status, their pass refused by `verify`
/// and then by the gateway, counted in /metrics), and the one waiting is let in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visitor_who_presents_at_the_gateway_is_kept_and_one_who_does_not_gives_the_slot_back() {
    let redis = RedisServer::start();
    let (app, _origin, gw) = behind_gateway(&redis, claiming(2)).await;
    let (a, b, c) = (
        app.join("r").await,
        app.join("r").await,
        app.join("r").await,
    );
    assert_eq!(
        (a.state(), b.state(), c.state()),
        ("admitted", "admitted", "queued")
    );
    let pass_a = a.body["pass"].as_str().unwrap().to_string();
    let pass_b = b.body["pass"].as_str().unwrap().to_string();
    assert_eq!(shop_page(gw, &pass_a).await, 200);

    let pass_c = wait_until(WITHIN, "the waiting visitor let in", || async {
        let r = app.status("r", &c.token()).await;
        (r.state() == "admitted").then(|| r.body["pass"].as_str().unwrap().to_string())
    })
    .await;
    // Who was let in next comes at once (or would be a no-show in turn).
    assert_eq!(shop_page(gw, &pass_c).await, 200);
    let told = app.status("r", &b.token()).await;
    assert_eq!(told.state(), "no_show", "{:?}", told.body);
    assert_eq!(told.body["message"], "no_show");
    assert_eq!(app.verify("r", &pass_b).await.status, 401);
    wait_until(
        WITHIN,
        "the gateway refusing the no-show's pass",
        || async { (shop_page(gw, &pass_b).await == 302).then_some(()) },
    )
    .await;
    // The visitor who came is still in, and browsing costs no new deadline.
    assert_eq!(state(&app, &a.token()).await, "admitted");
    assert_eq!(shop_page(gw, &pass_a).await, 200);
    let metrics = app.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap_or_default();
    assert!(
        metrics.contains(r#"anteroom_no_shows_total{room="r"} 1"#),
        "{metrics}"
    );
}

/// A site behind nginx or Caddy presents the pass through `verify`: one verify keeps
/// the session past the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_checked_through_verify_is_presented() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &prefix(),
        vec![claiming(2)],
    ))
    .await;
    let (a, b) = (app.join("r").await, app.join("r").await);
    let pass_a = a.body["pass"].as_str().unwrap().to_string();
    assert_eq!(app.verify("r", &pass_a).await.status, 200);
    wait_until(WITHIN, "the other one a no-show", || async {
        (state(&app, &b.token()).await == "no_show").then_some(())
    })
    .await;
    assert_eq!(state(&app, &a.token()).await, "admitted");
    assert_eq!(app.verify("r", &pass_a).await.status, 200);
}

/// A no-show who comes back is told so on the page, in the JSON view and on the socket,
/// and joins again at the back of the line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_returning_no_show_is_told_so_and_rejoins_at_the_back() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(&redis, &prefix(), vec![claiming(1)])).await;
    let gone = app.join("r").await;
    assert_eq!(gone.state(), "admitted");
    let next = app.join("r").await;
    let pass = wait_until(WITHIN, "the next one let in", || async {
        let r = app.status("r", &next.token()).await;
        (r.state() == "admitted").then(|| r.body["pass"].as_str().unwrap().to_string())
    })
    .await;
    // The one let in next comes at once: no second no-show.
    assert_eq!(app.verify("r", &pass).await.status, 200);
    let third = app.join("r").await;
    assert_eq!(third.state(), "queued");

    let told = app.status("r", &gone.token()).await;
    assert_eq!(told.state(), "no_show");
    assert_eq!(told.body["message"], "no_show");
    let page = app.page_as("/r/r", &gone.token()).await;
    assert!(page.contains("id=\"rejoin\""), "a way back in line");
    assert!(!page.contains("id=\"rejoin\" hidden"), "shown to a no-show");
    let mut ws = connect(&app, "r", &gone.token(), None).await.unwrap();
    let first = next_json(&mut ws, Duration::from_secs(5)).await;
    assert_eq!(first["state"], "no_show", "{first}");

    // A join the client makes on its own (the widget's on load) tells rather than queues.
    let auto = app
        .client
        .post(app.url("/api/rooms/r/join"))
        .bearer_auth(gone.token())
        .json(&serde_json::json!({"rejoin": false}))
        .send()
        .await
        .unwrap();
    let auto = crate::helpers::Reply::from(auto).await;
    assert_eq!(auto.state(), "no_show", "{:?}", auto.body);
    let back = app.join_as("r", &gone.token()).await;
    assert_eq!(back.state(), "queued");
    assert_eq!(
        back.body["position"], 2,
        "behind the one who joined meanwhile"
    );
    // The dashboard's room card reads the count from the admin API's room detail.
    let detail = admin(&app, reqwest::Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(detail.body["no_shows"], 1, "{:?}", detail.body);
}

/// Bad claim timeouts stop start-up naming the field; 0 is off.
#[test]
fn a_claim_timeout_of_an_hour_or_more_than_the_ttl_is_refused_and_zero_is_off() {
    let load = |body: &str| -> Result<Settings, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anteroom.toml");
        std::fs::write(
            &path,
            format!("[[rooms]]\nid = \"r\"\ntarget_url = \"https://x.example/\"\n{body}"),
        )
        .unwrap();
        Settings::load(Some(&path)).map_err(|e| e.to_string())
    };
    let err = load("session_ttl_secs = 86400\nclaim_timeout_secs = 3601\n").unwrap_err();
    assert!(
        err.contains("rooms[0].claim_timeout_secs") && err.contains("3600"),
        "{err}"
    );
    let err = load("session_ttl_secs = 60\nclaim_timeout_secs = 90\n").unwrap_err();
    assert!(err.contains("rooms[0].claim_timeout_secs"), "{err}");
    let off = load("claim_timeout_secs = 0\n").unwrap();
    assert_eq!(off.rooms[0].claim_timeout_secs, 0);
}

/// The admin API refuses the same values with `400 invalid_field`.
#[tokio::test]
async fn the_admin_api_refuses_a_bad_claim_timeout_naming_the_field() {
    let (app, _redis) = admin_app(vec![room("r", 1)]).await;
    let r = admin(
        &app,
        reqwest::Method::PUT,
        "/api/admin/rooms/r",
        Some(serde_json::json!({"claim_timeout_secs": 100_000})),
    )
    .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "invalid_field", "{:?}", r.body);
    assert_eq!(
        r.body["error"]["field"], "claim_timeout_secs",
        "{:?}",
        r.body
    );
}
