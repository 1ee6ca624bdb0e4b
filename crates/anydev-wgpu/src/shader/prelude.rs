//! WGSL helper functions, written once per compute-type family and
//! instantiated for each concrete compute type a kernel uses.
//!
//! The semantics are the host kernels' (NumPy 2's): NaN-propagating
//! `maximum`/`minimum`, NumPy's `divmod` for floats, integer division and
//! remainder by zero give 0, negative integer powers give 0, shifts out of
//! range give 0 (or -1 for a negative value shifted right), and float to
//! integer conversion truncates, saturates and maps NaN to 0.

/// Float helpers; `$T` is `f32` or `f64`, `$U` the unsigned integer of
/// the same width, `$W` the suffix of its literals (`u` or `lu`), `$MB`
/// the number of stored significand bits, `$MANT` their mask and `$HIDDEN`
/// the implicit leading bit.
const FLOAT: &str = r#"
fn isnan_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) > $INF; }
fn isinf_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) == $INF; }
fn isfinite_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) < $INF; }
fn signbit_$T(a: $T) -> bool { return (bitcast<$U>(a) & $SIGN) != 0$W; }
// On the bits: drivers that flush subnormals compare them equal to zero.
fn iszero_$T(a: $T) -> bool { return (bitcast<$U>(a) & $ABS) == 0$W; }
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
// C's fmod, exact, on the bits: long division of the significands, so
// subnormal operands count (drivers' frexp and ldexp lose them).
fn fmod_$T(a: $T, b: $T) -> $T {
  let ua = bitcast<$U>(a) & $ABS;
  let ub = bitcast<$U>(b) & $ABS;
  if (ua >= $INF || ub > $INF || ub == 0$W) { return nan_$T(); }
  if (ua < ub || ub == $INF) { return a; }
  var ex = i32(ua >> $MB);
  var ey = i32(ub >> $MB);
  var mx = ua & $MANT;
  var my = ub & $MANT;
  if (ex == 0) {
    ex = 1;
    loop { if (mx >= $HIDDEN) { break; } mx = mx << 1u; ex = ex - 1; }
  } else {
    mx = mx | $HIDDEN;
  }
  if (ey == 0) {
    ey = 1;
    loop { if (my >= $HIDDEN) { break; } my = my << 1u; ey = ey - 1; }
  } else {
    my = my | $HIDDEN;
  }
  loop {
    if (mx >= my) { mx = mx - my; }
    if (ex == ey) { break; }
    mx = mx << 1u;
    ex = ex - 1;
  }
  if (mx == 0$W) { return copysign_$T(0.0, a); }
  loop { if (mx >= $HIDDEN) { break; } mx = mx << 1u; ex = ex - 1; }
  var r: $U;
  if (ex > 0) {
    r = (mx & $MANT) | ($U(u32(ex)) << $MB);
  } else {
    r = mx >> u32(1 - ex);
  }
  return bitcast<$T>(r | (bitcast<$U>(a) & $SIGN));
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
  if (iszero_$T(b)) { return a / b; }
  let m = fmod_$T(a, b);
  if (isnan_$T(m)) { return m; }
  var div = (a - m) / b;
  if (!iszero_$T(m) && signbit_$T(b) != signbit_$T(m)) { div = div - 1.0; }
  if (div != 0.0) {
    let f = floor(div);
    return select(f, f + 1.0, div - f > 0.5);
  }
  return bitcast<$T>((bitcast<$U>(a) ^ bitcast<$U>(b)) & $SIGN);
}
fn remainder_$T(a: $T, b: $T) -> $T {
  let m = fmod_$T(a, b);
  if (isnan_$T(m)) { return m; }
  if (iszero_$T(m)) { return copysign_$T(0.0, b); }
  if (signbit_$T(b) != signbit_$T(m)) { return m + b; }
  return m;
}
// One step from bits x toward bits y of a format whose sign bit is `sign`
// and whose infinity is `inf`, in integers so that subnormals count; both
// zeros step to the smallest subnormal of y's sign.
fn next_bits_$U(x: $U, y: $U, sign: $U, inf: $U) -> $U {
  let ax = x & (sign - 1$W);
  let ay = y & (sign - 1$W);
  if (ax > inf || ay > inf) { return inf | (inf >> 1u); }
  if (x == y || (ax == 0$W && ay == 0$W)) { return y; }
  if (ax == 0$W) { return (y & sign) | 1$W; }
  let away = (x & sign) == (y & sign) && ay > ax;
  return select(x - 1$W, x + 1$W, away);
}
fn nextafter_$T(a: $T, b: $T) -> $T {
  return bitcast<$T>(next_bits_$U(bitcast<$U>(a), bitcast<$U>(b), $SIGN, $INF));
}
fn cast_bool_$T(a: $T) -> u32 { return select(0u, 1u, a != 0.0 || isnan_$T(a)); }
"#;

/// f64's hypot, scaled by the larger magnitude (f32's, within an ulp
/// through double-float, is in [`super::math_exp`]).
const F64_HYPOT: &str = r#"
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

/// nextafter of the 16-bit floats, which compute in f32: the operands are
/// exact f16 (bf16) values, stepped in their own format's bits.
const HALF_STEPS: &str = r#"
fn nextafter_f16(a: f32, b: f32) -> f32 {
  return unpack2x16float(next_bits_u32(f32_to_f16_bits(a), f32_to_f16_bits(b), 0x8000u, 0x7c00u)).x;
}
fn nextafter_bf16(a: f32, b: f32) -> f32 {
  return bitcast<f32>(next_bits_u32(f32_to_bf16_bits(a), f32_to_bf16_bits(b), 0x8000u, 0x7f80u) << 16u);
}
"#;

/// Integer helpers; `$T` is `i32`, `u32`, `i64` or `u64`.
const INT: &str = r#"
fn maximum_$T(a: $T, b: $T) -> $T { return select(b, a, a >= b); }
fn minimum_$T(a: $T, b: $T) -> $T { return select(b, a, a <= b); }
fn ipow_$T(a: $T, b: $T) -> $T {
  if (b < $T(0)) {
    // 1/a^|b| truncated: 1 for a = 1, -1 or 1 for a = -1, else 0.
    if (a == $T(1)) { return $T(1); }
    if (a == ~$T(0)) { return select($T(1), a, (b & $T(1)) == $T(1)); }
    return $T(0);
  }
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
            let (u, w, sign, abs, inf, mb, mant, hidden) = if wide {
                (
                    "u64",
                    "lu",
                    "0x8000000000000000lu",
                    "0x7ffffffffffffffflu",
                    "0x7ff0000000000000lu",
                    "52u",
                    "0xffffffffffffflu",
                    "0x10000000000000lu",
                )
            } else {
                (
                    "u32",
                    "u",
                    "0x80000000u",
                    "0x7fffffffu",
                    "0x7f800000u",
                    "23u",
                    "0x7fffffu",
                    "0x800000u",
                )
            };
            let mut text = FLOAT.to_owned();
            if wide {
                text.push_str(F64_NARROW);
                text.push_str(F64_HYPOT);
                text.push_str(super::math_f64::LIBRARY);
            } else {
                text.push_str(HALF_STEPS);
                text.push_str(super::math_exp::LIBRARY);
            }
            text.replace("$T", compute)
                .replace("$U", u)
                .replace("$SIGN", sign)
                .replace("$ABS", abs)
                .replace("$INF", inf)
                .replace("$MANT", mant)
                .replace("$HIDDEN", hidden)
                .replace("$MB", mb)
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
