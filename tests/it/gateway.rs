//! The built-in gateway (docs/gateway.md) in front of a real origin started by the test
//! (`helpers::upstream`), on a real Redis: routing, the queue round trip, pass checks,
//! `503` by `Accept`, streaming, WebSocket, upstream failures, revocation and bypass.

use std::time::Duration;

use anteroom::config::{BypassRule, GatewayRoute, Settings};
use anteroom::domain::pass::Claims;
use anteroom::room::{RoomConfig, Secret};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, StreamBody};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::raw;
use crate::helpers::upstream::Upstream;
use crate::helpers::{
    client, cookie_pair, free_port, prefix, room, spawn_app, test_settings, wait_until,
    RedisServer, TestApp,
};

/// One instance with its gateway in front of `up`, on `redis` under `prefix`.
fn settings(redis: &RedisServer, prefix: &str, upstream: &str, gw_port: u16) -> Settings {
    let gw = format!("http://127.0.0.1:{gw_port}");
    let target = |r: RoomConfig| RoomConfig {
        target_url: format!("{gw}/"),
        ..r
    };
    let mut s = test_settings(
        Some(redis.url()),
        prefix,
        vec![target(room("sale", 1)), target(room("other", 5))],
    );
    let route = |p: &str, room: &str| GatewayRoute {
        host: None,
        path_prefix: p.into(),
        room: room.into(),
    };
    s.gateway.listen = Some(format!("127.0.0.1:{gw_port}"));
    s.gateway.upstream = Some(upstream.into());
    s.gateway.routes = vec![
        route("/checkout", "sale"),
        route("/revoke-me", "sale"),
        route("/vip", "other"),
    ];
    s
}

/// An instance, its gateway's base URL and the origin.
struct Site {
    app: TestApp,
    gw: String,
    up: Upstream,
    redis: RedisServer,
}

async fn site(tweak: impl FnOnce(&mut Settings)) -> Site {
    let redis = RedisServer::start();
    let up = Upstream::start().await;
    let port = free_port();
    let mut s = settings(&redis, &prefix(), &up.url(), port);
    tweak(&mut s);
    let app = spawn_app(s).await;
    assert_eq!(app.gateway_port, Some(port));
    Site {
        app,
        gw: format!("http://127.0.0.1:{port}"),
        up,
        redis,
    }
}

impl Site {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.gw)
    }

    /// GET through the gateway with the room's pass cookie.
    async fn get_with_pass(&self, path: &str, room: &str, pass: &str) -> reqwest::Response {
        client()
            .get(self.url(path))
            .header("cookie", format!("anteroom_pass_{room}={pass}"))
            .send()
            .await
            .unwrap()
    }
}

/// The queue URL the gateway sends a visitor of `room` at `url` to.
fn queue_url(app: &TestApp, room: &str, url: &str) -> String {
    let ret: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    format!("{}/r/{room}?return={ret}", app.address)
}

async fn pass_of(app: &TestApp, room: &str) -> (String, String) {
    let r = app.join(room).await;
    assert_eq!(r.state(), "admitted", "{:?}", r.body);
    (r.body["pass"].as_str().unwrap().to_string(), r.token())
}

#[tokio::test]
async fn unguarded_requests_are_proxied_with_forwarding_headers_and_no_hop_headers() {
    let s = site(|_| {}).await;
    let r = client()
        .get(s.url("/about?x=1"))
        .header("x-anteroom-visitor", "forged")
        .header("x-anteroom-bypass", "forged")
        .header("connection", "keep-alive, x-hop")
        .header("x-hop", "1")
        .header("x-forwarded-for", "6.6.6.6")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        (v["path"].as_str(), v["query"].as_str()),
        (Some("/about"), Some("x=1"))
    );
    let h = &v["headers"];
    let host = s.gw.trim_start_matches("http://");
    assert_eq!(h["host"], host, "the client's Host is kept");
    assert_eq!(
        h["x-forwarded-for"], "127.0.0.1",
        "a client's own entry is replaced"
    );
    assert_eq!(h["x-forwarded-proto"], "http");
    assert_eq!(h["x-forwarded-host"], host);
    assert_eq!(
        h["forwarded"],
        format!("for=127.0.0.1;proto=http;host=\"{host}\"")
    );
    assert!(
        h.get("x-hop").is_none()
            && h.get("x-anteroom-visitor").is_none()
            && h.get("x-anteroom-bypass").is_none(),
        "{h}"
    );
}

#[tokio::test]
async fn a_guarded_get_without_a_pass_is_sent_to_the_queue_with_its_url() {
    let s = site(|_| {}).await;
    for method in [reqwest::Method::GET, reqwest::Method::HEAD] {
        let r = client()
            .request(method, s.url("/checkout/cart?item=5"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 302);
        let want = queue_url(&s.app, "sale", &s.url("/checkout/cart?item=5"));
        assert_eq!(r.headers()["location"], want.as_str());
    }
    // The normalised path is what is guarded.
    let r = client().get(s.url("//%63heckout/x")).send().await.unwrap();
    assert_eq!(r.status(), 302);
}

#[tokio::test]
async fn the_queue_round_trip_sets_the_cookie_strips_the_parameter_and_lets_the_visitor_in() {
    let s = site(|_| {}).await;
    let http = client();
    let r = http
        .get(s.url("/checkout/cart?item=5"))
        .send()
        .await
        .unwrap();
    let queue = r.headers()["location"].to_str().unwrap().to_string();
    // The queue page admits at once (capacity 1) and sends the visitor back with the pass.
    let r = http.get(&queue).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let back = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        back.starts_with(&s.url("/checkout/cart?item=5&anteroom_pass=")),
        "{back}"
    );
    let r = http.get(&back).send().await.unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "/checkout/cart?item=5");
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    for part in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set.contains(part), "{set}");
    }
    let max_age: u64 = set
        .split("Max-Age=")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // The pass's lifetime (60 s; its `exp` rounds up to a whole second).
    assert!((1..=61).contains(&max_age), "{set}");
    let pass = cookie_pair(&r, "anteroom_pass_sale").unwrap();
    let r = http
        .get(s.url("/checkout/cart?item=5"))
        .header("cookie", pass)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["path"], "/checkout/cart");
    assert_eq!(
        v["headers"]["x-anteroom-visitor"].as_str().unwrap().len(),
        32
    );
}

#[tokio::test]
async fn forged_expired_and_other_room_passes_are_sent_to_the_queue() {
    let s = site(|_| {}).await;
    let (good, _) = pass_of(&s.app, "sale").await;
    assert_eq!(
        s.get_with_pass("/checkout/", "sale", &good).await.status(),
        200
    );

    let forged = format!("{}x", &good[..good.len() - 1]);
    let mut claims: Claims = s.app.engine.passes().verify(&good, "sale").unwrap();
    claims.exp = claims.iat.saturating_sub(1);
    let expired = s.app.engine.passes().sign(&claims);
    let (other, _) = pass_of(&s.app, "other").await;
    for (what, pass) in [
        ("forged", &forged),
        ("expired", &expired),
        ("other room's", &other),
    ] {
        let r = s.get_with_pass("/checkout/", "sale", pass).await;
        assert_eq!(r.status(), 302, "{what} pass");
        assert!(r.headers()["location"]
            .to_str()
            .unwrap()
            .contains("/r/sale?return="));
        let cleared = r.headers()["set-cookie"].to_str().unwrap();
        assert!(cleared.starts_with("anteroom_pass_sale=;") && cleared.contains("Max-Age=0"));
    }
    // Handed over in the query, another room's pass is no cookie either.
    let r = client()
        .get(s.url(&format!("/checkout/?anteroom_pass={other}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);
    assert!(r.headers().get("set-cookie").is_none());
    assert!(r.headers()["location"]
        .to_str()
        .unwrap()
        .contains("/r/sale?return="));
}

#[tokio::test]
async fn a_post_without_a_pass_gets_503_as_json_or_html_by_accept() {
    let s = site(|_| {}).await;
    let post = |accept: &'static str| {
        client()
            .post(s.url("/checkout/pay"))
            .header("accept", accept)
            .body("card=1")
            .send()
    };
    let r = post("application/json").await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "10");
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "queue_required");
    assert_eq!(
        v["queue_url"],
        queue_url(&s.app, "sale", &s.url("/checkout/pay"))
    );

    let r = post("text/html,application/xhtml+xml;q=0.9").await.unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = r.text().await.unwrap();
    assert!(
        html.contains("<h1>") && html.contains("/r/sale?return="),
        "{html}"
    );
    // In the visitor's language.
    let r = client()
        .post(s.url("/checkout/pay"))
        .header("accept", "text/html")
        .header("accept-language", "zh-CN,zh;q=0.9,en;q=0.5")
        .body("card=1")
        .send()
        .await
        .unwrap();
    let html = r.text().await.unwrap();
    assert!(
        // The code the language is served under (`zh-CN`), as the queue pages write it.
        html.contains("lang=\"zh-CN\"") && html.contains("此页面设有等候室"),
        "{html}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_mib_bodies_stream_both_ways() {
    let s = site(|_| {}).await;
    const LEN: usize = 8 << 20;
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 % 256) as u8).collect();
    // Chunked upload (no Content-Length) through hyper's own client.
    let chunks: Vec<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>> = data
        .chunks(65536)
        .map(|c| Ok(hyper::body::Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    let body = BodyExt::boxed(StreamBody::new(futures_util::stream::iter(chunks)));
    let hc = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let req = hyper::Request::post(s.url("/upload")).body(body).unwrap();
    let res = hc.request(req).await.unwrap();
    let got: Value =
        serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(got["len"], LEN);
    assert_eq!(got["sha256"], format!("{:x}", Sha256::digest(&data)));

    let r = client()
        .get(s.url(&format!("/download?bytes={LEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.bytes().await.unwrap();
    let want: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
    assert_eq!(body.len(), LEN);
    assert!(body[..] == want[..], "the download arrived altered");
}

#[tokio::test]
async fn a_response_streams_through_before_the_upstream_has_finished() {
    let s = site(|_| {}).await;
    let mut r = client().get(s.url("/gated")).send().await.unwrap();
    // The upstream holds `second` back until the client has `first`: a gateway that
    // buffered the response would deliver nothing.
    let first = tokio::time::timeout(Duration::from_secs(5), r.chunk()).await;
    assert_eq!(
        first.expect("the first chunk streamed").unwrap().unwrap(),
        "first"
    );
    s.up.open_gate();
    let mut rest = Vec::new();
    while let Some(c) = r.chunk().await.unwrap() {
        rest.extend_from_slice(&c);
    }
    assert_eq!(rest, b"second");
}

#[tokio::test]
async fn a_websocket_passes_through_the_gateway() {
    let s = site(|_| {}).await;
    let url = format!("ws{}", s.url("/ws").trim_start_matches("http"));
    let (mut ws, res) = tokio_tungstenite::connect_async(url).await.unwrap();
    assert_eq!(res.status(), 101);
    ws.send(Message::text("hello through the gateway"))
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap();
    assert_eq!(
        m.unwrap().unwrap(),
        Message::text("hello through the gateway")
    );
    let big = Message::binary(vec![7u8; 200_000]);
    ws.send(big.clone()).await.unwrap();
    let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap();
    assert_eq!(m.unwrap().unwrap(), big);
}

#[tokio::test]
async fn an_upstream_that_refuses_gets_a_502_page_and_a_slow_one_a_504() {
    let down =
        site(|s| s.gateway.upstream = Some(format!("http://127.0.0.1:{}", free_port()))).await;
    let r = client()
        .get(down.url("/about"))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 502);
    assert!(r.text().await.unwrap().contains("refused the connection"));
    let r = client().get(down.url("/about")).send().await.unwrap();
    assert_eq!(r.status(), 502);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "upstream_unavailable");

    let slow = site(|s| s.gateway.response_timeout_ms = 300).await;
    let r = client().get(slow.url("/slow")).send().await.unwrap();
    assert_eq!(r.status(), 504);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "upstream_timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_origins_revoke_command_frees_the_slot_and_never_reaches_the_browser() {
    let s = site(|_| {}).await;
    let (pass, _) = pass_of(&s.app, "sale").await;
    let next = s.app.join("sale").await;
    assert_eq!(next.state(), "queued");

    let r = s.get_with_pass("/revoke-me", "sale", &pass).await;
    assert_eq!(r.status(), 200);
    assert!(
        r.headers().get("anteroom-command").is_none(),
        "{:?}",
        r.headers()
    );
    let cleared = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cleared.starts_with("anteroom_pass_sale=;") && cleared.contains("Max-Age=0"));
    assert_eq!(r.text().await.unwrap(), "bye");

    let token = next.token();
    wait_until(
        Duration::from_secs(1),
        "the next visitor admitted",
        || async { (s.app.status("sale", &token).await.state() == "admitted").then_some(()) },
    )
    .await;
    assert_eq!(
        s.get_with_pass("/checkout/", "sale", &pass).await.status(),
        302
    );
    assert_eq!(s.app.verify("sale", &pass).await.status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_without_its_pass_is_refused_by_the_gateway_within_a_second() {
    let s = site(|s| {
        s.admin.enabled = true;
        s.admin.token = Some(Secret::new(crate::helpers::admin::TOKEN));
    })
    .await;
    let refused = |pass: String| {
        let s = &s;
        move || {
            let pass = pass.clone();
            async move {
                let r = s.get_with_pass("/checkout/", "sale", &pass).await;
                (r.status() == 302).then_some(())
            }
        }
    };

    // Released by the visitor token, no pass presented.
    let (pass, token) = pass_of(&s.app, "sale").await;
    assert_eq!(
        s.get_with_pass("/checkout/", "sale", &pass).await.status(),
        200
    );
    assert_eq!(s.app.release("sale", &token).await.status, 204);
    wait_until(
        Duration::from_secs(1),
        "the gateway to refuse a pass released by token",
        refused(pass),
    )
    .await;

    // Removed through the admin API.
    let (pass, token) = pass_of(&s.app, "sale").await;
    assert_eq!(
        s.get_with_pass("/checkout/", "sale", &pass).await.status(),
        200
    );
    let id = token.split('.').next().unwrap();
    let r = crate::helpers::admin::admin(
        &s.app,
        reqwest::Method::DELETE,
        &format!("/api/admin/rooms/sale/visitors/{id}"),
        None,
    )
    .await;
    assert!(r.status < 300, "{} {:?}", r.status, r.body);
    wait_until(
        Duration::from_secs(1),
        "the gateway to refuse a pass removed by the admin",
        refused(pass),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renew_on_activity_keeps_an_active_visitor_in_with_fresh_passes_up_to_the_cap() {
    let s = site(|s| {
        let sale = &mut s.rooms[0];
        sale.session_ttl_secs = 2;
        sale.renew_on_activity = true;
        sale.max_session_secs = 4;
    })
    .await;
    let (first, _) = pass_of(&s.app, "sale").await;
    let claims = |p: &str| s.app.engine.passes().verify(p, "sale").unwrap();
    let c0 = claims(&first);
    // The cap is 4 s after the admission, the first pass's end 2 s after it (both
    // rounded up to a second the same way).
    let cap_exp = c0.exp + 2;
    let mut pass = first.clone();
    let mut renewed = 0;
    // The visitor keeps using the site, a request every 200 ms, taking each fresh pass.
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let refused_at = loop {
        tick.tick().await;
        let r = s.get_with_pass("/checkout/", "sale", &pass).await;
        let now = anteroom::clock::wall_ms() / 1000;
        if r.status() == 302 {
            break now;
        }
        assert_eq!(r.status(), 200);
        if let Some(c) = cookie_pair(&r, "anteroom_pass_sale") {
            let fresh = c.split_once('=').unwrap().1.to_string();
            let cl = claims(&fresh);
            assert_eq!(
                (cl.sub.as_str(), cl.jti.as_str(), cl.iat),
                (c0.sub.as_str(), c0.jti.as_str(), c0.iat)
            );
            assert!(cl.exp > claims(&pass).exp && cl.exp <= cap_exp, "{cl:?}");
            pass = fresh;
            renewed += 1;
        }
        assert!(now <= cap_exp + 1, "still let in past the cap");
    };
    assert!(renewed >= 1, "no fresh pass was handed over");
    assert!(
        refused_at > c0.exp,
        "refused at {refused_at}, the first pass's end was {}",
        c0.exp
    );
    // The first pass still ends where it did; the session ended at the cap.
    assert_eq!(
        s.get_with_pass("/checkout/", "sale", &first).await.status(),
        302
    );
    assert_eq!(s.app.verify("sale", &pass).await.status, 401);
}

#[tokio::test]
async fn a_bypass_rule_passes_the_gateway_and_a_near_miss_does_not() {
    let s = site(|s| {
        s.bypass = vec![
            BypassRule {
                name: "monitor".into(),
                header: Some("X-Monitor".into()),
                value: Some(Secret::new("health-check-secret-42")),
                ..Default::default()
            },
            BypassRule {
                name: "static".into(),
                path: Some("/checkout/static/*".into()),
                ..Default::default()
            },
        ]
    })
    .await;
    let counted = || {
        s.app
            .engine
            .metrics()
            .bypassed
            .with_label_values(&["monitor"])
            .get()
    };
    let get = |path: &str, secret: &'static str| {
        client().get(s.url(path)).header("x-monitor", secret).send()
    };
    let r = get("/checkout/", "health-check-secret-42").await.unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["headers"]["x-anteroom-bypass"], "monitor");
    assert_eq!(counted(), 1);
    assert_eq!(
        get("/checkout/", "health-check-secret-4")
            .await
            .unwrap()
            .status(),
        302
    );
    assert_eq!(counted(), 1);

    assert_eq!(
        get("/checkout/static/app.css", "").await.unwrap().status(),
        200
    );
    // `..%2F` climbs out of /checkout/static/ as nginx reads it: refused, no bypass.
    assert_eq!(
        get("/checkout/static/..%2Fpay", "").await.unwrap().status(),
        400
    );
}

/// Finding 4 of issue 28: a `host` route guards its host however the request spells it
/// (case, one trailing dot, a port); a `Host` that names no host is refused.
#[tokio::test]
async fn a_host_route_guards_its_host_however_it_is_spelled() {
    let s = site(|s| {
        s.gateway.routes.push(GatewayRoute {
            host: Some("tickets.example".into()),
            path_prefix: "/".into(),
            room: "other".into(),
        })
    })
    .await;
    let port = s.app.gateway_port.unwrap();
    let get = |host: String| async move { raw::get(port, "/", Some(&host), &[]).await };

    assert_eq!(get("shop.example".into()).await.status, 200, "another host");
    for host in [
        "tickets.example".to_string(),
        "tickets.example.".into(),
        "TICKETS.example.".into(),
        format!("tickets.example.:{port}"),
        format!("Tickets.Example:{port}"),
    ] {
        let r = get(host.clone()).await;
        assert_eq!(r.status, 302, "{host}: {r:?}");
        assert!(
            r.header("location").unwrap().contains("/r/other?return="),
            "{host}: {r:?}"
        );
    }
    for host in ["tickets..example", "tickets.example..", "tickets.example:x"] {
        let r = get(host.into()).await;
        assert_eq!(r.status, 400, "{host}: {r:?}");
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(v["error"]["code"], "bad_host", "{host}");
    }
}

/// Finding 5 of issue 28: each path form that two readers take differently is refused
/// (`400 bad_path`, never proxied) or guarded as the site routes it (any case, `/shop`
/// under a `/shop/` route); a plain path under a `path` rule still passes.
#[tokio::test]
async fn hostile_paths_are_refused_or_guarded_as_the_site_reads_them() {
    let s = site(|s| {
        s.bypass = vec![BypassRule {
            name: "static".into(),
            path: Some("/checkout/static/*".into()),
            ..Default::default()
        }];
        s.gateway.routes.push(GatewayRoute {
            host: None,
            path_prefix: "/shop/".into(),
            room: "sale".into(),
        });
    })
    .await;
    let port = s.app.gateway_port.unwrap();
    for path in [
        "/checkout/static/x%3F/deeper/pay",
        "/checkout/static/x%23/deeper",
        "/checkout/static/..%2Fpay",
        "/checkout%2fpay",
        "/x/..%5ccheckout/pay",
        "/x/..\\checkout/pay",
        "/a/%2e%2e/checkout",
        "/checkout/static/.%2E/pay",
        "/a/../checkout",
        "/checkout%00",
        "/checkout/%zz",
    ] {
        let r = raw::get(port, path, Some("shop.example"), &[]).await;
        assert_eq!(r.status, 400, "{path}: {r:?}");
        if !path.contains('\\') {
            let v: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(v["error"]["code"], "bad_path", "{path}");
        }
    }
    for path in [
        "/CHECKOUT/pay",
        "/Checkout",
        "/shop",
        "/SHOP/cart",
        "//checkout",
    ] {
        let r = raw::get(port, path, Some("shop.example"), &[]).await;
        assert_eq!(r.status, 302, "{path}: {r:?}");
    }
    let r = raw::get(port, "/checkout/static/app.css", Some("shop.example"), &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["headers"]["x-anteroom-bypass"], "static");
}

/// Finding 7 of issue 28: the redirect that turns `?anteroom_pass=` into a cookie always
/// stays on the site, however many slashes the path starts with.
#[tokio::test]
async fn the_pass_adoption_redirect_never_leaves_the_site() {
    let s = site(|_| {}).await;
    let port = s.app.gateway_port.unwrap();
    let (pass, _) = pass_of(&s.app, "sale").await;
    for (path, want) in [
        ("//evil.example/x", "/evil.example/x"),
        ("///evil.example", "/evil.example"),
        ("//evil.example/x?a=1&", "/evil.example/x?a=1"),
        ("/checkout/cart?item=5&", "/checkout/cart?item=5"),
    ] {
        let sep = if path.contains('?') { "" } else { "?" };
        let target = format!("{path}{sep}anteroom_pass={pass}");
        let r = raw::get(port, &target, Some("shop.example"), &[]).await;
        assert_eq!(r.status, 302, "{target}: {r:?}");
        assert_eq!(r.header("location"), Some(want), "{target}");
        assert!(
            r.header("set-cookie")
                .unwrap()
                .starts_with("anteroom_pass_sale="),
            "{r:?}"
        );
    }
    // A backslash is refused before any pass is looked at.
    let r = raw::get(
        port,
        &format!("/\\evil.example?anteroom_pass={pass}"),
        Some("shop.example"),
        &[],
    )
    .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(r.header("location"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_revoke_endpoint_ends_the_session_on_every_instance_within_a_second() {
    let a = site(|_| {}).await;
    let b_port = free_port();
    let b = spawn_app(settings(
        &a.redis,
        &a.app.engine.settings().key_prefix,
        &a.up.url(),
        b_port,
    ))
    .await;
    let b_gw = format!("http://127.0.0.1:{b_port}");
    let (pass, _) = pass_of(&a.app, "sale").await;
    let next = a.app.join("sale").await;
    let on_b = || {
        client()
            .get(format!("{b_gw}/checkout/"))
            .header("cookie", format!("anteroom_pass_sale={pass}"))
            .send()
    };
    assert_eq!(on_b().await.unwrap().status(), 200);

    let revoke = |token: String| {
        client()
            .post(a.app.url("/api/rooms/sale/revoke"))
            .bearer_auth(token)
            .send()
    };
    let forged = format!("{}x", &pass[..pass.len() - 1]);
    assert_eq!(revoke(forged).await.unwrap().status(), 401);
    let r = revoke(pass.clone()).await.unwrap();
    assert_eq!(r.status(), 204);

    wait_until(
        Duration::from_secs(1),
        "instance B's gateway to refuse the pass",
        || async { (on_b().await.unwrap().status() == 302).then_some(()) },
    )
    .await;
    assert_eq!(b.verify("sale", &pass).await.status, 401);
    let token = next.token();
    wait_until(
        Duration::from_secs(1),
        "the next visitor admitted",
        || async { (b.status("sale", &token).await.state() == "admitted").then_some(()) },
    )
    .await;
}
