//! WGSL generation: every kernel is produced from a [`KernelKey`] (and, for
//! elementwise kernels, the [`Access`] of the call) by the templates in
//! this module, from two tables: [`dtype`] (how each dtype is
//! stored and computed) and [`exprs`] (what each elementwise op computes).
//! No shader text is written per (op, dtype) pair.

mod complex;
pub mod dtype;
pub mod exprs;
pub mod layout;
pub mod linalg;
mod lines;
pub mod map;
mod math_exp;
mod math_f64;
mod math_trig;
pub mod matmul;
mod nonzero;
mod prelude;
pub mod random;
mod reduce;
pub mod sort;

use anydev_ops::{BinaryOp, DType, OpCode, ReduceOp, ScanOp, UnaryOp};
use dtype::{Repr, ShaderFeatures};
pub use map::Access;
use map::{MapSpec, Operand};
pub use reduce::ReduceForm;

pub use matmul::TILE as MATMUL_TILE;

/// Everything that decides a kernel's source but the [`Access`] of an
/// elementwise call; with it, the pipeline cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelKey {
    Unary {
        op: UnaryOp,
        dtype: DType,
    },
    /// `lhs_scalar`/`rhs_scalar`: that operand comes from the params slot of
    /// its position (scalar operands always use the slot of their position).
    Binary {
        op: BinaryOp,
        dtype: DType,
        lhs_scalar: bool,
        rhs_scalar: bool,
    },
    Cast {
        from: DType,
        to: DType,
    },
    Where {
        dtype: DType,
        x_scalar: bool,
        y_scalar: bool,
    },
    Copy(DType),
    Fill(DType),
    /// `via` is the type the values are computed in (f64 where the device has it).
    Arange {
        via: DType,
        out: DType,
    },
    /// `via`: the dtype of the parameters and arithmetic (see [`random`]).
    Random {
        out: DType,
        via: DType,
        normal: bool,
    },
    Take(DType),
    Reduce {
        op: ReduceOp,
        dtype: DType,
        form: ReduceForm,
    },
    Scan {
        op: ScanOp,
        dtype: DType,
    },
    /// One compare-exchange stage of the sorting network (see [`sort`]).
    SortStage {
        dtype: DType,
        descending: bool,
    },
    /// The values, or for `arg` the positions, the network sorted.
    SortGather {
        dtype: DType,
        arg: bool,
    },
    SearchSorted {
        dtype: DType,
        right: bool,
    },
    Matmul(DType),
    /// The non-zeros' coordinates (`write`), or each workgroup's count of
    /// them (see `nonzero.rs`).
    Nonzero {
        dtype: DType,
        write: bool,
    },
}

/// Whether a device with `features` runs `op` for `dtype` (the dtype of
/// `Op::support_dtype`). Index outputs and inputs are `i64`, so the ops
/// that produce or read them need 64-bit integers.
pub fn supports(features: ShaderFeatures, op: OpCode, dtype: DType) -> bool {
    if !features.holds(dtype) {
        return false;
    }
    let r = Repr::of(dtype);
    let i64_ok = features.holds(DType::I64);
    // Complex numbers have no order, and no arange or random generator.
    let ordered = !dtype.is_complex();
    match op {
        OpCode::Unary(u) => exprs::unary(u, &r).is_some(),
        OpCode::Binary(b) => exprs::binary(b, &r).is_some(),
        OpCode::Reduce(o) => reduce::supported(o, &r) && (i64_ok || !matches!(o, ReduceOp::ArgMax | ReduceOp::ArgMin)),
        OpCode::Scan(_) | OpCode::Matmul => !r.is_bool(),
        OpCode::Arange => !r.is_bool() && ordered,
        OpCode::Random => r.is_float(),
        OpCode::Cast | OpCode::Where | OpCode::Copy | OpCode::Fill => true,
        OpCode::Take | OpCode::Nonzero => i64_ok,
        OpCode::Sort | OpCode::Argsort | OpCode::SearchSorted => i64_ok && ordered,
    }
}

impl KernelKey {
    /// Whether [`Access::Vector`] applies: the kernel computes each element
    /// from its operands' values alone, and every tensor operand and the
    /// output are 4-byte scalars (`vec4` of `f32`, `i32` or `u32`).
    pub fn vectorizes(&self) -> bool {
        let four = four_bytes;
        match *self {
            KernelKey::Unary { op, dtype } => four(dtype) && four(op.output_dtype(dtype)),
            KernelKey::Binary { op, dtype, .. } => four(dtype) && !op.outputs_bool(),
            KernelKey::Cast { from, to } => four(from) && four(to),
            KernelKey::Copy(d) | KernelKey::Fill(d) => four(d),
            _ => false,
        }
    }
}

/// Whether `dtype` is one that `vec4` loads serve: f32, i32 or u32.
pub fn four_bytes(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::I32 | DType::U32)
}

/// A generated kernel before its source is written out.
enum Kernel {
    /// An elementwise kernel, written for the [`Access`] of the call.
    Map(MapSpec),
    /// Any other kernel: one source for every layout.
    Whole(String),
}

/// The WGSL source of a kernel for `access`, or `None` when the op is
/// unsupported for its dtypes (the caller has checked device features)
/// or the kernel has no form for that access.
pub fn source(key: &KernelKey, access: Access) -> Option<String> {
    match kernel(key)? {
        Kernel::Map(spec) => {
            let fits = match access {
                Access::Vector => key.vectorizes(),
                Access::Words => spec.out.word.is_none(),
                Access::Strided | Access::Linear | Access::Planar => true,
            };
            fits.then(|| map::source(&spec, access))
        }
        Kernel::Whole(text) => (access == Access::Strided).then_some(text),
    }
}

fn kernel(key: &KernelKey) -> Option<Kernel> {
    let of = Repr::of;
    let bool_repr = of(DType::Bool);
    Some(match *key {
        KernelKey::Unary { op, dtype } => {
            let r = of(dtype);
            let expr = exprs::unary(op, &r)?;
            let out = of(op.output_dtype(dtype));
            Kernel::Map(elementwise(
                vec![tensor(r)],
                out,
                format!("  let a = v0;\n  let r = {};", expr.into_value()),
            ))
        }
        KernelKey::Binary {
            op,
            dtype,
            lhs_scalar,
            rhs_scalar,
        } => {
            let r = of(dtype);
            let expr = exprs::binary(op, &r)?;
            let out = if op.outputs_bool() { bool_repr } else { r };
            let operands = vec![either(r, lhs_scalar, 0), either(r, rhs_scalar, 1)];
            Kernel::Map(elementwise(
                operands,
                out,
                format!("  let a = v0;\n  let b = v1;\n  let r = {};", expr.into_value()),
            ))
        }
        KernelKey::Cast { from, to } => {
            let (s, d) = (of(from), of(to));
            Kernel::Map(elementwise(
                vec![tensor(s)],
                d,
                format!("  let r = {};", exprs::cast(&s, &d, "v0")),
            ))
        }
        KernelKey::Where {
            dtype,
            x_scalar,
            y_scalar,
        } => {
            let r = of(dtype);
            let operands = vec![tensor(bool_repr), either(r, x_scalar, 1), either(r, y_scalar, 2)];
            Kernel::Map(elementwise(operands, r, "  let r = select(v2, v1, v0 != 0u);".into()))
        }
        KernelKey::Copy(dtype) => Kernel::Map(elementwise(vec![tensor(of(dtype))], of(dtype), "  let r = v0;".into())),
        KernelKey::Fill(dtype) => {
            let r = of(dtype);
            Kernel::Map(elementwise(
                vec![Operand::Scalar { repr: r, slot: 0 }],
                r,
                "  let r = v0;".into(),
            ))
        }
        KernelKey::Arange { via, out } => {
            let (v, o) = (of(via), of(out));
            let scalars = vec![
                Operand::Scalar { repr: v, slot: 0 },
                Operand::Scalar { repr: v, slot: 1 },
            ];
            let value = format!("(v0 + {}(i) * v1)", v.compute);
            Kernel::Map(elementwise(
                scalars,
                o,
                format!("  let r = {};", exprs::cast(&v, &o, &value)),
            ))
        }
        KernelKey::Random { out, via, normal } => Kernel::Map(random::spec(&of(out), via, normal)?),
        KernelKey::Take(dtype) => {
            // Operand 0: the index for this output element (strides only on
            // the axis); operand 1: `x` with a zero stride on the axis.
            // Slot 0 holds x's stride along the axis.
            let operands = vec![
                tensor(of(DType::I64)),
                Operand::Tensor {
                    repr: of(dtype),
                    load: false,
                },
            ];
            Kernel::Map(elementwise(
                operands,
                of(dtype),
                "  let r = ld_t1(o1 + i32(v0) * params[2]);".into(),
            ))
        }
        KernelKey::SearchSorted { dtype, right } => {
            let r = of(dtype);
            let t = r.compute;
            let nan = |e: &str| {
                if r.is_float() {
                    format!("isnan_{t}({e})")
                } else {
                    "false".into()
                }
            };
            // lt(a, b): a sorts before b, NaN last.
            let lt = |a: &str, b: &str| format!("({a} < {b} || (!{} && {}))", nan(a), nan(b));
            let go_right = if right {
                format!("!{}", lt("v0", "s"))
            } else {
                lt("s", "v0")
            };
            // Slots: 0 = offset, 1 = stride, 2 = length of `sorted` (extra binding e0).
            let body = format!(
                "  var lo = 0u;\n  var hi = u32(params[6]);\n  while (lo < hi) {{\n    let mid = (lo + hi) / 2u;\n    let s = ld_e0(params[2] + i32(mid) * params[4]);\n    if ({go_right}) {{ lo = mid + 1u; }} else {{ hi = mid; }}\n  }}\n  let r = i64(lo);"
            );
            let mut spec = elementwise(vec![tensor(r)], of(DType::I64), body);
            spec.extra = vec![r];
            Kernel::Map(spec)
        }
        KernelKey::Reduce { op, dtype, form } => {
            let x = of(dtype);
            if !reduce::supported(op, &x) || !form.serves(op, dtype) {
                return None;
            }
            let out = match op {
                ReduceOp::All | ReduceOp::Any => bool_repr,
                ReduceOp::ArgMax | ReduceOp::ArgMin => of(DType::I64),
                _ => x,
            };
            Kernel::Whole(reduce::source(op, &x, &out, form))
        }
        KernelKey::Scan { op, dtype } => Kernel::Whole(lines::scan(op, &of(dtype))),
        KernelKey::SortStage { dtype, descending } => Kernel::Whole(sort::stage(&of(dtype), descending)),
        KernelKey::SortGather { dtype, arg } => Kernel::Whole(sort::gather(&of(dtype), arg)),
        KernelKey::Matmul(dtype) => Kernel::Whole(matmul::source(&of(dtype))),
        KernelKey::Nonzero { dtype, write } => Kernel::Whole(nonzero::source(&of(dtype), write)),
    })
}

fn tensor(repr: Repr) -> Operand {
    Operand::Tensor { repr, load: true }
}

fn either(repr: Repr, scalar: bool, slot: u32) -> Operand {
    if scalar {
        Operand::Scalar { repr, slot }
    } else {
        tensor(repr)
    }
}

fn elementwise(operands: Vec<Operand>, out: Repr, body: String) -> MapSpec {
    MapSpec {
        operands,
        out,
        extra: Vec::new(),
        uses: Vec::new(),
        body,
        functions: String::new(),
    }
}
