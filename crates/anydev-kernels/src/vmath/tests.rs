//! The vectorised functions against std's at scale: f64 within 1 ulp of
//! std's f64, f32 within 1 ulp of std's f64 result rounded once, and the
//! special values (NaN, infinities, zeros, subnormals, the overflow and
//! underflow edges) exactly.

use super::{exp_f32, exp_f64, expm1_f32, log1p_f32, log_f32, log_f64, tanh_f32};

/// A float's position in the ordered sequence of its type's values
/// (both zeros at 0), so that two positions differ by their ulp distance.
fn position(bits: u64, sign: u64) -> i128 {
    if bits & sign != 0 {
        -((bits & !sign) as i128)
    } else {
        bits as i128
    }
}

/// Ulps between two f64 results; NaN matches only NaN.
fn ulps64(a: f64, b: f64) -> u128 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => position(a.to_bits(), 1 << 63).abs_diff(position(b.to_bits(), 1 << 63)),
        _ => u128::MAX,
    }
}

/// Ulps between two f32 results; NaN matches only NaN.
fn ulps32(a: f32, b: f32) -> u128 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => position(a.to_bits().into(), 1 << 31).abs_diff(position(b.to_bits().into(), 1 << 31)),
        _ => u128::MAX,
    }
}

/// The largest error over `inputs`, with the worst input.
fn worst<T: Copy + std::fmt::Debug>(inputs: impl Iterator<Item = T>, err: impl Fn(T) -> u128) -> (u128, Option<T>) {
    inputs.fold((0, None), |(m, at), x| {
        let e = err(x);
        if e > m {
            (e, Some(x))
        } else {
            (m, at)
        }
    })
}

/// Every `step`-th f32 bit pattern (both signs, subnormals, infinities,
/// NaNs), plus `extra`.
fn f32_sweep(step: u32, extra: &[f32]) -> impl Iterator<Item = f32> + '_ {
    (0..=u32::MAX / step)
        .map(move |i| f32::from_bits(i * step))
        .chain(extra.iter().copied())
}

/// `n` points spread evenly over `[lo, hi]`, plus `n` f64 bit patterns
/// spread over all of them, plus `extra`.
fn f64_sweep(lo: f64, hi: f64, n: u64, extra: &[f64]) -> impl Iterator<Item = f64> + '_ {
    let dense = (0..=n).map(move |i| lo + (hi - lo) * (i as f64 / n as f64));
    let step = u64::MAX / n;
    let bits = (0..n).map(move |i| f64::from_bits(i.wrapping_mul(step) ^ (i << 7)));
    dense.chain(bits).chain(extra.iter().copied())
}

/// Inputs whose results must be std's exactly: NaN, infinities, zeros,
/// the extremes, subnormals, and arguments past overflow and underflow.
const SPECIAL_F32: &[f32] = &[
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MIN_POSITIVE,
    1e-45,
    -1e-45,
    f32::MAX,
    f32::MIN,
    88.72284,
    -104.0,
];

/// Arguments at the edges (overflow, the end of the normals, underflow)
/// and other values a user would try, held to the sweep's bound.
const EDGES_F32: &[f32] = &[1.0, -1.0, 2.0, 10.0, 0.5, 88.72283, -87.33654, -103.972, -103.973];

const SPECIAL_F64: &[f64] = &[
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    f64::MIN,
    709.7827128933841,
    -746.0,
];

const EDGES_F64: &[f64] = &[
    1.0,
    -1.0,
    2.0,
    10.0,
    0.5,
    709.782712893384,
    -708.3964185322641,
    -745.1332191019411,
    -745.1332191019412,
    1e-300,
    1.0000000000000002,
    0.9999999999999999,
];

/// Special values must be exactly std's (bit for bit unless NaN).
fn exact_specials<T: Copy + std::fmt::Debug>(specials: &[T], ours: impl Fn(T) -> u128) {
    for &x in specials {
        assert_eq!(ours(x), 0, "special value {x:?}");
    }
}

/// An f64 function within 1 ulp of std's over all of the f64 range and
/// densely over `[lo, hi]` and near `dense`, special values exactly.
fn f64_within_one_ulp(name: &str, ours: fn(f64) -> f64, reference: fn(f64) -> f64, (lo, hi): (f64, f64), dense: f64) {
    let err = |x: f64| ulps64(ours(x), reference(x));
    exact_specials(SPECIAL_F64, err);
    let (e, at) = worst(f64_sweep(lo, hi, 2_000_000, EDGES_F64), err);
    assert!(e <= 1, "{name}: {e} ulps at {at:?}");
    let (e, at) = worst(f64_sweep(dense - 1.0, dense + 1.0, 1_000_000, &[]), err);
    assert!(e <= 1, "{name} near {dense}: {e} ulps at {at:?}");
}

#[test]
fn f64_functions_within_one_ulp_of_std() {
    f64_within_one_ulp("exp", exp_f64, f64::exp, (-746.0, 710.0), 0.0);
    f64_within_one_ulp("log", log_f64, f64::ln, (0.0, 1e6), 1.0);
}

/// An f32 function within 1 ulp of std's f64 function rounded once,
/// special values exactly.
fn f32_within_one_ulp(name: &str, ours: fn(f32) -> f32, reference: fn(f64) -> f64) {
    let err = |x: f32| ulps32(ours(x), reference(x as f64) as f32);
    exact_specials(SPECIAL_F32, err);
    let (e, at) = worst(f32_sweep(997, EDGES_F32), err);
    assert!(e <= 1, "{name}: {e} ulps at {at:?}");
    // Densely where the functions change form (|x| = 0.5 for expm1) and
    // where they are nearly linear.
    let near = (0..=2_000_000).map(|i| (i as f32 - 1e6) * 1e-6);
    let (e, at) = worst(near, err);
    assert!(e <= 1, "{name} near 0: {e} ulps at {at:?}");
}

#[test]
fn f32_functions_within_one_ulp_of_rounded_f64() {
    f32_within_one_ulp("exp", exp_f32, f64::exp);
    f32_within_one_ulp("log", log_f32, f64::ln);
    f32_within_one_ulp("expm1", expm1_f32, f64::exp_m1);
    f32_within_one_ulp("log1p", log1p_f32, f64::ln_1p);
    f32_within_one_ulp("tanh", tanh_f32, f64::tanh);
}

/// `f` over `xs` in a loop compiled for the best instruction set the
/// CPU has, with `f` inlined (in optimised builds: `cargo test --release`
/// is what exercises the vector code).
fn dispatched<T: Copy>(xs: &[T], f: impl Fn(T) -> T) -> Vec<T> {
    pulp::Arch::new().dispatch(|| xs.iter().map(|&x| f(x)).collect())
}

/// The dispatched loop (AVX-512 or AVX2 where the CPU has them) gives
/// the bits of one call at a time.
#[test]
fn every_instruction_set_gives_the_same_bits() {
    let x32: Vec<f32> = f32_sweep(65_537, EDGES_F32).collect();
    let x64: Vec<f64> = f64_sweep(-800.0, 800.0, 100_000, EDGES_F64).collect();
    let same32 = |got: Vec<f32>, f: fn(f32) -> f32| {
        x32.iter()
            .zip(got)
            .for_each(|(&x, y)| assert_eq!(f(x).to_bits(), y.to_bits(), "{x:?}"));
    };
    same32(dispatched(&x32, exp_f32), exp_f32);
    same32(dispatched(&x32, log_f32), log_f32);
    same32(dispatched(&x32, expm1_f32), expm1_f32);
    same32(dispatched(&x32, log1p_f32), log1p_f32);
    same32(dispatched(&x32, tanh_f32), tanh_f32);
    let same64 = |got: Vec<f64>, f: fn(f64) -> f64| {
        x64.iter()
            .zip(got)
            .for_each(|(&x, y)| assert_eq!(f(x).to_bits(), y.to_bits(), "{x:?}"));
    };
    same64(dispatched(&x64, exp_f64), exp_f64);
    same64(dispatched(&x64, log_f64), log_f64);
}
