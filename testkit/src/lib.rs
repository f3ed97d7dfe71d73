//! Real Redis for tests and benchmarks: a `redis-server` on a free loopback port that a
//! test can kill, restart, freeze (SIGSTOP) and resume, and a local three-master Redis
//! Cluster joined with `redis-cli --cluster create`. Both are killed on drop.
//!
//! The integration tests (`tests/it/helpers.rs`) and the benchmark suite (through
//! `anteroom-loadtest redis`, which `bench/harness.py` runs) start Redis only through
//! this crate, so there is one way to do it.
//!
//! Also here: `wait_until` / `wait_sync`, which poll a condition with a deadline, so
//! nothing ever sleeps and hopes.

use std::future::Future;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    extra_args: Vec<String>,
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

    /// An in-memory Redis with extra `redis-server` arguments (`--maxclients 60000`).
    pub fn start_with_args(extra_args: &[&str]) -> Self {
        let mut s = Self::new(false);
        s.extra_args = extra_args.iter().map(|a| a.to_string()).collect();
        s.spawn();
        s
    }

    fn new(persistent: bool) -> Self {
        Self {
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            child: None,
            persistent,
            extra_args: Vec::new(),
        }
    }

    fn start_with(persistent: bool) -> Self {
        let mut s = Self::new(persistent);
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
        .args(&self.extra_args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        if self.persistent {
            // The setting docs/operations.md recommends: a process killed loses nothing
            // (written to the file before the reply), a machine crash up to ~1 s.
            cmd.args(["--appendonly", "yes", "--appendfsync", "everysec"]);
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

    /// The server's process id (while it runs).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
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

    /// The nodes' process ids.
    pub fn pids(&self) -> Vec<u32> {
        self.children.iter().map(Child::id).collect()
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

/// A master, one replica and three sentinels (quorum 2, a master down after 1 s, failover
/// timeout 5 s), all on free loopback ports; killed on drop.
pub struct RedisSentinel {
    pub master: RedisServer,
    pub replica: RedisServer,
    pub sentinel_ports: Vec<u16>,
    _dir: tempfile::TempDir,
    sentinels: Vec<Child>,
}

/// The name the sentinels monitor the master under.
pub const SENTINEL_MASTER: &str = "anteroom";

impl RedisSentinel {
    pub fn start() -> Self {
        Self::start_linked(|master| master)
    }

    /// Like `start`, the replica replicating from the port `link` gives for the master's
    /// (a proxy a test can cut, so that writes stop reaching the replica).
    pub fn start_linked(link: impl FnOnce(u16) -> u16) -> Self {
        let master = RedisServer::start();
        let port = master.port.to_string();
        let upstream = link(master.port).to_string();
        let replica = RedisServer::start_with_args(&["--replicaof", "127.0.0.1", &upstream]);
        wait_sync(
            || {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut replica.conn())
                    .ok()?;
                info.contains("master_link_status:up").then_some(())
            },
            "the replica to sync",
        );
        let dir = tempfile::tempdir().unwrap();
        let mut ports = Vec::new();
        let mut sentinels = Vec::new();
        for i in 0..3 {
            let p = free_port();
            let conf = dir.path().join(format!("sentinel-{i}.conf"));
            std::fs::write(
                &conf,
                format!(
                    "port {p}\nbind 127.0.0.1\ndir {}\nsentinel monitor {SENTINEL_MASTER} 127.0.0.1 {port} 2\n\
                     sentinel down-after-milliseconds {SENTINEL_MASTER} 1000\n\
                     sentinel failover-timeout {SENTINEL_MASTER} 5000\n\
                     sentinel parallel-syncs {SENTINEL_MASTER} 1\n",
                    dir.path().display()
                ),
            )
            .unwrap();
            sentinels.push(
                Command::new(redis_bin())
                    .arg(&conf)
                    .arg("--sentinel")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("redis-server (sentinel mode)"),
            );
            ports.push(p);
        }
        let s = Self {
            master,
            replica,
            sentinel_ports: ports,
            _dir: dir,
            sentinels,
        };
        // Each sentinel knows the replica and the two other sentinels (they find each
        // other through the master's hello channel): a failover can be agreed.
        for p in &s.sentinel_ports {
            wait_sync(
                || {
                    let mut c = redis::Client::open(format!("redis://127.0.0.1:{p}"))
                        .ok()?
                        .get_connection_with_timeout(Duration::from_millis(200))
                        .ok()?;
                    let others: Vec<redis::Value> = redis::cmd("SENTINEL")
                        .arg("sentinels")
                        .arg(SENTINEL_MASTER)
                        .query(&mut c)
                        .ok()?;
                    let replicas: Vec<redis::Value> = redis::cmd("SENTINEL")
                        .arg("replicas")
                        .arg(SENTINEL_MASTER)
                        .query(&mut c)
                        .ok()?;
                    (others.len() == 2 && replicas.len() == 1).then_some(())
                },
                "the sentinels to know each other and the replica",
            );
        }
        s
    }

    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .sentinel_ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+sentinel://{}/{SENTINEL_MASTER}", nodes.join(","))
    }

    /// The port of the node the sentinels name master now.
    pub fn master_port(&self) -> Option<u16> {
        let p = self.sentinel_ports[0];
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{p}"))
            .ok()?
            .get_connection_with_timeout(Duration::from_millis(200))
            .ok()?;
        let addr: Vec<String> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(SENTINEL_MASTER)
            .query(&mut c)
            .ok()?;
        addr.get(1)?.parse().ok()
    }
}

impl Drop for RedisSentinel {
    fn drop(&mut self) {
        for c in &mut self.sentinels {
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

/// Blocks until `GET path` on 127.0.0.1:`port` answers `200`. A process can accept
/// connections (its listener bound) before it serves them: Anteroom binds first and then
/// seeds its declared rooms, so a test that uses the store straight after
/// [`wait_for_port`] could find no room yet.
pub fn wait_for_http_ok(port: u16, path: &str, what: &str) {
    use std::io::{Read, Write};
    wait_sync(
        || {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
            write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
            let mut head = [0u8; 12];
            s.read_exact(&mut head).ok()?;
            head.ends_with(b" 200").then_some(())
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
