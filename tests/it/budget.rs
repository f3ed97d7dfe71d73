//! The Redis budget (issue 35, docs/benchmarks.md#the-redis-budget): what each decision
//! costs Redis, counted, not timed, with every default feature on, and a budget per
//! decision that the count must not pass. `cargo test --test it budget -- --nocapture`
//! prints the table.
//!
//! ## How it counts
//! One server (`spawn_app`, the built-in defaults; the harness turns off only the per-IP
//! and per-visitor request limits, which one test client would trip, and the admin API)
//! on a real `redis-server`, watched with `MONITOR` ([`Monitor`]): each decision runs
//! between two `ECHO` markers, and everything Redis ran between them is put down to a
//! call by name. A call is one command a client sent (one round trip: `FCALL`, `EVALSHA`
//! or a plain command); its commands are itself plus every `redis.call` it ran (what
//! `INFO commandstats` adds up); its bytes are the request as sent (RESP), what the
//! instance writes to Redis. Replies are not counted: MONITOR's own output would drown
//! them in `total_net_output_bytes`.
//!
//! ## Background work, kept apart
//! `INFO commandstats` cannot tell a hub tick from a join, and the instance's background
//! tasks keep talking to Redis while a decision runs. So the windows are read call by
//! call, and the calls made on a clock rather than per decision ([`clock_row`]: the
//! hub's `tick` per room per second, its socket count report every 3 ticks, the ETA basis
//! read per room per second shared by the hub and the handlers, the room configuration
//! read per room per second (`ROOM_CACHE_TTL`), the drops loop's room list every 200 ms,
//! the revocation log read every 250 ms)
//! are left out of every decision's window and measured per call in one window of five
//! hub ticks with 10 queued sockets open. The reaper, promoter, keeper and webhook
//! deliverer run their first pass at start-up and their next after the test (intervals
//! of 10 minutes, the one setting changed besides the harness's); promote is measured by
//! calling the store as the promoter does. Every other call in a window is the
//! decision's, divided by the number of decisions: unknown work counts against the
//! decision, never hides. All figures are counts, so they repeat run after run; only the
//! batched joins depend on timing (how many joins arrive while two calls are in flight).
//!
//! Visitors join each from an address of their own (`127.1.x.y`), as the
//! places-per-network cap sees real visitors; one row joins from a single address, the
//! cap's worst case.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anteroom::config::Settings;
use anteroom::room::RoomConfig;
use futures_util::future::join_all;

use crate::helpers::monitor::{Call, Monitor};
use crate::helpers::ws::{connect, next_json};
use crate::helpers::{prefix, spawn_app, test_settings, wait_until, RedisServer, Reply, TestApp};

/// Decisions measured per row.
const N: u64 = 200;

/// A room with the built-in defaults.
fn room(id: &str, capacity: u64) -> RoomConfig {
    RoomConfig {
        id: id.into(),
        capacity,
        target_url: "https://origin.example/in".into(),
        ..RoomConfig::default()
    }
}

fn settings(redis: &RedisServer, batch_joins: bool, rooms: Vec<RoomConfig>) -> Settings {
    let mut s = test_settings(Some(redis.url()), &prefix(), rooms);
    s.store.batch_joins = batch_joins;
    // The background passes: the first at start-up, the next after the test.
    s.reaper.interval_ms = 600_000;
    s.reaper.promote_interval_ms = 600_000;
    s.reaper.keeper_interval_ms = 600_000;
    s.webhooks.interval_ms = 600_000;
    s
}

/// What a call is, by name: a room function's name, a script's, or the command.
fn name(call: &Call, scripts: &BTreeMap<String, &'static str>) -> String {
    match call.command().as_str() {
        "FCALL" | "FCALL_RO" => {
            let f = call.arg(1);
            let short = f
                .strip_prefix("anteroom_")
                .and_then(|f| f.split_once('_'))
                .map(|(_, name)| name.to_string())
                .unwrap_or(f);
            format!("fcall {short}")
        }
        "EVALSHA" => format!(
            "evalsha {}",
            scripts.get(&call.arg(1)).copied().unwrap_or("?")
        ),
        c => c.to_ascii_lowercase(),
    }
}

/// The plain scripts by SHA (`EVALSHA` names a script only by it).
fn scripts() -> BTreeMap<String, &'static str> {
    [
        (
            "sockets_report",
            include_str!("../../src/store/lua/sockets_report.lua"),
        ),
        (
            "sockets_read",
            include_str!("../../src/store/lua/sockets_read.lua"),
        ),
        (
            "lease_acquire",
            include_str!("../../src/store/lua/lease_acquire.lua"),
        ),
        (
            "lease_release",
            include_str!("../../src/store/lua/lease_release.lua"),
        ),
        ("revoke", include_str!("../../src/store/lua/revoke.lua")),
        (
            "revocations",
            include_str!("../../src/store/lua/revocations.lua"),
        ),
    ]
    .into_iter()
    .map(|(name, src)| (redis::Script::new(src).get_hash().to_string(), name))
    .collect()
}

#[derive(Default, Debug, Clone, Copy)]
struct Cost {
    calls: u64,
    commands: u64,
    bytes: u64,
}

impl Cost {
    fn add(&mut self, c: &Call) {
        self.calls += 1;
        self.commands += 1 + c.inner.len() as u64;
        self.bytes += c.request_bytes();
    }
}

/// The window that measures the clock's calls: the calls in it that are not the clock's,
/// per tick.
const HUB: &str = "hub, other calls per tick (10 sockets)";

/// Calls made on a clock, not per decision: each has its own row, per call.
fn clock_row(name: &str) -> Option<&'static str> {
    Some(match name {
        "fcall tick" | "fcall places" | "fcall watch" => "hub tick, per room (1 s)",
        "evalsha sockets_report" => "hub socket report (3 s)",
        "fcall eta_basis" => "ETA basis read, per room (1 s)",
        "hgetall" => "room config read, per room (1 s)",
        "smembers" => "drops' room list (200 ms)",
        "evalsha revocations" => "revocation log read (250 ms)",
        _ => return None,
    })
}

/// One row's budget: most calls (round trips), commands (calls and the `redis.call`s
/// inside them) and bytes written, per decision (per call for the clock's rows).
struct Budget {
    row: &'static str,
    calls: f64,
    commands: f64,
    bytes: f64,
}

const fn budget(row: &'static str, calls: f64, commands: f64, bytes: f64) -> Budget {
    Budget {
        row,
        calls,
        commands,
        bytes,
    }
}

/// Today's figures, rounded up by at most ~10 %. Raising one is a reviewed change, in the
/// same commit as its cause, with the measured cost in the commit message
/// (docs/benchmarks.md#the-redis-budget).
const BUDGETS: &[Budget] = &[
    // 16 before a new visitor's join skipped looking for its place and away mark
    // (JoinOptions::fresh: ZRANK and ZREM), 14 since.
    budget("queued join", 1.05, 15.0, 260.0),
    // 25 commands before issue 35's cut: a walk-in reads no heads and no rank of an empty
    // line, the reply is handed the session the admission wrote (join_one.lua), and the
    // minute's counters set their TTL once a minute (record in common.lua). 18 before a
    // new visitor's join skipped its away mark (ZREM), 17 since.
    budget("admitted join", 1.05, 18.0, 260.0),
    // How many joins go in one call depends on how many arrive while two are in flight:
    // 0.06-0.24 calls and 10.3-11.5 commands a join over runs here before a new
    // visitor's join skipped its two reads and a call wrote `seq`, the heartbeats and the
    // join times once (DEFER in common.lua); 6.1 at 0.12 calls since (one call each: 14).
    budget("queued join, 200 together, batched", 0.3, 7.8, 190.0),
    // Walk-ins taken together write the serial, the minute's counters, the sessions and
    // their ends, and one admission message once a call (DEFER in common.lua): 7.5 a join
    // before the sessions and ends, 6.0 at 0.09 calls since.
    budget("admitted join, 200 together, batched", 0.3, 8.2, 190.0),
    budget("queued join, 200 together, not batched", 1.05, 15.0, 260.0),
    // The places-per-network cap reads the address's places only at its cap (join_one.lua):
    // 137.5 commands here when it read them on every new place.
    budget(
        "queued join, one address's 21st-220th place",
        1.05,
        15.0,
        260.0,
    ),
    // Answered from the hub's view of the line: its cost is the hub tick's, per room.
    budget("queued status", 0.02, 0.25, 3.0),
    // Answered from the hub's view of the room once the store has answered one status of
    // the session (its claim): its cost is the hub tick's and the revocation log's reads.
    // 9 commands a status before (status.lua), 11 before issue 35.
    budget("admitted status", 0.02, 0.25, 3.0),
    budget("release", 2.05, 32.0, 450.0),
    budget("release, next in line admitted", 2.05, 50.0, 450.0),
    budget("promote, nothing to admit", 1.05, 7.7, 111.0),
    budget(HUB, 0.2, 3.0, 60.0),
    budget("hub tick, per room (1 s)", 1.1, 11.0, 172.0),
    budget("hub socket report (3 s)", 1.0, 3.3, 160.0),
    budget("ETA basis read, per room (1 s)", 1.0, 17.6, 103.0),
    budget("room config read, per room (1 s)", 1.0, 1.1, 55.0),
    budget("drops' room list (200 ms)", 1.0, 1.1, 48.0),
    budget("revocation log read (250 ms)", 1.0, 3.3, 178.0),
];

/// The figures seen: per row, the summed cost and how many decisions (or calls) it was.
#[derive(Default)]
struct Ledger {
    rows: BTreeMap<&'static str, (Cost, u64)>,
    order: Vec<&'static str>,
    breakdown: BTreeMap<&'static str, BTreeMap<String, u64>>,
    /// Per row, the commands run inside its calls, by name (where a count goes).
    inside: BTreeMap<&'static str, BTreeMap<String, u64>>,
}

impl Ledger {
    fn add(&mut self, row: &'static str, cost: Cost, ops: u64) {
        if !self.rows.contains_key(row) {
            self.order.push(row);
        }
        let e = self.rows.entry(row).or_default();
        // (`order` keeps rows that have no budget yet in the order they were measured.)
        e.0.calls += cost.calls;
        e.0.commands += cost.commands;
        e.0.bytes += cost.bytes;
        e.1 += ops;
    }
}

/// Runs `f` (`ops` decisions of `row`) in a window; its calls go to `row`. The clock's
/// calls go to their rows in the window that measures them ([`HUB`]) and are
/// left out of every other.
async fn measure<T>(
    monitor: &mut Monitor,
    ledger: &mut Ledger,
    row: &'static str,
    ops: u64,
    f: impl std::future::Future<Output = T>,
) -> T {
    let scripts = scripts();
    let (out, calls) = monitor.window(f).await;
    let mut cost = Cost::default();
    for c in &calls {
        let n = name(c, &scripts);
        match clock_row(&n) {
            Some(clock) if row == HUB => {
                let mut one = Cost::default();
                one.add(c);
                // A tick's places and watch calls are part of its tick.
                let tick = n == "fcall tick" || !clock.starts_with("hub tick");
                ledger.add(clock, one, tick as u64);
            }
            Some(_) => {}
            None => {
                cost.add(c);
                *ledger
                    .breakdown
                    .entry(row)
                    .or_default()
                    .entry(n)
                    .or_default() += 1 + c.inner.len() as u64;
                let inside = ledger.inside.entry(row).or_default();
                for cmd in &c.inner {
                    *inside.entry(cmd.to_ascii_lowercase()).or_default() += 1;
                }
            }
        }
    }
    ledger.add(row, cost, ops);
    out
}

/// A client whose connections come from `127.1.x.y`: its own network to the
/// places-per-network cap (`max_places_per_ip`), as a visitor's own address is.
fn client_from(n: u32) -> reqwest::Client {
    let ip = std::net::Ipv4Addr::new(127, 1, (n / 250) as u8, (n % 250 + 1) as u8);
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::V4(ip))
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// Visitors joining, each from its own address (or all from the harness's one).
struct Visitors {
    next: u32,
}

impl Visitors {
    fn clients(&mut self, n: u64) -> Vec<reqwest::Client> {
        (0..n)
            .map(|_| {
                self.next += 1;
                client_from(self.next)
            })
            .collect()
    }
}

async fn join_with(app: &TestApp, client: &reqwest::Client, room: &str) -> String {
    let r = Reply::from(
        client
            .post(app.url(&format!("/api/rooms/{room}/join")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.token()
}

/// Joins one after the other, each from its client.
async fn joins(app: &TestApp, clients: &[reqwest::Client], room: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for c in clients {
        tokens.push(join_with(app, c, room).await);
    }
    tokens
}

/// Joins sent together, each from its client.
async fn joins_together(app: &TestApp, clients: &[reqwest::Client], room: &str) -> Vec<String> {
    join_all(clients.iter().map(|c| join_with(app, c, room))).await
}

async fn ticks_pass(app: &TestApp, n: u64) {
    let t0 = app.hub.stats.ticks.load(Ordering::SeqCst);
    wait_until(Duration::from_secs(20), "hub ticks", || async {
        (app.hub.stats.ticks.load(Ordering::SeqCst) >= t0 + n).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_decision_stays_within_its_redis_budget() {
    let redis = RedisServer::start();
    let mut monitor = Monitor::start(&redis);
    let mut ledger = Ledger::default();
    let mut visitors = Visitors { next: 0 };
    let rooms = || {
        vec![
            room("q", 1),
            room("a", 10_000_000),
            room("w", 1),
            room("b", 1),
            room("one", 1),
        ]
    };
    let app = spawn_app(settings(&redis, true, rooms())).await;
    let unbatched = spawn_app(settings(&redis, false, rooms())).await;

    // A room's tick with 10 queued sockets open (one visitor holds the slot), over 5 ticks.
    let c = visitors.clients(11);
    let w = joins(&app, &c, "w").await;
    let mut sockets = Vec::new();
    for t in &w[1..] {
        let mut ws = connect(&app, "w", t, None).await.unwrap();
        next_json(&mut ws, Duration::from_secs(10)).await;
        sockets.push(ws);
    }
    // Past a first socket report (every 3 ticks), so its script is loaded.
    ticks_pass(&app, 4).await;
    measure(&mut monitor, &mut ledger, HUB, 5, ticks_pass(&app, 5)).await;
    drop(sockets);

    // Queued joins, one at a time, each from its own address (the first holds the slot).
    let c = visitors.clients(20);
    let warm = joins(&app, &c, "q").await;
    let c = visitors.clients(N);
    let queued = measure(
        &mut monitor,
        &mut ledger,
        "queued join",
        N,
        joins(&app, &c, "q"),
    )
    .await;
    // Admitted joins.
    let c = visitors.clients(10);
    let warm_admitted = joins(&app, &c, "a").await;
    let c = visitors.clients(N);
    let admitted = measure(
        &mut monitor,
        &mut ledger,
        "admitted join",
        N,
        joins(&app, &c, "a"),
    )
    .await;
    // Joins sent together: taken together (the default), and one call each.
    for (app, row) in [
        (&app, "queued join, 200 together, batched"),
        (&unbatched, "queued join, 200 together, not batched"),
    ] {
        let c = visitors.clients(10);
        joins(app, &c, "b").await;
        let c = visitors.clients(N);
        measure(
            &mut monitor,
            &mut ledger,
            row,
            N,
            joins_together(app, &c, "b"),
        )
        .await;
    }
    // Walk-ins sent together, taken together.
    let c = visitors.clients(10);
    joins(&app, &c, "a").await;
    let c = visitors.clients(N);
    measure(
        &mut monitor,
        &mut ledger,
        "admitted join, 200 together, batched",
        N,
        joins_together(&app, &c, "a"),
    )
    .await;
    // One address with 20 places, then 200 more: the places-per-network cap must not make
    // them dearer than anyone's (the group's places are read only at its cap).
    let one = vec![client_from(0); 20];
    joins(&app, &one, "one").await;
    let one = vec![client_from(0); N as usize];
    measure(
        &mut monitor,
        &mut ledger,
        "queued join, one address's 21st-220th place",
        N,
        joins(&app, &one, "one"),
    )
    .await;

    // Queued status: each visitor asked once, then the line is followed (two ticks).
    for t in &queued {
        app.status("q", t).await;
    }
    ticks_pass(&app, 2).await;
    measure(&mut monitor, &mut ledger, "queued status", N, async {
        for t in &queued {
            assert_eq!(app.status("q", t).await.status, 200);
        }
    })
    .await;
    // Admitted status: each visitor asked once (the store's answer makes the claim; the
    // room is followed), then again once the hub has ticked (the line's epoch learned).
    for _ in 0..2 {
        for t in &admitted {
            app.status("a", t).await;
        }
        ticks_pass(&app, 2).await;
    }
    measure(&mut monitor, &mut ledger, "admitted status", N, async {
        for t in &admitted {
            assert_eq!(app.status("a", t).await.status, 200);
        }
    })
    .await;
    // The first releases load the revocation script.
    for t in &warm_admitted {
        assert_eq!(app.release("a", t).await.status, 204);
    }
    measure(&mut monitor, &mut ledger, "release", N, async {
        for t in &admitted {
            assert_eq!(app.release("a", t).await.status, 204);
        }
    })
    .await;
    // Each release lets the next in line in (the promotion inside release).
    for t in &warm {
        assert_eq!(app.release("q", t).await.status, 204);
    }
    measure(
        &mut monitor,
        &mut ledger,
        "release, next in line admitted",
        N - 1,
        async {
            for t in &queued[..N as usize - 1] {
                assert_eq!(app.release("q", t).await.status, 204);
            }
        },
    )
    .await;
    // The promoter's call, a room with nothing to admit (its usual case, twice a second
    // per room per instance: joins and releases admit by themselves).
    measure(
        &mut monitor,
        &mut ledger,
        "promote, nothing to admit",
        N,
        async {
            for _ in 0..N {
                app.engine
                    .admission_store()
                    .promote("q", 1000)
                    .await
                    .unwrap();
            }
        },
    )
    .await;

    report(&ledger);
}

fn per(x: u64, ops: u64) -> f64 {
    x as f64 / ops.max(1) as f64
}

/// Prints the table, then fails naming every row over its budget.
fn report(ledger: &Ledger) {
    println!(
        "\n| decision | calls | commands | bytes written | budget (calls / commands / bytes) |"
    );
    println!("|---|---|---|---|---|");
    let mut over = Vec::new();
    let rows = BUDGETS
        .iter()
        .map(|b| b.row)
        .filter(|r| ledger.rows.contains_key(r))
        .chain(
            ledger
                .order
                .iter()
                .copied()
                .filter(|r| BUDGETS.iter().all(|b| b.row != *r)),
        );
    for row in rows {
        let (cost, ops) = ledger.rows[row];
        let (calls, commands, bytes) = (
            per(cost.calls, ops),
            per(cost.commands, ops),
            per(cost.bytes, ops),
        );
        let b = BUDGETS.iter().find(|b| b.row == row);
        let limit = b.map_or("none".to_string(), |b| {
            format!("{} / {} / {}", b.calls, b.commands, b.bytes)
        });
        println!("| {row} | {calls:.2} | {commands:.2} | {bytes:.0} | {limit} |");
        match b {
            None => over.push(format!("{row}: no budget")),
            Some(b) => {
                for (what, seen, max) in [
                    ("calls", calls, b.calls),
                    ("commands", commands, b.commands),
                    ("bytes written", bytes, b.bytes),
                ] {
                    if seen > max {
                        over.push(format!(
                            "{row}: {seen:.2} {what} per decision, budget {max}"
                        ));
                    }
                }
            }
        }
    }
    println!("\ncommands per decision, by call:");
    for (row, calls) in &ledger.breakdown {
        let ops = ledger.rows[row].1;
        let parts: Vec<String> = calls
            .iter()
            .map(|(n, c)| format!("{n} {:.2}", per(*c, ops)))
            .collect();
        println!("  {row}: {}", parts.join(", "));
        if let Some(inside) = ledger.inside.get(row) {
            let parts: Vec<String> = inside
                .iter()
                .map(|(n, c)| format!("{n} {:.2}", per(*c, ops)))
                .collect();
            println!("    inside: {}", parts.join(", "));
        }
    }
    assert!(
        over.is_empty(),
        "over the Redis budget:\n{}",
        over.join("\n")
    );
}
