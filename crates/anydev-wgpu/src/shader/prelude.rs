//! WGSL helper functions, written once per compute-type family and
//! instantiated for each concrete compute type a kernel uses.
//!
//! The semantics are the host kernels' (NumPy 2's): NaN-propagating
//! `maximum`/`minimum`, NumPy's `divmod` for floats, integer division and
//! remainder by zero give 0, negative integer powers give 0, shifts out of
//! range give 0 (or -1 for a negative value shifted right), and float to
//! integer conversion truncates, saturates and maps NaN to 0.

/// Float helpers; `$T` is `f32` or `f64`, `$U` the unsigned integer of
/// the same width, `$W` the suffix of its literals (`u` or `lu`).
const FLOAT: &str = r#"
fn isnan_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) > $INF; }
fn isinf_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) == $INF; }
fn isfinite_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) < $INF; }
fn signbit_$T(a: $T) -> bool { return (bitcast<$U>(a) & $SIGN) != 0$W; }
fn inf_$T() -> $T { return bitcast<$T>($INF); }
fn nan_$T() -> $T { return bitcast<$T>($INF | ($INF >> 1u)); }
fn copysign_$T(a: $T, b: $T) -> $T { return bitcast<$T>((bitcast<$U>(a) & $ABS) | (bitcast<$U>(b) & $SIGN)); }
fn maximum_$T(a: $T, b: $T) -> $T { return select(b, a, isnan_$T(a) || a >= b); }
fn minimum_$T(a: $T, b: $T) -> $T { return select(b, a, isnan_$T(a) || a <= b); }
fn sign_$T(a: $T) -> $T {
  if (a > 0.0) { return 1.0; }
  if (a < 0.0) { return -1.0; }
  if (a == 0.0) { return 0.0; }
  return a;
}
// C's fmod, with the NaN and infinity cases GPUs leave undefined.
fn fmod_$T(a: $T, b: $T) -> $T {
  if (isnan_$T(a) || isnan_$T(b) || isinf_$T(a) || b == 0.0) { return nan_$T(); }
  if (isinf_$T(b)) { return a; }
  // Exact long division: subtract b scaled by powers of two (each
  // subtraction is exact), where `%` may round a - b * trunc(a / b).
  var x = abs(a);
  let y = abs(b);
  var guard = 0u;
  loop {
    if (x < y || guard > 2200u) { break; }
    var t = ldexp(y, i32(frexp(x).exp - frexp(y).exp));
    if (t > x) { t = t * 0.5; }
    x = x - t;
    guard = guard + 1u;
  }
  return copysign_$T(x, a);
}
// Half to even, spelled out (some drivers round f64 halves away from zero).
fn round_$T(a: $T) -> $T {
  if (!isfinite_$T(a)) { return a; }
  let f = floor(a);
  let d = a - f;
  var r = f;
  if (d > 0.5 || (d == 0.5 && f - 2.0 * floor(f * 0.5) != 0.0)) { r = f + 1.0; }
  return copysign_$T(r, a);
}
fn floordiv_$T(a: $T, b: $T) -> $T {
  if (isnan_$T(a) || isnan_$T(b)) { return nan_$T(); }
  if (b == 0.0) { return a / b; }
  let m = fmod_$T(a, b);
  if (isnan_$T(m)) { return m; }
  var div = (a - m) / b;
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { div = div - 1.0; }
  if (div != 0.0) {
    let f = floor(div);
    return select(f, f + 1.0, div - f > 0.5);
  }
  return copysign_$T(0.0, a / b);
}
fn remainder_$T(a: $T, b: $T) -> $T {
  var m = fmod_$T(a, b);
  if (isnan_$T(m)) { return m; }
  if (m != 0.0) {
    if ((b < 0.0) != (m < 0.0)) { m = m + b; }
  } else {
    m = copysign_$T(0.0, b);
  }
  return m;
}
fn hypot_$T(a: $T, b: $T) -> $T {
  let x = abs(a);
  let y = abs(b);
  if (isinf_$T(x) || isinf_$T(y)) { return inf_$T(); }
  if (isnan_$T(x) || isnan_$T(y)) { return nan_$T(); }
  let m = max(x, y);
  if (m == 0.0) { return 0.0; }
  let p = x / m;
  let q = y / m;
  return m * sqrt(p * p + q * q);
}
fn nextafter_$T(a: $T, b: $T) -> $T {
  if (isnan_$T(a) || isnan_$T(b)) { return nan_$T(); }
  if (a == b) { return b; }
  if (a == 0.0) { return bitcast<$T>(select($SIGN | 1$W, 1$W, b > 0.0)); }
  let bits = bitcast<$U>(a);
  let away = (a < b) == (a > 0.0);
  return bitcast<$T>(select(bits - 1$W, bits + 1$W, away));
}
fn cast_bool_$T(a: $T) -> u32 { return select(0u, 1u, a != 0.0 || isnan_$T(a)); }
"#;

/// f64 narrowed for a 16-bit float the way the host does it: rounded to
/// odd into f32 (truncated, with the last bit set when inexact), so that
/// the nearest-even rounding to f16/bf16 when stored rounds once. Worked
/// on the bits, so neither the driver's f64 -> f32 rounding nor its
/// handling of f32 subnormals matters.
const F64_NARROW: &str = r#"
fn f64_to_f32_for_half(x: f64) -> f32 {
  let b = bitcast<u64>(x);
  let sign = u32(b >> 32u) & 0x80000000u;
  let ab = b & 0x7ffffffffffffffflu;
  if (ab > 0x7ff0000000000000lu) { return bitcast<f32>(sign | 0x7fc00000u | (u32(ab >> 29u) & 0x7fffffu)); }
  if (ab >= (1151lu << 52u)) { return bitcast<f32>(sign | 0x7f800000u); }
  let e = u32(ab >> 52u);
  var q: u32;
  var rest: u64;
  if (e >= 897u) {
    let base = ab - (896lu << 52u);
    q = u32(base >> 29u);
    rest = base & 0x1ffffffflu;
  } else if (e >= 874u) {
    let m = (ab & 0xffffffffffffflu) | (1lu << 52u);
    let s = 926u - e;
    q = u32(m >> s);
    rest = m & ((1lu << s) - 1lu);
  } else {
    q = 0u;
    rest = ab;
  }
  return bitcast<f32>(sign | q | select(0u, 1u, rest != 0lu));
}
"#;

/// Float helpers that need transcendental functions, which WGSL (and
/// SPIR-V's GLSL.std.450) offer for f32 only.
const TRANSCENDENTAL: &str = r#"
fn pow_$T(a: $T, b: $T) -> $T {
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (isnan_$T(a) || isnan_$T(b)) { return nan_$T(); }
  let ab = abs(a);
  if (isinf_$T(b)) {
    if (ab == 1.0) { return 1.0; }
    return select(0.0, inf_$T(), (ab > 1.0) == (b > 0.0));
  }
  let integral = floor(b) == b;
  let odd = integral && abs(b - 2.0 * floor(b * 0.5)) == 1.0;
  if (a == 0.0 || isinf_$T(a)) {
    let big = (a == 0.0) == (b < 0.0);
    let r = select(0.0, inf_$T(), big);
    return select(r, copysign_$T(r, a), odd);
  }
  if (a < 0.0) {
    if (!integral) { return nan_$T(); }
    let r = pow(ab, b);
    return select(r, -r, odd);
  }
  return pow(a, b);
}
fn expm1_$T(a: $T) -> $T {
  let u = exp(a);
  if (u == 1.0) { return a; }
  let um1 = u - 1.0;
  if (um1 == -1.0) { return -1.0; }
  if (isinf_$T(u)) { return u; }
  return um1 * a / log(u);
}
fn log1p_$T(a: $T) -> $T {
  let u = 1.0 + a;
  if (u == 1.0) { return a; }
  if (u < 0.0) { return nan_$T(); }
  if (isinf_$T(u)) { return u; }
  return log(u) * a / (u - 1.0);
}
fn logaddexp_$T(x: $T, y: $T) -> $T {
  if (x == y) { return x + 0.6931471805599453; }
  let d = x - y;
  if (d > 0.0) { return x + log1p_$T(exp(-d)); }
  if (d <= 0.0) { return y + log1p_$T(exp(d)); }
  return d;
}
"#;

/// Integer helpers; `$T` is `i32`, `u32`, `i64` or `u64`.
const INT: &str = r#"
fn maximum_$T(a: $T, b: $T) -> $T { return select(b, a, a >= b); }
fn minimum_$T(a: $T, b: $T) -> $T { return select(b, a, a <= b); }
fn ipow_$T(a: $T, b: $T) -> $T {
  if (b < $T(0)) { return $T(0); }
  var base = a;
  var e = b;
  var r = $T(1);
  loop {
    if (e == $T(0)) { break; }
    if ((e & $T(1)) == $T(1)) { r = r * base; }
    base = base * base;
    e = e >> 1u;
  }
  return r;
}
fn shl_$T(a: $T, b: $T, bits: u32) -> $T {
  if (b < $T(0) || b >= $T(bits)) { return $T(0); }
  return a << u32(b);
}
fn shr_$T(a: $T, b: $T, bits: u32) -> $T {
  if (b < $T(0) || b >= $T(bits)) { return select($T(0), ~$T(0), a < $T(0)); }
  return a >> u32(b);
}
fn floordiv_$T(a: $T, b: $T) -> $T {
  if (b == $T(0)) { return $T(0); }
  $NEG_ONE_DIV
  let q = a / b;
  let r = a - q * b;
  if (r != $T(0) && ((r < $T(0)) != (b < $T(0)))) { return q - $T(1); }
  return q;
}
fn remainder_$T(a: $T, b: $T) -> $T {
  if (b == $T(0)) { return $T(0); }
  $NEG_ONE_REM
  let r = a - (a / b) * b;
  if (r != $T(0) && ((r < $T(0)) != (b < $T(0)))) { return r + b; }
  return r;
}
fn sign_$T(a: $T) -> $T { return select(select($T(0), $T(0) - $T(1), a < $T(0)), $T(1), a > $T(0)); }
"#;

/// The WGSL helpers for one compute type.
pub fn helpers(compute: &str) -> String {
    match compute {
        "f32" | "f64" => {
            let wide = compute == "f64";
            let (u, w, sign, abs, inf) = if wide {
                (
                    "u64",
                    "lu",
                    "0x8000000000000000lu",
                    "0x7ffffffffffffffflu",
                    "0x7ff0000000000000lu",
                )
            } else {
                ("u32", "u", "0x80000000u", "0x7fffffffu", "0x7f800000u")
            };
            let mut text = FLOAT.to_owned();
            text.push_str(if wide { F64_NARROW } else { TRANSCENDENTAL });
            text.replace("$T", compute)
                .replace("$U", u)
                .replace("$SIGN", sign)
                .replace("$ABS", abs)
                .replace("$INF", inf)
                .replace("$W", w)
        }
        _ => {
            let signed = compute.starts_with('i');
            let (div, rem) = if signed {
                // MIN / -1 overflows; -a wraps to the same value.
                (
                    "if (b == $T(-1)) { return $T(0) - a; }",
                    "if (b == $T(-1)) { return $T(0); }",
                )
            } else {
                ("", "")
            };
            INT.replace("$NEG_ONE_DIV", div)
                .replace("$NEG_ONE_REM", rem)
                .replace("$T", compute)
        }
    }
}
