//! The nginx `auth_request` recipe (docs/integrations.md), run with real nginx in front of Anteroom.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::{cookie_pair, free_port, room, spawn_app, test_settings, RedisServer};
use anteroom::room::RoomConfig;

/// nginx on a free port with a config written for the test; stopped on drop.
struct Nginx {
    port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(port: u16, anteroom_port: u16, room: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let conf = format!(
            r#"
user root;
worker_processes 1;
error_log stderr warn;
pid {d}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; "" ""; }}
    upstream anteroom {{ server 127.0.0.1:{anteroom_port}; }}
    server {{
        listen 127.0.0.1:{port};
        location /api/rooms/ {{
            proxy_pass http://anteroom;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
        location /r/ {{
            proxy_pass http://anteroom;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
        }}
        location /static/ {{ proxy_pass http://anteroom; }}
        location /checkout/ {{
            auth_request /_anteroom;
            auth_request_set $anteroom_visitor $upstream_http_x_anteroom_visitor;
            error_page 401 = @queue;
            # A static page stands in for the shop (`return` would run before the check).
            root {d}/site;
            add_header X-Anteroom-Visitor $anteroom_visitor;
        }}
        # Guarded too; a `path` bypass rule lets it through.
        location /assets/ {{
            auth_request /_anteroom;
            error_page 401 = @queue;
            root {d}/site;
        }}
        location = /_anteroom {{
            internal;
            proxy_pass http://anteroom/api/rooms/{room}/verify;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header Cookie $http_cookie;
            proxy_set_header X-Original-URI $request_uri;
        }}
        location @queue {{ return 302 /r/{room}; }}
    }}
}}
"#
        );
        std::fs::create_dir_all(dir.path().join("site/checkout")).unwrap();
        std::fs::write(dir.path().join("site/checkout/index.html"), "welcome").unwrap();
        std::fs::create_dir_all(dir.path().join("site/assets")).unwrap();
        std::fs::write(dir.path().join("site/assets/app.css"), "body{}").unwrap();
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let bin = ["/usr/sbin/nginx", "nginx"]
            .into_iter()
            .find(|b| Command::new(b).arg("-v").output().is_ok())
            .expect("nginx must be installed (apt-get install nginx; see .ci/run)");
        let child = Command::new(bin)
            .args(["-p", &d.to_string(), "-c", path.to_str().unwrap()])
            .args(["-g", "daemon off;"])
            .stdout(Stdio::null())
            // Not inherited: a worker outliving the test must not hold the test's pipes.
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("error.log")).unwrap(),
            ))
            .spawn()
            .unwrap();
        crate::helpers::wait_for_port(port, "nginx to start");
        Self {
            port,
            child,
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // TERM lets the master stop its workers; KILL would orphan them.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_auth_request_lets_pass_holders_in_and_sends_others_to_the_queue() {
    let redis = RedisServer::start();
    let nginx_port = free_port();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![RoomConfig {
            target_url: format!("http://127.0.0.1:{nginx_port}/checkout/"),
            ..room("sale", 1)
        }],
    ))
    .await;
    let nginx = Nginx::start(nginx_port, app.port, "sale");
    let http = crate::helpers::client();

    // No pass: nginx asks Anteroom, gets 401, sends the visitor to the queue.
    let r = http.get(nginx.url("/checkout/")).send().await.unwrap();
    assert_eq!(r.status(), 302);
    assert!(r.headers()["location"]
        .to_str()
        .unwrap()
        .ends_with("/r/sale"));

    // Through nginx, the queue page admits the first visitor and sets the pass cookie.
    let r = http.get(nginx.url("/r/sale")).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert!(r.headers()["location"]
        .to_str()
        .unwrap()
        .contains("/checkout/"));
    let pass = cookie_pair(&r, "anteroom_pass_sale").expect("pass cookie");
    let vid = cookie_pair(&r, "anteroom_vid").expect("visitor cookie");

    let r = http
        .get(nginx.url("/checkout/"))
        .header("cookie", format!("{pass}; {vid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let visitor = vid
        .split('=')
        .nth(1)
        .unwrap()
        .split('.')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(r.headers()["x-anteroom-visitor"], visitor.as_str());
    assert_eq!(r.text().await.unwrap(), "welcome");

    // A second visitor waits: the page renders through nginx.
    let r = http.get(nginx.url("/r/sale")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let waiting = cookie_pair(&r, "anteroom_vid").unwrap();
    assert!(r.text().await.unwrap().contains("id=\"position\""));

    // The queue socket upgrades through nginx (Origin matches the Host nginx passes on).
    let token = waiting.split_once('=').unwrap().1.to_string();
    let mut req = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
        format!("ws://127.0.0.1:{nginx_port}/r/sale/ws?token={token}"),
    )
    .unwrap();
    req.headers_mut().insert(
        "origin",
        format!("http://127.0.0.1:{nginx_port}").parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req)
        .await
        .expect("upgrade via nginx");
    let first = crate::helpers::ws::next_json(&mut ws, Duration::from_secs(10)).await;
    assert_eq!(
        (first["state"].as_str(), first["position"].as_u64()),
        (Some("queued"), Some(1))
    );

    // Releasing the pass closes the door at once.
    let r = http
        .post(nginx.url("/api/rooms/sale/release"))
        .header("cookie", vid.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let r = http
        .get(nginx.url("/checkout/"))
        .header("cookie", format!("{pass}; {vid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "a released pass no longer opens the door");
    // ...and the waiting visitor's socket hears it was admitted.
    crate::helpers::ws::wait_for(&mut ws, "admitted", Duration::from_secs(5)).await;
}

/// `[[bypass]]` rules behind the real nginx recipe: a monitor with the secret header and a
/// static file under a `path` rule get through without a pass; a wrong secret and another
/// path are sent to the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_auth_request_honours_bypass_rules() {
    let redis = RedisServer::start();
    let nginx_port = free_port();
    let mut settings = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![RoomConfig {
            target_url: format!("http://127.0.0.1:{nginx_port}/checkout/"),
            ..room("sale", 1)
        }],
    );
    settings.bypass = vec![
        anteroom::config::BypassRule {
            name: "monitor".into(),
            header: Some("X-Anteroom-Bypass".into()),
            value: Some(anteroom::room::Secret::new("health-check-secret-42")),
            ..Default::default()
        },
        anteroom::config::BypassRule {
            name: "assets".into(),
            path: Some("/assets/*".into()),
            ..Default::default()
        },
    ];
    let app = spawn_app(settings).await;
    let nginx = Nginx::start(nginx_port, app.port, "sale");
    let http = crate::helpers::client();

    let r = http
        .get(nginx.url("/checkout/"))
        .header("X-Anteroom-Bypass", "health-check-secret-42")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "welcome");
    let r = http
        .get(nginx.url("/checkout/"))
        .header("X-Anteroom-Bypass", "health-check-secret-43")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302, "a wrong secret goes to the queue");

    let r = http.get(nginx.url("/assets/app.css")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "body{}");
    // The client cannot pick the path the rule sees: nginx sets X-Original-URI itself.
    let r = http
        .get(nginx.url("/checkout/"))
        .header("X-Original-URI", "/assets/app.css")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);

    // Counted per check: nginx checks `/checkout/` and again its internal redirect to
    // `/checkout/index.html`.
    let m = app.get("/metrics").await.body;
    let m = m.as_str().unwrap();
    let count = |rule: &str| -> u64 {
        let line = format!("anteroom_bypass_total{{rule=\"{rule}\"}} ");
        m.lines()
            .find_map(|l| l.strip_prefix(line.as_str()))
            .map_or(0, |n| n.parse().unwrap())
    };
    assert!(count("monitor") >= 1, "{m}");
    assert_eq!(count("assets"), 1, "{m}");
}

/// Finding 3 of issue 28: with the documented recipe (`X-Original-URI $request_uri`) a
/// path nginx resolves out of a bypassed folder (`/assets/..%2fcheckout%2f` is
/// `/checkout/` to nginx) gets no bypass at `verify`: it needs a pass like the page it
/// names. `verify` reads the path as the gateway does; what the reader refuses goes to the
/// pass check, never to a `path` rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_a_path_climbing_out_of_a_bypassed_folder_needs_a_pass() {
    let redis = RedisServer::start();
    let nginx_port = free_port();
    let mut settings = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![RoomConfig {
            target_url: format!("http://127.0.0.1:{nginx_port}/checkout/"),
            ..room("sale", 1)
        }],
    );
    settings.bypass = vec![anteroom::config::BypassRule {
        name: "assets".into(),
        path: Some("/assets/*".into()),
        ..Default::default()
    }];
    let app = spawn_app(settings).await;
    let nginx = Nginx::start(nginx_port, app.port, "sale");

    let r =
        crate::helpers::raw::get(nginx.port, "/assets/app.css", Some("shop.example"), &[]).await;
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, "body{}"),
        "the rule still passes its folder"
    );
    for path in [
        "/assets/..%2fcheckout%2f",
        "/assets/..%2Fcheckout%2Findex.html",
        "/assets/%2e%2e%2fcheckout%2f",
    ] {
        let r = crate::helpers::raw::get(nginx.port, path, Some("shop.example"), &[]).await;
        assert_eq!(r.status, 302, "{path}: {r:?}");
        assert!(
            r.header("location").unwrap().ends_with("/r/sale"),
            "{path}: {r:?}"
        );
    }
    // Asked directly: 401, never `{"bypass":...}`; a pass still gets in.
    let verify = |uri: &'static str| {
        app.client
            .get(app.url("/api/rooms/sale/verify"))
            .header("X-Original-URI", uri)
    };
    for uri in [
        "/assets/..%2fcheckout%2findex.html",
        "/assets/x%3F/..%2f..%2fcheckout",
        "/assets/..\\checkout",
    ] {
        let r = verify(uri).send().await.unwrap();
        assert_eq!(r.status(), 401, "{uri}");
        assert!(r.headers().get("x-anteroom-bypass").is_none(), "{uri}");
    }
    let pass = app.join("sale").await.body["pass"]
        .as_str()
        .unwrap()
        .to_string();
    let r = verify("/assets/..%2fcheckout%2findex.html")
        .bearer_auth(&pass)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("x-anteroom-bypass").is_none());
}
