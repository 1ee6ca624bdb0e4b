//! Sorts and argsorts by a bitonic network over each line, padded to a
//! power of two `p`: one launch per compare-exchange stage, each thread
//! ordering one pair, so no invocation loops over the line (llvmpipe caps
//! the loop iterations of an invocation) and no grid dimension grows past
//! its limit (the grid folds). The network permutes a scratch buffer of
//! `u32` positions per line (`lines * p` words); a last launch gathers the
//! values (sort) or writes the positions (argsort).
//!
//! The order is total, which makes the unstable network stable: values by
//! the sort order (NaNs last ascending, first descending), equal values by
//! position, and the padding positions (`>= len`) after everything.
//!
//! The iteration space is the array's shape with the axis set to length 1,
//! as for the scans; the tail of `params` starts `[len, x_axis_stride,
//! out_axis_stride, p]`, and a stage adds `[k, j, first]`: the block size
//! whose halves run in opposite directions, the distance of the pairs, and
//! whether the positions are still the identity (the first stage reads no
//! scratch).

use super::dtype::Repr;
use super::layout::{entry, frame};
use super::map::helpers_for;
use anydev_ops::DType;

/// `before(a, b)`: value `a` sorts strictly before `b`.
fn before(x: &Repr, descending: bool) -> String {
    let t = x.compute;
    let nan = |e: &str| {
        if x.is_float() {
            format!("isnan_{t}({e})")
        } else {
            "false".into()
        }
    };
    let body = if descending {
        format!("({} && !{}) || a > b", nan("a"), nan("b"))
    } else {
        format!("a < b || (!{} && {})", nan("a"), nan("b"))
    };
    format!("fn before(a: {t}, b: {t}) -> bool {{ return {body}; }}\n")
}

/// One compare-exchange stage of the network, one thread per pair.
pub fn stage(x: &Repr, descending: bool) -> String {
    let mut text = frame();
    text.push_str(&x.binding(1, "x", false));
    text.push_str("@group(0) @binding(2) var<storage, read_write> pos: array<u32>;\n");
    text.push_str(&helpers_for([x.compute]));
    text.push_str(&before(x, descending));
    text.push_str(
        r#"/// Position `a` goes before position `b` of the line at `xb`.
fn goes_before(xb: i32, xs: i32, len: u32, a: u32, b: u32) -> bool {
  if (a >= len || b >= len) { return b >= len && (a < len || a < b); }
  let va = ld_x(xb + i32(a) * xs);
  let vb = ld_x(xb + i32(b) * xs);
  if (before(va, vb)) { return true; }
  if (before(vb, va)) { return false; }
  return a < b;
}
"#,
    );
    text.push_str(&entry());
    text.push_str(
        r#"  let t = tail(2u);
  let len = u32(params[t]);
  let xs = params[t + 1u];
  let p = u32(params[t + 3u]);
  let k = u32(params[t + 4u]);
  let j = u32(params[t + 5u]);
  let pairs = p / 2u;
  let line = i / pairs;
  let q = i % pairs;
  let lo = (q / j) * 2u * j + q % j;
  let hi = lo + j;
  let base = line * p;
  var a = lo;
  var b = hi;
  if (params[t + 6u] == 0) {
    a = pos[base + lo];
    b = pos[base + hi];
  }
  let xb = operand_offset(line, 0u);
  let up = (lo & k) == 0u;
  if (up == goes_before(xb, xs, len, b, a)) {
    pos[base + lo] = b;
    pos[base + hi] = a;
  } else {
    pos[base + lo] = a;
    pos[base + hi] = b;
  }
}
"#,
    );
    text
}

/// The sorted values (or, for `arg`, their positions as `i64`) of every
/// line, one thread per element: bindings `x` (values only), the
/// positions, `out`.
pub fn gather(x: &Repr, arg: bool) -> String {
    let out = if arg { Repr::of(DType::I64) } else { *x };
    let value = if arg { "i64(src)" } else { "ld_x(xb + i32(src) * xs)" };
    // An argsort reads no values, so `x` is not bound at all (a binding the
    // shader does not use is not part of its layout).
    let at = if arg { 1 } else { 2 };
    let mut text = frame();
    if !arg {
        text.push_str(&x.binding(1, "x", false));
    }
    text.push_str(&format!(
        "@group(0) @binding({at}) var<storage, read> pos: array<u32>;\n"
    ));
    text.push_str(&out.binding(at + 1, "out", true));
    text.push_str(&helpers_for([x.compute, out.compute]));
    text.push_str(&entry());
    text.push_str(&format!(
        r#"  let t = tail(2u);
  let len = u32(params[t]);
  let xs = params[t + 1u];
  let p = u32(params[t + 3u]);
  let line = i / len;
  let j = i % len;
  let src = pos[line * p + j];
  let xb = operand_offset(line, 0u);
  let ob = operand_offset(line, 1u);
  st_out(ob + i32(j) * params[t + 2u], {value});
}}
"#
    ));
    text
}
