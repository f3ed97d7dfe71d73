//! What the hub promises a waiting socket, measured for `/metrics`: how long the socket
//! that has waited longest for a message has waited (against [`SILENCE_PROMISE`]), and
//! how right the first known estimate each socket was sent turned out (judged when its
//! visitor is let in).
//!
//! The silence is not measured per push: at the end of each tick the hub notes when the
//! waiting socket written to longest ago was last written to ([`HubStats::oldest_write`]),
//! and a scrape reads the time since. So a hub that stops ticking (a store call that
//! hangs, a task starved) shows as a silence that keeps growing, which is the failure the
//! alert is for; a socket written to after the note reads up to a tick older than it is.
//! The note costs one pass over the hub's sockets per tick (a comparison each).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use super::{HubStats, RoomConns, REFRESH_EVERY, TICK};
use crate::domain::eta::Eta;
use crate::metrics::Metrics;

/// The longest a waiting socket should go without a message: a status older than
/// [`REFRESH_EVERY`] is re-sent at the next tick (docs/websocket.md: "about 5 s").
pub const SILENCE_PROMISE: Duration = Duration::from_secs(REFRESH_EVERY.as_secs() + TICK.as_secs());

/// The origin of the hub's notes (they are kept in an atomic as milliseconds since it).
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

fn since_origin(t: Instant) -> u64 {
    t.saturating_duration_since(*ORIGIN).as_millis() as u64
}

impl HubStats {
    /// Notes when the socket waiting longest was last written to: the oldest of `rooms`'
    /// last statuses to visitors not yet let in (none: no socket waits).
    pub(super) fn note_oldest_write(&self, rooms: &HashMap<String, RoomConns>) {
        let oldest = rooms
            .values()
            .flat_map(|r| r.visitors.values())
            .filter(|w| !w.admitted)
            .filter_map(|w| w.last.map(|l| l.4))
            .min();
        // 0 is "none"; a note is 1 + ms since the origin.
        let v = oldest.map_or(0, |t| since_origin(t) + 1);
        self.oldest_write.store(v, Ordering::Relaxed);
    }

    /// How long the socket waiting longest has waited for a message, as of now (None: no
    /// socket waits).
    pub fn longest_silence(&self) -> Option<Duration> {
        match self.oldest_write.load(Ordering::Relaxed) {
            0 => None,
            v => {
                let now = since_origin(Instant::now());
                Some(Duration::from_millis(now.saturating_sub(v - 1)))
            }
        }
    }
}

/// The first known estimate a socket was sent: when, and its seconds, low and high.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FirstEstimate(Option<(Instant, u64, u64, u64)>);

impl FirstEstimate {
    /// A status with `eta` was sent at `now`: kept if it is the first known one.
    pub(super) fn shown(&mut self, eta: &Eta, now: Instant) {
        if self.0.is_none() && eta.known {
            self.0 = Some((now, eta.seconds, eta.low, eta.high));
        }
    }

    /// The visitor was let in at `now`: the estimate is judged (once).
    pub(super) fn judge(&mut self, metrics: &Metrics, room: &str, now: Instant) {
        if let Some((at, seconds, low, high)) = self.0.take() {
            metrics.judge_eta(
                room,
                (seconds, low, high),
                now.saturating_duration_since(at),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_promise_is_five_seconds() {
        assert_eq!(SILENCE_PROMISE, Duration::from_secs(5));
    }

    #[test]
    fn no_waiting_socket_is_no_silence() {
        let s = HubStats::default();
        s.note_oldest_write(&HashMap::new());
        assert_eq!(s.longest_silence(), None);
    }

    #[test]
    fn only_the_first_known_estimate_is_judged_and_only_once() {
        let m = Metrics::new();
        let mut f = FirstEstimate::default();
        let t0 = Instant::now();
        let unknown = Eta {
            seconds: 100,
            low: 0,
            high: 100,
            known: false,
        };
        let known = Eta {
            seconds: 20,
            low: 10,
            high: 30,
            known: true,
        };
        f.shown(&unknown, t0);
        f.shown(&known, t0);
        f.shown(
            &Eta {
                seconds: 99,
                ..known
            },
            t0 + Duration::from_secs(1),
        );
        f.judge(&m, "r", t0 + Duration::from_secs(40));
        f.judge(&m, "r", t0 + Duration::from_secs(50));
        let out = m.render();
        // |20 - 40| / 40 = 0.5; 40 s is after the range 10-30 s.
        assert!(
            out.contains(r#"anteroom_eta_error_ratio_sum{room="r"} 0.5"#),
            "{out}"
        );
        assert!(
            out.contains(r#"anteroom_eta_error_ratio_count{room="r"} 1"#),
            "{out}"
        );
        assert!(
            out.contains(r#"anteroom_eta_judged_total{outcome="after",room="r"} 1"#),
            "{out}"
        );
    }
}
