//! Counter-based random numbers: Philox4x32-10 keyed by the seed, element
//! `i` (row-major) using counter `counter + i` (64-bit, wrapping), so the
//! numbers depend on neither the device nor how the work is split.
//!
//! From the four output words `x`:
//! - f32 (and f16/bf16, which compute in f32) uniform: `u = (x0 >> 8) * 2^-24`
//!   in `[0, 1)`, value `low + (high - low) * u` in f32;
//! - f32 normal: Box-Muller with `u1 = ((x0 >> 8) + 1) * 2^-24` in `(0, 1]`
//!   and `u2 = (x1 >> 8) * 2^-24`: `mean + std * sqrt(-2 ln u1) cos(2 pi u2)`;
//! - f64 uniform: `u = ((x0 << 21) | (x1 >> 11)) * 2^-53`, in f64;
//! - f64 normal: `u1`, `u2` from 53 bits as for uniform (`u1` shifted into
//!   `(0, 1]`), but the logarithm and cosine are f32's (WGSL has no f64
//!   transcendentals), so f64 normals carry about 7 significant digits.
//!
//! Slots: 0 = seed, 1 = counter, 2 and 3 = `low`/`high` or `mean`/`std`
//! in the output's compute type.

use super::dtype::Repr;
use super::map::{MapSpec, Operand};

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

pub fn spec(out: &Repr, normal: bool) -> Option<MapSpec> {
    if !out.is_float() {
        return None;
    }
    let wide = out.compute == "f64";
    let body = match (wide, normal) {
        (false, false) => "  let x = philox(i);\n  let u = f32(x.x >> 8u) * (1.0 / 16777216.0);\n  let r = v0 + (v1 - v0) * u;",
        (false, true) => "  let x = philox(i);\n  let u1 = (f32(x.x >> 8u) + 1.0) * (1.0 / 16777216.0);\n  let u2 = f32(x.y >> 8u) * (1.0 / 16777216.0);\n  let r = v0 + v1 * (sqrt(-2.0 * log(u1)) * cos(6.2831853071795864769 * u2));",
        (true, false) => "  let x = philox(i);\n  let u = f64((u64(x.x) << 21u) | u64(x.y >> 11u)) * (1.0 / 9007199254740992.0);\n  let r = v0 + (v1 - v0) * u;",
        (true, true) => "  let x = philox(i);\n  let u1 = (f64((u64(x.x) << 21u) | u64(x.y >> 11u)) + 1.0) * (1.0 / 9007199254740992.0);\n  let u2 = f64((u64(x.z) << 21u) | u64(x.w >> 11u)) * (1.0 / 9007199254740992.0);\n  let z = sqrt(-2.0 * log(f32(u1))) * cos(6.2831853071795864769 * f32(u2));\n  let r = v0 + v1 * f64(z);",
    };
    let scalar = |slot| Operand::Scalar {
        repr: Repr::of(dtype_of(out)),
        slot,
    };
    Some(MapSpec {
        operands: vec![scalar(2), scalar(3)],
        out: *out,
        extra: Vec::new(),
        uses: vec!["f32"],
        body: body.into(),
        functions: PHILOX.into(),
    })
}

/// The dtype the distribution parameters are passed in: the compute type.
fn dtype_of(out: &Repr) -> anydev_ops::DType {
    if out.compute == "f64" {
        anydev_ops::DType::F64
    } else {
        anydev_ops::DType::F32
    }
}
