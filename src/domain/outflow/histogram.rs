//! A latency histogram with logarithmic buckets (each 10 % wider than the one before), so
//! that histograms from several gateways add up and the merged p95 is that of every answer,
//! within 5 % (a quantile is read at its bucket's geometric middle). Kept sparse: a few
//! dozen `bucket: count` pairs a report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Each bucket's upper bound is this times its lower bound.
const GROWTH: f64 = 1.1;
/// The last bucket holds everything from `GROWTH^LAST` ms (about 25 minutes) up.
const LAST: u16 = 160;

/// Counts of latencies (ms) by bucket: bucket `i` holds `[GROWTH^i, GROWTH^(i+1))`, bucket
/// 0 everything under 1.1 ms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Histogram(BTreeMap<u16, u64>);

impl Histogram {
    fn bucket(ms: f64) -> u16 {
        if ms.is_nan() || ms <= 1.0 {
            return 0;
        }
        (ms.ln() / GROWTH.ln()).floor().min(LAST as f64) as u16
    }

    /// Counts one latency.
    pub fn record(&mut self, ms: f64) {
        *self.0.entry(Self::bucket(ms)).or_default() += 1;
    }

    /// Adds another histogram's counts.
    pub fn add(&mut self, other: &Histogram) {
        for (&b, &n) in &other.0 {
            *self.0.entry(b).or_default() += n;
        }
    }

    pub fn count(&self) -> u64 {
        self.0.values().sum()
    }

    /// The `q` quantile (0-1) in ms, at its bucket's geometric middle; 0 when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (&b, &c) in &self.0 {
            seen += c;
            if seen >= rank {
                return if b == 0 {
                    1.0
                } else {
                    GROWTH.powf(b as f64 + 0.5)
                };
            }
        }
        GROWTH.powf(LAST as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p95_of_known_latencies_is_within_five_percent() {
        let mut h = Histogram::default();
        for ms in 1..=1000 {
            h.record(ms as f64);
        }
        let p = h.quantile(0.95);
        assert!((p - 950.0).abs() / 950.0 < 0.05, "{p}");
    }

    #[test]
    fn histograms_added_up_give_the_p95_of_all_answers() {
        let (mut fast, mut slow) = (Histogram::default(), Histogram::default());
        for _ in 0..900 {
            fast.record(10.0);
        }
        for _ in 0..100 {
            slow.record(800.0);
        }
        // Neither gateway's own p95 says what the origin does over both.
        assert!(fast.quantile(0.95) < 12.0);
        fast.add(&slow);
        let p = fast.quantile(0.95);
        assert!((p - 800.0).abs() / 800.0 < 0.05, "{p}");
    }

    #[test]
    fn it_survives_json_and_odd_values() {
        let mut h = Histogram::default();
        for ms in [0.0, -3.0, f64::NAN, 0.5, 1e12] {
            h.record(ms);
        }
        let back: Histogram = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert_eq!(h.count(), 5);
        assert_eq!(Histogram::default().quantile(0.95), 0.0);
    }
}
