//! Reductions over any set of axes.
//!
//! The iteration space is the output (reduced axes of length 1); the tail
//! of `params` describes the reduced sub-space: `[n_red, k, shape[k],
//! x_strides[k]]`. Two variants share one combine step: `serial` gives each
//! output element one thread that loops over the reduced elements (good
//! when there are many outputs), `workgroup` gives each output element a
//! workgroup of 256 threads that stride over the reduced elements and then
//! combine in workgroup memory by a tree (good for few, long reductions).
//!
//! A third, `split`, is for reductions with too few outputs to occupy the
//! device as threads, over a one-dimensional reduced sub-space (what
//! contiguous axes coalesce to): each output gets `parts` threads (scalar slot 2), thread
//! `p` folding its share of the positions (see [`SWEEP`]) into element
//! `i` of a contiguous scratch buffer that a second launch reduces. It
//! needs no workgroup barriers, which llvmpipe runs by switching between
//! its invocations. With one
//! workgroup per output, a `sum` of 1e6 elements ran on one of llvmpipe's
//! threads at 0.02 of the device's copy bandwidth.
//!
//! One launch folds the reduced positions `[start, end)` (scalar slots 0
//! and 1), so a reduction longer than an invocation may loop over takes
//! several launches; a launch that does not start at 0 folds in the result
//! the previous one wrote (for argmax/argmin, the value at that index).

use super::dtype::Repr;
use super::exprs::nonzero;
use super::layout::{entry, frame, WORKGROUP};
use super::map::helpers_for;
use anydev_ops::{DType, ReduceOp};

/// The split forms' threads sweep in blocks of this many: block `b` owns
/// one contiguous range of `SWEEP` shares and its threads read it
/// interleaved, neighbour next to neighbour. A GPU's warp reads whole
/// sectors that way; llvmpipe, which runs eight invocations in the lanes
/// of one register and each such batch's loop to its end before the next,
/// streams one range at a time. Interleaving all `parts` threads instead
/// sent each batch across the whole input with a stride of `parts`
/// elements: a `sum` of 1e7 f32 on `wgpu:0` took 17.5 ms that way and
/// 4.2 ms this way, once the input no longer fitted the host's caches.
const SWEEP: u32 = 8;

/// WGSL: thread `p` of `parts` sweeping positions `0..n` starts at `.x`,
/// steps by `.z` and stops before `.y`.
fn sweep_function() -> String {
    format!(
        "fn sweep(p: u32, parts: u32, n: u32) -> vec3<u32> {{\n  let per = (n + parts - 1u) / parts;\n  let block = p / {SWEEP}u * {SWEEP}u;\n  let width = min({SWEEP}u, parts - block);\n  return vec3<u32>(block * per + p % {SWEEP}u, min(n, (block + width) * per), width);\n}}\n"
    )
}

/// WGSL: the reduced sub-space's description in `params` from element
/// `at` (see the module docs), with what the fold loop reads on every
/// step taken out of the buffer once: the end of the launch's range, the
/// rank and the first stride. Read in the loop, they were storage loads
/// per element, which llvmpipe makes lane by lane.
const REDUCED: &str = "
struct Reduced { at: u32, rank: u32, stride: i32, stop: u32 }
fn reduced(at: u32) -> Reduced {
  return Reduced(at, u32(params[at + 1u]), params[at + 3u], u32(params[4]));
}
";

/// The workgroup forms combine their threads' results in groups of this
/// many, `GROUP` groups in all.
const GROUP: u32 = 16;
const _: () = assert!(GROUP * GROUP == WORKGROUP);

/// How a reduction kernel spreads its work (see the module docs), and
/// whether it walks a reduced sub-space of any rank or one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceForm {
    Serial,
    /// `Serial` over one reduced dimension (what contiguous axes, and
    /// most others, coalesce to). The general walk's loop over dimensions
    /// cost llvmpipe, which runs a loop body at least once whether or not
    /// any lane needs it, eight scalar divisions per element even where
    /// the rank was 1: a thread per row of ten took 4.0 ms for 1e6 f32,
    /// and 2.1 ms without that loop.
    SerialLine,
    Workgroup,
    /// `Workgroup` over one reduced dimension.
    WorkgroupLine,
    /// Over one reduced dimension, always.
    Split,
    /// `Split` of one output over unit-stride f32, i32 or u32 elements
    /// that start at their buffer's first element: each thread folds
    /// `vec4`s, as the elementwise kernels' `Access::Vector` loads them.
    SplitVector,
}

impl ReduceForm {
    /// Every form, for enumerating the kernels of a reduction.
    pub const ALL: [ReduceForm; 6] = [
        ReduceForm::Serial,
        ReduceForm::SerialLine,
        ReduceForm::Workgroup,
        ReduceForm::WorkgroupLine,
        ReduceForm::Split,
        ReduceForm::SplitVector,
    ];

    /// Whether the form has a kernel for `op` over `dtype`: argmax and
    /// argmin have no partial (split) form, whose partial results would
    /// need their index kept beside their value, and `SplitVector` loads
    /// four-byte words.
    pub fn serves(self, op: ReduceOp, dtype: DType) -> bool {
        let partial = !matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin);
        match self {
            ReduceForm::Serial | ReduceForm::SerialLine | ReduceForm::Workgroup | ReduceForm::WorkgroupLine => true,
            ReduceForm::Split => partial,
            ReduceForm::SplitVector => partial && super::four_bytes(dtype),
        }
    }

    /// The form for a reduced sub-space of `rank` coalesced dimensions
    /// (`Split` forms take one only).
    pub fn for_rank(self, rank: usize) -> ReduceForm {
        match (self, rank) {
            (ReduceForm::Serial, 1) => ReduceForm::SerialLine,
            (ReduceForm::Workgroup, 1) => ReduceForm::WorkgroupLine,
            (form, _) => form,
        }
    }

    /// Whether the kernel walks one reduced dimension.
    fn line(self) -> bool {
        !matches!(self, ReduceForm::Serial | ReduceForm::Workgroup)
    }
}

/// Whether `op` reduces dtype `x`; bool only has `all` and `any`, complex
/// (unordered) no max, min, argmax or argmin.
pub fn supported(op: ReduceOp, x: &Repr) -> bool {
    match op {
        ReduceOp::All | ReduceOp::Any => true,
        ReduceOp::Sum | ReduceOp::Prod => !x.is_bool(),
        _ => !x.is_bool() && !x.dtype.is_complex(),
    }
}

/// WGSL statement folding value `v` (index `vi`) into `acc` (index `ai`).
fn step(op: ReduceOp, x: &Repr, acc: &str, ai: &str, v: &str, vi: &str) -> String {
    let t = x.compute;
    match op {
        ReduceOp::Sum => format!("{acc} = {acc} + {v};"),
        ReduceOp::Prod => format!("{acc} = {};", x.mul(acc, v)),
        ReduceOp::Max => format!("{acc} = maximum_{t}({acc}, {v});"),
        ReduceOp::Min => format!("{acc} = minimum_{t}({acc}, {v});"),
        ReduceOp::All => format!("{acc} = {acc} & select(0u, 1u, {});", nonzero(x, v)),
        ReduceOp::Any => format!("{acc} = {acc} | select(0u, 1u, {});", nonzero(x, v)),
        ReduceOp::ArgMax | ReduceOp::ArgMin => {
            format!("if (better({v}, {vi}, {acc}, {ai})) {{ {acc} = {v}; {ai} = {vi}; }}")
        }
    }
}

/// A fold's loop: declarations before it, the statement per value and
/// what completes `acc` after it.
struct Loop {
    decl: String,
    each: String,
    end: String,
}

/// Sums of inexact dtypes fold in tiers: [`TIER`] values into `b0`, then
/// [`TIER`] of those into `b1`, then into `b2`, the thread's total, so
/// one thread's rounding error grows with `2 * TIER + n / TIER²` rather
/// than with its `n` values. Added one after another, a sum of 1e7 copies
/// of 0.1f32 was 2.3e-5 off.
const TIER: u32 = 16;

/// The loop folding `v` (index `vi`) into `acc`; with `vector`, `v` is a
/// `vec4` of four consecutive values (the tiers then hold four lanes,
/// added pairwise at the end).
fn fold_loop(op: ReduceOp, x: &Repr, v: &str, vi: &str, vector: bool) -> Loop {
    if op == ReduceOp::Sum && x.dtype.is_inexact() {
        let t = x.compute;
        let (ty, zero) = if vector {
            (format!("vec4<{t}>"), format!("vec4<{t}>()"))
        } else {
            (t.to_owned(), x.lit(0))
        };
        let (low, high) = (TIER - 1, TIER * TIER - 1);
        let total = if vector { "(b.x + b.y) + (b.z + b.w)" } else { "b" };
        return Loop {
            decl: format!("var b0: {ty} = {zero};\n  var b1: {ty} = {zero};\n  var b2: {ty} = {zero};\n  var nb = 0u;\n"),
            each: format!(
                "b0 = b0 + {v}; nb = nb + 1u;\n    if ((nb & {low}u) == 0u) {{ b1 = b1 + b0; b0 = {zero}; if ((nb & {high}u) == 0u) {{ b2 = b2 + b1; b1 = {zero}; }} }}"
            ),
            end: format!("let b = b2 + (b1 + b0);\n  acc = acc + {total};"),
        };
    }
    let each = if vector {
        ["x", "y", "z", "w"]
            .map(|c| step(op, x, "acc", "ai", &format!("{v}.{c}"), vi))
            .join(" ")
    } else {
        step(op, x, "acc", "ai", v, vi)
    };
    Loop {
        decl: String::new(),
        each,
        end: String::new(),
    }
}

/// `better(v, vi, a, ai)`: whether candidate `v` at `vi` replaces the best
/// `a` at `ai`: NaN wins (the first NaN), then the larger (argmax) or
/// smaller (argmin) value, then the lower index.
fn better(op: ReduceOp, x: &Repr) -> String {
    let t = x.compute;
    let cmp = if op == ReduceOp::ArgMax { ">" } else { "<" };
    let nan = |e: &str| {
        if x.is_float() {
            format!("isnan_{t}({e})")
        } else {
            "false".into()
        }
    };
    format!(
        "fn better(v: {t}, vi: u32, a: {t}, ai: u32) -> bool {{\n  if ({na}) {{ return {nv} && vi < ai; }}\n  if ({nv}) {{ return true; }}\n  return v {cmp} a || (v == a && vi < ai);\n}}\n",
        na = nan("a"),
        nv = nan("v"),
    )
}

/// The initial accumulator: the identity, or the first element for the
/// ops that have none (the array layer rejects empty min/max/argmin/argmax).
fn init(op: ReduceOp, x: &Repr) -> String {
    match op {
        ReduceOp::Sum => x.lit(0),
        ReduceOp::Prod => x.lit(1),
        ReduceOp::All => "1u".into(),
        ReduceOp::Any => "0u".into(),
        _ => "ld_x(xb + red_offset(t, 0u))".into(),
    }
}

/// WGSL folding the result of the previous launch (in `out`) into
/// `acc`/`ai` when this launch does not start the reduction.
fn resume(op: ReduceOp, x: &Repr) -> String {
    let (prev, fold) = match op {
        ReduceOp::ArgMax | ReduceOp::ArgMin => (
            "let pi = u32(ld_out(ob));\n    let pv = ld_x(xb + red_offset(t, pi));".to_owned(),
            step(op, x, "acc", "ai", "pv", "pi"),
        ),
        ReduceOp::All => ("let pv = ld_out(ob);".to_owned(), "acc = acc & pv;".to_owned()),
        ReduceOp::Any => ("let pv = ld_out(ob);".to_owned(), "acc = acc | pv;".to_owned()),
        _ => ("let pv = ld_out(ob);".to_owned(), step(op, x, "acc", "ai", "pv", "0u")),
    };
    format!("  if (params[2] > 0) {{\n    {prev}\n    {fold}\n  }}\n")
}

fn result(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::ArgMax | ReduceOp::ArgMin => "i64(ai)",
        _ => "acc",
    }
}

pub fn source(op: ReduceOp, x: &Repr, out: &Repr, form: ReduceForm) -> String {
    let t = if matches!(op, ReduceOp::All | ReduceOp::Any) {
        "u32"
    } else {
        x.compute
    };
    let mut text = frame();
    if form == ReduceForm::SplitVector {
        let word = x.word.unwrap_or(x.compute);
        text.push_str(&format!(
            "@group(0) @binding(1) var<storage, read> xv: array<vec4<{word}>>;\n"
        ));
    } else {
        text.push_str(&x.binding(1, "x", false));
    }
    text.push_str(&out.binding(2, "out", true));
    text.push_str(&helpers_for([x.compute, out.compute]));
    if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
        text.push_str(&better(op, x));
    }
    if matches!(form, ReduceForm::Split | ReduceForm::SplitVector) {
        text.push_str(&sweep_function());
    }
    text.push_str(REDUCED);
    if form.line() {
        text.push_str("\nfn red_offset(t: Reduced, r: u32) -> i32 {\n  return i32(r) * t.stride;\n}\n");
    } else {
        text.push_str(
            r#"
fn red_offset(t: Reduced, r: u32) -> i32 {
  var rem = r;
  var off = 0i;
  for (var d = t.rank; d > 0u; d = d - 1u) {
    let len = u32(params[t.at + 1u + d]);
    off = off + i32(rem % len) * params[t.at + 1u + t.rank + d];
    rem = rem / len;
  }
  return off;
}
"#,
        );
    }
    let init = init(op, x);
    let vector = form == ReduceForm::SplitVector;
    // The vector form's loop reads `w`, four values without an index.
    let (v, vi) = if vector { ("w", "0u") } else { ("v", "r") };
    let Loop { decl, each, end } = fold_loop(op, x, v, vi, vector);
    let res = result(op);
    let resume = resume(op, x);
    if vector {
        // Ops without an identity start from the first element.
        let init = if init.starts_with("ld_x") {
            "xv[0].x".to_owned()
        } else {
            init
        };
        let tail = step(op, x, "acc", "ai", "w[c]", "0u");
        text.push_str(&entry());
        text.push_str(&format!(
            "  let parts = u32(params[6]);\n  let n = u32(params[4]);\n  var acc: {t} = {init};\n  var ai = 0u;\n  {decl}  let s = sweep(i, parts, n / 4u);\n  for (var q = s.x; q < s.y; q = q + s.z) {{\n    let w = xv[q];\n    {each}\n  }}\n  {end}\n  if (i == 0u && n % 4u != 0u) {{\n    let w = xv[n / 4u];\n    for (var c = 0u; c < n % 4u; c = c + 1u) {{ {tail} }}\n  }}\n  st_out(i32(i), {res});\n}}\n"
        ));
        return text;
    }
    if form == ReduceForm::Split {
        text.push_str(&entry());
        text.push_str(&format!(
            "  let parts = u32(params[6]);\n  let xb = operand_offset(i / parts, 0u);\n  let t = reduced(tail(2u));\n  var acc: {t} = {init};\n  var ai = 0u;\n  {decl}  let s = sweep(i % parts, parts, t.stop);\n  for (var r = s.x; r < s.y; r = r + s.z) {{\n    let v = ld_x(xb + red_offset(t, r));\n    {each}\n  }}\n  {end}\n  st_out(i32(i), {res});\n}}\n"
        ));
        return text;
    }
    if matches!(form, ReduceForm::Serial | ReduceForm::SerialLine) {
        text.push_str(&entry());
        text.push_str(&format!(
            "  let xb = operand_offset(i, 0u);\n  let ob = operand_offset(i, 1u);\n  let t = reduced(tail(2u));\n  var acc: {t} = {init};\n  var ai = 0u;\n  {decl}  for (var r = u32(params[2]); r < t.stop; r = r + 1u) {{\n    let v = ld_x(xb + red_offset(t, r));\n    {each}\n  }}\n  {end}\n{resume}  st_out(ob, {res});\n}}\n"
        ));
        return text;
    }
    // Folds slot `k` of the workgroup's results into `acc`/`ai`; partial
    // results of all/any are already 0/1 flags.
    let merge = |k: &str| match op {
        ReduceOp::All => format!("acc = acc & sh_v[{k}];"),
        ReduceOp::Any => format!("acc = acc | sh_v[{k}];"),
        _ => step(op, x, "acc", "ai", &format!("sh_v[{k}]"), &format!("sh_i[{k}]")),
    };
    let (merge_group, merge_firsts) = (merge("q + s"), merge("s * GROUP"));
    text.push_str(&format!(
        r#"
const GROUP = {group}u;
var<workgroup> sh_v: array<{t}, {WORKGROUP}>;
var<workgroup> sh_i: array<u32, {WORKGROUP}>;

@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
  let g = wid.y * nwg.x + wid.x;
  let live = g < u32(params[0]);
  let o = min(g, u32(params[0]) - 1u);
  let xb = operand_offset(o, 0u);
  let ob = operand_offset(o, 1u);
  let t = reduced(tail(2u));
  var acc: {t} = {init};
  var ai = 0u;
  {decl}  for (var r = u32(params[2]) + lid; r < t.stop; r = r + {WORKGROUP}u) {{
    let v = ld_x(xb + red_offset(t, r));
    {each}
  }}
  {end}
  sh_v[lid] = acc;
  sh_i[lid] = ai;
  workgroupBarrier();
  // GROUP threads fold GROUP slots each into the group's first slot,
  // then one thread folds those: two barriers, where a tree takes one
  // per halving (llvmpipe switches between all of a workgroup's
  // invocations at every barrier).
  if (lid < GROUP) {{
    let q = lid * GROUP;
    acc = sh_v[q];
    ai = sh_i[q];
    for (var s = 1u; s < GROUP; s = s + 1u) {{
      {merge_group}
    }}
    sh_v[q] = acc;
    sh_i[q] = ai;
  }}
  workgroupBarrier();
  if (lid == 0u && live) {{
    acc = sh_v[0];
    ai = sh_i[0];
    for (var s = 1u; s < GROUP; s = s + 1u) {{
      {merge_firsts}
    }}
  {resume}    st_out(ob, {res});
  }}
}}
"#,
        group = GROUP,
    ));
    text
}
