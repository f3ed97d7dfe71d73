//! Test harness: `spawn_app()` for a real HTTP server on port 0 with its own key prefix,
//! a client with one method per endpoint, and the fixtures in [`admin`] (an admin
//! session) and [`browser`] (headless Chromium). Real Redis and Redis Cluster come from
//! the `anteroom-testkit` crate, shared with the benchmarks.
//!
//! `TEST_LOG=1 cargo test` sends the servers' tracing output to the test output (shown
//! for failing tests); `TEST_LOG=debug` (or any filter) sets the level.

pub mod admin;
pub mod browser;
pub mod fairness;
pub mod monitor;
pub mod origin;
pub mod raw;
pub mod receiver;
pub mod tls;
pub mod upstream;

use std::sync::{Arc, Once};
use std::time::Duration;

pub use anteroom_testkit::{
    free_port, wait_for_port, wait_until, RedisCluster, RedisSentinel, RedisServer,
};

use anteroom::config::Settings;
use anteroom::domain::admission::Engine;
use anteroom::room::{RoomConfig, Secret};
use anteroom::startup::Application;
use anteroom::store::redis::RedisStore;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// With `TEST_LOG` set, the servers' tracing goes to the test's captured output.
fn init_test_log() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(filter) = std::env::var("TEST_LOG") else {
            return;
        };
        let filter = if filter == "1" || filter.is_empty() {
            "info".to_string()
        } else {
            filter
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    });
}

pub const SIGNING_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
pub const SECRET_KEY: &str = "test-secret-key";

/// A fresh key prefix so tests never share state.
pub fn prefix() -> String {
    format!(
        "t{}",
        &anteroom::domain::identity::VisitorId::random().as_str()[..12]
    )
}

/// A room config with test-friendly defaults.
pub fn room(id: &str, capacity: u64) -> RoomConfig {
    RoomConfig {
        id: id.into(),
        name: format!("Room {id}"),
        capacity,
        session_ttl_secs: 60,
        heartbeat_timeout_secs: 60,
        target_url: "https://origin.example/in".into(),
        ..RoomConfig::default()
    }
}

pub async fn redis_store(url: &str, prefix: &str) -> RedisStore {
    RedisStore::connect(url, prefix, &Default::default())
        .await
        .unwrap()
}

/// Settings for a test server: port 0, fixed keys, limits off unless a test turns them on.
pub fn test_settings(redis_url: Option<String>, prefix: &str, rooms: Vec<RoomConfig>) -> Settings {
    let mut s = Settings {
        listen: "127.0.0.1:0".into(),
        redis_url,
        key_prefix: prefix.into(),
        secret_key: Some(Secret::new(SECRET_KEY)),
        signing_key: Some(Secret::new(SIGNING_KEY)),
        demo: false,
        rooms,
        ..Settings::default()
    };
    s.rate_limit.ip_per_second = 0;
    s.rate_limit.visitor_requests = 0;
    // Admin tests turn it on with a token.
    s.admin.enabled = false;
    s.reaper.interval_ms = 200;
    s.reaper.promote_interval_ms = 100;
    s.store.response_timeout_ms = 500;
    s.store.connect_timeout_ms = 500;
    s
}

/// Settings for a demo server on a known port, reached at `http://{public_host}:{port}`
/// (rooms' targets can point back at its demo origin; browsers open its pages).
pub fn demo_settings(
    redis: &RedisServer,
    port: u16,
    rooms: Vec<RoomConfig>,
    public_host: &str,
) -> Settings {
    let mut s = test_settings(Some(redis.url()), &prefix(), rooms);
    s.listen = format!("127.0.0.1:{port}");
    s.public_url = Some(format!("http://{public_host}:{port}"));
    s.demo = true;
    s
}

/// A running server and a client for it.
pub struct TestApp {
    pub address: String,
    pub port: u16,
    /// The gateway's port, when `[gateway]` is on.
    pub gateway_port: Option<u16>,
    pub engine: Arc<Engine>,
    pub hub: anteroom::hub::HubHandle,
    /// The listeners' certificates: `reload()` is what SIGHUP does.
    pub certificates: anteroom::tls::Certificates,
    pub shutdown: CancellationToken,
    pub client: reqwest::Client,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn spawn_app(settings: Settings) -> TestApp {
    init_test_log();
    let app = Application::build(settings).await.expect("build app");
    finish_spawn(app)
}

fn finish_spawn(app: Application) -> TestApp {
    let port = app.port();
    let gateway_port = app.gateway_port();
    let engine = app.engine();
    let hub = app.hub();
    let certificates = app.certificates();
    let shutdown = CancellationToken::new();
    tokio::spawn(app.run_until_stopped(shutdown.clone()));
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        port,
        gateway_port,
        engine,
        hub,
        certificates,
        shutdown,
        client: client(),
    }
}

/// A server on a fresh Redis, with the given rooms.
pub async fn redis_app(rooms: Vec<RoomConfig>) -> (TestApp, RedisServer) {
    let r = RedisServer::start();
    let app = spawn_app(test_settings(Some(r.url()), &prefix(), rooms)).await;
    (app, r)
}

/// A client without a cookie jar: tests pass identities explicitly.
/// The `name=value` pair of the cookie `name` a response sets.
pub fn cookie_pair(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|c| c.to_str().ok())
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(|c| c.split(';').next().unwrap().to_string())
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// A response's status and JSON body.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    pub async fn from(r: reqwest::Response) -> Self {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Self {
            status,
            headers,
            body,
        }
    }
    pub fn token(&self) -> String {
        self.body["visitor_token"].as_str().unwrap().to_string()
    }
    pub fn state(&self) -> &str {
        self.body["state"].as_str().unwrap_or("")
    }
    pub fn error_code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// Joins as a new visitor.
    pub async fn join(&self, room: &str) -> Reply {
        Reply::from(
            self.client
                .post(self.url(&format!("/api/rooms/{room}/join")))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Joins again with a visitor token.
    pub async fn join_as(&self, room: &str, token: &str) -> Reply {
        Reply::from(
            self.client
                .post(self.url(&format!("/api/rooms/{room}/join")))
                .bearer_auth(token)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Joins with a visitor token and a place receipt (after the store lost its data).
    pub async fn join_with_receipt(&self, room: &str, token: &str, receipt: &str) -> Reply {
        Reply::from(
            self.client
                .post(self.url(&format!("/api/rooms/{room}/join")))
                .bearer_auth(token)
                .json(&serde_json::json!({"place_receipt": receipt}))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// The HTML of `path` fetched as the visitor whose token is `token` (cookie).
    pub async fn page_as(&self, path: &str, token: &str) -> String {
        self.client
            .get(self.url(path))
            .header("cookie", format!("anteroom_vid={token}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    pub async fn status(&self, room: &str, token: &str) -> Reply {
        Reply::from(
            self.client
                .get(self.url(&format!("/api/rooms/{room}/status")))
                .bearer_auth(token)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn release(&self, room: &str, token: &str) -> Reply {
        Reply::from(
            self.client
                .post(self.url(&format!("/api/rooms/{room}/release")))
                .bearer_auth(token)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn verify(&self, room: &str, pass: &str) -> Reply {
        Reply::from(
            self.client
                .get(self.url(&format!("/api/rooms/{room}/verify")))
                .bearer_auth(pass)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn get(&self, path: &str) -> Reply {
        Reply::from(self.client.get(self.url(path)).send().await.unwrap()).await
    }
}

impl TestApp {
    /// The visitor's state read straight from the store (no HTTP; like any status, it
    /// refreshes a queued visitor's heartbeat).
    pub async fn store_state(&self, room: &str, token: &str) -> String {
        let id = token.split('.').next().unwrap();
        self.engine
            .admission_store()
            .status(room, id)
            .await
            .unwrap()
            .state
            .as_str()
            .to_string()
    }
}

/// WebSocket client helpers for the queue socket.
pub mod ws {
    use std::time::{Duration, Instant};

    use futures_util::StreamExt;
    use serde_json::Value;
    use tokio::net::TcpStream;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    use tokio_tungstenite::tungstenite::{Error as WsError, Message};
    use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

    use super::TestApp;

    pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

    pub async fn connect(
        app: &TestApp,
        room: &str,
        token: &str,
        origin: Option<&str>,
    ) -> Result<Ws, WsError> {
        let url = format!("ws://127.0.0.1:{}/r/{room}/ws?token={token}", app.port);
        let mut req = url.into_client_request().unwrap();
        if let Some(o) = origin {
            req.headers_mut().insert("origin", o.parse().unwrap());
        }
        tokio_tungstenite::connect_async(req)
            .await
            .map(|(ws, _)| ws)
    }

    /// The next JSON text message, skipping pongs.
    pub async fn next_json(ws: &mut Ws, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = tokio::time::timeout(left, ws.next())
                .await
                .expect("a message in time")
                .expect("socket open")
                .expect("no socket error");
            if let Message::Text(t) = msg {
                let v: Value = serde_json::from_str(&t).unwrap();
                if v["type"] != "pong" {
                    return v;
                }
            }
        }
    }

    /// The close code the server sends (within 10 s), skipping other messages.
    pub async fn close_code(ws: &mut Ws) -> CloseCode {
        loop {
            match tokio::time::timeout(Duration::from_secs(10), ws.next())
                .await
                .expect("close in time")
            {
                Some(Ok(Message::Close(Some(f)))) => return f.code,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    }

    /// Waits for a message of `kind`, skipping others.
    pub async fn wait_for(ws: &mut Ws, kind: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no {kind} message within {within:?}");
            let v = next_json(ws, left).await;
            if v["type"] == kind {
                return v;
            }
        }
    }
}

/// The real `anteroom` binary as its own process (for measuring its memory, or killing
/// it), configured by a TOML file; killed on drop.
pub struct ServerProcess {
    pub port: u16,
    child: std::process::Child,
    _dir: tempfile::TempDir,
    /// Where [`Self::start_logged`] keeps the process's output.
    log: Option<std::path::PathBuf>,
}

impl ServerProcess {
    /// Starts the binary with `extra` TOML appended to a test configuration (port, keys,
    /// limits off, admin off, one room `r` of capacity 1 unless `extra` has rooms).
    pub fn start(extra: &str) -> Self {
        Self::start_with(extra, &[("ANTEROOM_LOG", "warn")], false)
    }

    /// As [`Self::start`], with the environment `env` (`ANTEROOM_…` overrides the file:
    /// `ANTEROOM_ADMIN__ENABLED`), and the process's log kept for [`Self::log`].
    pub fn start_logged(extra: &str, env: &[(&str, &str)]) -> Self {
        Self::start_with(extra, env, true)
    }

    /// Everything the process has logged so far ([`Self::start_logged`]).
    pub fn log(&self) -> String {
        let path = self.log.as_ref().expect("started with start_logged");
        String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
    }

    fn start_with(extra: &str, env: &[(&str, &str)], logged: bool) -> Self {
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("anteroom.toml");
        std::fs::write(
            &cfg,
            format!(
                "listen = \"127.0.0.1:{port}\"\nsecret_key = \"{SECRET_KEY}\"\nsigning_key = \"{SIGNING_KEY}\"\ndemo = false\nworkers = 1\n{extra}\n[admin]\nenabled = false\n[rate_limit]\nvisitor_requests = 0\nip_per_second = 0\n"
            ),
        )
        .unwrap();
        let log = logged.then(|| dir.path().join("anteroom.log"));
        let out = || match &log {
            Some(path) => std::process::Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .unwrap(),
            ),
            None => std::process::Stdio::null(),
        };
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_anteroom"))
            .args(["--config", cfg.to_str().unwrap()])
            .envs(env.iter().copied())
            .stdout(out())
            .stderr(out())
            .spawn()
            .expect("the anteroom binary");
        // Serving, not only listening: the declared rooms are seeded by then. (A listener
        // with TLS, `tls_cert` before any section, is only waited on to listen.)
        let main_tls = extra
            .lines()
            .take_while(|l| !l.trim_start().starts_with('['))
            .any(|l| l.trim_start().starts_with("tls_cert"));
        if main_tls {
            wait_for_port(port, "the anteroom process to listen");
        } else {
            anteroom_testkit::wait_for_http_ok(port, "/healthz", "the anteroom process to serve");
        }
        Self {
            port,
            child,
            _dir: dir,
            log,
        }
    }

    /// Resident memory in KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Sends the process a signal by name (`HUP`, `TERM`) with `kill(1)`.
    pub fn signal(&self, name: &str) {
        let ok = std::process::Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("kill(1)")
            .success();
        assert!(ok, "kill -{name} {}", self.child.id());
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw WebSocket handshake on `stream` for `/r/{room}/ws?token=…`; returns once the
/// server answered `101`.
pub async fn raw_ws_handshake(
    stream: &mut tokio::net::TcpStream,
    port: u16,
    room: &str,
    token: &str,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let req = format!(
        "GET /r/{room}/ws?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut b).await.unwrap(), 1, "handshake answer");
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
}

/// A masked client frame (`opcode`: 0x1 text, 0x9 ping) with its header declaring `len`.
pub fn client_frame_header(opcode: u8, len: u64) -> Vec<u8> {
    let mut h = vec![0x80 | opcode];
    if len < 126 {
        h.push(0x80 | len as u8);
    } else if len <= 0xffff {
        h.push(0x80 | 126);
        h.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        h.push(0x80 | 127);
        h.extend_from_slice(&len.to_be_bytes());
    }
    h.extend_from_slice(&[0, 0, 0, 0]); // a zero mask leaves the payload as sent
    h
}

/// `calls` of each command in `INFO commandstats` (commands run inside scripts count too).
pub fn command_calls(r: &RedisServer) -> std::collections::BTreeMap<String, u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut r.conn())
        .unwrap();
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect()
}
