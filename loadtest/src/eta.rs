//! `anteroom-loadtest eta`: plays crowds against a real Anteroom (in this process, over
//! HTTP on loopback) on a real Redis (started here), records the estimate each visitor
//! was shown at join and every change with its reason, and prints per scenario the
//! median error of the ETA at join, the share of visitors let in inside the shown range
//! and the largest upward revision. All scenarios run at once, each in its own room.
//! Bounded: every visitor gives up at the scenario's deadline.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anteroom::config::Settings;
use anteroom::domain::eta_sim::scenario::Admin;
use anteroom::room::RoomConfig;
use anteroom::store::{RoomPatch, StockChange};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::Value;

pub mod drawn;

/// How an admitted visitor leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stay {
    /// Releases after this long.
    Release(Duration),
    /// Keeps the session until it expires.
    Hold,
}

#[derive(Clone, Debug)]
struct Plan {
    join_at: Duration,
    stay: Stay,
    /// Goes silent right after joining (abandons).
    silent: bool,
}

struct Scenario {
    name: &'static str,
    room: RoomConfig,
    plans: Vec<Plan>,
    actions: Vec<(Duration, Admin)>,
    /// Whether the future was knowable at join (see the docs' table).
    knowable: &'static str,
    /// Only visitors joining after this count in the error and range figures (before,
    /// their wait depended on an admin's later decision).
    measure_after: Duration,
    deadline: Duration,
}

/// One status a visitor saw.
#[derive(Clone, Debug)]
struct Seen {
    at_ms: u64,
    eta: u64,
    low: u64,
    high: u64,
    known: bool,
    reason: Option<String>,
    /// Place in line (read in the trace, through `Debug`).
    #[allow(dead_code)]
    position: u64,
}

#[derive(Clone, Debug, Default)]
struct Record {
    join_ms: u64,
    walked_in: bool,
    at_join: Option<Seen>,
    seen: Vec<Seen>,
    admitted_ms: Option<u64>,
    silent: bool,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn room(id: &str, capacity: u64, ttl: u64) -> RoomConfig {
    RoomConfig {
        id: id.into(),
        capacity,
        session_ttl_secs: ttl,
        heartbeat_timeout_secs: 10,
        target_url: "http://127.0.0.1:9/".into(),
        ..RoomConfig::default()
    }
}

fn uniform(rng: &mut StdRng, lo: f64, hi: f64) -> Duration {
    Duration::from_secs_f64(rng.gen_range(lo..hi))
}

/// `n` visitors over `spread` seconds, each leaving after U(lo, hi) s, except a
/// `hold` share who keep the whole session.
fn crowd(rng: &mut StdRng, n: usize, spread: f64, lo: f64, hi: f64, hold: f64) -> Vec<Plan> {
    (0..n)
        .map(|i| Plan {
            join_at: Duration::from_secs_f64(spread * i as f64 / n as f64),
            stay: if rng.gen_bool(hold) {
                Stay::Hold
            } else {
                Stay::Release(uniform(rng, lo, hi))
            },
            silent: false,
        })
        .collect()
}

// One push per scenario keeps each one's comment and set-up (plans drawn from the shared
// generator, in order) together.
#[allow(clippy::vec_init_then_push)]
fn scenarios(scale: f64) -> Vec<Scenario> {
    let mut rng = StdRng::seed_from_u64(7);
    let n = |x: usize| ((x as f64 * scale).round() as usize).max(4);
    let secs = Duration::from_secs;
    let mut out = Vec::new();
    // 1. Steady drain: most leave after 0.5–2.5 s, a few keep the whole 30 s session.
    out.push(Scenario {
        name: "steady drain, early releases",
        room: room("eta-drain", 6, 30),
        plans: crowd(&mut rng, n(120), 6.0, 0.5, 2.5, 0.1),
        actions: vec![],
        knowable: "yes",
        measure_after: Duration::ZERO,
        deadline: secs(240),
    });
    // 2. Everyone holds the full session.
    out.push(Scenario {
        name: "everyone holds the full session",
        room: room("eta-full", 5, 10),
        plans: crowd(&mut rng, n(40), 20.0, 0.0, 1.0, 1.0),
        actions: vec![],
        knowable: "yes",
        measure_after: Duration::ZERO,
        deadline: secs(150),
    });
    // 3. Rate cap: 20 a minute, sessions short.
    out.push(Scenario {
        name: "rate cap 20/min",
        room: RoomConfig {
            max_admissions_per_minute: 20,
            ..room("eta-rate", 50, 30)
        },
        plans: crowd(&mut rng, n(40), 10.0, 1.0, 3.0, 0.0),
        actions: vec![],
        knowable: "yes",
        measure_after: Duration::ZERO,
        deadline: secs(200),
    });
    // 4. Capacity raised mid-queue (2 → 6 at 20 s).
    out.push(Scenario {
        name: "capacity raised 2→6 at 20 s",
        room: room("eta-up", 2, 20),
        plans: crowd(&mut rng, n(60), 40.0, 2.0, 6.0, 0.0),
        actions: vec![(secs(20), Admin::Capacity(6))],
        knowable: "for those joining after the change (20 s)",
        measure_after: secs(21),
        deadline: secs(200),
    });
    // 5. Capacity lowered mid-queue (6 → 2 at 15 s).
    out.push(Scenario {
        name: "capacity lowered 6→2 at 15 s",
        room: room("eta-down", 6, 20),
        plans: crowd(&mut rng, n(60), 40.0, 2.0, 6.0, 0.0),
        actions: vec![(secs(15), Admin::Capacity(2))],
        knowable: "for those joining after the change (15 s)",
        measure_after: secs(16),
        deadline: secs(240),
    });
    // 6. Pause 30 s, then resume.
    out.push(Scenario {
        name: "pause 30 s at 10 s, then resume",
        room: room("eta-pause", 4, 20),
        plans: crowd(&mut rng, n(80), 60.0, 1.0, 3.0, 0.0),
        actions: vec![(secs(10), Admin::Pause), (secs(40), Admin::Resume)],
        knowable: "for those joining after the resume (40 s); before, the pause's length is an admin's decision",
        measure_after: secs(41),
        deadline: secs(200),
    });
    // 7. Stock running out: 30 units, 50 visitors.
    out.push(Scenario {
        name: "stock 30 for 50 visitors",
        room: RoomConfig {
            stock: Some(30),
            ..room("eta-stock", 4, 20)
        },
        plans: crowd(&mut rng, n(50), 10.0, 1.0, 3.0, 0.0),
        actions: vec![],
        knowable: "yes (places past the stock are told it may sell out)",
        measure_after: Duration::ZERO,
        deadline: secs(150),
    });
    // 8. 20 % silent abandonment (heartbeat timeout 5 s).
    let mut plans = crowd(&mut rng, n(60), 15.0, 1.0, 3.0, 0.0);
    for p in plans.iter_mut() {
        p.silent = rng.gen_bool(0.2);
    }
    out.push(Scenario {
        name: "20 % silent abandonment",
        room: RoomConfig {
            heartbeat_timeout_secs: 5,
            ..room("eta-abandon", 4, 20)
        },
        plans,
        actions: vec![],
        knowable: "yes",
        measure_after: Duration::ZERO,
        deadline: secs(200),
    });
    // 9. A burst, then a trickle (one every 2 s for 60 s).
    let mut plans = crowd(&mut rng, n(40), 1.0, 1.0, 4.0, 0.0);
    for i in 0..n(30) {
        plans.push(Plan {
            join_at: Duration::from_secs_f64(2.0 + 2.0 * i as f64),
            stay: Stay::Release(uniform(&mut rng, 1.0, 4.0)),
            silent: false,
        });
    }
    out.push(Scenario {
        name: "burst then trickle",
        room: room("eta-burst", 4, 20),
        plans,
        actions: vec![],
        knowable: "yes",
        measure_after: Duration::ZERO,
        deadline: secs(200),
    });
    out
}

async fn call(req: reqwest::RequestBuilder) -> Option<Value> {
    let res = req.send().await.ok()?;
    res.json().await.ok()
}

fn seen_of(v: &Value) -> Option<Seen> {
    if v["state"] != "queued" && v["state"] != "paused" {
        return None;
    }
    Some(Seen {
        at_ms: now_ms(),
        eta: v["eta_seconds"].as_u64()?,
        low: v["eta_low_seconds"].as_u64()?,
        high: v["eta_high_seconds"].as_u64()?,
        known: v["eta_known"].as_bool().unwrap_or(true) && v["state"] == "queued",
        reason: v["eta_reason"].as_str().map(str::to_string),
        position: v["position"].as_u64().unwrap_or(0),
    })
}

async fn visitor(
    client: reqwest::Client,
    base: String,
    room: String,
    plan: Plan,
    start: Instant,
    deadline: Instant,
) -> Record {
    tokio::time::sleep_until((start + plan.join_at).into()).await;
    let mut rec = Record {
        silent: plan.silent,
        ..Record::default()
    };
    let url = |p: &str| format!("{base}/api/rooms/{room}/{p}");
    rec.join_ms = now_ms();
    let Some(v) = call(client.post(url("join"))).await else {
        return rec;
    };
    let token = v["visitor_token"].as_str().unwrap_or_default().to_string();
    let mut admitted = v["admitted_at"].as_u64();
    rec.walked_in = admitted.is_some();
    rec.at_join = seen_of(&v);
    if plan.silent {
        return rec;
    }
    while admitted.is_none() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let Some(v) = call(client.get(url("status")).bearer_auth(&token)).await else {
            continue;
        };
        admitted = v["admitted_at"].as_u64();
        if let Some(s) = seen_of(&v) {
            rec.seen.push(s);
        }
    }
    rec.admitted_ms = admitted;
    if let (Some(_), Stay::Release(d)) = (admitted, plan.stay) {
        tokio::time::sleep(d).await;
        let _ = client.post(url("release")).bearer_auth(&token).send().await;
    }
    rec
}

/// Per-scenario results.
#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    pub queued: usize,
    pub admitted: usize,
    pub unknown_at_join: usize,
    /// Median of |shown − real| / max(real, 10 s), over admitted visitors shown a known ETA.
    pub median_error: Option<f64>,
    /// Share of those let in inside [low, high].
    pub inside: Option<f64>,
    /// Largest rise of the estimate beyond the time that passed (s).
    pub largest_rise: u64,
    /// Rises past the previous range's high end without a reason.
    pub rises_without_reason: usize,
    /// Median time (ms) from join to the first known estimate, over the visitors
    /// measured who were told "not known yet" at join and saw one before admission.
    pub known_after_ms: Option<u64>,
}

/// The floor under the real wait when computing relative errors (very short waits
/// would make any error huge).
pub const ERROR_FLOOR_MS: u64 = 10_000;

fn summarise(records: &[Record], measure_from_ms: u64) -> Summary {
    let mut s = Summary::default();
    let mut errors = Vec::new();
    let mut inside = 0usize;
    let mut known_after = Vec::new();
    for r in records.iter().filter(|r| !r.walked_in && !r.silent) {
        let Some(j) = &r.at_join else { continue };
        s.queued += 1;
        // Rises: from one status to the next, beyond what the time passed explains.
        let mut prev = j.clone();
        for n in &r.seen {
            if prev.known && n.known {
                let passed = (n.at_ms - prev.at_ms) / 1000;
                let expected = prev.eta.saturating_sub(passed);
                let rise = n.eta.saturating_sub(expected);
                s.largest_rise = s.largest_rise.max(rise);
                if n.eta > prev.high.saturating_sub(passed) + 1 && n.reason.is_none() {
                    s.rises_without_reason += 1;
                }
            }
            prev = n.clone();
        }
        let Some(adm) = r.admitted_ms else { continue };
        s.admitted += 1;
        if r.join_ms < measure_from_ms {
            continue;
        }
        if !j.known {
            s.unknown_at_join += 1;
            if let Some(k) = r.seen.iter().find(|n| n.known) {
                known_after.push(k.at_ms.saturating_sub(r.join_ms));
            }
            continue;
        }
        let real = adm.saturating_sub(r.join_ms);
        let shown = j.eta * 1000;
        errors.push(shown.abs_diff(real) as f64 / real.max(ERROR_FLOOR_MS) as f64);
        // Whole seconds shown: the range covers its last second.
        if j.low * 1000 <= real && real <= j.high * 1000 + 999 {
            inside += 1;
        }
    }
    if !errors.is_empty() {
        errors.sort_by(f64::total_cmp);
        s.median_error = Some(errors[errors.len() / 2]);
        s.inside = Some(inside as f64 / errors.len() as f64);
    }
    if !known_after.is_empty() {
        known_after.sort_unstable();
        s.known_after_ms = Some(known_after[known_after.len() / 2]);
    }
    s
}

/// The settings of the Anteroom instances a runner starts: one Redis, these rooms, the
/// rate limits and the admin off (the crowd is the only traffic).
fn runner_settings(redis_url: String, key_prefix: &str, rooms: Vec<RoomConfig>) -> Settings {
    let mut settings = Settings {
        listen: "127.0.0.1:0".into(),
        redis_url: Some(redis_url),
        key_prefix: key_prefix.into(),
        secret_key: Some(anteroom::room::Secret::new(
            "eta-runner-secret-key-0123456789abcdef0123456789",
        )),
        demo: false,
        rooms,
        ..Settings::default()
    };
    settings.rate_limit.ip_per_second = 0;
    settings.rate_limit.visitor_requests = 0;
    settings.admin.enabled = false;
    settings
}

/// The visitors' HTTP client.
fn runner_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(1000)
        .build()
        .map_err(|e| e.to_string())
}

/// Makes an admin's change to `room` through the store, as the admin API would. A change
/// that fails shows in the figures (the crowd is then not the one planned).
async fn apply(engine: &anteroom::domain::admission::Engine, room: &str, action: Admin) {
    let store = engine.room_store();
    let change = |capacity, paused| RoomPatch {
        capacity,
        paused,
        ..RoomPatch::default()
    };
    let _ = match action {
        Admin::Capacity(c) => store
            .patch_room(room, &change(Some(c), None))
            .await
            .map(drop),
        Admin::Pause => store
            .patch_room(room, &change(None, Some(true)))
            .await
            .map(drop),
        Admin::Resume => store
            .patch_room(room, &change(None, Some(false)))
            .await
            .map(drop),
        Admin::TopUp(n) => store
            .change_stock(room, StockChange::Add(n))
            .await
            .map(drop),
    };
}

/// Runs every scenario at once; `scale` multiplies the crowd sizes (1.0 = the table in
/// BENCHMARKS.md); `only`, when not empty, is a comma-separated list of the room ids to run.
pub async fn run(scale: f64, only: &str) -> Result<String, String> {
    let redis = anteroom_testkit::RedisServer::start();
    let mut list = scenarios(scale);
    if !only.is_empty() {
        list.retain(|s| only.split(',').any(|id| id == s.room.id));
    }
    let settings = runner_settings(
        redis.url(),
        "eta",
        list.iter().map(|s| s.room.clone()).collect(),
    );
    let app = anteroom::startup::Application::build(settings)
        .await
        .map_err(|e| format!("start: {e}"))?;
    let base = format!("http://127.0.0.1:{}", app.port());
    let engine = app.engine();
    let stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(app.run_until_stopped(stop.clone()));
    let client = runner_client()?;
    let start = Instant::now() + Duration::from_millis(500);
    let mut tasks = Vec::new();
    for sc in &list {
        let deadline = start + sc.deadline;
        let visitors: Vec<_> = sc
            .plans
            .iter()
            .map(|p| {
                tokio::spawn(visitor(
                    client.clone(),
                    base.clone(),
                    sc.room.id.clone(),
                    p.clone(),
                    start,
                    deadline,
                ))
            })
            .collect();
        for (at, action) in sc.actions.clone() {
            let engine = engine.clone();
            let id = sc.room.id.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until((start + at).into()).await;
                apply(&engine, &id, action).await;
            });
        }
        tasks.push(visitors);
    }
    let mut out = String::from(
        "| scenario | future knowable at join | queued | let in | unknown at join (of those measured) | of those, known after (median) | median error at join | let in inside range | largest upward revision | rises past the range without a reason |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (sc, visitors) in list.iter().zip(tasks) {
        let mut records = Vec::new();
        for v in visitors {
            if let Ok(r) = v.await {
                records.push(r);
            }
        }
        let from =
            now_ms() - start.elapsed().as_millis() as u64 + sc.measure_after.as_millis() as u64;
        let s = summarise(&records, from);
        if let Ok(dir) = std::env::var("ETA_TRACE") {
            // Every visitor's record, for looking into a scenario.
            let lines: Vec<String> = records.iter().map(|r| format!("{r:?}")).collect();
            let _ = std::fs::write(format!("{dir}/{}.txt", sc.room.id), lines.join("\n"));
        }
        let pct = |x: Option<f64>| x.map_or("–".into(), |x| format!("{:.0} %", x * 100.0));
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} s | {} |\n",
            sc.name,
            sc.knowable,
            s.queued,
            s.admitted,
            s.unknown_at_join,
            s.known_after_ms
                .map_or("–".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0)),
            pct(s.median_error),
            pct(s.inside),
            s.largest_rise,
            s.rises_without_reason
        ));
        eprintln!("done: {}", sc.name);
    }
    stop.cancel();
    let _ = server.await;
    drop(redis);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(at_ms: u64, eta: u64, low: u64, high: u64, reason: Option<&str>) -> Seen {
        Seen {
            at_ms,
            eta,
            low,
            high,
            known: true,
            reason: reason.map(str::to_string),
            position: 0,
        }
    }

    #[test]
    fn errors_ranges_and_rises_are_counted() {
        let a = Record {
            join_ms: 0,
            at_join: Some(seen(0, 20, 10, 30, None)),
            // 5 s later the estimate is 40 (expected 15): a rise of 25 s, past 30 − 5.
            seen: vec![
                seen(5_000, 40, 30, 50, None),
                seen(6_000, 39, 29, 49, Some("x")),
            ],
            admitted_ms: Some(25_000),
            ..Record::default()
        };
        let b = Record {
            join_ms: 0,
            at_join: Some(seen(0, 10, 8, 12, None)),
            admitted_ms: Some(40_000),
            ..Record::default()
        };
        // Told "not known yet" at join, a known estimate 3 s later: not in the error.
        let unknown = Seen {
            known: false,
            ..seen(1_000, 60, 0, 60, None)
        };
        let c = Record {
            join_ms: 1_000,
            at_join: Some(unknown.clone()),
            seen: vec![unknown, seen(4_000, 20, 15, 25, None)],
            admitted_ms: Some(20_000),
            ..Record::default()
        };
        let s = summarise(&[a, b, c], 0);
        assert_eq!((s.queued, s.admitted, s.unknown_at_join), (3, 3, 1));
        assert_eq!(s.known_after_ms, Some(3_000));
        // |20 − 25| / 25 = 0.2 and |10 − 40| / 40 = 0.75: the median of two is the upper.
        assert_eq!(s.median_error, Some(0.75));
        assert_eq!(s.inside, Some(0.5));
        assert_eq!(s.largest_rise, 25);
        assert_eq!(s.rises_without_reason, 1);
    }
}
