//! The ETA a queued visitor is shown.
//!
//! ## Measured admission rate
//! Only admissions *from the queue* are counted (a walk-in to an empty queue says nothing
//! about how fast the queue drains). Each store keeps an exponentially decaying count of
//! them with time constant
//! τ = 120 s: on `k` admissions at time `t`, `raw ← raw·e^(−(t−t_last)/τ) + k/τ`
//! (per second). For a steady rate λ that started at `t0`, `raw(t) = λ·(1 − e^(−(t−t0)/τ))`,
//! so the estimate read at `now` is
//!
//! ```text
//! λ̂ = raw·e^(−(now−t_last)/τ) / (1 − e^(−(now−t0)/τ))
//! ```
//!
//! which is unbiased from the first seconds on (the same correction Adam uses) and decays
//! towards zero when admissions stop.
//!
//! ## From rate to ETA
//! Each slot frees at the latest when its session expires, so with the queue non-empty
//! the room admits at least `r_floor = capacity / session_ttl` per second (lowered to
//! `max_admissions_per_minute / 60` when that cap is tighter).
//!
//! - Before there is data (no admission from the queue yet, or less than 10 s of
//!   history since the first):
//!   `eta = position / r_floor` — that is `position × session_ttl / capacity`, or
//!   `position × 60 / max_admissions_per_minute` when the cap is tighter — with range
//!   `[eta/2, eta]`.
//! - Otherwise, `r = max(λ̂, r_floor)`: `eta = position / r`, range
//!   `[position / (1.5·r), min(position / (r / 1.5), position / r_floor)]`.
//!
//! All figures are whole seconds, rounded up, and 0 for a visitor who is not waiting.

use crate::store::{RateState, TAU_MS};

/// History needed before the measured rate is trusted.
const MIN_HISTORY_MS: u64 = 10_000;
/// Spread of the range around the point estimate.
const SPREAD: f64 = 1.5;

/// The measured admission rate (per second) at `now_ms`, if there is enough history.
pub fn measured_rate(s: &RateState, now_ms: u64) -> Option<f64> {
    if s.first_ms == 0 || now_ms < s.first_ms + MIN_HISTORY_MS {
        return None;
    }
    let decayed = s.raw * (-(now_ms.saturating_sub(s.last_ms) as f64) / TAU_MS).exp();
    let warm = 1.0 - (-((now_ms - s.first_ms) as f64) / TAU_MS).exp();
    Some(decayed / warm)
}

/// Point estimate and range, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Eta {
    pub seconds: u64,
    pub low: u64,
    pub high: u64,
}

/// What the ETA depends on.
#[derive(Clone, Copy, Debug)]
pub struct EtaInput {
    pub position: u64,
    pub capacity: u64,
    pub session_ttl_ms: u64,
    pub rate_cap_per_minute: u64,
    pub rate: Option<f64>,
}

pub fn estimate(i: EtaInput) -> Eta {
    if i.position == 0 || i.capacity == 0 || i.session_ttl_ms == 0 {
        return Eta::default();
    }
    let pos = i.position as f64;
    let mut floor = i.capacity as f64 * 1000.0 / i.session_ttl_ms as f64;
    if i.rate_cap_per_minute > 0 {
        floor = floor.min(i.rate_cap_per_minute as f64 / 60.0);
    }
    let worst = pos / floor;
    let secs = |x: f64| x.max(0.0).ceil() as u64;
    match i.rate {
        None => Eta {
            seconds: secs(worst),
            low: secs(worst / 2.0),
            high: secs(worst),
        },
        Some(measured) => {
            let r = measured.max(floor);
            let point = pos / r;
            Eta {
                seconds: secs(point),
                low: secs(pos / (r * SPREAD)),
                high: secs((pos * SPREAD / r).min(worst)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(position: u64, rate: Option<f64>) -> EtaInput {
        EtaInput {
            position,
            capacity: 10,
            session_ttl_ms: 100_000,
            rate_cap_per_minute: 0,
            rate,
        }
    }

    #[test]
    fn falls_back_to_ttl_over_capacity_without_data() {
        // 30 × 100 s / 10 = 300 s.
        let e = estimate(input(30, None));
        assert_eq!(e.seconds, 300);
        assert_eq!((e.low, e.high), (150, 300));
    }

    #[test]
    fn uses_the_measured_rate_when_faster_than_the_floor() {
        let e = estimate(input(30, Some(1.0)));
        assert_eq!(e.seconds, 30);
        assert_eq!((e.low, e.high), (20, 45));
        assert!(e.low <= e.seconds && e.seconds <= e.high);
    }

    #[test]
    fn never_exceeds_the_worst_case() {
        let e = estimate(input(30, Some(0.0001)));
        assert_eq!(e.seconds, 300);
        assert_eq!(e.high, 300);
    }

    #[test]
    fn zero_for_a_visitor_not_waiting() {
        assert_eq!(estimate(input(0, Some(3.0))), Eta::default());
    }

    #[test]
    fn rate_cap_lowers_the_floor() {
        let mut i = input(30, None);
        i.rate_cap_per_minute = 3; // 0.05/s, tighter than 10 per 100 s
        assert_eq!(estimate(i).seconds, 600);
    }

    #[test]
    fn steady_rate_is_recovered_early_and_decays_after() {
        let mut s = RateState::default();
        // 2 admissions per second for 12 s.
        for t in 0..=24 {
            s.add(1_000_000 + t * 500, 1);
        }
        let r = measured_rate(&s, 1_012_000).unwrap();
        assert!((r - 2.0).abs() < 0.2, "{r}");
        // Ten minutes of silence later the estimate has mostly decayed.
        let later = measured_rate(&s, 1_610_000).unwrap();
        assert!(later < 0.05, "{later}");
    }

    #[test]
    fn no_rate_before_enough_history() {
        let mut s = RateState::default();
        s.add(1_000, 5);
        assert_eq!(measured_rate(&s, 2_000), None);
    }
}
