//! Reductions and scans against plain f64 loops, over every subset of
//! axes of random shapes (zero-size axes and 0-d arrays included), with
//! NaN/inf and integer edge values.

// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, Array, DType, Error};
use proptest::prelude::*;

/// Reduces `values` (row-major, `shape`) over `axes` with `f` applied to
/// each group's elements; returns the output (keepdims layout) row-major.
fn reference(values: &[f64], shape: &[usize], axes: &[usize], f: &dyn Fn(&[f64]) -> f64) -> (Vec<usize>, Vec<f64>) {
    let out_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if axes.contains(&d) { 1 } else { n })
        .collect();
    let out_size: usize = out_shape.iter().product();
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); out_size];
    let total: usize = shape.iter().product();
    for (flat, &v) in values.iter().enumerate().take(total) {
        let mut rem = flat;
        let mut idx = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        let o = (0..shape.len()).fold(0, |acc, d| {
            acc * out_shape[d] + if axes.contains(&d) { 0 } else { idx[d] }
        });
        groups[o].push(v);
    }
    (out_shape, groups.iter().map(|g| f(g)).collect())
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn nan_or(g: &[f64], f: impl Fn(&[f64]) -> f64) -> f64 {
    if g.iter().any(|v| v.is_nan()) {
        f64::NAN
    } else {
        f(g)
    }
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![8 => -10.0..10.0f64, 1 => Just(f64::NAN), 1 => Just(f64::INFINITY), 1 => Just(0.0)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn float_reductions_match_the_reference(
        shape in prop::collection::vec(0usize..4, 0..4),
        mask in 0u32..16,
        keepdims in any::<bool>(),
        flip in any::<bool>(),
        pool in prop::collection::vec(value(), 64),
    ) {
        let n: usize = shape.iter().product();
        let values: Vec<f64> = (0..n).map(|i| pool[i % 64]).collect();
        let x = if flip {
            let rev: Vec<f64> = values.iter().rev().copied().collect();
            Array::from_slice(&rev, &shape, ()).unwrap().flip(ad::ALL).unwrap()
        } else {
            Array::from_slice(&values, &shape, ()).unwrap()
        };
        let axes: Vec<usize> = (0..shape.len()).filter(|d| mask & (1 << d) != 0).collect();
        let signed: Vec<isize> = axes.iter().map(|&a| a as isize - shape.len() as isize).collect();
        let count = |g: &[f64]| g.len() as f64;
        let sum = |g: &[f64]| g.iter().sum::<f64>();
        let mean = move |g: &[f64]| sum(g) / count(g);
        type Case<'a> = (&'a str, ad::Result<Array>, Box<dyn Fn(&[f64]) -> f64>);
        let mut cases: Vec<Case> = vec![
            ("sum", ad::sum(&x, signed.clone(), keepdims), Box::new(sum)),
            ("prod", ad::prod(&x, signed.clone(), keepdims), Box::new(|g: &[f64]| g.iter().product())),
            ("mean", ad::mean(&x, signed.clone(), keepdims), Box::new(mean)),
            ("var", ad::var(&x, signed.clone(), 0.0, keepdims), Box::new(move |g: &[f64]| {
                let m = mean(g);
                g.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / count(g)
            })),
            ("std1", ad::std(&x, signed.clone(), 1.0, keepdims), Box::new(move |g: &[f64]| {
                let m = mean(g);
                (g.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (count(g) - 1.0).max(0.0)).sqrt()
            })),
            ("all", ad::all(&x, signed.clone(), keepdims), Box::new(|g: &[f64]| g.iter().all(|&v| v != 0.0) as u8 as f64)),
            ("any", ad::any(&x, signed.clone(), keepdims), Box::new(|g: &[f64]| g.iter().any(|&v| v != 0.0) as u8 as f64)),
            ("logsumexp", ad::logsumexp(&x, signed.clone(), keepdims), Box::new(|g: &[f64]| {
                if g.iter().any(|v| v.is_nan()) { return f64::NAN; }
                let m = g.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if !m.is_finite() { return if g.is_empty() { f64::NEG_INFINITY } else { g.iter().map(|v| v.exp()).sum::<f64>().ln() }; }
                g.iter().map(|v| (v - m).exp()).sum::<f64>().ln() + m
            })),
        ];
        let empty_group = axes.iter().any(|&a| shape[a] == 0);
        if !empty_group {
            cases.push(("max", ad::max(&x, signed.clone(), keepdims), Box::new(|g: &[f64]| nan_or(g, |g| g.iter().copied().fold(f64::NEG_INFINITY, f64::max)))));
            cases.push(("min", ad::min(&x, signed.clone(), keepdims), Box::new(|g: &[f64]| nan_or(g, |g| g.iter().copied().fold(f64::INFINITY, f64::min)))));
        } else {
            let refused = [ad::max(&x, signed.clone(), keepdims), ad::min(&x, signed.clone(), keepdims)]
                .iter()
                .all(|r| matches!(r, Err(Error::InvalidArgument { .. })));
            prop_assert!(refused, "min/max over an empty set must be errors");
        }
        for (name, got, f) in cases {
            let got = got.unwrap();
            let (kshape, want) = reference(&values, &shape, &axes, &*f);
            let expect_shape: Vec<usize> = if keepdims {
                kshape
            } else {
                kshape.iter().enumerate().filter(|(d, _)| !axes.contains(d)).map(|(_, &n)| n).collect()
            };
            prop_assert_eq!(got.shape(), expect_shape.as_slice(), "{}", name);
            let got = got.to_f64_vec().unwrap();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                prop_assert!(close(*g, *w), "{} over {:?} of {:?}: element {} got {} want {}", name, axes, shape, k, g, w);
            }
        }
    }

    #[test]
    fn argmax_and_cumulative_sum_match_the_reference(
        rows in 1usize..5, cols in 1usize..5,
        pool in prop::collection::vec(-5i32..5, 25),
    ) {
        let values: Vec<i32> = pool[..rows * cols].to_vec();
        let x = Array::from_slice(&values, &[rows, cols], ()).unwrap();
        let am = x.argmax(Some(1), false).unwrap().to_vec::<i64>().unwrap();
        let cs = x.cumulative_sum(Some(0), false).unwrap();
        prop_assert_eq!(cs.dtype(), DType::I64);
        let cs = cs.to_vec::<i64>().unwrap();
        for r in 0..rows {
            let row = &values[r * cols..(r + 1) * cols];
            let best = row.iter().copied().max().unwrap();
            prop_assert_eq!(am[r], row.iter().position(|&v| v == best).unwrap() as i64);
            for c in 0..cols {
                let want: i64 = (0..=r).map(|k| values[k * cols + c] as i64).sum();
                prop_assert_eq!(cs[r * cols + c], want);
            }
        }
        let flat = x.argmin(None, false).unwrap().to_scalar::<i64>().unwrap();
        let best = values.iter().copied().min().unwrap();
        prop_assert_eq!(flat, values.iter().position(|&v| v == best).unwrap() as i64);
    }
}

#[test]
fn integer_sums_accumulate_in_64_bits() {
    let x = Array::from_slice(&[i8::MAX, i8::MAX, i8::MAX], &[3], ()).unwrap();
    let s = x.sum(ad::ALL, false).unwrap();
    assert_eq!((s.dtype(), s.to_scalar::<i64>().unwrap()), (DType::I64, 381));
    let u = Array::from_slice(&[u32::MAX, u32::MAX], &[2], ()).unwrap();
    let s = u.sum(ad::ALL, false).unwrap();
    assert_eq!(
        (s.dtype(), s.to_scalar::<u64>().unwrap()),
        (DType::U64, 2 * u32::MAX as u64)
    );
    let b = Array::from_slice(&[true, true, false], &[3], ()).unwrap();
    assert_eq!(b.sum(ad::ALL, false).unwrap().to_scalar::<i64>().unwrap(), 2);
    assert_eq!(
        b.cumulative_sum(None, true).unwrap().to_vec::<i64>().unwrap(),
        vec![0, 1, 2, 2]
    );
    let p = Array::from_slice(&[2u16, 3], &[2], ()).unwrap();
    assert_eq!(
        p.cumulative_prod(None, true).unwrap().to_vec::<u64>().unwrap(),
        vec![1, 2, 6]
    );
    assert_eq!(
        Array::from_slice(&[3i32, 5], &[2], ())
            .unwrap()
            .mean(ad::ALL, false)
            .unwrap()
            .to_scalar::<f64>()
            .unwrap(),
        4.0
    );
    assert_eq!(
        Array::from_slice(&[i64::MAX, 1], &[2], ())
            .unwrap()
            .sum(ad::ALL, false)
            .unwrap()
            .to_scalar::<i64>()
            .unwrap(),
        i64::MIN
    );
}

#[test]
fn empty_reductions_follow_the_standard() {
    let x = ad::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(x.sum(0, false).unwrap().to_vec::<f32>().unwrap(), vec![0.0; 3]);
    assert_eq!(x.prod(0, false).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 3]);
    assert!(x.all(ad::ALL, false).unwrap().to_scalar::<bool>().unwrap());
    assert!(!x.any(ad::ALL, false).unwrap().to_scalar::<bool>().unwrap());
    assert!(x.mean(ad::ALL, false).unwrap().to_scalar::<f32>().unwrap().is_nan());
    assert_eq!(x.sum(1, false).unwrap().shape(), &[0]);
    assert_eq!(x.max(1, false).unwrap().shape(), &[0]); // nothing is reduced over an empty set
    for r in [
        x.max(ad::ALL, false),
        x.min(0, true),
        x.argmax(None, false),
        x.argmin(Some(0), false),
    ] {
        let err = r.unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
        assert!(err.to_string().contains("empty"), "{err}");
    }
    assert_eq!(
        x.logsumexp(0, false).unwrap().to_vec::<f32>().unwrap(),
        vec![f32::NEG_INFINITY; 3]
    );
    assert_eq!(x.cumulative_sum(Some(0), false).unwrap().shape(), &[0, 3]);
}

#[test]
fn zero_d_reductions_reduce_nothing() {
    let x = Array::scalar(2.5f32, ()).unwrap();
    assert_eq!(x.sum(ad::ALL, false).unwrap().to_scalar::<f32>().unwrap(), 2.5);
    assert_eq!(x.max(ad::ALL, true).unwrap().to_scalar::<f32>().unwrap(), 2.5);
    assert_eq!(x.argmax(None, false).unwrap().to_scalar::<i64>().unwrap(), 0);
    assert_eq!(x.argmax(None, true).unwrap().ndim(), 0);
    assert_eq!(
        x.cumulative_sum(None, false).unwrap().to_vec::<f32>().unwrap(),
        vec![2.5]
    );
    assert!(matches!(x.sum(0, false), Err(Error::InvalidAxis { .. })));
}

#[test]
fn bad_axes_are_errors() {
    let x = ad::ones(&[2, 3], ()).unwrap();
    for r in [
        x.sum(2, false),
        x.mean(-3, false),
        x.argmax(Some(5), false),
        x.cumulative_sum(Some(2), false),
    ] {
        assert!(matches!(r, Err(Error::InvalidAxis { .. })), "{r:?}");
    }
    assert!(matches!(x.sum([0, -2], false), Err(Error::InvalidArgument { .. })));
    assert!(matches!(
        x.cumulative_sum(None, false),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ad::ones(&[2], DType::Bool).unwrap().max(ad::ALL, false),
        Err(Error::InvalidDType { .. })
    ));
}

#[test]
fn float_sums_are_accurate() {
    // Pairwise (or better) summation keeps 1e6 copies of 0.1f32 close to 1e5.
    let x = ad::full(&[1_000_000], 0.1, DType::F32).unwrap();
    let s = x.sum(ad::ALL, false).unwrap().to_scalar::<f32>().unwrap();
    assert!((s - 100_000.0).abs() < 1.0, "{s}");
}
