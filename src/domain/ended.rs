//! What ended, as this instance knows it, so that no recovery revives it
//! (docs/operations.md#what-ended-stays-ended).
//!
//! Why it lives here and not in the store: after the store lost its data (restarted
//! empty, `FLUSHALL`, a failover to a replica that was behind), the store's own memory of
//! what ended (`st:gone`, the revocation log, the line) went with it. A released, revoked
//! or removed pass presented afterwards, or a receipt for a place that was let in, left,
//! removed or flushed, must not put its session or place back. So each instance keeps,
//! until the passes and receipts concerned expire:
//!
//! - every session it ended itself (release, revoke, admin remove), by serial;
//! - every release in the room it read from the store (`st:gone`, each keeper look: at
//!   most one keeper look, `reaper.keeper_interval_ms`, behind the store);
//! - every place it ended itself (leave, admin remove) and the time of every flush it
//!   did or read from the store.
//!
//! A place also ended when its visitor was let in after joining: that is read from the
//! sessions this instance knows ([`super::known_sessions`]). The ledger covers the time
//! from its first look at the store, less the minute `st:gone` remembers; a receipt
//! older than that is not trusted to restore anything ([`EndedLedger::covers`]).

use std::collections::HashMap;
use std::sync::RwLock;

use crate::store::Admission;

/// One visitor's ends in one room.
#[derive(Clone, Debug, Default)]
struct Ends {
    /// Serials of sessions ended here, with their passes' expiry (ms).
    serials: Vec<(u64, u64)>,
    /// The latest release read or done (ms, store clock when read from the store, this
    /// instance's clock when done here): every session issued and every place joined at
    /// or before it ended.
    released_at: u64,
    /// Tickets of places ended here.
    tickets: Vec<u64>,
    /// The latest release done here (ms, this instance's clock): every place joined at or
    /// before it ended. Kept apart from `released_at`: the two clocks may differ by a few
    /// ms, and a place wrongly taken as ended only joins at the back after a loss, while
    /// a session wrongly taken as ended would refuse a good pass.
    left_at: u64,
    /// Until when this entry matters (ms): the latest pass or receipt it could refuse.
    until: u64,
}

#[derive(Default)]
struct Inner {
    /// room → visitor → ends (nested, so a look-up borrows its keys: `verify` asks on
    /// every call).
    ends: HashMap<String, HashMap<String, Ends>>,
    /// Per room, the latest flush (ms): every place joined at or before it ended.
    flushed: HashMap<String, u64>,
    /// The earliest time (ms) from which every end in the store was seen here.
    since: Option<u64>,
}

/// See the module doc.
#[derive(Default)]
pub struct EndedLedger {
    /// Read on every `verify`, written on ends and at each keeper look.
    inner: RwLock<Inner>,
}

impl EndedLedger {
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        // unwrap: never poisoned (no panics while held).
        f(&mut self.inner.write().unwrap())
    }

    fn read<T>(&self, f: impl FnOnce(&Inner) -> T) -> T {
        // unwrap: never poisoned (no panics while held).
        f(&self.inner.read().unwrap())
    }

    fn entry<'a>(inner: &'a mut Inner, room: &str, visitor: &str, until: u64) -> &'a mut Ends {
        let e = inner
            .ends
            .entry(room.to_string())
            .or_default()
            .entry(visitor.to_string())
            .or_default();
        e.until = e.until.max(until);
        e
    }

    /// A session this instance ended (its passes live until `a.expires_at_ms`).
    pub fn session_ended(&self, room: &str, visitor: &str, a: &Admission) {
        self.with(|m| {
            let e = Self::entry(m, room, visitor, a.expires_at_ms);
            if !e.serials.iter().any(|(s, _)| *s == a.serial) {
                e.serials.push((a.serial, a.expires_at_ms));
            }
        });
    }

    /// A release of `visitor` at `at_ms` (read from the store, or done here), to be
    /// remembered until `until_ms`.
    pub fn released(&self, room: &str, visitor: &str, at_ms: u64, until_ms: u64) {
        self.with(|m| {
            let e = Self::entry(m, room, visitor, until_ms);
            e.released_at = e.released_at.max(at_ms);
        });
    }

    /// A release done here at `at_ms` (this instance's clock): whatever place the visitor
    /// held then ended. Remembered until `until_ms`.
    pub fn left(&self, room: &str, visitor: &str, at_ms: u64, until_ms: u64) {
        self.with(|m| {
            let e = Self::entry(m, room, visitor, until_ms);
            e.left_at = e.left_at.max(at_ms);
        });
    }

    /// A place (its ticket) this instance ended, remembered until `until_ms`.
    pub fn place_ended(&self, room: &str, visitor: &str, ticket: u64, until_ms: u64) {
        self.with(|m| {
            let e = Self::entry(m, room, visitor, until_ms);
            if !e.tickets.contains(&ticket) {
                e.tickets.push(ticket);
            }
        });
    }

    /// The room's queue was flushed at `at_ms`.
    pub fn flushed(&self, room: &str, at_ms: u64) {
        self.with(|m| {
            let f = m.flushed.entry(room.to_string()).or_default();
            *f = (*f).max(at_ms);
        });
    }

    /// This instance's first look at the store read every end it remembers from `ms` on.
    pub fn cover_from(&self, ms: u64) {
        self.with(|m| {
            m.since.get_or_insert(ms);
        });
    }

    /// Whether every end since `ms` was seen here.
    pub fn covers(&self, ms: u64) -> bool {
        self.read(|m| m.since.is_some_and(|s| s <= ms))
    }

    /// Whether the session `a` of `visitor` ended (by its serial, or a release at or
    /// after it was issued).
    pub fn session_is_ended(&self, room: &str, visitor: &str, serial: u64, issued_ms: u64) -> bool {
        self.read(|m| {
            m.ends
                .get(room)
                .and_then(|r| r.get(visitor))
                .is_some_and(|e| {
                    e.serials.iter().any(|(s, _)| *s == serial)
                        || (e.released_at > 0 && e.released_at >= issued_ms)
                })
        })
    }

    /// Whether the place (`ticket`, joined at `joined_ms`) ended: ended here, released
    /// or flushed after it was taken.
    pub fn place_is_ended(&self, room: &str, visitor: &str, ticket: u64, joined_ms: u64) -> bool {
        self.read(|m| {
            let flushed = m.flushed.get(room).is_some_and(|f| *f >= joined_ms);
            flushed
                || m.ends
                    .get(room)
                    .and_then(|r| r.get(visitor))
                    .is_some_and(|e| {
                        e.tickets.contains(&ticket)
                            || (e.released_at > 0 && e.released_at >= joined_ms)
                            || (e.left_at > 0 && e.left_at >= joined_ms)
                    })
        })
    }

    /// The sessions ended here whose passes are still good at `now_ms` (room, visitor,
    /// serial, expiry): after a loss they are written to the new store's revocation log
    /// again, so gateways that start afresh refuse them too.
    pub fn ended_sessions(&self, now_ms: u64) -> Vec<(String, String, u64, u64)> {
        self.read(|m| {
            let mut out = Vec::new();
            for (room, r) in &m.ends {
                for (visitor, e) in r {
                    for (serial, exp) in &e.serials {
                        if *exp > now_ms {
                            out.push((room.clone(), visitor.clone(), *serial, *exp));
                        }
                    }
                }
            }
            out
        })
    }

    /// Forgets what no longer matters at `now_ms`; returns how many entries are kept.
    pub fn sweep(&self, now_ms: u64) -> usize {
        self.with(|m| {
            for r in m.ends.values_mut() {
                r.retain(|_, e| {
                    e.serials.retain(|(_, exp)| *exp > now_ms);
                    e.until > now_ms
                });
            }
            m.ends.retain(|_, r| !r.is_empty());
            m.ends.values().map(HashMap::len).sum()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adm(serial: u64, issued: u64, exp: u64) -> Admission {
        Admission {
            serial,
            issued_at_ms: issued,
            expires_at_ms: exp,
        }
    }

    #[test]
    fn a_session_ended_here_stays_ended_by_serial_and_a_later_one_does_not() {
        let l = EndedLedger::default();
        l.session_ended("r", "a", &adm(3, 100, 1_000));
        assert!(l.session_is_ended("r", "a", 3, 100));
        assert!(!l.session_is_ended("r", "a", 4, 900), "a later admission");
        assert!(!l.session_is_ended("r", "b", 3, 100), "another visitor");
        assert!(!l.session_is_ended("s", "a", 3, 100), "another room");
        assert_eq!(
            l.ended_sessions(999),
            vec![("r".into(), "a".into(), 3, 1_000)]
        );
        assert!(l.ended_sessions(1_000).is_empty());
    }

    #[test]
    fn a_release_read_from_the_store_ends_what_was_issued_or_joined_before_it() {
        let l = EndedLedger::default();
        l.released("r", "a", 500, 10_000);
        assert!(l.session_is_ended("r", "a", 7, 400));
        assert!(l.session_is_ended("r", "a", 7, 500));
        assert!(
            !l.session_is_ended("r", "a", 8, 600),
            "issued after the release"
        );
        assert!(l.place_is_ended("r", "a", 1, 450));
        assert!(
            !l.place_is_ended("r", "a", 2, 700),
            "joined after the release"
        );
    }

    #[test]
    fn a_flush_ends_every_place_taken_before_it_and_none_after() {
        let l = EndedLedger::default();
        l.flushed("r", 1_000);
        assert!(l.place_is_ended("r", "x", 5, 999));
        assert!(l.place_is_ended("r", "y", 6, 1_000));
        assert!(!l.place_is_ended("r", "z", 7, 1_001));
        assert!(!l.place_is_ended("other", "x", 5, 10));
    }

    #[test]
    fn a_release_done_here_ends_the_place_but_not_a_later_session() {
        let l = EndedLedger::default();
        l.left("r", "a", 1_000, 9_000);
        assert!(l.place_is_ended("r", "a", 1, 900));
        assert!(!l.place_is_ended("r", "a", 2, 1_100));
        assert!(
            !l.session_is_ended("r", "a", 5, 900),
            "sessions go by serial or the store's clock"
        );
    }

    #[test]
    fn a_place_ended_here_is_known_by_its_ticket() {
        let l = EndedLedger::default();
        l.place_ended("r", "a", 42, 5_000);
        assert!(l.place_is_ended("r", "a", 42, 0));
        assert!(!l.place_is_ended("r", "a", 43, 0));
    }

    #[test]
    fn entries_are_kept_until_what_they_refuse_expires() {
        let l = EndedLedger::default();
        l.released("r", "a", 10, 2_000);
        l.session_ended("r", "b", &adm(1, 0, 3_000));
        assert_eq!(l.sweep(1_999), 2);
        assert_eq!(l.sweep(2_000), 1);
        assert!(!l.session_is_ended("r", "a", 1, 5));
        assert_eq!(l.sweep(3_000), 0);
    }

    #[test]
    fn coverage_starts_at_the_first_look() {
        let l = EndedLedger::default();
        assert!(!l.covers(0), "nothing seen yet");
        l.cover_from(1_000);
        l.cover_from(5_000);
        assert!(l.covers(1_000));
        assert!(!l.covers(999));
    }
}
