//! The shared frame of every kernel: the `params` buffer that carries
//! shapes, strides, offsets and scalars (so one compiled shader serves
//! every layout), and the thread-index arithmetic.
//!
//! `params` is an `array<i32>` at binding 0:
//!
//! | words | meaning |
//! |-------|---------|
//! | 0 | number of threads that do work |
//! | 1 | `nd`, the rank of the iteration space |
//! | 2..10 | four 64-bit scalar slots (low word first) |
//! | 10..10+nd | the iteration shape |
//! | then, per operand `k` | element offset, then `nd` strides in elements |
//! | after the operands | kernel-specific words (see each kernel) |

/// Words before the iteration shape.
pub const HEADER: usize = 10;
/// Threads per workgroup of the one-dimensional kernels.
pub const WORKGROUP: u32 = 256;
/// Most loop iterations one invocation of a kernel may run, all loops
/// together. llvmpipe stops every loop of an invocation once 65,535
/// iterations have run in total (and other drivers may cap or time out
/// long invocations too), so a kernel whose loops grow with the input
/// takes several launches of at most this many iterations, leaving room
/// for the index loops of `operand_offset`.
pub const LOOP_BUDGET: usize = 1 << 15;

/// WGSL for binding 0 and the index helpers.
pub fn frame() -> String {
    format!(
        r#"@group(0) @binding(0) var<storage, read> params: array<i32>;

fn rank() -> u32 {{ return u32(params[1]); }}

/// Element offset of flat index `i` of the iteration space in operand `k`.
/// A one-dimensional space (what contiguous operands coalesce to) needs
/// no division: `i` is below its length.
fn operand_offset(i: u32, k: u32) -> i32 {{
  let nd = rank();
  let base = {HEADER}u + nd + k * (nd + 1u);
  if (nd == 1u) {{
    return params[base] + i32(i) * params[base + 1u];
  }}
  var rem = i;
  var off = params[base];
  for (var d = nd; d > 0u; d = d - 1u) {{
    let len = u32(params[{HEADER}u + d - 1u]);
    off = off + i32(rem % len) * params[base + d];
    rem = rem / len;
  }}
  return off;
}}

/// Element offset of index `i` in operand `k` of a one-dimensional space
/// (`Access::Linear`): its base plus `i` times its one stride, from words
/// whose positions are constants once `k` is.
fn linear_offset(i: u32, k: u32) -> i32 {{
  let base = {HEADER}u + 1u + 2u * k;
  return params[base] + i32(i) * params[base + 1u];
}}

/// Row and column of index `i` of a two-dimensional space (`Access::Planar`).
fn planar_index(i: u32) -> vec2<u32> {{
  let row = i / u32(params[{HEADER}u + 1u]);
  return vec2<u32>(row, i - row * u32(params[{HEADER}u + 1u]));
}}

/// Element offset of position `rc` (row, column) in operand `k` of a
/// two-dimensional space.
fn planar_offset(rc: vec2<u32>, k: u32) -> i32 {{
  let base = {HEADER}u + 2u + 3u * k;
  return params[base] + i32(rc.x) * params[base + 1u] + i32(rc.y) * params[base + 2u];
}}

/// First word after the layouts of `count` operands.
fn tail(count: u32) -> u32 {{
  let nd = rank();
  return {HEADER}u + nd + count * (nd + 1u);
}}

fn flat_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {{
  return (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;
}}
"#
    )
}

/// The entry point signature of the one-dimensional kernels.
pub fn entry() -> String {
    format!(
        "@compute @workgroup_size({WORKGROUP})\nfn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n  let i = flat_id(wid, nwg, lid);\n  if (i >= u32(params[0])) {{ return; }}\n"
    )
}
