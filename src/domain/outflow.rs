//! The adaptive outflow controller (docs/outflow.md): from one interval's signals about
//! the origin (its latency to headers and its errors) and the room's load, the room's next
//! capacity. Pure: no clock, no store, no HTTP; `crate::outflow` runs it per room under a
//! lease and applies what it decides through the admin service.
//!
//! The rule is AIMD, as TCP's congestion control and Netflix's concurrency limits use it:
//!
//! - **Lower** (multiplicatively) when the p95 latency is over `target_p95_ms` or the error
//!   rate over `max_error_rate`: by the factor that would bring the p95 back to target if
//!   latency followed the load (`target / p95`), kept within [`MIN_FACTOR`],
//!   [`MAX_FACTOR`]; for errors by the share that succeeded ([`error_factor`]), kept
//!   within the same. A p95 far over the target ([`SURE_SLOW`]) or errors lower at once;
//!   a p95 just over the target only when the interval before was over it too
//!   ([`Hold::Unconfirmed`]): the p95 of one short interval is noisy. Nobody already in
//!   is sent out: the room admits again once enough sessions end, and until then (more
//!   sessions live than the capacity) it does not lower again ([`Hold::Draining`]): the
//!   interval measured the old capacity's sessions.
//! - **Raise** while the origin is healthy with a margin (p95 of this interval and the
//!   one before under [`RAISE_BELOW`] of the target, errors under the limit), people
//!   are waiting and the room uses its capacity (live sessions at least [`IN_USE`] of
//!   it): a capacity nobody uses says nothing about whether the origin can take more.
//!   By how much grows with the headroom ([`raise_to`]): additively (by [`step`]) just
//!   under the raise threshold, up to doubling ([`MAX_RAISE`]) with a p95 near 0. Far
//!   from the target the capacity climbs like TCP's slow start (a pure additive climb
//!   from a low start spent most of a 40 s sale below the origin's limit: 64 % of the
//!   best fixed capacity, measured); near it, it probes in small steps like TCP's
//!   congestion avoidance. After a raise of more than the step it waits one interval
//!   ([`Hold::Settling`]): the visitors just let in reach the origin over the next
//!   seconds, so the interval that ends with a raise measured the origin under the old
//!   capacity, and raising again on it overshot (measured: a doubling each interval
//!   went from 66 to 115 and 11 % errors in 5 s). Once the origin failed, fast raises
//!   stop below where it failed ([`Load::overload_at`], TCP's `ssthresh`). Lowering
//!   never waits for a raise.
//! - **Hold** otherwise: between [`RAISE_BELOW`] and 1 × the target, nobody waiting, or too
//!   few answers to judge ([`MIN_ANSWERS`]) and no report.
//!
//! Always within `min_capacity` and `max_capacity` (a capacity outside them is brought
//! inside at the first decision).

use serde::{Deserialize, Serialize};

use crate::config::OutflowConfig;

pub mod histogram;
pub mod meter;
pub use histogram::Histogram;
pub use meter::{OriginMeter, Seen};

/// The smallest and largest multiplicative decrease.
pub const MIN_FACTOR: f64 = 0.5;
pub const MAX_FACTOR: f64 = 0.8;
/// The capacity is raised only while the p95 is under this share of the target.
pub const RAISE_BELOW: f64 = 0.85;
/// The capacity is raised only while this share of it is in use.
pub const IN_USE: f64 = 0.9;
/// The most one raise multiplies the capacity by (a p95 of 0: all headroom).
pub const MAX_RAISE: f64 = 2.0;
/// Multiplicative raises stop at this share of the capacity at which the origin was last
/// overloaded ([`Load::overload_at`]); above it the controller probes by the step.
pub const BELOW_OVERLOAD: f64 = 0.9;
/// A p95 over this many times the target lowers at once; one under it must be confirmed
/// by the next interval. The p95 of a 2 s interval is noisy: in a benchmark run on a
/// loaded machine with 1.5 here, one lower from 76 to 43 (× 0.57, so a p95 read near
/// 1.75 × the target) came while the origin's own p95 over those 5 s was 169 ms against
/// a target of 250. A deploy gone wrong (4 × slower) read 3.6 × and more.
pub const SURE_SLOW: f64 = 2.0;
/// Fewer gateway answers than this in an interval (and no report) say nothing.
pub const MIN_ANSWERS: u64 = 20;
/// The `eta_reason` given while the controller has lowered the capacity.
pub const ORIGIN_BUSY: &str = "origin_busy";

/// The additive step: a fortieth of the range between the bounds, at least 1, so the
/// controller crosses it in 40 intervals.
pub fn step(cfg: &OutflowConfig) -> u64 {
    (cfg.max_capacity.saturating_sub(cfg.min_capacity))
        .div_ceil(40)
        .max(1)
}

/// The capacity after a raise from `cap` with the interval's `p95` (ms): `cap × (1 + h)`,
/// `h` the headroom under the raise threshold (`1 − p95 / (RAISE_BELOW × target)`, 0 at
/// the threshold, 1 at a p95 of 0) times `MAX_RAISE − 1`; at least [`step`] more, at most
/// `max_capacity`. Without a p95 (a report of errors only) the step.
///
/// Once the origin has been overloaded (`overload_at`), the proportional raise stops at
/// [`BELOW_OVERLOAD`] of that capacity, as TCP's slow start stops at `ssthresh`: the p95 of
/// a 2 s interval is noisy, and an origin may fail (errors) before its latency warns
/// (measured: 82 to 120 in one raise on a quiet interval, then 13 % errors).
pub fn raise_to(cfg: &OutflowConfig, cap: u64, p95: Option<f64>, overload_at: Option<u64>) -> u64 {
    let additive = cap.saturating_add(step(cfg));
    let threshold = cfg.target_p95_ms as f64 * RAISE_BELOW;
    let mut proportional = p95.map_or(0, |p| {
        let headroom = (1.0 - p / threshold).clamp(0.0, 1.0);
        (cap as f64 * (1.0 + (MAX_RAISE - 1.0) * headroom)).floor() as u64
    });
    if let Some(o) = overload_at {
        proportional = proportional.min((o as f64 * BELOW_OVERLOAD).floor() as u64);
    }
    additive.max(proportional).min(cfg.max_capacity)
}

/// One interval's figures from one source: the gateway of one instance (counts and a
/// latency histogram) or a health report (a p95 and an error rate).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Answers the gateway got from the origin, errors included.
    #[serde(default)]
    pub answers: u64,
    /// 5xx answers, timeouts and refused connections.
    #[serde(default)]
    pub errors: u64,
    /// Latency to headers of the answers (not of timeouts).
    #[serde(default)]
    pub latency: Histogram,
    /// A health report's figures (the origin's own measurements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
}

/// What the controller knows of the origin over the interval: every source merged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Signals {
    pub answers: u64,
    pub errors: u64,
    /// The p95 latency (ms): the gateways' merged histogram's, or a report's if higher.
    pub p95_ms: Option<f64>,
    /// The error share: the gateways', or a report's if higher.
    pub error_rate: Option<f64>,
}

impl Signals {
    /// Merges the interval's reports: the gateways' histograms and counts add up (so the
    /// p95 is that of every answer any instance saw); a health report is taken as it is,
    /// and the worse of the two figures counts.
    pub fn merge<'a>(reports: impl IntoIterator<Item = &'a Report>) -> Self {
        let mut hist = Histogram::default();
        let (mut answers, mut errors) = (0, 0);
        let (mut rep_p95, mut rep_err): (Option<f64>, Option<f64>) = (None, None);
        for r in reports {
            answers += r.answers;
            errors += r.errors;
            hist.add(&r.latency);
            if let Some(p) = r.p95_ms {
                rep_p95 = Some(rep_p95.map_or(p, |q| q.max(p)));
            }
            if let Some(e) = r.error_rate {
                rep_err = Some(rep_err.map_or(e, |q| q.max(e)));
            }
        }
        let judged = answers >= MIN_ANSWERS;
        let gw_p95 = (judged && hist.count() > 0).then(|| hist.quantile(0.95));
        let gw_err = judged.then(|| errors as f64 / answers as f64);
        let worst = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Self {
            answers,
            errors,
            p95_ms: worst(gw_p95, rep_p95),
            error_rate: worst(gw_err, rep_err),
        }
    }
}

/// The room as the controller sees it at a decision.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    pub capacity: u64,
    /// Live sessions.
    pub live: u64,
    /// Visitors in line.
    pub waiting: u64,
    /// By how much the previous decision raised the capacity (0: it did not). A raise of
    /// more than the [`step`] is not measured yet: the next raise waits an interval.
    pub raised_by: u64,
    /// The p95 (ms) of the interval before this one (the previous decision's), if any:
    /// a p95 just over the target lowers only when the interval before was over it too.
    pub prev_p95: Option<f64>,
    /// The capacity at which the origin last failed (the capacity before the last lower
    /// for errors), if the room's history has one: TCP's `ssthresh`.
    pub overload_at: Option<u64>,
}

/// Why the controller lowered the capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Latency,
    Errors,
    /// The capacity was outside `min_capacity`/`max_capacity`.
    Bounds,
}

/// Why it kept the capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// Too few answers and no report.
    NoSignal,
    /// Healthy, but near the target.
    NearTarget,
    /// Healthy, but nobody waiting or the capacity not in use.
    NotNeeded,
    /// At a bound already.
    AtBound,
    /// Healthy, but the last raise is not measured yet (one interval).
    Settling,
    /// Over a target, but the last lower is not in effect yet (more sessions live than
    /// the capacity: the room admits nobody until they end).
    Draining,
    /// The p95 over the target in this interval only (not far over): one 2 s reading
    /// is noise until the next agrees.
    Unconfirmed,
}

/// What the controller decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Raise { to: u64 },
    Lower { to: u64, cause: Cause },
    Hold(Hold),
}

impl Decision {
    /// The capacity after the decision.
    pub fn capacity(self, before: u64) -> u64 {
        match self {
            Self::Raise { to } | Self::Lower { to, .. } => to,
            Self::Hold(_) => before,
        }
    }

    /// A word for the audit log, metrics and the dashboard.
    pub fn label(self) -> &'static str {
        match self {
            Self::Raise { .. } => "raise",
            Self::Lower { .. } => "lower",
            Self::Hold(_) => "hold",
        }
    }
}

/// The factor a lower for errors multiplies the capacity by: the share of answers that
/// succeeded (the origin served that much of what it was sent), kept within
/// [`MIN_FACTOR`], [`MAX_FACTOR`]: an origin failing a little is a little past its limit
/// and loses a fifth, one failing everything is halved. (Halving at the first errors
/// threw away half the capacity each time a probe touched the limit of an origin that
/// fails before its latency warns.)
pub fn error_factor(error_rate: f64) -> f64 {
    (1.0 - error_rate).clamp(MIN_FACTOR, MAX_FACTOR)
}

/// The next capacity for a room in adaptive mode.
pub fn decide(cfg: &OutflowConfig, load: Load, s: &Signals) -> Decision {
    let (min, max) = (cfg.min_capacity, cfg.max_capacity);
    let cap = load.capacity;
    let bounded = cap.clamp(min, max);
    let target = cfg.target_p95_ms as f64;
    let over = s.p95_ms.filter(|&p| p > target);
    // The p95 the latency lowers by: far over the target at once; just over it only when
    // the interval before was over it too, and then the milder of the two.
    let slow = over.and_then(|p| {
        if p > target * SURE_SLOW {
            Some(p)
        } else {
            load.prev_p95.filter(|&q| q > target).map(|q| p.min(q))
        }
    });
    let failing = s.error_rate.filter(|&e| e > cfg.max_error_rate);
    if slow.is_some() || failing.is_some() {
        let by_latency = slow.map_or(1.0, |p| (target / p).clamp(MIN_FACTOR, MAX_FACTOR));
        let by_errors = failing.map_or(1.0, error_factor);
        let to = ((bounded as f64 * by_latency.min(by_errors)).floor() as u64).clamp(min, max);
        if to >= cap {
            return Decision::Hold(Hold::AtBound);
        }
        // A lower not in effect yet: the interval measured the sessions of a higher
        // capacity, which end on their own; lowering again on it would count them twice.
        if load.live > cap && bounded == cap {
            return Decision::Hold(Hold::Draining);
        }
        let cause = if by_errors <= by_latency {
            Cause::Errors
        } else {
            Cause::Latency
        };
        return Decision::Lower { to, cause };
    }
    if bounded != cap {
        return if bounded < cap {
            Decision::Lower {
                to: bounded,
                cause: Cause::Bounds,
            }
        } else {
            Decision::Raise { to: bounded }
        };
    }
    if over.is_some() {
        return Decision::Hold(Hold::Unconfirmed);
    }
    let Some(p95) = s.p95_ms.or(s.error_rate.map(|_| 0.0)) else {
        return Decision::Hold(Hold::NoSignal);
    };
    // A raise is judged on the worse of the two last intervals: one quiet 2 s reading
    // is noise as much as one slow one.
    let p95 = load.prev_p95.map_or(p95, |q| p95.max(q));
    if p95 > target * RAISE_BELOW {
        return Decision::Hold(Hold::NearTarget);
    }
    if load.waiting == 0 || (load.live as f64) < cap as f64 * IN_USE {
        return Decision::Hold(Hold::NotNeeded);
    }
    if cap >= max {
        return Decision::Hold(Hold::AtBound);
    }
    if load.raised_by > step(cfg) {
        return Decision::Hold(Hold::Settling);
    }
    Decision::Raise {
        to: raise_to(cfg, cap, s.p95_ms.map(|_| p95), load.overload_at),
    }
}

/// One decision as the dashboard charts it and the store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Point {
    /// When (ms since the epoch).
    pub at_ms: u64,
    /// The capacity after the decision.
    pub capacity: u64,
    /// The merged p95 (ms) and error share it was based on.
    pub p95_ms: Option<f64>,
    pub error_rate: Option<f64>,
    /// `raise`, `lower` or `hold`.
    pub decision: String,
    /// Live sessions and visitors waiting then.
    pub live: u64,
    pub waiting: u64,
}

#[cfg(test)]
mod tests;
