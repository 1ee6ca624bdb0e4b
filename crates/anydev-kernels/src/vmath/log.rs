//! `log`: `x = 2^k m` with `m` in [sqrt(2)/2, sqrt(2)), and `log(m)`
//! from `s = f / (2 + f)`, `f = m - 1`.

// fdlibm's constants are written as published, to be checked against it.
#![allow(clippy::excessive_precision)]

/// `ln x` of an f32: the f64 function, rounded once (every f32,
/// subnormals included, is a normal f64).
#[inline(always)]
pub(crate) fn log_f32(x: f32) -> f32 {
    log_f64(x as f64) as f32
}

/// `ln(1 + x)` of an f32, in f64: `1 + x` is exact unless |x| < 2^-29,
/// and `log(u) * x / (u - 1)` with `u = 1 + x` corrects that rounding.
#[inline(always)]
pub(crate) fn log1p_f32(x: f32) -> f32 {
    let x = x as f64;
    let u = 1.0 + x;
    let y = if u == 1.0 || u == f64::INFINITY {
        x
    } else {
        log_f64(u) * (x / (u - 1.0))
    };
    y as f32
}

/// `ln x` of an f64: fdlibm's `__ieee754_log` (error below 1 ulp) with
/// its branches turned into selects.
///
/// Subnormals are scaled by 2^54 first. fdlibm picks between two ways of
/// combining the pieces by the leading mantissa bits; both are computed
/// and one is selected. Zero, negatives, infinity and NaN are selected
/// at the end.
#[inline(always)]
pub(crate) fn log_f64(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const LG: [f64; 7] = [
        6.666_666_666_666_735_130e-1,
        3.999_999_999_940_941_908e-1,
        2.857_142_874_366_239_149e-1,
        2.222_219_843_214_978_396e-1,
        1.818_357_216_161_805_012e-1,
        1.531_383_769_920_937_332e-1,
        1.479_819_860_511_658_591e-1,
    ];
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * 18014398509481984.0 } else { x };
    let bits = xs.to_bits();
    let hx = (bits >> 32) as i64 & 0x000f_ffff;
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1023 - if tiny { 54 } else { 0 };
    // Mantissas from sqrt(2) up are halved (exponent 0x3fe) and k bumped.
    let i = (hx + 0x95f64) & 0x10_0000;
    let m = f64::from_bits((((hx | (i ^ 0x3ff0_0000)) as u64) << 32) | (bits & 0xffff_ffff));
    let k = (exp + (i >> 20)) as f64;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    let hfsq = 0.5 * f * f;
    let wide = (hx - 0x6147a) | (0x6b851 - hx) > 0;
    let y = if wide {
        k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
    } else {
        k * LN2_HI - ((s * (f - r) - k * LN2_LO) - f)
    };
    if x > 0.0 && x < f64::INFINITY {
        y
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else if x < 0.0 {
        f64::NAN
    } else {
        x + x
    }
}
