//! The Caddy `forward_auth` recipe (docs/integrations.md), run with a real Caddy in front
//! of Anteroom.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::helpers::{client, cookie_pair, free_port, room, spawn_app, test_settings, RedisServer};
use anteroom::config::BypassRule;
use anteroom::room::{RoomConfig, Secret};

/// Caddy on a free port with the recipe's Caddyfile; stopped on drop.
struct Caddy {
    port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

/// The recipe, as in docs/integrations.md (ports filled in).
fn caddyfile(port: u16, anteroom: u16) -> String {
    format!(
        r#"{{
	admin off
	auto_https off
}}

http://127.0.0.1:{port} {{
	# The queue page, its socket, its files and the API go to Anteroom.
	handle /r/* {{
		reverse_proxy 127.0.0.1:{anteroom}
	}}
	handle /static/* {{
		reverse_proxy 127.0.0.1:{anteroom}
	}}
	handle /api/rooms/* {{
		reverse_proxy 127.0.0.1:{anteroom}
	}}

	# The protected part of the site.
	handle /checkout/* {{
		forward_auth 127.0.0.1:{anteroom} {{
			uri /api/rooms/sale/verify
			header_up X-Original-URI {{uri}}
			copy_headers X-Anteroom-Visitor
			@queue status 401
			handle_response @queue {{
				redir * /r/sale 302
			}}
		}}
		# Stands in for the shop.
		respond "welcome {{http.request.header.X-Anteroom-Visitor}}"
	}}
}}
"#
    )
}

impl Caddy {
    fn start(anteroom_port: u16) -> Self {
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Caddyfile");
        std::fs::write(&path, caddyfile(port, anteroom_port)).unwrap();
        let child = Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&path)
            .env("XDG_DATA_HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env("HOME", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("caddy.log")).unwrap(),
            ))
            .spawn()
            .expect("caddy must be installed (apt-get install caddy; see .ci/run)");
        anteroom_testkit::wait_for_port(port, "caddy to start");
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

impl Drop for Caddy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caddy_forward_auth_lets_pass_holders_in_and_sends_others_to_the_queue() {
    let redis = RedisServer::start();
    let mut settings = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![RoomConfig {
            target_url: "http://127.0.0.1:9/checkout/".into(),
            ..room("sale", 1)
        }],
    );
    settings.bypass = vec![BypassRule {
        name: "monitor".into(),
        header: Some("X-Anteroom-Bypass".into()),
        value: Some(Secret::new("health-check-secret-42")),
        ..Default::default()
    }];
    let app = spawn_app(settings).await;
    let caddy = Caddy::start(app.port);
    let http = client();

    // No pass: Caddy asks Anteroom, gets 401, sends the visitor to the queue.
    let r = http.get(caddy.url("/checkout/")).send().await.unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "/r/sale");

    // Through Caddy, the queue page admits the first visitor and sets the pass cookie.
    let r = http.get(caddy.url("/r/sale")).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let pass = cookie_pair(&r, "anteroom_pass_sale").expect("pass cookie");
    let vid = cookie_pair(&r, "anteroom_vid").expect("visitor cookie");
    let visitor = vid.split(['=', '.']).nth(1).unwrap().to_string();

    let r = http
        .get(caddy.url("/checkout/"))
        .header("cookie", format!("{pass}; {vid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), format!("welcome {visitor}"));

    // A tampered pass goes to the queue.
    let forged = format!("{}x", pass.trim_end_matches(|c: char| c != '.'));
    let r = http
        .get(caddy.url("/checkout/"))
        .header("cookie", forged)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 302);

    // A bypass rule gets a monitor in without a pass.
    let r = http
        .get(caddy.url("/checkout/"))
        .header("X-Anteroom-Bypass", "health-check-secret-42")
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // A second visitor waits: the queue page renders through Caddy.
    let r = http.get(caddy.url("/r/sale")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("id=\"position\""));
}
