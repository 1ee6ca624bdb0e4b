//! f32 trigonometric functions in WGSL, written out instead of the
//! driver's built-ins: those are allowed errors of thousands of ulps
//! (llvmpipe's `atan` is off by ~350 ulp) and reduce large arguments with
//! an f32 multiple of pi (`sin(1e10)` gives ±1).
//!
//! Argument reduction is Payne–Hanek for every |x| > pi/4: |x| times a
//! 96-bit window of the bits of 2/pi, in 32-bit integer arithmetic, so it
//! is exact for every finite input and independent of whether the driver
//! fuses multiplies and adds (Cody–Waite's exactness depends on that). The
//! reduced argument keeps ~64 bits, as a head and a tail.
//!
//! The polynomials are Chebyshev fits on the reduced ranges with f32
//! coefficients (written as bit patterns, so no front end can re-round
//! them); constants that need more than f32 are head + tail pairs. Tiny
//! arguments and the special values are decided on the bits, so drivers
//! that flush subnormals still return them unchanged.
//!
//! Every function here is `_f32`: f16 and bf16 compute through it and
//! round once when stored.

/// The WGSL library, included in every kernel that computes in f32.
pub const LIBRARY: &str = r#"
// pi/2, pi/4 and pi as f32 heads; PIO2_LO is pi/2 - PIO2_HI.
const TRIG_PIO2_HI: u32 = 0x3fc90fdbu;
const TRIG_PIO2_LO: u32 = 0xb33bbd2eu;
const TRIG_PIO4_HI: u32 = 0x3f490fdbu;
const TRIG_PI_HI: u32 = 0x40490fdbu;
// Below this |x| (2^-12), sin, tan, asin and atan round to x and cos to 1.
const TRIG_TINY: u32 = 0x39800000u;

// The 32-bit word `i` of 2/pi's bits after 64 zero bits, so that a window
// may start before the binary point.
fn trig_two_over_pi(i: u32) -> u32 {
  var t = array<u32, 10>(0u, 0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u);
  return t[i];
}

// The 96-bit window of the table starting at bit `p`, as three words.
fn trig_window(p: u32) -> vec3<u32> {
  let w = p >> 5u;
  let s = p & 31u;
  var out = vec3<u32>(trig_two_over_pi(w), trig_two_over_pi(w + 1u), trig_two_over_pi(w + 2u));
  if (s != 0u) {
    let next = trig_two_over_pi(w + 3u);
    out = vec3<u32>(
      (out.x << s) | (out.y >> (32u - s)),
      (out.y << s) | (out.z >> (32u - s)),
      (out.z << s) | (next >> (32u - s)));
  }
  return out;
}

// a * b as (low word, high word), through 16-bit halves (no u64 needed).
fn trig_mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

// x = q * pi/2 + hi + lo (q modulo 4), |hi + lo| <= pi/4, for finite x.
struct TrigReduced { q: u32, hi: f32, lo: f32 }

fn trig_reduce(x: f32) -> TrigReduced {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  if (ax <= TRIG_PIO4_HI) { return TrigReduced(0u, x, 0.0); }
  // |x| = m * 2^e. Bits of 2/pi before bit e - 1 after the point give
  // multiples of 4 (whole turns); the window starts there, at table bit
  // e + 62, and |x| * 2/pi mod 4 = (m * window) * 2^-94 mod 4.
  let m = (ax & 0x7fffffu) | 0x800000u;
  let e = i32(ax >> 23u) - 150;
  let w = trig_window(u32(e + 62));
  let p2 = trig_mul_wide(m, w.z);
  let p1 = trig_mul_wide(m, w.y);
  let p0 = trig_mul_wide(m, w.x);
  let word1 = p2.y + p1.x;
  let word2 = p1.y + p0.x + select(0u, 1u, word1 < p2.y);
  var q = word2 >> 30u;
  // The fraction of a quarter turn, 64 bits, rounded to the nearest
  // quadrant: in [-1/2, 1/2] as a sign and a magnitude.
  var fhi = (word2 << 2u) | (word1 >> 30u);
  var flo = (word1 << 2u) | (p2.x >> 30u);
  var negative = false;
  if ((fhi & 0x80000000u) != 0u) {
    q = q + 1u;
    negative = true;
    flo = ~flo + 1u;
    fhi = ~fhi + select(0u, 1u, flo == 0u);
  }
  var shift = 0u;
  if (fhi == 0u) {
    fhi = flo;
    flo = 0u;
    shift = 32u;
  }
  let lz = countLeadingZeros(fhi);
  if (lz > 0u && lz < 32u) {
    fhi = (fhi << lz) | (flo >> (32u - lz));
  }
  shift = shift + lz;
  // hi + lo = fraction * pi/2, pi/2 as 0xc90fdaa2 * 2^-31.
  let r = trig_mul_wide(fhi, 0xc90fdaa2u);
  var hi = ldexp(f32(r.y >> 8u), -23 - i32(shift));
  var lo = ldexp(f32(((r.y & 0xffu) << 24u) | (r.x >> 8u)), -55 - i32(shift));
  if (negative) {
    hi = -hi;
    lo = -lo;
  }
  if (x < 0.0) {
    return TrigReduced((4u - q) & 3u, -hi, -lo);
  }
  return TrigReduced(q & 3u, hi, lo);
}

// sin(hi + lo) for |hi + lo| <= pi/4.
fn trig_sin_kernel(hi: f32, lo: f32) -> f32 {
  let z = hi * hi;
  let p = z * (bitcast<f32>(0xbe2aaaabu) + z * (bitcast<f32>(0x3c088887u) + z * (bitcast<f32>(0xb95009d4u) + z * bitcast<f32>(0x3636df04u))));
  return hi + (hi * p + (lo - 0.5 * z * lo));
}

// x as a 12-bit head (masked on the bits) and the exact rest: products
// of halves are exact whether or not the driver fuses them.
fn trig_halves(x: f32) -> vec2<f32> {
  let h = bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
  return vec2<f32>(h, x - h);
}

// n / d as the rounded quotient q and a correction, (n - q d) / d with the
// residual exact: the quotient is then good to ~2^-40 however the driver
// divides (Vulkan allows 2.5 ulp). No correction for |q| < 2^-60, where
// the products of halves could underflow.
fn trig_div(n: f32, d: f32) -> vec2<f32> {
  let q = n / d;
  if ((bitcast<u32>(q) & 0x7fffffffu) < 0x21800000u) { return vec2<f32>(q, 0.0); }
  let qs = trig_halves(q);
  let ds = trig_halves(d);
  let e = ((n - qs.x * ds.x) - (qs.x * ds.y + qs.y * ds.x)) - qs.y * ds.y;
  return vec2<f32>(q, e / d);
}

// cos(hi + lo) for |hi + lo| <= pi/4. hi^2 / 2 is summed exactly, from
// 12-bit halves of hi (masked on the bits, so every product is exact
// whether or not the driver fuses it), and the rounding error of
// 1 - hi^2 / 2 is carried.
fn trig_cos_kernel(hi: f32, lo: f32) -> f32 {
  let z = hi * hi;
  let p = z * z * (bitcast<f32>(0x3d2aaaabu) + z * (bitcast<f32>(0xbab60b60u) + z * (bitcast<f32>(0x37d00ae2u) + z * bitcast<f32>(0xb4929227u))));
  let h = trig_halves(hi);
  let hz = 0.5 * (h.x * h.x);
  let w = 1.0 - hz;
  return w + ((((1.0 - w) - hz) - (h.x * h.y + 0.5 * (h.y * h.y))) + (p - hi * lo));
}

// tan(hi + lo) for |hi + lo| <= pi/4, or -1/tan where `odd`. The latter
// is -1/r + r c(z) (the Laurent series of cot), from a corrected quotient:
// -1/tan(r) as a quotient would double the rounding error, and recovering
// tan's rounding error needs sums that drivers fold away.
fn trig_tan_kernel(hi: f32, lo: f32, odd: bool) -> f32 {
  let z = hi * hi;
  if (odd) {
    let c = bitcast<f32>(0x3eaaaaabu) + z * (bitcast<f32>(0x3cb60b61u) + z * (bitcast<f32>(0x3b0ab312u) + z * (bitcast<f32>(0x395e089bu)
      + z * (bitcast<f32>(0x37b08f2cu) + z * bitcast<f32>(0x362fffe6u)))));
    let q = trig_div(-1.0, hi);
    return q.x + ((q.y + lo * q.x * q.x) + hi * c);
  }
  let p = z * (bitcast<f32>(0x3eaaaaabu) + z * (bitcast<f32>(0x3e08888fu) + z * (bitcast<f32>(0x3d5d0a6cu) + z * (bitcast<f32>(0x3cb37e05u)
    + z * (bitcast<f32>(0x3c0d0dcfu) + z * (bitcast<f32>(0x3b91023du) + z * (bitcast<f32>(0x2e13f7dbu) + z * bitcast<f32>(0x3aea854fu))))))));
  return hi + (hi * p + lo * (1.0 + z));
}

fn trig_special(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u; }
fn trig_tiny(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < TRIG_TINY; }

fn sin_f32(x: f32) -> f32 {
  if (trig_special(x)) { return bitcast<f32>(0x7fc00000u); }
  if (trig_tiny(x)) { return x; }
  let r = trig_reduce(x);
  let v = select(trig_sin_kernel(r.hi, r.lo), trig_cos_kernel(r.hi, r.lo), (r.q & 1u) == 1u);
  return select(v, -v, r.q >= 2u);
}

fn cos_f32(x: f32) -> f32 {
  if (trig_special(x)) { return bitcast<f32>(0x7fc00000u); }
  if (trig_tiny(x)) { return 1.0; }
  let r = trig_reduce(x);
  let v = select(trig_cos_kernel(r.hi, r.lo), trig_sin_kernel(r.hi, r.lo), (r.q & 1u) == 1u);
  return select(v, -v, r.q == 1u || r.q == 2u);
}

fn tan_f32(x: f32) -> f32 {
  if (trig_special(x)) { return bitcast<f32>(0x7fc00000u); }
  if (trig_tiny(x)) { return x; }
  let r = trig_reduce(x);
  return trig_tan_kernel(r.hi, r.lo, (r.q & 1u) == 1u);
}

// atan(t + tl) - t for 0 <= t <= 1 and tl a correction of t.
fn trig_atan_tail(t: f32, tl: f32) -> f32 {
  let z = t * t;
  return t * z * (bitcast<f32>(0xbeaaaaabu) + z * (bitcast<f32>(0x3e4cccc6u) + z * (bitcast<f32>(0xbe12481bu) + z * (bitcast<f32>(0x3de36ca5u)
    + z * (bitcast<f32>(0xbdb9128eu) + z * (bitcast<f32>(0x3d97e90cu) + z * (bitcast<f32>(0xbd6bf57cu) + z * (bitcast<f32>(0x3d1cfd3du)
    + z * (bitcast<f32>(0xbc9dc96au) + z * (bitcast<f32>(0x3bcb663au) + z * bitcast<f32>(0xba7571feu))))))))))) + tl / (1.0 + z);
}

// asin(s) / s - 1 as a polynomial in z = s^2, for s <= 1/2.
fn trig_asin_tail(z: f32) -> f32 {
  return z * (bitcast<f32>(0x3e2aaaaau) + z * (bitcast<f32>(0x3d999a18u) + z * (bitcast<f32>(0x3d36adddu) + z * (bitcast<f32>(0x3cfec6d1u)
    + z * (bitcast<f32>(0x3c8c7c8fu) + z * bitcast<f32>(0x3d09ff6au))))));
}

// The quotient of the smaller of |y|, |x| by the larger (both finite, not
// both zero) as `trig_div` gives it, and whether |y| > |x| (1 or 0).
// Operands below 2^-60 are scaled up from their bits: a driver that
// flushes subnormal operands would make the quotient 0 or NaN.
fn trig_ratio(y: f32, x: f32) -> vec3<f32> {
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let swap = ay > ax;
  let num = select(ay, ax, swap);
  let den = select(ax, ay, swap);
  var n = bitcast<f32>(num);
  var d = bitcast<f32>(den);
  if (den < 0x21800000u) {
    n = select(n * 18446744073709551616.0, f32(num) * bitcast<f32>(0x15000000u), num < 0x00800000u);
    d = select(d * 18446744073709551616.0, f32(den) * bitcast<f32>(0x15000000u), den < 0x00800000u);
  }
  return vec3<f32>(trig_div(n, d), select(0.0, 1.0, swap));
}

fn atan_f32(x: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  if (ax > 0x7f800000u || ax < TRIG_TINY) { return x; }
  let a = abs(x);
  var r: f32;
  if (ax > 0x3f800000u) {
    let t = trig_div(1.0, a);
    r = bitcast<f32>(TRIG_PIO2_HI) - (t.x + (trig_atan_tail(t.x, t.y) - bitcast<f32>(TRIG_PIO2_LO)));
  } else {
    r = a + trig_atan_tail(a, 0.0);
  }
  return select(r, -r, x < 0.0);
}

fn asin_f32(x: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  if (ax > 0x3f800000u) { return bitcast<f32>(0x7fc00000u); }
  if (ax < TRIG_TINY) { return x; }
  let a = abs(x);
  var r: f32;
  if (ax == 0x3f800000u) {
    r = bitcast<f32>(TRIG_PIO2_HI);
  } else if (a < 0.5) {
    r = a + a * trig_asin_tail(a * a);
  } else {
    // asin(a) = pi/2 - 2 asin(s), s = sqrt((1 - a) / 2), with s split
    // into a 12-bit head (whose square is exact) and a tail c computed
    // from t, so that the square root's rounding does not matter.
    let t = (1.0 - a) * 0.5;
    let s = sqrt(t);
    let h = bitcast<f32>(bitcast<u32>(s) & 0xfffff000u);
    let c = (t - h * h) / (s + h);
    let p = 2.0 * s * trig_asin_tail(t) - (bitcast<f32>(TRIG_PIO2_LO) - 2.0 * c);
    let q = bitcast<f32>(TRIG_PIO4_HI) - 2.0 * h;
    r = bitcast<f32>(TRIG_PIO4_HI) - (p - q);
  }
  return select(r, -r, x < 0.0);
}

fn acos_f32(x: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  if (ax > 0x3f800000u) { return bitcast<f32>(0x7fc00000u); }
  if (x == 1.0) { return 0.0; }
  let pio2_lo = bitcast<f32>(TRIG_PIO2_LO);
  if (ax < 0x3f000000u) {
    // Tiny and subnormal x land here too: x * tail underflows harmlessly.
    return bitcast<f32>(TRIG_PIO2_HI) - (x - (pio2_lo - x * trig_asin_tail(x * x)));
  }
  if (x < 0.0) {
    // pi - 2 asin(s), s = sqrt((1 + x) / 2).
    let t = (1.0 + x) * 0.5;
    let s = sqrt(t);
    return bitcast<f32>(TRIG_PI_HI) - 2.0 * (s + (s * trig_asin_tail(t) - pio2_lo));
  }
  // 2 asin(s), s = sqrt((1 - x) / 2), split as in asin.
  let t = (1.0 - x) * 0.5;
  let s = sqrt(t);
  let h = bitcast<f32>(bitcast<u32>(s) & 0xfffff000u);
  let c = (t - h * h) / (s + h);
  return 2.0 * (h + (s * trig_asin_tail(t) + c));
}

// C99's atan2, every zero, infinity and NaN case included.
fn atan2_f32(y: f32, x: f32) -> f32 {
  let pio2_hi = bitcast<f32>(TRIG_PIO2_HI);
  let pio2_lo = bitcast<f32>(TRIG_PIO2_LO);
  let pi_hi = bitcast<f32>(TRIG_PI_HI);
  let pi_lo = 2.0 * pio2_lo;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let west = (bitcast<u32>(x) & 0x80000000u) != 0u;
  var r: f32;
  if (ay > 0x7f800000u || ax > 0x7f800000u) {
    return bitcast<f32>(0x7fc00000u);
  } else if (ay == 0u) {
    r = select(0.0, pi_hi, west);
  } else if (ay == 0x7f800000u && ax == 0x7f800000u) {
    r = select(bitcast<f32>(TRIG_PIO4_HI), bitcast<f32>(0x4016cbe4u), west);
  } else if (ax == 0x7f800000u) {
    r = select(0.0, pi_hi, west);
  } else if (ay == 0x7f800000u || ax == 0u) {
    r = pio2_hi;
  } else {
    let q = trig_ratio(y, x);
    let t = q.x;
    let tail = trig_atan_tail(t, q.y);
    if (q.z == 0.0) {
      r = select(t + tail, pi_hi - (t + (tail - pi_lo)), west);
    } else {
      r = select(pio2_hi - (t + (tail - pio2_lo)), pio2_hi + (t + (tail + pio2_lo)), west);
    }
  }
  return bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(y) & 0x80000000u));
}
"#;
