//! `exp`: `x = k ln2 + r` with `|r| <= ln2 / 2`, a polynomial for `e^r`,
//! and `2^k` from its bits.

// fdlibm's constants are written as published, to be checked against it.
#![allow(clippy::excessive_precision)]

use super::{pow2, pow2_f32, round_int, round_int_f32};
use std::f64::consts::{LN_2, LOG2_E};

/// `e^x` of an f32 in f32 arithmetic, so that a vector holds twice the
/// lanes of an f64 evaluation; within 1 ulp of the correctly rounded
/// result for every f32 input (99.9% of them exactly: the error is the
/// final rounding plus about 0.1 ulp).
///
/// `x = k ln2 + r` with `ln2 = C1 + C2`, where `C1` has 9 significant
/// bits, so `r_hi = x - k C1` is exact, and `r_lo = -k C2` is the small
/// rest. `e^r = 1 + r + r^2 P(r)` with `P` a degree-5 least-maximum fit
/// on |r| < 0.38 (error 2e-9 with its f32 coefficients). The sum
/// `1 + r_hi` is split into its rounded value and its exact error, so
/// only the last addition rounds at the result's scale. Clamping to
/// [-104, 89] keeps every result (e^89 overflows f32, e^-104 rounds to
/// zero), and `2^k` is applied as two normal factors so that subnormal
/// and near-overflow results round once.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const C1: f32 = 0.693_359_375;
    const C2: f32 = -2.121_944_4e-4;
    const P: [f32; 6] = [
        0.5,
        1.666_666_7e-1,
        4.166_609_4e-2,
        8.333_234e-3,
        1.395_763e-3,
        1.993_398_2e-4,
    ];
    let x = x.clamp(-104.0, 89.0);
    let (kf, k) = round_int_f32(x * std::f32::consts::LOG2_E);
    let r_hi = x - kf * C1;
    let r_lo = -(kf * C2);
    let r = r_hi + r_lo;
    let p = P[0] + r * (P[1] + r * (P[2] + r * (P[3] + r * (P[4] + r * P[5]))));
    let hi = 1.0 + r_hi;
    let hi_err = (1.0 - hi) + r_hi;
    let y = hi + (hi_err + (r_lo + r * r * p));
    let half = k >> 1;
    y * pow2_f32(half) * pow2_f32(k.wrapping_sub(half))
}

/// `e^x - 1` of an f32, evaluated in f64 and rounded once: a Taylor
/// polynomial (to degree 11, 1e-12 relative) for |x| < 0.5, where
/// `e^x - 1` would cancel, and `e^x - 1` elsewhere.
#[inline(always)]
pub(crate) fn expm1_f32(x: f32) -> f32 {
    expm1_wide(x as f64) as f32
}

/// `tanh x` of an f32: `e / (e + 2)` with `e = e^(2x) - 1`, which does
/// not cancel for small `x`; beyond |x| = 20 every f32 result is ±1.
#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let e = expm1_wide(2.0 * (x as f64).clamp(-20.0, 20.0));
    (e / (e + 2.0)) as f32
}

/// `e^x` for f32 arguments, in f64.
///
/// Clamping to [-150, 100] keeps `2^k` a normal f64 while every f32
/// result stays the same: e^100 rounds to f32 infinity, e^-150 to zero.
/// The Taylor polynomial to degree 9 is accurate to 1e-12 relative on
/// the reduced range, far below the f32 rounding.
#[inline(always)]
fn exp_wide(x: f64) -> f64 {
    let x = x.clamp(-150.0, 100.0);
    let (kf, k) = round_int(x * LOG2_E);
    let r = x - kf * LN_2;
    let mut p = 1.0 / 362880.0;
    for c in [40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0] {
        p = p * r + 1.0 / c;
    }
    p * pow2(k)
}

/// `e^x - 1` for f32 arguments, in f64 (see [`expm1_f32`]).
#[inline(always)]
fn expm1_wide(x: f64) -> f64 {
    let mut p = 1.0 / 39916800.0;
    for c in [3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0] {
        p = p * x + 1.0 / c;
    }
    if x.abs() < 0.5 {
        x * p
    } else {
        exp_wide(x) - 1.0
    }
}

/// `e^x` of an f64: fdlibm's `__ieee754_exp` (error below 1 ulp) with
/// its branches turned into clamps.
///
/// `ln2` is split into a high part with trailing zero bits (so `k * hi`
/// is exact) and a low part. `e^r` is `1 + r + r c / (2 - c)` with `c`
/// from a degree-5 Remez polynomial in `r^2`. Clamping to [-750, 710]
/// keeps every result (underflow to 0, overflow to infinity), and `2^k`
/// is applied as two normal factors so that subnormal and near-overflow
/// results round once.
#[inline(always)]
pub(crate) fn exp_f64(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const P: [f64; 5] = [
        1.666_666_666_666_660_190_37e-1,
        -2.777_777_777_701_559_338_42e-3,
        6.613_756_321_437_934_361_17e-5,
        -1.653_390_220_546_525_153_90e-6,
        4.138_136_797_057_238_460_39e-8,
    ];
    let x = x.clamp(-750.0, 710.0);
    let (kf, k) = round_int(x * LOG2_E);
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let t = r * r;
    let c = r - t * (P[0] + t * (P[1] + t * (P[2] + t * (P[3] + t * P[4]))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    let half = k >> 1;
    y * pow2(half) * pow2(k.wrapping_sub(half))
}
