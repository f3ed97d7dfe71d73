//! `anteroom_store_call_seconds{class}`: how long calls to the store take, by operation
//! class. Every call of the application's store goes through
//! [`Timed`](crate::store::timed::Timed), which puts it in one of a fixed set of classes
//! (so the label has [`StoreOp::ALL`]'s values and no others) and observes it here: two
//! clock reads and one histogram observation (atomics) per call, nothing sent anywhere.

use std::time::Duration;

use prometheus::{Histogram, HistogramOpts, HistogramVec, Registry};

/// What a store call does, for its latency's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// A join (one visitor, or a batch).
    Join,
    /// A visitor's status.
    Status,
    /// The hub's per-room calls: `tick`, `places`, `watch`.
    Tick,
    /// Admissions and sessions: promote, release, claim, extend, hold, restore.
    Admit,
    /// The reaper's pass over a room.
    Reap,
    /// Reads for figures, the admin view, the ETA, fairness and the room configuration.
    Read,
    /// Room changes: create, patch, stock, flush, delete, the audit log.
    Write,
    /// The webhook deliverer's calls.
    Webhook,
    /// Coordination between instances: leases, rate windows, socket counts, the store's
    /// epoch, the event seed and shuffle, revocations, the admission subscription, ping.
    Coordinate,
    /// The adaptive outflow's reports and decisions.
    Outflow,
}

impl StoreOp {
    pub const ALL: [StoreOp; 10] = [
        StoreOp::Join,
        StoreOp::Status,
        StoreOp::Tick,
        StoreOp::Admit,
        StoreOp::Reap,
        StoreOp::Read,
        StoreOp::Write,
        StoreOp::Webhook,
        StoreOp::Coordinate,
        StoreOp::Outflow,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StoreOp::Join => "join",
            StoreOp::Status => "status",
            StoreOp::Tick => "tick",
            StoreOp::Admit => "admit",
            StoreOp::Reap => "reap",
            StoreOp::Read => "read",
            StoreOp::Write => "write",
            StoreOp::Webhook => "webhook",
            StoreOp::Coordinate => "coordinate",
            StoreOp::Outflow => "outflow",
        }
    }
}

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

    /// Counts one call of class `op` that took `took`.
    pub fn observe(&self, op: StoreOp, took: Duration) {
        self.by_op[op as usize].observe(took.as_secs_f64());
    }

    /// Calls of class `op` observed so far (tests).
    pub fn count(&self, op: StoreOp) -> u64 {
        self.by_op[op as usize].get_sample_count()
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
        for (i, op) in StoreOp::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i, "ALL is in declaration order");
        }
    }
}
