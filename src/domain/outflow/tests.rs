use super::*;
use crate::config::{OutflowConfig, OutflowMode};

fn cfg() -> OutflowConfig {
    OutflowConfig {
        mode: OutflowMode::Adaptive,
        min_capacity: 10,
        max_capacity: 410,
        target_p95_ms: 200,
        max_error_rate: 0.02,
        interval_secs: 5,
        health_secret: None,
    }
}

fn sig(p95: f64, err: f64) -> Signals {
    Signals {
        answers: 500,
        errors: (err * 500.0) as u64,
        p95_ms: Some(p95),
        error_rate: Some(err),
    }
}

fn full(capacity: u64) -> Load {
    Load {
        capacity,
        live: capacity,
        waiting: 1000,
        raised_by: 0,
        prev_p95: None,
        overload_at: None,
    }
}

#[test]
fn just_under_the_raise_threshold_it_adds_a_step_each_interval_up_to_the_maximum() {
    assert_eq!(step(&cfg()), 10);
    // 168 ms against a threshold of 0.85 × 200 = 170: almost no headroom, one step.
    let mut cap = 380;
    let mut seen = Vec::new();
    for _ in 0..5 {
        cap = decide(&cfg(), full(cap), &sig(168.0, 0.0)).capacity(cap);
        seen.push(cap);
    }
    assert_eq!(seen, [390, 400, 410, 410, 410]);
    assert_eq!(
        decide(&cfg(), full(410), &sig(50.0, 0.0)),
        Decision::Hold(Hold::AtBound)
    );
}

#[test]
fn far_under_the_target_the_raise_grows_with_the_headroom_up_to_doubling() {
    let c = cfg();
    // A p95 of 0: all headroom, twice the capacity.
    assert_eq!(raise_to(&c, 40, Some(0.0), None), 80);
    // Half the threshold (85 of 170): half the headroom, × 1.5.
    assert_eq!(raise_to(&c, 40, Some(85.0), None), 60);
    // Near the threshold the step is more than the proportional raise.
    assert_eq!(raise_to(&c, 40, Some(160.0), None), 50);
    // Never past the maximum, and without a p95 (errors only reported) one step.
    assert_eq!(raise_to(&c, 300, Some(0.0), None), 410);
    assert_eq!(raise_to(&c, 40, None, None), 50);
    // The decision uses it.
    assert_eq!(
        decide(&c, full(40), &sig(85.0, 0.0)),
        Decision::Raise { to: 60 }
    );
}

/// Against a model origin whose p95 doubles with every 5 requests in flight, a start at
/// a third of its limit reaches the hold band within eight intervals, a raise every
/// other one (the wait after each); the additive step alone would take eleven raises.
#[test]
fn a_low_start_climbs_to_the_origins_limit_in_a_few_intervals() {
    let c = OutflowConfig {
        min_capacity: 5,
        max_capacity: 200,
        target_p95_ms: 250,
        ..cfg()
    };
    // 20 ms alone, doubling per 5 in flight; about a fifth of the sessions in flight.
    let p95 = |cap: u64| 20.0 * 2f64.powf(cap as f64 / 5.0 / 5.0);
    let mut cap = 30;
    let mut intervals = 0;
    let mut raised_by = 0;
    let mut prev_p95 = None;
    while p95(cap) <= 250.0 * RAISE_BELOW {
        let load = Load {
            raised_by,
            prev_p95,
            ..full(cap)
        };
        let d = decide(&c, load, &sig(p95(cap), 0.0));
        raised_by = d.capacity(cap) - cap;
        prev_p95 = Some(p95(cap));
        cap = d.capacity(cap);
        intervals += 1;
        assert!(intervals <= 8, "still at {cap} after {intervals} intervals");
    }
    // In the hold band or just over it: never past the point where p95 is 1.2 × target.
    assert!(p95(cap) <= 250.0 * 1.2, "{cap}: {}", p95(cap));
}

/// The previous interval over the target too: the p95 just over it is confirmed.
fn confirmed(capacity: u64) -> Load {
    Load {
        prev_p95: Some(1000.0),
        ..full(capacity)
    }
}

#[test]
fn a_slow_origin_lowers_the_capacity_by_target_over_p95_within_bounds() {
    // p95 250 against 200 (confirmed by the interval before): factor 0.8.
    assert_eq!(
        decide(&cfg(), confirmed(100), &sig(250.0, 0.0)),
        Decision::Lower {
            to: 80,
            cause: Cause::Latency
        }
    );
    // Over twice the target: 0.5 (not 0.8).
    assert_eq!(
        decide(&cfg(), full(100), &sig(450.0, 0.0)).capacity(100),
        50
    );
    // Ten times: still 0.5 at most.
    assert_eq!(
        decide(&cfg(), full(100), &sig(2000.0, 0.0)).capacity(100),
        50
    );
    // Never below the minimum, and holding there.
    assert_eq!(decide(&cfg(), full(12), &sig(2000.0, 0.0)).capacity(12), 10);
    assert_eq!(
        decide(&cfg(), full(10), &sig(2000.0, 0.0)),
        Decision::Hold(Hold::AtBound)
    );
}

/// One interval just over the target is not enough: the next must agree, and the lower
/// is by the milder of the two; far over the target (a deploy gone wrong) lowers at once.
#[test]
fn a_p95_just_over_the_target_lowers_only_when_the_next_interval_agrees() {
    assert_eq!(
        decide(&cfg(), full(100), &sig(260.0, 0.0)),
        Decision::Hold(Hold::Unconfirmed)
    );
    // The interval before under the target: still one reading.
    let quiet_before = Load {
        prev_p95: Some(150.0),
        ..full(100)
    };
    assert_eq!(
        decide(&cfg(), quiet_before, &sig(260.0, 0.0)),
        Decision::Hold(Hold::Unconfirmed)
    );
    // Two over: lowered by the milder (220 → 200/220, kept at 0.8 at most).
    let slow_before = Load {
        prev_p95: Some(220.0),
        ..full(100)
    };
    assert_eq!(
        decide(&cfg(), slow_before, &sig(290.0, 0.0)),
        Decision::Lower {
            to: 80,
            cause: Cause::Latency
        }
    );
    // Over 2 × the target needs no second interval; 1.9 × does.
    assert_eq!(
        decide(&cfg(), full(100), &sig(410.0, 0.0)),
        Decision::Lower {
            to: 50,
            cause: Cause::Latency
        }
    );
    assert_eq!(
        decide(&cfg(), full(100), &sig(380.0, 0.0)),
        Decision::Hold(Hold::Unconfirmed)
    );
}

/// A lower sends nobody out: until the sessions of the higher capacity end, the interval
/// measures them, and lowering again on it would count them twice.
#[test]
fn while_more_sessions_are_live_than_the_capacity_it_does_not_lower_again() {
    let draining = Load {
        live: 130,
        ..full(100)
    };
    assert_eq!(
        decide(&cfg(), draining, &sig(450.0, 0.0)),
        Decision::Hold(Hold::Draining)
    );
    assert_eq!(
        decide(&cfg(), draining, &sig(50.0, 0.3)),
        Decision::Hold(Hold::Draining)
    );
    // Once they are down to the capacity, it lowers.
    assert_eq!(
        decide(&cfg(), full(100), &sig(450.0, 0.0)).capacity(100),
        50
    );
}

#[test]
fn errors_over_the_limit_lower_by_the_share_that_succeeded_even_when_fast() {
    // 5 % errors: at least a fifth off.
    assert_eq!(
        decide(&cfg(), full(100), &sig(20.0, 0.05)),
        Decision::Lower {
            to: 80,
            cause: Cause::Errors
        }
    );
    // 35 % errors: × 0.65; everything failing: halved.
    assert_eq!(
        decide(&cfg(), full(100), &sig(20.0, 0.35)).capacity(100),
        65
    );
    assert_eq!(decide(&cfg(), full(100), &sig(20.0, 1.0)).capacity(100), 50);
    // Slow and failing: the larger cut.
    assert_eq!(
        decide(&cfg(), full(100), &sig(450.0, 0.05)),
        Decision::Lower {
            to: 50,
            cause: Cause::Latency
        }
    );
    // At the limit is not over it.
    assert!(matches!(
        decide(&cfg(), full(100), &sig(20.0, 0.02)),
        Decision::Raise { .. }
    ));
}

#[test]
fn it_holds_near_the_target_without_people_waiting_or_with_capacity_unused() {
    assert_eq!(
        decide(&cfg(), full(100), &sig(190.0, 0.0)),
        Decision::Hold(Hold::NearTarget)
    );
    let nobody = Load {
        waiting: 0,
        ..full(100)
    };
    assert_eq!(
        decide(&cfg(), nobody, &sig(50.0, 0.0)),
        Decision::Hold(Hold::NotNeeded)
    );
    let unused = Load {
        live: 60,
        ..full(100)
    };
    assert_eq!(
        decide(&cfg(), unused, &sig(50.0, 0.0)),
        Decision::Hold(Hold::NotNeeded)
    );
}

#[test]
fn without_a_signal_it_holds_and_never_raises_blindly() {
    assert_eq!(
        decide(&cfg(), full(100), &Signals::default()),
        Decision::Hold(Hold::NoSignal)
    );
    // 19 answers are too few to judge.
    let few = Signals::merge([&Report {
        answers: 19,
        latency: hist(&[(10.0, 19)]),
        ..Report::default()
    }]);
    assert_eq!(few.p95_ms, None);
    assert_eq!(
        decide(&cfg(), full(100), &few),
        Decision::Hold(Hold::NoSignal)
    );
}

#[test]
fn a_capacity_outside_the_bounds_is_brought_inside() {
    assert_eq!(
        decide(&cfg(), full(5000), &Signals::default()),
        Decision::Lower {
            to: 410,
            cause: Cause::Bounds
        }
    );
    assert_eq!(
        decide(&cfg(), full(1), &Signals::default()),
        Decision::Raise { to: 10 }
    );
    // Over target and over the maximum: lowered from the maximum.
    assert_eq!(
        decide(&cfg(), full(5000), &sig(450.0, 0.0)).capacity(5000),
        205
    );
}

fn hist(points: &[(f64, u64)]) -> Histogram {
    let mut h = Histogram::default();
    for &(ms, n) in points {
        for _ in 0..n {
            h.record(ms);
        }
    }
    h
}

#[test]
fn gateways_merge_into_one_p95_and_a_worse_health_report_wins() {
    let a = Report {
        answers: 95,
        errors: 0,
        latency: hist(&[(20.0, 95)]),
        ..Report::default()
    };
    let b = Report {
        answers: 5,
        errors: 3,
        latency: hist(&[(900.0, 2)]),
        ..Report::default()
    };
    let s = Signals::merge([&a, &b]);
    assert_eq!((s.answers, s.errors), (100, 3));
    assert!((s.error_rate.unwrap() - 0.03).abs() < 1e-9);
    let p = s.p95_ms.unwrap();
    assert!((19.0..22.0).contains(&p), "{p}");
    let report = Report {
        p95_ms: Some(450.0),
        error_rate: Some(0.001),
        ..Report::default()
    };
    let s = Signals::merge([&a, &b, &report]);
    assert_eq!(s.p95_ms, Some(450.0));
    assert!((s.error_rate.unwrap() - 0.03).abs() < 1e-9);
    // A report alone is a signal.
    let s = Signals::merge([&report]);
    assert_eq!((s.p95_ms, s.error_rate), (Some(450.0), Some(0.001)));
}

/// Signals recorded from a sale through the gateway (bench/outflow, docs/outflow.md):
/// p95 and error share per 5 s interval while the capacity moved; each row is what the
/// controller saw and what it must decide.
#[test]
fn a_recorded_sale_with_a_slowdown_and_recovery() {
    // (p95 ms, error share, live, waiting, expected capacity after)
    let rows: &[(f64, f64, u64, u64, u64)] = &[
        (40.0, 0.0, 100, 900, 176), // healthy, full, people waiting: × (2 − 40/170)
        (55.0, 0.0, 176, 880, 295), // again, a little less headroom
        (120.0, 0.0, 295, 860, 381), // still under 0.85 × 200
        (175.0, 0.0, 381, 840, 381), // near the target: hold
        (230.0, 0.0, 381, 845, 381), // just over, once: noise until the next agrees
        (610.0, 0.0, 381, 850, 190), // the deploy gone wrong: 200/610 → 0.5 at once
        (320.0, 0.0, 375, 870, 190), // still over, but the old sessions are still live
        (260.0, 0.0, 190, 880, 146), // down to the capacity, over twice: × 200/260
        (180.0, 0.0, 146, 900, 146), // under the target; the interval before was not
        (90.0, 0.0, 146, 905, 146), // recovered, but the interval before is near it
        (100.0, 0.0, 146, 900, 206), // two quiet intervals: × (2 − 100/170)
        (160.0, 0.0, 206, 900, 218), // near the threshold: a little more than the step
        (95.0, 0.2, 218, 890, 174), // 20 % errors: × 0.8
    ];
    let mut cap = 100;
    let mut prev_p95 = None;
    for (i, &(p95, err, live, waiting, want)) in rows.iter().enumerate() {
        // No wait after a raise here (it has its own test).
        let load = Load {
            capacity: cap,
            live,
            waiting,
            raised_by: 0,
            prev_p95,
            overload_at: None,
        };
        cap = decide(&cfg(), load, &sig(p95, err)).capacity(cap);
        prev_p95 = Some(p95);
        assert_eq!(cap, want, "interval {i}: p95 {p95}, errors {err}");
    }
}

/// A closed loop against a model origin whose latency grows with the sessions in, and
/// that slows down threefold in the middle of the sale: the capacity follows it down
/// within two intervals and back up after.
#[test]
fn the_capacity_follows_a_slowdown_down_within_two_intervals_and_back_up() {
    let c = OutflowConfig {
        min_capacity: 5,
        max_capacity: 205,
        ..cfg()
    };
    // p95 = 20 ms + slowness × 1 ms per session in.
    let p95 = |sessions: u64, slow: f64| 20.0 + slow * sessions as f64;
    let mut cap = 50;
    let mut trace = Vec::new();
    let (mut raised_by, mut prev_p95) = (0, None);
    for i in 0..120 {
        let slow = if (60..80).contains(&i) { 3.0 } else { 1.0 };
        let s = sig(p95(cap, slow), 0.0);
        let load = Load {
            raised_by,
            prev_p95,
            ..full(cap)
        };
        let after = decide(&c, load, &s).capacity(cap);
        raised_by = after.saturating_sub(cap);
        prev_p95 = s.p95_ms;
        cap = after;
        trace.push((i, cap, s.p95_ms.unwrap()));
    }
    let before = trace[59].1;
    // Healthy: 180 sessions give 200 ms; it settles where the model is under target.
    assert!((140..=180).contains(&before), "{trace:?}");
    // The slowdown starts at 60: under 200/3 ≈ 60 sessions within two intervals.
    assert!(trace[61].1 <= 66, "{:?}", &trace[58..64]);
    // Within the slowdown the origin's p95 is back under target after those two.
    for &(i, _, p) in &trace[63..80] {
        assert!(p <= 200.0 * 1.2, "interval {i}: {p}");
    }
    // And it climbs back after the recovery.
    assert!(trace[119].1 >= before - 10, "{:?}", &trace[80..]);
}

/// The interval that ends with a raise measured the origin under the old capacity: the
/// next decision waits (holds) instead of raising on it, but lowers at once if the origin
/// is over its target.
#[test]
fn after_a_raise_it_waits_one_interval_before_raising_again_but_never_before_lowering() {
    let settling = Load {
        raised_by: 60,
        ..full(100)
    };
    assert_eq!(
        decide(&cfg(), settling, &sig(50.0, 0.0)),
        Decision::Hold(Hold::Settling)
    );
    assert_eq!(
        decide(&cfg(), settling, &sig(450.0, 0.0)),
        Decision::Lower {
            to: 50,
            cause: Cause::Latency
        }
    );
    assert_eq!(
        decide(&cfg(), settling, &sig(50.0, 0.05)),
        Decision::Lower {
            to: 80,
            cause: Cause::Errors
        }
    );
    // A raise by the step alone needs no wait: its overshoot is one step.
    let stepped = Load {
        raised_by: step(&cfg()),
        ..full(100)
    };
    assert!(matches!(
        decide(&cfg(), stepped, &sig(50.0, 0.0)),
        Decision::Raise { .. }
    ));
    // The interval after the wait raises again.
    assert!(matches!(
        decide(&cfg(), full(100), &sig(50.0, 0.0)),
        Decision::Raise { .. }
    ));
}

/// Once the origin was overloaded at some capacity, fast raises stop at 90 % of it and
/// the step takes over from there (TCP's ssthresh).
#[test]
fn after_an_overload_fast_raises_stop_below_it_and_the_step_goes_on() {
    let c = cfg();
    // All headroom would double 40; overloaded at 60 before: 54 at most.
    assert_eq!(raise_to(&c, 40, Some(0.0), Some(60)), 54);
    // At or past 54 only the step.
    assert_eq!(raise_to(&c, 54, Some(0.0), Some(60)), 64);
    let load = Load {
        overload_at: Some(60),
        ..full(40)
    };
    assert_eq!(decide(&c, load, &sig(0.0, 0.0)), Decision::Raise { to: 54 });
}
