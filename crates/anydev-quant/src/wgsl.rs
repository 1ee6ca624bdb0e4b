//! The `wgpu` kernels. Every operand binds as `array<u32>` except the f32
//! tables (`code`, `absmax`): the backend binds 1- and 2-byte dtypes as
//! little-endian words, and binding f32 inputs as words too lets one
//! source read any float dtype (the params' `dtype`, see
//! [`crate::launch`]).
//!
//! A u8 or 16-bit output is written a whole word per invocation, never
//! shared: the quantizers give each quantization block a workgroup of 64
//! (a block spans whole words, since block sizes are multiples of 64),
//! and the dequantizers and the product give each output word an
//! invocation. Halves round to nearest even in software, as WGSL's
//! `pack2x16float` leaves the rounding open.
//!
//! Grids are two-dimensional (at most 65535 groups per dimension); a
//! group's linear index is `y * groups_x + x`, and indices past the end
//! do nothing.

use crate::call::op;
use crate::formats::{self, QuantType};
use crate::launch::{self, float_operand};
use anydev::extension::{LaunchRule, Wgsl};
use std::sync::Arc;

/// Bindings, float loads and stores, and the 4-bit tables (as f32 bits,
/// so no decimal round trip can change a value).
fn prelude() -> String {
    let bits = |values: &[f32]| {
        let words: Vec<String> = values.iter().map(|v| format!("0x{:08x}u", v.to_bits())).collect();
        format!("array<u32, {}>({})", values.len(), words.join(", "))
    };
    let values: Vec<f32> = QuantType::ALL.iter().flat_map(|t| t.values()).collect();
    let codes: Vec<String> = formats::FP4_SORTED_CODES.iter().map(|c| format!("{c}u")).collect();
    format!(
        r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;

// The 4-bit values by code, NF4's then FP4's; the quantizers' thresholds.
var<private> VALUES: array<u32, 32> = {values};
var<private> NF4_MIDPOINTS: array<u32, 15> = {nf4};
var<private> FP4_THRESHOLDS: array<u32, 7> = {fp4};
var<private> FP4_SORTED_CODES: array<u32, 8> = array<u32, 8>({codes});

fn group_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {{
  return wid.y * nwg.x + wid.x;
}}

// 1 / absmax, or 0 for a block of zeros.
fn inverse(absmax: f32) -> f32 {{
  return select(0.0, 1.0 / absmax, absmax > 0.0);
}}

// The 4-bit code of a normalized value: NF4 counts the midpoints below x
// (bitsandbytes' tree, flattened); FP4 ranks |x| and adds the sign.
fn quantize4(x: f32, quant_type: u32) -> u32 {{
  var rank = 0u;
  if (quant_type == 0u) {{
    for (var j = 0u; j < 15u; j++) {{ rank += select(0u, 1u, x > bitcast<f32>(NF4_MIDPOINTS[j])); }}
    return rank;
  }}
  for (var j = 0u; j < 7u; j++) {{ rank += select(0u, 1u, abs(x) > bitcast<f32>(FP4_THRESHOLDS[j])); }}
  return FP4_SORTED_CODES[rank] | select(0u, {sign}u, x < 0.0);
}}

fn value4(code: u32, quant_type: u32) -> f32 {{
  return bitcast<f32>(VALUES[quant_type * 16u + code]);
}}

fn f16_bits(v: f32) -> u32 {{
  let x = bitcast<u32>(v);
  let sign = (x >> 16u) & 0x8000u;
  let ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {{ return sign | 0x7e00u | ((ax >> 13u) & 0x3ffu); }}
  if (ax >= 0x477ff000u) {{ return sign | 0x7c00u; }}
  if (ax < 0x38800000u) {{
    if (ax <= 0x33000000u) {{ return sign; }}
    let e = ax >> 23u;
    let m = (ax & 0x7fffffu) | 0x800000u;
    let s = 126u - e;
    let q = m >> s;
    let r = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    return sign | select(q, q + 1u, r > half || (r == half && (q & 1u) == 1u));
  }}
  let base = ax - 0x38000000u;
  let q = base >> 13u;
  let r = base & 0x1fffu;
  return sign | select(q, q + 1u, r > 0x1000u || (r == 0x1000u && (q & 1u) == 1u));
}}

fn bf16_bits(v: f32) -> u32 {{
  let x = bitcast<u32>(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) {{ return (x >> 16u) | 0x40u; }}
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}}

fn half_bits(dtype: u32, v: f32) -> u32 {{
  return select(bf16_bits(v), f16_bits(v), dtype == 1u);
}}
"#,
        values = bits(&values),
        nf4 = bits(&formats::nf4_midpoints()),
        fp4 = bits(&formats::FP4_THRESHOLDS),
        codes = codes.join(", "),
        sign = formats::FP4_SIGN,
    )
}

/// Element `i` of the float input `x` (bound as words) as f32.
const LOAD_X: &str = r#"
fn load_x(i: u32, dtype: u32) -> f32 {
  if (dtype == 0u) { return bitcast<f32>(x[i]); }
  let bits = (x[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
  if (dtype == 1u) { return unpack2x16float(bits).x; }
  return bitcast<f32>(bits << 16u);
}
"#;

/// The quantizers' first half: a workgroup per block finds its absmax.
const BLOCK_ABSMAX: &str = r#"
var<workgroup> partial: array<f32, 64>;

// The largest |x| of elements start..end; every invocation of the
// workgroup calls it (it synchronizes them).
fn block_absmax(start: u32, end: u32, lid: u32, dtype: u32) -> f32 {
  var m = 0.0;
  for (var i = start + lid; i < end; i += 64u) { m = max(m, abs(load_x(i, dtype))); }
  partial[lid] = m;
  workgroupBarrier();
  for (var s = 32u; s > 0u; s >>= 1u) {
    if (lid < s) { partial[lid] = max(partial[lid], partial[lid + s]); }
    workgroupBarrier();
  }
  return partial[0];
}
"#;

const QUANTIZE_BLOCKWISE: &str = r#"
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> code: array<f32>;
@group(0) @binding(3) var<storage, read_write> q: array<u32>;
@group(0) @binding(4) var<storage, read_write> absmax: array<f32>;

// bitsandbytes' dQuantize<0>: binary search, then the nearer neighbour.
fn quantize_dynamic(x: f32) -> u32 {
  var pivot = 127u;
  var lower_pivot = 0u;
  var upper_pivot = 255u;
  var lower = -1.0;
  var upper = 1.0;
  var val = code[pivot];
  for (var step = 64u; step > 0u; step >>= 1u) {
    if (x > val) {
      lower_pivot = pivot;
      lower = val;
      pivot += step;
    } else {
      upper_pivot = pivot;
      upper = val;
      pivot -= step;
    }
    val = code[pivot];
  }
  if (upper_pivot == 255u) { upper = code[255]; }
  if (lower_pivot == 0u) { lower = code[0]; }
  if (x > val) { return select(pivot, upper_pivot, x > (upper + val) * 0.5); }
  return select(pivot, lower_pivot, x < (lower + val) * 0.5);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = params[0];
  let dtype = params[1];
  let bs = params[2];
  let block = group_index(wid, nwg);
  let start = block * bs;
  let end = min(start + bs, n);
  let amax = block_absmax(start, end, lid, dtype);
  if (start >= n) { return; }
  if (lid == 0u) { absmax[block] = amax; }
  let inv = inverse(amax);
  // Four codes per word; a block starts on a word.
  for (var w = start / 4u + lid; w * 4u < end; w += 64u) {
    var word = 0u;
    for (var b = 0u; b < 4u; b++) {
      let i = w * 4u + b;
      if (i < end) { word |= quantize_dynamic(load_x(i, dtype) * inv) << (8u * b); }
    }
    q[w] = word;
  }
}
"#;

const QUANTIZE_4BIT: &str = r#"
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;
@group(0) @binding(3) var<storage, read_write> absmax: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = params[0];
  let dtype = params[1];
  let bs = params[2];
  let qt = params[3];
  let block = group_index(wid, nwg);
  let start = block * bs;
  let end = min(start + bs, n);
  let amax = block_absmax(start, end, lid, dtype);
  if (start >= n) { return; }
  if (lid == 0u) { absmax[block] = amax; }
  let inv = inverse(amax);
  // Eight codes per word, the even element of each byte in its high nibble.
  for (var w = start / 8u + lid; w * 8u < end; w += 64u) {
    var word = 0u;
    for (var b = 0u; b < 4u; b++) {
      let i = w * 8u + 2u * b;
      var byte = 0u;
      if (i < end) { byte = quantize4(load_x(i, dtype) * inv, qt) << 4u; }
      if (i + 1u < end) { byte |= quantize4(load_x(i + 1u, dtype) * inv, qt); }
      word |= byte << (8u * b);
    }
    packed[w] = word;
  }
}
"#;

/// The dequantizers' and the product's entry: an invocation per output
/// word, one f32 or two halves, each from the kernel's `element(i)`.
const OUTPUT_WORDS: &str = r#"
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = group_index(wid, nwg) * 256u + lid;
  let n = params[0];
  let dtype = params[1];
  if (dtype == 0u) {
    if (w < n) { out[w] = bitcast<u32>(element(w)); }
    return;
  }
  let i = 2u * w;
  if (i >= n) { return; }
  var high = 0u;
  if (i + 1u < n) { high = half_bits(dtype, element(i + 1u)) << 16u; }
  out[w] = half_bits(dtype, element(i)) | high;
}
"#;

const NIBBLE: &str = r#"
// The 4-bit code of element i: the high nibble of byte i / 2 for even i.
fn nibble(i: u32) -> u32 {
  let byte = (packed[i >> 3u] >> (((i >> 1u) & 3u) * 8u)) & 0xffu;
  return select(byte & 0xfu, byte >> 4u, (i & 1u) == 0u);
}
"#;

const DEQUANTIZE_BLOCKWISE: &str = r#"
@group(0) @binding(1) var<storage, read> q: array<u32>;
@group(0) @binding(2) var<storage, read> absmax: array<f32>;
@group(0) @binding(3) var<storage, read> code: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;

fn element(i: u32) -> f32 {
  let c = (q[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
  return code[c] * absmax[i / params[2]];
}
"#;

const DEQUANTIZE_4BIT: &str = r#"
@group(0) @binding(1) var<storage, read> packed: array<u32>;
@group(0) @binding(2) var<storage, read> absmax: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

fn element(i: u32) -> f32 {
  return value4(nibble(i), params[3]) * absmax[i / params[2]];
}
"#;

const GEMV_4BIT: &str = r#"
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> packed: array<u32>;
@group(0) @binding(3) var<storage, read> absmax: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;

// Output o = row r, column j: a[r, :] . w[j, :], accumulated in f32 in order.
fn element(o: u32) -> f32 {
  let dtype = params[1];
  let bs = params[2];
  let qt = params[3];
  let n = params[4];
  let k = params[5];
  let r = o / n;
  let j = o % n;
  var sum = 0.0;
  for (var i = 0u; i < k; i++) {
    let wi = j * k + i;
    sum += load_x(r * k + i, dtype) * (value4(nibble(wi), qt) * absmax[wi / bs]);
  }
  return sum;
}
"#;

/// A two-dimensional grid of `groups` workgroups.
fn grid(groups: usize) -> [u32; 3] {
    const MAX: usize = 65535;
    let groups = groups.max(1);
    [groups.min(MAX) as u32, groups.div_ceil(MAX) as u32, 1]
}

/// A workgroup per quantization block.
fn per_block(op: &'static str) -> Arc<LaunchRule<[u32; 3]>> {
    Arc::new(move |ins, _, attrs| Ok(grid(launch::quant_blocks(op, ins, attrs)?)))
}

/// An invocation per output word, 256 to a workgroup.
fn per_output_word(op: &'static str) -> Arc<LaunchRule<[u32; 3]>> {
    Arc::new(move |ins, outs, _| {
        let out = float_operand(op, ins, outs);
        let per_word = 4 / out.dtype.size();
        Ok(grid(out.size().div_ceil(per_word).div_ceil(256)))
    })
}

fn kernel(op: &'static str, parts: &[&str], grid: Arc<LaunchRule<[u32; 3]>>) -> Wgsl {
    Wgsl {
        source: std::iter::once(prelude().as_str())
            .chain(parts.iter().copied())
            .collect(),
        entry_point: "main".into(),
        grid,
        params: launch::params(op),
    }
}

/// Each op's WGSL kernel.
pub fn kernels() -> Vec<(&'static str, Wgsl)> {
    type GridRule = fn(&'static str) -> Arc<LaunchRule<[u32; 3]>>;
    let table: [(&'static str, &[&str], GridRule); 5] = [
        (
            op::QUANTIZE_BLOCKWISE,
            &[QUANTIZE_BLOCKWISE, LOAD_X, BLOCK_ABSMAX],
            per_block,
        ),
        (op::QUANTIZE_4BIT, &[QUANTIZE_4BIT, LOAD_X, BLOCK_ABSMAX], per_block),
        (
            op::DEQUANTIZE_BLOCKWISE,
            &[DEQUANTIZE_BLOCKWISE, OUTPUT_WORDS],
            per_output_word,
        ),
        (
            op::DEQUANTIZE_4BIT,
            &[DEQUANTIZE_4BIT, NIBBLE, OUTPUT_WORDS],
            per_output_word,
        ),
        (
            op::GEMV_4BIT,
            &[GEMV_4BIT, LOAD_X, NIBBLE, OUTPUT_WORDS],
            per_output_word,
        ),
    ];
    table
        .into_iter()
        .map(|(op, parts, grid)| (op, kernel(op, parts, grid(op))))
        .collect()
}
