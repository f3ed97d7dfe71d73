//! Per-room ETA schedules ([`Schedule`]), refreshed at most once a second per instance
//! (one store call), and the reason the room's estimates last moved.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::domain::eta::{reason, Schedule};
use crate::store::{AdmissionStore, EtaBasis};

/// How old a schedule may be before the next reader refreshes it.
pub const REFRESH: Duration = Duration::from_secs(1);
/// How long an event (a capacity change, a resume, a change in session lengths) is
/// given as the reason after it happened.
pub const REASON_KEEP_MS: u64 = 60_000;
/// The window over which session lengths are compared.
const USUAL_MS: u64 = 60_000;
/// A change in the mean session length past these ratios is an event.
const LONGER: f64 = 1.25;
const SHORTER: f64 = 0.8;

/// One room's estimates and why they last moved.
#[derive(Debug)]
pub struct Forecast {
    pub schedule: Schedule,
    /// The latest event within [`REASON_KEEP_MS`], else a standing cause (the rate cap).
    pub reason: Option<&'static str>,
    fetched: Instant,
}

#[derive(Default)]
struct Entry {
    current: Option<Arc<Forecast>>,
    capacity: Option<u64>,
    paused: Option<bool>,
    /// (when, mean session ms) over the last [`USUAL_MS`].
    means: VecDeque<(u64, f64)>,
    event: Option<(&'static str, u64)>,
    /// When the outflow controller last lowered the capacity for the origin's sake (ms):
    /// a capacity lowered then is told as `origin_busy`.
    origin_busy_at: Option<u64>,
}

impl Entry {
    #[cfg(test)]
    fn update(&mut self, b: &EtaBasis) -> Arc<Forecast> {
        self.update_with(b, Schedule::compute(b))
    }

    /// Takes `schedule`, computed from `b`, as the room's current forecast.
    fn update_with(&mut self, b: &EtaBasis, schedule: Schedule) -> Arc<Forecast> {
        let now = b.now_ms;
        let mut event = None;
        match self.capacity {
            Some(c) if b.capacity < c => event = Some(reason::CAPACITY_LOWERED),
            Some(c) if b.capacity > c => event = Some(reason::CAPACITY_RAISED),
            _ => {}
        }
        match self.paused {
            Some(false) if b.paused => event = Some(reason::PAUSED),
            Some(true) if !b.paused => event = Some(reason::RESUMED),
            _ => {}
        }
        self.capacity = Some(b.capacity);
        self.paused = Some(b.paused);
        if let Some(mean) = schedule.mean_session_ms {
            while self.means.front().is_some_and(|&(t, _)| t + USUAL_MS < now) {
                self.means.pop_front();
            }
            // Only a change in how people behave, not one an admin just made.
            let quiet = self.event.is_none_or(|(_, at)| at + USUAL_MS < now);
            if event.is_none() && quiet && self.means.len() >= 5 {
                let lo = self.means.iter().map(|m| m.1).fold(f64::MAX, f64::min);
                let hi = self.means.iter().map(|m| m.1).fold(0.0, f64::max);
                if mean > lo * LONGER {
                    event = Some(reason::SESSIONS_LONGER);
                } else if mean < hi * SHORTER {
                    event = Some(reason::SESSIONS_SHORTER);
                }
                if event.is_some() {
                    // The new length is the usual one from now on.
                    self.means.clear();
                }
            }
            self.means.push_back((now, mean));
        }
        if let Some(e) = event {
            self.event = Some((e, now));
        }
        let busy = self
            .origin_busy_at
            .is_some_and(|t| t + REASON_KEEP_MS > now);
        let recent =
            self.event
                .filter(|&(_, at)| at + REASON_KEEP_MS > now)
                .map(|(e, _)| match e {
                    reason::CAPACITY_LOWERED if busy => crate::domain::outflow::ORIGIN_BUSY,
                    e => e,
                });
        let standing = if schedule.rate_limited {
            Some(reason::RATE_LIMITED)
        } else {
            b.lanes.then_some(reason::PRIORITY_LANES)
        };
        let f = Arc::new(Forecast {
            reason: recent.or(standing),
            schedule,
            fetched: Instant::now(),
        });
        self.current = Some(f.clone());
        f
    }
}

/// The forecasts of every room this instance serves.
#[derive(Default)]
pub struct Forecasts {
    rooms: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Entry>>>>,
}

impl Forecasts {
    /// The room's forecast, refreshed from the store when older than [`REFRESH`]. On a
    /// store failure the last one is kept; `None` if there never was one.
    pub async fn get(&self, store: &dyn AdmissionStore, room: &str) -> Option<Arc<Forecast>> {
        let entry = {
            // unwrap: never poisoned (no panics while held).
            let mut rooms = self.rooms.lock().unwrap();
            rooms.entry(room.to_string()).or_default().clone()
        };
        let mut e = entry.lock().await;
        if let Some(f) = &e.current {
            if f.fetched.elapsed() < REFRESH {
                return Some(f.clone());
            }
        }
        match store.eta_basis(room).await {
            Ok(b) => {
                // The schedule plays the line through [`crate::domain::eta::RUNS`] times
                // (10–24 ms in a release build for lines of 500–100,000): on a blocking
                // thread, so the worker that found it stale keeps answering its other
                // connections meanwhile. Readers of this room wait on the entry, as
                // before.
                let computed = tokio::task::spawn_blocking(move || {
                    let schedule = Schedule::compute(&b);
                    (b, schedule)
                })
                .await;
                match computed {
                    Ok((b, schedule)) => Some(e.update_with(&b, schedule)),
                    Err(err) => {
                        tracing::error!(room, error = %err, "eta schedule failed");
                        e.current.clone()
                    }
                }
            }
            Err(err) => {
                tracing::debug!(room, error = %err, "eta basis unavailable");
                e.current.clone()
            }
        }
    }

    /// Notes that the outflow controller lowered the room's capacity because the origin
    /// is struggling (at `at_ms`, wall clock): the lowering is then told as
    /// `eta_reason: "origin_busy"` rather than `capacity_lowered`.
    pub async fn note_origin_busy(&self, room: &str, at_ms: u64) {
        let entry = {
            // unwrap: never poisoned (no panics while held).
            let mut rooms = self.rooms.lock().unwrap();
            rooms.entry(room.to_string()).or_default().clone()
        };
        let mut e = entry.lock().await;
        e.origin_busy_at = Some(e.origin_busy_at.map_or(at_ms, |t| t.max(at_ms)));
    }

    /// Forgets a room (deleted through the admin API on this instance).
    pub fn forget(&self, room: &str) {
        // unwrap: never poisoned.
        self.rooms.lock().unwrap().remove(room);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basis(now_ms: u64, capacity: u64, paused: bool, end_ms: u64) -> EtaBasis {
        EtaBasis {
            now_ms,
            capacity,
            paused,
            session_ttl_ms: 60_000,
            queue_length: 10,
            ends: vec![(now_ms, end_ms); 8],
            ..EtaBasis::default()
        }
    }

    #[test]
    fn a_capacity_the_outflow_controller_lowered_is_told_as_origin_busy() {
        let mut e = Entry::default();
        e.update(&basis(1_000, 40, false, 5000));
        e.origin_busy_at = Some(1_500);
        let f = e.update(&basis(2_000, 20, false, 5000));
        assert_eq!(f.reason, Some(crate::domain::outflow::ORIGIN_BUSY));
        // An admin's lowering long after is their own.
        let f = e.update(&basis(2_000 + REASON_KEEP_MS, 10, false, 5000));
        assert_eq!(f.reason, Some(reason::CAPACITY_LOWERED));
    }

    #[test]
    fn admin_changes_are_reasons_for_a_minute() {
        let mut e = Entry::default();
        assert_eq!(e.update(&basis(1_000, 4, false, 5000)).reason, None);
        let f = e.update(&basis(2_000, 2, false, 5000));
        assert_eq!(f.reason, Some(reason::CAPACITY_LOWERED));
        assert_eq!(
            e.update(&basis(30_000, 6, false, 5000)).reason,
            Some(reason::CAPACITY_RAISED)
        );
        assert_eq!(
            e.update(&basis(40_000, 6, true, 5000)).reason,
            Some(reason::PAUSED)
        );
        assert_eq!(
            e.update(&basis(50_000, 6, false, 5000)).reason,
            Some(reason::RESUMED)
        );
        assert_eq!(
            e.update(&basis(50_000 + REASON_KEEP_MS, 6, false, 5000))
                .reason,
            None
        );
    }

    #[test]
    fn sessions_growing_longer_is_a_reason() {
        let mut e = Entry::default();
        for t in 0..10 {
            assert_eq!(e.update(&basis(t * 1000, 4, false, 5000)).reason, None);
        }
        let f = e.update(&basis(10_000, 4, false, 9000));
        assert_eq!(f.reason, Some(reason::SESSIONS_LONGER));
        for t in 11..20 {
            e.update(&basis(t * 1000, 4, false, 9000));
        }
        let f = e.update(&basis(20_000, 4, false, 3000));
        // Still within a minute of the last event: the newer one replaces it.
        assert_eq!(f.reason, Some(reason::SESSIONS_LONGER));
        assert_eq!(
            e.update(&basis(90_000, 4, false, 3000)).reason,
            None,
            "an old event is no reason"
        );
    }
}
