//! Drawn crowds for `anteroom-loadtest eta`: crowds of the ETA simulator's generator
//! (`anteroom::domain::eta_sim::scenario`), picked by seed, played in real time against two
//! Anteroom instances on one Redis, and the same crowd played by the simulator; both are
//! scored by the simulator's own rules ([`eta_sim::score_seen`]) and set side by side,
//! visitor by visitor.
//!
//! The mapping ([`plan_of`]) keeps everything the generator draws: the room (capacity,
//! TTL, rate cap, stock, heartbeat timeout), each visitor's join time, stay, whether they
//! hold their slot to the TTL, when they go silent, and the admin changes (capacity,
//! pause, resume, stock top-up) at their times. Two things change, both in the crowd the
//! simulator plays too, so the two play the same crowd: the TTL is rounded to whole
//! seconds (a room's TTL is set in seconds), and a stay at least the TTL is a hold. What
//! the runner cannot do is play a crowd faster than real time: a seed whose crowd would
//! take longer than [`MAX_DRAIN_MS`] to drain in the simulator, or that has more than
//! [`MAX_VISITORS`] visitors, is skipped with the reason.
//!
//! How the real visitors act: each joins at its time on one of the two instances
//! (alternately), polls its status once a second until it is let in, stops polling for
//! good at its silent moment, and releases at the server's admission time plus its stay
//! (or at once, if it learnt of its admission later than that): so a release is not late
//! by the polling delay, as it is in the nine crowds.

use std::time::{Duration, Instant};

use anteroom::domain::eta::Eta;
use anteroom::domain::eta_sim::{self, scenario::Admin, scenario::Scenario, scenario::Size};
use anteroom::room::RoomConfig;

use super::{apply, call, now_ms, runner_client, runner_settings, seen_of, Record, Stay};

/// The seeds run when none are given: crowds among the first 300 seeds that fit real time
/// ([`plan_of`]; `fitting_seeds` lists them) where 24 or more visitors wait, picked for
/// their variety: 1-70 slots; uniform, exponential and log-normal stays; holders; silent
/// abandonment; stock and a top-up; a rate cap; a capacity cut and a pause.
pub const DEFAULT_SEEDS: &[u64] = &[2, 12, 15, 45, 97, 111, 123];
/// The longest a drawn crowd may take to let its last visitor in (in the simulator).
pub const MAX_DRAIN_MS: u64 = 75_000;
/// The most visitors a drawn crowd may have (two cores poll for all of them).
pub const MAX_VISITORS: usize = 400;
/// How long the runner waits past the simulator's last admission before it gives up.
const GRACE: Duration = Duration::from_secs(40);

/// One visitor of a drawn crowd.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Part {
    pub join_at: Duration,
    pub stay: Stay,
    /// When they stop polling for good (close the tab), if they do.
    pub silent_at: Option<Duration>,
}

/// A drawn crowd as the runner plays it.
#[derive(Clone, Debug)]
pub(super) struct DrawnPlan {
    /// The crowd both play (the generator's, TTL in whole seconds).
    pub scenario: Scenario,
    pub room: RoomConfig,
    pub parts: Vec<Part>,
    pub actions: Vec<(Duration, Admin)>,
    pub deadline: Duration,
}

/// The crowd of `seed` as both play it: the generator's (test sizes), with the TTL
/// rounded to whole seconds.
pub fn crowd(seed: u64) -> Scenario {
    let mut sc = Scenario::generate(seed, Size::TEST);
    sc.ttl_ms = (sc.ttl_ms.div_ceil(1000) * 1000).max(1000);
    sc
}

fn ms(d: u64) -> Duration {
    Duration::from_millis(d)
}

/// The runner's plan for `sc`, or why it cannot play it in real time.
pub(super) fn plan_of(sc: &Scenario) -> Result<DrawnPlan, String> {
    if !sc.ttl_ms.is_multiple_of(1000) || !sc.heartbeat_ms.is_multiple_of(1000) {
        return Err("TTL or heartbeat timeout not in whole seconds".into());
    }
    if sc.visitors.len() > MAX_VISITORS {
        return Err(format!(
            "{} visitors (at most {MAX_VISITORS})",
            sc.visitors.len()
        ));
    }
    let seen = eta_sim::play(sc);
    let drain = seen.iter().filter_map(|s| s.admitted_at).max().unwrap_or(0);
    let last_admin = sc.admin.iter().map(|a| a.0).max().unwrap_or(0);
    if drain.max(last_admin) > MAX_DRAIN_MS {
        return Err(format!(
            "drains in {} s in the simulator (at most {} s in real time)",
            drain.max(last_admin) / 1000,
            MAX_DRAIN_MS / 1000
        ));
    }
    let parts = sc
        .visitors
        .iter()
        .map(|v| Part {
            join_at: ms(v.join_ms),
            stay: if v.stay_ms >= sc.ttl_ms {
                Stay::Hold
            } else {
                Stay::Release(ms(v.stay_ms))
            },
            silent_at: v.silent_at.map(ms),
        })
        .collect();
    let room = RoomConfig {
        id: format!("eta-seed-{}", sc.seed),
        capacity: sc.capacity,
        session_ttl_secs: sc.ttl_ms / 1000,
        heartbeat_timeout_secs: sc.heartbeat_ms / 1000,
        max_admissions_per_minute: sc.rate_cap,
        stock: sc.stock,
        target_url: "http://127.0.0.1:9/".into(),
        ..RoomConfig::default()
    };
    Ok(DrawnPlan {
        scenario: sc.clone(),
        room,
        parts,
        actions: sc.admin.iter().map(|&(at, a)| (ms(at), a)).collect(),
        deadline: ms(drain) + GRACE,
    })
}

/// One real visitor of a drawn crowd (see the module text).
async fn visitor(
    client: reqwest::Client,
    base: String,
    room: String,
    part: Part,
    start: Instant,
    deadline: Instant,
) -> Record {
    tokio::time::sleep_until((start + part.join_at).into()).await;
    let silent = part.silent_at.map(|s| start + s);
    let mut rec = Record::default();
    let url = |p: &str| format!("{base}/api/rooms/{room}/{p}");
    rec.join_ms = now_ms();
    let Some(v) = call(client.post(url("join"))).await else {
        return rec;
    };
    let token = v["visitor_token"].as_str().unwrap_or_default().to_string();
    let mut admitted = v["admitted_at"].as_u64();
    rec.walked_in = admitted.is_some();
    rec.at_join = seen_of(&v);
    let mut next = Instant::now() + Duration::from_secs(1);
    while admitted.is_none() && next < deadline && silent.is_none_or(|s| next < s) {
        tokio::time::sleep_until(next.into()).await;
        next += Duration::from_secs(1);
        let Some(v) = call(client.get(url("status")).bearer_auth(&token)).await else {
            continue;
        };
        admitted = v["admitted_at"].as_u64();
        if let Some(s) = seen_of(&v) {
            rec.seen.push(s);
        }
    }
    rec.admitted_ms = admitted;
    if let (Some(at), Stay::Release(d)) = (admitted, part.stay) {
        let wait = (at + d.as_millis() as u64).saturating_sub(now_ms());
        let release = Instant::now() + Duration::from_millis(wait);
        // Past the deadline nobody waits for the slot any more: the run ends.
        if release < deadline {
            tokio::time::sleep_until(release.into()).await;
            let _ = client.post(url("release")).bearer_auth(&token).send().await;
        }
    }
    rec
}

/// What a real visitor saw, on the crowd's clock (ms since `start_ms`), as the simulator
/// records it: the first known estimate, and when an admin change came after it and before
/// the visitor's turn, the first known one after the last such change.
pub(super) fn as_seen(rec: &Record, start_ms: u64, admin: &[(u64, Admin)]) -> eta_sim::Seen {
    let t = |ms: u64| ms.saturating_sub(start_ms);
    let known: Vec<(u64, Eta, u64)> = rec
        .at_join
        .iter()
        .chain(&rec.seen)
        .filter(|s| s.known)
        .map(|s| {
            let e = Eta {
                seconds: s.eta,
                low: s.low,
                high: s.high,
                known: true,
            };
            (t(s.at_ms), e, s.position)
        })
        .collect();
    // Let in by the join itself: the server's admission time is a few ms after the moment
    // the runner took as the join, but nobody waited (the simulator's `admitted == joined`).
    let admitted_at = if rec.walked_in {
        Some(t(rec.join_ms))
    } else {
        rec.admitted_ms.map(t)
    };
    let first = known.first().copied();
    // The simulator asks again after a change at `a` those shown a known estimate before
    // `a` and still in line at `a`.
    let last_change = first.and_then(|(at, _, _)| {
        admin
            .iter()
            .map(|c| c.0)
            .filter(|&a| at < a && admitted_at.is_none_or(|adm| a <= adm))
            .max()
    });
    let after_change =
        last_change.and_then(|a| known.iter().find(|k| k.0 >= a).map(|&(at, e, _)| (at, e)));
    eta_sim::Seen {
        joined: t(rec.join_ms),
        first_known: first.map(|(at, e, _)| (at, e)),
        place: first.map_or(0, |f| f.2),
        rebased: last_change.is_some(),
        after_change,
        admitted_at,
    }
}

/// The per-visitor comparison of one crowd: over the visitors who waited in both runs
/// and were shown a known estimate in both, the median of |real − simulated| of the first
/// known estimate (÷ max(simulated, 10 s)), the same over those of them shown it at the
/// same poll (within 0.5 s: the same remaining wait), and over every visitor who waited
/// in both, the median |real − simulated| of the admission (ms).
#[derive(Debug, Default, PartialEq)]
pub(super) struct Agreement {
    pub both_known: usize,
    pub estimate: Option<f64>,
    pub same_poll: usize,
    pub estimate_same_poll: Option<f64>,
    pub admitted_ms: Option<u64>,
}

/// How far apart two first known estimates may be shown and count as the same poll.
const SAME_POLL_MS: u64 = 500;

pub(super) fn agreement(sc: &Scenario, real: &[eta_sim::Seen], sim: &[eta_sim::Seen]) -> Agreement {
    let (mut est, mut same, mut adm) = (Vec::new(), Vec::new(), Vec::new());
    for ((r, s), v) in real.iter().zip(sim).zip(&sc.visitors) {
        let (Some(ra), Some(sa)) = (r.admitted_at, s.admitted_at) else {
            continue;
        };
        // Let in at once, or gone before their turn, in either run: no wait to compare.
        let gone = |a: u64| v.silent_at.is_some_and(|q| q <= a);
        if ra <= r.joined || sa <= s.joined || gone(ra) || gone(sa) {
            continue;
        }
        adm.push(ra.abs_diff(sa));
        let (Some((rt, re)), Some((st, se))) = (r.first_known, s.first_known) else {
            continue;
        };
        let d = re.seconds.abs_diff(se.seconds) as f64 / se.seconds.max(10) as f64;
        est.push(d);
        if rt.abs_diff(st) <= SAME_POLL_MS {
            same.push(d);
        }
    }
    let med_f = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) / 2).copied()
    };
    adm.sort_unstable();
    Agreement {
        both_known: est.len(),
        estimate: med_f(&mut est),
        same_poll: same.len(),
        estimate_same_poll: med_f(&mut same),
        admitted_ms: adm.get(adm.len().saturating_sub(1) / 2).copied(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// `scored / waited: error, inside, known within 10 s`, the way the generated crowds'
/// report counts them.
fn figures(s: &eta_sim::Score) -> String {
    if s.visitors == 0 {
        return "nobody waited".into();
    }
    let known = pct(s.known_10s as f64 / s.visitors as f64);
    if s.scored == 0 {
        return format!("0 / {}: –, –, {known}", s.visitors);
    }
    format!(
        "{} / {}: {}, {}, {known}",
        s.scored,
        s.visitors,
        pct(s.median_error),
        pct(s.inside)
    )
}

/// Plays the crowds of `seeds` at once on two instances sharing a fresh Redis, and the
/// same crowds in the simulator; returns the Markdown table.
pub async fn run(seeds: &[u64]) -> Result<String, String> {
    let mut plans = Vec::new();
    let mut out = String::new();
    for &seed in seeds {
        let sc = crowd(seed);
        match plan_of(&sc) {
            Ok(p) => plans.push(p),
            Err(why) => out.push_str(&format!("seed {seed} skipped: {why}\n")),
        }
    }
    if plans.is_empty() {
        return Ok(out);
    }
    let redis = anteroom_testkit::RedisServer::start();
    let settings = runner_settings(
        redis.url(),
        "eta-drawn",
        plans.iter().map(|p| p.room.clone()).collect(),
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let (mut bases, mut servers, mut engine) = (Vec::new(), Vec::new(), None);
    for _ in 0..2 {
        let app = anteroom::startup::Application::build(settings.clone())
            .await
            .map_err(|e| format!("start: {e}"))?;
        bases.push(format!("http://127.0.0.1:{}", app.port()));
        engine.get_or_insert_with(|| app.engine());
        servers.push(tokio::spawn(app.run_until_stopped(stop.clone())));
    }
    // unwrap: set in the loop's first round.
    let engine = engine.unwrap();
    let client = runner_client()?;
    let start = Instant::now() + Duration::from_millis(500);
    let start_ms = now_ms() + 500;
    let mut tasks = Vec::new();
    for p in &plans {
        let deadline = start + p.deadline;
        let visitors: Vec<_> = p
            .parts
            .iter()
            .enumerate()
            .map(|(i, part)| {
                tokio::spawn(visitor(
                    client.clone(),
                    bases[i % 2].clone(),
                    p.room.id.clone(),
                    part.clone(),
                    start,
                    deadline,
                ))
            })
            .collect();
        for &(at, action) in &p.actions {
            let engine = engine.clone();
            let id = p.room.id.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until((start + at).into()).await;
                apply(&engine, &id, action).await;
            });
        }
        tasks.push(visitors);
    }
    out.push_str(
        "| seed | crowd | real: scored / waited: median error, inside, known ≤ 10 s | simulator: the same | first known estimate, median \\|real − sim\\| ÷ max(sim, 10 s) (visitors known in both) | the same, shown at the same poll (visitors) | admission, median \\|real − sim\\| |\n|---|---|---|---|---|---|---|\n",
    );
    for (p, visitors) in plans.iter().zip(tasks) {
        let mut records = Vec::new();
        for v in visitors {
            // A visitor task that panicked counts as one that never joined.
            records.push(v.await.unwrap_or_default());
        }
        let sc = &p.scenario;
        let real: Vec<eta_sim::Seen> = records
            .iter()
            .map(|r| as_seen(r, start_ms, &sc.admin))
            .collect();
        let sim = eta_sim::play(sc);
        let (rs, ss) = (
            eta_sim::score_seen(sc, &real),
            eta_sim::score_seen(sc, &sim),
        );
        let a = agreement(sc, &real, &sim);
        if let Ok(dir) = std::env::var("ETA_TRACE") {
            // Per visitor: the real run's view beside the simulator's.
            let lines: Vec<String> = real
                .iter()
                .zip(&sim)
                .enumerate()
                .map(|(i, (r, s))| format!("{i} real {r:?}\n{i} sim  {s:?}"))
                .collect();
            let _ = std::fs::write(format!("{dir}/{}.txt", p.room.id), lines.join("\n"));
        }
        let share = |x: Option<f64>, n: usize| format!("{} ({n})", x.map_or("–".into(), pct));
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            sc.seed,
            sc.describe(),
            figures(&rs),
            figures(&ss),
            share(a.estimate, a.both_known),
            share(a.estimate_same_poll, a.same_poll),
            a.admitted_ms
                .map_or("–".into(), |ms| format!("{:.2} s", ms as f64 / 1e3)),
        ));
        eprintln!("done: seed {}", sc.seed);
    }
    stop.cancel();
    for s in servers {
        let _ = s.await;
    }
    drop(redis);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use anteroom::domain::eta_sim::scenario::Visitor;

    /// A small crowd of every kind of visitor the generator draws.
    fn small() -> Scenario {
        let mut sc = crowd(2);
        sc.capacity = 2;
        sc.ttl_ms = 20_000;
        sc.rate_cap = 30;
        sc.stock = Some(9);
        sc.admin = vec![(3_000, Admin::Pause), (5_000, Admin::Resume)];
        sc.visitors = vec![
            Visitor {
                join_ms: 0,
                stay_ms: 2_500,
                silent_at: None,
            },
            Visitor {
                join_ms: 100,
                stay_ms: u64::MAX,
                silent_at: None,
            },
            Visitor {
                join_ms: 200,
                stay_ms: 20_000,
                silent_at: None,
            },
            Visitor {
                join_ms: 300,
                stay_ms: 1_000,
                silent_at: Some(4_300),
            },
        ];
        sc
    }

    #[test]
    fn a_drawn_crowd_maps_to_the_runners_plan_visitor_by_visitor() {
        let sc = small();
        let p = plan_of(&sc).unwrap();
        assert_eq!(p.room.id, format!("eta-seed-{}", sc.seed));
        assert_eq!(
            (
                p.room.capacity,
                p.room.session_ttl_secs,
                p.room.heartbeat_timeout_secs
            ),
            (2, 20, 30)
        );
        assert_eq!(
            (p.room.max_admissions_per_minute, p.room.stock),
            (30, Some(9))
        );
        assert_eq!(
            p.parts,
            vec![
                Part {
                    join_at: ms(0),
                    stay: Stay::Release(ms(2_500)),
                    silent_at: None
                },
                Part {
                    join_at: ms(100),
                    stay: Stay::Hold,
                    silent_at: None
                },
                // A stay of the whole TTL is a hold: the session expires.
                Part {
                    join_at: ms(200),
                    stay: Stay::Hold,
                    silent_at: None
                },
                Part {
                    join_at: ms(300),
                    stay: Stay::Release(ms(1_000)),
                    silent_at: Some(ms(4_300))
                },
            ]
        );
        assert_eq!(
            p.actions,
            vec![(ms(3_000), Admin::Pause), (ms(5_000), Admin::Resume)]
        );
        // The simulator's last admission plus the grace.
        let drain = eta_sim::play(&sc)
            .iter()
            .filter_map(|s| s.admitted_at)
            .max();
        assert_eq!(p.deadline, ms(drain.unwrap()) + GRACE);
    }

    #[test]
    fn crowds_that_do_not_fit_real_time_are_refused_with_the_reason() {
        let mut sc = small();
        sc.ttl_ms = 20_500;
        assert!(plan_of(&sc).unwrap_err().contains("whole seconds"));
        let mut sc = small();
        sc.visitors = (0..=MAX_VISITORS as u64)
            .map(|i| Visitor {
                join_ms: i,
                stay_ms: 1_000,
                silent_at: None,
            })
            .collect();
        assert!(plan_of(&sc).unwrap_err().contains("visitors"));
        let mut sc = small();
        sc.rate_cap = 1;
        let err = plan_of(&sc).unwrap_err();
        assert!(err.contains("drains in"), "{err}");
    }

    #[test]
    fn the_default_seeds_fit_real_time() {
        for &seed in DEFAULT_SEEDS {
            let sc = crowd(seed);
            assert!(sc.ttl_ms.is_multiple_of(1000));
            let p = plan_of(&sc).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert!(p.deadline <= ms(MAX_DRAIN_MS) + GRACE);
        }
    }

    fn seen(at_ms: u64, eta: u64, known: bool) -> super::super::Seen {
        super::super::Seen {
            at_ms,
            eta,
            low: eta / 2,
            high: eta * 2,
            known,
            reason: None,
            position: 3,
        }
    }

    #[test]
    fn a_real_record_reads_as_the_simulator_records_it() {
        let rec = Record {
            join_ms: 1_000 + 2_000,
            at_join: Some(seen(3_000, 60, false)),
            seen: vec![seen(4_000, 40, true), seen(9_000, 30, true)],
            admitted_ms: Some(1_000 + 30_000),
            ..Record::default()
        };
        // No admin change: the first known estimate is judged.
        let s = as_seen(&rec, 1_000, &[]);
        assert_eq!(s.joined, 2_000);
        assert_eq!(s.first_known.map(|f| (f.0, f.1.seconds)), Some((3_000, 40)));
        assert_eq!(
            (s.place, s.rebased, s.admitted_at),
            (3, false, Some(30_000))
        );
        // A pause at 5 s (after the first known estimate, before the turn): the first
        // known one after it is judged; one after the admission changes nothing.
        let s = as_seen(
            &rec,
            1_000,
            &[(5_000, Admin::Pause), (40_000, Admin::Resume)],
        );
        assert!(s.rebased);
        assert_eq!(
            s.after_change.map(|f| (f.0, f.1.seconds)),
            Some((8_000, 30))
        );
    }

    #[test]
    fn agreement_compares_the_same_visitor_in_both_runs() {
        let sc = small();
        let e = |seconds| Eta {
            seconds,
            low: 0,
            high: 0,
            known: true,
        };
        let one = |known: Option<(u64, Eta)>, adm| eta_sim::Seen {
            joined: 0,
            first_known: known,
            place: 1,
            rebased: false,
            after_change: None,
            admitted_at: adm,
        };
        let real = vec![
            one(Some((1_000, e(22))), Some(21_000)),
            one(Some((0, e(30))), Some(31_000)),
            one(None, Some(40_000)),
            one(None, None),
        ];
        let sim = vec![
            one(Some((0, e(20))), Some(20_000)),
            one(Some((0, e(30))), Some(30_000)),
            one(Some((0, e(5))), Some(41_000)),
            one(None, None),
        ];
        let a = agreement(&sc, &real, &sim);
        // 2 / 20 (shown 1 s apart) and 0 / 30 (the same poll); admitted 1 s apart each.
        assert_eq!(
            a,
            Agreement {
                both_known: 2,
                estimate: Some(0.0),
                same_poll: 1,
                estimate_same_poll: Some(0.0),
                admitted_ms: Some(1_000),
            }
        );
    }
}

/// `cargo test -p anteroom-loadtest fitting_seeds -- --ignored --nocapture`: the seeds
/// below 300 whose crowds fit real time, with the simulator's figures (how
/// [`DEFAULT_SEEDS`] were picked).
#[cfg(test)]
#[test]
#[ignore = "a list to read, not a check"]
fn fitting_seeds() {
    for seed in 0..300 {
        let sc = crowd(seed);
        if plan_of(&sc).is_ok() {
            let s = eta_sim::score(&sc);
            println!("{seed}: {} | {}", figures(&s), sc.describe());
        }
    }
}
