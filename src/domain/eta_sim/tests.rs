//! The generated-crowd test: 500 crowds with fixed seeds against the targets of
//! issue 31 (lines of at most 60 visitors: see [`Size::TEST`]).

use super::*;

#[test]
fn one_crowd_is_the_same_every_time() {
    let sc = Scenario::generate(7, Size::TEST);
    let (a, b) = (score(&sc), score(&sc));
    assert_eq!((a.scored, a.visitors), (b.scored, b.visitors));
    assert_eq!(a.median_error, b.median_error);
}

#[test]
fn a_steady_room_of_known_stays_is_estimated_within_the_targets() {
    // Ten slots, everyone stays 10 s: the schedule is exact once the first ends are in.
    let mut sc = Scenario::generate(1, Size::TEST);
    sc.capacity = 10;
    sc.ttl_ms = 60_000;
    sc.admin.clear();
    sc.rate_cap = 0;
    sc.stock = None;
    sc.visitors = (0..60)
        .map(|i| scenario::Visitor {
            join_ms: i * 200,
            stay_ms: 10_000,
            silent_at: None,
        })
        .collect();
    let s = score(&sc);
    assert!(s.scored > 30, "{s:?}");
    assert!(s.median_error <= 0.2 && s.inside >= 0.8, "{s:?}");
}

/// The 500 crowds of seeds 0–499. The targets of issue 31 do not all hold yet (see
/// BENCHMARKS.md, "Estimated wait on generated crowds"): this test prints the report and
/// holds the figures measured when the model went in, so that no change makes them
/// worse unseen.
#[test]
fn five_hundred_generated_crowds_hold_their_measured_figures() {
    let scores = score_all(0..500, Size::TEST);
    let s = Summary::of(&scores);
    println!("{}", report(&scores));
    // Measured with the beta-process curve (eta.rs, survival::BetaProcess) and the rate
    // cap's pace checked at the unseen tail's late extreme (release build of these
    // tests, same figures in debug: the simulator is deterministic): 349 judged, 81.7 %
    // both, 86.8 % error, 86.5 % inside, 76.1 % known within 10 s, 2.3 % of waits past
    // the range, 4.2 % before it. Targets: 90 % both, worst 35 %, 90 % known within 10 s.
    println!("targets (issue 31): both >= 90 %, worst <= 35 %, known within 10 s >= 90 %");
    assert!(s.scenarios >= 345, "{s:?}");
    assert!(s.both_ok >= 0.80, "{s:?}");
    assert!(s.error_ok >= 0.85, "{s:?}");
    assert!(s.inside_ok >= 0.85, "{s:?}");
    assert!(s.known_10s >= 0.75, "{s:?}");
    assert!(s.short_range <= 0.03, "{s:?}");
}

/// `CROWDS=150 cargo test --lib some_crowds -- --ignored --nocapture`: the report
/// over the first crowds (`FIRST=500`: from seed 500 on, crowds the test does not hold;
/// `DUMP=1`: one line per crowd, `SEED seed scored median_error inside known_10s
/// waited`, to compare two models crowd by crowd).
#[test]
#[ignore = "a report to read, not a check: CROWDS=150 … -- --ignored --nocapture"]
fn some_crowds() {
    let n: u64 = std::env::var("CROWDS").map_or(100, |v| v.parse().unwrap());
    let first: u64 = std::env::var("FIRST").map_or(0, |v| v.parse().unwrap());
    let t = std::time::Instant::now();
    let scores = score_all(first..first + n, Size::TEST);
    println!("{}", report(&scores));
    println!("{:?} in {:?}", Summary::of(&scores), t.elapsed());
    if std::env::var("DUMP").is_ok() {
        for s in &scores {
            println!(
                "SEED {} {} {:.4} {:.4} {} {}",
                s.seed, s.scored, s.median_error, s.inside, s.known_10s, s.visitors
            );
        }
    }
}

/// `SEED=68 cargo test --lib one_crowd_in_detail -- --ignored --nocapture`: every
/// seventh visitor of one crowd, what they were shown and when they got in.
#[test]
#[ignore = "a report to read, not a check: SEED=68 … -- --ignored --nocapture"]
fn one_crowd_in_detail() {
    let seed = std::env::var("SEED").map_or(0, |v| v.parse().unwrap());
    let sc = Scenario::generate(seed, Size::TEST);
    println!("{}", sc.describe());
    let step = std::env::var("STEP").map_or(7, |v| v.parse().unwrap());
    for (i, s) in play(&sc).iter().enumerate().step_by(step) {
        let (Some((at, e)), Some(adm)) = (s.first_known, s.admitted_at) else {
            println!(
                "{i} joined {} admitted {:?} never known",
                s.joined, s.admitted_at
            );
            continue;
        };
        println!(
            "{i} joined {:.0}s known +{:.0}s at place {}: {} ({}-{}) waited {:.1}s",
            s.joined as f64 / 1e3,
            (at - s.joined) as f64 / 1e3,
            s.place,
            e.seconds,
            e.low,
            e.high,
            adm.saturating_sub(at) as f64 / 1e3
        );
    }
    println!("{:?}", score(&sc));
}

/// `SEED=58 AT=207 cargo test --lib basis_at -- --ignored --nocapture`: the basis and
/// the schedule of one crowd at one moment (the room stepped a whole second at a time;
/// `AT_MS=32` instead of `AT`: a moment in ms).
#[test]
#[ignore = "a report to read, not a check: SEED=58 AT=207 … -- --ignored --nocapture"]
fn basis_at() {
    let seed = std::env::var("SEED").map_or(0, |v| v.parse().unwrap());
    let at: u64 = std::env::var("AT").map_or(10, |v| v.parse().unwrap());
    let sc = Scenario::generate(seed, Size::TEST);
    println!("{}", sc.describe());
    let mut room = Room::new(&sc);
    let (mut next_join, mut next_admin) = (0, 0);
    // `AT_MS`: a moment within a second (the first joins of a burst come in the first).
    let at_ms: u64 = std::env::var("AT_MS").map_or(at * 1000, |v| v.parse().unwrap());
    for t in (0..=at_ms / 1000).map(|s| s * 1000).chain([at_ms]) {
        while next_join < sc.visitors.len() && sc.visitors[next_join].join_ms <= t {
            room.join(next_join);
            next_join += 1;
        }
        while next_admin < sc.admin.len() && sc.admin[next_admin].0 <= t {
            room.apply(sc.admin[next_admin].1);
            next_admin += 1;
        }
        room.advance(t);
    }
    let b = room.basis();
    let mut ages: Vec<u64> = b.sessions.iter().map(|s| (b.now_ms - s.0) / 1000).collect();
    ages.sort_unstable();
    let mut ends: Vec<u64> = b.ends.iter().map(|e| e.1 / 1000).collect();
    ends.sort_unstable();
    println!(
        "queue {} active {} quiet {}",
        b.queue_length,
        b.active,
        b.quiet.len()
    );
    println!("live ages (s): {ages:?}");
    println!("ends (s): {ends:?}");
    let s = Schedule::compute(&b);
    println!("mean {:?}", s.mean_session_ms);
    for p in [1, 2, 5, 10, 20, 27, 40, 60] {
        println!("place {p}: {:?}", s.at(p, b.now_ms, b.admits));
    }
}

/// Two crowds of the real-time runner (`anteroom-loadtest eta`, loadtest/src/eta.rs) as
/// the runner drives them: visitors polling once a second learn of their admission at
/// their next poll, so a release comes 0-1 s later than the stay drawn. The same kinds of
/// draws as the runner's, not its very draws (its generator is shared by all nine crowds).
fn runner_crowd(
    capacity: u64,
    ttl_s: u64,
    heartbeat_s: u64,
    visitors: Vec<scenario::Visitor>,
) -> Scenario {
    Scenario {
        seed: 0,
        capacity,
        ttl_ms: ttl_s * 1000,
        heartbeat_ms: heartbeat_s * 1000,
        rate_cap: 0,
        stock: None,
        stays: scenario::Stays::Uniform,
        stay_mean_ms: 0,
        hold_share: 0.0,
        arrivals: scenario::Arrivals::Burst,
        abandon_share: 0.0,
        admin: Vec::new(),
        visitors,
    }
}

/// The runner's steady drain: 120 visitors over 6 s into 6 slots of 30 s, most leaving
/// 0.5-2.5 s after admission, a tenth keeping the whole session.
fn runners_steady_drain() -> Scenario {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(7);
    let visitors = (0..120)
        .map(|i| scenario::Visitor {
            join_ms: i * 50,
            stay_ms: if rng.gen_bool(0.1) {
                u64::MAX
            } else {
                rng.gen_range(500..2_500) + rng.gen_range(0..1_000)
            },
            silent_at: None,
        })
        .collect();
    Scenario {
        stay_mean_ms: 2_000,
        hold_share: 0.1,
        ..runner_crowd(6, 30, 10, visitors)
    }
}

/// The runner's 20 % silent abandonment: 60 visitors over 15 s into 4 slots of 20 s,
/// stays of 1-3 s, a fifth silent from their join (heartbeat timeout 5 s).
fn runners_silent_abandonment() -> Scenario {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(8);
    let visitors = (0..60)
        .map(|i| {
            let join_ms = i * 250;
            scenario::Visitor {
                join_ms,
                stay_ms: rng.gen_range(1_000..3_000) + rng.gen_range(0..1_000),
                silent_at: rng.gen_bool(0.2).then_some(join_ms),
            }
        })
        .collect();
    Scenario {
        stay_mean_ms: 2_500,
        abandon_share: 0.2,
        ..runner_crowd(4, 20, 5, visitors)
    }
}

/// Of the visitors who waited: how many were shown "not known yet" at join, and the
/// median time (ms) from join to their first known estimate (or to their admission, for
/// those never shown one: as the "known within 10 s" figure counts them).
fn unknown_at_join(sc: &Scenario) -> (usize, usize, u64) {
    let seen = play(sc);
    let mut after: Vec<f64> = Vec::new();
    let mut waited = 0;
    for (s, v) in seen.iter().zip(&sc.visitors) {
        let Some(admitted) = s.admitted_at else {
            continue;
        };
        if admitted <= s.joined || v.silent_at.is_some() {
            continue;
        }
        waited += 1;
        match s.first_known {
            Some((at, _)) if at == s.joined => {}
            Some((at, _)) => after.push((at - s.joined) as f64),
            None => after.push((admitted - s.joined) as f64),
        }
    }
    (after.len(), waited, median(&mut after) as u64)
}

/// `cargo test --lib runners_crowds -- --ignored --nocapture`: the real-time runner's
/// steady drain and silent abandonment in the simulator, with what each visitor shown a
/// known estimate was shown and waited.
#[test]
#[ignore = "a report to read, not a check: … -- --ignored --nocapture"]
fn runners_crowds_in_detail() {
    for sc in [runners_steady_drain(), runners_silent_abandonment()] {
        let (unknown, waited, after) = unknown_at_join(&sc);
        println!("{unknown} of {waited} unknown at join, known after {after} ms (median)");
        println!("{:?}", score(&sc));
    }
}

/// The real-time runner's steady drain, played by the simulator, is what the runner
/// measured (2026-11-28: 114 of 114 "not known yet" at join, known after 32 s): the
/// replica shows every visitor "not known yet" at join too (known after 25 s, median).
/// That is right for this crowd: shown anyway, the estimates at join erred 63 % (the
/// holders are not yet seen; docs/eta.md, "Limits"). What this test holds: the estimates
/// that are shown meet the targets, and the first known estimate comes no later than
/// measured (the target is 10 s; the floor moves down as the model improves).
#[test]
fn the_runners_steady_drain_is_shown_only_estimates_that_hold() {
    let sc = runners_steady_drain();
    let s = score(&sc);
    let (unknown, waited, after_ms) = unknown_at_join(&sc);
    assert_eq!(waited, 114, "{s:?}");
    assert!(s.median_error <= 0.2 && s.inside >= 0.8, "{s:?}");
    // Measured: 114 unknown, known after 25 s.
    assert!(
        after_ms <= 30_000,
        "{unknown} unknown, known after {after_ms} ms"
    );
}
