//! The origin examples under `examples/` (docs/integrations.md), run with their own
//! runtimes and libraries against a real Anteroom: Node (Express + jose) and Python (WSGI +
//! PyJWT). Their dependencies are installed from the registries on first use, into
//! `target/examples/` (the examples' folders stay clean).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::helpers::{
    client, free_port, room, spawn_app, test_settings, wait_until, RedisServer, TestApp,
};
use anteroom::room::RoomConfig;

const DEADLINE: Duration = Duration::from_secs(20);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A copy of the example's files in `target/examples/<name>`, with its dependencies.
fn node_example() -> PathBuf {
    let src = repo().join("examples/node-express");
    let dir = repo().join("target/examples/node-express");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["package.json", "server.js"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    if !dir.join("node_modules/jose").exists() || !dir.join("node_modules/express").exists() {
        run(
            Command::new("npm")
                .args(["install", "--silent", "--no-audit", "--no-fund"])
                .current_dir(&dir),
            "npm install (node and npm are needed: apt-get install nodejs npm)",
        );
    }
    dir
}

/// A virtualenv in `target/examples/py-venv` with the example's requirements; its python.
fn python_env() -> PathBuf {
    let venv = repo().join("target/examples/py-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
        );
    }
    let has_jwt = Command::new(&python)
        .args(["-c", "import jwt, cryptography"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_jwt {
        run(
            Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
                .arg(repo().join("examples/python-wsgi/requirements.txt")),
            "pip install -r examples/python-wsgi/requirements.txt",
        );
    }
    python
}

/// A site process, killed on drop.
struct Site {
    child: Child,
    base: String,
}

impl Site {
    fn start(program: &Path, script: &Path, dir: &Path, anteroom: &TestApp, room: &str) -> Self {
        let port = free_port();
        let child = Command::new(program)
            .arg(script)
            .current_dir(dir)
            .env("ANTEROOM", anteroom.url(""))
            .env("ROOM", room)
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        anteroom_testkit::wait_for_port(port, "the example site to listen");
        Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn anteroom() -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(r.url()),
        &crate::helpers::prefix(),
        vec![
            room("sale", 100),
            room("other", 100),
            RoomConfig {
                session_ttl_secs: 3,
                ..room("brief", 100)
            },
        ],
    ))
    .await;
    (app, r)
}

/// A pass for `room` (a walk-in's join).
async fn pass(app: &TestApp, room: &str) -> (String, String) {
    let r = crate::helpers::Reply::from(
        reqwest::Client::new()
            .post(app.url(&format!("/api/rooms/{room}/join")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.state(), "admitted");
    let sub = r.token().split('.').next().unwrap().to_string();
    (r.body["pass"].as_str().unwrap().to_string(), sub)
}

/// What every example must do with passes.
async fn the_site_lets_pass_holders_in_and_sends_others_to_the_queue(site: &Site, app: &TestApp) {
    let http = client();
    let get = |path: &str, cookie: Option<String>| {
        let mut req = http.get(format!("{}{path}", site.base));
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        async move { req.send().await.unwrap() }
    };
    let r = get("/", None).await;
    assert_eq!(r.status(), 200, "the open part of the site");

    let r = get("/checkout/", None).await;
    assert_eq!(r.status(), 302);
    let to = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        to.starts_with(&app.url("/r/sale?return=")) && to.contains("checkout"),
        "{to}"
    );

    let (good, sub) = pass(app, "sale").await;
    let r = get("/checkout/", Some(format!("anteroom_pass_sale={good}"))).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.text().await.unwrap(),
        format!("checkout for visitor {sub}")
    );

    // Forged (signature edited), another room's, and garbage: to the queue. The edit is
    // ten characters from the end: the last base64url character of a 64-byte signature
    // carries padding bits that decoders may ignore.
    let mut forged: Vec<char> = good.chars().collect();
    let i = forged.len() - 10;
    forged[i] = if forged[i] == 'A' { 'B' } else { 'A' };
    let forged: String = forged.into_iter().collect();
    let (other, _) = pass(app, "other").await;
    for bad in [forged, other, "not-a-jwt".to_string()] {
        let r = get("/checkout/", Some(format!("anteroom_pass_sale={bad}"))).await;
        assert_eq!(r.status(), 302, "{bad}");
    }

    // Back from a queue on another host: the pass in the query moves into a cookie.
    let r = get(&format!("/checkout/?anteroom_pass={good}"), None).await;
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers()["location"], "/checkout/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with(&format!("anteroom_pass_sale={good}")),
        "{cookie}"
    );
    assert!(cookie.to_ascii_lowercase().contains("httponly"), "{cookie}");
}

/// A site guarding the room `brief` (3 s sessions): its pass gets in, then, once expired,
/// no longer does.
async fn an_expired_pass_is_refused(site: &Site, app: &TestApp) {
    let http = client();
    let (brief, _) = pass(app, "brief").await;
    let checkout = || {
        let req = http
            .get(format!("{}/checkout/", site.base))
            .header("cookie", format!("anteroom_pass_brief={brief}"));
        async move { req.send().await.unwrap().status() }
    };
    assert_eq!(checkout().await, 200);
    wait_until(
        DEADLINE,
        "the 3 s pass to be refused once expired",
        || async { (checkout().await == 302).then_some(()) },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_express_example_verifies_passes_offline() {
    let dir = tokio::task::spawn_blocking(node_example).await.unwrap();
    let (app, _r) = anteroom().await;
    let site = Site::start(
        Path::new("node"),
        &dir.join("server.js"),
        &dir,
        &app,
        "sale",
    );
    the_site_lets_pass_holders_in_and_sends_others_to_the_queue(&site, &app).await;
    let brief = Site::start(
        Path::new("node"),
        &dir.join("server.js"),
        &dir,
        &app,
        "brief",
    );
    an_expired_pass_is_refused(&brief, &app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_wsgi_example_verifies_passes_offline() {
    let python = tokio::task::spawn_blocking(python_env).await.unwrap();
    let (app, _r) = anteroom().await;
    let dir = repo().join("examples/python-wsgi");
    let site = Site::start(&python, &dir.join("app.py"), &dir, &app, "sale");
    the_site_lets_pass_holders_in_and_sends_others_to_the_queue(&site, &app).await;
    let brief = Site::start(&python, &dir.join("app.py"), &dir, &app, "brief");
    an_expired_pass_is_refused(&brief, &app).await;
}
