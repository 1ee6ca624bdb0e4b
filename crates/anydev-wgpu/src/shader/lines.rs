//! Kernels that walk one axis ("lines"): the scans.
//!
//! The iteration space is the array's shape with the axis set to length 1
//! (so `operand_offset` gives the start of a line); the tail of `params`
//! starts `[len, x_axis_stride, out_axis_stride]`.

use super::dtype::Repr;
use super::layout::{entry, frame};
use super::map::helpers_for;
use anydev_ops::ScanOp;

fn prologue(x: &Repr, out: &Repr) -> String {
    let mut text = frame();
    text.push_str(&x.binding(1, "x", false));
    text.push_str(&out.binding(2, "out", true));
    text.push_str(&helpers_for([x.compute, out.compute]));
    text
}

/// Inclusive scan, one thread per line, over the positions `[start, end)`
/// of every line (the last two tail words). A long line takes several
/// launches of at most [`LOOP_BUDGET`](super::layout::LOOP_BUDGET) positions each; a launch that does
/// not start the line continues from the sum the previous one wrote.
pub fn scan(op: ScanOp, x: &Repr) -> String {
    let (init, fold) = match op {
        ScanOp::CumulativeSum => (x.lit(0), "acc + v".to_owned()),
        ScanOp::CumulativeProd => (x.lit(1), x.mul("acc", "v")),
    };
    let mut text = prologue(x, x);
    text.push_str(&entry());
    text.push_str(&format!(
        r#"  let xb = operand_offset(i, 0u);
  let ob = operand_offset(i, 1u);
  let t = tail(2u);
  let xs = params[t + 1u];
  let os = params[t + 2u];
  let start = u32(params[t + 3u]);
  let end = u32(params[t + 4u]);
  var acc = {init};
  if (start > 0u) {{
    acc = ld_out(ob + i32(start - 1u) * os);
  }}
  for (var j = start; j < end; j = j + 1u) {{
    let v = ld_x(xb + i32(j) * xs);
    acc = {fold};
    st_out(ob + i32(j) * os, acc);
  }}
}}
"#
    ));
    text
}
