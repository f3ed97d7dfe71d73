//! Kaplan–Meier: the share of sessions still running at each age, from sessions that
//! ended (observations) and sessions still running (right-censored at their age).
//!
//! Written here rather than taken from a crate: `cargo search kaplan` could not reach the
//! registry's search from this machine (404), no survival crate is in the lock file, and
//! the ETA model needs *weighted* observations (the Bayesian bootstrap of `eta.rs`),
//! which a plain Kaplan–Meier API would not take. The estimator itself is twenty lines,
//! checked below against a textbook's worked table.
//!
//! The estimator (Kaplan & Meier 1958): with the distinct event ages `t₁ < t₂ < …`,
//! `dᵢ` sessions ending at `tᵢ` and `nᵢ` at risk just before it (still running at
//! `tᵢ`, censored ones included when their age is `≥ tᵢ`),
//! `S(t) = Π_{tᵢ ≤ t} (1 − dᵢ / nᵢ)`. Ends come before censorings at the same age (the
//! usual convention). With weights, `dᵢ` and `nᵢ` are sums of weights.
//!
//! Past the largest age observed, the data say nothing: [`KaplanMeier::horizon`] is that
//! age and [`KaplanMeier::left`] the share of sessions still unresolved there.

/// A fitted survival curve.
#[derive(Clone, Debug, Default)]
pub struct KaplanMeier {
    /// (event age, S just after it), ascending age, descending S.
    steps: Vec<(u64, f64)>,
    /// The largest age observed (ended or censored).
    horizon: u64,
}

/// Observations sorted for fitting: (age, ended), ends before censorings at one age.
pub fn sorted(mut obs: Vec<(u64, bool)>) -> Vec<(u64, bool)> {
    obs.sort_unstable_by_key(|&(t, ended)| (t, !ended));
    obs
}

impl KaplanMeier {
    /// Fits unweighted observations `(age, ended)` in any order.
    pub fn fit(obs: &[(u64, bool)]) -> Self {
        let s = sorted(obs.to_vec());
        Self::fit_weighted(&s, |_| 1.0)
    }

    /// Fits observations already [`sorted`], observation `i` counting `weight(i)`.
    pub fn fit_weighted(obs: &[(u64, bool)], mut weight: impl FnMut(usize) -> f64) -> Self {
        let w: Vec<f64> = (0..obs.len()).map(&mut weight).collect();
        let mut at_risk: f64 = w.iter().sum();
        let mut surv = 1.0;
        let mut steps: Vec<(u64, f64)> = Vec::new();
        for (t, d, gone) in tied(obs, &w) {
            if d > 0.0 && at_risk > 0.0 {
                surv *= (1.0 - d / at_risk).max(0.0);
                steps.push((t, surv));
            }
            at_risk -= gone;
        }
        Self {
            steps,
            horizon: obs.last().map_or(0, |o| o.0),
        }
    }

    /// S(t): the share of sessions still running at age `t` (right-continuous), within
    /// the horizon; past it, the share unresolved at the horizon.
    pub fn survival(&self, t: u64) -> f64 {
        match self.steps.partition_point(|&(a, _)| a <= t) {
            0 => 1.0,
            i => self.steps[i - 1].1,
        }
    }

    /// The largest age observed: past it the curve is not known.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// The share of sessions unresolved at the horizon (0 when the oldest one ended).
    pub fn left(&self) -> f64 {
        self.steps.last().map_or(1.0, |s| s.1)
    }

    /// The first event age at which S falls to `s` or below; `None` if it never does
    /// within the horizon.
    pub fn age_at(&self, s: f64) -> Option<u64> {
        self.steps
            .get(self.steps.partition_point(|&(_, v)| v > s))
            .map(|st| st.0)
    }

    /// The event ages and the survival just after each.
    pub fn steps(&self) -> &[(u64, f64)] {
        &self.steps
    }

    /// The mean restricted to the horizon: ∫₀^horizon S(t) dt.
    pub fn restricted_mean(&self) -> f64 {
        let (mut prev_t, mut prev_s, mut m) = (0u64, 1.0, 0.0);
        for &(t, s) in &self.steps {
            m += prev_s * (t - prev_t) as f64;
            (prev_t, prev_s) = (t, s);
        }
        m + prev_s * self.horizon.saturating_sub(prev_t) as f64
    }
}

/// The beta-process posterior mean of the survival curve (Hjort 1990): at each age the
/// hazard is `(c·h₀ dt + dN) ÷ (c + Y)`, the prior's constant hazard `h₀` (per ms,
/// weight `c`, in sessions) beside the data's ends `dN` over the sessions at risk `Y`.
/// Where many sessions are at risk it is Kaplan–Meier (each end a step
/// `d ÷ (c + Y)`, nothing between); where few are, the hazard between the ends moves
/// towards `h₀`; past the oldest age seen (`Y = 0`) it is `h₀`. With `c = 0` it is
/// Kaplan–Meier within the horizon and a constant hazard `h₀` past it.
#[derive(Clone, Debug, Default)]
pub struct BetaProcess {
    /// (age, S just after the step at that age, hazard per ms from it to the next age),
    /// ascending age; the first starts at 0, the last runs on for ever.
    segs: Vec<(u64, f64, f64)>,
    horizon: u64,
}

impl BetaProcess {
    /// Fits observations already [`sorted`], observation `i` counting `weight(i)`, with
    /// the prior's weight `c` and hazard `h0` (per ms; `f64::INFINITY`: every session
    /// that outlives the data ends at the horizon).
    pub fn fit_weighted(
        obs: &[(u64, bool)],
        mut weight: impl FnMut(usize) -> f64,
        c: f64,
        h0: f64,
    ) -> Self {
        let w: Vec<f64> = (0..obs.len()).map(&mut weight).collect();
        let mut at_risk: f64 = w.iter().sum();
        let between = |y: f64| {
            if y <= 0.0 {
                h0
            } else if c > 0.0 && h0 > 0.0 {
                // Within the data an infinite prior hazard is no hazard: it only says
                // what happens past the oldest age seen.
                if h0.is_finite() {
                    c * h0 / (c + y)
                } else {
                    0.0
                }
            } else {
                0.0
            }
        };
        let mut segs = vec![(0u64, 1.0, between(at_risk))];
        for (t, d, gone) in tied(obs, &w) {
            let mut s = Self::at(segs[segs.len() - 1], t);
            if d > 0.0 && c + at_risk > 0.0 {
                s *= (1.0 - d / (c + at_risk)).max(0.0);
            }
            // Past the oldest age nobody is at risk (no rounding left over).
            at_risk = if Some(t) == obs.last().map(|o| o.0) {
                0.0
            } else {
                at_risk - gone
            };
            if t == segs[segs.len() - 1].0 {
                segs.pop();
            }
            segs.push((t, s, between(at_risk)));
        }
        Self {
            segs,
            horizon: obs.last().map_or(0, |o| o.0),
        }
    }

    /// S at `t` on the segment `(from, s, hazard)`, `t ≥ from`.
    fn at((from, s, h): (u64, f64, f64), t: u64) -> f64 {
        if t == from || h == 0.0 {
            s
        } else if h.is_infinite() {
            0.0
        } else {
            s * (-h * (t - from) as f64).exp()
        }
    }

    /// S(t): the share of sessions still running at age `t`.
    pub fn survival(&self, t: u64) -> f64 {
        let i = self.segs.partition_point(|&(a, _, _)| a <= t);
        // The first segment starts at 0 ≤ t.
        Self::at(self.segs[i.max(1) - 1], t)
    }

    /// The largest age observed.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// The first age at which S falls to `s` or below; `None` if it never does (a
    /// hazard of 0 from some age on, above `s`).
    pub fn age_at(&self, s: f64) -> Option<u64> {
        // S at each segment's start never rises: the segments before `p` start above
        // `s`, so S crosses `s` within segment `p − 1` or at the start of `p`.
        let p = self.segs.partition_point(|&(_, s0, _)| s0 > s);
        if p == 0 {
            return Some(0);
        }
        let (from, s0, h) = self.segs[p - 1];
        let next = self.segs.get(p).map(|n| n.0);
        if h > 0.0 {
            let t = if h.is_infinite() {
                from
            } else {
                // The first whole ms at which S ≤ s.
                let dt = ((s0 / s).ln() / h).ceil().max(0.0);
                from.saturating_add(dt.min(u64::MAX as f64 / 2.0) as u64)
            };
            if next.is_none_or(|n| t < n) {
                return Some(t);
            }
        }
        next
    }

    /// ∫₀^ttl S(t) dt: the mean length of sessions cut at `ttl`.
    pub fn mean_to(&self, ttl: u64) -> f64 {
        let mut m = 0.0;
        for (j, &(from, s0, h)) in self.segs.iter().enumerate() {
            if from >= ttl {
                break;
            }
            let to = self.segs.get(j + 1).map_or(ttl, |n| n.0.min(ttl));
            let len = (to - from) as f64;
            m += if h == 0.0 {
                s0 * len
            } else if h.is_infinite() {
                0.0
            } else {
                s0 * (1.0 - (-h * len).exp()) / h
            };
        }
        m
    }
}

/// Observations already [`sorted`] grouped by age: `(age, weight of the ends at that age,
/// weight of every observation at that age)`, ascending; observation `i` weighs `w[i]`.
fn tied<'a>(obs: &'a [(u64, bool)], w: &'a [f64]) -> impl Iterator<Item = (u64, f64, f64)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        let t = obs.get(i)?.0;
        let (mut d, mut gone) = (0.0, 0.0);
        while i < obs.len() && obs[i].0 == t {
            if obs[i].1 {
                d += w[i];
            }
            gone += w[i];
            i += 1;
        }
        Some((t, d, gone))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    /// The 6-MP arm of Freireich et al. (1963), the worked example of Kleinbaum & Klein,
    /// *Survival Analysis* (3rd ed., ch. 2): weeks in remission of 21 patients, 9
    /// relapses and 12 censored. Their table: S(6) = 0.857, S(7) = 0.807,
    /// S(10) = 0.753, S(13) = 0.690, S(16) = 0.627, S(22) = 0.538, S(23) = 0.448.
    #[test]
    fn freireich_six_mp_matches_the_textbook_table() {
        let ended = [6, 6, 6, 7, 10, 13, 16, 22, 23];
        let censored = [6, 9, 10, 11, 17, 19, 20, 25, 32, 32, 34, 35];
        let obs: Vec<(u64, bool)> = ended
            .iter()
            .map(|&t| (t, true))
            .chain(censored.iter().map(|&t| (t, false)))
            .collect();
        let km = KaplanMeier::fit(&obs);
        let table = [
            (5, 1.0),
            (6, 0.857),
            (7, 0.807),
            (9, 0.807),
            (10, 0.753),
            (13, 0.690),
            (16, 0.627),
            (22, 0.538),
            (23, 0.448),
            (35, 0.448),
        ];
        for (t, s) in table {
            assert!(close(km.survival(t), s), "S({t}) = {}", km.survival(t));
        }
        assert_eq!(km.horizon(), 35);
        assert!(close(km.left(), 0.448));
        // Median: the first age where S ≤ 0.5 is 23 weeks (the textbook's median).
        assert_eq!(km.age_at(0.5), Some(23));
        assert_eq!(km.age_at(0.4), None, "never reached within the horizon");
    }

    /// A small hand-worked example: 3, 4+, 5, 7, 9+ (+ = censored).
    /// S(3) = 4/5, S(5) = 4/5 · 2/3, S(7) = that · 1/2; the horizon (9) is censored.
    #[test]
    fn a_hand_worked_example_with_censoring() {
        let km = KaplanMeier::fit(&[(3, true), (4, false), (5, true), (7, true), (9, false)]);
        assert!(close(km.survival(3), 0.8));
        assert!(close(km.survival(4), 0.8));
        assert!(close(km.survival(5), 0.8 * 2.0 / 3.0));
        assert!(close(km.survival(8), 0.8 * 2.0 / 3.0 * 0.5));
        // ∫ S over [0, 9]: 3·1 + 2·0.8 + 2·0.5333 + 2·0.2667.
        assert!(close(km.restricted_mean(), 3.0 + 1.6 + 1.0667 + 0.5333));
    }

    #[test]
    fn without_censoring_it_is_the_empirical_distribution() {
        let km = KaplanMeier::fit(&[(1, true), (2, true), (2, true), (4, true)]);
        assert!(close(km.survival(1), 0.75));
        assert!(close(km.survival(2), 0.25));
        assert!(close(km.left(), 0.0));
        assert!(close(km.restricted_mean(), 2.25));
    }

    #[test]
    fn weights_count_as_repeated_observations() {
        let plain = KaplanMeier::fit(&[(1, true), (1, true), (3, false), (5, true)]);
        let obs = sorted(vec![(1, true), (3, false), (5, true)]);
        let weighted = KaplanMeier::fit_weighted(&obs, |i| if i == 0 { 2.0 } else { 1.0 });
        for t in 0..6 {
            assert!(close(plain.survival(t), weighted.survival(t)), "t = {t}");
        }
    }

    #[test]
    fn only_censored_sessions_resolve_nothing() {
        let km = KaplanMeier::fit(&[(4, false), (9, false)]);
        assert_eq!(km.left(), 1.0);
        assert_eq!(km.horizon(), 9);
        assert_eq!(km.age_at(0.99), None);
    }
    /// Hand-worked: ends at 2 s and a session censored at 4 s, prior weight 1 at
    /// 0.1 / s. Before 2 s two are at risk: hazard 0.1 ÷ 3; the end at 2 s is a step of
    /// 1 ÷ (1 + 2); between 2 and 4 s one is at risk: 0.1 ÷ 2; past 4 s, 0.1.
    #[test]
    fn the_beta_process_by_hand() {
        let h0 = 0.1 / 1000.0;
        let bp =
            BetaProcess::fit_weighted(&sorted(vec![(2000, true), (4000, false)]), |_| 1.0, 1.0, h0);
        let s2 = (-2.0f64 * 0.1 / 3.0).exp() * 2.0 / 3.0;
        assert!(close(bp.survival(1000), (-0.1f64 / 3.0).exp()));
        assert!(close(bp.survival(2000), s2));
        let s4 = s2 * (-2.0f64 * 0.05).exp();
        assert!(close(bp.survival(4000), s4));
        assert!(close(bp.survival(14_000), s4 * (-1.0f64).exp()));
        assert_eq!(bp.horizon(), 4000);
        // Inverse: S falls to s4·e⁻¹ 10 s past the horizon.
        let at = bp.age_at(s4 * (-1.0f64).exp()).unwrap();
        assert!(at.abs_diff(14_000) <= 1, "{at}");
        // The mean to a 6 s TTL: the three pieces integrated.
        let m = 3000.0 * (1.0 - (-2.0f64 * 0.1 / 3.0).exp()) / 0.1
            + s2 * 1000.0 * (1.0 - (-0.1f64).exp()) / 0.05
            + s4 * 1000.0 * (1.0 - (-0.2f64).exp()) / 0.1;
        assert!(
            (bp.mean_to(6000) - m).abs() < 1.0,
            "{} {m}",
            bp.mean_to(6000)
        );
    }

    /// Without the prior's weight it is Kaplan–Meier within the horizon, and the prior's
    /// hazard past it; with a prior and no data it is the prior's exponential.
    #[test]
    fn the_beta_process_without_prior_is_kaplan_meier() {
        let ended = [6, 6, 6, 7, 10, 13, 16, 22, 23];
        let censored = [6, 9, 10, 11, 17, 19, 20, 25, 32, 32, 34, 35];
        let obs = sorted(
            ended
                .iter()
                .map(|&t| (t, true))
                .chain(censored.iter().map(|&t| (t, false)))
                .collect(),
        );
        let km = KaplanMeier::fit(&obs);
        let bp = BetaProcess::fit_weighted(&obs, |_| 1.0, 0.0, 0.01);
        for t in 0..=35 {
            assert!(close(km.survival(t), bp.survival(t)), "t = {t}");
        }
        assert_eq!(bp.age_at(0.5), Some(23));
        assert!(close(bp.survival(45), 0.448 * (-0.1f64).exp()));
        let flat = BetaProcess::fit_weighted(&obs, |_| 1.0, 0.0, 0.0);
        assert_eq!(flat.age_at(0.4), None, "no hazard past the horizon: never");
        let sharp = BetaProcess::fit_weighted(&obs, |_| 1.0, 0.0, f64::INFINITY);
        assert_eq!(sharp.age_at(0.4), Some(35), "all end at the horizon");
        assert_eq!(sharp.survival(36), 0.0);
        let prior = BetaProcess::fit_weighted(&[], |_| 1.0, 1.0, 0.5);
        assert!(close(prior.survival(2), (-1.0f64).exp()));
    }
}
