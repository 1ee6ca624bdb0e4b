//! Sorts and argsorts by a bitonic network over each line, padded to a
//! power of two `p`: one launch per compare-exchange stage, each thread
//! ordering one pair, so no invocation loops over the line (llvmpipe caps
//! the loop iterations of an invocation) and no grid dimension grows past
//! its limit (the grid folds). The network permutes two scratch buffers
//! of `lines * p` slots, the `u32` positions and the values in their
//! compute type (`keys`), so that a stage reads and writes each pair's
//! slots and nothing else, where reading the values through the positions
//! was a gather. A last launch copies out the values (sort) or the
//! positions (argsort).
//!
//! The order is total, which makes the unstable network stable: values by
//! the sort order (NaNs last ascending, first descending), equal values by
//! position, and the padding positions (`>= len`) after everything.
//!
//! The iteration space is the array's shape with the axis set to length 1,
//! as for the scans; the tail of `params` starts `[len, x_axis_stride,
//! out_axis_stride, p]`, and a stage adds `[k, j, first]`: the block size
//! whose halves run in opposite directions, the distance of the pairs, and
//! whether the positions are still the identity (the first stage reads
//! `x`, not the scratch).

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

/// Bytes per slot of the `keys` scratch for `dtype`: its own size, or 4
/// for the packed dtypes, which compute in 32 bits.
pub fn key_size(dtype: DType) -> usize {
    if Repr::of(dtype).word.is_some() {
        dtype.size()
    } else {
        4
    }
}

/// WGSL declaring binding `slot` as `keys`, the network's copy of the
/// values in the compute type, which every dtype can store natively.
fn keys(x: &Repr, slot: u32, write: bool) -> String {
    let access = if write { "read_write" } else { "read" };
    format!(
        "@group(0) @binding({slot}) var<storage, {access}> keys: array<{}>;\n",
        x.compute
    )
}

/// One compare-exchange stage of the network, one thread per pair.
pub fn stage(x: &Repr, descending: bool) -> String {
    let mut text = frame();
    text.push_str(&x.binding(1, "x", false));
    text.push_str("@group(0) @binding(2) var<storage, read_write> pos: array<u32>;\n");
    text.push_str(&keys(x, 3, true));
    text.push_str(&helpers_for([x.compute]));
    text.push_str(&before(x, descending));
    text.push_str(&format!(
        r#"/// Position `a` (value `va`) goes before position `b` (value `vb`).
fn goes_before(len: u32, a: u32, va: {t}, b: u32, vb: {t}) -> bool {{
  if (a >= len || b >= len) {{ return b >= len && (a < len || a < b); }}
  if (before(va, vb)) {{ return true; }}
  if (before(vb, va)) {{ return false; }}
  return a < b;
}}

/// The value at position `q` of the line at `xb`, or zero in the padding.
fn value(xb: i32, xs: i32, len: u32, q: u32) -> {t} {{
  if (q >= len) {{ return {zero}; }}
  return ld_x(xb + i32(q) * xs);
}}
"#,
        t = x.compute,
        zero = x.lit(0),
    ));
    text.push_str(&entry());
    text.push_str(
        r#"  let t = tail(2u);
  let len = u32(params[t]);
  let p = u32(params[t + 3u]);
  let k = u32(params[t + 4u]);
  let j = u32(params[t + 5u]);
  // Powers of two: shifts and masks, not divisions (which a CPU driver
  // runs lane by lane).
  let line = i >> (countTrailingZeros(p) - 1u);
  let q = i & (p / 2u - 1u);
  let slot = ((q >> countTrailingZeros(j)) << (countTrailingZeros(j) + 1u)) | (q & (j - 1u));
  let lo = line * p + slot;
  let hi = lo + j;
  var a = slot;
  var b = slot + j;
  var va: KEY;
  var vb: KEY;
  if (params[t + 6u] == 0) {
    a = pos[lo];
    b = pos[hi];
    va = keys[lo];
    vb = keys[hi];
  } else {
    let xb = operand_offset(line, 0u);
    let xs = params[t + 1u];
    va = value(xb, xs, len, a);
    vb = value(xb, xs, len, b);
  }
  let swap = ((slot & k) == 0u) == goes_before(len, b, vb, a, va);
  pos[lo] = select(a, b, swap);
  pos[hi] = select(b, a, swap);
  keys[lo] = select(va, vb, swap);
  keys[hi] = select(vb, va, swap);
}
"#
        .replace("KEY", x.compute)
        .as_str(),
    );
    text
}

/// The sorted values (or, for `arg`, their positions as `i64`) of every
/// line, one thread per element: bindings `keys` (values) or `pos`
/// (positions), then `out`.
pub fn gather(x: &Repr, arg: bool) -> String {
    let out = if arg { Repr::of(DType::I64) } else { *x };
    let mut text = frame();
    let value = if arg {
        text.push_str("@group(0) @binding(1) var<storage, read> pos: array<u32>;\n");
        "i64(pos[at])"
    } else {
        text.push_str(&keys(x, 1, false));
        "keys[at]"
    };
    text.push_str(&out.binding(2, "out", true));
    text.push_str(&helpers_for([x.compute, out.compute]));
    text.push_str(&entry());
    text.push_str(&format!(
        r#"  let t = tail(2u);
  let len = u32(params[t]);
  let p = u32(params[t + 3u]);
  let line = i / len;
  let j = i % len;
  let at = line * p + j;
  let ob = operand_offset(line, 1u);
  st_out(ob + i32(j) * params[t + 2u], {value});
}}
"#
    ));
    text
}
