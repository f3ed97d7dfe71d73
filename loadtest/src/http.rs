//! Join + status decisions over HTTP.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{LatencySummary, Samples};

/// What each request does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A new visitor joins, then asks its status once: two decisions.
    JoinStatus,
    /// `GET <path>` (the HTTP ceiling against a trivial handler).
    Get(String),
}

#[derive(Clone, Debug)]
pub struct HttpConfig {
    pub target: String,
    pub room: String,
    pub concurrency: usize,
    pub duration: Duration,
    pub max_requests: u64,
    /// Total requests per second (open loop); `None` = as fast as answers come.
    pub rate: Option<f64>,
    pub mode: Mode,
    /// A header sent with every `get` request (`--header 'cookie: anteroom_pass_…=…'`:
    /// a pass through the gateway).
    pub header: Option<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HttpReport {
    pub scenario: String,
    pub requests: u64,
    pub elapsed_s: f64,
    pub requests_per_s: f64,
    pub latency: LatencySummary,
    pub errors: std::collections::BTreeMap<String, u64>,
}

fn client(concurrency: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(10))
        .build()
        // unwrap: a client with these options always builds.
        .unwrap()
}

fn kind(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timeout".into()
    } else if e.is_connect() {
        "connect".into()
    } else {
        "transport".into()
    }
}

/// One timed request; returns the body on 2xx.
async fn timed(
    req: reqwest::RequestBuilder,
    since: Instant,
    s: &mut Samples,
) -> Option<bytes_like::Body> {
    match req.send().await {
        Ok(r) if r.status().is_success() => match r.bytes().await {
            Ok(b) => {
                s.ok(since.elapsed());
                Some(b)
            }
            Err(e) => {
                s.error(kind(&e));
                None
            }
        },
        Ok(r) => {
            s.error(format!("http_{}", r.status().as_u16()));
            None
        }
        Err(e) => {
            s.error(kind(&e));
            None
        }
    }
}

mod bytes_like {
    pub type Body = actix_web::web::Bytes;
}

/// Runs the scenario; every request counts towards `max_requests`.
pub async fn run(cfg: HttpConfig) -> HttpReport {
    let http = client(cfg.concurrency);
    let sent = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + cfg.duration;
    // `rate` counts requests: a join+status iteration is two of them.
    let per_iteration = match cfg.mode {
        Mode::JoinStatus => 2.0,
        Mode::Get(_) => 1.0,
    };
    let per_worker_gap = cfg
        .rate
        .map(|r| Duration::from_secs_f64(cfg.concurrency as f64 * per_iteration / r.max(0.001)));
    let mut tasks = Vec::new();
    for w in 0..cfg.concurrency {
        let (http, sent, cfg) = (http.clone(), sent.clone(), cfg.clone());
        tasks.push(tokio::spawn(async move {
            let mut s = Samples::default();
            // Spread open-loop workers over one gap so they do not fire together.
            let mut next = start
                + per_worker_gap
                    .map(|g| g.mul_f64(w as f64 / cfg.concurrency as f64))
                    .unwrap_or_default();
            let join_url = format!("{}/api/rooms/{}/join", cfg.target, cfg.room);
            let status_url = format!("{}/api/rooms/{}/status", cfg.target, cfg.room);
            loop {
                if Instant::now() >= deadline {
                    break;
                }
                let scheduled = match per_worker_gap {
                    Some(g) => {
                        tokio::time::sleep_until(next.into()).await;
                        let at = next;
                        next += g;
                        at
                    }
                    None => Instant::now(),
                };
                match &cfg.mode {
                    Mode::Get(path) => {
                        if sent.fetch_add(1, Ordering::Relaxed) >= cfg.max_requests {
                            break;
                        }
                        let mut req = http.get(format!("{}{path}", cfg.target));
                        if let Some((name, value)) = &cfg.header {
                            req = req.header(name, value);
                        }
                        timed(req, scheduled, &mut s).await;
                    }
                    Mode::JoinStatus => {
                        if sent.fetch_add(2, Ordering::Relaxed) >= cfg.max_requests {
                            break;
                        }
                        let Some(body) = timed(http.post(&join_url), scheduled, &mut s).await
                        else {
                            continue;
                        };
                        let token = serde_json::from_slice::<serde_json::Value>(&body)
                            .ok()
                            .and_then(|v| v["visitor_token"].as_str().map(str::to_string));
                        let Some(token) = token else {
                            s.error("bad_join_body");
                            continue;
                        };
                        let t = Instant::now();
                        timed(http.get(&status_url).bearer_auth(token), t, &mut s).await;
                    }
                }
            }
            s
        }));
    }
    let mut all = Samples::default();
    for t in tasks {
        if let Ok(s) = t.await {
            all.merge(s);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let requests = all.latencies.len() as u64 + all.errors.values().sum::<u64>();
    HttpReport {
        scenario: match &cfg.mode {
            Mode::JoinStatus => "join+status".into(),
            Mode::Get(p) => format!("GET {p}"),
        },
        requests,
        elapsed_s: elapsed,
        requests_per_s: all.latencies.len() as f64 / elapsed.max(1e-9),
        latency: all.summary(),
        errors: all.errors,
    }
}
