//! `anteroom_store_call_seconds{class}`: how long calls to the store take, by operation
//! class. Every call of the application's store goes through
//! [`Timed`](crate::store::timed::Timed), which puts it in one of a fixed set of classes
//! (so the label has [`StoreOp::ALL`]'s values and no others) and observes it here: two
//! clock reads and one histogram observation (atomics) per call, nothing sent anywhere.

use std::time::Duration;

use prometheus::{Histogram, HistogramOpts, HistogramVec, Registry};

use crate::store::timed::{StoreOp, TimeCalls};

/// Upper bounds (s): from a quarter of a millisecond (a local Redis) to the longest
/// response timeout one would configure.
const BUCKETS: [f64; 13] = [
    0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The histograms, one per class, resolved once (no label lookup per call).
#[derive(Clone)]
pub struct StoreLatency {
    by_op: [Histogram; 10],
}

impl StoreLatency {
    pub(super) fn register(r: &Registry) -> Self {
        // unwrap: a static, valid name, labels and buckets; registered once per registry.
        let vec = HistogramVec::new(
            HistogramOpts::new(
                "anteroom_store_call_seconds",
                "Store calls by operation class, how long each took (this instance)",
            )
            .buckets(BUCKETS.to_vec()),
            &["class"],
        )
        .unwrap();
        r.register(Box::new(vec.clone())).unwrap();
        Self {
            by_op: StoreOp::ALL.map(|op| vec.with_label_values(&[op.as_str()])),
        }
    }

    /// Calls of class `op` observed so far (tests).
    pub fn count(&self, op: StoreOp) -> u64 {
        self.by_op[op as usize].get_sample_count()
    }
}

impl TimeCalls for StoreLatency {
    fn observe(&self, op: StoreOp, took: Duration) {
        self.by_op[op as usize].observe(took.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_is_its_own_series() {
        let r = Registry::new();
        let l = StoreLatency::register(&r);
        l.observe(StoreOp::Tick, Duration::from_millis(2));
        assert_eq!(l.count(StoreOp::Tick), 1);
        assert_eq!(l.count(StoreOp::Join), 0);
    }
}
