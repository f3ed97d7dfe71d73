//! A launch-day drop (`anteroom-loadtest drop`): `visitors` join a room's pre-queue,
//! `watchers` of them hold the queue page's WebSocket, and the room opens at
//! `opens_at_ms` (set by the caller, milliseconds since the epoch). Measured from that
//! moment, on this machine's clock (the server's store clock is the same one on
//! loopback):
//!
//! - the shuffle: until the fairness record shows the seed (it is revealed once the
//!   shuffle is done), read every few milliseconds;
//! - the push: each watcher's first frame that is no longer the pre-queue (`status`
//!   with the live queue, or `admitted`), and the first `admitted` of them all.
//!
//! Beside them, the same run's ceilings: the socket's own round trip (`ping` → `pong`
//! before the opening: no push can be faster), and the shuffle's arithmetic alone in
//! this process (one HMAC-SHA256 per pre-queued visitor and a sort).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;
use tokio_tungstenite::tungstenite::Message;

use crate::{LatencySummary, Samples};

/// What `anteroom-loadtest drop` is asked.
#[derive(Clone, Debug)]
pub struct DropConfig {
    pub target: String,
    pub room: String,
    /// Visitors joining the pre-queue.
    pub visitors: u64,
    /// Of them, how many hold the WebSocket through the opening.
    pub watchers: u64,
    /// Joins in flight at once.
    pub concurrency: usize,
    /// When the room opens (ms since the epoch).
    pub opens_at_ms: u64,
    /// How long after the opening to wait for the shuffle and the pushes.
    pub wait: Duration,
}

/// The figures, as one JSON line.
#[derive(Debug, Serialize)]
pub struct DropReport {
    pub joined: u64,
    /// Joins answered `prequeue` (the rest came too late or failed).
    pub prequeued: u64,
    pub join_errors: BTreeMap<String, u64>,
    pub join_seconds: f64,
    /// The fairness record's `prequeue_count` just before the opening.
    pub prequeue_count: Option<u64>,
    pub watchers_opened: u64,
    /// Joining finished this long before the opening (negative: after it; the figures
    /// are then not a drop's).
    pub margin_ms: i64,
    /// From `opens_at` to the seed being revealed (the shuffle done).
    pub shuffle_ms: Option<u64>,
    /// From `opens_at` to the first watcher frame out of the pre-queue.
    pub first_push_ms: Option<u64>,
    /// Every watcher's first frame out of the pre-queue, from `opens_at` (µs).
    pub push: LatencySummary,
    /// From `opens_at` to the first `admitted` frame on any watcher.
    pub first_admitted_ms: Option<u64>,
    pub admitted_watchers: u64,
    /// Ceiling: the socket's round trip before the opening (µs).
    pub ws_round_trip: LatencySummary,
    /// Ceiling: HMAC-SHA256 of every pre-queued visitor id and a sort, in this process.
    pub shuffle_arithmetic_ms: f64,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What each watcher saw, from `opens_at`.
#[derive(Default)]
struct Seen {
    push: Samples,
    round_trip: Samples,
    first_admitted_ms: Option<u64>,
    admitted: u64,
}

pub async fn run(cfg: DropConfig) -> DropReport {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(cfg.concurrency)
        .timeout(Duration::from_secs(30))
        .build()
        // unwrap: a client with these options always builds.
        .unwrap();

    // 1. The pre-queue: `visitors` joins, `concurrency` at a time.
    let t0 = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let tokens = Arc::new(Mutex::new(Vec::with_capacity(cfg.visitors as usize)));
    let errors = Arc::new(Mutex::new(Samples::default()));
    let prequeued = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..cfg.concurrency {
        let (http, cfg) = (http.clone(), cfg.clone());
        let (next, tokens, errors, prequeued) = (
            next.clone(),
            tokens.clone(),
            errors.clone(),
            prequeued.clone(),
        );
        tasks.push(tokio::spawn(async move {
            use std::sync::atomic::Ordering::Relaxed;
            while next.fetch_add(1, Relaxed) < cfg.visitors {
                let r = http
                    .post(format!("{}/api/rooms/{}/join", cfg.target, cfg.room))
                    .send()
                    .await;
                let body: serde_json::Value = match r {
                    Ok(r) if r.status().is_success() => r.json().await.unwrap_or_default(),
                    Ok(r) => {
                        errors
                            .lock()
                            .unwrap()
                            .error(format!("join_http_{}", r.status().as_u16()));
                        continue;
                    }
                    Err(_) => {
                        errors.lock().unwrap().error("join_transport");
                        continue;
                    }
                };
                if body["state"] == "prequeue" {
                    prequeued.fetch_add(1, Relaxed);
                }
                if let Some(t) = body["visitor_token"].as_str() {
                    tokens.lock().unwrap().push(t.to_string());
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let join_seconds = t0.elapsed().as_secs_f64();
    let tokens: Vec<String> = std::mem::take(&mut *tokens.lock().unwrap());
    let fairness_url = format!("{}/api/rooms/{}/fairness", cfg.target, cfg.room);
    let fairness = |http: reqwest::Client| {
        let url = fairness_url.clone();
        async move {
            let r = http.get(url).send().await.ok()?;
            r.json::<serde_json::Value>().await.ok()
        }
    };
    let prequeue_count = fairness(http.clone())
        .await
        .and_then(|f| f["prequeue_count"].as_u64());

    // 2. The watchers: sockets held through the opening.
    let seen = Arc::new(Mutex::new(Seen::default()));
    let deadline =
        Instant::now() + Duration::from_millis(cfg.opens_at_ms.saturating_sub(now_ms())) + cfg.wait;
    let mut watchers = Vec::new();
    let host = cfg.target.trim_start_matches("http://").to_string();
    for token in tokens.iter().take(cfg.watchers as usize) {
        let url = format!("ws://{host}/r/{}/ws?token={token}", cfg.room);
        let (seen, opens_at) = (seen.clone(), cfg.opens_at_ms);
        watchers.push(tokio::spawn(async move {
            watch(url, opens_at, deadline, seen).await
        }));
    }
    let margin_ms = cfg.opens_at_ms as i64 - now_ms() as i64;

    // 3. The shuffle: the seed shows once it is done.
    let mut shuffle_ms = None;
    while Instant::now() < deadline {
        if now_ms() >= cfg.opens_at_ms {
            if let Some(f) = fairness(http.clone()).await {
                if f["seed"].is_string() {
                    shuffle_ms = Some(now_ms().saturating_sub(cfg.opens_at_ms));
                    break;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut opened = 0;
    for w in watchers {
        if let Ok(true) = w.await {
            opened += 1;
        }
    }

    // 4. The shuffle's arithmetic alone (after the run, not to take CPU from it).
    let t = Instant::now();
    let seed: [u8; 32] = rand::random();
    let mut digests: Vec<String> = tokens
        .iter()
        .map(|tok| {
            let id = tok.split('.').next().unwrap_or_default();
            // unwrap: HMAC takes a key of any length.
            let mut mac = Hmac::<Sha256>::new_from_slice(&seed).unwrap();
            mac.update(id.as_bytes());
            mac.finalize()
                .into_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
        .collect();
    digests.sort_unstable();
    let shuffle_arithmetic_ms = t.elapsed().as_secs_f64() * 1000.0;

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let errors = std::mem::take(&mut *errors.lock().unwrap());
    let push = seen.push.summary();
    DropReport {
        joined: tokens.len() as u64,
        prequeued: prequeued.load(std::sync::atomic::Ordering::Relaxed),
        join_errors: errors.errors,
        join_seconds,
        prequeue_count,
        watchers_opened: opened,
        margin_ms,
        shuffle_ms,
        first_push_ms: seen.push.latencies.iter().min().map(|us| us / 1000),
        push,
        first_admitted_ms: seen.first_admitted_ms,
        admitted_watchers: seen.admitted,
        ws_round_trip: seen.round_trip.summary(),
        shuffle_arithmetic_ms,
    }
}

/// One watcher: opens the socket, times a few pings before the opening, then waits for
/// its first frame out of the pre-queue and (maybe) its admission. True if it opened.
async fn watch(url: String, opens_at_ms: u64, deadline: Instant, seen: Arc<Mutex<Seen>>) -> bool {
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url).await else {
        return false;
    };
    let mut ping_sent: Option<Instant> = None;
    let mut pings = 0;
    let mut flipped = false;
    loop {
        // Pings only well before the opening, so they never delay the push.
        let early = now_ms() + 1_000 < opens_at_ms;
        if early && ping_sent.is_none() && pings < 3 {
            if ws.send(Message::text(r#"{"type":"ping"}"#)).await.is_err() {
                break;
            }
            ping_sent = Some(Instant::now());
            pings += 1;
        }
        let wait = if ping_sent.is_none() && early && pings < 3 {
            Duration::from_millis(50)
        } else {
            deadline.saturating_duration_since(Instant::now())
        };
        let msg = match tokio::time::timeout(wait, ws.next()).await {
            Err(_) if Instant::now() >= deadline => break,
            Err(_) => continue,
            Ok(Some(Ok(Message::Text(t)))) => t,
            Ok(Some(Ok(_))) => continue,
            Ok(_) => break,
        };
        let v: serde_json::Value = serde_json::from_str(&msg).unwrap_or_default();
        let at = now_ms().saturating_sub(opens_at_ms);
        match v["type"].as_str() {
            Some("pong") => {
                if let Some(s) = ping_sent.take() {
                    seen.lock().unwrap().round_trip.ok(s.elapsed());
                }
            }
            Some("status") if !flipped && v["state"] != "prequeue" && now_ms() >= opens_at_ms => {
                flipped = true;
                seen.lock().unwrap().push.ok(Duration::from_millis(at));
            }
            Some("admitted") => {
                let mut s = seen.lock().unwrap();
                if !flipped {
                    s.push.ok(Duration::from_millis(at));
                }
                s.admitted += 1;
                s.first_admitted_ms = Some(s.first_admitted_ms.map_or(at, |f| f.min(at)));
                break;
            }
            _ => {}
        }
    }
    let _ = ws.close(None).await;
    true
}
