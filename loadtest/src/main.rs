//! `anteroom-loadtest`: load against a running Anteroom on loopback, bounded in time and
//! count. Prints one JSON line with the figures.
//!
//! ```text
//! anteroom-loadtest http  --target http://127.0.0.1:8080 --room bench --concurrency 64 --duration 10 [--rate 5000] [--max-requests N]
//! anteroom-loadtest get   --target http://127.0.0.1:9000 --path / --concurrency 64 --duration 10
//! anteroom-loadtest ws    --target http://127.0.0.1:8080 --room bench --visitors 1000 --arrival-rate 500 --duration 30 --think-ms 2000 --abandon-share 0.1 [--bind-ips 127.0.0.2,127.0.0.3] [--pids 123,456]
//! anteroom-loadtest drop  --target http://127.0.0.1:8080 --room bench --visitors 10000 --watchers 200 --concurrency 64 --opens-at-ms <ms since the epoch> --wait-s 30
//! anteroom-loadtest trivial-server --listen 127.0.0.1:9000     (the HTTP ceiling: one actix-web handler)
//! anteroom-loadtest prototype-server --listen 127.0.0.1:9001 --capacity 1000  (the single-node prototype: BTreeMap behind a mutex)
//! anteroom-loadtest memstore --tasks 2 --duration 5             (join + status on the in-memory store, no HTTP)
//! anteroom-loadtest redis [--cluster] [--maxclients 60000]      (a real Redis, or a 3-master cluster, for bench/)
//! anteroom-loadtest eta-sim --crowds 5000 [--first 0] [--size test]  (generated crowds on the ETA simulator, no I/O)
//! anteroom-loadtest eta [--scale 1] [--only eta-drain,…|none] [--seeds 2,11,…|none]  (ETA crowds in real time on Redis)
//! ```

use std::time::{Duration, Instant};

use anteroom_loadtest::drops::{self, DropConfig};
use anteroom_loadtest::http::{self, HttpConfig, Mode};
use anteroom_loadtest::ws::{self, WsConfig};
use anteroom_loadtest::{check_loopback, procstat, Args};

fn main() {
    let mut argv = std::env::args().skip(1);
    let Some(cmd) = argv.next() else {
        eprintln!(
            "usage: anteroom-loadtest http|get|ws|drop|memstore|trivial-server|prototype-server|redis|eta|eta-sim|pow --option value …"
        );
        std::process::exit(2);
    };
    // `--cluster` is the one option without a value.
    let argv = argv.flat_map(|a| {
        if a == "--cluster" {
            vec![a, "yes".into()]
        } else {
            vec![a]
        }
    });
    let args = match Args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&cmd, &args) {
        eprintln!("anteroom-loadtest: {e}");
        std::process::exit(1);
    }
}

fn run(cmd: &str, a: &Args) -> Result<(), String> {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    if cmd == "trivial-server" {
        return trivial_server(&a.str("listen", "127.0.0.1:9000"));
    }
    if cmd == "prototype-server" {
        return anteroom_loadtest::prototype::serve(
            &a.str("listen", "127.0.0.1:9001"),
            a.num("capacity", 1000u64)?,
        );
    }
    if cmd == "memstore" {
        return memstore(a);
    }
    if cmd == "redis" {
        return redis(a);
    }
    if cmd == "pow" {
        // Proof of work: the server's cost per check and per challenge, beside one bare
        // SHA-256 (the ceiling), and a native client's solve time.
        let checks = a.num("checks", 20_000usize)?;
        let solves = a.num("solves", 20usize)?;
        println!("{}", pow_bench(checks, solves));
        return Ok(());
    }
    if cmd == "eta-sim" {
        // Crowds drawn at random (fixed seeds) on the deterministic ETA simulator, on all
        // cores; prints the Markdown report (targets, per family, worst seeds).
        use anteroom::domain::eta_sim::{self, scenario::Size};
        let crowds = a.num("crowds", 5000u64)?;
        let first = a.num("first", 0u64)?;
        // `--size test`: the crowds of `cargo test` (lines of at most 60).
        let size = match a.str("size", "bench").as_str() {
            "test" => Size::TEST,
            _ => Size::BENCH,
        };
        let t0 = Instant::now();
        let scores = eta_sim::score_all(first..first + crowds, size);
        println!("{}", eta_sim::report(&scores));
        println!(
            "{crowds} crowds (seeds {first}..{}) in {:.1} s",
            first + crowds,
            t0.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    if cmd == "eta" {
        // Every ETA scenario at once on a fresh Redis; prints the Markdown table.
        let scale = a.num("scale", 1.0f64)?;
        // `--only eta-stock,eta-abandon`: just those rooms' scenarios (for looking into one).
        let only = a.str("only", "");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        // `--seeds 2,11`: the generator's crowds of those seeds after the nine, each beside
        // the simulator's play of it (default: `eta::drawn::DEFAULT_SEEDS`; `--seeds none`:
        // no drawn crowd; `--only none`: none of the nine).
        let seeds: Vec<u64> = match a.str("seeds", "").as_str() {
            "" => anteroom_loadtest::eta::drawn::DEFAULT_SEEDS.to_vec(),
            "none" => Vec::new(),
            list => list
                .split(',')
                .map(|s| s.trim().parse().map_err(|_| format!("--seeds: {s:?}")))
                .collect::<Result<_, _>>()?,
        };
        if only != "none" {
            let table = rt.block_on(anteroom_loadtest::eta::run(scale, &only))?;
            println!("{table}");
        }
        if !seeds.is_empty() {
            let table = rt.block_on(anteroom_loadtest::eta::drawn::run(&seeds))?;
            println!("{table}");
        }
        return Ok(());
    }
    let target = a.str("target", "http://127.0.0.1:8080");
    check_loopback(&target)?;
    let threads = a.num("threads", 1usize)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let pids: Vec<u32> = a
        .list("pids")
        .iter()
        .filter_map(|p| p.parse().ok())
        .collect();
    let before: Vec<_> = pids.iter().map(|p| procstat::sample(*p)).collect();
    let t0 = Instant::now();
    let mut report = rt.block_on(async {
        match cmd {
            "http" | "get" => {
                let cfg = HttpConfig {
                    target: target.clone(),
                    room: a.str("room", "bench"),
                    concurrency: a.num("concurrency", 32usize)?,
                    duration: Duration::from_secs_f64(a.num("duration", 10.0)?),
                    max_requests: a.num("max-requests", u64::MAX)?,
                    rate: match a.num("rate", 0.0f64)? {
                        r if r > 0.0 => Some(r),
                        _ => None,
                    },
                    mode: if cmd == "get" {
                        Mode::Get(a.str("path", "/"))
                    } else {
                        Mode::JoinStatus
                    },
                    header: match a.str("header", "") {
                        h if h.is_empty() => None,
                        h => {
                            let (name, value) = h
                                .split_once(':')
                                .ok_or_else(|| format!("--header {h:?}: expected `name: value`"))?;
                            Some((name.trim().to_string(), value.trim().to_string()))
                        }
                    },
                };
                serde_json::to_value(http::run(cfg).await).map_err(|e| e.to_string())
            }
            "drop" => {
                let cfg = DropConfig {
                    target: target.clone(),
                    room: a.str("room", "bench"),
                    visitors: a.num("visitors", 10_000u64)?,
                    watchers: a.num("watchers", 200u64)?,
                    concurrency: a.num("concurrency", 64usize)?,
                    opens_at_ms: a.num("opens-at-ms", 0u64)?,
                    wait: Duration::from_secs_f64(a.num("wait-s", 30.0)?),
                };
                serde_json::to_value(drops::run(cfg).await).map_err(|e| e.to_string())
            }
            "ws" => {
                let cfg = WsConfig {
                    target: target.clone(),
                    room: a.str("room", "bench"),
                    visitors: a.num("visitors", 1000u64)?,
                    arrival_rate: a.num("arrival-rate", 200.0)?,
                    duration: Duration::from_secs_f64(a.num("duration", 20.0)?),
                    think: Duration::from_millis(a.num("think-ms", 1000u64)?),
                    abandon_share: a.num("abandon-share", 0.0)?,
                    bind_ips: a
                        .list("bind-ips")
                        .iter()
                        .map(|s| s.parse().map_err(|_| format!("bad --bind-ips entry {s}")))
                        .collect::<Result<_, _>>()?,
                };
                serde_json::to_value(ws::run(cfg).await).map_err(|e| e.to_string())
            }
            other => Err(format!("unknown command {other:?}")),
        }
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let servers: Vec<serde_json::Value> = pids
        .iter()
        .zip(before)
        .map(|(pid, b)| {
            let after = procstat::sample(*pid);
            serde_json::json!({
                "pid": pid,
                "rss_mb": after.map(|s| s.rss_bytes as f64 / 1048576.0),
                "cpu_percent": match (b, after) {
                    (Some(b), Some(a)) => Some(procstat::cpu_percent(b, a, secs)),
                    _ => None,
                },
            })
        })
        .collect();
    report["servers"] = serde_json::json!(servers);
    println!("{report}");
    Ok(())
}

/// One actix-web handler returning "ok": what the HTTP stack alone can do here.
fn trivial_server(listen: &str) -> Result<(), String> {
    use actix_web::{web, App, HttpServer};
    let listen = listen.to_string();
    actix_web::rt::System::new()
        .block_on(async move {
            HttpServer::new(|| App::new().route("/", web::get().to(|| async { "ok" })))
                .bind(&listen)?
                .run()
                .await
        })
        .map_err(|e| e.to_string())
}

/// Decisions per second on the memory store itself: each task joins a fresh visitor and
/// asks its status, in a room whose queue grows as it goes.
fn memstore(a: &Args) -> Result<(), String> {
    use anteroom::room::RoomConfig;
    use anteroom::store::{memory::MemoryStore, AdminStore, AdmissionStore, RoomStore};
    use std::sync::Arc;
    let tasks = a.num("tasks", 2usize)?;
    let duration = Duration::from_secs_f64(a.num("duration", 5.0)?);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(tasks.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let report = rt.block_on(async move {
        let store = Arc::new(MemoryStore::new());
        let room = RoomConfig {
            id: "bench".into(),
            capacity: 1000,
            target_url: "http://127.0.0.1/".into(),
            ..RoomConfig::default()
        };
        store
            .put_room(&room, true)
            .await
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        let mut handles = Vec::new();
        for t in 0..tasks {
            let store = store.clone();
            handles.push(tokio::spawn(async move {
                let mut n = 0u64;
                let mut i = 0u64;
                while start.elapsed() < duration {
                    let v = format!("{t:08x}{i:024x}");
                    let _ = store.join("bench", &v).await;
                    let _ = store.status("bench", &v).await;
                    n += 2;
                    i += 1;
                }
                n
            }));
        }
        let mut total = 0;
        for h in handles {
            total += h.await.unwrap_or(0);
        }
        let secs = start.elapsed().as_secs_f64();
        let queued = store
            .stats("bench")
            .await
            .map(|s| s.queue_length)
            .unwrap_or(0);
        Ok::<_, String>(serde_json::json!({
            "scenario": "memory store join+status",
            "decisions": total,
            "elapsed_s": secs,
            "decisions_per_s": total as f64 / secs,
            "queue_length_at_end": queued,
        }))
    })?;
    println!("{report}");
    Ok(())
}

/// Starts a real Redis (or, with `--cluster`, a local three-master Redis Cluster) through
/// the same harness the integration tests use, prints `{"ports":[…],"pids":[…]}` once it
/// is ready, and keeps it until standard input closes or a SIGTERM/SIGINT arrives; the
/// servers are killed and their directories removed on the way out.
fn redis(a: &Args) -> Result<(), String> {
    use anteroom_testkit::{RedisCluster, RedisServer};
    enum Held {
        One(RedisServer),
        Cluster(RedisCluster),
    }
    let maxclients = a.str("maxclients", "");
    let held = if a.str("cluster", "") == "yes" {
        Held::Cluster(RedisCluster::start())
    } else if maxclients.is_empty() {
        Held::One(RedisServer::start())
    } else {
        Held::One(RedisServer::start_with_args(&["--maxclients", &maxclients]))
    };
    let (ports, pids) = match &held {
        Held::One(r) => (vec![r.port], r.pid().into_iter().collect()),
        Held::Cluster(c) => (c.ports.clone(), c.pids()),
    };
    println!("{}", serde_json::json!({ "ports": ports, "pids": pids }));
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        });
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| e.to_string())?;
        tokio::select! {
            _ = stdin_closed => {}
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok::<_, String>(())
    })?;
    drop(held);
    Ok(())
}

fn pow_bench(checks: usize, solves: usize) -> String {
    use anteroom::domain::pow::{self, PowKeys};
    use sha2::Digest;
    use std::time::Instant;
    let keys = PowKeys::new(b"bench-secret");
    let max = anteroom::room::DEFAULT_POW_MAX_NUMBER;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let c = keys.challenge("bench", max, now);
    let solution = pow::solve(&c).expect("solvable");
    let t = Instant::now();
    for _ in 0..checks {
        std::hint::black_box(keys.check(std::hint::black_box(&solution), "bench", max, now)).ok();
    }
    let check_us = t.elapsed().as_secs_f64() * 1e6 / checks as f64;
    let t = Instant::now();
    for _ in 0..checks {
        std::hint::black_box(keys.challenge("bench", max, now));
    }
    let make_us = t.elapsed().as_secs_f64() * 1e6 / checks as f64;
    let input = format!("{}{}", c.salt, max / 2);
    let t = Instant::now();
    for _ in 0..checks {
        std::hint::black_box(sha2::Sha256::digest(std::hint::black_box(input.as_bytes())));
    }
    let hash_us = t.elapsed().as_secs_f64() * 1e6 / checks as f64;
    let mut solve_ms = Vec::new();
    for _ in 0..solves {
        let c = keys.challenge("bench", max, now);
        let t = Instant::now();
        std::hint::black_box(pow::solve(&c));
        solve_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    solve_ms.sort_by(f64::total_cmp);
    let median = solve_ms.get(solve_ms.len() / 2).copied().unwrap_or(0.0);
    let worst = solve_ms.last().copied().unwrap_or(0.0);
    format!(
        "| figure | value | ceiling (same run) |\n|---|---|---|\n\
         | server: check one solution (decode, HMAC, SHA-256, salt) | {check_us:.2} µs | one bare SHA-256: {hash_us:.2} µs |\n\
         | server: make one challenge | {make_us:.2} µs | one bare SHA-256: {hash_us:.2} µs |\n\
         | native client (Rust, one core): solve at maxnumber {max} | median {median:.0} ms, worst {worst:.0} ms of {solves} | — |\n"
    )
}
