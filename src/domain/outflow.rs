//! The adaptive outflow controller (docs/outflow.md): from one interval's signals about
//! the origin (its latency to headers and its errors) and the room's load, the room's next
//! capacity. Pure: no clock, no store, no HTTP; `crate::outflow` runs it per room under a
//! lease and applies what it decides through the admin service.
//!
//! The rule is AIMD, as TCP's congestion control and Netflix's concurrency limits use it,
//! with a decrease in proportion to the overshoot, as gradient limiters (Netflix's
//! Gradient2, TCP Vegas) make it:
//!
//! - **Lower** (multiplicatively) when the p95 latency is over `target_p95_ms` or the error
//!   rate over `max_error_rate`: for latency by `target / p95`, the factor that would bring
//!   the p95 back to the target if latency followed the load, at most halving
//!   ([`MIN_FACTOR`]) and at least by one; for errors by the share that succeeded
//!   ([`error_factor`]), between [`MIN_FACTOR`] and [`MAX_FACTOR`]. The factor is still a
//!   multiplication, but it depends on by how much the origin is over: a p95 5 % over the
//!   target costs 5 % of the capacity, not half of it, so the capacity stays near the
//!   knee instead of saw-toothing well under it (with a fixed cut the average sits far
//!   under the peak the origin takes). Nobody already in is sent out: the room admits
//!   again once enough sessions end, and until then (more sessions live than the
//!   capacity) the cut is taken from the live sessions, the load the interval measured,
//!   and it holds when that asks for no less than the capacity already set
//!   ([`Hold::Draining`]).
//! - **Raise** while the origin is healthy with a margin (p95 under [`RAISE_BELOW`] of the
//!   target, errors under the limit), people are waiting and the room uses its capacity
//!   (live sessions at least [`IN_USE`] of it): a capacity nobody uses says nothing about
//!   whether the origin can take more. By how much mirrors the decrease ([`raise_to`]):
//!   × threshold / p95, the capacity at which the p95 would reach the raise threshold if
//!   it grew with the load, up to doubling ([`MAX_RAISE`]; up to × 2.5,
//!   [`FIRST_MAX_RAISE`], on the first climb, before the origin showed a knee or a
//!   failure), at least by the [`step`].
//!   Far from the target the capacity climbs like TCP's slow start (a pure additive climb
//!   from a low start spent most of a 40 s sale below the origin's limit: 64 % of the
//!   best fixed capacity, measured); near it, it probes in small steps like TCP's
//!   congestion avoidance. After a raise it waits [`SETTLE_INTERVALS`]
//!   ([`Hold::Settling`]): the visitors just let in reach the origin over the next
//!   seconds, so the intervals that end with a raise measured the origin under the old
//!   capacity, and raising again on them overshot (a doubling each interval went from 66
//!   to 115 and 11 % errors in 5 s). Once the origin failed, fast raises stop below where
//!   it failed ([`Load::overload_at`], TCP's `ssthresh`), and once it was near the
//!   target, at the capacity where it was ([`Load::knee_at`]), and in any case at the
//!   highest capacity it took near the target ([`Load::peak_knee`], which a recovery does
//!   not forget): past it only the step. Lowering never waits for a raise.
//! - **Hold** otherwise: between [`RAISE_BELOW`] and 1 × the target, nobody waiting, or too
//!   few answers to judge ([`MIN_ANSWERS`]) and no report.
//!
//! **What it aims at.** The target is where the controller holds the origin: it lowers
//! over it and raises under [`RAISE_BELOW`] of it, so the origin's p95 sits in that band,
//! a little under the target on average and now and then a little over it for an
//! interval. The signals are the gateways' answers over the last **two** intervals
//! ([`OriginMeter::take`]): the p95 of one short interval swings with the visitors'
//! rhythm, and two intervals' answers together give a steadier one.
//!
//! Always within `min_capacity` and `max_capacity` (a capacity outside them is brought
//! inside at the first decision).

use serde::{Deserialize, Serialize};

use crate::room::OutflowConfig;

pub mod histogram;
pub mod meter;
pub use histogram::Histogram;
pub use meter::{OriginMeter, Seen};

/// The largest multiplicative decrease: at most halving.
pub const MIN_FACTOR: f64 = 0.5;
/// The smallest decrease for errors (a fifth off): errors mean the origin is past its
/// limit, not near it. A decrease for latency has no such floor (at least one less).
pub const MAX_FACTOR: f64 = 0.8;
/// The capacity is raised only while the p95 is under this share of the target: the
/// band between it and the target is where the controller holds. Measured on the
/// benchmark's shop (docs/outflow.md#measured): with 0.85, and each interval judged
/// alone (or the worse of two), it held at 76-81 with the shop's p95 near 0.85 × the
/// target, while the best fixed capacity (90) ran it at 1.03 ×; with 0.9 (two intervals
/// together), at 80 with the gateway's p95 at 235-246 ms against 250.
pub const RAISE_BELOW: f64 = 0.95;
/// The capacity is raised only while this share of it is in use.
pub const IN_USE: f64 = 0.9;
/// The most one raise multiplies the capacity by (a p95 of half the threshold or less).
pub const MAX_RAISE: f64 = 2.0;
/// The most one raise multiplies the capacity by while the origin has not yet shown its
/// limit (no p95 near the target and no failure in the history: the first climb), a p95
/// of 0.4 × the threshold or less. The climb from the start costs admissions: in the
/// benchmark (start at 30, the shop's knee at 80-85) the first reading (79 ms, × 3.0 of
/// headroom) raised to 60 only, and, with the two intervals' wait after each raise, the
/// capacity reached 84 at 8 s of a 40 s sale. Not × 3: an origin's latency grows faster
/// than the load near its limit, so a long extrapolation overshoots (measured: 30 → 90
/// on that reading, then 3 % errors in the first 5 s and cuts to 56).
pub const FIRST_MAX_RAISE: f64 = 2.5;
/// Multiplicative raises stop at this share of the capacity at which the origin was last
/// overloaded ([`Load::overload_at`]); above it the controller probes by the step.
pub const BELOW_OVERLOAD: f64 = 0.9;
/// A raise is measured after this many intervals: the signals cover two intervals, and
/// only then hold nothing but answers given under the new capacity. (With one interval's
/// wait, a raise judged on a window half of which came before the visitors let in
/// reached the origin went from 68 to 90 and 3 % errors; with none after a step, three
/// steps in a row went from 84 to 94 on readings that lagged, then 4 % errors.)
pub const SETTLE_INTERVALS: usize = 2;
/// A p95 under this share of the target says the origin has room whatever it showed
/// before: the knee it showed ([`Load::knee_at`]) is forgotten (it recovered from a
/// slowdown; measured: a knee kept from the slowdown held the recovery to the step).
pub const FAR_UNDER: f64 = 0.5;
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

/// The capacity after a raise from `load.capacity` with the interval's `p95` (ms):
/// `cap × threshold / p95` (the threshold [`RAISE_BELOW`] × target), the capacity at
/// which the p95 would reach the threshold if it grew in proportion to the load (the
/// mirror of the decrease, `target / p95`), at most × [`MAX_RAISE`] (× [`FIRST_MAX_RAISE`]
/// while the history shows no knee and no failure); at least [`step`]
/// more, at most `max_capacity`. Without a p95 (a report of errors only) the step.
///
/// The proportional raise stops where the origin showed its limit, as TCP's slow start
/// stops at `ssthresh`, and the step goes on from there:
/// - at [`BELOW_OVERLOAD`] of the capacity at which it failed while its latency was
///   under the target (`overload_at`): an origin may fail (errors) before its latency
///   warns (measured: 82 to 120 in one raise on a quiet interval, then 13 % errors);
/// - at the capacity under which its p95 was last near or over the target (`knee_at`):
///   a quiet reading near the knee is not headroom (measured: after 20 s held at 80 with
///   the p95 at 235-246 ms, two readings of 160 ms raised it to 102, then 15 % errors);
///   unless `p95` is under [`FAR_UNDER`] of the target, which forgets it;
/// - at the highest capacity the origin took near its target (`peak_knee`), which a
///   recovery does not forget (measured: after a slowdown, 15 → 30 → 60 → 112 on quiet
///   readings, past the 81-88 it held at before); unless the capacity is at or past it
///   and `p95` under [`FAR_UNDER`] of the target (the origin takes more than it showed).
pub fn raise_to(cfg: &OutflowConfig, load: &Load, p95: Option<f64>) -> u64 {
    let cap = load.capacity;
    let additive = cap.saturating_add(step(cfg));
    let threshold = cfg.target_p95_ms as f64 * RAISE_BELOW;
    // Nothing known of the origin's limit yet: a larger first climb.
    let most = if load.peak_knee.is_none() && load.overload_at.is_none() {
        FIRST_MAX_RAISE
    } else {
        MAX_RAISE
    };
    let mut proportional = p95.map_or(0, |p| {
        let factor = if p > 0.0 { threshold / p } else { most };
        (cap as f64 * factor.clamp(1.0, most)).floor() as u64
    });
    if let Some(o) = load.overload_at {
        proportional = proportional.min((o as f64 * BELOW_OVERLOAD).floor() as u64);
    }
    // A reading under FAR_UNDER of the target forgets the last knee (the origin changed
    // since), this one as well as those in the history: otherwise the first raise after
    // a recovery stops at the knee the slowdown showed (measured: 11 → 16 on a 52 ms
    // reading after the slowdown, where × 2 was 22; then a two-interval wait).
    let far_under = p95.is_some_and(|p| p < cfg.target_p95_ms as f64 * FAR_UNDER);
    let knee_at = load.knee_at.filter(|_| !far_under);
    // The highest knee holds under it (a recovering origin reads far under the target
    // below where it held before); at or past it, a reading that far under says the
    // origin now takes more than it ever showed (a cold start's knee, a scaled-up shop),
    // and the step alone would take dozens of intervals to find out.
    let peak_knee = load.peak_knee.filter(|&k| !(far_under && cap >= k));
    if let Some(k) = knee_at.into_iter().chain(peak_knee).min() {
        proportional = proportional.min(k);
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
    /// Latency to headers of the answers that succeeded (not of errors or timeouts).
    #[serde(default)]
    pub latency: Histogram,
    /// A health report's figures (the origin's own measurements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
}

impl Report {
    /// Adds another report's gateway figures (answers, errors, latencies).
    pub fn add(&mut self, other: &Report) {
        self.answers += other.answers;
        self.errors += other.errors;
        self.latency.add(&other.latency);
    }
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
    /// The largest raise among the last [`SETTLE_INTERVALS`] decisions (0: none). A raise
    /// is not measured yet: the next raise waits.
    pub raised_by: u64,
    /// The capacity at which the origin last failed before its latency warned (the
    /// capacity before the last lower for errors with the p95 under the target), if the
    /// room's history has one: TCP's `ssthresh`. Errors with a slow origin are a slow
    /// origin: its knee says where it is.
    pub overload_at: Option<u64>,
    /// The capacity under which the origin's p95 was last near or over the target (over
    /// [`RAISE_BELOW`] of it), unless a p95 under [`FAR_UNDER`] of the target came after
    /// (the origin changed since).
    pub knee_at: Option<u64>,
    /// The highest capacity the origin is known to take near its target: of every
    /// decision in the history whose p95 was near or over the target, the capacity it
    /// was measured under × target / p95 (at most × 1; the capacity that would have put
    /// it at the target). Unlike [`Load::knee_at`] a recovery does not forget it: after a
    /// slowdown, fast raises climb back to where the origin held before, not past it.
    pub peak_knee: Option<u64>,
}

impl Load {
    /// What the controller remembers from its own last decisions (`history`, oldest
    /// first): read from the store, so an instance taking over the lease decides as the
    /// last one would. The capacity, live sessions and line are left at 0.
    pub fn recall(cfg: &OutflowConfig, history: &[Point]) -> Self {
        // The capacity in effect while the decision at `i` was measured.
        let before = |i: usize| history[i.saturating_sub(1)].capacity;
        let n = history.len();
        let raised_by = (n.saturating_sub(SETTLE_INTERVALS)..n)
            .filter(|&i| history[i].decision == "raise")
            .map(|i| match i {
                0 => u64::MAX, // by how much unknown: wait
                _ => history[i].capacity.saturating_sub(before(i)),
            })
            .max()
            .unwrap_or(0);
        let target = cfg.target_p95_ms as f64;
        // A lower for latency alone is already in proportion: only errors set it.
        let overload_at = history
            .iter()
            .rposition(|p| {
                p.decision == "lower"
                    && p.error_rate.is_some_and(|e| e > cfg.max_error_rate)
                    && p.p95_ms.is_none_or(|p| p <= target)
            })
            .filter(|&i| i > 0)
            .map(before);
        let near = history
            .iter()
            .rposition(|p| p.p95_ms.is_some_and(|p| p > target * RAISE_BELOW));
        let far_under = history
            .iter()
            .rposition(|p| p.p95_ms.is_some_and(|p| p < target * FAR_UNDER));
        let knee_at = near.filter(|&i| far_under < Some(i)).map(before);
        let peak_knee = (0..n)
            .filter_map(|i| {
                let p = history[i].p95_ms.filter(|&p| p > target * RAISE_BELOW)?;
                Some((before(i) as f64 * (target / p).min(1.0)).floor() as u64)
            })
            .max();
        Self {
            raised_by,
            overload_at,
            knee_at,
            peak_knee,
            ..Self::default()
        }
    }
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
    /// the capacity: the room admits nobody until they end), and the live sessions cut
    /// by the factor are not below the capacity.
    Draining,
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

/// The factor a lower for latency multiplies the capacity by: `target / p95`, the share
/// of the load under which the p95 would be back at the target if latency followed the
/// load, at most halving ([`MIN_FACTOR`]).
pub fn latency_factor(target_ms: f64, p95_ms: f64) -> f64 {
    (target_ms / p95_ms).clamp(MIN_FACTOR, 1.0)
}

/// The next capacity for a room in adaptive mode.
pub fn decide(cfg: &OutflowConfig, load: Load, s: &Signals) -> Decision {
    let (min, max) = (cfg.min_capacity, cfg.max_capacity);
    let cap = load.capacity;
    let bounded = cap.clamp(min, max);
    let target = cfg.target_p95_ms as f64;
    let slow = s.p95_ms.filter(|&p| p > target);
    let failing = s.error_rate.filter(|&e| e > cfg.max_error_rate);
    if slow.is_some() || failing.is_some() {
        let by_latency = slow.map_or(1.0, |p| latency_factor(target, p));
        let by_errors = failing.map_or(1.0, error_factor);
        // The load the signals measured: the live sessions when more than the capacity
        // (a lower not in effect yet: the sessions of a higher capacity, which end on
        // their own), else the capacity. Cut from it, not from the capacity: a lower
        // already made is not counted twice, and one made on a first, half-slow window
        // is deepened when the next shows the same sessions slower still.
        let draining = load.live > bounded;
        let measured = if draining { load.live } else { bounded };
        let mut to = (measured as f64 * by_latency.min(by_errors)).floor() as u64;
        if !draining {
            // At least one less: a p95 a hair over the target still lowers.
            to = to.min(bounded.saturating_sub(1));
        }
        let to = to.clamp(min, max);
        if to >= cap {
            return Decision::Hold(if draining {
                Hold::Draining
            } else {
                Hold::AtBound
            });
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
    let Some(p95) = s.p95_ms.or(s.error_rate.map(|_| 0.0)) else {
        return Decision::Hold(Hold::NoSignal);
    };
    if p95 > target * RAISE_BELOW {
        return Decision::Hold(Hold::NearTarget);
    }
    if load.waiting == 0 || (load.live as f64) < cap as f64 * IN_USE {
        return Decision::Hold(Hold::NotNeeded);
    }
    if cap >= max {
        return Decision::Hold(Hold::AtBound);
    }
    if load.raised_by > 0 {
        return Decision::Hold(Hold::Settling);
    }
    Decision::Raise {
        to: raise_to(cfg, &load, s.p95_ms),
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
