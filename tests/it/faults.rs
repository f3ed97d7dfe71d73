//! Redis going away, pausing, restarting and losing its script cache — Anteroom answers
//! 503 quickly, loses nothing, never admits twice, and recovers without a restart.

use std::time::{Duration, Instant};

use crate::helpers::{room, spawn_app, test_settings, wait_until, RedisServer};
use anteroom::domain::identity::VisitorId;
use anteroom::domain::ratelimit::LimitedAction;

/// Generous bound on how long a request may take while Redis is down: the configured
/// timeouts are 500 ms; anything near this bound means a request hung.
const NO_HANG: Duration = Duration::from_secs(5);

#[tokio::test]
async fn redis_killed_mid_run_gives_503_then_recovers_without_losing_places() {
    let mut redis = RedisServer::start_persistent();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    ))
    .await;
    let a = app.join("r").await;
    let b = app.join("r").await;
    assert_eq!((a.state(), b.state()), ("admitted", "queued"));

    redis.kill();
    let t = Instant::now();
    let r = app.join("r").await;
    assert!(t.elapsed() < NO_HANG, "join hung for {:?}", t.elapsed());
    assert_eq!((r.status, r.error_code()), (503, "store_unavailable"));
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(app.status("r", &b.token()).await.status, 503);
    // An admitted visitor's pass still verifies, offline, and says so (issue 16: the
    // protected site must not go down with the queue).
    let v = app.verify("r", a.body["pass"].as_str().unwrap()).await;
    assert_eq!(
        (
            v.status,
            v.headers
                .get("x-anteroom-degraded")
                .map(|h| h.to_str().unwrap())
        ),
        (200, Some("store-unreachable"))
    );
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status, 503);
    assert_eq!(
        app.get("/healthz").await.status,
        200,
        "the process itself is fine"
    );

    redis.restart();
    wait_until(Duration::from_secs(15), "Anteroom to reconnect", || async {
        (app.get("/readyz").await.status == 200).then_some(())
    })
    .await;
    let a_again = app.join_as("r", &a.token()).await;
    assert_eq!(
        a_again.body["pass"], a.body["pass"],
        "the admission survived"
    );
    let b_again = app.status("r", &b.token()).await;
    assert_eq!(
        (b_again.state(), b_again.body["position"].as_u64()),
        ("queued", Some(1))
    );
}

#[tokio::test]
async fn a_frozen_redis_times_out_and_a_retried_join_is_never_admitted_twice() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 5)],
    ))
    .await;
    let x = app.join("r").await; // x is admitted; now a newcomer joins during the freeze
    assert_eq!(x.state(), "admitted");
    let y_token = app.engine.visitors().token(&VisitorId::random());

    redis.pause();
    let t = Instant::now();
    let r = app.join_as("r", &y_token).await;
    assert!(t.elapsed() < NO_HANG, "join hung for {:?}", t.elapsed());
    assert_eq!(r.status, 503);
    redis.resume();

    // The timed-out script may still have run once Redis woke up; the retry is
    // idempotent either way.
    let again = wait_until(Duration::from_secs(10), "Redis to answer again", || async {
        let r = app.join_as("r", &y_token).await;
        (r.status == 200).then_some(r)
    })
    .await;
    assert_eq!(again.state(), "admitted");
    let stats = app.engine.admin_store().stats("r").await.unwrap();
    assert_eq!(
        (stats.active, stats.admitted_total),
        (2, 2),
        "y admitted exactly once"
    );
}

#[tokio::test]
async fn scripts_and_the_room_library_are_reloaded_after_a_flush() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 5)],
    ))
    .await;
    assert_eq!(app.join("r").await.status, 200);
    let lib = anteroom::store::redis::RoomLibrary::get().name.clone();
    let listed = |redis: &RedisServer| -> bool {
        let v: redis::Value = redis::cmd("FUNCTION")
            .arg("LIST")
            .arg("LIBRARYNAME")
            .arg(&lib)
            .query(&mut redis.conn())
            .unwrap();
        matches!(v, redis::Value::Array(ref a) if !a.is_empty())
    };
    assert!(listed(&redis), "{lib} is loaded");
    for what in ["SCRIPT", "FUNCTION"] {
        let _: () = redis::cmd(what)
            .arg("FLUSH")
            .query(&mut redis.conn())
            .unwrap();
    }
    assert!(!listed(&redis));
    // The next call finds no function, loads the library and succeeds.
    assert_eq!(app.join("r").await.status, 200);
    assert!(listed(&redis), "{lib} is loaded again");
    assert_eq!(app.engine.admin_store().stats("r").await.unwrap().active, 2);
    // The per-visitor limiter runs no script: a flush leaves it answering.
    let v = anteroom::domain::identity::VisitorId::random();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut redis.conn())
        .unwrap();
    assert!(app
        .engine
        .check_visitor_limit(&v, anteroom::domain::ratelimit::LimitedAction::Status)
        .await
        .is_ok());
}

/// A rolling upgrade runs an older library beside this one: its writes bump the config's
/// `version` but know nothing of `rev`. The parsed config this library keeps in Redis's
/// Lua VM must not hide them, nor a write its VM never ran, nor outlive a FLUSHALL.
#[tokio::test]
async fn a_kept_room_config_never_hides_a_write() {
    use anteroom::store::prelude::*;
    use anteroom::store::VisitorState;
    let redis = RedisServer::start();
    let prefix = crate::helpers::prefix();
    let s = crate::helpers::redis_store(&redis.url(), &prefix).await;
    assert!(s.put_room(&room("r", 1), true).await.unwrap());
    let visitor = |i: u32| format!("{i:032x}");
    assert_eq!(s.join("r", &visitor(1)).await.unwrap().capacity, 1);
    // The older library's patch: the field and the version, no `rev`.
    let cfg = format!("{prefix}:room:{{r}}:cfg");
    let _: () = redis::pipe()
        .cmd("HSET")
        .arg(&cfg)
        .arg("capacity")
        .arg(4)
        .ignore()
        .cmd("HINCRBY")
        .arg(&cfg)
        .arg("version")
        .arg(1)
        .ignore()
        .query(&mut redis.conn())
        .unwrap();
    let snap = s.join("r", &visitor(2)).await.unwrap();
    assert_eq!((snap.state, snap.capacity), (VisitorState::Admitted, 4));
    // A node whose Lua VM did not run the write: a replica applies a script's effects,
    // not the script, so once promoted it may hold a config kept before the room was
    // deleted and written again on the old master, at the same version. `rev` differs.
    let version: u64 = redis::cmd("HGET")
        .arg(&cfg)
        .arg("version")
        .query(&mut redis.conn())
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg(&cfg)
        .arg("capacity")
        .arg(5)
        .arg("rev")
        .arg("1")
        .query(&mut redis.conn())
        .unwrap();
    let snap = s.status("r", &visitor(2)).await.unwrap();
    assert_eq!(snap.capacity, 5, "same version {version}, another rev");
    // A room an older library wrote from scratch (no `rev`) is read on every call.
    let _: () = redis::cmd("DEL")
        .arg(&cfg)
        .query(&mut redis.conn())
        .unwrap();
    assert!(s.put_room(&room("r", 6), true).await.unwrap());
    let _: () = redis::cmd("HDEL")
        .arg(&cfg)
        .arg("rev")
        .query(&mut redis.conn())
        .unwrap();
    assert_eq!(s.status("r", &visitor(2)).await.unwrap().capacity, 6);
    let _: () = redis::cmd("HSET")
        .arg(&cfg)
        .arg("capacity")
        .arg(8)
        .query(&mut redis.conn())
        .unwrap();
    assert_eq!(s.status("r", &visitor(2)).await.unwrap().capacity, 8);
    // Everything flushed: the room is gone, whatever was kept.
    let _: () = redis::cmd("FLUSHALL").query(&mut redis.conn()).unwrap();
    assert!(matches!(
        s.status("r", &visitor(2)).await,
        Err(anteroom::store::StoreError::NoSuchRoom)
    ));
    assert!(s.put_room(&room("r", 9), true).await.unwrap());
    assert_eq!(s.status("r", &visitor(2)).await.unwrap().capacity, 9);
}

/// The limiter's counter gets its window's expiry from a second command. A counter left
/// without one (a crash between the two, a hand-made key) must not refuse its visitor for
/// good: its next hit gives it the window.
#[tokio::test]
async fn a_limiter_counter_left_without_an_expiry_gets_its_window_on_the_next_hit() {
    use anteroom::store::prelude::*;
    let redis = RedisServer::start();
    let prefix = crate::helpers::prefix();
    let s = crate::helpers::redis_store(&redis.url(), &prefix).await;
    let key = format!("{prefix}:rl:{{v}}");
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg(5)
        .query(&mut redis.conn())
        .unwrap();
    let refused = s.hit_window("v", 5, 1000).await.unwrap();
    assert_eq!((refused.allowed, refused.count), (false, 6));
    assert!(
        (1..=1000).contains(&refused.reset_ms),
        "{}",
        refused.reset_ms
    );
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query(&mut redis.conn())
        .unwrap();
    assert!(
        (1..=1000).contains(&ttl),
        "the counter has its window now: {ttl}"
    );
    wait_until(Duration::from_secs(10), "the window to reset", || async {
        s.hit_window("v", 5, 1000)
            .await
            .unwrap()
            .allowed
            .then_some(())
    })
    .await;
    // And the hit that opened the new window gave it its expiry.
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query(&mut redis.conn())
        .unwrap();
    assert!((1..=1000).contains(&ttl), "{ttl}");
}

#[tokio::test]
async fn the_visitor_limiter_fails_open_when_redis_is_down() {
    let mut redis = RedisServer::start();
    let mut s = test_settings(
        Some(redis.url()),
        &crate::helpers::prefix(),
        vec![room("r", 5)],
    );
    s.rate_limit.visitor_requests = 1;
    let app = spawn_app(s).await;
    let v = VisitorId::random();
    assert!(app
        .engine
        .check_visitor_limit(&v, LimitedAction::Status)
        .await
        .is_ok());
    assert!(app
        .engine
        .check_visitor_limit(&v, LimitedAction::Status)
        .await
        .is_err());
    redis.kill();
    assert!(
        app.engine
            .check_visitor_limit(&v, LimitedAction::Status)
            .await
            .is_ok(),
        "limiting is protection, not correctness: it lets the request through"
    );
    let m = app.get("/metrics").await.body;
    assert!(m
        .as_str()
        .unwrap()
        .contains("anteroom_store_errors_total{op=\"rate_limit\"} 1"));
}

/// An instance SIGKILLed while it holds 1,000 queued sockets: each visitor reconnects to
/// another instance with its token and finds its place, in the same order; nobody is
/// lost (the places live in Redis, and the reconnections come well within the heartbeat
/// timeout). The time for all 1,000 to be back is printed (RELIABILITY.md quotes it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_with_1000_sockets_loses_no_place() {
    use crate::helpers::ws::{connect, next_json};
    use futures_util::future::join_all;
    const N: usize = 1000;
    let redis = RedisServer::start();
    let prefix = crate::helpers::prefix();
    let mut a = crate::helpers::ServerProcess::start(&format!(
        // 1,000 places from one address (127.0.0.1): the default cap per address is off.
        "redis_url = \"{}\"\nkey_prefix = \"{prefix}\"\n[[rooms]]\nid = \"r\"\ncapacity = 1\nsession_ttl_secs = 600\nheartbeat_timeout_secs = 60\ntarget_url = \"http://example.test/\"\nmax_places_per_ip = 0\n",
        redis.url()
    ));
    let b = spawn_app(test_settings(
        Some(redis.url()),
        &prefix,
        vec![anteroom::room::RoomConfig {
            session_ttl_secs: 600,
            heartbeat_timeout_secs: 60,
            max_places_per_ip: 0,
            ..room("r", 1)
        }],
    ))
    .await;
    let http = reqwest::Client::new();
    let join_a = || async {
        crate::helpers::Reply::from(http.post(a.url("/api/rooms/r/join")).send().await.unwrap())
            .await
    };
    assert_eq!(join_a().await.state(), "admitted"); // holds the only slot
    let mut tokens = Vec::with_capacity(N);
    for i in 0..N {
        let r = join_a().await;
        assert_eq!(r.body["position"], i + 1);
        tokens.push(r.token());
    }
    // Every visitor on a socket to A.
    let port_a = a.port;
    let to_a = |t: &String| {
        let url = format!("ws://127.0.0.1:{port_a}/r/r/ws?token={t}");
        async move {
            tokio_tungstenite::connect_async(url)
                .await
                .map(|(ws, _)| ws)
        }
    };
    let mut sockets = Vec::with_capacity(N);
    for chunk in tokens.chunks(100) {
        let opened = join_all(chunk.iter().map(to_a)).await;
        for ws in opened {
            sockets.push(ws.unwrap());
        }
    }
    for ws in sockets.iter_mut().take(5) {
        assert_eq!(
            next_json(ws, Duration::from_secs(10)).await["type"],
            "status"
        );
    }

    a.kill();
    let killed = Instant::now();
    drop(sockets);
    // Each reconnects to B; its first message is its place.
    let mut positions = Vec::with_capacity(N);
    for chunk in tokens.chunks(100) {
        let got = join_all(chunk.iter().map(|t| async {
            let mut ws = connect(&b, "r", t, None).await.unwrap();
            next_json(&mut ws, Duration::from_secs(10)).await["position"].clone()
        }))
        .await;
        positions.extend(got);
    }
    let back = killed.elapsed();
    let lost = positions
        .iter()
        .enumerate()
        .filter(|(i, p)| **p != serde_json::json!(i + 1))
        .count();
    assert_eq!(lost, 0, "places lost or moved");
    assert_eq!(
        b.engine
            .admin_store()
            .stats("r")
            .await
            .unwrap()
            .queue_length,
        N as u64
    );
    eprintln!(
        "instance killed with {N} sockets: all {N} back on the other instance in {:.2} s, {lost} places lost",
        back.as_secs_f64()
    );
}

/// A TCP proxy between one instance and Redis that can blackhole the traffic (bytes stop
/// flowing both ways and are delivered when it heals, as a network partition does).
pub(crate) struct Blackhole {
    pub(crate) port: u16,
    cut: tokio::sync::watch::Sender<bool>,
}

impl Blackhole {
    /// Starts the proxy (on the current Tokio runtime) in front of `upstream`.
    pub(crate) fn start(upstream: u16) -> Self {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                else {
                    continue;
                };
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(Self::pipe(cr, sw, rx.clone()));
                tokio::spawn(Self::pipe(sr, cw, rx.clone()));
            }
        });
        Self { port, cut }
    }

    /// Copies `from` to `to`, holding each chunk while the link is cut.
    async fn pipe(
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        mut cut: tokio::sync::watch::Receiver<bool>,
    ) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            while *cut.borrow_and_update() {
                if cut.changed().await.is_err() {
                    return;
                }
            }
            if to.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    }

    pub(crate) fn set(&self, cut: bool) {
        self.cut.send_replace(cut);
    }
}

/// One instance cut off from Redis by a blackholing proxy while another keeps working:
/// the cut-off instance answers joins 503 within its store timeout, says so on
/// `/readyz`, and still lets an admitted visitor's pass through (checked offline, marked
/// degraded); the other instance goes on. When the link heals, the cut-off instance
/// recovers without a restart, and nobody is admitted twice or past capacity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_cut_off_from_redis_degrades_and_recovers() {
    let redis = RedisServer::start();
    let prefix = crate::helpers::prefix();
    let proxy = Blackhole::start(redis.port);
    let a = spawn_app(test_settings(
        Some(redis.url()),
        &prefix,
        vec![room("r", 1)],
    ))
    .await;
    let b = spawn_app(test_settings(
        Some(format!("redis://127.0.0.1:{}", proxy.port)),
        &prefix,
        vec![room("r", 1)],
    ))
    .await;
    let holder = b.join("r").await;
    assert_eq!(holder.state(), "admitted");
    let pass = holder.body["pass"].as_str().unwrap().to_string();
    let waiting = a.join("r").await.token();

    proxy.set(true);
    let t = Instant::now();
    let cut_join = b.join("r").await;
    let took = t.elapsed();
    assert_eq!(cut_join.status, 503, "{:?}", cut_join.body);
    assert!(
        took < Duration::from_secs(3),
        "a 503 within the store timeout, took {took:?}"
    );
    assert_eq!(b.get("/readyz").await.status, 503);
    let v = b.verify("r", &pass).await;
    assert_eq!(v.status, 200);
    assert_eq!(
        v.headers
            .get("x-anteroom-degraded")
            .map(|h| h.to_str().unwrap()),
        Some("store-unreachable")
    );
    // The other instance is not affected.
    assert_eq!(a.join("r").await.body["position"], 2);
    assert_eq!(a.status("r", &waiting).await.body["position"], 1);

    proxy.set(false);
    let healed = Instant::now();
    wait_until(
        Duration::from_secs(10),
        "the cut-off instance to recover",
        || async {
            (b.get("/readyz").await.status == 200 && b.status("r", &waiting).await.status == 200)
                .then_some(())
        },
    )
    .await;
    let recovered = healed.elapsed();
    // The held join may have reached Redis late: it made at most one place, behind.
    let stats = a.engine.admin_store().stats("r").await.unwrap();
    assert!(stats.active <= 1 && stats.queue_length <= 3, "{stats:?}");
    // The holder leaves through B: the first in line is let in, once.
    assert_eq!(b.release("r", &holder.token()).await.status, 204);
    assert_eq!(a.status("r", &waiting).await.state(), "admitted");
    let stats = a.engine.admin_store().stats("r").await.unwrap();
    assert_eq!(stats.active, 1, "{stats:?}");
    assert_eq!(stats.admitted_total, 2, "nobody admitted twice: {stats:?}");
    eprintln!(
        "instance cut off from Redis: join answered 503 in {:.2} s; recovered {:.2} s after the link healed",
        took.as_secs_f64(),
        recovered.as_secs_f64()
    );
}
