//! Adaptive outflow and no-shows (docs/outflow.md): the `[rooms.outflow]` table read from a
//! file, the health endpoint, and the controller on real stores.

use anteroom::config::Settings;
use anteroom::room::OutflowMode;

/// Loads a config file holding `body` after one room's keys.
fn load(body: &str) -> Result<Settings, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anteroom.toml");
    std::fs::write(
        &path,
        format!("[[rooms]]\nid = \"r\"\ntarget_url = \"https://x.example/\"\n{body}"),
    )
    .unwrap();
    Settings::load(Some(&path)).map_err(|e| e.to_string())
}

#[test]
fn a_room_sets_part_of_its_outflow_table_and_takes_the_rest_from_the_defaults() {
    let s = load("[rooms.outflow]\nmode = \"adaptive\"\nmax_capacity = 300\n").unwrap();
    let o = &s.rooms[0].outflow;
    assert_eq!(o.mode, OutflowMode::Adaptive);
    assert_eq!(o.max_capacity, 300);
    let d = &s.room_defaults.outflow;
    assert_eq!(
        (o.min_capacity, o.target_p95_ms, o.interval_secs),
        (d.min_capacity, d.target_p95_ms, d.interval_secs)
    );
    assert_eq!(
        s.rooms[0].claim_timeout_secs, 0,
        "no-show reclaim is off by default"
    );
}

#[test]
fn bad_outflow_settings_in_a_file_stop_start_up_naming_the_field() {
    let cases = [
        ("mode = \"turbo\"", "mode"),
        (
            "min_capacity = 50\nmax_capacity = 10",
            "rooms[0].outflow.min_capacity",
        ),
        ("target_p95_ms = 0", "rooms[0].outflow.target_p95_ms"),
        ("max_error_rate = 2.0", "rooms[0].outflow.max_error_rate"),
        (
            "health_secret = \"short\"",
            "rooms[0].outflow.health_secret",
        ),
        ("interval_secs = 0", "rooms[0].outflow.interval_secs"),
        ("target_p95 = 100", "target_p95"),
    ];
    for (keys, field) in cases {
        let err = load(&format!("[rooms.outflow]\n{keys}\n")).unwrap_err();
        assert!(err.contains(field), "{keys}: {err}");
    }
}

#[test]
fn a_claim_timeout_not_below_the_session_ttl_is_refused() {
    let err = load("session_ttl_secs = 60\nclaim_timeout_secs = 60\n").unwrap_err();
    assert!(err.contains("rooms[0].claim_timeout_secs"), "{err}");
    load("session_ttl_secs = 60\nclaim_timeout_secs = 30\n").unwrap();
}

// --- The health endpoint and the controller on a real Redis ---

use std::time::Duration;

use anteroom::config::GatewayRoute;
use anteroom::room::{OutflowConfig, RoomConfig, Secret};
use serde_json::{json, Value};

use crate::helpers::origin::{Shape, SlowOrigin};
use crate::helpers::{
    client, free_port, prefix, room, spawn_app, test_settings, wait_until, RedisServer, Reply,
    TestApp,
};

const SECRET: &str = "0123456789abcdef0123456789abcdef-health";

/// An adaptive room: capacity `cap`, between `min` and `max`, p95 target 100 ms, deciding
/// every second.
fn adaptive(id: &str, cap: u64, min: u64, max: u64) -> RoomConfig {
    RoomConfig {
        outflow: OutflowConfig {
            mode: OutflowMode::Adaptive,
            min_capacity: min,
            max_capacity: max,
            target_p95_ms: 100,
            max_error_rate: 0.05,
            interval_secs: 1,
            health_secret: Some(Secret::new(SECRET)),
        },
        ..room(id, cap)
    }
}

async fn report(app: &TestApp, room: &str, bearer: Option<&str>, body: Value) -> Reply {
    let mut req = client().post(app.url(&format!("/api/rooms/{room}/health")));
    if let Some(b) = bearer {
        req = req.bearer_auth(b);
    }
    Reply::from(req.json(&body).send().await.unwrap()).await
}

async fn capacity(app: &TestApp, room: &str) -> u64 {
    app.engine.admin_store().stats(room).await.unwrap().capacity
}

#[tokio::test]
async fn a_health_report_needs_the_rooms_secret_and_sane_figures() {
    let redis = RedisServer::start();
    let plain = room("plain", 5);
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &prefix(),
        vec![adaptive("r", 10, 2, 50), plain],
    ))
    .await;
    let good = json!({"p95_ms": 120.5, "error_rate": 0.01});

    for bearer in [None, Some("wrong"), Some(&SECRET[..SECRET.len() - 1])] {
        let r = report(&app, "r", bearer, good.clone()).await;
        assert_eq!(
            (r.status, r.error_code()),
            (401, "invalid_token"),
            "{bearer:?}"
        );
    }
    // Without a secret the room takes no reports, and says why.
    let r = report(&app, "plain", Some(SECRET), good.clone()).await;
    assert_eq!(r.status, 401);
    assert!(r.body.to_string().contains("health_secret"), "{:?}", r.body);
    assert_eq!(
        report(&app, "nope", Some(SECRET), good.clone())
            .await
            .status,
        404
    );
    // The credential comes before the body: nonsense without it is still a 401.
    let r = report(&app, "r", None, json!({"p95_ms": "fast"})).await;
    assert_eq!(r.status, 401);

    let nonsense = [
        (json!({"p95_ms": -1, "error_rate": 0}), "p95_ms"),
        (json!({"p95_ms": 1e12, "error_rate": 0}), "p95_ms"),
        (json!({"p95_ms": 100, "error_rate": 1.5}), "error_rate"),
        (json!({"p95_ms": 100, "error_rate": -0.1}), "error_rate"),
    ];
    for (body, field) in nonsense {
        let r = report(&app, "r", Some(SECRET), body.clone()).await;
        assert_eq!((r.status, r.error_code()), (400, "invalid_field"), "{body}");
        assert_eq!(r.body["error"]["field"], field, "{body}");
    }
    for body in [
        json!({"p95_ms": 100}),
        json!({"p95_ms": 100, "error_rate": 0, "extra": 1}),
        json!("p95 100"),
    ] {
        let r = report(&app, "r", Some(SECRET), body.clone()).await;
        assert_eq!((r.status, r.error_code()), (400, "bad_request"), "{body}");
    }
    let store = app.engine.outflow_store();
    assert!(
        store.origin_reports("r").await.unwrap().is_empty(),
        "nothing refused was kept"
    );

    let r = report(&app, "r", Some(SECRET), good).await;
    assert_eq!(r.status, 204, "{:?}", r.body);
    let kept = store.origin_reports("r").await.unwrap();
    assert_eq!(kept.len(), 1);
    let kept: Value = serde_json::from_str(&kept[0]).unwrap();
    assert_eq!(
        (kept["p95_ms"].as_f64(), kept["error_rate"].as_f64()),
        (Some(120.5), Some(0.01))
    );
}

/// Reports a slow origin to `app` every 300 ms until dropped.
fn keep_reporting(app: &TestApp, p95_ms: f64) -> tokio::task::JoinHandle<()> {
    let url = app.url("/api/rooms/r/health");
    tokio::spawn(async move {
        loop {
            let _ = client()
                .post(&url)
                .bearer_auth(SECRET)
                .json(&json!({"p95_ms": p95_ms, "error_rate": 0}))
                .send()
                .await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    })
}

fn decisions(app: &TestApp) -> u64 {
    ["raise", "lower", "hold"]
        .iter()
        .map(|d| {
            app.engine
                .metrics()
                .outflow_decisions
                .with_label_values(&["r", d])
                .get()
        })
        .sum()
}

#[tokio::test]
async fn one_instance_decides_for_a_room_and_another_takes_over_when_it_stops() {
    let redis = RedisServer::start();
    let p = prefix();
    let settings = || test_settings(Some(redis.url()), &p, vec![adaptive("r", 40, 5, 50)]);
    let a = spawn_app(settings()).await;
    let b = spawn_app(settings()).await;
    let reporter = keep_reporting(&a, 400.0);

    // 40 → 20 → 10 → 5 (200 over 400: the largest cut, a half).
    wait_until(
        Duration::from_secs(15),
        "capacity cut to the minimum",
        || async { (capacity(&a, "r").await == 5).then_some(()) },
    )
    .await;
    let (da, db) = (decisions(&a), decisions(&b));
    assert!(
        (da == 0) != (db == 0),
        "exactly one instance decides: {da} and {db}"
    );
    let audit: Vec<Value> = a
        .engine
        .admin_store()
        .audit(50)
        .await
        .unwrap()
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let cuts: Vec<_> = audit
        .iter()
        .filter(|e| e["room"] == "r" && e["action"] == "set capacity")
        .collect();
    assert_eq!(cuts.len(), 3, "{audit:?}");
    assert!(cuts.iter().all(|e| e["who"] == "outflow"), "{cuts:?}");
    assert_eq!(
        cuts.iter()
            .map(|e| e["new"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [5, 10, 20]
    );

    // The deciding instance stops (and gives its lease up); the other goes on.
    let (leader, other) = if da > 0 { (a, b) } else { (b, a) };
    leader.shutdown.cancel();
    drop(leader);
    reporter.abort();
    let _reporter = keep_reporting(&other, 400.0);
    let before = decisions(&other);
    wait_until(
        Duration::from_secs(10),
        "the other instance deciding",
        || async { (decisions(&other) > before + 1).then_some(()) },
    )
    .await;
    assert_eq!(capacity(&other, "r").await, 5, "held at the minimum");
}

#[tokio::test]
async fn waiting_visitors_are_told_the_origin_is_busy_when_it_lowers_the_capacity() {
    let redis = RedisServer::start();
    let app = spawn_app(test_settings(
        Some(redis.url()),
        &prefix(),
        vec![adaptive("r", 4, 2, 50)],
    ))
    .await;
    for _ in 0..4 {
        assert_eq!(app.join("r").await.state(), "admitted");
    }
    let queued = app.join("r").await;
    assert_eq!(queued.state(), "queued");
    let _reporter = keep_reporting(&app, 500.0);
    let token = queued.token();
    wait_until(
        Duration::from_secs(10),
        "eta_reason origin_busy",
        || async {
            let s = app.status("r", &token).await;
            (s.body["eta_reason"] == "origin_busy").then_some(())
        },
    )
    .await;
    assert!(capacity(&app, "r").await < 4);
}

/// The built-in gateway's own measurements drive the controller: an origin that turns
/// slow gets fewer visitors within a few intervals, and more again once it recovers.
#[tokio::test]
async fn the_gateways_measurements_lower_the_capacity_when_the_origin_slows_and_raise_it_after() {
    let redis = RedisServer::start();
    let origin = SlowOrigin::start(Shape {
        base_ms: 5.0,
        knee: 1000.0,
        limit: 10_000,
    })
    .await;
    let gw_port = free_port();
    let mut s = test_settings(Some(redis.url()), &prefix(), vec![adaptive("r", 20, 4, 40)]);
    s.rooms[0].target_url = format!("http://127.0.0.1:{gw_port}/");
    s.gateway.listen = Some(format!("127.0.0.1:{gw_port}"));
    s.gateway.upstream = Some(origin.url());
    s.gateway.routes = vec![GatewayRoute {
        host: None,
        path_prefix: "/shop".into(),
        room: "r".into(),
    }];
    let app = spawn_app(s).await;
    // 20 visitors in, browsing without pause; 30 more waiting.
    let mut browsers = Vec::new();
    for _ in 0..20 {
        let r = app.join("r").await;
        assert_eq!(r.state(), "admitted");
        let pass = r.body["pass"].as_str().unwrap().to_string();
        let url = format!("http://127.0.0.1:{gw_port}/shop/page");
        browsers.push(tokio::spawn(async move {
            let c = client();
            loop {
                let _ = c
                    .get(&url)
                    .header("cookie", format!("anteroom_pass_r={pass}"))
                    .send()
                    .await;
            }
        }));
    }
    for _ in 0..30 {
        assert_eq!(app.join("r").await.state(), "queued");
    }

    // A deploy gone wrong: every page takes 300 ms, three times the target.
    origin.set_slowness(60.0);
    wait_until(Duration::from_secs(10), "capacity lowered", || async {
        (capacity(&app, "r").await < 20).then_some(())
    })
    .await;
    let low = wait_until(Duration::from_secs(10), "capacity at its low", || async {
        let c = capacity(&app, "r").await;
        (c <= 10).then_some(c)
    })
    .await;
    // Recovered: 5 ms again, and it climbs (the 20 sessions live fill it).
    origin.set_slowness(1.0);
    wait_until(Duration::from_secs(15), "capacity raised again", || async {
        (capacity(&app, "r").await > low).then_some(())
    })
    .await;
    // The controller writes the capacity, then notes its decision: the raise's point
    // follows the capacity seen above by a store call.
    let points = wait_until(Duration::from_secs(5), "the raise noted", || async {
        let points = anteroom::outflow::points(app.engine.outflow_store(), "r", 50).await;
        points
            .iter()
            .any(|p| p.decision == "raise")
            .then_some(points)
    })
    .await;
    assert!(points
        .iter()
        .any(|p| p.decision == "lower" && p.p95_ms.unwrap_or(0.0) > 100.0));
    for b in browsers {
        b.abort();
    }
}

// --- The benchmark: fixed capacities against adaptive, on a shop that slows under load ---

/// One run's figures.
#[derive(Debug, Default)]
struct Run {
    label: String,
    admitted: u64,
    pages_ok: u64,
    pages_failed: u64,
    /// The origin's own p95 over the whole run, and per 5 s stretch.
    p95_ms: f64,
    stretches: Vec<(f64, f64, u64)>, // (p95 ms, error share, capacity at the end)
    /// The controller's decisions (capacity after, gateway p95 ms), oldest first.
    decisions: Vec<(u64, Option<f64>)>,
}

impl Run {
    fn error_share(&self) -> f64 {
        let total = self.pages_ok + self.pages_failed;
        if total == 0 {
            0.0
        } else {
            self.pages_failed as f64 / total as f64
        }
    }
}

/// The shop: 20 ms a page alone, twice that with 5 requests in flight, 503 past 60.
const SHOP: Shape = Shape {
    base_ms: 20.0,
    knee: 5.0,
    limit: 60,
};
const TARGET_P95_MS: u64 = 250;
const MAX_ERROR_RATE: f64 = 0.02;

/// A crowd of `crowd` visitors arriving evenly over `secs` seconds at a room in front of
/// [`SHOP`] through the gateway (each polls its status every 2 s while it waits);
/// each, once admitted, browses 5 pages 100 ms apart and leaves. `slow` = (from s, to s,
/// factor) slows the shop down in between.
async fn sale(
    label: &str,
    outflow: Option<OutflowConfig>,
    capacity: u64,
    crowd: usize,
    secs: u64,
    slow: Option<(u64, u64, f64)>,
) -> Run {
    let redis = RedisServer::start();
    let origin = SlowOrigin::start(SHOP).await;
    let gw_port = free_port();
    let mut r = room("r", capacity);
    r.max_places_per_ip = 0;
    r.session_ttl_secs = 600;
    r.heartbeat_timeout_secs = 600;
    if let Some(o) = outflow {
        r.outflow = o;
    }
    let mut s = test_settings(Some(redis.url()), &prefix(), vec![r]);
    s.rooms[0].target_url = format!("http://127.0.0.1:{gw_port}/");
    s.gateway.listen = Some(format!("127.0.0.1:{gw_port}"));
    s.gateway.upstream = Some(origin.url());
    s.gateway.routes = vec![GatewayRoute {
        host: None,
        path_prefix: "/shop".into(),
        room: "r".into(),
    }];
    let app = std::sync::Arc::new(spawn_app(s).await);
    let admitted = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut tasks = Vec::new();
    for i in 0..crowd {
        let (app, admitted, stop) = (app.clone(), admitted.clone(), stop.clone());
        let arrives = Duration::from_secs_f64(secs as f64 * i as f64 / crowd as f64);
        let page = format!("http://127.0.0.1:{gw_port}/shop/page");
        tasks.push(tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(arrives) => {}
            }
            let c = client();
            // A refused or cut request (the machine is busy) is tried again a second
            // later, as a page would.
            let call = |req: reqwest::RequestBuilder| async move {
                match req.send().await {
                    Ok(res) => res.json::<Value>().await.ok(),
                    Err(_) => None,
                }
            };
            let mut r = Value::Null;
            while r["visitor_token"].is_null() {
                if stop.is_cancelled() {
                    return;
                }
                r = call(c.post(app.url("/api/rooms/r/join")))
                    .await
                    .unwrap_or_default();
                if r["visitor_token"].is_null() {
                    tokio::time::sleep(Duration::from_millis(1000)).await;
                }
            }
            let token = r["visitor_token"].as_str().unwrap_or_default().to_string();
            while r["state"] != "admitted" {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_millis(2000)) => {}
                }
                let status = c.get(app.url("/api/rooms/r/status")).bearer_auth(&token);
                if let Some(v) = call(status).await {
                    r = v;
                }
            }
            admitted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let pass = r["pass"].as_str().unwrap_or_default().to_string();
            for _ in 0..5 {
                if stop.is_cancelled() {
                    return;
                }
                let _ = c
                    .get(&page)
                    .header("cookie", format!("anteroom_pass_r={pass}"))
                    .send()
                    .await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let _ = c
                .post(app.url("/api/rooms/r/release"))
                .bearer_auth(&token)
                .send()
                .await;
        }));
    }
    let mut run = Run {
        label: label.into(),
        ..Run::default()
    };
    let mut all = Vec::new();
    origin.take();
    for t in (5..=secs).step_by(5) {
        if let Some((from, to, factor)) = slow {
            origin.set_slowness(if (from..to).contains(&(t - 5)) {
                factor
            } else {
                1.0
            });
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
        let served = origin.take();
        let total = served.ok + served.failed;
        run.pages_ok += served.ok;
        run.pages_failed += served.failed;
        all.extend(served.latencies.iter().copied());
        run.stretches.push((
            served.p95_ms,
            if total == 0 {
                0.0
            } else {
                served.failed as f64 / total as f64
            },
            capacity_of(&app).await,
        ));
    }
    run.decisions = anteroom::outflow::points(app.engine.outflow_store(), "r", 120)
        .await
        .iter()
        .map(|p| (p.capacity, p.p95_ms))
        .collect();
    stop.cancel();
    for t in tasks {
        let _ = t.await;
    }
    run.admitted = admitted.load(std::sync::atomic::Ordering::Relaxed);
    all.sort_by(f64::total_cmp);
    run.p95_ms = if all.is_empty() {
        0.0
    } else {
        all[((all.len() as f64 * 0.95).ceil() as usize).clamp(1, all.len()) - 1]
    };
    run
}

async fn capacity_of(app: &TestApp) -> u64 {
    app.engine
        .admin_store()
        .stats("r")
        .await
        .map(|s| s.capacity)
        .unwrap_or(0)
}

fn adaptive_outflow() -> OutflowConfig {
    OutflowConfig {
        mode: OutflowMode::Adaptive,
        min_capacity: 5,
        max_capacity: 200,
        target_p95_ms: TARGET_P95_MS,
        max_error_rate: MAX_ERROR_RATE,
        interval_secs: 2,
        health_secret: None,
    }
}

fn row(r: &Run) -> String {
    let worst = r.stretches.iter().map(|s| s.0).fold(0.0, f64::max);
    format!(
        "| {} | {} | {} | {:.1} % | {:.0} | {:.0} |",
        r.label,
        r.admitted,
        r.pages_ok,
        100.0 * r.error_share(),
        r.p95_ms,
        worst
    )
}

/// Prints an adaptive run's trace: per 5 s stretch, then decision by decision.
fn trace(r: &Run) {
    println!(
        "{} per 5 s (p95 ms, error share, capacity): {:?}",
        r.label, r.stretches
    );
    let d: Vec<String> = r
        .decisions
        .iter()
        .map(|(c, p)| format!("{c}@{:.0}", p.unwrap_or(0.0)))
        .collect();
    println!(
        "{} decisions (capacity@gateway p95): {}",
        r.label,
        d.join(" ")
    );
}

/// Whether a run kept the shop within the issue's bounds: p95 within 1.2 × the target
/// and errors under the limit.
fn within_targets(r: &Run) -> bool {
    r.p95_ms <= TARGET_P95_MS as f64 * 1.2 && r.error_share() < MAX_ERROR_RATE
}

/// The adaptive run of the benchmark: the controller starting at capacity 30.
async fn adaptive_sale(crowd: usize, secs: u64) -> Run {
    sale(
        "adaptive (starts at 30)",
        Some(adaptive_outflow()),
        30,
        crowd,
        secs,
        None,
    )
    .await
}

/// The best fixed capacity of the sweep (fixed 90) and adaptive, back to back and twice
/// (fixed, adaptive, adaptive, fixed), so that each pair meets the same load on a shared
/// machine; prints adaptive / fixed per pair.
async fn bench_pairs(crowd: usize, secs: u64) {
    let fixed = || sale("fixed 90", None, 90, crowd, secs, None);
    let adaptive = || adaptive_sale(crowd, secs);
    let f1 = fixed().await;
    let a1 = adaptive().await;
    let a2 = adaptive().await;
    let f2 = fixed().await;
    println!("| pair | run | admitted | pages served | errors | p95 (ms) | worst 5 s p95 (ms) |");
    println!("|---|---|---|---|---|---|---|");
    for (i, (f, a)) in [(&f1, &a1), (&f2, &a2)].into_iter().enumerate() {
        for r in [f, a] {
            println!("| {} {}", i + 1, row(r));
        }
        println!(
            "pair {}: adaptive / fixed 90 = {:.1} % (fixed within targets: {}, adaptive: {})",
            i + 1,
            100.0 * a.admitted as f64 / f.admitted.max(1) as f64,
            within_targets(f),
            within_targets(a)
        );
    }
    trace(&a1);
    trace(&a2);
}

/// The fixed capacities the knee sweep runs (`OUTFLOW_BENCH_ONLY=knee`): around fixed 90,
/// the capacity at which the shop reaches the 2 % error line (the first knee run, 12:27:
/// 80 kept both targets in both runs with 0 % errors, 90 broke the error target in one of
/// two, 100 failed 23 % of pages: hence 85).
const KNEE_SWEEP: [u64; 6] = [60, 70, 80, 85, 90, 100];

/// The best fixed capacity that kept both targets: among the capacities **every one of
/// whose runs** kept the shop's p95 within 1.2 × the target and its errors under the
/// limit ([`within_targets`]), the one with the most admissions on average over its runs
/// (capacity, mean admitted). A capacity that broke a target in any run is not a
/// capacity an operator could have set and kept the shop healthy with: it is left out
/// however much it admitted (fixed 180 admits every visitor and fails a quarter of the
/// pages). `None` when no capacity kept both.
fn best_compliant(sweep: &[(u64, Vec<Run>)]) -> Option<(u64, f64)> {
    sweep
        .iter()
        .filter(|(_, runs)| !runs.is_empty() && runs.iter().all(within_targets))
        .map(|(cap, runs)| (*cap, mean_admitted(runs)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn mean_admitted<'a>(runs: impl IntoIterator<Item = &'a Run>) -> f64 {
    let (sum, n) = runs
        .into_iter()
        .fold((0, 0), |(s, n), r| (s + r.admitted, n + 1));
    sum as f64 / f64::from(n.max(1))
}

/// A fixed capacity that broke a target in one of its runs is not the bar, however much
/// it admitted; among those that kept both in every run, the most admissions on average.
#[test]
fn the_best_fixed_capacity_is_the_one_admitting_most_that_kept_both_targets_in_every_run() {
    let run = |admitted, pages_failed, p95_ms| Run {
        admitted,
        pages_ok: 1000 - pages_failed,
        pages_failed,
        p95_ms,
        ..Run::default()
    };
    let sweep = vec![
        (60, vec![run(1000, 0, 170.0), run(1040, 0, 165.0)]),
        // 19 errors in 1,000: under 2 %; p95 300 ms: at 1.2 × 250, still within.
        (80, vec![run(1400, 19, 240.0), run(1380, 0, 300.0)]),
        // Over 2 % errors in one run of two: out, though it admits more.
        (90, vec![run(1600, 15, 250.0), run(1580, 20, 255.0)]),
        // p95 over 1.2 × the target in one run: out.
        (100, vec![run(1700, 0, 310.0), run(1700, 0, 280.0)]),
    ];
    assert_eq!(best_compliant(&sweep), Some((80, 1390.0)));
    assert_eq!(best_compliant(&sweep[2..]), None);
}

/// `OUTFLOW_BENCH_ONLY=knee`: each of [`KNEE_SWEEP`] twice and adaptive twice, in one
/// run and interleaved (60 … 100, adaptive, adaptive, 100 … 60), so that drift in
/// the machine's load falls on every capacity alike; prints every run, the best fixed
/// capacity that kept both targets in all its runs ([`best_compliant`]) and adaptive
/// against it and against fixed 90. About 10 minutes.
async fn bench_knee(crowd: usize, secs: u64) {
    let mut sweep: Vec<(u64, Vec<Run>)> = KNEE_SWEEP.iter().map(|&c| (c, Vec::new())).collect();
    let mut adaptive = Vec::new();
    for round in 0..2 {
        let order: Vec<usize> = if round == 0 {
            (0..sweep.len()).collect()
        } else {
            adaptive.push(adaptive_sale(crowd, secs).await);
            (0..sweep.len()).rev().collect()
        };
        for i in order {
            let cap = sweep[i].0;
            let run = sale(&format!("fixed {cap}"), None, cap, crowd, secs, None).await;
            sweep[i].1.push(run);
        }
        if round == 0 {
            adaptive.push(adaptive_sale(crowd, secs).await);
        }
    }
    println!("| run | admitted | pages served | errors | p95 (ms) | worst 5 s p95 (ms) | within both targets |");
    println!("|---|---|---|---|---|---|---|");
    for r in sweep.iter().flat_map(|(_, runs)| runs).chain(&adaptive) {
        println!("{} {} |", row(r), within_targets(r));
    }
    let a = mean_admitted(&adaptive);
    let per_run: Vec<u64> = adaptive.iter().map(|r| r.admitted).collect();
    println!(
        "adaptive: mean {a:.0} admitted (runs {per_run:?}), every run within both targets: {}",
        adaptive.iter().all(within_targets)
    );
    match best_compliant(&sweep) {
        Some((cap, best)) => println!(
            "best fixed capacity within both targets in every run: fixed {cap}, mean {best:.0} admitted; adaptive / it = {:.1} % (runs: {})",
            100.0 * a / best,
            per_run
                .iter()
                .map(|&n| format!("{:.1} %", 100.0 * n as f64 / best))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => println!("no fixed capacity of {KNEE_SWEEP:?} kept both targets in every run"),
    }
    if let Some((_, runs)) = sweep.iter().find(|(c, _)| *c == 90) {
        let f90 = mean_admitted(runs);
        println!(
            "fixed 90: mean {f90:.0} admitted, within both targets in {} of {} runs; adaptive / fixed 90 = {:.1} %",
            runs.iter().filter(|r| within_targets(r)).count(),
            runs.len(),
            100.0 * a / f90
        );
    }
    for r in &adaptive {
        trace(r);
    }
}

/// `cargo test --test it outflow::bench_fixed_capacities_against_adaptive -- --ignored
/// --nocapture`: about 5 minutes; the table goes to docs/outflow.md#measured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: minutes, prints a table"]
async fn bench_fixed_capacities_against_adaptive() {
    let (crowd, secs) = (2400, 40);
    let mut runs = Vec::new();
    // `OUTFLOW_BENCH_ONLY=adaptive`: the adaptive runs alone; `=pair`: fixed 90 and
    // adaptive back to back, twice, compared pair by pair; `=pair,slowdown`: then the
    // slowdown run (tuning; the table needs all); `=knee`: fixed 60-100 twice each and
    // adaptive twice, against the best fixed capacity that kept both targets.
    let only = std::env::var("OUTFLOW_BENCH_ONLY").unwrap_or_default();
    if only == "knee" {
        bench_knee(crowd, secs).await;
        return;
    }
    // `=slowdown,long`: the slowdown run alone, 80 s instead of 60 (4,800 visitors), so
    // that the climb after the recovery reaches where the shop held before the slowdown.
    if only == "slowdown,long" {
        slowdown(4800, 80).await;
        return;
    }
    if only.starts_with("pair") {
        bench_pairs(crowd, secs).await;
        if only == "pair,slowdown" {
            slowdown(3600, 60).await;
        }
        return;
    }
    let sweep: &[u64] = if only == "adaptive" {
        &[]
    } else {
        &[20, 40, 60, 90, 180]
    };
    for &cap in sweep {
        runs.push(sale(&format!("fixed {cap}"), None, cap, crowd, secs, None).await);
    }
    runs.push(adaptive_sale(crowd, secs).await);
    println!("| capacity | admitted | pages served | errors | p95 (ms) | worst 5 s p95 (ms) |");
    println!("|---|---|---|---|---|---|");
    for r in &runs {
        println!("{}", row(r));
    }
    trace(runs.last().unwrap());
    slowdown(3600, 60).await;
}

/// The shop 4 × slower from 20 s to 40 s of a `secs` s sale (60 in the table) with
/// `crowd` visitors (as many a second as the others: 60): the capacity follows it down
/// and back up.
async fn slowdown(crowd: usize, secs: u64) {
    let slow = sale(
        &format!("adaptive, shop 4x slower from 20 s to 40 s of {secs} s"),
        Some(adaptive_outflow()),
        30,
        crowd,
        secs,
        Some((20, 40, 4.0)),
    )
    .await;
    println!("{}", row(&slow));
    trace(&slow);
}
