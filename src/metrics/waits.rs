//! `anteroom_wait_seconds`: how long the visitors let into each room waited (from join to
//! admission), as a Prometheus histogram per room, for p50/p90 on the dashboard.
//!
//! The store already counts every admission's wait in the room's minute hashes
//! (`h0`…`h14` in `P:room:{R}:st:m:<minute>`, the buckets of
//! [`WAIT_BOUNDS_MS`](crate::store::WAIT_BOUNDS_MS); the admin chart reads them), inside the
//! admitting script. So nothing is added to an admission: at scrape time `/metrics` reads
//! the minutes since its last scrape (`Store::report`, one call per room) and adds what
//! each minute gained since it was last seen. The figure is the room's, the same on every
//! instance (aggregate with `max`), and it survives restarts of any instance (a new
//! process starts its series from the minutes it reads first, which `rate()` takes as the
//! starting point).
//!
//! The buckets are the store's, in seconds (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200,
//! 1800, 3600, 7200, +Inf): exact counts per bucket. The store keeps counts, not the waits
//! themselves, so `_sum` is estimated: each admission counts as the middle of its bucket
//! (the last bucket as 7200 s).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{Bucket, Histogram, LabelPair, Metric, MetricFamily, MetricType};

use crate::store::{MinuteStats, HISTORY_MINUTES, WAIT_BOUNDS_MS};

/// The metric's name.
pub const NAME: &str = "anteroom_wait_seconds";
const BUCKETS: usize = WAIT_BOUNDS_MS.len() + 1;

/// What one room's series has counted.
#[derive(Default)]
struct RoomWaits {
    /// Per minute read lately, its bucket counts as last seen.
    seen: BTreeMap<u64, [u64; BUCKETS]>,
    /// Admissions counted per bucket (not cumulative), since this process began.
    counts: [u64; BUCKETS],
    /// When its minutes were last read.
    read_at: Option<Instant>,
}

/// The per-room wait histograms (a collector registered with the metrics registry).
#[derive(Clone)]
pub struct Waits {
    desc: Arc<Desc>,
    rooms: Arc<Mutex<HashMap<String, RoomWaits>>>,
}

impl Default for Waits {
    fn default() -> Self {
        Self::new()
    }
}

impl Waits {
    pub fn new() -> Self {
        // unwrap: a static, valid name and help.
        let desc = Desc::new(
            NAME.into(),
            "Waits of the visitors let in, from join to admission (the store's per-minute buckets)"
                .into(),
            vec!["room".into()],
            HashMap::new(),
        )
        .unwrap();
        Self {
            desc: Arc::new(desc),
            rooms: Arc::default(),
        }
    }

    /// How many minutes of `room`'s history the next scrape reads: the minutes since its
    /// last read and the one it was in (the current minute's counts keep growing), at
    /// least 2, at most what the store keeps (the first read: all of it).
    pub fn minutes_to_read(&self, room: &str) -> u32 {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let since = rooms
            .get(room)
            .and_then(|r| r.read_at)
            .map_or(u64::MAX, |t| t.elapsed().as_secs());
        since
            .saturating_div(60)
            .saturating_add(2)
            .min(HISTORY_MINUTES) as u32
    }

    /// Adds what `minutes` (read from the store now) gained since they were last seen.
    /// A minute whose counts went down (the store lost its data) adds nothing.
    pub fn observe(&self, room: &str, minutes: &[MinuteStats]) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let r = rooms.entry(room.to_string()).or_default();
        for m in minutes {
            let seen = r.seen.entry(m.minute).or_insert([0; BUCKETS]);
            for (i, (now, before)) in m.waits.iter().zip(seen.iter_mut()).enumerate() {
                if *now > *before {
                    r.counts[i] += *now - *before;
                    *before = *now;
                }
            }
        }
        // Minutes older than any later read can reach are done with.
        if let Some(last) = minutes.iter().map(|m| m.minute).max() {
            let oldest = last.saturating_sub(HISTORY_MINUTES);
            r.seen.retain(|m, _| *m >= oldest);
        }
        r.read_at = Some(Instant::now());
    }

    /// Forgets a deleted room.
    pub fn forget(&self, room: &str) {
        self.rooms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(room);
    }

    /// The admissions counted for `room`, per bucket (tests).
    pub fn counts(&self, room: &str) -> Option<[u64; BUCKETS]> {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        rooms.get(room).map(|r| r.counts)
    }
}

/// The seconds an admission in bucket `i` counts for in `_sum`: its bucket's middle.
fn representative_secs(i: usize) -> f64 {
    let hi = WAIT_BOUNDS_MS.get(i).copied();
    let lo = if i == 0 { 0 } else { WAIT_BOUNDS_MS[i - 1] };
    match hi {
        Some(hi) => (lo + hi) as f64 / 2000.0,
        None => lo as f64 / 1000.0,
    }
}

impl Collector for Waits {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let mut metrics = Vec::with_capacity(rooms.len());
        let mut names: Vec<&String> = rooms.keys().collect();
        names.sort();
        for room in names {
            let r = &rooms[room];
            let mut h = Histogram::default();
            let mut cumulative = 0;
            let mut buckets = Vec::with_capacity(WAIT_BOUNDS_MS.len());
            for (i, bound) in WAIT_BOUNDS_MS.iter().enumerate() {
                cumulative += r.counts[i];
                let mut b = Bucket::default();
                b.set_upper_bound(*bound as f64 / 1000.0);
                b.set_cumulative_count(cumulative);
                buckets.push(b);
            }
            let total: u64 = r.counts.iter().sum();
            let sum: f64 = (0..BUCKETS)
                .map(|i| r.counts[i] as f64 * representative_secs(i))
                .sum();
            h.set_bucket(buckets);
            h.set_sample_count(total);
            h.set_sample_sum(sum);
            let mut label = LabelPair::default();
            label.set_name("room".into());
            label.set_value(room.clone());
            let mut m = Metric::default();
            m.set_label(vec![label]);
            m.set_histogram(h);
            metrics.push(m);
        }
        if metrics.is_empty() {
            return Vec::new();
        }
        let mut family = MetricFamily::default();
        family.set_name(NAME.into());
        family.set_help(self.desc.help.clone());
        family.set_field_type(MetricType::HISTOGRAM);
        family.set_metric(metrics);
        vec![family]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::Encoder;

    fn minute(minute: u64, waits: &[(usize, u64)]) -> MinuteStats {
        let mut m = MinuteStats {
            minute,
            ..Default::default()
        };
        for (i, n) in waits {
            m.waits[*i] = *n;
        }
        m
    }

    #[test]
    fn a_minute_read_twice_counts_only_what_it_gained() {
        let w = Waits::new();
        w.observe("r", &[minute(10, &[(0, 2)]), minute(11, &[(3, 1)])]);
        w.observe("r", &[minute(11, &[(3, 4)]), minute(12, &[(14, 1)])]);
        let c = w.counts("r").unwrap();
        assert_eq!((c[0], c[3], c[14]), (2, 4, 1));
    }

    #[test]
    fn counts_that_went_down_add_nothing() {
        let w = Waits::new();
        w.observe("r", &[minute(10, &[(2, 5)])]);
        w.observe("r", &[minute(10, &[(2, 1)])]);
        assert_eq!(w.counts("r").unwrap()[2], 5);
    }

    #[test]
    fn the_exposition_is_a_cumulative_histogram_in_seconds() {
        let w = Waits::new();
        w.observe("r", &[minute(10, &[(0, 1), (6, 2), (14, 1)])]);
        let mut buf = Vec::new();
        prometheus::TextEncoder::new()
            .encode(&w.collect(), &mut buf)
            .unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("# TYPE anteroom_wait_seconds histogram"),
            "{text}"
        );
        assert!(
            text.contains(r#"anteroom_wait_seconds_bucket{room="r",le="1"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"anteroom_wait_seconds_bucket{room="r",le="30"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"anteroom_wait_seconds_bucket{room="r",le="60"} 3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"anteroom_wait_seconds_bucket{room="r",le="7200"} 3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"anteroom_wait_seconds_bucket{room="r",le="+Inf"} 4"#),
            "{text}"
        );
        assert!(
            text.contains(r#"anteroom_wait_seconds_count{room="r"} 4"#),
            "{text}"
        );
    }

    #[test]
    fn the_first_read_takes_two_minutes_and_a_long_gap_at_most_the_history() {
        let w = Waits::new();
        assert_eq!(w.minutes_to_read("r"), HISTORY_MINUTES as u32);
        w.observe("r", &[]);
        assert_eq!(w.minutes_to_read("r"), 2);
    }
}
