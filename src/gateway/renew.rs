//! `renew_on_activity`: a room may extend an admitted visitor's session while they use
//! the site through the gateway. A request let in with a pass asks the store to push the
//! session's end to now + `session_ttl_secs` (never past `max_session_secs` after the
//! admission: [`crate::store::Store::extend_session`]), and when the end moved past the
//! pass's own `exp`, the gateway hands the visitor a fresh pass for the same session
//! (same `sub`, serial and `iat`; the new `exp`) in its cookie on that response.
//!
//! The pass stays what it is everywhere else: `verify` and the origin examples check its
//! `exp`, so a visitor kept in by renewal needs the gateway's fresh cookie, which is why
//! renewal is a gateway feature. A revocation names the serial, so it stops the fresh
//! passes too.
//!
//! The store is not asked on every request: [`Renewals`] remembers, per room and
//! visitor, when this gateway last asked, and asks again only after [`interval`] (a
//! tenth of the TTL, at least a second), so a page with fifty assets costs one store
//! call, and a session's end lags the last request by at most that interval.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often one visitor's session is renewed at most: a tenth of the room's TTL, at
/// least 1 s.
pub fn interval(session_ttl_secs: u64) -> Duration {
    Duration::from_millis(session_ttl_secs.saturating_mul(100).max(1000))
}

/// Entries kept before a call sweeps those past their interval.
const SWEEP_AT: usize = 4096;

/// When this gateway last asked the store to renew each visitor's session.
#[derive(Default)]
pub struct Renewals {
    /// (room, visitor) → (asked at, the interval that applies). A plain mutex: held for
    /// one map operation, never across an await.
    last: Mutex<HashMap<(String, String), (Instant, Duration)>>,
}

impl Renewals {
    /// Whether the store should be asked now for `visitor` in `room`; if so, records the
    /// ask (so concurrent requests of the same page do not all ask).
    pub fn due(&self, room: &str, visitor: &str, every: Duration, now: Instant) -> bool {
        // unwrap: a poisoned lock means a panic mid-insert; nothing to salvage.
        let mut last = self.last.lock().unwrap();
        let key = (room.to_string(), visitor.to_string());
        if let Some((at, _)) = last.get(&key) {
            if now.saturating_duration_since(*at) < every {
                return false;
            }
        }
        if last.len() >= SWEEP_AT {
            last.retain(|_, (at, every)| now.saturating_duration_since(*at) < *every);
        }
        last.insert(key, (now, every));
        true
    }

    /// Forgets a visitor (their session ended here): the next pass asks at once.
    pub fn forget(&self, room: &str, visitor: &str) {
        // unwrap: as in `due`.
        self.last
            .lock()
            .unwrap()
            .remove(&(room.to_string(), visitor.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visitor_is_renewed_at_most_once_per_interval() {
        let r = Renewals::default();
        let t0 = Instant::now();
        let every = Duration::from_secs(3);
        assert!(r.due("a", "v", every, t0));
        assert!(!r.due("a", "v", every, t0 + Duration::from_secs(2)));
        assert!(r.due("a", "w", every, t0), "another visitor");
        assert!(r.due("b", "v", every, t0), "another room");
        assert!(r.due("a", "v", every, t0 + every));
        r.forget("a", "v");
        assert!(r.due("a", "v", every, t0 + every));
    }

    #[test]
    fn the_interval_is_a_tenth_of_the_ttl_and_at_least_a_second() {
        assert_eq!(interval(1800), Duration::from_secs(180));
        assert_eq!(interval(5), Duration::from_secs(1));
    }

    #[test]
    fn old_entries_are_swept_once_the_map_is_large() {
        let r = Renewals::default();
        let t0 = Instant::now();
        let every = Duration::from_secs(1);
        for i in 0..SWEEP_AT {
            r.due("a", &i.to_string(), every, t0);
        }
        r.due("a", "late", every, t0 + every);
        assert_eq!(r.last.lock().unwrap().len(), 1);
    }
}
