//! The wait a queued visitor is shown: a point estimate, a range that most visitors
//! really get in inside, and an honest "not known yet" when there is no basis.
//! The model, its inputs and its limits are explained in `docs/eta.md`.
//!
//! ## Model
//! A room is `capacity` slots. A queued visitor at place `p` gets in at the `n`-th
//! admission from now, where `n = ⌈p·(1 − f)⌉` and `f` is the share of the last five
//! minutes' queue exits that were visitors dropped for silence (they leave the line
//! without taking a slot), or the share of the line silent for over half the heartbeat
//! timeout now, whichever is larger. Admissions happen when a slot frees (a session ends) and the
//! rate cap allows one. So the ETA is the time of the `n`-th admission in a simulation of
//! the room from its present state:
//!
//! - the live sessions, each ending at a duration drawn from the observed distribution
//!   *given its age so far*, never after its expiry;
//! - every admitted visitor holding the slot for a drawn duration, at most the TTL;
//! - the rate cap's sliding minute, starting from the admissions already in it;
//! - stock: past the units left, nobody gets in;
//! - capacity as it is now (a change is in the next estimate, a second later).
//!
//! Session durations come from the last [`crate::store::ENDS_KEEP`] session ends
//! (releases and expiries) together with the live sessions as right-censored
//! observations (alive at their age), by Kaplan–Meier: the mass past the longest
//! observed end is spread evenly up to the TTL ([`TAIL`]: a guess). Each of
//! [`RUNS`] simulation runs scales its durations by a factor drawn for the uncertainty
//! of the mean (a log-normal with σ = CV/√ends), so the spread of the runs covers both
//! the luck of the draw and how little has been observed. Point = median run; range =
//! 5th to 95th percentile, widened by the promotion lag (a freed slot is filled by the
//! next promote, within a second).
//!
//! Sessions never claimed by their visitor are left out of the durations: those
//! unclaimed for half the heartbeat timeout (`EtaBasis::quiet`) hold their slot until
//! expiry in the simulation.
//!
//! ## When it is not known
//! While more than [`MAX_UNSEEN_SHARE`] of the mean session comes from the guessed tail
//! (no end at all: all of it), no session is older than [`KNOWN_AFTER_MS`] and no rate
//! cap sets the pace, how long visitors stay is not known: the estimate is `known:
//! false`, `seconds` and `high` are the worst case (every session runs its TTL) and
//! `low` is 0. A paused room
//! has no estimate (no countdown while paused). A place past the stock left has none
//! either (the room may sell out first).

use std::collections::{BinaryHeap, VecDeque};

use rand::{rngs::StdRng, Rng, SeedableRng};

use crate::store::EtaBasis;

/// Simulation runs per schedule.
pub const RUNS: usize = 64;
/// Admissions simulated; places further back are extrapolated at the simulated rate.
pub const MAX_SIMULATED: usize = 2000;
/// Places always simulated, however short the queue is now.
const MIN_SIMULATED: u64 = 256;
/// Without any session end, the estimate counts as known once a live session is this old.
pub const KNOWN_AFTER_MS: u64 = 5_000;
/// Slack for the promotion lag: a freed slot is filled by the next promote.
const LAG_LOW_MS: u64 = 1_000;
const LAG_HIGH_MS: u64 = 2_000;
/// The largest share of the mean session length that may come from sessions outliving
/// every end seen for the estimate to count as known: past the longest end, how long
/// sessions last is a guess (see [`TAIL`]), and with more than this riding on the guess
/// the estimate is one too.
pub const MAX_UNSEEN_SHARE: f64 = 0.25;
/// The smallest coefficient of variation assumed for the mean's uncertainty.
const MIN_CV: f64 = 0.3;

/// Point estimate and range, in seconds. `known: false` means there is no basis yet
/// (then `seconds == high` is the worst case and `low` is 0), the room is paused, or the
/// place is past the stock left (then all three are 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Eta {
    pub seconds: u64,
    pub low: u64,
    pub high: u64,
    pub known: bool,
}

/// Why a place or an estimate moved; the `eta_reason` codes (sentences in `i18n`).
pub mod reason {
    pub const CAPACITY_LOWERED: &str = "capacity_lowered";
    pub const CAPACITY_RAISED: &str = "capacity_raised";
    pub const PAUSED: &str = "paused";
    pub const RESUMED: &str = "resumed";
    pub const RATE_LIMITED: &str = "rate_limited";
    pub const SESSIONS_LONGER: &str = "sessions_longer_than_usual";
    pub const SESSIONS_SHORTER: &str = "sessions_shorter_than_usual";
    pub const PLACES_RESTORED: &str = "places_restored";
    pub const YOU_WERE_AWAY: &str = "you_were_away";
    pub const STOCK_MAY_RUN_OUT: &str = "stock_may_run_out";
    pub const PRIORITY_LANES: &str = "priority_lanes";
}

/// A room's estimates for every place, computed from one [`EtaBasis`].
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub computed_ms: u64,
    /// The room's admissions so far when computed.
    pub admits: u64,
    /// (median, low, high) ms from `computed_ms` to the k-th admission (index k − 1).
    points: Vec<(u64, u64, u64)>,
    /// Share of queue exits that are visitors dropped for silence.
    pub abandon: f64,
    pub known: bool,
    pub paused: bool,
    pub closed: bool,
    /// Admissions that can still happen (stock left); `None` = unlimited.
    pub stock: Option<u64>,
    /// Slots freeing per minute in the median run (the measured turnover).
    pub turnover_per_minute: f64,
    /// Mean session duration by Kaplan–Meier (ms), when any session end was observed.
    pub mean_session_ms: Option<f64>,
    /// The rate cap, not the slots, sets the pace.
    pub rate_limited: bool,
}

/// Kaplan–Meier distribution of session durations: (duration, F(duration)) at each
/// observed end. Past the longest observed end, durations follow [`TAIL`]: early on,
/// when live sessions are older than every end seen, this neither assumes they all run
/// out (far too slow) nor that they end at once (far too fast).
struct Durations {
    steps: Vec<(u64, f64)>,
    ttl: u64,
    /// Mean of the tail (ms); `None` without any end (then the tail is the TTL).
    tail_mean: Option<f64>,
    tail: Tail,
}

/// How durations past the longest observed end are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Memoryless, with the censoring-aware mean (all time observed ÷ ends).
    Exponential,
    /// Uniform between the longest end seen (or the session's age) and the TTL.
    Uniform,
}

/// The tail the service uses (see `docs/eta.md` for the measured choice).
pub const TAIL: Tail = Tail::Uniform;

impl Durations {
    fn from_basis(b: &EtaBasis) -> Self {
        let ttl = b.session_ttl_ms.max(1);
        // (duration, observed): observed ends, and live sessions censored at their age.
        let mut ev: Vec<(u64, bool)> = b.ends.iter().map(|&(_, d)| (d.min(ttl), true)).collect();
        ev.extend(
            b.sessions
                .iter()
                .map(|&(issued, _)| (b.now_ms.saturating_sub(issued).min(ttl), false)),
        );
        let exposure: f64 = ev.iter().map(|&(d, _)| d as f64).sum();
        let tail_mean = (!b.ends.is_empty()).then(|| (exposure / b.ends.len() as f64).max(1.0));
        // Ends before censorings at the same time (the usual convention).
        ev.sort_by_key(|&(d, obs)| (d, !obs));
        let mut at_risk = ev.len() as f64;
        let mut surv = 1.0;
        let mut steps = Vec::new();
        for (d, obs) in ev {
            if obs {
                surv *= 1.0 - 1.0 / at_risk;
                steps.push((d, 1.0 - surv));
            }
            at_risk -= 1.0;
        }
        Self {
            steps,
            ttl,
            tail_mean,
            tail: TAIL,
        }
    }

    /// The share of the mean that comes from sessions outliving the longest end seen
    /// (1 without any end).
    fn unseen_share(&self) -> f64 {
        let Some(&(last, f)) = self.steps.last() else {
            return 1.0;
        };
        let mean = self.mean();
        if mean <= 0.0 {
            return 0.0;
        }
        let tail = self.mean_past(last as f64);
        ((1.0 - f) * tail / mean).clamp(0.0, 1.0)
    }

    /// F(age): the share of sessions over by `age` (within the observed part).
    fn cdf(&self, age: u64) -> f64 {
        match self.steps.partition_point(|&(d, _)| d <= age) {
            0 => 0.0,
            i => self.steps[i - 1].1,
        }
    }

    /// A duration at quantile `u` for a session already `age` old.
    fn sample(&self, u: f64, age: u64) -> u64 {
        if let Some(&(d, _)) = self.steps.get(self.steps.partition_point(|&(_, f)| f < u)) {
            if d >= age {
                return d;
            }
        }
        let Some(mean) = self.tail_mean else {
            return self.ttl;
        };
        let last = self.steps.last().map_or(0.0, |s| s.1);
        let from = self.steps.last().map_or(0, |s| s.0).max(age);
        let v = ((u - last) / (1.0 - last)).clamp(0.0, 1.0);
        match self.tail {
            Tail::Exponential => {
                (from as f64 - mean * (1.0 - v).max(1e-9).ln()).min(self.ttl as f64) as u64
            }
            Tail::Uniform => from + (v * self.ttl.saturating_sub(from) as f64) as u64,
        }
    }

    /// The mean, by the same model (Monte Carlo free: steps, then the tail).
    fn mean(&self) -> f64 {
        let mut prev = 0.0;
        let mut m = 0.0;
        for &(d, f) in &self.steps {
            m += (f - prev) * d as f64;
            prev = f;
        }
        let last = self.steps.last().map_or(0, |s| s.0) as f64;
        m + (1.0 - prev) * self.mean_past(last)
    }

    /// The mean duration of the sessions outliving `last`, the longest end seen.
    fn mean_past(&self, last: f64) -> f64 {
        match (self.tail_mean, self.tail) {
            (Some(t), Tail::Exponential) => (last + t).min(self.ttl as f64),
            (Some(_), Tail::Uniform) => (last + self.ttl as f64) / 2.0,
            (None, _) => self.ttl as f64,
        }
    }

    fn cv(&self) -> f64 {
        let mean = self.mean();
        if mean <= 0.0 {
            return MIN_CV;
        }
        let mut prev = 0.0;
        let mut var = 0.0;
        for &(d, f) in &self.steps {
            var += (f - prev) * (d as f64 - mean).powi(2);
            prev = f;
        }
        (var.sqrt() / mean).max(MIN_CV)
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

impl Schedule {
    /// Simulates the room from `b`. Deterministic for a given basis (seeded by it).
    pub fn compute(b: &EtaBasis) -> Schedule {
        let exits = b.admitted_recent + b.reaped_recent;
        let history = if exits > 0 {
            b.reaped_recent as f64 / exits as f64
        } else {
            0.0
        };
        // A leading sign: the share of the line already silent (before anyone is reaped).
        let silent = if b.queue_length > 0 {
            b.silent as f64 / b.queue_length as f64
        } else {
            0.0
        };
        let abandon = history.max(silent).min(0.9);
        let oldest = b
            .sessions
            .iter()
            .map(|&(issued, _)| b.now_ms.saturating_sub(issued))
            .max()
            .unwrap_or(0);
        let dist = Durations::from_basis(b);
        let known = dist.unseen_share() <= MAX_UNSEEN_SHARE || oldest >= KNOWN_AFTER_MS;
        let mut s = Schedule {
            computed_ms: b.now_ms,
            admits: b.admits,
            abandon,
            known,
            paused: b.paused,
            closed: b.closed,
            stock: b.stock,
            ..Schedule::default()
        };
        if b.capacity == 0 || b.closed {
            return s;
        }
        if !b.ends.is_empty() {
            s.mean_session_ms = Some(dist.mean());
        }
        // Further than the queue: the next visitors to join take the places behind it
        // before this schedule is refreshed.
        let need = ((b.queue_length as f64 * (1.0 - abandon)).ceil() as u64).max(MIN_SIMULATED);
        let need = need.min(b.stock.unwrap_or(u64::MAX)) as usize;
        let k = need.min(MAX_SIMULATED);
        if k == 0 {
            return s;
        }
        let sigma = if b.ends.is_empty() {
            0.0
        } else {
            dist.cv() / (b.ends.len() as f64).sqrt()
        };
        let mut rng = StdRng::seed_from_u64(b.now_ms ^ (b.queue_length << 20) ^ b.active);
        let mut runs: Vec<Vec<u64>> = Vec::with_capacity(RUNS);
        let mut capped = 0usize;
        for _ in 0..RUNS {
            let scale = (sigma * normal(&mut rng)).exp();
            let (times, by_cap) = simulate(b, &dist, scale, k, &mut rng);
            capped += by_cap as usize;
            runs.push(times);
        }
        s.rate_limited = b.rate_cap_per_minute > 0 && capped * 2 > RUNS;
        // The cap's minute is known exactly: while it sets the pace, so is the estimate.
        s.known |= s.rate_limited;
        let mut col = vec![0u64; RUNS];
        s.points = (0..k)
            .map(|i| {
                for (c, r) in col.iter_mut().zip(&runs) {
                    *c = r[i];
                }
                col.sort_unstable();
                let lo = col[RUNS * 5 / 100];
                let hi = col[(RUNS * 95).div_ceil(100) - 1];
                (col[RUNS / 2], lo, hi)
            })
            .collect();
        let last = s.points[k - 1].0;
        if last > 0 {
            s.turnover_per_minute = k as f64 * 60_000.0 / last as f64;
        }
        s
    }

    /// The estimate for the visitor at `position`, read at `now_ms` when the room had
    /// made `admits` admissions.
    pub fn at(&self, position: u64, now_ms: u64, admits: u64) -> Eta {
        if position == 0 || self.paused || self.closed || self.points.is_empty() {
            return Eta::default();
        }
        let elapsed = now_ms.saturating_sub(self.computed_ms);
        // Admissions made since the schedule was computed moved the visitor up: count
        // the place from the schedule's start.
        let n = self.admission_index(position, admits);
        if n < 1 {
            // The schedule was read after the admission that lets this visitor in (their
            // place was read a moment before it): they are being let in now.
            return Eta {
                seconds: 0,
                low: 0,
                high: LAG_HIGH_MS / 1000,
                known: true,
            };
        }
        let n = n as u64;
        if self.stock.is_some_and(|left| n > left) {
            return Eta::default();
        }
        let k = self.points.len() as u64;
        let (med, lo, hi) = if n <= k {
            self.points[(n - 1) as usize]
        } else {
            // Past the simulated places: on at the simulated pace, range in proportion.
            let (m, l, h) = self.points[(k - 1) as usize];
            let per = m as f64 / k as f64;
            let extra = ((n - k) as f64 * per) as u64;
            let grow = |x: u64| x + (extra as f64 * x as f64 / m.max(1) as f64) as u64;
            (m + extra, grow(l), grow(h))
        };
        let secs = |ms: u64| ms.div_ceil(1000);
        let med = med.saturating_sub(elapsed);
        let high = secs(hi.saturating_sub(elapsed) + LAG_HIGH_MS);
        if !self.known {
            return Eta {
                seconds: high,
                low: 0,
                high,
                known: false,
            };
        }
        Eta {
            seconds: secs(med),
            low: lo.saturating_sub(elapsed + LAG_LOW_MS) / 1000,
            high,
            known: true,
        }
    }

    /// Whether `position` is past the stock left.
    /// Which admission of this schedule lets in the visitor at `position` when the room
    /// had made `admits` admissions: those made since the schedule moved the visitor up,
    /// and those the schedule's own read made (it promotes first) are already in it.
    /// Below 1 when the schedule already holds that admission.
    fn admission_index(&self, position: u64, admits: u64) -> i64 {
        let p = ((position as f64 * (1.0 - self.abandon)).ceil() as i64).max(1);
        p + admits as i64 - self.admits as i64
    }

    pub fn past_stock(&self, position: u64, admits: u64) -> bool {
        let n = self.admission_index(position, admits);
        position > 0 && self.stock.is_some_and(|left| n > left as i64)
    }

    /// Median ms per admission over the simulated places (the pace of the line).
    pub fn pace_ms(&self) -> Option<f64> {
        let &(m, _, _) = self.points.last()?;
        Some(m as f64 / self.points.len() as f64)
    }
}

/// One run: the times (ms from now) of the first `k` admissions, and whether the rate
/// cap delayed any of them.
fn simulate(
    b: &EtaBasis,
    dist: &Durations,
    scale: f64,
    k: usize,
    rng: &mut StdRng,
) -> (Vec<u64>, bool) {
    let now = b.now_ms;
    let ttl = b.session_ttl_ms;
    let draw = |rng: &mut StdRng, age: u64| -> u64 {
        let from = dist.cdf(age);
        let u = from + rng.gen::<f64>() * (1.0 - from);
        match dist.sample(u, age) {
            // Ran out: the TTL bounds it, not the visitor's behaviour; not scaled.
            d if d >= ttl => ttl,
            d => ((d as f64 * scale) as u64).clamp(age, ttl),
        }
    };
    // Min-heap of slot release times (ms from now).
    let mut ends: BinaryHeap<std::cmp::Reverse<u64>> = BinaryHeap::new();
    for &(issued, expires) in &b.sessions {
        let age = now.saturating_sub(issued);
        let d = draw(rng, age);
        let end = (issued + d).min(expires).max(now);
        ends.push(std::cmp::Reverse(end - now));
    }
    // Quiet sessions (their visitor left before being let in) hold the slot until expiry.
    for &expires in &b.quiet {
        ends.push(std::cmp::Reverse(expires.saturating_sub(now)));
    }
    // Live sessions past those read: they expire no sooner than the last one read.
    let unread = b
        .active
        .saturating_sub((b.sessions.len() + b.quiet.len()) as u64);
    let last_expiry = b
        .sessions
        .last()
        .map(|&(_, e)| e)
        .max(b.quiet.last().copied())
        .map_or(ttl, |e| e.saturating_sub(now));
    for _ in 0..unread {
        ends.push(std::cmp::Reverse(last_expiry));
    }
    let cap = b.rate_cap_per_minute as usize;
    // Times relative to now, signed: the window's admissions are in the past.
    let minute = crate::store::WINDOW_MS as i64;
    let mut window: VecDeque<i64> = b.window.iter().map(|&w| w as i64 - now as i64).collect();
    let slots = b.capacity as usize;
    let mut t = 0u64;
    let mut by_cap = false;
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        while ends.len() >= slots {
            // unwrap: the heap holds at least `slots` ≥ 1 entries.
            let std::cmp::Reverse(e) = ends.pop().unwrap();
            t = t.max(e);
        }
        if cap > 0 {
            while window.front().is_some_and(|&w| w + minute <= t as i64) {
                window.pop_front();
            }
            if window.len() >= cap {
                // unwrap: the window is not empty.
                t = t.max((window.front().copied().unwrap() + minute).max(0) as u64);
                by_cap = true;
                continue;
            }
            window.push_back(t as i64);
        }
        out.push(t);
        ends.push(std::cmp::Reverse(t + draw(rng, 0)));
    }
    (out, by_cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_000_000_000;

    fn basis(capacity: u64, ttl_s: u64, queue: u64) -> EtaBasis {
        EtaBasis {
            now_ms: NOW,
            capacity,
            session_ttl_ms: ttl_s * 1000,
            queue_length: queue,
            ..EtaBasis::default()
        }
    }

    /// `n` live sessions admitted `age_s` ago.
    fn live(b: &mut EtaBasis, n: u64, age_s: u64) {
        for _ in 0..n {
            let issued = NOW - age_s * 1000;
            b.sessions.push((issued, issued + b.session_ttl_ms));
        }
        b.active = b.sessions.len() as u64;
        b.sessions.sort_by_key(|s| s.1);
    }

    fn ends(b: &mut EtaBasis, durations_ms: &[u64]) {
        b.ends = durations_ms
            .iter()
            .enumerate()
            .map(|(i, &d)| (NOW - i as u64 * 100, d))
            .collect();
    }

    #[test]
    fn no_basis_says_not_known_with_the_worst_case() {
        // Six fresh sessions of 30 s, nothing ended yet: place 12 is at most two rounds.
        let mut b = basis(6, 30, 20);
        live(&mut b, 6, 1);
        let e = Schedule::compute(&b).at(12, NOW, 0);
        assert!(!e.known);
        assert_eq!(e.low, 0);
        assert_eq!(e.seconds, e.high);
        assert_eq!(e.high, 29 + 30 + 2);
    }

    #[test]
    fn full_sessions_give_the_exact_expiry_schedule() {
        let mut b = basis(2, 10, 10);
        live(&mut b, 2, 4); // free at 6 s
        ends(&mut b, &[10_000; 8]);
        let s = Schedule::compute(&b);
        let e = s.at(1, NOW, 0);
        assert!(e.known);
        assert_eq!(e.seconds, 6);
        assert!(e.low <= 6 && e.high >= 6 && e.high <= 8, "{e:?}");
        assert_eq!(s.at(3, NOW, 0).seconds, 16);
        assert_eq!(s.at(5, NOW, 0).seconds, 26);
    }

    #[test]
    fn short_sessions_drain_fast_and_the_range_holds_the_point() {
        let mut b = basis(6, 30, 100);
        live(&mut b, 6, 0);
        ends(
            &mut b,
            &[500, 900, 1200, 1500, 1800, 2100, 2500, 700, 1000, 2000],
        );
        let e = Schedule::compute(&b).at(100, NOW, 0);
        // ~1.5 s per session over 6 slots: about 25 s, nowhere near 100 × 30 / 6 = 500 s.
        assert!((15..=40).contains(&e.seconds), "{e:?}");
        assert!(e.low < e.seconds && e.seconds < e.high, "{e:?}");
    }

    #[test]
    fn long_lived_sessions_count_even_before_they_end() {
        // Only short ends seen, but half the live sessions are already 20 s old: the
        // model must not assume they will all be short.
        let mut b = basis(4, 60, 40);
        live(&mut b, 2, 20);
        live(&mut b, 2, 0);
        ends(&mut b, &[1000, 1000, 1000, 1000]);
        let with_old = Schedule::compute(&b).at(40, NOW, 0).seconds;
        let mut fresh = basis(4, 60, 40);
        live(&mut fresh, 4, 0);
        ends(&mut fresh, &[1000, 1000, 1000, 1000]);
        let without = Schedule::compute(&fresh).at(40, NOW, 0).seconds;
        assert!(with_old > 3 * without, "{with_old} vs {without}");
    }

    #[test]
    fn the_rate_cap_sets_the_pace() {
        // 3 a minute, the window already full from 3 s ago: the first place waits ~57 s.
        let mut b = basis(10, 600, 5);
        b.rate_cap_per_minute = 3;
        b.window = vec![NOW - 3000; 3];
        ends(&mut b, &[1000; 5]);
        let s = Schedule::compute(&b);
        assert!(s.rate_limited);
        assert_eq!(s.at(1, NOW, 0).seconds, 57);
        assert_eq!(s.at(4, NOW, 0).seconds, 117);
    }

    #[test]
    fn capacity_is_used_as_it_is_now() {
        // Lowered to 2 with 4 sessions live (600 s left each): nobody gets in until two
        // of them end.
        let mut b = basis(2, 600, 3);
        live(&mut b, 4, 0);
        ends(&mut b, &[600_000; 4]);
        assert_eq!(Schedule::compute(&b).at(1, NOW, 0).seconds, 600);
        // Raised to 6 with the same 4: two places are free at once.
        b.capacity = 6;
        assert_eq!(Schedule::compute(&b).at(2, NOW, 0).seconds, 0);
    }

    #[test]
    fn paused_rooms_and_places_past_the_stock_have_no_estimate() {
        let mut b = basis(2, 10, 5);
        ends(&mut b, &[1000; 4]);
        b.paused = true;
        assert_eq!(Schedule::compute(&b).at(1, NOW, 0), Eta::default());
        b.paused = false;
        b.stock = Some(2);
        let s = Schedule::compute(&b);
        assert!(s.at(2, NOW, 0).known);
        assert_eq!(s.at(3, NOW, 0), Eta::default());
        assert!(s.past_stock(3, 0) && !s.past_stock(2, 0));
    }

    #[test]
    fn silent_abandonment_shortens_the_wait() {
        let mut b = basis(2, 10, 50);
        ends(&mut b, &[10_000; 8]);
        // Two at once, then two every 10 s: the 40th admission is at 190 s.
        let plain = Schedule::compute(&b).at(40, NOW, 0).seconds;
        b.admitted_recent = 80;
        b.reaped_recent = 20;
        // A fifth of those ahead leave unserved: the visitor needs 32 admissions, 150 s.
        let thinned = Schedule::compute(&b).at(40, NOW, 0).seconds;
        assert!((180..=190).contains(&plain), "{plain}");
        assert!((140..=150).contains(&thinned), "{thinned}");
    }

    #[test]
    fn a_place_read_before_the_schedule_is_lined_up_by_the_serial() {
        // The schedule's read promoted one visitor (serial 5 → 6) after the visitor's
        // snapshot (serial 5) said place 2: that is the schedule's place 1.
        let mut b = basis(1, 10, 3);
        ends(&mut b, &[10_000; 8]);
        live(&mut b, 1, 0);
        b.admits = 6;
        let s = Schedule::compute(&b);
        assert_eq!(s.at(2, NOW, 5), s.at(1, NOW, 6));
        assert_eq!(s.at(2, NOW, 5).seconds, 10);
    }

    #[test]
    fn a_place_read_just_before_its_own_admission_is_now() {
        // The visitor's snapshot said place 1 (serial 5); the schedule's read then
        // promoted them (serial 6): they are being let in, not waiting for the next slot.
        let mut b = basis(1, 10, 3);
        ends(&mut b, &[10_000; 8]);
        live(&mut b, 1, 0);
        b.admits = 6;
        let e = Schedule::compute(&b).at(1, NOW, 5);
        assert!(e.known);
        assert_eq!((e.seconds, e.low), (0, 0));
        assert!(e.high <= 2, "{e:?}");
    }

    #[test]
    fn a_guess_carrying_much_of_the_mean_is_not_known() {
        // Two ends of ~1 s, but three of four live sessions have outlived them: how long
        // those last (up to the 20 s TTL) is a guess that would carry most of the mean.
        let mut b = basis(4, 20, 20);
        live(&mut b, 3, 2);
        live(&mut b, 1, 0);
        ends(&mut b, &[1000, 1200]);
        let e = Schedule::compute(&b).at(10, NOW, 0);
        assert!(!e.known, "{e:?}");
        // Once the ends cover how long sessions last, the same room is known.
        ends(&mut b, &[1000, 1200, 2100, 2300, 2500, 2600, 2800, 2900]);
        let mut fresh = basis(4, 20, 20);
        live(&mut fresh, 4, 1);
        fresh.ends = b.ends.clone();
        let e = Schedule::compute(&fresh).at(10, NOW, 0);
        assert!(e.known, "{e:?}");
        // ~2.2 s a session over four slots: place 10 in about 5–6 s, nowhere near the TTL.
        assert!((3..=9).contains(&e.seconds), "{e:?}");
    }

    #[test]
    fn quiet_sessions_hold_their_slot_to_expiry_and_are_not_stays() {
        // One slot held by a visitor who left before their turn (expires in 15 s), one
        // by a 1 s stayer: place 2 waits for the stayer twice, not for the quiet one.
        let mut b = basis(2, 20, 5);
        ends(&mut b, &[1000; 8]);
        live(&mut b, 1, 0);
        b.quiet = vec![NOW + 15_000];
        b.active = 2;
        let s = Schedule::compute(&b);
        assert!(s.at(1, NOW, 0).seconds <= 2, "{:?}", s.at(1, NOW, 0));
        assert!(s.at(2, NOW, 0).seconds <= 3, "{:?}", s.at(2, NOW, 0));
        // The quiet session is no evidence of how long visitors stay.
        assert_eq!(s.mean_session_ms.map(|m| m.round()), Some(1000.0));
    }

    #[test]
    fn the_estimate_counts_down_between_schedules() {
        let mut b = basis(1, 10, 3);
        ends(&mut b, &[10_000; 8]);
        live(&mut b, 1, 0);
        let s = Schedule::compute(&b);
        assert_eq!(s.at(1, NOW, 0).seconds, 10);
        assert_eq!(s.at(1, NOW + 4000, 0).seconds, 6);
        // 11 s on, the slot freed at 10 s was filled (one admission since): the visitor
        // now at place 1 was at place 2 when the schedule was made; let in at 20 s.
        assert_eq!(s.at(1, NOW + 11_000, 1).seconds, 9);
    }

    #[test]
    fn places_past_the_simulation_are_extrapolated() {
        let mut b = basis(1, 1, 5000);
        ends(&mut b, &[1000; 8]);
        let s = Schedule::compute(&b);
        let at_max = s.at(MAX_SIMULATED as u64, NOW, 0).seconds;
        let twice = s.at(2 * MAX_SIMULATED as u64, NOW, 0).seconds;
        assert!(
            (twice as f64 / at_max as f64 - 2.0).abs() < 0.01,
            "{at_max} {twice}"
        );
    }
}
