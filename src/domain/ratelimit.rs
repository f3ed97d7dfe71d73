//! Request limits on the hot endpoints.
//!
//! - **Per visitor**: a fixed-window counter kept in the store (one atomic `INCR` +
//!   `PEXPIRE` script on Redis), so the limit holds across instances. Default 30 requests
//!   per 60 s over join and status together.
//! - **Per IP**: an in-process `governor` keyed limiter (GCRA) in front of joins and
//!   WebSocket upgrades, stopping floods before they cost a store round trip. Its key map
//!   is pruned with `retain_recent` so it stays bounded.
//!
//! When the store is unreachable the per-visitor limiter **fails open** (the request goes
//! on and will most likely get a 503 from the admission store itself); the per-IP limiter
//! needs no store and keeps working.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::RateLimitSettings;

/// The actions a limiter guards, with the message a refused client sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitedAction {
    /// Joining a room (per IP and per visitor).
    Join,
    /// Polling status (per visitor).
    Status,
    /// Opening the queue WebSocket (per IP and per visitor).
    WsUpgrade,
}

impl LimitedAction {
    pub fn label(self) -> &'static str {
        match self {
            LimitedAction::Join => "join",
            LimitedAction::Status => "status",
            LimitedAction::WsUpgrade => "ws_upgrade",
        }
    }
}

/// Per-IP limiter; `None` inside when disabled.
#[derive(Clone)]
pub struct IpLimiter {
    inner: Option<Arc<DefaultKeyedRateLimiter<IpAddr>>>,
}

impl IpLimiter {
    pub fn new(s: &RateLimitSettings) -> Self {
        let inner = NonZeroU32::new(s.ip_per_second).map(|rate| {
            let burst = NonZeroU32::new(s.ip_burst.max(s.ip_per_second)).unwrap_or(rate);
            Arc::new(RateLimiter::keyed(
                Quota::per_second(rate).allow_burst(burst),
            ))
        });
        Self { inner }
    }

    /// `Err(seconds to wait)` when the IP is over its quota.
    pub fn check(&self, ip: IpAddr) -> Result<(), u64> {
        let Some(l) = &self.inner else { return Ok(()) };
        l.check_key(&ip).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }

    /// Drops keys that are back to a full burst; call periodically.
    pub fn prune(&self) {
        if let Some(l) = &self.inner {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }

    /// Number of tracked IPs (for tests of the bound).
    pub fn tracked(&self) -> usize {
        self.inner.as_ref().map(|l| l.len()).unwrap_or(0)
    }
}

/// Failed authentications per client and overall, in fixed one-minute windows: once a
/// client (an IPv4 address, or an IPv6 /64) has failed that many times in the window,
/// or everyone together has and this client failed at least once, its further attempts
/// are refused *before* the credential is checked, so guessing cannot go on at full
/// speed and a right guess made while blocked tells the guesser nothing.
///
/// Only clients that failed are ever refused: the global ceiling used to refuse every
/// client, so ~300 wrong guesses from 35 addresses locked the right token out for the
/// rest of the minute (issue 28, finding 10). Now a client with no failure in the
/// window is always checked, and a right token from it always works; past the ceiling,
/// each further guessing address gets one guess before it is refused. Time is passed
/// in, so tests control it.
pub struct FailureLimiter {
    per_client: u32,
    global: u32,
    state: std::sync::Mutex<FailureWindow>,
}

struct FailureWindow {
    started: std::time::Instant,
    global: u32,
    by_client: std::collections::HashMap<IpAddr, u32>,
}

/// The window the counts live in.
const FAILURE_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// The key an address is counted under: itself for IPv4, its /64 for IPv6 (one
/// subscriber usually holds a whole /64).
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::from([s[0], s[1], s[2], s[3], 0, 0, 0, 0])
        }
    }
}

impl FailureLimiter {
    pub fn new(per_client: u32, global: u32, now: std::time::Instant) -> Self {
        Self {
            per_client,
            global,
            state: std::sync::Mutex::new(FailureWindow {
                started: now,
                global: 0,
                by_client: Default::default(),
            }),
        }
    }

    fn window(&self, now: std::time::Instant) -> std::sync::MutexGuard<'_, FailureWindow> {
        // unwrap: the lock is never held across a panic.
        let mut w = self.state.lock().unwrap();
        if now.duration_since(w.started) >= FAILURE_WINDOW {
            w.started = now;
            w.global = 0;
            w.by_client.clear();
        }
        w
    }

    /// `Some(seconds until the window ends)` while `ip` may not try.
    pub fn blocked(&self, ip: IpAddr, now: std::time::Instant) -> Option<u64> {
        let w = self.window(now);
        let mine = w.by_client.get(&client_key(ip)).copied().unwrap_or(0);
        (mine >= self.per_client || (mine > 0 && w.global >= self.global)).then(|| {
            (FAILURE_WINDOW.saturating_sub(now.duration_since(w.started)))
                .as_secs()
                .max(1)
        })
    }

    /// Counts a failed attempt from `ip`.
    pub fn failed(&self, ip: IpAddr, now: std::time::Instant) {
        let mut w = self.window(now);
        w.global = w.global.saturating_add(1);
        *w.by_client.entry(client_key(ip)).or_default() += 1;
    }
}

#[cfg(test)]
mod failure_tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_client_is_blocked_after_its_failures_until_the_window_ends() {
        let t0 = Instant::now();
        let l = FailureLimiter::new(3, 100, t0);
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        let other: IpAddr = "203.0.113.8".parse().unwrap();
        for _ in 0..3 {
            assert_eq!(l.blocked(ip, t0), None);
            l.failed(ip, t0);
        }
        assert_eq!(l.blocked(ip, t0 + Duration::from_secs(10)), Some(50));
        assert_eq!(l.blocked(other, t0), None);
        assert_eq!(l.blocked(ip, t0 + Duration::from_secs(60)), None);
    }

    #[test]
    fn an_ipv6_slash_64_counts_as_one_client_and_the_global_ceiling_holds() {
        let t0 = Instant::now();
        let l = FailureLimiter::new(2, 5, t0);
        l.failed("2001:db8:1:2::1".parse().unwrap(), t0);
        l.failed("2001:db8:1:2:ffff::9".parse().unwrap(), t0);
        assert!(l.blocked("2001:db8:1:2::42".parse().unwrap(), t0).is_some());
        assert!(l.blocked("2001:db8:1:3::1".parse().unwrap(), t0).is_none());
        for i in 0..3 {
            l.failed(IpAddr::from([198, 51, 100, i]), t0);
        }
        // Past the ceiling, every client that failed is refused, one below its own limit
        // included; a client that has not failed is still checked.
        assert!(l.blocked(IpAddr::from([198, 51, 100, 0]), t0).is_some());
        assert!(l.blocked("192.0.2.1".parse().unwrap(), t0).is_none());
    }

    /// Issue 28 finding 10: 35 addresses guessing 9 times each (under the per-client
    /// limit, over the global one) refused the right token from anywhere.
    #[test]
    fn many_addresses_guessing_never_block_a_client_that_has_not_failed() {
        let t0 = Instant::now();
        let l = FailureLimiter::new(10, 300, t0);
        for a in 0..35u8 {
            for _ in 0..9 {
                if l.blocked(IpAddr::from([198, 51, 100, a]), t0).is_none() {
                    l.failed(IpAddr::from([198, 51, 100, a]), t0);
                }
            }
        }
        assert!(l.blocked(IpAddr::from([198, 51, 100, 34]), t0).is_some());
        assert_eq!(l.blocked("192.0.2.1".parse().unwrap(), t0), None);
    }
}

/// The group a client address counts in for `max_places_per_ip`: the address itself
/// (IPv4, or IPv4 seen on a dual-stack socket), or its /64 for IPv6 (one subscriber's
/// network: one host can use every address in it).
pub fn place_group(ip: std::net::IpAddr) -> String {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                format!("{net}/64")
            }
        },
    }
}

#[cfg(test)]
mod place_group_tests {
    use super::place_group;

    #[test]
    fn ipv6_counts_per_64_and_ipv4_per_address() {
        let g = |s: &str| place_group(s.parse().unwrap());
        assert_eq!(g("203.0.113.9"), "203.0.113.9");
        assert_eq!(g("::ffff:203.0.113.9"), "203.0.113.9");
        assert_eq!(g("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(g("2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
        assert_ne!(g("2001:db8:1:3::1"), g("2001:db8:1:2::1"));
    }
}
