//! This instance's measurements of the origin, per room, for the current interval: what
//! the built-in gateway saw of each answer to a request made with a room's pass (its
//! latency to headers, and whether it was an error: a 5xx, a timeout or a refused
//! connection). The outflow task takes each room's figures once per interval and writes
//! them to the store, where the room's controller merges every instance's.
//!
//! What it takes covers the last **two** intervals (a window sliding by one interval):
//! the p95 of one 2 s interval swung with the visitors' rhythm (measured: 110-180 ms and
//! 218-239 ms in turn at a steady capacity, each visitor polling every 2 s), and a
//! controller judging each interval alone, or the worse of two, either chased that swing
//! or stopped short of the target. Two intervals' answers together give the p95 of all
//! of them, with twice the answers behind it.

use std::collections::HashMap;
use std::sync::Mutex;

use super::Report;

/// One answer (or its absence) from the origin, as the gateway saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Seen {
    /// Headers after this many ms, with this status.
    Answered { ms: f64, status: u16 },
    /// No headers within `gateway.response_timeout_ms`.
    TimedOut,
    /// No connection (refused, reset).
    Refused,
}

/// Per room, the interval's report so far and the interval before's. One short lock per
/// proxied request.
#[derive(Debug, Default)]
pub struct OriginMeter {
    rooms: Mutex<HashMap<String, Window>>,
}

#[derive(Debug, Default)]
struct Window {
    current: Report,
    before: Report,
}

impl OriginMeter {
    /// Counts one answer for `room`.
    pub fn record(&self, room: &str, seen: Seen) {
        // unwrap: never poisoned (no panics while held).
        let mut rooms = self.rooms.lock().unwrap();
        let r = match rooms.get_mut(room) {
            Some(w) => &mut w.current,
            None => &mut rooms.entry(room.to_string()).or_default().current,
        };
        r.answers += 1;
        match seen {
            // The latency of the answers that succeeded: an origin shedding load with
            // quick 503s is not fast (its errors pulled the p95 down as they rose).
            Seen::Answered { ms, status } if status < 500 => r.latency.record(ms),
            Seen::Answered { .. } => r.errors += 1,
            Seen::TimedOut | Seen::Refused => r.errors += 1,
        }
    }

    /// The room's figures over the interval that ends now and the one before it (empty
    /// if none); the next interval starts afresh.
    pub fn take(&self, room: &str) -> Report {
        // unwrap: never poisoned.
        let mut rooms = self.rooms.lock().unwrap();
        let Some(w) = rooms.get_mut(room) else {
            return Report::default();
        };
        let ended = std::mem::take(&mut w.current);
        let mut both = std::mem::replace(&mut w.before, ended);
        both.add(&w.before);
        // A slowdown is seen at once: the interval before, far busier while the origin
        // was fast, would outvote the slow answers of the one that just ended, and the
        // controller would read a fast origin (and raise) for one more interval. When the
        // ended interval alone is slower, its latencies stand for the window.
        let (pooled, last) = (both.latency.quantile(0.95), w.before.latency.quantile(0.95));
        if w.before.latency.count() > 0 && last > pooled * 1.5 {
            both.latency = w.before.latency.clone();
        }
        if w.before == Report::default() {
            rooms.remove(room);
        }
        both
    }

    /// Forgets what was measured for the room (an interval that did not start cleanly).
    pub fn reset(&self, room: &str) {
        // unwrap: never poisoned.
        self.rooms.lock().unwrap().remove(room);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_errors_and_timeouts_are_counted_per_room_and_taken_once() {
        let m = OriginMeter::default();
        m.record(
            "a",
            Seen::Answered {
                ms: 12.0,
                status: 200,
            },
        );
        m.record(
            "a",
            Seen::Answered {
                ms: 40.0,
                status: 503,
            },
        );
        m.record("a", Seen::TimedOut);
        m.record("b", Seen::Refused);
        let a = m.take("a");
        // The 503's latency is not counted: only answers that succeeded are timed.
        assert_eq!((a.answers, a.errors, a.latency.count()), (3, 2, 1));
        m.reset("b");
        assert_eq!(m.take("b"), Report::default());
    }

    /// Each take covers the interval that ends and the one before it; an answer counts in
    /// two takes, then no more.
    #[test]
    fn a_slowdown_in_the_last_interval_is_not_outvoted_by_the_busier_one_before() {
        let m = OriginMeter::default();
        let ok = |ms| Seen::Answered { ms, status: 200 };
        // A fast origin: 1,000 answers at 5 ms; then it slows: 20 answers at 300 ms.
        for _ in 0..1000 {
            m.record("a", ok(5.0));
        }
        m.take("a");
        for _ in 0..20 {
            m.record("a", ok(300.0));
        }
        let both = m.take("a");
        assert_eq!(both.answers, 1020, "answers and errors still cover both");
        assert!(both.latency.quantile(0.95) > 250.0, "{both:?}");
        // A small swing still pools: 1,000 at 5 ms, then 1,000 at 6 ms.
        for _ in 0..1000 {
            m.record("a", ok(6.0));
        }
        assert_eq!(m.take("a").latency.count(), 1020);
    }

    #[test]
    fn a_take_covers_the_last_two_intervals() {
        let m = OriginMeter::default();
        let ok = |ms| Seen::Answered { ms, status: 200 };
        m.record("a", ok(10.0));
        assert_eq!(m.take("a").answers, 1);
        m.record("a", ok(20.0));
        m.record("a", Seen::TimedOut);
        let both = m.take("a");
        assert_eq!((both.answers, both.errors, both.latency.count()), (3, 1, 2));
        let last = m.take("a");
        assert_eq!((last.answers, last.errors), (2, 1));
        assert_eq!(m.take("a"), Report::default());
    }
}
