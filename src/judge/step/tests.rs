use proptest::prelude::*;

use super::*;

fn rule(held: usize, threshold: f64, min_usual: usize, window: usize) -> StepRule {
    StepRule {
        held,
        threshold,
        min_usual,
        window,
        higher_is_better: true,
    }
}

fn clean(v: &[f64]) -> Vec<Point> {
    v.iter().copied().map(Point::clean).collect()
}

/// A quiet machine's noise (a 2-vCPU guest's DRAM reads, GB/s), then a
/// 15 % drop that holds: not enough points, steady, then stepped on the
/// third held point and not before.
#[test]
fn a_held_drop_is_a_step_and_noise_is_not() {
    let r = rule(3, 0.10, 10, 1000);
    let noise = [35.7, 35.2, 34.9, 35.1, 36.0, 33.9, 35.5, 34.4, 35.8, 35.0];
    let mut s = clean(&noise[..9]);
    assert_eq!(
        stepped(&s, &r),
        Verdict::NotEnough {
            clean: 9,
            needs: 13
        }
    );
    for _ in 0..5 {
        s.extend(clean(&noise));
    }
    let v = stepped(&s, &r);
    assert!(!v.stepped_down(), "{v:?}");
    assert!((v.usual().unwrap() - 35.15).abs() < 0.3, "{v:?}");
    let first_drop = s.len();
    for (i, want) in [false, false, true, true].into_iter().enumerate() {
        s.push(Point::clean(30.0));
        let v = stepped(&s, &r);
        assert_eq!(v.stepped_down(), want, "drop {i}: {v:?}");
        if want {
            let Verdict::Judged {
                stepped: Some(st), ..
            } = v
            else {
                unreachable!()
            };
            // Since the first drop, however long it has held.
            assert_eq!(st.since, first_drop);
        }
    }
}

/// Latency: higher is worse. A step up in bandwidth is a step, not a
/// step down.
#[test]
fn direction_and_steps_up() {
    let mut r = rule(2, 0.10, 3, 10);
    r.higher_is_better = false;
    let v = stepped(&clean(&[100.0, 101.0, 99.0, 130.0, 128.0]), &r);
    assert!(v.stepped_down(), "{v:?}");
    r.higher_is_better = true;
    let v = stepped(&clean(&[100.0, 101.0, 99.0, 130.0, 128.0]), &r);
    assert!(!v.stepped_down(), "{v:?}");
    assert!(
        matches!(
            v,
            Verdict::Judged {
                stepped: Some(Step { worse: false, .. }),
                ..
            }
        ),
        "{v:?}"
    );
}

/// One held point below and one not: no step (a step must hold).
#[test]
fn a_step_must_hold() {
    let r = rule(2, 0.10, 3, 10);
    assert!(!stepped(&clean(&[10.0, 10.0, 10.0, 8.0, 9.5]), &r).stepped_down());
    assert!(stepped(&clean(&[10.0, 10.0, 10.0, 8.0, 8.5]), &r).stepped_down());
    // Only the last `window` points before a step make the level: a drop
    // that held reaches back to where it began, against the level before.
    let r = rule(1, 0.10, 2, 2);
    let v = stepped(&clean(&[100.0, 100.0, 8.0, 7.5]), &r);
    assert!(v.stepped_down(), "{v:?}");
    assert_eq!(v.usual(), Some(100.0));
    // A dip that recovered is no step now.
    assert!(!stepped(&clean(&[100.0, 100.0, 8.0, 100.0, 101.0]), &r).stepped_down());
}

#[test]
fn nonsense_is_not_judged() {
    let r = rule(1, 0.10, 2, 10);
    let v = stepped(&clean(&[0.0, 0.0, 5.0]), &r);
    assert!(!v.stepped_down(), "{v:?}");
    let v = stepped(&clean(&[f64::NAN, f64::INFINITY, 5.0, 5.0]), &r);
    assert_eq!(v, Verdict::NotEnough { clean: 2, needs: 3 });
    assert_eq!(
        r.describe("run"),
        "the last clean run more than 10 % worse than the median of up to 10 clean runs before it (at least 2)"
    );
}

#[test]
fn steps_along_marks_where_the_rule_first_fired() {
    let r = rule(2, 0.10, 3, 10);
    let s = clean(&[10.0, 10.1, 9.9, 10.0, 8.0, 8.1, 8.0, 8.0, 8.1, 10.0, 10.1]);
    let steps = steps_along(&s, &r);
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!((steps[0].since, steps[0].worse), (4, true));
    assert_eq!((steps[1].since, steps[1].worse), (9, false));
}

fn rules() -> impl Strategy<Value = StepRule> {
    (
        1usize..5,
        0.01f64..0.5,
        1usize..12,
        1usize..40,
        any::<bool>(),
    )
        .prop_map(
            |(held, threshold, min_usual, window, higher_is_better)| StepRule {
                held,
                threshold,
                min_usual,
                window,
                higher_is_better,
            },
        )
}

/// The verdict without the index of the step, which moves when noisy
/// points are put before it.
fn shape(v: &Verdict) -> String {
    match v {
        Verdict::NotEnough { .. } => format!("{v:?}"),
        Verdict::Judged {
            usual,
            recent,
            change,
            usual_from,
            stepped,
        } => format!(
            "{} {} {} {usual_from} {:?}",
            usual.to_bits(),
            recent.to_bits(),
            change.to_bits(),
            stepped.map(|s| s.worse)
        ),
    }
}

proptest! {
    /// Noisy points never start a step, nor hide one: put anywhere, with
    /// any value, the verdict is the clean series' verdict, and a step
    /// starts at the same clean point.
    #[test]
    fn noisy_points_change_nothing(
        values in prop::collection::vec(1.0f64..100.0, 0..60),
        noisy in prop::collection::vec((0usize..60, -1e6f64..1e6), 0..30),
        r in rules(),
    ) {
        let plain = clean(&values);
        let mut mixed = plain.clone();
        for (at, v) in &noisy {
            mixed.insert((*at).min(mixed.len()), Point::noisy(*v));
        }
        let a = stepped(&plain, &r);
        let b = stepped(&mixed, &r);
        prop_assert_eq!(shape(&a), shape(&b));
        let clean_index = |s: &[Point], i: usize| s[..i].iter().filter(|p| p.clean).count();
        if let (
            Verdict::Judged { stepped: Some(x), .. },
            Verdict::Judged { stepped: Some(y), .. },
        ) = (&a, &b)
        {
            prop_assert_eq!(clean_index(&plain, x.since), clean_index(&mixed, y.since));
        }
    }

    /// A constant series never steps, whatever the rule.
    #[test]
    fn a_flat_series_never_steps(v in 0.1f64..1e4, n in 0usize..80, r in rules()) {
        let s = vec![Point::clean(v); n];
        prop_assert!(!stepped(&s, &r).stepped_down());
        prop_assert!(steps_along(&s, &r).is_empty());
    }
}

/// A reproducible noise source: xorshift, and a sum of uniforms for
/// something close to Gaussian, around 1 with coefficient of variation
/// `cv`.
fn noise(seed: u64, n: usize, cv: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut u = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let g = (0..12).map(|_| u()).sum::<f64>() - 6.0;
            1.0 + cv * g
        })
        .collect()
}

/// `history --check`'s defaults over 200 series of a quiet machine's
/// noise (1 % CV, 50 runs each) raise nothing, and at twice the noise a
/// 5 % threshold still raises nothing.
#[test]
fn a_quiet_machines_noise_never_steps() {
    for seed in 0..200 {
        let s = clean(&noise(seed, 50, 0.01));
        assert!(
            steps_along(&s, &rule(3, 0.10, 3, 30)).is_empty(),
            "seed {seed}"
        );
        let s = clean(&noise(seed, 50, 0.02));
        assert!(
            steps_along(&s, &rule(3, 0.05, 3, 30)).is_empty(),
            "seed {seed}"
        );
    }
}

proptest! {
    /// A clear drop (past the threshold by more than the noise) is found
    /// where it starts, once.
    #[test]
    fn a_clear_step_is_found_where_it_is(
        n in 20usize..80, at_frac in 0.25f64..0.75, seed in 0u64..1000,
        drop in 0.15f64..0.5,
    ) {
        let at = ((n as f64) * at_frac) as usize;
        let mut x = noise(seed, n, 0.005);
        for v in &mut x[at..] { *v *= 1.0 - drop; }
        let steps = steps_along(&clean(&x), &rule(3, 0.10, 3, 30));
        prop_assert!(!steps.is_empty());
        prop_assert_eq!((steps[0].since, steps[0].worse), (at, true));
    }
}
