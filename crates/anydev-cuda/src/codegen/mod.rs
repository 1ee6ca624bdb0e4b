//! CUDA C generation. Kernels are grouped into modules, one per op family
//! and dtype ([`ModuleKey`]): a module is the unit NVRTC compiles and the
//! caches hold, so the first `add` on f32 compiles every binary op of f32
//! once, and nothing is compiled per (op, dtype) pair at run time.
//!
//! Every module is the prelude (`prelude.cu`: storage types, exact f16/bf16
//! conversions, the integer and float semantics of the host kernels, the
//! launch parameter blocks; `complex.cu`: complex numbers as the host
//! kernels compute them) followed by generated kernels. The expressions
//! of the elementwise ops come from one table ([`exprs`]).
//!
//! Elementwise kernels come in four variants, picked per launch:
//! `_v` (contiguous, vectorised 16-byte loads and stores), `_c`
//! (contiguous), `_s` (strided, 32-bit index arithmetic) and `_l`
//! (strided, 64-bit). All use grid-stride loops.

pub mod exprs;
pub mod ty;

use anydev_ops::{BinaryOp, DType, ReduceOp, ScanOp, UnaryOp};
use std::fmt::Write;
use ty::Ty;

/// The common prelude of every module.
pub const PRELUDE: &str = concat!(include_str!("prelude.cu"), include_str!("complex.cu"));

/// The most dims a kernel handles after dims are merged (`ANYDEV_MAXD`).
pub const MAX_DIMS: usize = 12;
/// The most operands of an elementwise kernel, output included (`ANYDEV_MAXOPS`).
pub const MAX_OPERANDS: usize = 5;
/// Threads per block of the generated kernels.
pub const BLOCK: u32 = 256;
/// Threads of the single block that computes `nonzero`.
pub const NONZERO_BLOCK: u32 = 1024;

/// One compiled unit: an op family for one dtype (or element size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModuleKey {
    Unary(DType),
    Binary(DType),
    /// Casts from this dtype to every other.
    Cast(DType),
    /// copy, fill and where for elements of this many bytes (1 to 16).
    Bytes(usize),
    Arange(DType),
    Random(DType),
    Reduce(DType),
    Scan(DType),
    Sort(DType),
    Search(DType),
    /// take for elements of this many bytes (1 to 16).
    Take(usize),
    Nonzero(DType),
    Matmul(DType),
}

impl ModuleKey {
    /// A short stable name (used in cache file names and logs).
    pub fn name(&self) -> String {
        match self {
            ModuleKey::Unary(d) => format!("unary_{d}"),
            ModuleKey::Binary(d) => format!("binary_{d}"),
            ModuleKey::Cast(d) => format!("cast_{d}"),
            ModuleKey::Bytes(s) => format!("bytes{s}"),
            ModuleKey::Arange(d) => format!("arange_{d}"),
            ModuleKey::Random(d) => format!("random_{d}"),
            ModuleKey::Reduce(d) => format!("reduce_{d}"),
            ModuleKey::Scan(d) => format!("scan_{d}"),
            ModuleKey::Sort(d) => format!("sort_{d}"),
            ModuleKey::Search(d) => format!("search_{d}"),
            ModuleKey::Take(s) => format!("take{s}"),
            ModuleKey::Nonzero(d) => format!("nonzero_{d}"),
            ModuleKey::Matmul(d) => format!("matmul_{d}"),
        }
    }

    /// Every module the backend can generate (for compile checks).
    pub fn all() -> Vec<ModuleKey> {
        let mut all = Vec::new();
        for d in DType::ALL {
            all.push(ModuleKey::Unary(d));
            all.push(ModuleKey::Binary(d));
            all.push(ModuleKey::Cast(d));
            all.push(ModuleKey::Reduce(d));
            all.push(ModuleKey::Nonzero(d));
            if d != DType::Bool {
                all.push(ModuleKey::Scan(d));
                all.push(ModuleKey::Matmul(d));
            }
            // Complex numbers have no order and no ranges.
            if !d.is_complex() {
                all.push(ModuleKey::Sort(d));
                all.push(ModuleKey::Search(d));
            }
            if d != DType::Bool && !d.is_complex() {
                all.push(ModuleKey::Arange(d));
            }
            if d.is_float() {
                all.push(ModuleKey::Random(d));
            }
        }
        for s in ELEMENT_SIZES {
            all.push(ModuleKey::Bytes(s));
            all.push(ModuleKey::Take(s));
        }
        all
    }
}

/// The element sizes of the byte movers' modules ([`ModuleKey::Bytes`],
/// [`ModuleKey::Take`]).
pub const ELEMENT_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// Elements per thread of the vectorised variant for operands of these
/// sizes: one 16-byte access for the widest.
pub fn vec_width(sizes: &[usize]) -> usize {
    let widest = sizes.iter().copied().max().unwrap_or(1).max(1);
    (16 / widest).max(1)
}

/// The module's complete CUDA C source.
pub fn source(key: ModuleKey) -> String {
    let mut s = String::with_capacity(PRELUDE.len() + 16 * 1024);
    s.push_str(PRELUDE);
    let _ = writeln!(s, "\n// ---- module {} ----", key.name());
    match key {
        ModuleKey::Unary(d) => unary_module(&mut s, Ty::of(d)),
        ModuleKey::Binary(d) => binary_module(&mut s, Ty::of(d)),
        ModuleKey::Cast(d) => cast_module(&mut s, Ty::of(d)),
        ModuleKey::Bytes(size) => bytes_module(&mut s, size),
        ModuleKey::Arange(d) => arange_module(&mut s, Ty::of(d)),
        ModuleKey::Random(d) => random_module(&mut s, Ty::of(d)),
        ModuleKey::Reduce(d) => reduce_module(&mut s, Ty::of(d)),
        ModuleKey::Scan(d) => scan_module(&mut s, Ty::of(d)),
        ModuleKey::Sort(d) => sort_module(&mut s, Ty::of(d)),
        ModuleKey::Search(d) => search_module(&mut s, Ty::of(d)),
        ModuleKey::Take(size) => take_module(&mut s, size),
        ModuleKey::Nonzero(d) => nonzero_module(&mut s, Ty::of(d)),
        ModuleKey::Matmul(d) => matmul_module(&mut s, Ty::of(d)),
    }
    s
}

/// Kernel names (without variant suffix) of the elementwise ops.
pub fn unary_kernel(op: UnaryOp) -> String {
    format!("u_{}", op.name())
}

pub fn binary_kernel(op: BinaryOp) -> String {
    format!("b_{}", op.name())
}

pub fn cast_kernel(to: DType) -> String {
    format!("cast_{to}")
}

pub fn reduce_kernel(op: ReduceOp, stage: &str) -> String {
    format!("r_{}_{stage}", op.name())
}

pub fn scan_kernel(op: ScanOp, stage: &str) -> String {
    format!("s_{}_{stage}", op.name())
}

const INPUT_NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// Emits the four variants of an elementwise kernel `name` computing
/// `expr` (over inputs named a, b, c, d and the linear index `i`).
fn elementwise(s: &mut String, name: &str, inputs: &[&str], out: &str, expr: &str, sizes: &[usize]) {
    let vec = vec_width(sizes);
    let params: String = inputs
        .iter()
        .zip(INPUT_NAMES)
        .map(|(t, n)| format!(", {t} {n}"))
        .collect();
    let _ = writeln!(
        s,
        "__device__ __forceinline__ {out} f_{name}(u64 i{params}) {{ (void)i; return {expr}; }}"
    );
    let args: String = inputs
        .iter()
        .zip(INPUT_NAMES)
        .map(|(t, n)| format!(", In<{t}> i{n}"))
        .collect();
    let sig = |variant: &str| {
        format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}_{variant}(EwParams p{args}, {out}* __restrict__ o)"
        )
    };
    let scalars: String = inputs
        .iter()
        .zip(INPUT_NAMES)
        .map(|(t, n)| format!("    const {t} s{n} = scalar_of<{t}>(i{n}.bits);\n"))
        .collect();
    let call = |index: &str, loads: &dyn Fn(&str) -> String| {
        let a: String = INPUT_NAMES[..inputs.len()]
            .iter()
            .map(|n| format!(", {}", loads(n)))
            .collect();
        format!("f_{name}({index}{a})")
    };
    let contiguous_load = |n: &str| format!("(i{n}.p ? i{n}.p[i] : s{n})");
    // Contiguous.
    let _ = writeln!(
        s,
        "{} {{\n{scalars}    for (u64 i = global_thread(); i < p.n; i += grid_threads()) o[i] = {};\n}}",
        sig("c"),
        call("i", &contiguous_load)
    );
    // Vectorised.
    let mut body = String::new();
    for (t, n) in inputs.iter().zip(INPUT_NAMES) {
        let _ = writeln!(
            body,
            "        Pack<{t}, {vec}> v{n};\n        if (i{n}.p) v{n} = ((const Pack<{t}, {vec}>*)i{n}.p)[j];\n        else for (int k = 0; k < {vec}; ++k) v{n}.v[k] = s{n};"
        );
    }
    let lane = |n: &str| format!("v{n}.v[k]");
    let _ = writeln!(
        s,
        "{} {{\n{scalars}    const u64 nv = p.n / {vec};\n    for (u64 j = global_thread(); j < nv; j += grid_threads()) {{\n{body}        Pack<{out}, {vec}> r;\n#pragma unroll\n        for (int k = 0; k < {vec}; ++k) r.v[k] = {};\n        ((Pack<{out}, {vec}>*)o)[j] = r;\n    }}\n    for (u64 i = nv * {vec} + global_thread(); i < p.n; i += grid_threads()) o[i] = {};\n}}",
        sig("v"),
        call(&format!("j * {vec} + k"), &lane),
        call("i", &contiguous_load)
    );
    // Strided, 32- and 64-bit index arithmetic.
    let nops = inputs.len() + 1;
    let strided_load = |n: &str| {
        let k = INPUT_NAMES.iter().position(|x| *x == n).unwrap_or(0);
        format!("(i{n}.p ? i{n}.p[off[{k}]] : s{n})")
    };
    for (variant, index) in [("s", "u32"), ("l", "u64")] {
        let _ = writeln!(
            s,
            "{} {{\n{scalars}    for (u64 i = global_thread(); i < p.n; i += grid_threads()) {{\n        i64 off[ANYDEV_MAXOPS];\n        ew_offsets<{index}>(p, ({index})i, {nops}, off);\n        o[off[{}]] = {};\n    }}\n}}",
            sig(variant),
            inputs.len(),
            call("i", &strided_load)
        );
    }
}

fn unary_module(s: &mut String, t: Ty) {
    for &op in UnaryOp::ALL {
        if let Some(expr) = exprs::unary(op, t) {
            let out = Ty::of(op.output_dtype(t.dtype));
            elementwise(
                s,
                &unary_kernel(op),
                &[t.storage()],
                out.storage(),
                &expr,
                &[t.dtype.size(), out.dtype.size()],
            );
        }
    }
}

fn binary_module(s: &mut String, t: Ty) {
    let st = t.storage();
    for &op in BinaryOp::ALL {
        if let Some(expr) = exprs::binary(op, t) {
            let (out, osize) = if op.outputs_bool() {
                ("u8", 1)
            } else {
                (st, t.dtype.size())
            };
            let size = t.dtype.size();
            elementwise(s, &binary_kernel(op), &[st, st], out, &expr, &[size, size, osize]);
        }
    }
}

fn cast_module(s: &mut String, from: Ty) {
    for to in DType::ALL {
        if to == from.dtype {
            continue;
        }
        let to = Ty::of(to);
        let expr = from.cast_to(to, "a");
        let sizes = [from.dtype.size(), to.dtype.size()];
        elementwise(
            s,
            &cast_kernel(to.dtype),
            &[from.storage()],
            to.storage(),
            &expr,
            &sizes,
        );
    }
}

fn bytes_module(s: &mut String, size: usize) {
    let b = ty::bits_type(size);
    elementwise(s, "copy", &[b], b, "a", &[size, size]);
    elementwise(s, "fill", &[b], b, "a", &[size, size]);
    elementwise(s, "where", &["u8", b, b], b, "(a != 0 ? b : c)", &[1, size, size, size]);
}

fn arange_module(s: &mut String, t: Ty) {
    let expr = ty::from_f64(t, "__dadd_rn(a, __dmul_rn((double)i, b))");
    elementwise(
        s,
        "arange",
        &["double", "double"],
        t.storage(),
        &expr,
        &[8, 8, t.dtype.size()],
    );
}

fn random_module(s: &mut String, t: Ty) {
    let st = t.storage();
    let next = exprs::binary(BinaryOp::NextAfter, t).unwrap_or_else(|| "a".into());
    let _ = writeln!(
        s,
        "__device__ __forceinline__ {st} next_toward({st} a, {st} b) {{ return {next}; }}"
    );
    let from = |v: &str| ty::from_f64(t, v);
    let _ = writeln!(
        s,
        "__device__ __forceinline__ {st} draw_uniform(u64 i, u64 seed, u64 counter, double low, double high) {{\n    u32 w[4];\n    philox_block(seed, counter, i, w);\n    const double u = philox_unit(w[0], w[1]);\n    {st} v = {};\n    if ((double){} >= high && high > low) v = next_toward(v, {});\n    return v;\n}}",
        from("__dadd_rn(low, __dmul_rn(__dsub_rn(high, low), u))"),
        t.up("v"),
        from("low"),
    );
    let _ = writeln!(
        s,
        "__device__ __forceinline__ {st} draw_normal(u64 i, u64 seed, u64 counter, double mean, double std) {{\n    u32 w[4];\n    philox_block(seed, counter, i, w);\n    const double u1 = 1.0 - philox_unit(w[0], w[1]);\n    const double u2 = philox_unit(w[2], w[3]);\n    const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);\n    return {};\n}}",
        from("__dadd_rn(mean, __dmul_rn(std, z))"),
    );
    let ins = ["u64", "u64", "double", "double"];
    let sizes = [8, 8, 8, 8, t.dtype.size()];
    elementwise(s, "uniform", &ins, st, "draw_uniform(i, a, b, c, d)", &sizes);
    elementwise(s, "normal", &ins, st, "draw_normal(i, a, b, c, d)", &sizes);
}

/// Whether the backend implements reduction `op` for `dtype` (as the host:
/// all/any for every dtype, sum/prod for numeric dtypes, the ordered ones
/// for real numeric dtypes).
pub fn reduce_supported(op: ReduceOp, dtype: DType) -> bool {
    match op {
        ReduceOp::All | ReduceOp::Any => true,
        ReduceOp::Sum | ReduceOp::Prod => dtype != DType::Bool,
        _ => dtype != DType::Bool && !dtype.is_complex(),
    }
}

fn reduce_module(s: &mut String, t: Ty) {
    let st = t.storage();
    let c = t.compute();
    for &op in ReduceOp::ALL {
        if !reduce_supported(op, t.dtype) {
            continue;
        }
        // (accumulator, output, init, step, combine, finish, shuffle)
        let (acc, out): (String, &str) = match op {
            ReduceOp::Sum | ReduceOp::Prod => (t.accumulator().into(), st),
            ReduceOp::Min | ReduceOp::Max => (minmax_acc(t).into(), st),
            ReduceOp::ArgMin | ReduceOp::ArgMax => (format!("ArgAcc<{c}>"), "i64"),
            ReduceOp::All | ReduceOp::Any => ("int".into(), "u8"),
        };
        let x = t.up("x");
        let (init, step, combine, finish, shfl) = match op {
            ReduceOp::Sum => (
                t.accumulator_const(0),
                format!("(Acc)(a + (Acc){x})"),
                "(Acc)(a + b)".to_string(),
                accumulated(t, "a"),
                "shfl_down(a, o)".to_string(),
            ),
            ReduceOp::Prod => (
                t.accumulator_const(1),
                format!("(Acc)(a * (Acc){x})"),
                "(Acc)(a * b)".into(),
                accumulated(t, "a"),
                "shfl_down(a, o)".into(),
            ),
            ReduceOp::Max | ReduceOp::Min => {
                let (ge, id) = if op == ReduceOp::Max {
                    (">=", t.lowest())
                } else {
                    ("<=", t.highest())
                };
                let nan = if t.is_float() { "m_isnan(a) || " } else { "" };
                (
                    format!("(Acc){id}"),
                    format!("combine(a, (Acc){x})"),
                    format!("({nan}a {ge} b) ? a : b"),
                    if t.is_float() { t.down("a") } else { format!("({st})a") },
                    "shfl_down(a, o)".into(),
                )
            }
            ReduceOp::ArgMax | ReduceOp::ArgMin => {
                let (gt, id) = if op == ReduceOp::ArgMax {
                    (">", t.lowest())
                } else {
                    ("<", t.highest())
                };
                let (an, bn) = if t.is_float() {
                    ("m_isnan(a.v)", "m_isnan(b.v)")
                } else {
                    ("false", "false")
                };
                (
                    format!("Acc{{({c}){id}, -1}}"),
                    format!("combine(a, Acc{{({c}){x}, i}})"),
                    format!(
                        "(a.i < 0) ? b : (b.i < 0) ? a : ({an} || {bn}) ? (({an} && {bn}) ? (a.i < b.i ? a : b) : ({an} ? a : b)) : (a.v == b.v) ? (a.i < b.i ? a : b) : (a.v {gt} b.v ? a : b)"
                    ),
                    "(i64)(a.i < 0 ? 0 : a.i)".into(),
                    "Acc{shfl_down(a.v, o), shfl_down(a.i, o)}".into(),
                )
            }
            ReduceOp::All | ReduceOp::Any => {
                let (id, opx) = if op == ReduceOp::All { ("1", "&") } else { ("0", "|") };
                (
                    id.into(),
                    format!("a {opx} (int){}", t.nonzero("x")),
                    format!("a {opx} b"),
                    "(u8)(a != 0)".into(),
                    "shfl_down(a, o)".into(),
                )
            }
        };
        // Sums of inexact dtypes fold in tiers (prelude.cu, `Fold`).
        let tiered = op == ReduceOp::Sum && t.dtype.is_inexact();
        let r = format!("R_{}", op.name());
        let _ = writeln!(
            s,
            "struct {r} {{\n    typedef {acc} Acc;\n    typedef {out} Out;\n    static const bool tiered = {tiered};\n    static __device__ __forceinline__ Acc init() {{ return {init}; }}\n    static __device__ __forceinline__ Acc combine(Acc a, Acc b) {{ return {combine}; }}\n    static __device__ __forceinline__ Acc step(Acc a, {st} x, i64 i) {{ (void)i; return {step}; }}\n    static __device__ __forceinline__ Out finish(Acc a) {{ return {finish}; }}\n    static __device__ __forceinline__ Acc shfl(Acc a, int o) {{ return {shfl}; }}\n}};"
        );
        // The kernels, each over `RedParams p` and the arguments listed.
        let (x, o, ws_in, ws_out) = (
            format!("const {st}* __restrict__ x"),
            format!("{out}* __restrict__ out"),
            format!("const {r}::Acc* __restrict__ ws"),
            format!("{r}::Acc* __restrict__ ws"),
        );
        for (stage, params, call) in [
            (
                "thread",
                format!("{x}, {o}, {ws_out}"),
                format!("reduce_thread<{r}, {st}>(p, x, out, ws)"),
            ),
            (
                "columns",
                format!("{ws_in}, {o}"),
                format!("reduce_columns_final<{r}>(p, ws, out)"),
            ),
            (
                "warp",
                format!("{x}, {o}"),
                format!("reduce_warp<{r}, {st}>(p, x, out)"),
            ),
            (
                "block",
                format!("{x}, {o}, {ws_out}"),
                format!("reduce_block<{r}, {st}>(p, x, out, ws)"),
            ),
            (
                "final",
                format!("{ws_in}, {o}"),
                format!("reduce_final<{r}>(p, ws, out)"),
            ),
        ] {
            let _ = writeln!(
                s,
                "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {}(RedParams p, {params}) {{ {call}; }}",
                reduce_kernel(op, stage)
            );
        }
    }
}

/// The accumulator `a` of a sum, product, scan or matmul as the storage
/// value of `t` (rounded once for floats and complex numbers, wrapped for
/// integers).
fn accumulated(t: Ty, a: &str) -> String {
    if t.is_inexact() {
        t.down(a)
    } else {
        format!("({}){a}", t.storage())
    }
}

/// Bytes of one partial accumulator of a split reduction (the workspace
/// element of `r_*_block`).
pub fn reduce_acc_size(op: ReduceOp, dtype: DType) -> usize {
    let t = Ty::of(dtype);
    let compute = match t.compute() {
        "cdouble" => 16,
        "double" => 8,
        _ => 4,
    };
    match op {
        ReduceOp::Sum | ReduceOp::Prod => {
            if t.is_inexact() {
                compute
            } else {
                dtype.size().max(4)
            }
        }
        ReduceOp::Min | ReduceOp::Max => {
            if t.is_float() {
                compute
            } else {
                dtype.size().max(4)
            }
        }
        ReduceOp::ArgMin | ReduceOp::ArgMax => 16,
        ReduceOp::All | ReduceOp::Any => 4,
    }
}

/// The accumulator of min/max: the compute type, or a 32/64-bit integer
/// of the dtype's signedness (warp shuffles move 32 or 64 bits).
fn minmax_acc(t: Ty) -> &'static str {
    match t.dtype {
        DType::I8 | DType::I16 | DType::I32 => "int",
        DType::U8 | DType::U16 | DType::U32 | DType::Bool => "u32",
        DType::I64 => "i64",
        DType::U64 => "u64",
        _ => t.compute(),
    }
}

fn scan_module(s: &mut String, t: Ty) {
    let st = t.storage();
    let acc = t.accumulator();
    let fin = accumulated(t, "acc");
    let fin_v = accumulated(t, "v");
    let x = |e: &str| format!("({acc}){}", t.up(e));
    for &op in ScanOp::ALL {
        let (id, opc, code) = match op {
            ScanOp::CumulativeSum => (t.accumulator_const(0), "+", 0),
            ScanOp::CumulativeProd => (t.accumulator_const(1), "*", 1),
        };
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {}(LineParams p, const {st}* __restrict__ x, {st}* __restrict__ o) {{\n    for (u64 l = global_thread(); l < p.lines; l += grid_threads()) {{\n        i64 ox, oo;\n        line_offsets(p, l, ox, oo);\n        {acc} acc = {id};\n        for (u64 i = 0; i < p.len; ++i) {{\n            acc = ({acc})(acc {opc} {});\n            o[oo + (i64)i * p.ax_o] = {fin};\n        }}\n    }}\n}}",
            scan_kernel(op, "thread"),
            x("x[ox + (i64)i * p.ax_x]"),
        );
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {}(LineParams p, const {st}* __restrict__ x, {st}* __restrict__ o) {{\n    const u64 l = blockIdx.x;\n    i64 ox, oo;\n    line_offsets(p, l, ox, oo);\n    {acc} carry = {id};\n    for (u64 base = 0; base < p.len; base += blockDim.x) {{\n        const u64 i = base + threadIdx.x;\n        {acc} v = i < p.len ? {} : {id};\n        {acc} total;\n        v = block_scan<{acc}, {code}>(v, {id}, &total);\n        v = ({acc})(carry {opc} v);\n        if (i < p.len) o[oo + (i64)i * p.ax_o] = {fin_v};\n        carry = ({acc})(carry {opc} total);\n    }}\n}}",
            scan_kernel(op, "block"),
            x("x[ox + (i64)i * p.ax_x]"),
        );
    }
}

/// `before(a, b)`: `a` sorts strictly before `b` in ascending order, NaN
/// last (the host's `nan_last`).
fn before_fn(s: &mut String, t: Ty) {
    let st = t.storage();
    let body = if t.is_float() {
        let (x, y) = (t.up("a"), t.up("b"));
        format!("!m_isnan({x}) && (m_isnan({y}) || {x} < {y})")
    } else {
        "a < b".into()
    };
    let _ = writeln!(
        s,
        "__device__ __forceinline__ bool before({st} a, {st} b) {{ return {body}; }}"
    );
}

fn sort_module(s: &mut String, t: Ty) {
    let st = t.storage();
    before_fn(s, t);
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void __launch_bounds__({BLOCK}) sort_init(LineParams p, const {st}* __restrict__ x, {st}* __restrict__ keys, i64* __restrict__ idx) {{\n    const u64 n = p.lines * p.len;\n    for (u64 e = global_thread(); e < n; e += grid_threads()) {{\n        const u64 l = e / p.len, i = e % p.len;\n        i64 ox, oo;\n        line_offsets(p, l, ox, oo);\n        keys[e] = x[ox + (i64)i * p.ax_x];\n        idx[e] = (i64)i;\n    }}\n}}"
    );
    for (name, less) in [("sort_merge_asc", "before(x, y)"), ("sort_merge_desc", "before(y, x)")] {
        let _ = writeln!(
            s,
            "__device__ __forceinline__ bool {name}_less({st} x, {st} y) {{ return {less}; }}\nextern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(LineParams p, u64 width, const {st}* __restrict__ ks, const i64* __restrict__ is, {st}* __restrict__ kd, i64* __restrict__ id) {{\n    const u64 n = p.lines * p.len;\n    for (u64 e = global_thread(); e < n; e += grid_threads()) {{\n        const u64 l = e / p.len, i = e % p.len, base = l * p.len;\n        const u64 s = (i / (2 * width)) * (2 * width);\n        const u64 mid = s + width < p.len ? s + width : p.len;\n        const u64 end = s + 2 * width < p.len ? s + 2 * width : p.len;\n        const {st} key = ks[base + i];\n        u64 pos;\n        if (i < mid) {{\n            u64 lo = mid, hi = end;\n            while (lo < hi) {{ const u64 m = (lo + hi) / 2; if ({name}_less(ks[base + m], key)) lo = m + 1; else hi = m; }}\n            pos = (i - s) + (lo - mid);\n        }} else {{\n            u64 lo = s, hi = mid;\n            while (lo < hi) {{ const u64 m = (lo + hi) / 2; if (!{name}_less(key, ks[base + m])) lo = m + 1; else hi = m; }}\n            pos = (i - mid) + (lo - s);\n        }}\n        kd[base + s + pos] = key;\n        id[base + s + pos] = is[base + i];\n    }}\n}}"
        );
    }
    for (name, ty, src) in [("sort_keys_out", st, "keys"), ("sort_idx_out", "i64", "idx")] {
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(LineParams p, const {ty}* __restrict__ {src}, {ty}* __restrict__ o) {{\n    const u64 n = p.lines * p.len;\n    for (u64 e = global_thread(); e < n; e += grid_threads()) {{\n        const u64 l = e / p.len, i = e % p.len;\n        i64 ox, oo;\n        line_offsets(p, l, ox, oo);\n        o[oo + (i64)i * p.ax_o] = {src}[e];\n    }}\n}}"
        );
    }
}

fn search_module(s: &mut String, t: Ty) {
    let st = t.storage();
    before_fn(s, t);
    for (name, go_right) in [
        ("search_left", "before(sorted[(i64)m * ss], v)"),
        ("search_right", "!before(v, sorted[(i64)m * ss])"),
    ] {
        for (variant, index) in [("s", "u32"), ("l", "u64")] {
            let _ = writeln!(
                s,
                "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}_{variant}(EwParams p, const {st}* __restrict__ values, i64* __restrict__ o, const {st}* __restrict__ sorted, i64 ss, u64 len) {{\n    for (u64 i = global_thread(); i < p.n; i += grid_threads()) {{\n        i64 off[ANYDEV_MAXOPS];\n        ew_offsets<{index}>(p, ({index})i, 2, off);\n        const {st} v = values[off[0]];\n        u64 lo = 0, hi = len;\n        while (lo < hi) {{ const u64 m = lo + (hi - lo) / 2; if ({go_right}) lo = m + 1; else hi = m; }}\n        o[off[1]] = (i64)lo;\n    }}\n}}"
            );
        }
    }
}

fn take_module(s: &mut String, size: usize) {
    let b = ty::bits_type(size);
    for (variant, index) in [("s", "u32"), ("l", "u64")] {
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) take_{variant}(EwParams p, const i64* __restrict__ idx, const {b}* __restrict__ x, {b}* __restrict__ o, i64 xs, i64 len) {{\n    for (u64 i = global_thread(); i < p.n; i += grid_threads()) {{\n        i64 off[ANYDEV_MAXOPS];\n        ew_offsets<{index}>(p, ({index})i, 3, off);\n        i64 v = idx[off[0]];\n        if (v < 0) v += len;\n        o[off[2]] = (v >= 0 && v < len) ? x[off[1] + v * xs] : {b}();\n    }}\n}}"
        );
    }
}

fn nonzero_module(s: &mut String, t: Ty) {
    let st = t.storage();
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void __launch_bounds__({NONZERO_BLOCK}) nonzero(EwParams p, const {st}* __restrict__ x, i64* __restrict__ o, u64 count, i64 os0, i64 os1) {{\n    u64 carry = 0;\n    for (u64 base = 0; base < p.n; base += blockDim.x) {{\n        const u64 e = base + threadIdx.x;\n        u32 flag = 0;\n        if (e < p.n) {{\n            i64 off[ANYDEV_MAXOPS];\n            ew_offsets<u64>(p, e, 1, off);\n            flag = {} ? 1u : 0u;\n        }}\n        u32 total;\n        const u32 incl = block_scan<u32, 0>(flag, 0u, &total);\n        const u64 pos = carry + incl - flag;\n        if (flag && pos < count) {{\n            u64 rest = e;\n            for (int d = p.ndim - 1; d >= 0; --d) {{\n                const u64 len = (u64)p.shape[d];\n                o[(i64)pos * os0 + (i64)d * os1] = (i64)(rest % len);\n                rest /= len;\n            }}\n        }}\n        carry += total;\n    }}\n}}",
        t.nonzero("x[off[0]]")
    );
}

fn matmul_module(s: &mut String, t: Ty) {
    let st = t.storage();
    let (acc, fin, zero) = (t.accumulator(), accumulated(t, "acc"), t.accumulator_const(0));
    let _ = writeln!(
        s,
        "struct MmParams {{\n    u64 batch;\n    int bdim;\n    int pad;\n    i64 bshape[ANYDEV_MAXD];\n    i64 bst[3][ANYDEV_MAXD];\n    i64 m, n, k, ars, acs, brs, bcs, ors, ocs;\n}};\nextern \"C\" __global__ void __launch_bounds__({BLOCK}) matmul(MmParams p, const {st}* __restrict__ a, const {st}* __restrict__ b, {st}* __restrict__ o) {{\n    const u64 total = p.batch * (u64)p.m * (u64)p.n;\n    for (u64 e = global_thread(); e < total; e += grid_threads()) {{\n        const i64 j = (i64)(e % (u64)p.n);\n        const u64 t = e / (u64)p.n;\n        const i64 i = (i64)(t % (u64)p.m);\n        u64 bi = t / (u64)p.m;\n        i64 oa = 0, ob = 0, oo = 0;\n        for (int d = p.bdim - 1; d >= 0; --d) {{\n            const u64 len = (u64)p.bshape[d];\n            const i64 c = (i64)(bi % len);\n            bi /= len;\n            oa += c * p.bst[0][d];\n            ob += c * p.bst[1][d];\n            oo += c * p.bst[2][d];\n        }}\n        {acc} acc = {zero};\n        for (i64 q = 0; q < p.k; ++q) {{\n            const {acc} x = ({acc}){};\n            const {acc} y = ({acc}){};\n            acc = ({acc})(acc + ({acc})(x * y));\n        }}\n        o[oo + i * p.ors + j * p.ocs] = {fin};\n    }}\n}}",
        t.up("a[oa + i * p.ars + q * p.acs]"),
        t.up("b[ob + q * p.brs + j * p.bcs]"),
    );
}
