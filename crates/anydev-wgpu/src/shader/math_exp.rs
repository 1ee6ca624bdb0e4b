//! f32 exponentials, logarithms, powers, hyperbolic functions and hypot in WGSL,
//! within about one ulp, instead of the drivers' built-ins (llvmpipe's
//! `exp` is off by up to 28 ulp, its `log` reads subnormals as zero, and
//! `sinh`, `cosh` and `expm1` overflow early).
//!
//! `exp` itself is single-float and branch-free (`exp_f32`), the common
//! case made cheap. Everything else is built on two kernels: `exp_parts`
//! (Cody–Waite reduction by k ln 2, then Taylor to degree 8) and `log_df` (ln of the significand as
//! 2 atanh(s), the leading terms in double-float). Double-float values are
//! `vec2<f32>` pairs `hi + lo`; their products split significands by masking
//! bits, so they stay exact whether or not a compiler fuses multiply-adds.
//! Results below the normal range are rounded from the bits (`ldexp_f32`),
//! so a driver that flushes subnormals in arithmetic cannot lose them.
//! Constants are written as f32 literals that round to the intended value.
//! The 16-bit floats compute through these and round once when stored.

/// The WGSL library; it uses the f32 float helpers of the prelude
/// (`isnan_f32`, `isinf_f32`, `iszero_f32`, `signbit_f32`, `inf_f32`,
/// `nan_f32`, `copysign_f32`).
pub const LIBRARY: &str = r#"
// x, but opaque to the shader compiler: drivers simplify float algebra
// (Mesa folds (a + b) - a to b), which would erase the rounding errors the
// double-float arithmetic recovers. Mapping one NaN pattern to another
// changes no number, yet no compiler can prove it an identity.
fn keep_f32(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  return bitcast<f32>(select(u, 0x7fc00000u, u == 0x7fffffffu));
}
fn df_sum(a: f32, b: f32) -> vec2<f32> {
  let s = keep_f32(a + b);
  let v = keep_f32(s - a);
  return vec2<f32>(s, (a - (s - v)) + (b - v));
}
// Exact when |a| >= |b|.
fn df_fast_sum(a: f32, b: f32) -> vec2<f32> {
  let s = keep_f32(a + b);
  return vec2<f32>(s, b - (s - a));
}
// The top 12 significant bits and the rest: products of halves are exact.
fn df_split(a: f32) -> vec2<f32> {
  let h = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
  return vec2<f32>(h, a - h);
}
fn df_prod(a: f32, b: f32) -> vec2<f32> {
  let p = keep_f32(a * b);
  let x = df_split(a);
  let y = df_split(b);
  return vec2<f32>(p, ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y);
}
fn df_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let s = df_sum(a.x, b.x);
  return df_fast_sum(s.x, s.y + (a.y + b.y));
}
fn df_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = df_prod(a.x, b.x);
  return df_fast_sum(p.x, p.y + (a.x * b.y + a.y * b.x));
}
fn df_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let q = keep_f32(a.x / b.x);
  let p = df_mul(vec2<f32>(q, 0.0f), b);
  return df_fast_sum(q, (((a.x - p.x) - p.y) + a.y) / b.x);
}
fn df_sqrt(a: vec2<f32>) -> vec2<f32> {
  if (a.x <= 0.0f) { return vec2<f32>(0.0f, 0.0f); }
  let s = keep_f32(sqrt(a.x));
  let p = df_prod(s, s);
  return df_fast_sum(s, (((a.x - p.x) - p.y) + a.y) / (2.0f * s));
}
fn ln2_df() -> vec2<f32> { return vec2<f32>(6.931472e-01f, -1.9046542e-09f); }

// 2^n for -126 <= n <= 127.
fn pow2_f32(n: i32) -> f32 { return bitcast<f32>(u32(n + 127) << 23u); }

// y * 2^k for normal y, rounded once: the exponent is added in the bits
// (no overflow on the way), and results below the normal range are
// rounded from the significand (ties to even).
fn ldexp_f32(y: f32, k: i32) -> f32 {
  let b = bitcast<u32>(y);
  let e = i32((b >> 23u) & 0xffu) + k;
  if (e >= 255) { return copysign_f32(inf_f32(), y); }
  if (e > 0) { return bitcast<f32>((b & 0x807fffffu) | (u32(e) << 23u)); }
  if (e < -23) { return copysign_f32(0.0f, y); }
  let m = (b & 0x7fffffu) | 0x800000u;
  let s = u32(1 - e);
  let rest = m & ((1u << s) - 1u);
  let half = 1u << (s - 1u);
  var n = m >> s;
  if (rest > half || (rest == half && (n & 1u) == 1u)) { n = n + 1u; }
  return bitcast<f32>((b & 0x80000000u) | n);
}

// exp(x.x + x.y) = (v.x + v.y) 2^k with v.x in [0.7, 1.42], for
// |x.x| < 105. ln 2's high part has 15 bits, so k times it is exact;
// the Taylor remainder after r^8 is below 2^-31.
struct ExpParts { k: i32, v: vec2<f32> }
fn exp_parts(x: vec2<f32>) -> ExpParts {
  let kf = floor(x.x * 1.442695e+00f + 0.5f);
  let r = df_sum(x.x - kf * 6.9314575e-01f, x.y - kf * 1.4286068e-06f);
  let t = r.x;
  let q = t * t * (5.0e-01f + t * (1.6666667e-01f + t * (4.1666668e-02f + t * (8.333334e-03f
    + t * (1.3888889e-03f + t * (1.984127e-04f + t * 2.4801588e-05f))))));
  let s = df_fast_sum(1.0f, t);
  return ExpParts(i32(kf), df_fast_sum(s.x, s.y + (r.y + r.y * t + q)));
}

// ln(x) for finite x > 0, subnormals included (their integer significand
// is exact in f32), relative error about 2^-35.
fn log_df(x: f32) -> vec2<f32> {
  var b = bitcast<u32>(x);
  var k = -127;
  if (b < 0x800000u) {
    b = bitcast<u32>(f32(b));
    k = k - 149;
  }
  k = k + i32(b >> 23u);
  var m = bitcast<f32>((b & 0x7fffffu) | 0x3f800000u);
  if (m > 1.4142135e+00f) {
    m = m * 0.5f;
    k = k + 1;
  }
  // ln(1 + f) = 2s + 2s^3/3 + 2s^5/5 + ..., s = f / (2 + f), |s| < 0.172
  let f = m - 1.0f;
  let d = df_fast_sum(2.0f, f);
  let sh = keep_f32(f / d.x);
  let p = df_prod(sh, d.x);
  let s = df_fast_sum(sh, (((f - p.x) - p.y) - sh * d.y) / d.x);
  let s3 = df_mul(df_mul(s, s), s);
  let z = s.x * s.x;
  let tail = s3.x * z * (4.0e-01f + z * (2.857143e-01f + z * (2.2222222e-01f + z * (1.8181819e-01f
    + z * (1.5384616e-01f + z * 1.3333334e-01f)))));
  let l = df_add(vec2<f32>(2.0f * s.x, 2.0f * s.y),
    df_add(df_mul(s3, vec2<f32>(6.666667e-01f, -1.9868216e-08f)), vec2<f32>(tail, 0.0f)));
  let kf = f32(k);
  return df_add(df_add(vec2<f32>(kf * 6.9314575e-01f, 0.0f), df_prod(kf, 1.4286068e-06f)), l);
}

// ln(x.x + x.y) for x.x > 0.
fn log_df2(x: vec2<f32>) -> vec2<f32> {
  return df_add(log_df(x.x), vec2<f32>(x.y / x.x, 0.0f));
}

// log(a) * c for a double-float c, with log's special values.
fn log_scaled_f32(a: f32, c: vec2<f32>) -> f32 {
  let b = bitcast<u32>(a);
  if ((b & 0x7fffffffu) == 0u) { return -inf_f32(); }
  if (b > 0x7f800000u) { return nan_f32(); }
  if (b == 0x7f800000u) { return a; }
  let l = df_mul(log_df(a), c);
  return l.x + l.y;
}
fn log_f32(a: f32) -> f32 { return log_scaled_f32(a, vec2<f32>(1.0f, 0.0f)); }
fn log2_f32(a: f32) -> f32 { return log_scaled_f32(a, vec2<f32>(1.442695e+00f, 1.925963e-08f)); }
fn log10_f32(a: f32) -> f32 { return log_scaled_f32(a, vec2<f32>(4.342945e-01f, -1.010305e-08f)); }

fn log1p_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a);
  if (b > 0x7f800000u && b < 0x80000000u) { return a; }
  if ((b & 0x7fffffffu) < 0x33800000u) { return a; }
  if (b == 0xbf800000u) { return -inf_f32(); }
  if (b > 0xbf800000u) { return nan_f32(); }
  if (b == 0x7f800000u) { return a; }
  let l = log_df2(df_sum(1.0f, a));
  return l.x + l.y;
}

// exp in f32 alone, straight-line: llvmpipe runs both sides of every
// branch under lane masks, so each branch of the double-float path cost
// every element. Cody–Waite reduction (k ln 2's high part is exact, and so
// is x minus it), then 1 + r + r^2 q(r) with q a degree-4 fit of
// (e^r - 1 - r) / r^2 on |r| <= ln 2 / 2 (relative error 3e-9). Normal
// results add k to the exponent bits; results below the normal range round
// v 2^(k+149), a float of at most 24 bits, to the integer that is their
// bit pattern (round is ties-to-even), so no subnormal arithmetic is
// needed. Within 1 ulp of the correctly rounded value for every f32 input
// (checked exhaustively on llvmpipe).
fn exp_f32(a: f32) -> f32 {
  let x = clamp(a, -104.0f, 89.0f);
  let kf = floor(x * 1.442695e+00f + 0.5f);
  let r = (x - kf * 6.9314575e-01f) - kf * 1.4286068e-06f;
  let q = 4.9999994e-01f + r * (1.6666521e-01f + r * (4.166839e-02f + r * (8.3687175e-03f
    + r * 1.3814596e-03f)));
  let v = 1.0f + (r + r * r * q);
  let k = i32(kf);
  let b = bitcast<u32>(v);
  let e = i32(b >> 23u) + k;
  let normal = bitcast<f32>(b + (u32(k) << 23u));
  let tiny = bitcast<f32>(u32(round(v * pow2_f32(k + 149))));
  let y = select(select(normal, tiny, e <= 0), inf_f32(), e >= 255);
  return select(y, a, isnan_f32(a));
}

// expm1(a) for -17.4 <= a <= 89 and |a| >= 2^-25.
fn expm1_df(a: f32) -> vec2<f32> {
  let e = exp_parts(vec2<f32>(a, 0.0f));
  if (e.k == 0) { return df_sum(e.v.x - 1.0f, e.v.y); }
  // 2^k v - 1: the scaled head minus one exactly, then the tail.
  let head = ldexp_f32(e.v.x, e.k);
  if (isinf_f32(head)) { return vec2<f32>(head, 0.0f); }
  let h = df_sum(head, -1.0f);
  let half = e.k / 2;
  let tail = e.v.y * pow2_f32(half) * pow2_f32(e.k - half);
  return df_fast_sum(h.x, h.y + tail);
}
fn expm1_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a) & 0x7fffffffu;
  if (b > 0x7f800000u || b < 0x33000000u) { return a; }
  if (a > 89.0f) { return inf_f32(); }
  if (a < -17.4f) { return -1.0f; }
  let r = expm1_df(a);
  return r.x + r.y;
}

// (e^x + sign e^-x) / 2 for 0 <= x <= 90, as 2^(k-1) (v + sign 2^-2k / v).
fn exp_pair_half_f32(x: f32, sign: f32) -> f32 {
  let e = exp_parts(vec2<f32>(x, 0.0f));
  var v = e.v;
  if (e.k < 32) {
    let q = df_div(vec2<f32>(pow2_f32(-2 * e.k), 0.0f), v);
    v = df_add(v, vec2<f32>(sign * q.x, sign * q.y));
  }
  return ldexp_f32(v.x + v.y, e.k - 1);
}

fn sinh_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a) & 0x7fffffffu;
  // NaN, infinities, and |a| < 2^-12 where a^3 / 6 is below half an ulp.
  if (b >= 0x7f800000u || b < 0x39800000u) { return a; }
  let x = bitcast<f32>(b);
  if (x > 90.0f) { return copysign_f32(inf_f32(), a); }
  if (x < 1.0f) {
    let z = x * x;
    return copysign_f32(x + x * z * (1.6666667e-01f + z * (8.333334e-03f + z * (1.984127e-04f
      + z * (2.7557319e-06f + z * (2.5052108e-08f + z * 1.6059044e-10f))))), a);
  }
  return copysign_f32(exp_pair_half_f32(x, -1.0f), a);
}

fn cosh_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a) & 0x7fffffffu;
  if (b > 0x7f800000u) { return a; }
  if (b < 0x39800000u) { return 1.0f; }
  let x = bitcast<f32>(b);
  if (x > 90.0f) { return inf_f32(); }
  return exp_pair_half_f32(x, 1.0f);
}

// tanh |a| = E / (E + 2) with E = expm1(2 |a|) in double-float; 1 once
// 2 e^-2|a| is below half an ulp of 1.
fn tanh_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a) & 0x7fffffffu;
  if (b > 0x7f800000u || b < 0x39800000u) { return a; }
  let x = bitcast<f32>(b);
  if (x > 9.1f) { return copysign_f32(1.0f, a); }
  let e = expm1_df(2.0f * x);
  let t = df_div(e, df_add(e, vec2<f32>(2.0f, 0.0f)));
  return copysign_f32(t.x + t.y, a);
}

// asinh |a| = ln(|a| + sqrt(a^2 + 1)), the argument in double-float;
// ln(2 |a|) once 1 / (4 a^2) is below half an ulp.
fn asinh_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a) & 0x7fffffffu;
  if (b >= 0x7f800000u || b < 0x39800000u) { return a; }
  let x = bitcast<f32>(b);
  var l: vec2<f32>;
  if (x > 4096.0f) {
    l = df_add(log_df(x), ln2_df());
  } else {
    let w = df_add(df_sqrt(df_add(df_prod(x, x), vec2<f32>(1.0f, 0.0f))), vec2<f32>(x, 0.0f));
    l = log_df2(w);
  }
  return copysign_f32(l.x + l.y, a);
}

// acosh a = ln(a + sqrt(a^2 - 1)), a^2 - 1 exact in double-float.
fn acosh_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a);
  if (b > 0x7f800000u && b <= 0x7fffffffu) { return a; }
  if (b < 0x3f800000u || b > 0x7f800000u) { return nan_f32(); }
  if (b == 0x7f800000u) { return a; }
  var l: vec2<f32>;
  if (a > 4096.0f) {
    l = df_add(log_df(a), ln2_df());
  } else {
    let w = df_add(df_sqrt(df_add(df_prod(a, a), vec2<f32>(-1.0f, 0.0f))), vec2<f32>(a, 0.0f));
    l = log_df2(w);
  }
  return l.x + l.y;
}

// atanh |a| = ln((1 + |a|) / (1 - |a|)) / 2, the quotient in double-float.
fn atanh_f32(a: f32) -> f32 {
  let b = bitcast<u32>(a) & 0x7fffffffu;
  if (b > 0x7f800000u || b < 0x39800000u) { return a; }
  if (b > 0x3f800000u) { return nan_f32(); }
  if (b == 0x3f800000u) { return copysign_f32(inf_f32(), a); }
  let x = bitcast<f32>(b);
  let l = log_df2(df_div(df_sum(1.0f, x), df_sum(1.0f, -x)));
  return copysign_f32(0.5f * (l.x + l.y), a);
}

// Whether finite b is an integer, and whether an odd one, from its bits.
fn int_parity_f32(b: f32) -> vec2<bool> {
  let u = bitcast<u32>(b) & 0x7fffffffu;
  let e = i32(u >> 23u) - 127;
  if (u == 0u) { return vec2<bool>(true, false); }
  if (e < 0) { return vec2<bool>(false, false); }
  if (e > 23) { return vec2<bool>(true, false); }
  let m = (u & 0x7fffffu) | 0x800000u;
  let frac = m & ((1u << u32(23 - e)) - 1u);
  return vec2<bool>(frac == 0u, frac == 0u && ((m >> u32(23 - e)) & 1u) == 1u);
}

// C99's pow: y ln|x| in double-float, then exp of it.
fn pow_f32(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let xa = ua & 0x7fffffffu;
  let xb = bitcast<u32>(b) & 0x7fffffffu;
  if (xb == 0u || ua == 0x3f800000u) { return 1.0f; }
  if (xa > 0x7f800000u || xb > 0x7f800000u) { return nan_f32(); }
  if (bitcast<u32>(b) == 0x3f800000u) { return a; }
  let negative_b = signbit_f32(b);
  if (xb == 0x7f800000u) {
    if (xa == 0x3f800000u) { return 1.0f; }
    return select(0.0f, inf_f32(), (xa > 0x3f800000u) != negative_b);
  }
  let parity = int_parity_f32(b);
  let odd = parity.y && signbit_f32(a);
  if (xa == 0u || xa == 0x7f800000u) {
    let r = select(0.0f, inf_f32(), (xa == 0u) == negative_b);
    return select(r, -r, odd);
  }
  if (signbit_f32(a) && !parity.x) { return nan_f32(); }
  let l = log_df(bitcast<f32>(xa));
  let y = l.x * b;
  var r: f32;
  if (y > 89.0f) {
    r = inf_f32();
  } else if (y < -104.0f) {
    r = 0.0f;
  } else {
    let e = exp_parts(df_mul(l, vec2<f32>(b, 0.0f)));
    r = ldexp_f32(e.v.x + e.v.y, e.k);
  }
  // The sign is set on the bits: negating a subnormal may flush it.
  return select(r, bitcast<f32>(bitcast<u32>(r) | 0x80000000u), odd);
}

// |x| 2^k for the bits of a finite |x|, rounded once; subnormals through
// their integer significand.
fn scaled_f32(bits: u32, k: i32) -> f32 {
  if (bits == 0u) { return 0.0f; }
  if (bits < 0x800000u) { return ldexp_f32(f32(bits), k - 149); }
  return ldexp_f32(bitcast<f32>(bits), k);
}

// sqrt(a^2 + b^2) from the exact sum of squares of the operands scaled so
// the larger is in [1, 2): one rounding, then the scaling back.
fn hypot_f32(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a) & 0x7fffffffu;
  let ub = bitcast<u32>(b) & 0x7fffffffu;
  if (ua == 0x7f800000u || ub == 0x7f800000u) { return inf_f32(); }
  if (ua > 0x7f800000u || ub > 0x7f800000u) { return nan_f32(); }
  let hi = max(ua, ub);
  if (hi == 0u) { return 0.0f; }
  var e = i32(hi >> 23u) - 127;
  if (hi < 0x800000u) { e = i32(bitcast<u32>(f32(hi)) >> 23u) - 127 - 149; }
  let x = scaled_f32(hi, -e);
  let y = scaled_f32(min(ua, ub), -e);
  let r = df_sqrt(df_add(df_prod(x, x), df_prod(y, y)));
  return ldexp_f32(r.x + r.y, e);
}

// ln(e^x + e^y) = max + ln(1 + e^-|x - y|), the difference exact and the
// logarithm's argument in double-float.
fn logaddexp_f32(x: f32, y: f32) -> f32 {
  if (isnan_f32(x) || isnan_f32(y)) { return nan_f32(); }
  if (x == y && isinf_f32(x)) { return x; }
  if (x == y) {
    let r = df_add(vec2<f32>(x, 0.0f), ln2_df());
    return r.x + r.y;
  }
  let m = max(x, y);
  let d = df_sum(min(x, y), -m);
  // max + 0: +0 where max is -0 (compilers drop an explicit + 0.0).
  if (d.x < -104.0f || isinf_f32(m)) { return select(m, 0.0f, iszero_f32(m)); }
  let e = exp_parts(d);
  var u: vec2<f32>;
  if (e.k < -100) {
    u = vec2<f32>(1.0f, ldexp_f32(e.v.x + e.v.y, e.k));
  } else {
    let half = e.k / 2;
    let scale = pow2_f32(half) * pow2_f32(e.k - half);
    u = df_add(vec2<f32>(1.0f, 0.0f), vec2<f32>(e.v.x * scale, e.v.y * scale));
  }
  let r = df_add(vec2<f32>(m, 0.0f), log_df2(u));
  return r.x + r.y;
}
"#;
