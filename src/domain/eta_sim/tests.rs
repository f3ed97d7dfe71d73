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
    // Measured with the unseen tail judged against the real wait at both extremes, the
    // exponential prior and the exits ahead as a draw (release build of these tests, same
    // figures in debug: the simulator is deterministic): 359 judged, 75.2 % both, 82.5 %
    // error, 79.7 % inside, 78.5 % known within 10 s, 3.8 % of waits past the range,
    // 5.0 % before it. Targets: 90 % both, worst 35 %, 90 % known within 10 s.
    assert!(s.scenarios >= 355, "{s:?}");
    assert!(s.both_ok >= 0.75, "{s:?}");
    assert!(s.error_ok >= 0.82, "{s:?}");
    assert!(s.inside_ok >= 0.79, "{s:?}");
    assert!(s.known_10s >= 0.78, "{s:?}");
    assert!(s.short_range <= 0.045, "{s:?}");
}

/// `CROWDS=150 cargo test --lib some_crowds -- --ignored --nocapture`: the report
/// over the first crowds.
#[test]
#[ignore = "a report to read, not a check: CROWDS=150 … -- --ignored --nocapture"]
fn some_crowds() {
    let n: u64 = std::env::var("CROWDS").map_or(100, |v| v.parse().unwrap());
    let t = std::time::Instant::now();
    let scores = score_all(0..n, Size::TEST);
    println!("{}", report(&scores));
    println!("{:?} in {:?}", Summary::of(&scores), t.elapsed());
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
