//! Coordinates of the non-zero elements, in row-major order, in one
//! workgroup: each of 256 threads counts the non-zeros of its contiguous
//! chunk of flat indices, an exclusive scan of the counts gives every
//! thread its first output row, and a second pass writes the coordinates.
//!
//! One launch covers the flat indices `[start, end)` (scalar slots 0 and
//! 1), so that no thread loops past the loop budget; the launches run one
//! after the other and pass the number of rows written so far on in a
//! one-word `carry` buffer.
//!
//! The iteration space is `x`'s shape (operand 0 is `x`); the tail of
//! `params` is `[out_offset, out_row_stride, out_col_stride]`. Bindings:
//! `x`, `carry`, `out`.

use super::dtype::Repr;
use super::exprs::nonzero;
use super::layout::{frame, HEADER, WORKGROUP};
use super::map::helpers_for;
use anydev_ops::DType;

pub fn source(x: &Repr) -> String {
    let out = Repr::of(DType::I64);
    let mut text = frame();
    text.push_str(&x.binding(1, "x", false));
    text.push_str("@group(0) @binding(2) var<storage, read_write> carry: array<u32>;\n");
    text.push_str(&out.binding(3, "out", true));
    text.push_str(&helpers_for([x.compute, out.compute]));
    let nz = nonzero(x, "ld_x(operand_offset(e, 0u))");
    text.push_str(&format!(
        r#"
var<workgroup> counts: array<u32, {WORKGROUP}>;

@compute @workgroup_size({WORKGROUP})
fn main(@builtin(local_invocation_index) lid: u32) {{
  let first = u32(params[2]);
  let last = u32(params[4]);
  let chunk = (last - first + {WORKGROUP}u - 1u) / {WORKGROUP}u;
  let start = min(first + lid * chunk, last);
  let end = min(start + chunk, last);
  var c = 0u;
  for (var e = start; e < end; e = e + 1u) {{
    if ({nz}) {{ c = c + 1u; }}
  }}
  counts[lid] = c;
  workgroupBarrier();
  if (lid == 0u) {{
    var sum = 0u;
    if (first > 0u) {{ sum = carry[0]; }}
    for (var q = 0u; q < {WORKGROUP}u; q = q + 1u) {{
      let here = counts[q];
      counts[q] = sum;
      sum = sum + here;
    }}
    carry[0] = sum;
  }}
  workgroupBarrier();
  var row = counts[lid];
  let t = tail(1u);
  let nd = rank();
  for (var e = start; e < end; e = e + 1u) {{
    if ({nz}) {{
      var rem = e;
      let base = params[t] + i32(row) * params[t + 1u];
      for (var d = nd; d > 0u; d = d - 1u) {{
        let len = u32(params[{HEADER}u + d - 1u]);
        st_out(base + i32(d - 1u) * params[t + 2u], i64(rem % len));
        rem = rem / len;
      }}
      row = row + 1u;
    }}
  }}
}}
"#
    ));
    text
}
