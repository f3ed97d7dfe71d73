//! The load generator behind `anteroom-loadtest`: crowds of visitors against a running
//! Anteroom, over loopback only, always bounded by a duration and a count.
//!
//! - [`http`]: join + status decisions at full speed (closed loop) or at a fixed rate
//!   (open loop, latency measured from the scheduled send time, so a slow server is not
//!   flattered by coordinated omission).
//! - [`ws`]: visitors arriving at a rate, each holding the queue WebSocket, admitted ones
//!   releasing after a think time, a share abandoning silently; it measures admission
//!   push latency (slot freed → `admitted` received) and the longest silence per socket.
//! - [`eta`]: ETA scenarios against an in-process Anteroom on a fresh Redis: how right
//!   the estimate shown at join was, and how it moved.
//! - [`drops`]: a launch-day drop: a pre-queue of visitors, the opening, the shuffle
//!   and the first pushes.
//! - [`procstat`]: the server processes' RSS and CPU from `/proc`.
//! - [`prototype`]: the in-process single-node prototype the memory store is measured
//!   against (issue 35 item 3).

pub mod drops;
pub mod eta;
pub mod http;
pub mod procstat;
pub mod prototype;
pub mod ws;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

/// Latency samples and errors by kind.
#[derive(Default, Debug, Clone)]
pub struct Samples {
    /// Microseconds.
    pub latencies: Vec<u64>,
    pub errors: BTreeMap<String, u64>,
}

impl Samples {
    pub fn ok(&mut self, d: Duration) {
        self.latencies.push(d.as_micros() as u64);
    }
    pub fn error(&mut self, kind: impl Into<String>) {
        *self.errors.entry(kind.into()).or_default() += 1;
    }
    pub fn merge(&mut self, other: Samples) {
        self.latencies.extend(other.latencies);
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
    }
    pub fn summary(&self) -> LatencySummary {
        let mut v = self.latencies.clone();
        v.sort_unstable();
        LatencySummary {
            count: v.len() as u64,
            p50_ms: percentile(&v, 50.0) as f64 / 1000.0,
            p99_ms: percentile(&v, 99.0) as f64 / 1000.0,
            max_ms: v.last().copied().unwrap_or(0) as f64 / 1000.0,
        }
    }
}

/// Nearest-rank percentile of sorted samples (0 for none).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// `--key value` arguments.
#[derive(Debug, Default, Clone)]
pub struct Args(BTreeMap<String, String>);

impl Args {
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut map = BTreeMap::new();
        let mut it = args.into_iter();
        while let Some(k) = it.next() {
            let key = k
                .strip_prefix("--")
                .ok_or_else(|| format!("expected --option, got {k:?}"))?;
            let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
            map.insert(key.to_string(), v);
        }
        Ok(Self(map))
    }

    pub fn str(&self, k: &str, default: &str) -> String {
        self.0
            .get(k)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    }

    pub fn num<T: std::str::FromStr>(&self, k: &str, default: T) -> Result<T, String> {
        match self.0.get(k) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{k}: {v:?} is not a number")),
        }
    }

    pub fn list(&self, k: &str) -> Vec<String> {
        self.0
            .get(k)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Refuses targets off this machine: load goes to loopback only.
pub fn check_loopback(url: &str) -> Result<(), String> {
    let u = url::Url::parse(url).map_err(|e| format!("bad target {url}: {e}"))?;
    let ok = match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{url}: load tests only target loopback addresses"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn samples_merge_and_summarise() {
        let mut a = Samples::default();
        a.ok(Duration::from_millis(2));
        a.error("timeout");
        let mut b = Samples::default();
        b.ok(Duration::from_millis(4));
        b.error("timeout");
        b.error("http_503");
        a.merge(b);
        let s = a.summary();
        assert_eq!((s.count, s.max_ms), (2, 4.0));
        assert_eq!(a.errors["timeout"], 2);
    }

    #[test]
    fn args_parse_and_reject_junk() {
        let a = Args::parse(
            ["--visitors", "10", "--bind-ips", "127.0.0.2, 127.0.0.3"].map(String::from),
        )
        .unwrap();
        assert_eq!(a.num("visitors", 0u32).unwrap(), 10);
        assert_eq!(a.list("bind-ips"), ["127.0.0.2", "127.0.0.3"]);
        assert!(a.num::<u32>("nope", 5).unwrap() == 5);
        assert!(Args::parse(["visitors".to_string()]).is_err());
        assert!(Args::parse(["--visitors".to_string()]).is_err());
        assert!(Args::parse(["--n", "x"].map(String::from))
            .unwrap()
            .num::<u32>("n", 0)
            .is_err());
    }

    #[test]
    fn only_loopback_targets_are_allowed() {
        assert!(check_loopback("http://127.0.0.1:8080").is_ok());
        assert!(check_loopback("http://127.0.0.3:8080").is_ok());
        assert!(check_loopback("http://localhost:1").is_ok());
        assert!(check_loopback("http://[::1]:1").is_ok());
        assert!(check_loopback("http://10.0.0.1:8080").is_err());
        assert!(check_loopback("http://example.com").is_err());
    }
}
