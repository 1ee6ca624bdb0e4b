//! Batched matrix product with a tiled workgroup-memory kernel.
//!
//! Each 16x16 workgroup computes a 32x32 tile of the output, 2x2 elements
//! per thread: it stages a 32x16 tile of `a` and a 16x32 tile of `b` in
//! workgroup memory per step along `k`, so each element loaded from
//! global memory is used 32 times. The batch index is the workgroup's `z`
//! plus the first batch of the launch (scalar slot 0).
//!
//! One launch sums the products over `[k_first, k_end)` (scalar slots 1
//! and 2), at most [`k_per_launch`] of them, so that no invocation loops
//! past the loop budget; a launch that does not start at 0 adds to what
//! the previous one wrote.
//!
//! The iteration space is the batch shape (operands `a`, `b`, `out` give
//! each batch's start); the tail of `params` is
//! `[m, n, k, a_row, a_col, b_row, b_col, out_row, out_col]` strides.

use super::dtype::Repr;
use super::layout::{frame, LOOP_BUDGET};
use super::map::helpers_for;

/// Output tile edge per workgroup.
pub const TILE: u32 = 32;
/// Threads per workgroup edge.
const THREADS: u32 = 16;
/// Depth of one step along `k`.
const DEPTH: u32 = 16;

/// Most of `k` one launch covers: a whole number of steps of [`DEPTH`],
/// each of which loops up to `DEPTH + 5` times where the driver does not
/// unroll the inner loops (the step, its two loads and the `DEPTH`
/// products, and each loop's exit).
pub fn k_per_launch() -> usize {
    LOOP_BUDGET / (DEPTH as usize + 5) * DEPTH as usize
}

pub fn source(r: &Repr) -> String {
    let t = r.compute;
    let (mul_a0b0, mul_a0b1, mul_a1b0, mul_a1b1) = (
        r.mul("a0", "b0"),
        r.mul("a0", "b1"),
        r.mul("a1", "b0"),
        r.mul("a1", "b1"),
    );
    let mut text = frame();
    text.push_str(&r.binding(1, "a", false));
    text.push_str(&r.binding(2, "b", false));
    text.push_str(&r.binding(3, "out", true));
    text.push_str(&helpers_for([t]));
    text.push_str(&format!(
        r#"
var<workgroup> ta: array<array<{t}, {DEPTH}>, {TILE}>;
var<workgroup> tb: array<array<{t}, {TILE}>, {DEPTH}>;

@compute @workgroup_size({THREADS}, {THREADS})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
  let batch = wid.z + u32(params[2]);
  let k_first = u32(params[4]);
  let k_end = u32(params[6]);
  let ab = operand_offset(batch, 0u);
  let bb = operand_offset(batch, 1u);
  let ob = operand_offset(batch, 2u);
  let s = tail(3u);
  let m = u32(params[s]);
  let n = u32(params[s + 1u]);
  let row0 = wid.y * {TILE}u;
  let col0 = wid.x * {TILE}u;
  let r0 = row0 + lid.y;
  let r1 = r0 + {THREADS}u;
  let c0 = col0 + lid.x;
  let c1 = c0 + {THREADS}u;
  // Strides taken out of `params` once, not per step along `k`.
  let arow = params[s + 3u];
  let acol = params[s + 4u];
  let brow = params[s + 5u];
  let bcol = params[s + 6u];
  let orow = params[s + 7u];
  let ocol = params[s + 8u];
  var acc00 = {t}(0);
  var acc01 = {t}(0);
  var acc10 = {t}(0);
  var acc11 = {t}(0);
  if (k_first > 0u) {{
    if (r0 < m && c0 < n) {{ acc00 = ld_out(ob + i32(r0) * orow + i32(c0) * ocol); }}
    if (r0 < m && c1 < n) {{ acc01 = ld_out(ob + i32(r0) * orow + i32(c1) * ocol); }}
    if (r1 < m && c0 < n) {{ acc10 = ld_out(ob + i32(r1) * orow + i32(c0) * ocol); }}
    if (r1 < m && c1 < n) {{ acc11 = ld_out(ob + i32(r1) * orow + i32(c1) * ocol); }}
  }}
  for (var k0 = k_first; k0 < k_end; k0 = k0 + {DEPTH}u) {{
    for (var h = 0u; h < 2u; h = h + 1u) {{
      let ar = row0 + lid.y + h * {THREADS}u;
      let ac = k0 + lid.x;
      var av = {t}(0);
      if (ar < m && ac < k_end) {{ av = ld_a(ab + i32(ar) * arow + i32(ac) * acol); }}
      ta[lid.y + h * {THREADS}u][lid.x] = av;
      let br = k0 + lid.y;
      let bc = col0 + lid.x + h * {THREADS}u;
      var bv = {t}(0);
      if (br < k_end && bc < n) {{ bv = ld_b(bb + i32(br) * brow + i32(bc) * bcol); }}
      tb[lid.y][lid.x + h * {THREADS}u] = bv;
    }}
    workgroupBarrier();
    for (var q = 0u; q < {DEPTH}u; q = q + 1u) {{
      let a0 = ta[lid.y][q];
      let a1 = ta[lid.y + {THREADS}u][q];
      let b0 = tb[q][lid.x];
      let b1 = tb[q][lid.x + {THREADS}u];
      acc00 = acc00 + {mul_a0b0};
      acc01 = acc01 + {mul_a0b1};
      acc10 = acc10 + {mul_a1b0};
      acc11 = acc11 + {mul_a1b1};
    }}
    workgroupBarrier();
  }}
  if (r0 < m && c0 < n) {{ st_out(ob + i32(r0) * orow + i32(c0) * ocol, acc00); }}
  if (r0 < m && c1 < n) {{ st_out(ob + i32(r0) * orow + i32(c1) * ocol, acc01); }}
  if (r1 < m && c0 < n) {{ st_out(ob + i32(r1) * orow + i32(c0) * ocol, acc10); }}
  if (r1 < m && c1 < n) {{ st_out(ob + i32(r1) * orow + i32(c1) * ocol, acc11); }}
}}
"#
    ));
    text
}
