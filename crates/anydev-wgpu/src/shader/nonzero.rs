//! Coordinates of the non-zero elements, in row-major order, over many
//! workgroups: the flat indices of one launch are cut into one range per
//! workgroup, and within a workgroup each of 256 threads takes a
//! contiguous chunk of its range.
//!
//! Two kernels share that layout. `count` has each workgroup count its
//! range's non-zeros into `carry[2 + g]`. `write` has each workgroup
//! start at the rows before it (the rows of earlier launches plus the
//! counts of the workgroups before it), give every thread its first row
//! by an exclusive scan of the threads' counts, and write the
//! coordinates. A single workgroup needs no `count` launch.
//!
//! One launch covers the flat indices `[start, end)` (scalar slots 0 and
//! 1), so that no thread loops past the loop budget; launches run one
//! after the other and pass the number of rows written so far on in
//! `carry[0]` and `carry[1]`, alternately (launch `l`, scalar slot 2,
//! reads slot `l % 2` and its last workgroup writes the other, so no
//! workgroup reads a slot another writes).
//!
//! The iteration space is `x`'s shape (operand 0 is `x`); the tail of
//! `params` is `[out_offset, out_row_stride, out_col_stride]`. Bindings:
//! `x`, `carry`, and for `write` `out`.

use super::dtype::Repr;
use super::exprs::nonzero;
use super::layout::{frame, HEADER, WORKGROUP};
use super::map::helpers_for;
use anydev_ops::DType;

/// The `count` kernel, or with `write` the one that writes coordinates.
pub fn source(x: &Repr, write: bool) -> String {
    let out = Repr::of(DType::I64);
    let mut text = frame();
    text.push_str(&x.binding(1, "x", false));
    text.push_str("@group(0) @binding(2) var<storage, read_write> carry: array<u32>;\n");
    if write {
        text.push_str(&out.binding(3, "out", true));
    }
    text.push_str(&helpers_for([x.compute, out.compute]));
    let nz = nonzero(x, "ld_x(operand_offset(e, 0u))");
    // This workgroup's range of the launch's flat indices, this thread's
    // chunk of it, and the thread's count.
    text.push_str(&format!(
        r#"
var<workgroup> counts: array<u32, {WORKGROUP}>;

@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
  let g = wid.x;
  let first = u32(params[2]);
  let last = u32(params[4]);
  let span = (last - first + nwg.x - 1u) / nwg.x;
  let group_first = min(first + g * span, last);
  let group_last = min(group_first + span, last);
  let chunk = (group_last - group_first + {WORKGROUP}u - 1u) / {WORKGROUP}u;
  let start = min(group_first + lid * chunk, group_last);
  let end = min(start + chunk, group_last);
  var c = 0u;
  for (var e = start; e < end; e = e + 1u) {{
    if ({nz}) {{ c = c + 1u; }}
  }}
  counts[lid] = c;
  workgroupBarrier();
"#
    ));
    if !write {
        text.push_str(&format!(
            r#"  if (lid == 0u) {{
    var sum = 0u;
    for (var q = 0u; q < {WORKGROUP}u; q = q + 1u) {{ sum = sum + counts[q]; }}
    carry[2u + g] = sum;
  }}
}}
"#
        ));
        return text;
    }
    text.push_str(&format!(
        r#"  if (lid == 0u) {{
    let launch = u32(params[6]);
    var sum = 0u;
    if (launch > 0u) {{ sum = carry[launch % 2u]; }}
    for (var q = 0u; q < g; q = q + 1u) {{ sum = sum + carry[2u + q]; }}
    for (var q = 0u; q < {WORKGROUP}u; q = q + 1u) {{
      let here = counts[q];
      counts[q] = sum;
      sum = sum + here;
    }}
    if (g == nwg.x - 1u) {{ carry[1u - launch % 2u] = sum; }}
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
