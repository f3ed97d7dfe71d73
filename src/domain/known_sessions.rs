//! The sessions this instance knows to be live, so that after the store lost its data
//! (or failed over) the keeper puts them back at once (`restore_session`) while a
//! re-created room holds its admissions (`Store::recreate_room`): admitted visitors keep
//! counting against capacity whether or not they come back during the hold, whichever
//! instance let them in (one that died too).
//!
//! How it is kept, at a cost that follows what changes, not the room's size: a full
//! listing of each declared room's live sessions now and then ([`FULL_EVERY_MS`], in
//! pages of [`PAGE`]), and at every look in between only what changed since the last
//! (`Store::sessions`: sessions expiring later than any seen — the new ones — and the
//! releases since, from `st:gone`), plus every pass this instance signed since its last
//! look began. Expired sessions are dropped locally. A loss revives at most what ended in
//! the second before it.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::store::{Admission, SessionsPage};

/// Sessions per page of a listing.
pub const PAGE: u32 = 1_000;
/// A full listing at least this often (ms); also when the last look is older than half
/// the time releases are remembered (`GONE_KEEP_MS`), so none is missed.
pub const FULL_EVERY_MS: u64 = 60_000;

/// What this instance knows of one room.
#[derive(Default)]
struct Room {
    sessions: HashMap<String, Admission>,
    /// The latest expiry seen: the next look asks for sessions expiring at or after it.
    expiry_cursor: u64,
    /// The latest release seen (store ms): the next look asks for releases since.
    gone_cursor: u64,
    /// When the last full listing and the last look began (this instance's clock, ms).
    full_at: u64,
    looked_at: u64,
}

#[derive(Default)]
struct Inner {
    rooms: HashMap<String, Room>,
    /// (room, visitor) → (when recorded, ms; the admission of a pass signed here).
    signed: HashMap<(String, String), (u64, Admission)>,
}

/// See the module doc.
#[derive(Default)]
pub struct KnownSessions {
    inner: Mutex<Inner>,
}

/// The next look at a room: a page of a full listing, or what changed since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Look {
    Full,
    Changes { expires_from: u64, gone_after: u64 },
}

impl KnownSessions {
    /// Notes a pass just signed (at `now_ms`).
    pub fn signed(&self, room: &str, visitor: &str, a: &Admission, now_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        m.signed
            .insert((room.to_string(), visitor.to_string()), (now_ms, a.clone()));
    }

    /// The latest release seen in `room` (store ms), if it was looked at: a full listing
    /// asks for the releases since too, so none is missed between two looks.
    pub fn gone_cursor(&self, room: &str) -> Option<u64> {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        m.rooms.get(room).map(|r| r.gone_cursor)
    }

    /// What the look at `room` beginning at `now_ms` should read.
    pub fn next_look(&self, room: &str, now_ms: u64) -> Look {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        match m.rooms.get(room) {
            Some(r)
                if now_ms.saturating_sub(r.full_at) < FULL_EVERY_MS
                    && now_ms.saturating_sub(r.looked_at) < crate::store::GONE_KEEP_MS / 2 =>
            {
                Look::Changes {
                    expires_from: r.expiry_cursor,
                    gone_after: r.gone_cursor,
                }
            }
            _ => Look::Full,
        }
    }

    /// A full listing of `room`'s live sessions read by a look that began at `began_ms`
    /// (the store's clock was `store_now_ms` at its first page): it replaces what was
    /// known, and the passes signed before the look began.
    pub fn listed(
        &self,
        room: &str,
        sessions: Vec<(String, Admission)>,
        store_now_ms: u64,
        began_ms: u64,
    ) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        m.signed
            .retain(|(r, _), (at, _)| r != room || *at >= began_ms);
        let expiry_cursor = sessions
            .iter()
            .map(|(_, a)| a.expires_at_ms)
            .max()
            .unwrap_or(store_now_ms);
        m.rooms.insert(
            room.to_string(),
            Room {
                sessions: sessions.into_iter().collect(),
                expiry_cursor,
                gone_cursor: store_now_ms,
                full_at: began_ms,
                looked_at: began_ms,
            },
        );
    }

    /// What changed in `room` since its last look (a page asked with [`Look::Changes`]),
    /// read by a look that began at `began_ms`.
    pub fn changed(&self, room: &str, page: SessionsPage, began_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        m.signed
            .retain(|(r, _), (at, _)| r != room || *at >= began_ms);
        let r = m.rooms.entry(room.to_string()).or_default();
        for (v, a) in page.sessions {
            r.expiry_cursor = r.expiry_cursor.max(a.expires_at_ms);
            match r.sessions.get(&v) {
                Some(known) if known.serial > a.serial => {}
                _ => {
                    r.sessions.insert(v, a);
                }
            }
        }
        for (v, at) in page.gone {
            r.gone_cursor = r.gone_cursor.max(at);
            if r.sessions.get(&v).is_some_and(|a| a.issued_at_ms <= at) {
                r.sessions.remove(&v);
            }
        }
        r.sessions.retain(|_, a| a.expires_at_ms > page.now_ms);
        r.looked_at = began_ms;
    }

    /// The session `serial` of `visitor` in `room`, if this instance knows it live (listed,
    /// or signed here since the last look).
    pub fn knows(&self, room: &str, visitor: &str, serial: u64) -> Option<Admission> {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        let listed = m
            .rooms
            .get(room)
            .and_then(|r| r.sessions.get(visitor))
            .filter(|a| a.serial == serial);
        let signed = m
            .signed
            .get(&(room.to_string(), visitor.to_string()))
            .map(|(_, a)| a)
            .filter(|a| a.serial == serial);
        listed.or(signed).cloned()
    }

    /// Whether `visitor` was let into `room` at or after `ms` (store clock), as far as
    /// this instance knows: a place taken before then ended with that admission.
    pub fn admitted_since(&self, room: &str, visitor: &str, ms: u64) -> bool {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        let listed = m
            .rooms
            .get(room)
            .and_then(|r| r.sessions.get(visitor))
            .is_some_and(|a| a.issued_at_ms >= ms);
        listed
            || m.signed
                .get(&(room.to_string(), visitor.to_string()))
                .is_some_and(|(_, a)| a.issued_at_ms >= ms)
    }

    /// The latest session of `visitor` in `room` this instance knows (listed or signed).
    pub fn session(&self, room: &str, visitor: &str) -> Option<Admission> {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        let listed = m.rooms.get(room).and_then(|r| r.sessions.get(visitor));
        let signed = m
            .signed
            .get(&(room.to_string(), visitor.to_string()))
            .map(|(_, a)| a);
        match (listed, signed) {
            (Some(l), Some(s)) => Some(if s.serial > l.serial { s } else { l }),
            (l, s) => l.or(s),
        }
        .cloned()
    }

    /// Forgets a session this instance just ended.
    pub fn forget(&self, room: &str, visitor: &str) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        if let Some(r) = m.rooms.get_mut(room) {
            r.sessions.remove(visitor);
        }
        m.signed.remove(&(room.to_string(), visitor.to_string()));
    }

    /// Every session known, still unexpired at `now_ms`: (room, visitor, admission).
    pub fn unexpired(&self, now_ms: u64) -> Vec<(String, String, Admission)> {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        let mut out: HashMap<(String, String), Admission> = HashMap::new();
        for (room, r) in &m.rooms {
            for (v, a) in &r.sessions {
                out.insert((room.clone(), v.clone()), a.clone());
            }
        }
        for (key, (_, a)) in &m.signed {
            match out.get(key) {
                Some(known) if known.serial >= a.serial => {}
                _ => {
                    out.insert(key.clone(), a.clone());
                }
            }
        }
        out.into_iter()
            .filter(|(_, a)| a.expires_at_ms > now_ms)
            .map(|((r, v), a)| (r, v, a))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adm(serial: u64, issued_at_ms: u64, expires_at_ms: u64) -> Admission {
        Admission {
            serial,
            issued_at_ms,
            expires_at_ms,
        }
    }

    fn sorted(mut v: Vec<(String, String, Admission)>) -> Vec<(String, String, Admission)> {
        v.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        v
    }

    #[test]
    fn a_full_listing_then_only_what_changed() {
        let k = KnownSessions::default();
        assert_eq!(k.next_look("r", 0), Look::Full);
        k.signed("r", "a", &adm(1, 0, 100), 10);
        k.signed("r", "b", &adm(2, 0, 100), 30);
        // A listing that began at 20 has c (a ended meanwhile; b came after it began).
        k.listed("r", vec![("c".into(), adm(3, 5, 500))], 15, 20);
        assert_eq!(
            sorted(k.unexpired(0)),
            vec![
                ("r".into(), "b".into(), adm(2, 0, 100)),
                ("r".into(), "c".into(), adm(3, 5, 500)),
            ]
        );
        // The next look asks for what changed since.
        assert_eq!(
            k.next_look("r", 1_020),
            Look::Changes {
                expires_from: 500,
                gone_after: 15
            }
        );
        // d came in; c was released after it was issued; an older admission of d is
        // not taken over a newer one.
        k.changed(
            "r",
            SessionsPage {
                now_ms: 1_000,
                sessions: vec![("d".into(), adm(5, 900, 1_600))],
                gone: vec![("c".into(), 950)],
                flushed_at_ms: None,
            },
            1_020,
        );
        assert_eq!(
            sorted(k.unexpired(0)),
            vec![("r".into(), "d".into(), adm(5, 900, 1_600))]
        );
        assert_eq!(
            k.next_look("r", 2_000),
            Look::Changes {
                expires_from: 1_600,
                gone_after: 950
            }
        );
        // A release before the session was issued leaves it.
        k.changed(
            "r",
            SessionsPage {
                now_ms: 1_100,
                sessions: vec![],
                gone: vec![("d".into(), 800)],
                flushed_at_ms: None,
            },
            2_000,
        );
        assert_eq!(k.unexpired(0).len(), 1);
        // Expired ones are left out; a full listing again after FULL_EVERY_MS.
        assert!(k.unexpired(1_600).is_empty());
        assert_eq!(k.next_look("r", 20 + FULL_EVERY_MS), Look::Full);
    }
}
