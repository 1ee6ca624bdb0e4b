//! Counter-based random numbers with the host kernels' formulas, so a
//! draw equals the CPU's: Philox4x32-10 keyed by the seed, element `i`
//! (row-major) using counter `counter + i` (64-bit, wrapping).
//!
//! From the block `w` of element `i`, with `unit(a, b) = ((a << 21) |
//! (b >> 11)) * 2^-53`:
//! - uniform: `low + (high - low) * unit(w0, w1)` in f64, rounded once to
//!   the output dtype, and stepped one ulp toward `low` if rounding reached
//!   `high` (the interval is half-open). Bit-for-bit the CPU's result.
//! - normal: Box-Muller, `mean + std * sqrt(-2 ln u1) cos(2 pi u2)` with
//!   `u1 = 1 - unit(w0, w1)`, `u2 = unit(w2, w3)`, in f64 with the
//!   backend's own logarithm and cosine (`math_f64`, each within an ulp or
//!   two of std's, so results agree with the CPU's to a few ulps).
//!
//! Devices without f64 compute everything in f32 with 24-bit uniforms.
//!
//! Slots: 0 = seed, 1 = counter, 2 and 3 = `low`/`high` or `mean`/`std`,
//! f64 where the device has it, else f32.

use super::dtype::Repr;
use super::map::{MapSpec, Operand};
use anydev_ops::DType;

const PHILOX: &str = r#"
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>(p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u), a * b);
}

fn philox(i: u32) -> vec4<u32> {
  let c0 = bitcast<u32>(params[4]) + i;
  let c1 = bitcast<u32>(params[5]) + select(0u, 1u, c0 < i);
  var x = vec4<u32>(c0, c1, 0u, 0u);
  var k0 = bitcast<u32>(params[2]);
  var k1 = bitcast<u32>(params[3]);
  for (var round = 0u; round < 10u; round = round + 1u) {
    let p0 = mulhilo(0xD2511F53u, x.x);
    let p1 = mulhilo(0xCD9E8D57u, x.z);
    x = vec4<u32>(p1.x ^ x.y ^ k0, p1.y, p0.x ^ x.w ^ k1, p0.y);
    k0 = k0 + 0x9E3779B9u;
    k1 = k1 + 0xBB67AE85u;
  }
  return x;
}
"#;

/// The dtype the distribution parameters and the arithmetic use.
pub fn via(device_has_f64: bool) -> DType {
    if device_has_f64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// WGSL stepping the output value `r` one unit of the output dtype toward
/// `low` (`v0`), for a uniform that rounded up to `high`.
fn step_down(out: &Repr) -> &'static str {
    match (out.dtype, out.compute) {
        (_, "f64") => "nextafter_f64(r, v0)",
        (DType::F32, _) => "nextafter_f32(r, f32(v0))",
        // Packed: step the 16-bit pattern toward -inf (the value is >= high > low).
        (DType::F16, _) => "unpack2x16float(step16(f32_to_f16_bits(r))).x",
        _ => "bitcast<f32>(step16(f32_to_bf16_bits(r)) << 16u)",
    }
}

/// The stored value of `r` (rounded to the output dtype) as f64.
fn stored(out: &Repr) -> &'static str {
    match out.dtype {
        DType::F16 => "f64(unpack2x16float(f32_to_f16_bits(r)).x)",
        DType::BF16 => "f64(bitcast<f32>(f32_to_bf16_bits(r) << 16u))",
        _ => "f64(r)",
    }
}

pub fn spec(out: &Repr, via: DType, normal: bool) -> Option<MapSpec> {
    if !out.is_float() || (out.dtype == DType::F64 && via != DType::F64) {
        return None;
    }
    let narrow = super::exprs::cast(&Repr::of(via), out, "w");
    let body = if via == DType::F64 {
        let unit =
            |a: &str, b: &str| format!("(f64((u64(x.{a}) << 21u) | u64(x.{b} >> 11u)) * (1.0 / 9007199254740992.0))");
        if normal {
            format!(
                "  let x = philox(i);\n  let u1 = 1.0 - {};\n  let u2 = {};\n  let z = sqrt(-2.0 * log_f64(u1)) * cos_f64(6.2831853071795864769 * u2);\n  let w = v0 + v1 * z;\n  let r = {narrow};",
                unit("x", "y"),
                unit("z", "w"),
            )
        } else {
            format!(
                "  let x = philox(i);\n  let w = v0 + (v1 - v0) * {};\n  var r = {narrow};\n  if ({stored} >= v1 && v1 > v0) {{ r = {step}; }}",
                unit("x", "y"),
                stored = stored(out),
                step = step_down(out),
            )
        }
    } else if normal {
        format!("  let x = philox(i);\n  let u1 = 1.0 - f32(x.x >> 8u) * (1.0 / 16777216.0);\n  let u2 = f32(x.z >> 8u) * (1.0 / 16777216.0);\n  let w = v0 + v1 * (sqrt(-2.0 * log(u1)) * cos(6.2831853071795864769 * u2));\n  let r = {narrow};")
    } else {
        format!("  let x = philox(i);\n  let w = v0 + (v1 - v0) * (f32(x.x >> 8u) * (1.0 / 16777216.0));\n  let r = {narrow};")
    };
    let scalar = |slot| Operand::Scalar {
        repr: Repr::of(via),
        slot,
    };
    let functions = format!(
        "{PHILOX}\nfn step16(b: u32) -> u32 {{\n  if (b == 0u) {{ return 0x8001u; }}\n  return select(b - 1u, b + 1u, (b & 0x8000u) != 0u);\n}}\n"
    );
    Some(MapSpec {
        operands: vec![scalar(2), scalar(3)],
        out: *out,
        extra: Vec::new(),
        uses: vec!["f32", Repr::of(via).compute],
        body,
        functions,
    })
}
