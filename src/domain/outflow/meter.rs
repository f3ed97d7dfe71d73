//! This instance's measurements of the origin, per room, for the current interval: what
//! the built-in gateway saw of each answer to a request made with a room's pass (its
//! latency to headers, and whether it was an error: a 5xx, a timeout or a refused
//! connection). The outflow task takes each room's figures once per interval and writes
//! them to the store, where the room's controller merges every instance's.

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

/// Per room, the interval's report so far. One short lock per proxied request.
#[derive(Debug, Default)]
pub struct OriginMeter {
    rooms: Mutex<HashMap<String, Report>>,
}

impl OriginMeter {
    /// Counts one answer for `room`.
    pub fn record(&self, room: &str, seen: Seen) {
        // unwrap: never poisoned (no panics while held).
        let mut rooms = self.rooms.lock().unwrap();
        let r = match rooms.get_mut(room) {
            Some(r) => r,
            None => rooms.entry(room.to_string()).or_default(),
        };
        r.answers += 1;
        match seen {
            Seen::Answered { ms, status } => {
                r.latency.record(ms);
                if status >= 500 {
                    r.errors += 1;
                }
            }
            Seen::TimedOut | Seen::Refused => r.errors += 1,
        }
    }

    /// The room's figures since the last take (empty if none), starting afresh.
    pub fn take(&self, room: &str) -> Report {
        // unwrap: never poisoned.
        self.rooms.lock().unwrap().remove(room).unwrap_or_default()
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
        assert_eq!((a.answers, a.errors, a.latency.count()), (3, 2, 2));
        assert_eq!(m.take("a"), Report::default());
        assert_eq!(m.take("b").errors, 1);
    }
}
