//! The fault scenarios, each run under the history checker: two instances, 30 polling
//! visitors, capacity 3, a fault a second after the last visitor joined. Each prints one
//! line (`history <scenario>: …`) that RELIABILITY.md quotes; run them with
//! `cargo test --test it history -- --nocapture`.

use std::time::Duration;

use super::{check, run, Endpoint, Workload};
use crate::helpers::{
    prefix, room, spawn_app, test_settings, RedisSentinel, RedisServer, ServerProcess,
};
use anteroom::config::Settings;
use anteroom::room::RoomConfig;

/// When the fault starts, after every visitor joined.
const FAULT_AFTER: Duration = Duration::from_secs(1);

fn the_room(w: &Workload) -> RoomConfig {
    RoomConfig {
        session_ttl_secs: 120,
        // Longer than any fault here: a visitor who cannot reach the store during it is
        // not dropped for silence.
        heartbeat_timeout_secs: 60,
        ..room(w.room, w.capacity)
    }
}

fn settings(url: String, w: &Workload) -> Settings {
    test_settings(Some(url), &prefix(), vec![the_room(w)])
}

/// Runs the checker over a finished run; panics with every broken rule.
fn assert_kept_every_promise(
    scenario: &str,
    h: &super::History,
    took: Duration,
    recovered: Option<Duration>,
) {
    let v = check(h);
    let requests = h.requests.load(std::sync::atomic::Ordering::Relaxed);
    let recovered = recovered.map_or(String::new(), |d| {
        format!(", recovered {d:.2?} after the fault")
    });
    eprintln!("history {scenario}: {requests} requests over {took:.1?}{recovered}: {v}");
    if !v.violations.is_empty() {
        // The events of the visitors the first violation names, to see what happened.
        let named: Vec<usize> = v.violations[0]
            .split("visitor ")
            .skip(1)
            .filter_map(|w| w.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
            .collect();
        for e in h.events().iter().filter(|e| named.contains(&e.visitor)) {
            eprintln!("  visitor {} at {}: {:?}", e.visitor, e.at_ms, e.seen);
        }
    }
    assert!(
        v.violations.is_empty(),
        "{scenario}: {}",
        v.violations.join("\n")
    );
    assert_eq!(v.admitted, h.visitors, "{scenario}: everyone let in");
}

/// How long after `fault_ended` the first admission came.
fn recovery(h: &super::History, fault_ended_ms: u64) -> Option<Duration> {
    h.events()
        .iter()
        .filter_map(|e| match e.seen {
            super::Seen::Admitted { .. } if e.at_ms >= fault_ended_ms => Some(e.at_ms),
            _ => None,
        })
        .min()
        .map(|at| Duration::from_millis(at - fault_ended_ms))
}

/// Runs the workload on two in-process instances of one store while `fault` runs (it
/// answers when the fault ended, ms, if it has an end), then checks the history.
async fn on_two_instances<F>(scenario: &str, url: String, fault: F) -> super::History
where
    F: std::future::Future<Output = Option<u64>>,
{
    let w = Workload::default();
    let s = settings(url, &w);
    let (a, b) = (spawn_app(s.clone()).await, spawn_app(s).await);
    let mut ended = None;
    let (h, took) = run(&[Endpoint::app(&a), Endpoint::app(&b)], &w, async {
        ended = fault.await;
    })
    .await;
    let r = ended.and_then(|e| recovery(&h, e));
    assert_kept_every_promise(scenario, &h, took, r);
    h
}

/// Redis SIGKILLed and restarted from its append-only file (`appendfsync everysec`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_redis_killed_and_restarted_with_aof() {
    let mut redis = RedisServer::start_persistent();
    let url = redis.url();
    on_two_instances("redis-killed-aof", url, async {
        tokio::time::sleep(FAULT_AFTER).await;
        redis.kill();
        tokio::time::sleep(Duration::from_secs(2)).await;
        redis.restart();
        Some(anteroom::clock::wall_ms())
    })
    .await;
}

/// Redis SIGKILLed and started again without its data (no persistence): rooms, places
/// and sessions are put back (receipts, issued passes) under the restore hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_redis_restarted_empty() {
    let mut redis = RedisServer::start();
    let url = redis.url();
    let h = on_two_instances("redis-restarted-empty", url, async {
        tokio::time::sleep(FAULT_AFTER).await;
        redis.kill();
        tokio::time::sleep(Duration::from_secs(1)).await;
        redis.restart();
        Some(anteroom::clock::wall_ms())
    })
    .await;
    let v = check(&h);
    assert!(v.rejoins > 0, "the store did lose the places: {v}");
}

/// An accidental `FLUSHALL` under running instances.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_flushall() {
    let redis = RedisServer::start();
    let url = redis.url();
    on_two_instances("flushall", url, async {
        tokio::time::sleep(FAULT_AFTER).await;
        let _: () = redis::cmd("FLUSHALL").query(&mut redis.conn()).unwrap();
        Some(anteroom::clock::wall_ms())
    })
    .await;
}

/// Redis frozen (SIGSTOP) for 10 s, then woken (SIGCONT): requests time out meanwhile
/// and scripts that were waiting may run late; nothing is done twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_redis_frozen_for_10_s() {
    let redis = RedisServer::start();
    let url = redis.url();
    let h = on_two_instances("redis-frozen-10s", url, async {
        tokio::time::sleep(FAULT_AFTER).await;
        redis.pause();
        // The fault's length, not a wait for a condition.
        tokio::time::sleep(Duration::from_secs(10)).await;
        redis.resume();
        Some(anteroom::clock::wall_ms())
    })
    .await;
    assert!(check(&h).failed_requests > 0, "the freeze was felt");
}

/// The script cache and the function library flushed (`SCRIPT FLUSH`, `FUNCTION
/// FLUSH`) twice during the run: the next call reloads them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_scripts_flushed() {
    let redis = RedisServer::start();
    let url = redis.url();
    on_two_instances("scripts-flushed", url, async {
        for _ in 0..2 {
            tokio::time::sleep(FAULT_AFTER).await;
            for what in ["SCRIPT", "FUNCTION"] {
                let _: () = redis::cmd(what)
                    .arg("FLUSH")
                    .query(&mut redis.conn())
                    .unwrap();
            }
        }
        None
    })
    .await;
}

/// One instance cut off from Redis by a blackholing proxy for 3 s (bytes held both
/// ways, delivered on healing) while the other goes on: its visitors fail over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_an_instance_cut_off_from_redis() {
    let w = Workload::default();
    let redis = RedisServer::start();
    let hole = crate::faults::Blackhole::start(redis.port);
    let p = prefix();
    let mut cut_off = test_settings(
        Some(format!("redis://127.0.0.1:{}", hole.port)),
        &p,
        vec![the_room(&w)],
    );
    cut_off.store.response_timeout_ms = 500;
    let direct = test_settings(Some(redis.url()), &p, vec![the_room(&w)]);
    let (a, b) = (spawn_app(cut_off).await, spawn_app(direct).await);
    let mut ended = 0;
    let (h, took) = run(&[Endpoint::app(&a), Endpoint::app(&b)], &w, async {
        tokio::time::sleep(FAULT_AFTER).await;
        hole.set(true);
        tokio::time::sleep(Duration::from_secs(3)).await;
        hole.set(false);
        ended = anteroom::clock::wall_ms();
    })
    .await;
    let r = recovery(&h, ended);
    assert_kept_every_promise("instance-cut-off", &h, took, r);
}

/// A Sentinel failover: the master SIGKILLed; the sentinels promote the replica and the
/// instances follow it without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_sentinel_failover() {
    let mut rs = RedisSentinel::start();
    let url = rs.url();
    on_two_instances("sentinel-failover", url, async {
        tokio::time::sleep(FAULT_AFTER).await;
        rs.master.kill();
        Some(anteroom::clock::wall_ms())
    })
    .await;
}

/// One instance (the real binary) SIGKILLed mid-run: its visitors fail over to the
/// other, and the places and sessions live in Redis, so nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_an_instance_killed() {
    let w = Workload::default();
    let redis = RedisServer::start();
    let config = format!(
        "redis_url = \"{}\"\nkey_prefix = \"{}\"\n[[rooms]]\nid = \"{}\"\ncapacity = {}\nsession_ttl_secs = 120\nheartbeat_timeout_secs = 60\ntarget_url = \"http://example.test/\"\n",
        redis.url(),
        prefix(),
        w.room,
        w.capacity
    );
    let mut a = ServerProcess::start(&config);
    let b = ServerProcess::start(&config);
    let mut ended = 0;
    let (h, took) = run(&[Endpoint::process(&a), Endpoint::process(&b)], &w, async {
        tokio::time::sleep(FAULT_AFTER).await;
        a.kill();
        ended = anteroom::clock::wall_ms();
    })
    .await;
    let r = recovery(&h, ended);
    assert_kept_every_promise("instance-killed", &h, took, r);
    assert!(
        check(&h).failures.keys().any(|k| k.starts_with("0 ")),
        "the killed instance was felt"
    );
}
