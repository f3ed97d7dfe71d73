//! Test harness: a real `redis-server` per test on a free port (killable and restartable
//! for fault tests), `spawn_app()` for a real HTTP server, and `wait_until` for waiting
//! on conditions with a deadline instead of sleeping.
#![allow(dead_code)]

use std::future::Future;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anteroom::admission::Engine;
use anteroom::config::{RoomConfig, Secret, Settings};
use anteroom::startup::Application;
use anteroom::store::memory::MemoryStore;
use anteroom::store::redis::RedisStore;
use anteroom::store::Store;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub const SIGNING_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
pub const SECRET_KEY: &str = "test-secret-key";

/// Polls `check` until it returns `Some`, or panics with `what` after `deadline`.
pub async fn wait_until<T, F, Fut>(deadline: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A real redis-server owned by one test; killed on drop.
pub struct RedisServer {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
    persistent: bool,
}

impl RedisServer {
    /// An in-memory Redis on a free port.
    pub fn start() -> Self {
        Self::start_with(false)
    }

    /// A Redis with an append-only file, so a kill -9 and restart keeps the data.
    pub fn start_persistent() -> Self {
        Self::start_with(true)
    }

    fn start_with(persistent: bool) -> Self {
        let mut s = Self {
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            child: None,
            persistent,
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new(redis_bin());
        cmd.args([
            "--port",
            &self.port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--dir", self.dir.path().to_str().unwrap()])
        .args(["--enable-debug-command", "local"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        if self.persistent {
            cmd.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            cmd.args(["--appendonly", "no"]);
        }
        self.child = Some(
            cmd.spawn()
                .expect("redis-server must be installed (see .ci/run)"),
        );
        wait_sync(|| ping_port(self.port), "redis-server to start");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A plain synchronous connection for inspecting keys.
    pub fn conn(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    /// Kills the server (SIGKILL) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// SIGSTOP / SIGCONT: the server stops answering without closing connections.
    pub fn pause(&self) {
        self.signal("-STOP");
    }
    pub fn resume(&self) {
        self.signal("-CONT");
    }
    fn signal(&self, sig: &str) {
        if let Some(c) = &self.child {
            Command::new("kill")
                .args([sig, &c.id().to_string()])
                .status()
                .unwrap();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.resume();
        self.kill();
    }
}

/// A local three-master Redis Cluster (`--cluster-enabled yes` ×3 + `redis-cli --cluster
/// create`); every node is killed on drop.
pub struct RedisCluster {
    pub ports: Vec<u16>,
    _dir: tempfile::TempDir,
    children: Vec<Child>,
}

impl RedisCluster {
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut ports = Vec::new();
        while ports.len() < 3 {
            // The cluster bus listens on port + 10000: both must be free.
            let p = free_port();
            if p < 50_000
                && TcpListener::bind(("127.0.0.1", p + 10_000)).is_ok()
                && !ports.contains(&p)
            {
                ports.push(p);
            }
        }
        let mut children = Vec::new();
        for p in &ports {
            let node_dir = dir.path().join(p.to_string());
            std::fs::create_dir_all(&node_dir).unwrap();
            children.push(
                Command::new(redis_bin())
                    .args([
                        "--port",
                        &p.to_string(),
                        "--bind",
                        "127.0.0.1",
                        "--save",
                        "",
                    ])
                    .args(["--appendonly", "no", "--cluster-enabled", "yes"])
                    .args(["--cluster-config-file", "nodes.conf"])
                    .args(["--dir", node_dir.to_str().unwrap()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("redis-server"),
            );
        }
        let c = Self {
            ports,
            _dir: dir,
            children,
        };
        for p in &c.ports {
            wait_sync(|| ping_port(*p), "a cluster node to start");
        }
        let addrs: Vec<String> = c.ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli must be installed (redis-tools)");
        assert!(
            out.status.success(),
            "cluster create: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        for p in &c.ports {
            wait_sync(
                || {
                    let mut conn = redis::Client::open(format!("redis://127.0.0.1:{p}"))
                        .ok()?
                        .get_connection()
                        .ok()?;
                    let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut conn).ok()?;
                    info.contains("cluster_state:ok").then_some(())
                },
                "the cluster to be ok",
            );
        }
        c
    }

    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// Keys held by each node.
    pub fn dbsizes(&self) -> Vec<u64> {
        self.ports
            .iter()
            .map(|p| {
                let mut conn = redis::Client::open(format!("redis://127.0.0.1:{p}"))
                    .unwrap()
                    .get_connection()
                    .unwrap();
                redis::cmd("DBSIZE").query(&mut conn).unwrap()
            })
            .collect()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn ping_port(p: u16) -> Option<()> {
    let mut conn = redis::Client::open(format!("redis://127.0.0.1:{p}"))
        .ok()?
        .get_connection_with_timeout(Duration::from_millis(200))
        .ok()?;
    redis::cmd("PING")
        .query::<String>(&mut conn)
        .ok()
        .map(|_| ())
}

/// Waits (blocking) until something accepts connections on a loopback port.
pub fn wait_for_port(port: u16, what: &str) {
    wait_sync(
        || {
            std::net::TcpStream::connect(("127.0.0.1", port))
                .ok()
                .map(|_| ())
        },
        what,
    );
}

/// Blocking wait with a deadline (for harness set-up outside async code).
pub fn wait_sync<T>(mut f: impl FnMut() -> Option<T>, what: &str) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn redis_bin() -> PathBuf {
    std::env::var_os("REDIS_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("redis-server"))
}

/// A fresh key prefix so tests never share state.
pub fn prefix() -> String {
    format!(
        "t{}",
        &anteroom::identity::VisitorId::random().as_str()[..12]
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

/// A running server and a client for it.
pub struct TestApp {
    pub address: String,
    pub port: u16,
    pub engine: actix_web::web::Data<Engine>,
    pub hub: actix_web::web::Data<anteroom::hub::HubHandle>,
    pub shutdown: CancellationToken,
    pub client: reqwest::Client,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn spawn_app(settings: Settings) -> TestApp {
    let app = Application::build(settings).await.expect("build app");
    finish_spawn(app)
}

pub async fn spawn_app_with_store(settings: Settings, store: Arc<dyn Store>) -> TestApp {
    let app = Application::build_with_store(settings, store)
        .await
        .expect("build app");
    finish_spawn(app)
}

pub fn memory_store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

fn finish_spawn(app: Application) -> TestApp {
    let port = app.port();
    let engine = app.engine();
    let hub = app.hub();
    let shutdown = CancellationToken::new();
    tokio::spawn(app.run_until_stopped(shutdown.clone()));
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        port,
        engine,
        hub,
        shutdown,
        client: client(),
    }
}

/// A client without a cookie jar: tests pass identities explicitly.
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
    /// The visitor's state read straight from the store (no HTTP, no heartbeat).
    pub async fn store_state(&self, room: &str, token: &str) -> String {
        let id = token.split('.').next().unwrap();
        self.engine
            .store
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
