//! f64 transcendental functions in WGSL. WGSL has no f64 built-ins beyond
//! arithmetic, `sqrt`, `floor` and the like (Vulkan's `GLSL.std.450` `Exp`,
//! `Log` and `Sin` take 16- and 32-bit floats only), so `exp`, `expm1`,
//! `log`, `log1p`, `log2`, `log10`, `sin`, `cos`, `tan`, `asin`, `acos`,
//! `atan`, `atan2`, `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh`,
//! `pow` and `logaddexp` are written out here, after fdlibm's algorithms
//! (Sun's, as FreeBSD's libm carries them): every float function of the
//! op vocabulary. Their bounds are in `tests/f64_math.rs` and
//! docs/accuracy.md.
//!
//! As in [`super::math_exp`]: results below the normal range are rounded
//! from the bits, so a driver that flushes subnormals in arithmetic cannot
//! lose them; intermediate values whose rounding error a later step
//! recovers go through `keep_f64`, which no compiler can see through
//! (Mesa folds `(a + b) - a` to `b`); and nothing relies on fused
//! multiply-adds.

/// The WGSL library; it uses the f64 float helpers of the prelude
/// (`isnan_f64`, `isinf_f64`, `iszero_f64`, `signbit_f64`, `inf_f64`,
/// `nan_f64`, `copysign_f64`, `round_f64`).
pub const LIBRARY: &str = r#"
// x, but opaque to the shader compiler (see keep_f32): mapping one NaN
// pattern to another changes no number, yet no compiler can prove it an
// identity and fold the compensated sums around it.
fn keep_f64(x: f64) -> f64 {
  let u = bitcast<u64>(x);
  return bitcast<f64>(select(u, 0x7ff8000000000000lu, u == 0x7ffffffffffffffflu));
}

// a + b exactly, as the rounded sum and what it lost.
fn two_sum_f64(a: f64, b: f64) -> vec2<f64> {
  let s = keep_f64(a + b);
  let v = keep_f64(s - a);
  return vec2<f64>(s, (a - (s - v)) + (b - v));
}

// 2^n for -1022 <= n <= 1023.
fn pow2_f64(n: i32) -> f64 { return bitcast<f64>(u64(u32(n + 1023)) << 52u); }

// y 2^k for y in [0.5, 2) and k >= -1075, rounded once: the exponent is
// added in the bits, and a result below the normal range is the integer
// nearest y 2^(k + 1074) (ties to even), which is its bit pattern.
fn scale_f64(y: f64, k: i32) -> f64 {
  let b = bitcast<u64>(y);
  let e = i32(b >> 52u) + k;
  let normal = bitcast<f64>(b + (u64(u32(k)) << 52u));
  let tiny = bitcast<f64>(u64(round_f64(y * pow2_f64(clamp(k + 1074, -1, 60)))));
  return select(select(normal, tiny, e <= 0), inf_f64(), e >= 2047);
}

// The reduction of exp and expm1: x = k ln 2 + hi - lo, with ln 2's high
// part 32 bits long so that k times it is exact.
struct ExpReduction64 { k: f64, hi: f64, lo: f64 }
fn exp_reduce_f64(x: f64) -> ExpReduction64 {
  let k = floor(x * 1.44269504088896338700e+00lf + 0.5lf);
  return ExpReduction64(k, keep_f64(x - k * 6.93147180369123816490e-01lf), k * 1.90821492927058770002e-10lf);
}

// fdlibm's exp: a rational approximation of exp(r) on |r| <= ln 2 / 2.
fn exp_f64(a: f64) -> f64 {
  // Below -745.2 every result rounds to zero; the clamp keeps k >= -1075.
  let x = clamp(a, -745.2lf, 710.0lf);
  let p = exp_reduce_f64(x);
  let r = p.hi - p.lo;
  let t = r * r;
  let c = r - t * (1.66666666666666019037e-01lf + t * (-2.77777777770155933842e-03lf
    + t * (6.61375632143793436117e-05lf + t * (-1.65339022054652515390e-06lf
    + t * 4.13813679705723846039e-08lf))));
  let y = 1.0lf - ((p.lo - (r * c) / (2.0lf - c)) - p.hi);
  return scale_f64(y, i32(p.k));
}

// expm1: the reduction as for exp, expm1(r) = r + r^2 q(r) by Taylor to
// degree 13 (the remainder is below 2^-56 relative on |r| <= ln 2 / 2),
// then 2^k (1 + expm1(r)) - 1 as ((2^k - 1) + 2^k r) + 2^k (r^2 q + ...),
// the first sum exact in two parts (2^k - 1 is exact for |k| <= 53), so
// that only the last addition rounds.
fn expm1_f64(a: f64) -> f64 {
  let x = clamp(a, -40.0lf, 710.0lf);
  let p = exp_reduce_f64(x);
  let r = keep_f64(p.hi - p.lo);
  // What the rounding of r lost, carried to first order.
  let c = (p.hi - r) - p.lo;
  let q = 5.0e-01lf + r * (1.6666666666666666e-01lf + r * (4.1666666666666664e-02lf
    + r * (8.3333333333333332e-03lf + r * (1.3888888888888889e-03lf + r * (1.9841269841269841e-04lf
    + r * (2.4801587301587302e-05lf + r * (2.7557319223985893e-06lf + r * (2.7557319223985888e-07lf
    + r * (2.5052108385441720e-08lf + r * (2.0876756987868100e-09lf + r * 1.6059043836821613e-10lf))))))))));
  let tail = r * r * q + c * (1.0lf + r);
  let k = i32(p.k);
  let t = pow2_f64(clamp(k, -60, 60));
  let head = two_sum_f64(t - 1.0lf, t * r);
  let mid = head.x + (head.y + t * tail);
  let big = scale_f64(1.0lf + (r + tail), k);
  let y = select(select(mid, -1.0lf, k < -53), big, k > 53);
  // |a| < 2^-54: a itself, which keeps -0.
  return select(y, a, abs(a) < 5.5511151231257827e-17lf);
}

// ln(1 + f) for sqrt(2)/2 - 1 <= f < sqrt(2) - 1, fdlibm's kernel: with
// s = f / (2 + f), ln(1 + f) = f - hfsq + s (hfsq + R(s^2)), hfsq = f^2 / 2.
struct Log1pKernel64 { hfsq: f64, r: f64 }
fn log1p_kernel_f64(f: f64) -> Log1pKernel64 {
  let s = f / (2.0lf + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (3.999999999940941908e-01lf + w * (2.222219843214978396e-01lf + w * 1.531383769920937332e-01lf));
  let t2 = z * (6.666666666666735130e-01lf + w * (2.857142874366239149e-01lf
    + w * (1.818357216161805012e-01lf + w * 1.479819860511658591e-01lf)));
  let hfsq = 0.5lf * f * f;
  return Log1pKernel64(hfsq, s * (hfsq + t2 + t1));
}

// x = 2^k (1 + f) for finite x > 0, subnormals included (their integer
// significand is exact in f64), 1 + f in [sqrt(2)/2, sqrt(2)).
struct LogSplit64 { k: f64, f: f64 }
fn log_split_f64(x: f64) -> LogSplit64 {
  var b = bitcast<u64>(x);
  var k = -1023;
  if (b < 0x10000000000000lu) {
    b = bitcast<u64>(f64(b));
    k = k - 1074;
  }
  k = k + i32(b >> 52u);
  let mant = b & 0xffffffffffffflu;
  // Significands from sqrt(2) up are halved.
  let up = (mant + 0x95f6400000000lu) & 0x10000000000000lu;
  let m = bitcast<f64>(mant | (up ^ 0x3ff0000000000000lu));
  return LogSplit64(f64(k + i32(up >> 52u)), m - 1.0lf);
}

// k ln 2 + ln(1 + f) + c, c a small correction.
fn log_sum_f64(k: f64, f: f64, c: f64) -> f64 {
  let l = log1p_kernel_f64(f);
  return k * 6.93147180369123816490e-01lf - ((l.hfsq - (l.r + (k * 1.90821492927058770002e-10lf + c))) - f);
}

// The special values of the logarithms of a: -inf at zero, NaN below it,
// +inf at +inf; `value` elsewhere.
fn log_special_f64(a: f64, value: f64) -> f64 {
  let b = bitcast<u64>(a);
  if ((b & 0x7ffffffffffffffflu) == 0lu) { return -inf_f64(); }
  if (b > 0x8000000000000000lu) { return nan_f64(); }
  return select(value, a, b == 0x7ff0000000000000lu);
}

fn log_f64(a: f64) -> f64 {
  let s = log_split_f64(a);
  return log_special_f64(a, log_sum_f64(s.k, s.f, 0.0lf));
}

// FreeBSD's log1p: f = a itself while 1 + a needs no scaling; otherwise
// u = 1 + a is split, and what its rounding lost is carried as c / u.
fn log1p_f64(a: f64) -> f64 {
  let u = keep_f64(1.0lf + a);
  let s = log_split_f64(u);
  let c = select(a - (u - 1.0lf), 1.0lf - (u - a), u >= 2.0lf) / u;
  let near = a > -2.9289321881345248e-01lf && a < 4.1421356237309503e-01lf;
  let v = select(log_sum_f64(s.k, s.f, c), log_sum_f64(0.0lf, a, 0.0lf), near);
  if (a == -1.0lf) { return -inf_f64(); }
  if (a < -1.0lf) { return nan_f64(); }
  // |a| < 2^-54, -0 included: a itself.
  return select(select(v, a, abs(a) < 5.5511151231257827e-17lf), a, a == inf_f64());
}

// FreeBSD's log2 and log10: ln(1 + f) as hi + lo with hi's low 32 bits
// cleared, so that its products with the constants' 32-bit high parts
// lose nothing, then k (or k log10 2) added in two parts.
struct LogParts64 { k: f64, hi: f64, lo: f64 }
fn log_parts_f64(a: f64) -> LogParts64 {
  let s = log_split_f64(a);
  let l = log1p_kernel_f64(s.f);
  let hi = bitcast<f64>(bitcast<u64>(s.f - l.hfsq) & 0xffffffff00000000lu);
  return LogParts64(s.k, hi, ((s.f - hi) - l.hfsq) + l.r);
}

fn log2_f64(a: f64) -> f64 {
  let p = log_parts_f64(a);
  let vhi = p.hi * 1.44269504072144627571e+00lf;
  var vlo = (p.lo + p.hi) * 1.67517131648865118353e-10lf + p.lo * 1.44269504072144627571e+00lf;
  let w = keep_f64(p.k + vhi);
  vlo = vlo + ((p.k - w) + vhi);
  return log_special_f64(a, vlo + w);
}

fn log10_f64(a: f64) -> f64 {
  let p = log_parts_f64(a);
  let vhi = p.hi * 4.34294481878168880939e-01lf;
  let y2 = p.k * 3.01029995663611771306e-01lf;
  var vlo = p.k * 3.69423907715893078616e-13lf + (p.lo + p.hi) * 2.50829467116452752298e-11lf
    + p.lo * 4.34294481878168880939e-01lf;
  let w = keep_f64(y2 + vhi);
  vlo = vlo + ((y2 - w) + vhi);
  return log_special_f64(a, vlo + w);
}

// The hyperbolic functions, fdlibm's: through expm1 near zero, where
// e^x and e^-x nearly cancel, and through exp (halved before squaring
// near the overflow threshold) beyond.
fn sinh_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= inf_f64() || x < 3.7252902984619141e-09lf) { return a; }
  let h = copysign_f64(0.5lf, a);
  if (x < 22.0lf) {
    let t = expm1_f64(x);
    if (x < 1.0lf) { return h * (2.0lf * t - t * t / (t + 1.0lf)); }
    return h * (t + t / (t + 1.0lf));
  }
  if (x < 7.09782712893383973096e+02lf) { return h * exp_f64(x); }
  let w = exp_f64(0.5lf * x);
  return (h * w) * w;
}

fn cosh_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= inf_f64()) { return x; }
  if (x < 3.4657359027997265e-01lf) {
    let t = expm1_f64(x);
    let w = 1.0lf + t;
    return 1.0lf + (t * t) / (w + w);
  }
  if (x < 22.0lf) {
    let t = exp_f64(x);
    return 0.5lf * t + 0.5lf / t;
  }
  if (x < 7.09782712893383973096e+02lf) { return 0.5lf * exp_f64(x); }
  let w = exp_f64(0.5lf * x);
  return (0.5lf * w) * w;
}

fn tanh_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x < 2.7755575615628914e-17lf) { return a; }
  var z = 1.0lf;
  if (x < 22.0lf) {
    if (x >= 1.0lf) {
      z = 1.0lf - 2.0lf / (expm1_f64(2.0lf * x) + 2.0lf);
    } else {
      let t = expm1_f64(-2.0lf * x);
      z = -t / (t + 2.0lf);
    }
  }
  return copysign_f64(z, a);
}

// The inverse hyperbolic functions, fdlibm's: logarithms of arguments
// rearranged so that nothing cancels.
fn asinh_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= inf_f64() || x < 3.7252902984619141e-09lf) { return a; }
  var w: f64;
  if (x > 268435456.0lf) {
    w = log_f64(x) + 6.93147180559945286227e-01lf;
  } else if (x > 2.0lf) {
    w = log_f64(2.0lf * x + 1.0lf / (sqrt(x * x + 1.0lf) + x));
  } else {
    let t = x * x;
    w = log1p_f64(x + t / (1.0lf + sqrt(1.0lf + t)));
  }
  return copysign_f64(w, a);
}

fn acosh_f64(a: f64) -> f64 {
  if (a < 1.0lf) { return nan_f64(); }
  if (a >= inf_f64()) { return a; }
  if (a > 268435456.0lf) { return log_f64(a) + 6.93147180559945286227e-01lf; }
  if (a > 2.0lf) { return log_f64(2.0lf * a - 1.0lf / (a + sqrt(a * a - 1.0lf))); }
  let t = a - 1.0lf;
  return log1p_f64(t + sqrt(2.0lf * t + t * t));
}

fn atanh_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x > 1.0lf) { return nan_f64(); }
  if (x == 1.0lf) { return copysign_f64(inf_f64(), a); }
  if (x < 3.7252902984619141e-09lf) { return a; }
  var t: f64;
  if (x < 0.5lf) {
    let d = x + x;
    t = 0.5lf * log1p_f64(d + d * x / (1.0lf - x));
  } else {
    t = 0.5lf * log1p_f64((x + x) / (1.0lf - x));
  }
  return copysign_f64(t, a);
}

// fdlibm's atan: |x| folded by one of four reference points (atan of
// 1/2, 1, 3/2, infinity, each in two parts) onto |t| < 7/16, then an odd
// polynomial of degree 23.
fn atan_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= 7.3786976294838206e+19lf) { return copysign_f64(1.57079632679489655800e+00lf, a); }
  if (x < 7.4505805969238281e-09lf) { return a; }
  var id = -1;
  var t = a;
  if (x >= 0.4375lf) {
    if (x < 0.6875lf) {
      id = 0;
      t = (2.0lf * x - 1.0lf) / (2.0lf + x);
    } else if (x < 1.1875lf) {
      id = 1;
      t = (x - 1.0lf) / (x + 1.0lf);
    } else if (x < 2.4375lf) {
      id = 2;
      t = (x - 1.5lf) / (1.0lf + 1.5lf * x);
    } else {
      id = 3;
      t = -1.0lf / x;
    }
  }
  let z = t * t;
  let w = z * z;
  let s1 = z * (3.33333333333329318027e-01lf + w * (1.42857142725034663711e-01lf
    + w * (9.09088713343650656196e-02lf + w * (6.66107313738753120669e-02lf
    + w * (4.97687799461593236017e-02lf + w * 1.62858201153657823623e-02lf)))));
  let s2 = w * (-1.99999999998764832476e-01lf + w * (-1.11111104054623557880e-01lf
    + w * (-7.69187620504482999495e-02lf + w * (-5.83357013379057348645e-02lf
    + w * -3.65315727442169155270e-02lf))));
  if (id < 0) { return t - t * (s1 + s2); }
  var hi = 1.57079632679489655800e+00lf;
  var lo = 6.12323399573676603587e-17lf;
  if (id == 0) {
    hi = 4.63647609000806093515e-01lf;
    lo = 2.26987774529616870924e-17lf;
  } else if (id == 1) {
    hi = 7.85398163397448278999e-01lf;
    lo = 3.06161699786838301793e-17lf;
  } else if (id == 2) {
    hi = 9.82793723247329054082e-01lf;
    lo = 1.39033110312309984516e-17lf;
  }
  return copysign_f64(hi - ((t * (s1 + s2) - lo) - t), a);
}

// fdlibm's rational approximation of (asin(x) - x) / x^3 in t = x^2,
// shared by asin and acos: p(t) / q(t).
fn asin_ratio_f64(t: f64) -> f64 {
  let p = t * (1.66666666666666657415e-01lf + t * (-3.25565818622400915405e-01lf
    + t * (2.01212532134862925881e-01lf + t * (-4.00555345006794114027e-02lf
    + t * (7.91534994289814532176e-04lf + t * 3.47933107596021167570e-05lf)))));
  let q = 1.0lf + t * (-2.40339491173441421878e+00lf + t * (2.02094576023350569471e+00lf
    + t * (-6.88283971605453293030e-01lf + t * 7.70381505559019352791e-02lf)));
  return p / q;
}

// s with its low 32 bits cleared: s^2 of it is exact.
fn high_half_f64(s: f64) -> f64 {
  return bitcast<f64>(bitcast<u64>(s) & 0xffffffff00000000lu);
}

// fdlibm's asin: the ratio directly below 1/2; above, through
// asin(x) = pi/2 - 2 asin(sqrt((1 - x) / 2)), with sqrt's rounding
// recovered from its high half.
fn asin_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x > 1.0lf) { return nan_f64(); }
  if (x < 7.4505805969238281e-09lf) { return a; }
  if (x < 0.5lf) { return a + a * asin_ratio_f64(a * a); }
  let t = (1.0lf - x) * 0.5lf;
  let r = asin_ratio_f64(t);
  let s = sqrt(t);
  var v: f64;
  if (x >= 0.975lf) {
    v = 1.57079632679489655800e+00lf - (2.0lf * (s + s * r) - 6.12323399573676603587e-17lf);
  } else {
    let w = high_half_f64(s);
    let c = (t - w * w) / (s + w);
    let p = 2.0lf * s * r - (6.12323399573676603587e-17lf - 2.0lf * c);
    let q = 7.85398163397448278999e-01lf - 2.0lf * w;
    v = 7.85398163397448278999e-01lf - (p - q);
  }
  return copysign_f64(v, a);
}

// fdlibm's acos, by the same ratio: pi/2 - asin(x) below 1/2, and
// 2 asin(sqrt((1 -+ x) / 2)) (from pi for negative x) above.
fn acos_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x > 1.0lf) { return nan_f64(); }
  if (x < 0.5lf) {
    return 1.57079632679489655800e+00lf - (a - (6.12323399573676603587e-17lf - a * asin_ratio_f64(a * a)));
  }
  let z = (1.0lf - x) * 0.5lf;
  let s = sqrt(z);
  let r = asin_ratio_f64(z);
  if (a < 0.0lf) {
    return 3.14159265358979311600e+00lf - 2.0lf * (s + (r * s - 6.12323399573676603587e-17lf));
  }
  if (a == 1.0lf) { return 0.0lf; }
  let df = high_half_f64(s);
  let c = (z - df * df) / (s + df);
  return 2.0lf * (df + (r * s + c));
}

// fdlibm's atan2: the quadrant from the signs, the special values of
// zeros and infinities, then atan of |y / x| placed in the quadrant with
// pi in two parts.
fn atan2_f64(y: f64, x: f64) -> f64 {
  if (isnan_f64(x) || isnan_f64(y)) { return nan_f64(); }
  let pi = 3.14159265358979311600e+00lf;
  let pi_lo = 1.22464679914735317720e-16lf;
  let west = signbit_f64(x);
  if (iszero_f64(y)) { return select(y, copysign_f64(pi, y), west); }
  if (iszero_f64(x)) { return copysign_f64(1.57079632679489655800e+00lf, y); }
  if (isinf_f64(x)) {
    if (isinf_f64(y)) {
      return copysign_f64(select(7.85398163397448278999e-01lf, 2.35619449019234492885e+00lf, west), y);
    }
    return copysign_f64(select(0.0lf, pi, west), y);
  }
  if (isinf_f64(y)) { return copysign_f64(1.57079632679489655800e+00lf, y); }
  let k = i32((bitcast<u64>(y) >> 52u) & 0x7fflu) - i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
  var z: f64;
  if (k > 60) {
    z = 1.57079632679489655800e+00lf + 0.5lf * pi_lo;
  } else if (west && k < -60) {
    z = 0.0lf;
  } else {
    z = atan_f64(abs(y / x));
  }
  if (!west) { return copysign_f64(z, y); }
  return copysign_f64(pi - (z - pi_lo), y);
}

// The sines, cosines and tangents, fdlibm's kernels on an argument reduced
// exactly: |x| = (n + f) pi/2 with |f| <= 1/2, by Payne-Hanek for every
// |x| > pi/4. The significand (53 bits) times a 192-bit window of 2/pi's
// bits, in 32-bit limbs, leaves n mod 4 two bits above the binary point
// and f to 2^-128 below it: enough for the closest f64 to a multiple of
// pi/2 (|f| about 2^-62), and independent of fused multiply-adds.

// Word i of 2/pi's bits after 64 zero bits, so that a window may start
// before the binary point.
fn trig64_two_over_pi(i: u32) -> u32 {
  var t = array<u32, 41>(
    0u, 0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
    0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u,
    0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u,
    0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu,
    0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
    0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau,
    0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u,
  );
  return t[i];
}

// 64 bits of limbs `l` (least significant first) ending at bit `top`.
fn trig64_bits(l: array<u32, 8>, top: u32) -> u64 {
  var v = l;
  let k = top >> 5u;
  let s = top & 31u;
  // The 96 bits whose top word holds bit `top`, then the 64 below it.
  let w = (u64(v[k]) << 32u) | u64(v[k - 1u]);
  let below = select(0u, v[k - 2u], k >= 2u);
  return (w << (31u - s)) | (u64(below) >> (s + 1u));
}

struct Trig64 { n: u32, hi: f64, lo: f64 }

// |x| for finite |x| > pi/4 as n pi/2 + (hi + lo).
fn trig64_reduce(x: f64) -> Trig64 {
  let b = bitcast<u64>(x);
  let m = (b & 0xffffffffffffflu) | 0x10000000000000lu;
  // x = m 2^e; the window starts at 2/pi's bit e - 1 (its first bit after
  // the point is bit 1), which is bit e + 62 of the table.
  let p0 = u32(i32(b >> 52u) - 1075 + 62);
  let w0 = p0 >> 5u;
  let sh = p0 & 31u;
  var win: array<u32, 6>;
  for (var j = 0u; j < 6u; j = j + 1u) {
    let a = trig64_two_over_pi(w0 + j);
    let c = trig64_two_over_pi(w0 + j + 1u);
    win[5u - j] = select((a << sh) | (c >> (32u - sh)), a, sh == 0u);
  }
  // m times the window, column sums of 32-bit halves, then the carries.
  let ms = array<u64, 2>(m & 0xfffffffflu, m >> 32u);
  var col: array<u64, 9>;
  for (var i = 0u; i < 2u; i = i + 1u) {
    for (var j = 0u; j < 6u; j = j + 1u) {
      let p = ms[i] * u64(win[j]);
      col[i + j] = col[i + j] + (p & 0xfffffffflu);
      col[i + j + 1u] = col[i + j + 1u] + (p >> 32u);
    }
  }
  var l: array<u32, 8>;
  var carry = 0lu;
  for (var k = 0u; k < 8u; k = k + 1u) {
    let s = col[k] + carry;
    l[k] = u32(s & 0xfffffffflu);
    carry = s >> 32u;
  }
  // The binary point is at bit 190 of the product.
  var n = l[5] >> 30u;
  var fh = trig64_bits(l, 189u);
  var fl = trig64_bits(l, 125u);
  let negative = (fh >> 63u) != 0lu;
  if (negative) {
    n = n + 1u;
    fl = ~fl + 1lu;
    fh = ~fh + select(0lu, 1lu, fl == 0lu);
  }
  // |f| 2^128 as (fh, fl), normalised, then as hi + lo.
  var lz = 0u;
  if (fh == 0lu) {
    fh = fl;
    fl = 0lu;
    lz = 64u;
  }
  let top = u32(fh >> 32u);
  let z = select(32u + countLeadingZeros(u32(fh & 0xfffffffflu)), countLeadingZeros(top), top != 0u);
  if (z != 0u) {
    fh = (fh << z) | (fl >> (64u - z));
    fl = fl << z;
  }
  lz = lz + z;
  let dh = f64(fh >> 11u) * pow2_f64(-53 - i32(lz));
  let dl = f64(((fh & 0x7fflu) << 42u) | (fl >> 22u)) * pow2_f64(-106 - i32(lz));
  // times pi/2, in two parts: the head's product with pi/2's head exactly
  // (Dekker's product of 26-bit halves).
  let c_hi = 1.57079632679489655800e+00lf;
  let c_lo = 6.12323399573676603587e-17lf;
  let p = keep_f64(dh * c_hi);
  let ah = high_bits_f64(dh);
  let al = dh - ah;
  let bh = high_bits_f64(c_hi);
  let bl = c_hi - bh;
  let err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  let r = two_sum_f64(p, err + (dh * c_lo + dl * c_hi));
  let sign = select(1.0lf, -1.0lf, negative);
  return Trig64(n & 3u, sign * r.x, sign * r.y);
}

// s with its low 27 bits cleared: products of two such halves are exact.
fn high_bits_f64(s: f64) -> f64 {
  return bitcast<f64>(bitcast<u64>(s) & 0xfffffffff8000000lu);
}

// fdlibm's kernels on |x| <= pi/4, x = hi + lo.
fn trig64_sin(x: f64, y: f64) -> f64 {
  let z = x * x;
  let v = z * x;
  let r = 8.33333333332248946124e-03lf + z * (-1.98412698298579493134e-04lf
    + z * (2.75573137070700676789e-06lf + z * (-2.50507602534068634195e-08lf + z * 1.58969099521155010221e-10lf)));
  return x - ((z * (0.5lf * y - v * r) - y) - v * -1.66666666666666324348e-01lf);
}

fn trig64_cos(x: f64, y: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = z * (4.16666666666666019037e-02lf + z * (-1.38888888888741095749e-03lf + z * 2.48015872894767294178e-05lf))
    + w * w * (-2.75573143513906633035e-07lf + z * (2.08757232129817482790e-09lf + z * -1.13596475577881948265e-11lf));
  let hz = 0.5lf * z;
  let u = keep_f64(1.0lf - hz);
  return u + (((1.0lf - u) - hz) + (z * r - x * y));
}

// tan(x + y), or -1 / tan(x + y) when `odd`.
fn trig64_tan(x0: f64, y0: f64, odd: bool) -> f64 {
  var x = x0;
  var y = y0;
  let big = abs(x) >= 0.6744lf;
  let s0 = select(1.0lf, -1.0lf, x < 0.0lf);
  if (big) {
    x = abs(x0);
    y = s0 * y0;
    x = (7.85398163397448278999e-01lf - x) + (3.06161699786838301793e-17lf - y);
    y = 0.0lf;
  }
  let z = x * x;
  let w = z * z;
  var r = 1.33333333333201242699e-01lf + w * (2.18694882948595424599e-02lf + w * (3.59207910759131235356e-03lf
    + w * (5.88041240820264096874e-04lf + w * (7.81794442939557092300e-05lf + w * -1.85586374855275456654e-05lf))));
  let v = z * (5.39682539762260521377e-02lf + w * (8.86323982359930005737e-03lf + w * (1.45620945432529025516e-03lf
    + w * (2.46463134818469906812e-04lf + w * (7.14072491382608190305e-05lf + w * 2.59073051863633712884e-05lf)))));
  let s = z * x;
  r = y + z * (s * (r + v) + y);
  r = r + 3.33333333333334091986e-01lf * s;
  let t = keep_f64(x + r);
  if (big) {
    let iy = select(1.0lf, -1.0lf, odd);
    return s0 * (iy - 2.0lf * (x - (t * t / (t + iy) - r)));
  }
  if (!odd) { return t; }
  // -1 / (x + r), accurately.
  let zh = bitcast<f64>(bitcast<u64>(t) & 0xffffffff00000000lu);
  let vv = r - (zh - x);
  let a = -1.0lf / t;
  let th = bitcast<f64>(bitcast<u64>(a) & 0xffffffff00000000lu);
  let ss = 1.0lf + th * zh;
  return th + a * (ss + th * vv);
}

fn sin_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= inf_f64()) { return nan_f64(); }
  if (x < 7.4505805969238281e-09lf) { return a; }
  if (x <= 7.85398163397448278999e-01lf) { return trig64_sin(a, 0.0lf); }
  let t = trig64_reduce(x);
  var v: f64;
  if ((t.n & 1u) == 0u) { v = trig64_sin(t.hi, t.lo); } else { v = trig64_cos(t.hi, t.lo); }
  return copysign_f64(1.0lf, a) * select(v, -v, t.n >= 2u);
}

fn cos_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= inf_f64()) { return nan_f64(); }
  if (x <= 7.85398163397448278999e-01lf) { return trig64_cos(x, 0.0lf); }
  let t = trig64_reduce(x);
  var v: f64;
  if ((t.n & 1u) == 0u) { v = trig64_cos(t.hi, t.lo); } else { v = trig64_sin(t.hi, t.lo); }
  return select(v, -v, t.n == 1u || t.n == 2u);
}

fn tan_f64(a: f64) -> f64 {
  let x = abs(a);
  if (x >= inf_f64()) { return nan_f64(); }
  if (x < 7.4505805969238281e-09lf) { return a; }
  if (x <= 7.85398163397448278999e-01lf) { return trig64_tan(a, 0.0lf, false); }
  let t = trig64_reduce(x);
  return copysign_f64(1.0lf, a) * trig64_tan(t.hi, t.lo, (t.n & 1u) == 1u);
}

// Whether finite b is an integer, and whether an odd one, from its bits.
fn int_parity_f64(b: f64) -> vec2<bool> {
  let u = bitcast<u64>(b) & 0x7ffffffffffffffflu;
  let e = i32(u >> 52u) - 1023;
  if (u == 0lu) { return vec2<bool>(true, false); }
  if (e < 0) { return vec2<bool>(false, false); }
  if (e > 52) { return vec2<bool>(true, false); }
  let m = (u & 0xffffffffffffflu) | 0x10000000000000lu;
  let frac = m & ((1lu << u32(52 - e)) - 1lu);
  return vec2<bool>(frac == 0lu, frac == 0lu && ((m >> u32(52 - e)) & 1lu) == 1lu);
}

// The f64 whose high word is `h` and whose low word is zero.
fn from_high_f64(h: u32) -> f64 { return bitcast<f64>(u64(h) << 32u); }

// fdlibm's pow for finite x > 0 and finite y, C99's special values
// decided by the caller: log2(x) as t1 + t2 to about 2^-64 (t1 with 32
// bits), y split the same way, and 2^(y log2 x) from its integer part and
// an exp-like rational approximation.
fn pow_core_f64(ax0: f64, y: f64) -> f64 {
  var ax = ax0;
  var ix = u32(bitcast<u64>(ax) >> 32u);
  let iy = u32(bitcast<u64>(y) >> 32u) & 0x7fffffffu;
  var t1: f64;
  var t2: f64;
  if (iy > 0x41e00000u) {
    // |y| > 2^31: x far from 1 over- or underflows; near 1, the log by
    // its series.
    if (ix < 0x3fefffffu) { return select(0.0lf, inf_f64(), y < 0.0lf); }
    if (ix > 0x3ff00000u) { return select(0.0lf, inf_f64(), y > 0.0lf); }
    let t = ax - 1.0lf;
    let w = (t * t) * (0.5lf - t * (0.3333333333333333333333lf - t * 0.25lf));
    let u = 1.44269502162933349609e+00lf * t;
    let v = t * 1.92596299112661746887e-08lf - w * 1.44269504088896338700e+00lf;
    t1 = high_half_f64(u + v);
    t2 = v - (t1 - u);
  } else {
    var n = 0;
    if (ix < 0x00100000u) {
      ax = ax * 9007199254740992.0lf;
      n = n - 53;
      ix = u32(bitcast<u64>(ax) >> 32u);
    }
    n = n + i32(ix >> 20u) - 0x3ff;
    let j = ix & 0x000fffffu;
    var k = 0u;
    ix = j | 0x3ff00000u;
    if (j <= 0x3988eu) {
      k = 0u;
    } else if (j < 0xbb67au) {
      k = 1u;
    } else {
      n = n + 1;
      ix = ix - 0x00100000u;
    }
    ax = bitcast<f64>((u64(ix) << 32u) | (bitcast<u64>(ax) & 0xfffffffflu));
    let bp = select(1.0lf, 1.5lf, k == 1u);
    let dp_h = select(0.0lf, 5.84962487220764160156e-01lf, k == 1u);
    let dp_l = select(0.0lf, 1.35003920212974897128e-08lf, k == 1u);
    // ss = s_h + s_l = (x - bp) / (x + bp).
    let u = ax - bp;
    let v = 1.0lf / (ax + bp);
    let ss = u * v;
    let s_h = high_half_f64(ss);
    var t_h = from_high_f64(((ix >> 1u) | 0x20000000u) + 0x00080000u + (k << 18u));
    var t_l = ax - (t_h - bp);
    let s_l = v * ((u - s_h * t_h) - s_h * t_l);
    var s2 = ss * ss;
    var r = s2 * s2 * (5.99999999999994648725e-01lf + s2 * (4.28571428578550184252e-01lf
      + s2 * (3.33333329818377432918e-01lf + s2 * (2.72728123808534006489e-01lf
      + s2 * (2.30660745775561754067e-01lf + s2 * 2.06975017800338417784e-01lf)))));
    r = r + s_l * (s_h + ss);
    s2 = s_h * s_h;
    t_h = high_half_f64(3.0lf + s2 + r);
    t_l = r - ((t_h - 3.0lf) - s2);
    let u2 = s_h * t_h;
    let v2 = s_l * t_h + t_l * ss;
    let p_h = high_half_f64(u2 + v2);
    let p_l = v2 - (p_h - u2);
    let z_h = 9.61796700954437255859e-01lf * p_h;
    let z_l = -7.02846165095275826516e-09lf * p_h + p_l * 9.61796693925975554329e-01lf + dp_l;
    let t = f64(n);
    t1 = high_half_f64(((z_h + z_l) + dp_h) + t);
    t2 = z_l - (((t1 - t) - dp_h) - z_h);
  }
  // (y1 + y2) (t1 + t2), y1 with 32 bits.
  let y1 = high_half_f64(y);
  let p_l = (y - y1) * t1 + y * t2;
  var p_h = y1 * t1;
  let z = p_l + p_h;
  if (z >= 1024.0lf) {
    if (z > 1024.0lf || p_l + 8.0085662595372944372e-17lf > z - p_h) { return inf_f64(); }
  } else if (z <= -1075.0lf) {
    if (z < -1075.0lf || p_l <= z - p_h) { return 0.0lf; }
  }
  // 2^(p_h + p_l) = 2^n 2^f, |f| <= 1/2.
  var n = 0.0lf;
  if (abs(z) > 0.5lf) {
    n = floor(z + 0.5lf);
    p_h = p_h - n;
  }
  let t = high_half_f64(p_l + p_h);
  let u = t * 6.93147182464599609375e-01lf;
  let v = (p_l - (t - p_h)) * 6.93147180559945286227e-01lf + t * -1.90465429995776804525e-09lf;
  let zz = keep_f64(u + v);
  let w = v - (zz - u);
  let tt = zz * zz;
  let c = zz - tt * (1.66666666666666019037e-01lf + tt * (-2.77777777770155933842e-03lf
    + tt * (6.61375632143793436117e-05lf + tt * (-1.65339022054652515390e-06lf
    + tt * 4.13813679705723846039e-08lf))));
  let rr = (zz * c) / (c - 2.0lf) - (w + zz * w);
  return scale_f64(1.0lf - (rr - zz), i32(n));
}

// C99's pow (the Array API's special cases), the rest by pow_core_f64.
fn pow_f64(a: f64, b: f64) -> f64 {
  let ua = bitcast<u64>(a);
  let xa = ua & 0x7ffffffffffffffflu;
  let xb = bitcast<u64>(b) & 0x7ffffffffffffffflu;
  if (xb == 0lu || ua == 0x3ff0000000000000lu) { return 1.0lf; }
  if (xa > 0x7ff0000000000000lu || xb > 0x7ff0000000000000lu) { return nan_f64(); }
  if (bitcast<u64>(b) == 0x3ff0000000000000lu) { return a; }
  let negative_b = signbit_f64(b);
  if (xb == 0x7ff0000000000000lu) {
    if (xa == 0x3ff0000000000000lu) { return 1.0lf; }
    return select(0.0lf, inf_f64(), (xa > 0x3ff0000000000000lu) != negative_b);
  }
  let parity = int_parity_f64(b);
  let odd = parity.y && signbit_f64(a);
  if (xa == 0lu || xa == 0x7ff0000000000000lu) {
    let r = select(0.0lf, inf_f64(), (xa == 0lu) == negative_b);
    return select(r, -r, odd);
  }
  if (signbit_f64(a) && !parity.x) { return nan_f64(); }
  let r = pow_core_f64(bitcast<f64>(xa), b);
  // The sign is set on the bits: negating a subnormal may flush it.
  return select(r, bitcast<f64>(bitcast<u64>(r) | 0x8000000000000000lu), odd);
}

// NumPy's logaddexp, as the host kernels compute it: the larger argument
// plus log1p(exp(-|x - y|)), x + ln 2 where the arguments are equal
// (infinities of one sign included), NaN from NaN.
fn logaddexp_f64(x: f64, y: f64) -> f64 {
  if (x == y) { return x + 6.93147180559945286227e-01lf; }
  let d = x - y;
  if (d > 0.0lf) { return x + log1p_f64(exp_f64(-d)); }
  if (d <= 0.0lf) { return y + log1p_f64(exp_f64(d)); }
  return d;
}
"#;
