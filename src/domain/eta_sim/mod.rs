//! A deterministic simulator for the estimated wait: crowds drawn at random
//! ([`scenario`]) play against a model of the room's admission rules ([`room`]) on a
//! manual clock, and the service's own estimator ([`Schedule`]) is asked, as a visitor
//! polling once a second would ask it, for each waiting visitor's estimate. Per visitor
//! it records the first estimate shown as known, when it was shown, and the wait that
//! followed; per scenario it scores them ([`Score`]).
//!
//! Why a model of the room and not `MemoryStore` on a `ManualClock`: the estimator is
//! asked once a (simulated) second while anyone waits for a known estimate, over crowds
//! whose drain takes up to hours of simulated time; through the store every step is an
//! async call that also heartbeats and reads every visitor's status, and 500 crowds
//! would not fit in the test's minute in a debug build. The model keeps the rules that
//! move the estimate (listed in [`room`]); what it leaves out is what the basis does not
//! carry (lanes, the pre-queue, places restored after a loss).
//!
//! Run 500 crowds in `cargo test --lib eta_sim`, 5,000 with
//! `cargo run --release -p anteroom-loadtest -- eta-sim 5000` (BENCHMARKS.md).

pub mod room;
pub mod scenario;

use crate::domain::eta::{Eta, Schedule};
use room::Room;
use scenario::{Scenario, Size};

/// Waits shorter than this are judged against it (as the real-time runner does).
const FLOOR_MS: f64 = 10_000.0;
/// Simulated time after which a crowd is cut off (visitors not let in are not scored).
const HORIZON_MS: u64 = 48 * 3_600_000;

/// The first estimate shown as known to one visitor, and what followed.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    /// When the visitor joined (the tick their join was processed).
    pub joined: u64,
    pub first_known: Option<(u64, Eta)>,
    /// The visitor's place when the first known estimate was shown.
    pub place: u64,
    /// Whether an admin change (capacity, pause, top-up) came after the first known
    /// estimate and before the visitor's turn: the room it was made for changed.
    pub rebased: bool,
    /// Then, the first known estimate shown after the last such change (the one judged).
    pub after_change: Option<(u64, Eta)>,
    pub admitted_at: Option<u64>,
}

impl Seen {
    /// The estimate judged: the first known one, or, when the room was changed by its
    /// admin after it was shown, the first known one after the change.
    pub fn judged(&self) -> Option<(u64, Eta)> {
        if self.rebased {
            self.after_change
        } else {
            self.first_known
        }
    }
}

/// One scenario's figures.
#[derive(Clone, Debug)]
pub struct Score {
    pub seed: u64,
    pub describe: String,
    pub families: Vec<(&'static str, String)>,
    /// Visitors who waited in line, stayed, and were let in.
    pub visitors: usize,
    /// Of those, the ones shown a known estimate before their turn.
    pub scored: usize,
    /// Median of |shown − real| ÷ max(real, 10 s) over the first known estimates.
    pub median_error: f64,
    /// The same over the first known estimates, even those made before an admin change.
    pub strict_median_error: f64,
    /// Visitors whose first known estimate was followed by an admin change.
    pub rebased: usize,
    /// Share of waits inside the range shown with the first known estimate.
    pub inside: f64,
    /// Share of first known estimates whose range ended before the wait did.
    pub short_range: f64,
    /// Share of first known estimates whose point was below the wait.
    pub short_point: f64,
    /// Share of first known estimates whose range started after the wait ended.
    pub long_range: f64,
    /// Visitors shown a known estimate (or let in) within 10 s of joining, not counting
    /// time the room was paused.
    pub known_10s: usize,
}

/// Plays one crowd; returns what each visitor saw.
pub fn play(sc: &Scenario) -> Vec<Seen> {
    let mut room = Room::new(sc);
    let n = sc.visitors.len();
    let mut seen: Vec<Seen> = vec![
        Seen {
            joined: 0,
            first_known: None,
            place: 0,
            rebased: false,
            after_change: None,
            admitted_at: None,
        };
        n
    ];
    // (visitor, next time to ask, asked since)
    let mut pending: Vec<(usize, u64, u64)> = Vec::new();
    let (mut next_join, mut next_admin) = (0, 0);
    let mut pos = vec![0u64; n];
    let mut t = 0u64;
    let mut schedule: Option<Schedule> = None;
    loop {
        while next_join < n && sc.visitors[next_join].join_ms <= t {
            room.join(next_join);
            seen[next_join].joined = t;
            pending.push((next_join, t, t));
            next_join += 1;
        }
        while next_admin < sc.admin.len() && sc.admin[next_admin].0 <= t {
            room.apply(sc.admin[next_admin].1);
            next_admin += 1;
            // Whoever was shown a known estimate is asked again: theirs was made for
            // the room before the change (the page says why it moved).
            for (_, v) in room.line() {
                if seen[v].first_known.is_some() {
                    seen[v].rebased = true;
                    seen[v].after_change = None;
                    if !pending.iter().any(|p| p.0 == v) {
                        pending.push((v, t, t));
                    }
                }
            }
        }
        room.advance(t);
        pending.retain(|&(v, _, _)| room.in_line(v));
        if pending.iter().any(|p| p.1 <= t) {
            // As `Forecasts` does: one schedule a second, read by every visitor.
            if schedule.as_ref().is_none_or(|s| s.computed_ms + 1000 <= t) {
                schedule = Some(Schedule::compute(&room.basis()));
            }
            // unwrap: set just above.
            let schedule = schedule.as_ref().unwrap();
            for (p, v) in room.line() {
                pos[v] = p;
            }
            pending.retain_mut(|(v, next, since)| {
                if *next > t {
                    return true;
                }
                let e = schedule.at(pos[*v], t, room.admits);
                if e.known {
                    if seen[*v].first_known.is_none() {
                        seen[*v].first_known = Some((t, e));
                        seen[*v].place = pos[*v];
                    } else {
                        seen[*v].after_change = Some((t, e));
                    }
                    return false;
                }
                // Asked every second for the first 10 s (the figures need them exactly),
                // then less often: later the moment matters less than the cost.
                let age = t - *since;
                *next = t + match age {
                    0..10_000 => 1_000,
                    10_000..60_000 => 5_000,
                    60_000..600_000 => 30_000,
                    _ => 120_000,
                };
                true
            });
        }
        let next = [
            sc.visitors.get(next_join).map(|v| v.join_ms),
            sc.admin.get(next_admin).map(|a| a.0),
            room.next_change(),
            pending.iter().map(|p| p.1).min(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else { break };
        t = next.max(t + 1);
        let done = next_join == n && room.queued == 0 && pending.is_empty();
        let sold_out = room.stock == Some(0) && next_admin == sc.admin.len();
        if t > HORIZON_MS || done || sold_out {
            break;
        }
    }
    for (s, f) in seen.iter_mut().zip(&room.fates) {
        s.admitted_at = f.admitted_at;
    }
    seen
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

/// Plays and scores one crowd.
pub fn score(sc: &Scenario) -> Score {
    score_seen(sc, &play(sc))
}

/// Scores what the visitors of `sc` saw (from [`play`], or from the real-time runner's
/// records of the same crowd, on the crowd's clock: ms since its start).
pub fn score_seen(sc: &Scenario, seen: &[Seen]) -> Score {
    let (mut errors, mut inside, mut short_range, mut short_point, mut long_range) =
        (Vec::new(), 0, 0, 0, 0);
    let (mut visitors, mut known_10s) = (0, 0);
    let (mut strict, mut rebased) = (Vec::new(), 0);
    for (s, v) in seen.iter().zip(&sc.visitors) {
        let Some(admitted) = s.admitted_at else {
            continue;
        };
        // Let in at once (never in line), or gone before their turn: no wait to judge.
        if admitted <= s.joined || v.silent_at.is_some_and(|q| q <= admitted) {
            continue;
        }
        visitors += 1;
        // Paused time does not count: a paused room shows no countdown by design.
        let within = |at: u64| at <= s.joined + 10_000 + paused_between(sc, s.joined, at);
        if within(admitted) || s.first_known.is_some_and(|(at, _)| within(at)) {
            known_10s += 1;
        }
        if let Some((at, e)) = s.first_known {
            let wait = (admitted - at) as f64;
            strict.push((e.seconds as f64 * 1000.0 - wait).abs() / wait.max(FLOOR_MS));
        }
        rebased += usize::from(s.rebased);
        let Some((at, e)) = s.judged() else {
            continue;
        };
        let wait = (admitted - at) as f64;
        errors.push((e.seconds as f64 * 1000.0 - wait).abs() / wait.max(FLOOR_MS));
        inside += usize::from(e.low as f64 * 1000.0 <= wait && wait <= e.high as f64 * 1000.0);
        short_range += usize::from(wait > e.high as f64 * 1000.0);
        short_point += usize::from(wait > e.seconds as f64 * 1000.0);
        long_range += usize::from(wait < e.low as f64 * 1000.0);
    }
    let scored = errors.len();
    let share = |k: usize| {
        if scored == 0 {
            1.0
        } else {
            k as f64 / scored as f64
        }
    };
    Score {
        seed: sc.seed,
        describe: sc.describe(),
        families: families(sc),
        visitors,
        scored,
        median_error: median(&mut errors),
        strict_median_error: median(&mut strict),
        rebased,
        inside: share(inside),
        short_range: share(short_range),
        short_point: share(short_point),
        long_range: share(long_range),
        known_10s,
    }
}

/// How long the room was paused between `from` and `to`.
fn paused_between(sc: &Scenario, from: u64, to: u64) -> u64 {
    let mut total = 0;
    let mut since = None;
    for &(at, a) in &sc.admin {
        match a {
            scenario::Admin::Pause => since = Some(at),
            scenario::Admin::Resume => {
                if let Some(p) = since.take() {
                    total += at.min(to).saturating_sub(p.max(from));
                }
            }
            _ => {}
        }
    }
    total + since.map_or(0, |p| to.saturating_sub(p.max(from)))
}

/// The families a crowd belongs to, for the per-family tables.
fn families(sc: &Scenario) -> Vec<(&'static str, String)> {
    let band = |x: u64, edges: &[(u64, &str)]| {
        edges
            .iter()
            .find(|e| x <= e.0)
            .map_or("?", |e| e.1)
            .to_string()
    };
    vec![
        (
            "capacity",
            band(
                sc.capacity,
                &[(9, "1–9"), (99, "10–99"), (1000, "100–1000")],
            ),
        ),
        (
            "ttl",
            band(
                sc.ttl_ms / 1000,
                &[(59, "10–59 s"), (599, "1–10 min"), (3600, "10–60 min")],
            ),
        ),
        ("stays", format!("{:?}", sc.stays)),
        (
            "holders",
            if sc.hold_share > 0.0 {
                "0–50 % hold to TTL"
            } else {
                "none"
            }
            .to_string(),
        ),
        ("arrivals", format!("{:?}", sc.arrivals)),
        (
            "abandonment",
            if sc.abandon_share > 0.0 {
                "0–40 % silent"
            } else {
                "none"
            }
            .to_string(),
        ),
        (
            "admin",
            sc.admin.first().map_or("none".to_string(), |a| match a.1 {
                scenario::Admin::Capacity(c) if c < sc.capacity => "capacity down".into(),
                scenario::Admin::Capacity(_) => "capacity up".into(),
                scenario::Admin::Pause | scenario::Admin::Resume => "pause".into(),
                scenario::Admin::TopUp(_) => "stock top-up".into(),
            }),
        ),
        (
            "limits",
            match (sc.rate_cap > 0, sc.stock.is_some()) {
                (false, false) => "none",
                (true, false) => "rate cap",
                (false, true) => "stock",
                (true, true) => "rate cap + stock",
            }
            .to_string(),
        ),
    ]
}

/// Scores the crowds of `seeds` on all cores.
pub fn score_all(seeds: std::ops::Range<u64>, size: Size) -> Vec<Score> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicU64::new(seeds.start);
    let out = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if seed >= seeds.end {
                    break;
                }
                let sc = score(&Scenario::generate(seed, size));
                // unwrap: never poisoned (no panics while held).
                out.lock().unwrap().push(sc);
            });
        }
    });
    // unwrap: the threads are done.
    let mut v = out.into_inner().unwrap();
    v.sort_by_key(|s| s.seed);
    v
}

/// The targets of issue 31 over a set of scores.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Scenarios with at least one scored visitor.
    pub scenarios: usize,
    pub error_ok: f64,
    /// Median error ≤ 20 % judged on the first known estimate even where an admin
    /// change followed it.
    pub strict_error_ok: f64,
    pub inside_ok: f64,
    pub both_ok: f64,
    pub worst_error: f64,
    pub known_10s: f64,
    pub short_range: f64,
    pub short_point: f64,
    pub long_range: f64,
}

impl Summary {
    pub fn of(scores: &[Score]) -> Summary {
        let judged: Vec<&Score> = scores.iter().filter(|s| s.scored > 0).collect();
        let n = judged.len().max(1) as f64;
        let count = |f: &dyn Fn(&Score) -> bool| judged.iter().filter(|s| f(s)).count() as f64 / n;
        let visitors: usize = scores.iter().map(|s| s.visitors).sum();
        let scored: usize = judged.iter().map(|s| s.scored).sum();
        let pooled = |f: &dyn Fn(&Score) -> f64| {
            judged.iter().map(|s| f(s) * s.scored as f64).sum::<f64>() / scored.max(1) as f64
        };
        Summary {
            scenarios: judged.len(),
            error_ok: count(&|s| s.median_error <= 0.2),
            strict_error_ok: count(&|s| s.strict_median_error <= 0.2),
            inside_ok: count(&|s| s.inside >= 0.8),
            both_ok: count(&|s| s.median_error <= 0.2 && s.inside >= 0.8),
            worst_error: judged.iter().map(|s| s.median_error).fold(0.0, f64::max),
            known_10s: scores.iter().map(|s| s.known_10s).sum::<usize>() as f64
                / visitors.max(1) as f64,
            short_range: pooled(&|s| s.short_range),
            short_point: pooled(&|s| s.short_point),
            long_range: pooled(&|s| s.long_range),
        }
    }

    /// Whether every target of issue 31 holds.
    pub fn holds(&self) -> bool {
        self.both_ok >= 0.9 && self.worst_error <= 0.35 && self.known_10s >= 0.9
    }
}

/// A markdown report: the targets, the per-family distributions and the worst crowds.
pub fn report(scores: &[Score]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let s = Summary::of(scores);
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    let _ = writeln!(out, "| target | measured |\n|---|---|");
    let _ = writeln!(
        out,
        "| scenarios judged (some visitor waited) | {} of {} |",
        s.scenarios,
        scores.len()
    );
    let _ = writeln!(
        out,
        "| median error ≤ 20 % and ≥ 80 % inside, ≥ 90 % of scenarios | {} |",
        pct(s.both_ok)
    );
    let _ = writeln!(out, "| … median error ≤ 20 % alone | {} |", pct(s.error_ok));
    let _ = writeln!(out, "| … ≥ 80 % inside alone | {} |", pct(s.inside_ok));
    let _ = writeln!(
        out,
        "| … median error ≤ 20 % on the first known estimate even before an admin change | {} |",
        pct(s.strict_error_ok)
    );
    let _ = writeln!(
        out,
        "| worst scenario's median error ≤ 35 % | {} |",
        pct(s.worst_error)
    );
    let _ = writeln!(
        out,
        "| visitors known (or let in) within 10 s, ≥ 90 % | {} |",
        pct(s.known_10s)
    );
    let _ = writeln!(
        out,
        "| waits past the range (too short) | {} |",
        pct(s.short_range)
    );
    let _ = writeln!(
        out,
        "| waits before the range (too long) | {} |",
        pct(s.long_range)
    );
    let _ = writeln!(out, "| points below the wait | {} |", pct(s.short_point));
    let _ = writeln!(
        out,
        "\n| family | value | scenarios | error ≤ 20 % | inside ≥ 80 % | median error p50 / p90 | inside p10 | known ≤ 10 s |\n|---|---|---|---|---|---|---|---|"
    );
    let mut keys: Vec<(&str, String)> = scores
        .iter()
        .flat_map(|s| s.families.iter().cloned())
        .collect();
    keys.sort();
    keys.dedup();
    for (fam, val) in keys {
        let group: Vec<Score> = scores
            .iter()
            .filter(|s| s.families.iter().any(|f| f.0 == fam && f.1 == val))
            .cloned()
            .collect();
        let sum = Summary::of(&group);
        let mut errs: Vec<f64> = group
            .iter()
            .filter(|s| s.scored > 0)
            .map(|s| s.median_error)
            .collect();
        let mut ins: Vec<f64> = group
            .iter()
            .filter(|s| s.scored > 0)
            .map(|s| s.inside)
            .collect();
        errs.sort_by(f64::total_cmp);
        ins.sort_by(f64::total_cmp);
        let at = |v: &[f64], q: f64| {
            v.get(((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0.0)
        };
        let _ = writeln!(
            out,
            "| {fam} | {val} | {} | {} | {} | {} / {} | {} | {} |",
            sum.scenarios,
            pct(sum.error_ok),
            pct(sum.inside_ok),
            pct(at(&errs, 0.5)),
            pct(at(&errs, 0.9)),
            pct(at(&ins, 0.1)),
            pct(sum.known_10s),
        );
    }
    let mut worst: Vec<&Score> = scores.iter().filter(|s| s.scored > 0).collect();
    worst.sort_by(|a, b| b.median_error.total_cmp(&a.median_error));
    let _ = writeln!(
        out,
        "\n| seed | median error | inside | waits past range | scored / waited | crowd |\n|---|---|---|---|---|---|"
    );
    for w in worst.iter().take(10) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} / {} | {} |",
            w.seed,
            pct(w.median_error),
            pct(w.inside),
            pct(w.short_range),
            w.scored,
            w.visitors,
            w.describe
        );
    }
    out
}

#[cfg(test)]
mod tests;
