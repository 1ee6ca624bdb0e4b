//! c64 in WGSL: a `vec2<f32>` (real, imaginary), and the complex
//! functions built from the f32 library of [`super::math_exp`] and
//! [`super::math_trig`] (the drivers' built-ins are not accurate enough).
//!
//! The special values (infinite or NaN components) follow C99 Annex G as
//! FreeBSD's msun implements it (what NumPy returns); multiplication,
//! division (Smith's algorithm), reciprocal, sign, `pow`, `log1p` and
//! `expm1` are NumPy's formulas, the inverse functions Kahan's; `square`
//! and products of finite values overflow only where the host's f64
//! results do. NaNs are produced explicitly, never as `y - y` or `0 / 0`:
//! shader compilers fold those to 0.
//!
//! Overflow is avoided where the result is finite: `abs` through `hypot`,
//! `exp`/`sinh`/`cosh` for large real parts through `e^(x/2)` twice,
//! `sqrt`, `sign`, `log` and division by rescaling, the inverse functions
//! by their asymptotic forms far from 0. Cancellation is avoided where it
//! costs accuracy: `ln |z|` near the unit circle is `log1p(x^2 + y^2 - 1)`
//! in double-float, likewise `log1p` and `atanh`.
//!
//! Only c64 is generated: c128 would be this library written over f64
//! (whose real functions [`super::math_f64`] has), which is not done yet,
//! so devices do not declare it (see [`super::dtype`]).

use super::dtype::Repr;
use super::exprs::Expr;
use anydev_ops::{BinaryOp, DType, UnaryOp};

/// The WGSL library, included in every kernel with a c64 operand; it uses
/// the f32 helpers and math library.
pub const LIBRARY: &str = r#"
fn c64_mul_plain(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// NumPy's formula. A component that overflows although neither factor
// has a NaN (a partial product overflowed; the host, computing in f64, may
// still land in range, as in (3e38 + 3e38i)(2 + 2i)) is recomputed with
// both factors scaled by 2^-66 and scaled back by 2^132. The scale is
// chosen at run time so that the compiler cannot fold the two factors of
// 2^66 into an infinite constant.
fn c64_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = c64_mul_plain(a, b);
  let redo = !isfinite_f32(p.x) || !isfinite_f32(p.y);
  // Beside an infinite factor too: (1 - 2i)(-inf + 3e38i) is -inf + inf
  // (NaN) unscaled, where the host's f64 gives -inf. Scaling by powers of
  // two changes no infinity or NaN that the factors themselves make.
  let rescue = redo && !c64_isnan(a) && !c64_isnan(b);
  let down = select(1.0f, 1.3552527156068805e-20f, rescue);
  let up = select(1.0f, 7.378697629483821e19f, rescue);
  let q = (c64_mul_plain(a * down, b * down) * up) * up;
  return vec2<f32>(select(p.x, q.x, rescue && !isfinite_f32(p.x)), select(p.y, q.y, rescue && !isfinite_f32(p.y)));
}
// x^2 - y^2 + 2xy i, the real part as (x - y)(x + y) where x^2 - y^2
// overflows (to inf or inf - inf) and the result may not, as the host's
// f64 does not; elsewhere x^2 - y^2, whose zeros have NumPy's signs. For
// finite x and y a zero factor gives +0, the host's x^2 - y^2, even when
// the other factor overflowed (x = y = 2e38). The smaller factor of 2xy
// is doubled, so 2xy overflows only where it is out of range
// (2 * 3e38 * 1e-37 is 60, not inf), and is rounded once.
fn c64_square(a: vec2<f32>) -> vec2<f32> {
  let re = a.x * a.x - a.y * a.y;
  let d = a.x - a.y;
  let s = a.x + a.y;
  let cancels = c64_isfinite(a) && (iszero_f32(d) || iszero_f32(s));
  let factored = select(d * s, 0.0f, cancels);
  let x_smaller = abs(a.x) < abs(a.y);
  let im = (2.0f * select(a.y, a.x, x_smaller)) * select(a.x, a.y, x_smaller);
  return vec2<f32>(select(re, factored, !isfinite_f32(re)), im);
}
// x / +0 without dividing (compilers fold 0 / y to 0).
fn c64_by_zero(v: f32) -> f32 { return select(copysign_f32(inf_f32(), v), nan_f32(), iszero_f32(v) || isnan_f32(v)); }
// Smith's algorithm, as NumPy divides: the ratio of b's components, the
// larger one dividing. a and b are each scaled down when large, so that
// the sums before the division cannot overflow unless the quotient does
// (b's denominator b.x + b.y * rat reaches 2|b|: (3e38 + 3e38i) / itself
// is 1, not 0).
fn c64_div(a: vec2<f32>, b_in: vec2<f32>) -> vec2<f32> {
  let big_a = max(abs(a.x), abs(a.y)) > 1.0e38f;
  let big_b = max(abs(b_in.x), abs(b_in.y)) > 1.0e38f;
  let n = select(a, a * 0.25f, big_a);
  let b = select(b_in, b_in * 0.25f, big_b);
  let k = select(1.0f, 4.0f, big_a) * select(1.0f, 0.25f, big_b);
  let br = abs(b.x);
  let bi = abs(b.y);
  if (br >= bi) {
    if (iszero_f32(br) && iszero_f32(bi)) { return vec2<f32>(c64_by_zero(a.x), c64_by_zero(a.y)); }
    let rat = b.y / b.x;
    let d = b.x + b.y * rat;
    return vec2<f32>(((n.x + n.y * rat) / d) * k, ((n.y - n.x * rat) / d) * k);
  }
  let rat = b.x / b.y;
  let d = b.y + b.x * rat;
  return vec2<f32>(((n.x * rat + n.y) / d) * k, ((n.y * rat - n.x) / d) * k);
}
fn c64_nan() -> vec2<f32> { return vec2<f32>(nan_f32(), nan_f32()); }
// NumPy's 1 / z: Smith's ratio of the components, NaN for 0 (not the
// infinity of 1 / 0: NumPy divides 0 by 0 there).
fn c64_reciprocal(z: vec2<f32>) -> vec2<f32> {
  if (iszero_f32(z.x) && iszero_f32(z.y)) { return c64_nan(); }
  if (abs(z.y) <= abs(z.x)) {
    let r = z.y / z.x;
    let d = z.x + z.y * r;
    return vec2<f32>(1.0f / d, -r / d);
  }
  let r = z.x / z.y;
  let d = z.y + z.x * r;
  return vec2<f32>(r / d, -1.0f / d);
}
fn c64_abs(a: vec2<f32>) -> f32 { return hypot_f32(a.x, a.y); }
fn c64_nonzero(a: vec2<f32>) -> bool { return (cast_bool_f32(a.x) | cast_bool_f32(a.y)) != 0u; }
fn c64_isnan(a: vec2<f32>) -> bool { return isnan_f32(a.x) || isnan_f32(a.y); }
fn c64_isinf(a: vec2<f32>) -> bool { return isinf_f32(a.x) || isinf_f32(a.y); }
fn c64_isfinite(a: vec2<f32>) -> bool { return isfinite_f32(a.x) && isfinite_f32(a.y); }
fn c64_round(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(round_f32(a.x), round_f32(a.y)); }
// z / |z|, 0 for 0; NaN when a component is NaN (even beside an infinity,
// as the Array API says) or both are infinite; an infinite component
// alone gives its sign.
fn c64_sign(a: vec2<f32>) -> vec2<f32> {
  if (isnan_f32(a.x) || isnan_f32(a.y)) { return c64_nan(); }
  let h = hypot_f32(a.x, a.y);
  if (isinf_f32(h) && c64_isfinite(a)) {
    // |z| overflows but z does not: rescaled.
    let s = a * 0.25f;
    return s / hypot_f32(s.x, s.y);
  }
  if (isinf_f32(h)) {
    if (isinf_f32(a.x)) {
      if (isinf_f32(a.y)) { return c64_nan(); }
      return vec2<f32>(copysign_f32(1.0f, a.x), 0.0f);
    }
    return vec2<f32>(0.0f, copysign_f32(1.0f, a.y));
  }
  if (iszero_f32(h)) { return vec2<f32>(0.0f, 0.0f); }
  return vec2<f32>(a.x / h, a.y / h);
}
fn c64_sqrt(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (iszero_f32(x) && iszero_f32(y)) { return vec2<f32>(0.0f, y); }
  if (isinf_f32(y)) { return vec2<f32>(inf_f32(), y); }
  if (isnan_f32(x)) { return vec2<f32>(x, nan_f32()); }
  if (isinf_f32(x)) {
    if (signbit_f32(x)) { return vec2<f32>(select(0.0f, nan_f32(), isnan_f32(y)), copysign_f32(inf_f32(), y)); }
    return vec2<f32>(x, select(copysign_f32(0.0f, y), y, isnan_f32(y)));
  }
  if (isnan_f32(y)) { return c64_nan(); }
  // Rescaled so that |x| + |z| neither overflows nor loses subnormal bits.
  let m = max(abs(x), abs(y));
  var xs = x;
  var ys = y;
  var s = 1.0f;
  if (m > 1.0e38f) {
    xs = x * 0.25f;
    ys = y * 0.25f;
    s = 2.0f;
  } else if (m < 7.888609e-31f) {
    xs = x * 1.8446744e19f;
    ys = y * 1.8446744e19f;
    s = 2.3283064e-10f;
  }
  let t = sqrt(0.5f * (abs(xs) + hypot_f32(xs, ys)));
  if (x >= 0.0f) { return vec2<f32>(t * s, (ys / (2.0f * t)) * s); }
  return vec2<f32>((abs(ys) / (2.0f * t)) * s, copysign_f32(t * s, y));
}
fn c64_exp(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (iszero_f32(y)) { return vec2<f32>(exp_f32(x), y); }
  if (iszero_f32(x)) { return vec2<f32>(cos_f32(y), sin_f32(y)); }
  if (!isfinite_f32(y)) {
    if (!isinf_f32(x)) { return c64_nan(); }
    if (signbit_f32(x)) { return vec2<f32>(0.0f, copysign_f32(0.0f, y)); }
    return vec2<f32>(x, nan_f32());
  }
  let c = cos_f32(y);
  let s = sin_f32(y);
  if (x > 88.0f && isfinite_f32(x)) {
    // e^x overflows before its product with cos y or sin y does.
    let h = exp_f32(0.5f * x);
    return vec2<f32>((c * h) * h, (s * h) * h);
  }
  let e = exp_f32(x);
  return vec2<f32>(e * c, e * s);
}
fn c64_log(z: vec2<f32>) -> vec2<f32> {
  let ax = abs(z.x);
  let ay = abs(z.y);
  let arg = atan2_f32(z.y, z.x);
  if (isinf_f32(ax) || isinf_f32(ay)) { return vec2<f32>(inf_f32(), arg); }
  if (isnan_f32(ax) || isnan_f32(ay)) { return c64_nan(); }
  if (max(ax, ay) > 1.0e38f) {
    return vec2<f32>(log_f32(hypot_f32(ax * 0.25f, ay * 0.25f)) + 1.3862944f, arg);
  }
  let h = hypot_f32(ax, ay);
  if (h > 0.7f && h < 1.5f) {
    // ln |z| = log1p(x^2 + y^2 - 1) / 2, the argument in double-float.
    let s = df_add(df_add(df_prod(ax, ax), vec2<f32>(-1.0f, 0.0f)), df_prod(ay, ay));
    return vec2<f32>(0.5f * log1p_f32(s.x + s.y), arg);
  }
  return vec2<f32>(log_f32(h), arg);
}
fn c64_log1p(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (!(max(abs(x), abs(y)) < 0.5f)) { return c64_log(vec2<f32>(1.0f + x, y)); }
  // ln |1 + z| = log1p(2x + x^2 + y^2) / 2, the argument in double-float.
  let s = df_add(df_add(vec2<f32>(2.0f * x, 0.0f), df_prod(x, x)), df_prod(y, y));
  return vec2<f32>(0.5f * log1p_f32(s.x + s.y), atan2_f32(y, 1.0f + x));
}
// NumPy's: (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y.
fn c64_expm1(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (iszero_f32(y)) { return vec2<f32>(expm1_f32(x), y); }
  if (!isfinite_f32(x) || !isfinite_f32(y) || x > 88.0f) { return c64_exp(z) - vec2<f32>(1.0f, 0.0f); }
  let a = sin_f32(0.5f * y);
  return vec2<f32>(expm1_f32(x) * cos_f32(y) - 2.0f * a * a, exp_f32(x) * sin_f32(y));
}
fn c64_sinh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (isfinite_f32(x) && isfinite_f32(y)) {
    if (iszero_f32(y)) { return vec2<f32>(sinh_f32(x), y); }
    let c = cos_f32(y);
    let s = sin_f32(y);
    if (abs(x) > 88.0f) {
      let h = exp_f32(0.5f * abs(x));
      return vec2<f32>(copysign_f32(1.0f, x) * (((0.5f * c) * h) * h), ((0.5f * s) * h) * h);
    }
    return vec2<f32>(sinh_f32(x) * c, cosh_f32(x) * s);
  }
  if (iszero_f32(x)) { return vec2<f32>(x, nan_f32()); }
  if (iszero_f32(y)) { return vec2<f32>(x, y); }
  if (isinf_f32(x)) {
    if (isfinite_f32(y)) { return vec2<f32>(x * cos_f32(y), inf_f32() * sin_f32(y)); }
    return vec2<f32>(inf_f32(), nan_f32());
  }
  return c64_nan();
}
fn c64_cosh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (isfinite_f32(x) && isfinite_f32(y)) {
    if (iszero_f32(y)) { return vec2<f32>(cosh_f32(x), copysign_f32(1.0f, x) * y); }
    let c = cos_f32(y);
    let s = sin_f32(y);
    if (abs(x) > 88.0f) {
      let h = exp_f32(0.5f * abs(x));
      return vec2<f32>(((0.5f * c) * h) * h, copysign_f32(1.0f, x) * (((0.5f * s) * h) * h));
    }
    return vec2<f32>(cosh_f32(x) * c, sinh_f32(x) * s);
  }
  if (isnan_f32(x)) { return vec2<f32>(x, select(nan_f32(), y, iszero_f32(y))); }
  // NumPy (glibc) gives +0 beside the NaN, whatever the zero's sign.
  if (iszero_f32(x)) { return vec2<f32>(nan_f32(), 0.0f); }
  if (iszero_f32(y)) { return vec2<f32>(x * x, copysign_f32(0.0f, x) * y); }
  if (isinf_f32(x)) {
    if (isfinite_f32(y)) { return vec2<f32>(inf_f32() * cos_f32(y), x * sin_f32(y)); }
    return vec2<f32>(inf_f32(), nan_f32());
  }
  return c64_nan();
}
// Kahan's formula (as FreeBSD's ctanhf): with t = tan y, s = sinh x,
// tanh z = (s sqrt(1 + s^2) (1 + t^2) + i t) / (1 + (1 + t^2) s^2).
fn c64_tanh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (isnan_f32(x)) { return vec2<f32>(x, select(nan_f32(), y, iszero_f32(y))); }
  if (isinf_f32(x)) {
    let im = select(sin_f32(y) * cos_f32(y), y, isinf_f32(y));
    return vec2<f32>(copysign_f32(1.0f, x), copysign_f32(0.0f, im));
  }
  if (!isfinite_f32(y)) { return vec2<f32>(select(nan_f32(), x, iszero_f32(x)), nan_f32()); }
  if (abs(x) >= 11.0f) {
    let e = exp_f32(-abs(x));
    return vec2<f32>(copysign_f32(1.0f, x), 4.0f * sin_f32(y) * cos_f32(y) * e * e);
  }
  let t = tan_f32(y);
  let beta = 1.0f + t * t;
  let s = sinh_f32(x);
  let rho = sqrt(1.0f + s * s);
  let d = 1.0f + beta * s * s;
  return vec2<f32>((beta * rho * s) / d, t / d);
}
// a * b as C99's _Complex multiplication (Annex G.5.1): where the plain
// formula gives NaN in both parts but an operand is infinite, or a partial
// product overflowed, the result is an infinity. An infinite component
// becomes +-1 and its partner +-0, a NaN beside the other operand's
// infinity +-0.
fn c64_unit(t: f32) -> f32 { return copysign_f32(select(0.0f, 1.0f, isinf_f32(t)), t); }
fn c64_zero_nan(t: f32) -> f32 { return select(t, copysign_f32(0.0f, t), isnan_f32(t)); }
fn c64_mul_annex_g(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = c64_mul_plain(a, b);
  if (!(isnan_f32(p.x) && isnan_f32(p.y))) { return p; }
  var z = a;
  var w = b;
  var again = false;
  if (isinf_f32(z.x) || isinf_f32(z.y)) {
    z = vec2<f32>(c64_unit(z.x), c64_unit(z.y));
    w = vec2<f32>(c64_zero_nan(w.x), c64_zero_nan(w.y));
    again = true;
  }
  if (isinf_f32(w.x) || isinf_f32(w.y)) {
    w = vec2<f32>(c64_unit(w.x), c64_unit(w.y));
    z = vec2<f32>(c64_zero_nan(z.x), c64_zero_nan(z.y));
    again = true;
  }
  let overflowed = isinf_f32(z.x * w.x) || isinf_f32(z.y * w.y) || isinf_f32(z.x * w.y) || isinf_f32(z.y * w.x);
  if (!again && overflowed) {
    z = vec2<f32>(c64_zero_nan(z.x), c64_zero_nan(z.y));
    w = vec2<f32>(c64_zero_nan(w.x), c64_zero_nan(w.y));
    again = true;
  }
  if (!again) { return p; }
  return inf_f32() * c64_mul_plain(z, w);
}
// NumPy's: a^0 = 1; 0^b is 0 where b's real part is positive and NaN
// otherwise; integer real exponents below 100 in magnitude by repeated
// squaring (negative ones through the reciprocal); else C's cpow,
// exp(b log a) with C99's multiplication.
fn c64_pow(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  if (iszero_f32(b.x) && iszero_f32(b.y)) { return vec2<f32>(1.0f, 0.0f); }
  if (iszero_f32(a.x) && iszero_f32(a.y)) {
    if (b.x > 0.0f) { return vec2<f32>(0.0f, 0.0f); }
    return c64_nan();
  }
  if (iszero_f32(b.y) && trunc(b.x) == b.x && abs(b.x) < 100.0f) {
    var n = u32(abs(b.x));
    var p = a;
    var r = vec2<f32>(1.0f, 0.0f);
    var first = true;
    loop {
      if ((n & 1u) != 0u) {
        r = select(c64_mul(r, p), p, first);
        first = false;
      }
      n = n >> 1u;
      if (n == 0u) { break; }
      p = c64_mul(p, p);
    }
    if (b.x < 0.0f) { return c64_div(vec2<f32>(1.0f, 0.0f), r); }
    return r;
  }
  return c64_exp(c64_mul_annex_g(b, c64_log(a)));
}
// Kahan's asin for finite |z| <= 1e4: with u = sqrt(1 - z), v = sqrt(1 + z),
// asin z = atan(x / Re(u v)) + i asinh(Im(conj(u) v)).
fn c64_asin_kahan(z: vec2<f32>) -> vec2<f32> {
  let u = c64_sqrt(vec2<f32>(1.0f - z.x, -z.y));
  let v = c64_sqrt(vec2<f32>(1.0f + z.x, z.y));
  return vec2<f32>(atan2_f32(z.x, u.x * v.x - u.y * v.y), asinh_f32(u.x * v.y - u.y * v.x));
}
fn c64_asinh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (isnan_f32(x)) {
    if (iszero_f32(y)) { return z; }
    // Annex G leaves the sign open; the host kernels take y's.
    if (isinf_f32(y)) { return vec2<f32>(copysign_f32(inf_f32(), y), nan_f32()); }
    return c64_nan();
  }
  if (isinf_f32(x) || isinf_f32(y)) { return vec2<f32>(copysign_f32(inf_f32(), x), atan2_f32(y, abs(x))); }
  if (isnan_f32(x) || isnan_f32(y)) { return vec2<f32>(nan_f32(), select(nan_f32(), y, iszero_f32(y))); }
  if (max(abs(x), abs(y)) > 1.0e4f) {
    // ln(2z) for Re z >= 0 (asinh is odd): the rest is below 1 / (4 |z|^2).
    let w = c64_log(vec2<f32>(abs(x), y));
    return vec2<f32>(copysign_f32(w.x + 6.931472e-01f, x), w.y);
  }
  // asinh z = -i asin(iz).
  let w = c64_asin_kahan(vec2<f32>(-y, x));
  return vec2<f32>(w.y, -w.x);
}
// asin z = -i asinh(iz).
fn c64_asin(z: vec2<f32>) -> vec2<f32> {
  // Annex G leaves the sign open; the host kernels take x's.
  if (isinf_f32(z.x) && isnan_f32(z.y)) { return vec2<f32>(nan_f32(), copysign_f32(inf_f32(), z.x)); }
  let w = c64_asinh(vec2<f32>(-z.y, z.x));
  return vec2<f32>(w.y, -w.x);
}
fn c64_acos(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  if (isinf_f32(x) || isinf_f32(y)) { return vec2<f32>(atan2_f32(abs(y), x), -copysign_f32(inf_f32(), y)); }
  if (isnan_f32(x) || isnan_f32(y)) {
    if (iszero_f32(x)) { return vec2<f32>(1.5707964f, nan_f32()); }
    return c64_nan();
  }
  if (max(abs(x), abs(y)) > 1.0e4f) {
    // pi/2 - asin z: no cancellation that matters next to |acos z| > 9.
    let w = c64_asin(z);
    return vec2<f32>((1.5707964f - w.x) + -4.371139e-08f, -w.y);
  }
  // Kahan: 2 atan(Re sqrt(1 - z) / Re sqrt(1 + z)) + i asinh(Im(conj(sqrt(1 + z)) sqrt(1 - z))).
  let u = c64_sqrt(vec2<f32>(1.0f - x, -y));
  let v = c64_sqrt(vec2<f32>(1.0f + x, y));
  return vec2<f32>(2.0f * atan2_f32(u.x, v.x), asinh_f32(v.x * u.y - v.y * u.x));
}
// acosh z = +-i acos z, the sign making the real part non-negative.
fn c64_acosh(z: vec2<f32>) -> vec2<f32> {
  // Annex G: NaN + NaN i for finite x; the Array API: NaN + i pi/2 for a zero x.
  if (isnan_f32(z.y) && isfinite_f32(z.x)) {
    if (iszero_f32(z.x)) { return vec2<f32>(nan_f32(), 1.5707964f); }
    return c64_nan();
  }
  let w = c64_acos(z);
  if (isnan_f32(w.y)) { return vec2<f32>(abs(w.y), w.x); }
  if (signbit_f32(w.y)) { return vec2<f32>(-w.y, w.x); }
  return vec2<f32>(w.y, -w.x);
}
// Kahan: atanh z = log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4 (sign of x)
// + i atan2(2y, 1 - x^2 - y^2) / 2, the latter's sum in double-float.
fn c64_atanh(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let pio2 = 1.5707964f;
  if (isinf_f32(x) || isinf_f32(y)) {
    return vec2<f32>(copysign_f32(0.0f, x), select(copysign_f32(pio2, y), nan_f32(), isnan_f32(y)));
  }
  if (isnan_f32(x) || isnan_f32(y)) {
    if (iszero_f32(x)) { return vec2<f32>(x, nan_f32()); }
    return c64_nan();
  }
  let ax = abs(x);
  if (max(ax, abs(y)) > 1.0e18f) {
    // 1/z + i pi/2 (sign of y): the rest is below 1 / (3 |z|^3).
    return vec2<f32>(c64_div(vec2<f32>(1.0f, 0.0f), z).x, copysign_f32(pio2, y));
  }
  let t = 1.0f - ax;
  let den = t * t + y * y;
  var re: f32;
  if (den < 1.0e-30f) {
    // |z - 1| tiny: ln(4 / den) / 4 = (ln 2 - ln |1 - z|) / 2, no overflow.
    re = 0.5f * (6.931472e-01f - log_f32(hypot_f32(t, y)));
  } else {
    re = 0.25f * log1p_f32(4.0f * ax / den);
  }
  let p = df_prod(ax, ax);
  let q = df_prod(y, y);
  let s = df_add(df_add(vec2<f32>(1.0f, 0.0f), vec2<f32>(-p.x, -p.y)), vec2<f32>(-q.x, -q.y));
  return vec2<f32>(copysign_f32(re, x), 0.5f * atan2_f32(2.0f * y, s.x + s.y));
}
// atan z = -i atanh(iz).
fn c64_atan(z: vec2<f32>) -> vec2<f32> {
  let w = c64_atanh(vec2<f32>(-z.y, z.x));
  return vec2<f32>(w.y, -w.x);
}
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz).
fn c64_sin(z: vec2<f32>) -> vec2<f32> {
  // Annex G leaves the sign open; NumPy (glibc) gives +inf.
  if (!isfinite_f32(z.x) && isinf_f32(z.y)) { return vec2<f32>(nan_f32(), inf_f32()); }
  let w = c64_sinh(vec2<f32>(-z.y, z.x));
  return vec2<f32>(w.y, -w.x);
}
fn c64_cos(z: vec2<f32>) -> vec2<f32> { return c64_cosh(vec2<f32>(-z.y, z.x)); }
fn c64_tan(z: vec2<f32>) -> vec2<f32> {
  let w = c64_tanh(vec2<f32>(-z.y, z.x));
  return vec2<f32>(w.y, -w.x);
}
"#;

/// `op(a)` for complex dtype `r`, or `None` where it is not generated.
pub fn unary(op: UnaryOp, r: &Repr) -> Option<Expr> {
    use UnaryOp::*;
    if r.dtype != DType::C64 {
        return None;
    }
    let v = |s: &str| Some(Expr::Value(s.to_owned()));
    let b = |s: &str| Some(Expr::Bool(s.to_owned()));
    match op {
        Abs => v("c64_abs(a)"),
        Real => v("a.x"),
        Imag => v("a.y"),
        Conj => v("vec2<f32>(a.x, -a.y)"),
        Negative => v("-a"),
        Square => v("c64_square(a)"),
        Reciprocal => v("c64_reciprocal(a)"),
        Sign => v("c64_sign(a)"),
        Round => v("c64_round(a)"),
        IsNan => b("c64_isnan(a)"),
        IsInf => b("c64_isinf(a)"),
        IsFinite => b("c64_isfinite(a)"),
        Sqrt => v("c64_sqrt(a)"),
        Exp => v("c64_exp(a)"),
        Expm1 => v("c64_expm1(a)"),
        Log => v("c64_log(a)"),
        Log1p => v("c64_log1p(a)"),
        // log z / ln 2 and log z / ln 10, each component rounded once more.
        Log2 => v("(c64_log(a) * 1.442695f)"),
        Log10 => v("(c64_log(a) * 0.4342945f)"),
        Sin => v("c64_sin(a)"),
        Cos => v("c64_cos(a)"),
        Tan => v("c64_tan(a)"),
        Sinh => v("c64_sinh(a)"),
        Cosh => v("c64_cosh(a)"),
        Tanh => v("c64_tanh(a)"),
        Asin => v("c64_asin(a)"),
        Acos => v("c64_acos(a)"),
        Atan => v("c64_atan(a)"),
        Asinh => v("c64_asinh(a)"),
        Acosh => v("c64_acosh(a)"),
        Atanh => v("c64_atanh(a)"),
        // No order (floor, ceil, trunc, signbit) and no bits.
        Floor | Ceil | Trunc | SignBit | BitwiseInvert | LogicalNot => None,
    }
}

/// `op(a, b)` for complex dtype `r`, or `None` where it is not generated.
pub fn binary(op: BinaryOp, r: &Repr) -> Option<Expr> {
    use BinaryOp::*;
    if r.dtype != DType::C64 {
        return None;
    }
    let v = |s: &str| Some(Expr::Value(s.to_owned()));
    match op {
        Add => v("(a + b)"),
        Subtract => v("(a - b)"),
        Multiply => v("c64_mul(a, b)"),
        Divide => v("c64_div(a, b)"),
        Pow => v("c64_pow(a, b)"),
        Equal => Some(Expr::Bool("all(a == b)".into())),
        NotEqual => Some(Expr::Bool("!all(a == b)".into())),
        _ => None,
    }
}

/// WGSL converting compute value `v` between a complex and another dtype
/// (at least one of `src`, `dst` complex): real to complex has imaginary
/// part 0, complex to bool is `!= 0`, complex to another real dtype takes
/// the real part.
pub fn cast(src: &Repr, dst: &Repr, v: &str) -> String {
    let component = |d: &Repr| Repr::of(d.dtype.real_dtype());
    match (src.dtype.is_complex(), dst.dtype.is_complex()) {
        (true, true) if src.compute == dst.compute => v.to_owned(),
        (true, true) => format!("{}({v})", dst.compute),
        (false, true) => {
            let c = component(dst);
            format!("{}({}, {}(0))", dst.compute, super::exprs::cast(src, &c, v), c.compute)
        }
        _ if dst.is_bool() => format!("select(0u, 1u, {})", nonzero(src, v)),
        _ => super::exprs::cast(&component(src), dst, &format!("({v}).x")),
    }
}

/// WGSL bool: whether complex `v` is non-zero (NaN components count).
pub fn nonzero(r: &Repr, v: &str) -> String {
    let t = Repr::of(r.dtype.real_dtype()).compute;
    format!("((cast_bool_{t}(({v}).x) | cast_bool_{t}(({v}).y)) != 0u)")
}
