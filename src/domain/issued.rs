//! The passes this instance issued that have not expired, so that after the store lost
//! its data the keeper puts their sessions back at once (`restore_session`), while a
//! re-created room holds its admissions (`Store::recreate_room`): admitted visitors keep
//! counting against capacity even if they do not come back to `verify` during the hold.
//! A pass issued by another instance is put back by that instance, or when its visitor
//! next presents it (`Engine::verify_pass`).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::store::Admission;

/// (room, visitor) → the latest admission this instance signed a pass for.
#[derive(Default)]
pub struct IssuedPasses {
    // A visitor keeps one entry per room (a later pass replaces an earlier one); entries
    // leave when their pass expires (`prune`, once a second from the keeper), so the map
    // holds at most the room's admissions over one session lifetime.
    inner: Mutex<HashMap<(String, String), Admission>>,
}

impl IssuedPasses {
    /// Notes a pass just signed.
    pub fn record(&self, room: &str, visitor: &str, a: &Admission) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.lock().unwrap();
        match m.get_mut(&(room.to_string(), visitor.to_string())) {
            Some(known) if known.serial >= a.serial && known.expires_at_ms >= a.expires_at_ms => {}
            Some(known) => *known = a.clone(),
            None => {
                m.insert((room.to_string(), visitor.to_string()), a.clone());
            }
        }
    }

    /// Forgets the passes expired at `now_ms`.
    pub fn prune(&self, now_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        self.inner
            .lock()
            .unwrap()
            .retain(|_, a| a.expires_at_ms > now_ms);
    }

    /// The passes still good at `now_ms`: (room, visitor, admission).
    pub fn unexpired(&self, now_ms: u64) -> Vec<(String, String, Admission)> {
        // unwrap: never poisoned (no panics while held).
        self.inner
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, a)| a.expires_at_ms > now_ms)
            .map(|((r, v), a)| (r.clone(), v.clone(), a.clone()))
            .collect()
    }

    pub fn len(&self) -> usize {
        // unwrap: never poisoned (no panics while held).
        self.inner.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    #[test]
    fn keeps_the_latest_pass_per_visitor_until_it_expires() {
        let p = IssuedPasses::default();
        p.record("r", "a", &adm(1, 100));
        p.record("r", "a", &adm(3, 300));
        p.record("r", "a", &adm(3, 300));
        p.record("r", "b", &adm(2, 50));
        p.record("s", "a", &adm(1, 100));
        assert_eq!(p.len(), 3);
        let mut live = p.unexpired(60);
        live.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        assert_eq!(
            live,
            vec![
                ("r".into(), "a".into(), adm(3, 300)),
                ("s".into(), "a".into(), adm(1, 100)),
            ]
        );
        p.prune(100);
        assert_eq!(p.unexpired(0), vec![("r".into(), "a".into(), adm(3, 300))]);
    }
}
