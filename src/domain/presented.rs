//! The sessions this instance has seen presented ([`Presented`]): the no-show cache the
//! engine holds (docs/outflow.md#no-shows, `super::noshow` for what it is for). A
//! presentation clears the session's deadline in the store once; after that, the gateway
//! and `verify` ask this cache and add no store call per request.

use std::collections::HashMap;
use std::sync::RwLock;

/// At most this many sessions are kept; past it, those whose passes expired are dropped,
/// and if that is not enough the cache starts again (each session is then presented once
/// more: one store call each).
pub const MAX_SESSIONS: usize = 100_000;

/// (room, visitor) sessions whose deadline this instance cleared.
#[derive(Default)]
pub struct Presented {
    /// (room, visitor) → (serial, until when it matters: the pass's expiry, ms). Read on
    /// every guarded request, written once per session.
    inner: RwLock<HashMap<(String, String), (u64, u64)>>,
}

impl Presented {
    /// Whether this instance already cleared the deadline of session `serial`.
    pub fn seen(&self, room: &str, visitor: &str, serial: u64) -> bool {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.read().unwrap();
        // A tuple key of Strings needs owned strings to look up; the rooms and visitors
        // are short, and this is one allocation pair per guarded request.
        m.get(&(room.to_string(), visitor.to_string()))
            .is_some_and(|&(s, _)| s == serial)
    }

    /// Notes that session `serial` was presented and its deadline cleared; kept until
    /// `until_ms` (its pass's expiry), swept at `now_ms` when the cache is full.
    pub fn note(&self, room: &str, visitor: &str, serial: u64, until_ms: u64, now_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.write().unwrap();
        if m.len() >= MAX_SESSIONS {
            m.retain(|_, &mut (_, until)| until > now_ms);
            if m.len() >= MAX_SESSIONS {
                m.clear();
            }
        }
        m.insert((room.to_string(), visitor.to_string()), (serial, until_ms));
    }

    /// How many sessions are kept (the tests' view of the bound).
    #[cfg(test)]
    fn len(&self) -> usize {
        // unwrap: never poisoned (no panics while held).
        self.inner.read().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_seen_once_noted_and_only_that_serial_in_that_room() {
        let p = Presented::default();
        assert!(!p.seen("r", "v", 1));
        p.note("r", "v", 1, 10_000, 0);
        assert!(p.seen("r", "v", 1));
        assert!(
            !p.seen("r", "v", 2),
            "a newer admission has a deadline of its own"
        );
        assert!(!p.seen("s", "v", 1), "another room");
        assert!(!p.seen("r", "w", 1), "another visitor");
    }

    #[test]
    fn a_full_cache_drops_expired_sessions_first() {
        let p = Presented::default();
        for i in 0..MAX_SESSIONS {
            p.note("r", &i.to_string(), 1, if i == 0 { 50_000 } else { 10 }, 0);
        }
        p.note("r", "late", 1, 50_000, 100);
        assert_eq!(p.len(), 2);
        assert!(p.seen("r", "0", 1) && p.seen("r", "late", 1));
    }
}
