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
