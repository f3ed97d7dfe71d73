//! Crowds drawn at random from the families of issue 31, each from one seed.
//!
//! - capacity log-uniform in 1–1,000; TTL log-uniform in 10 s–60 min;
//! - stays exponential, uniform or log-normal (σ 0.5–1.2), their mean log-uniform
//!   between 2 s and half the TTL; in half the rooms 0–50 % of visitors instead hold
//!   their slot to the TTL (never release);
//! - arrivals: one burst, steady, waves, or a burst then a trickle, at 1–2.5× the rate
//!   the room can serve;
//! - in half the rooms 0–40 % of visitors go silent (close the tab) 0–60 s after
//!   joining;
//! - a fifth of the rooms have a rate cap, a fifth finite stock, and a third an admin
//!   change while the line is long: capacity halved or doubled, a pause of 10–60 s, or
//!   a stock top-up.

use rand::{rngs::StdRng, Rng, SeedableRng};

/// An admin change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admin {
    Capacity(u64),
    Pause,
    Resume,
    TopUp(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stays {
    Exponential,
    Uniform,
    LogNormal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arrivals {
    Burst,
    Steady,
    Waves,
    BurstThenTrickle,
}

#[derive(Clone, Copy, Debug)]
pub struct Visitor {
    pub join_ms: u64,
    /// How long they stay once let in (capped by the TTL: holders have `u64::MAX`).
    pub stay_ms: u64,
    /// When they go silent for good (close the tab), if they do.
    pub silent_at: Option<u64>,
}

/// How big the drawn crowds are.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// The longest line a crowd builds, in visitors beyond the capacity.
    pub max_line: u64,
}

impl Size {
    /// For `cargo test`: lines of at most 60, so 500 crowds run within the minute in a
    /// debug build on two cores (each schedule simulates 64 runs of at least 256
    /// admissions, and the test profile is not optimised); the benchmark's lines are 25×
    /// longer.
    pub const TEST: Size = Size { max_line: 60 };
    /// For the benchmark: lines of at most 1,500.
    pub const BENCH: Size = Size { max_line: 1500 };
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub seed: u64,
    pub capacity: u64,
    pub ttl_ms: u64,
    pub heartbeat_ms: u64,
    pub rate_cap: u64,
    pub stock: Option<u64>,
    pub stays: Stays,
    pub stay_mean_ms: u64,
    pub hold_share: f64,
    pub arrivals: Arrivals,
    pub abandon_share: f64,
    pub admin: Vec<(u64, Admin)>,
    pub visitors: Vec<Visitor>,
}

fn log_uniform(rng: &mut StdRng, lo: f64, hi: f64) -> f64 {
    (rng.gen_range(lo.ln()..=hi.ln())).exp()
}

fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

impl Scenario {
    /// The crowd of `seed`.
    pub fn generate(seed: u64, size: Size) -> Scenario {
        let mut rng = StdRng::seed_from_u64(seed);
        let capacity = log_uniform(&mut rng, 1.0, 1000.0).round() as u64;
        let ttl_ms = (log_uniform(&mut rng, 10.0, 3600.0) * 1000.0) as u64;
        let stays = [Stays::Exponential, Stays::Uniform, Stays::LogNormal][rng.gen_range(0..3)];
        let stay_mean_ms = log_uniform(&mut rng, 2_000.0, (ttl_ms / 2).max(2_001) as f64) as u64;
        let hold_share = if rng.gen_bool(0.5) {
            rng.gen_range(0.0..0.5)
        } else {
            0.0
        };
        let arrivals = [
            Arrivals::Burst,
            Arrivals::Steady,
            Arrivals::Waves,
            Arrivals::BurstThenTrickle,
        ][rng.gen_range(0..4)];
        let abandon_share = if rng.gen_bool(0.5) {
            rng.gen_range(0.0..0.4)
        } else {
            0.0
        };
        let sigma = rng.gen_range(0.5..1.2);
        let mean = stay_mean_ms as f64;
        let stay = |rng: &mut StdRng| -> u64 {
            if rng.gen_bool(hold_share) {
                return u64::MAX;
            }
            let d = match stays {
                Stays::Exponential => -mean * (1.0 - rng.gen::<f64>()).ln(),
                Stays::Uniform => rng.gen_range(0.0..2.0 * mean),
                Stays::LogNormal => (mean.ln() - sigma * sigma / 2.0 + sigma * normal(rng)).exp(),
            };
            (d as u64).max(200)
        };
        // The room's pace: slots free every mean stay (holders: the TTL).
        let served_ms = (1.0 - hold_share) * (mean.min(ttl_ms as f64)) + hold_share * ttl_ms as f64;
        let per_s = capacity as f64 / (served_ms / 1000.0);
        let line = ((capacity as f64 * rng.gen_range(0.5..3.0)) as u64 + rng.gen_range(5..40))
            .min(size.max_line);
        let n = capacity + line;
        let load = rng.gen_range(1.0..2.5);
        // Arrivals after the first: spread so the line builds at `load` × the pace.
        let spread_s = (line as f64 / (per_s * (load - 1.0)).max(per_s * 0.2)).max(1.0);
        let mut joins: Vec<u64> = (0..n)
            .map(|i| {
                let s = match arrivals {
                    Arrivals::Burst => rng.gen_range(0.0..1.0),
                    Arrivals::Steady => rng.gen_range(0.0..spread_s),
                    Arrivals::Waves => {
                        let w = rng.gen_range(0..4) as f64;
                        w * spread_s / 3.0 + rng.gen_range(0.0..2.0)
                    }
                    Arrivals::BurstThenTrickle => {
                        if i < n * 6 / 10 {
                            rng.gen_range(0.0..1.0)
                        } else {
                            rng.gen_range(0.0..spread_s)
                        }
                    }
                };
                (s * 1000.0) as u64
            })
            .collect();
        joins.sort_unstable();
        let visitors = joins
            .into_iter()
            .map(|join_ms| Visitor {
                join_ms,
                stay_ms: stay(&mut rng),
                silent_at: rng
                    .gen_bool(abandon_share)
                    .then(|| join_ms + rng.gen_range(0..60_000)),
            })
            .collect();
        let rate_cap = if rng.gen_bool(0.2) {
            ((per_s * 60.0 * rng.gen_range(0.3..1.0)).round() as u64).max(1)
        } else {
            0
        };
        let stock = rng
            .gen_bool(0.2)
            .then(|| (n as f64 * rng.gen_range(0.5..1.1)) as u64);
        let mut admin = Vec::new();
        if rng.gen_bool(1.0 / 3.0) {
            // While the line is long: a quarter of the way through its expected drain.
            let at = ((n as f64 / per_s.max(1e-3) * rng.gen_range(0.1..0.4)) * 1000.0) as u64;
            match rng.gen_range(0..4) {
                0 => admin.push((at, Admin::Capacity((capacity / 2).max(1)))),
                1 => admin.push((at, Admin::Capacity(capacity * 2))),
                2 => {
                    admin.push((at, Admin::Pause));
                    admin.push((at + rng.gen_range(10_000..60_000), Admin::Resume));
                }
                _ if stock.is_some() => admin.push((at, Admin::TopUp(n / 4 + 1))),
                _ => admin.push((at, Admin::Capacity(capacity * 2))),
            }
        }
        Scenario {
            seed,
            capacity,
            ttl_ms,
            heartbeat_ms: 30_000,
            rate_cap,
            stock,
            stays,
            stay_mean_ms,
            hold_share,
            arrivals,
            abandon_share,
            admin,
            visitors,
        }
    }

    /// A one-line description (for the worst scenarios' table).
    pub fn describe(&self) -> String {
        format!(
            "cap {} ttl {}s {:?} mean {:.1}s hold {:.0}% {:?} n {} abandon {:.0}%{}{}{}",
            self.capacity,
            self.ttl_ms / 1000,
            self.stays,
            self.stay_mean_ms as f64 / 1000.0,
            self.hold_share * 100.0,
            self.arrivals,
            self.visitors.len(),
            self.abandon_share * 100.0,
            if self.rate_cap > 0 {
                format!(" cap {}/min", self.rate_cap)
            } else {
                String::new()
            },
            self.stock.map_or(String::new(), |s| format!(" stock {s}")),
            self.admin
                .iter()
                .map(|(t, a)| format!(" {a:?}@{}s", t / 1000))
                .collect::<String>(),
        )
    }
}
