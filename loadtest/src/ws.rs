//! A crowd holding queue WebSockets.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use rand::Rng;
use serde::Serialize;
use tokio::net::TcpSocket;
use tokio_tungstenite::tungstenite::Message;

use super::{percentile, LatencySummary, Samples};

#[derive(Clone, Debug)]
pub struct WsConfig {
    pub target: String,
    pub room: String,
    pub visitors: u64,
    /// New visitors per second.
    pub arrival_rate: f64,
    pub duration: Duration,
    /// How long an admitted visitor stays before releasing.
    pub think: Duration,
    /// Share of visitors (0..1) that leave silently: no release, socket just dropped.
    pub abandon_share: f64,
    /// Source addresses to spread sockets over (127.0.0.2, …); empty = default.
    pub bind_ips: Vec<IpAddr>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WsReport {
    pub scenario: String,
    pub visitors_started: u64,
    pub sockets_opened: u64,
    pub peak_open_sockets: u64,
    pub messages: u64,
    pub admitted: u64,
    pub released: u64,
    pub abandoned: u64,
    /// Admission (the store's admit time) → `admitted` received.
    pub push_latency: LatencySummary,
    /// Per socket, the longest silence while it waited; p99 and max over sockets.
    pub longest_silence_p99_ms: f64,
    pub longest_silence_max_ms: f64,
    /// The same, counting only the silence after the crowd is in (every arrival made,
    /// plus [`SETTLE`]): what a waiting socket sees once the joins stop competing for the
    /// machine. Sockets still waiting then; 0 when none was.
    pub steady_silence_p99_ms: f64,
    pub steady_silence_max_ms: f64,
    pub join_latency: LatencySummary,
    pub errors: BTreeMap<String, u64>,
    pub elapsed_s: f64,
}

#[derive(Default)]
struct Shared {
    open: AtomicU64,
    peak: AtomicU64,
    opened: AtomicU64,
    messages: AtomicU64,
    admitted: AtomicU64,
    released: AtomicU64,
    abandoned: AtomicU64,
    push: Mutex<Samples>,
    joins: Mutex<Samples>,
    silences: Mutex<Vec<u64>>,
    steady_silences: Mutex<Vec<u64>>,
}

/// How long after the last arrival the steady phase starts (the last sockets' joins and
/// handshakes finish within it).
pub const SETTLE: Duration = Duration::from_secs(5);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Runs the crowd until `duration` is over, then closes every socket.
pub async fn run(cfg: WsConfig) -> WsReport {
    let shared = Arc::new(Shared::default());
    let start = Instant::now();
    let deadline = start + cfg.duration;
    let clients: Vec<reqwest::Client> = if cfg.bind_ips.is_empty() {
        vec![http_client(None)]
    } else {
        cfg.bind_ips
            .iter()
            .map(|ip| http_client(Some(*ip)))
            .collect()
    };
    let gap = Duration::from_secs_f64(1.0 / cfg.arrival_rate.max(0.001));
    let steady = (start + gap.mul_f64(cfg.visitors as f64) + SETTLE).min(deadline);
    let mut tasks = Vec::new();
    for i in 0..cfg.visitors {
        let at = start + gap.mul_f64(i as f64);
        if at >= deadline {
            break;
        }
        tokio::time::sleep_until(at.into()).await;
        let ip = cfg
            .bind_ips
            .get(i as usize % cfg.bind_ips.len().max(1))
            .copied();
        let http = clients[i as usize % clients.len()].clone();
        let abandon = rand::thread_rng().gen_bool(cfg.abandon_share.clamp(0.0, 1.0));
        tasks.push(tokio::spawn(visitor(
            cfg.clone(),
            http,
            ip,
            abandon,
            (steady, deadline),
            shared.clone(),
        )));
    }
    let started = tasks.len() as u64;
    let mut errors = Samples::default();
    for t in tasks {
        if let Ok(Err(kind)) = t.await {
            errors.error(kind);
        }
    }
    let mut silences = shared.silences.lock().unwrap().clone();
    silences.sort_unstable();
    let mut steady_silences = shared.steady_silences.lock().unwrap().clone();
    steady_silences.sort_unstable();
    let push = shared.push.lock().unwrap().clone();
    let joins = shared.joins.lock().unwrap().clone();
    errors.merge(Samples {
        latencies: Vec::new(),
        errors: push.errors.clone(),
    });
    errors.merge(Samples {
        latencies: Vec::new(),
        errors: joins.errors.clone(),
    });
    WsReport {
        scenario: "websocket crowd".into(),
        visitors_started: started,
        sockets_opened: shared.opened.load(Ordering::Relaxed),
        peak_open_sockets: shared.peak.load(Ordering::Relaxed),
        messages: shared.messages.load(Ordering::Relaxed),
        admitted: shared.admitted.load(Ordering::Relaxed),
        released: shared.released.load(Ordering::Relaxed),
        abandoned: shared.abandoned.load(Ordering::Relaxed),
        push_latency: push.summary(),
        longest_silence_p99_ms: percentile(&silences, 99.0) as f64,
        longest_silence_max_ms: silences.last().copied().unwrap_or(0) as f64,
        steady_silence_p99_ms: percentile(&steady_silences, 99.0) as f64,
        steady_silence_max_ms: steady_silences.last().copied().unwrap_or(0) as f64,
        join_latency: joins.summary(),
        errors: errors.errors,
        elapsed_s: start.elapsed().as_secs_f64(),
    }
}

fn http_client(ip: Option<IpAddr>) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip)
        .pool_max_idle_per_host(64)
        .timeout(Duration::from_secs(15))
        .build()
        // unwrap: a client with these options always builds.
        .unwrap()
}

/// One visitor's life. Returns the kind of error that ended it, if any.
async fn visitor(
    cfg: WsConfig,
    http: reqwest::Client,
    ip: Option<IpAddr>,
    abandon: bool,
    (steady, deadline): (Instant, Instant),
    shared: Arc<Shared>,
) -> Result<(), String> {
    let t = Instant::now();
    let join = http
        .post(format!("{}/api/rooms/{}/join", cfg.target, cfg.room))
        .send()
        .await
        .map_err(|_| "join_transport".to_string())?;
    if !join.status().is_success() {
        return Err(format!("join_http_{}", join.status().as_u16()));
    }
    let body: serde_json::Value = join.json().await.map_err(|_| "join_body".to_string())?;
    shared.joins.lock().unwrap().ok(t.elapsed());
    let token = body["visitor_token"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let url = url::Url::parse(&cfg.target).map_err(|_| "target".to_string())?;
    let host = url.host_str().unwrap_or("127.0.0.1").to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let server: SocketAddr = format!("{host}:{port}")
        .parse()
        .map_err(|_| "target_addr".to_string())?;
    let sock = if server.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|_| "socket".to_string())?;
    if let Some(ip) = ip {
        sock.bind(SocketAddr::new(ip, 0))
            .map_err(|_| "bind".to_string())?;
    }
    let stream = sock
        .connect(server)
        .await
        .map_err(|_| "ws_connect".to_string())?;
    let ws_url = format!("ws://{host}:{port}/r/{}/ws?token={token}", cfg.room);
    let (mut ws, _) = tokio_tungstenite::client_async(ws_url, stream)
        .await
        .map_err(|e| format!("ws_handshake: {}", short(&e.to_string())))?;
    shared.opened.fetch_add(1, Ordering::Relaxed);
    let open = shared.open.fetch_add(1, Ordering::Relaxed) + 1;
    shared.peak.fetch_max(open, Ordering::Relaxed);

    let abandon_at =
        abandon.then(|| Instant::now() + cfg.think.mul_f64(rand::thread_rng().gen_range(0.0..1.0)));
    let mut last = Instant::now();
    let mut longest = Silence::default();
    let mut waiting = true;
    let result = loop {
        let until = abandon_at.map(|a| a.min(deadline)).unwrap_or(deadline);
        let msg = match tokio::time::timeout_at(until.into(), ws.next()).await {
            Err(_) => {
                if abandon_at.is_some_and(|a| Instant::now() >= a) && Instant::now() < deadline {
                    // Leave without a word: no close frame, no release.
                    shared.abandoned.fetch_add(1, Ordering::Relaxed);
                    drop(ws);
                    shared.open.fetch_sub(1, Ordering::Relaxed);
                    longest.heard(last, steady, Instant::now());
                    record_silence(&shared, &longest, waiting);
                    return Ok(());
                }
                // The run is over: the silence up to now counts too.
                longest.heard(last, steady, Instant::now());
                break Ok(());
            }
            Ok(None) => break Err("ws_closed_by_server".to_string()),
            Ok(Some(Err(e))) => break Err(format!("ws_error: {}", short(&e.to_string()))),
            Ok(Some(Ok(m))) => m,
        };
        let Message::Text(text) = msg else { continue };
        shared.messages.fetch_add(1, Ordering::Relaxed);
        longest.heard(last, steady, Instant::now());
        last = Instant::now();
        // Statuses are only counted; the load generator parses just the admissions, so
        // its own CPU does not blur the silences it measures.
        if !text.contains("\"admitted\"") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if v["type"] == "admitted" {
            waiting = false;
            shared.admitted.fetch_add(1, Ordering::Relaxed);
            if let Some(at) = v["admitted_at"].as_u64() {
                let lat = now_ms().saturating_sub(at);
                shared.push.lock().unwrap().ok(Duration::from_millis(lat));
            }
            if abandon_at.is_some() {
                continue; // an abandoning visitor never gives the slot back
            }
            // Use the slot, then give it back.
            let think_until = (Instant::now() + cfg.think).min(deadline);
            tokio::time::sleep_until(think_until.into()).await;
            let pass = v["pass"].as_str().unwrap_or_default();
            let r = http
                .post(format!("{}/api/rooms/{}/release", cfg.target, cfg.room))
                .bearer_auth(pass)
                .send()
                .await;
            match r {
                Ok(r) if r.status().as_u16() == 204 => {
                    shared.released.fetch_add(1, Ordering::Relaxed);
                }
                Ok(r) => break Err(format!("release_http_{}", r.status().as_u16())),
                Err(_) => break Err("release_transport".to_string()),
            }
            break Ok(());
        }
    };
    record_silence(&shared, &longest, waiting);
    let _ = ws.close(None).await;
    let _ = ws.flush().await;
    shared.open.fetch_sub(1, Ordering::Relaxed);
    result
}

/// A socket's longest silences: over its life, and after `steady` only.
#[derive(Default)]
struct Silence {
    all: Duration,
    steady: Duration,
}

impl Silence {
    /// Something was heard at `now` (or the socket ends then); the last thing before was
    /// at `last`.
    fn heard(&mut self, last: Instant, steady: Instant, now: Instant) {
        self.all = self.all.max(now - last);
        if now > steady {
            self.steady = self.steady.max(now - last.max(steady));
        }
    }
}

fn record_silence(shared: &Shared, longest: &Silence, waited: bool) {
    if waited {
        shared
            .silences
            .lock()
            .unwrap()
            .push(longest.all.as_millis() as u64);
        if !longest.steady.is_zero() {
            shared
                .steady_silences
                .lock()
                .unwrap()
                .push(longest.steady.as_millis() as u64);
        }
    }
}

fn short(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::Silence;
    use std::time::{Duration, Instant};

    #[test]
    fn a_silence_counts_after_the_crowd_is_in_only_from_then() {
        let t0 = Instant::now();
        let s = |x: u64| t0 + Duration::from_millis(x);
        let steady = s(10_000);
        let mut l = Silence::default();
        // 8 s of silence wholly in the ramp: counted over the run, not once the crowd is in.
        l.heard(s(0), steady, s(8_000));
        assert_eq!((l.all, l.steady), (Duration::from_secs(8), Duration::ZERO));
        // 6 s straddling the start of the steady phase: 6 s over the run, 3 s after it.
        l.heard(s(7_000), steady, s(13_000));
        assert_eq!(l.all, Duration::from_secs(8));
        assert_eq!(l.steady, Duration::from_secs(3));
        // 4 s wholly after it.
        l.heard(s(13_000), steady, s(17_000));
        assert_eq!(
            (l.all, l.steady),
            (Duration::from_secs(8), Duration::from_secs(4))
        );
    }
}
