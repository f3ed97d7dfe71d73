//! The sessions this instance knows to be live, so that after the store lost its data
//! the keeper puts them back at once (`restore_session`) while a re-created room holds
//! its admissions (`Store::recreate_room`): admitted visitors keep counting against
//! capacity whether or not they come back during the hold, whichever instance let them
//! in (one that died too).
//!
//! What it knows: each declared room's live sessions as the store listed them at the
//! keeper's last look (`Store::sessions`, once a second), plus every pass this instance
//! signed since that look began. Sessions that ended in the store are gone from the next
//! look, so a loss revives at most the sessions ended in the second before it (and the
//! passes this instance signed since, until they expire).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::store::Admission;

#[derive(Default)]
struct Inner {
    /// room → the live sessions at the last look.
    listed: HashMap<String, Vec<(String, Admission)>>,
    /// (room, visitor) → (when recorded, ms; the admission of a pass signed here).
    signed: HashMap<(String, String), (u64, Admission)>,
}

/// See the module doc.
#[derive(Default)]
pub struct KnownSessions {
    inner: Mutex<Inner>,
}

impl KnownSessions {
    /// Notes a pass just signed (at `now_ms`).
    pub fn signed(&self, room: &str, visitor: &str, a: &Admission, now_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        m.signed
            .insert((room.to_string(), visitor.to_string()), (now_ms, a.clone()));
    }

    /// The store's list of a room's live sessions, read by a look that began at
    /// `began_ms`: it replaces the last one, and the passes signed before it began (the
    /// list has them if they are still live).
    pub fn listed(&self, room: &str, sessions: Vec<(String, Admission)>, began_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        m.signed
            .retain(|(r, _), (at, _)| r != room || *at >= began_ms);
        m.listed.insert(room.to_string(), sessions);
    }

    /// Every session known, still unexpired at `now_ms`: (room, visitor, admission).
    pub fn unexpired(&self, now_ms: u64) -> Vec<(String, String, Admission)> {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.lock().unwrap();
        let mut out: HashMap<(String, String), Admission> = HashMap::new();
        for (room, list) in &m.listed {
            for (v, a) in list {
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

    fn adm(serial: u64, expires_at_ms: u64) -> Admission {
        Admission {
            serial,
            issued_at_ms: 0,
            expires_at_ms,
        }
    }

    fn sorted(mut v: Vec<(String, String, Admission)>) -> Vec<(String, String, Admission)> {
        v.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        v
    }

    #[test]
    fn knows_the_listed_sessions_and_the_passes_signed_since() {
        let k = KnownSessions::default();
        k.signed("r", "a", &adm(1, 100), 10);
        k.signed("r", "b", &adm(2, 100), 30);
        // A look that began at 20 lists c (a ended meanwhile; b came after it began).
        k.listed("r", vec![("c".into(), adm(3, 500))], 20);
        assert_eq!(
            sorted(k.unexpired(0)),
            vec![
                ("r".into(), "b".into(), adm(2, 100)),
                ("r".into(), "c".into(), adm(3, 500)),
            ]
        );
        // Expired ones are left out; a later pass of the same visitor wins.
        k.signed("r", "c", &adm(4, 900), 40);
        assert_eq!(
            sorted(k.unexpired(200)),
            vec![("r".into(), "c".into(), adm(4, 900))]
        );
        // The next look replaces the list: a session that ended is forgotten.
        k.listed("r", vec![], 50);
        assert!(k.unexpired(0).is_empty());
    }
}
