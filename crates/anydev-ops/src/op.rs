use crate::{BinaryOp, DType, OpCode, ReduceOp, Scalar, ScanOp, UnaryOp};

/// An operand that is either an array (`T`) or a scalar of the op's dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand<T> {
    Tensor(T),
    Scalar(Scalar),
}

/// What `Random` draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform on `[low, high)`.
    Uniform { low: f64, high: f64 },
    /// Normal with the given mean and standard deviation.
    Normal { mean: f64, std: f64 },
}

/// Anything that describes a strided operand and knows its dtype.
pub trait TensorDType {
    fn dtype(&self) -> DType;
}

/// One call of a primitive op.
///
/// `T` is how the caller names a strided operand: the runtime passes
/// buffer references, host kernels receive raw pointers, plugins receive
/// ABI handles. Every operand carries its own shape and strides (in
/// elements); broadcasting is expressed with zero strides, so operand
/// shapes always equal the output shape where the op is elementwise.
///
/// The array layer has validated every call before a backend sees it:
/// shapes agree, dtypes match, axes are in range, the output does not
/// overlap an input unless the op is elementwise and the layouts are
/// identical. A backend may still refuse with `Unsupported`.
#[derive(Clone, Debug, PartialEq)]
pub enum Op<'a, T> {
    /// `out = op(x)`; shapes equal; `out` has `x`'s dtype, or `bool` for predicates.
    Unary { op: UnaryOp, x: T, out: T },
    /// `out = op(lhs, rhs)`; operands share one dtype; `out` has it, or `bool`.
    Binary {
        op: BinaryOp,
        lhs: Operand<T>,
        rhs: Operand<T>,
        out: T,
    },
    /// `out = x as out.dtype`, with the standard's conversion rules
    /// (float to int truncates toward zero and saturates; NaN becomes 0;
    /// int to int wraps; anything to bool is `!= 0`).
    Cast { x: T, out: T },
    /// `out = cond ? x : y`; `cond` is `bool`.
    Where {
        cond: T,
        x: Operand<T>,
        y: Operand<T>,
        out: T,
    },
    /// Reduce `x` over `axes` (sorted, unique). `out` has `x`'s shape with
    /// the reduced axes of length 1. `argmin`/`argmax` take exactly one axis.
    /// Reducing over an empty axis gives the op's identity (0 for `sum`,
    /// 1 for `prod`, `true` for `all`, `false` for `any`); the array layer
    /// rejects empty `min`/`max`/`argmin`/`argmax` before dispatch.
    Reduce {
        op: ReduceOp,
        x: T,
        axes: &'a [usize],
        out: T,
    },
    /// Inclusive scan along `axis`; `out` has `x`'s shape and dtype.
    Scan { op: ScanOp, x: T, axis: usize, out: T },
    /// Strided copy; shapes and dtypes equal.
    Copy { x: T, out: T },
    /// Every element of `out` becomes `value` (of `out`'s dtype).
    Fill { out: T, value: Scalar },
    /// `out[i] = start + i * step` over `out` in row-major order, computed
    /// in f64 and converted to `out`'s dtype.
    Arange { out: T, start: f64, step: f64 },
    /// Fill `out` (a float dtype) with random numbers. Element `i` (in
    /// row-major order) uses Philox4x32-10 with key `seed` and counter
    /// `counter + i`, so results depend on neither thread count nor device.
    Random {
        out: T,
        dist: Distribution,
        seed: u64,
        counter: u64,
    },
    /// `out = take(x, indices, axis)`; `indices` is 1-D `i64`, already
    /// checked to lie in `[0, x.shape[axis])` (negatives normalised).
    Take { x: T, indices: T, axis: usize, out: T },
    /// Batched product: `a` is `[..., m, k]`, `b` is `[..., k, n]`, `out` is
    /// `[..., m, n]`; the batch dims are equal (broadcast with zero strides).
    Matmul { a: T, b: T, out: T },
    /// Stable sort of `x` along `axis` into `out` (same shape and dtype).
    /// NaNs sort to the end in ascending order and to the start in descending.
    Sort {
        x: T,
        axis: usize,
        descending: bool,
        out: T,
    },
    /// Stable argsort along `axis`; `out` is `i64` of `x`'s shape.
    Argsort {
        x: T,
        axis: usize,
        descending: bool,
        out: T,
    },
    /// For each element of `values`, the insertion index into the 1-D
    /// ascending `sorted` (`right` picks the side); `out` is `i64`.
    SearchSorted { sorted: T, values: T, right: bool, out: T },
    /// Row-major coordinates of the non-zero elements of `x`; `out` is
    /// `i64` of shape `[count, x.ndim]`, where the array layer has counted
    /// the non-zero elements first.
    Nonzero { x: T, out: T },
}

impl<T> Operand<T> {
    pub fn map<U, E>(&self, f: &mut impl FnMut(&T) -> Result<U, E>) -> Result<Operand<U>, E> {
        Ok(match self {
            Operand::Tensor(t) => Operand::Tensor(f(t)?),
            Operand::Scalar(s) => Operand::Scalar(*s),
        })
    }
}

impl<T: TensorDType> Operand<T> {
    pub fn dtype(&self) -> DType {
        match self {
            Operand::Tensor(t) => t.dtype(),
            Operand::Scalar(s) => s.dtype(),
        }
    }
}

impl<'a, T> Op<'a, T> {
    /// The op's code in the op set.
    pub fn code(&self) -> OpCode {
        match self {
            Op::Unary { op, .. } => OpCode::Unary(*op),
            Op::Binary { op, .. } => OpCode::Binary(*op),
            Op::Cast { .. } => OpCode::Cast,
            Op::Where { .. } => OpCode::Where,
            Op::Reduce { op, .. } => OpCode::Reduce(*op),
            Op::Scan { op, .. } => OpCode::Scan(*op),
            Op::Copy { .. } => OpCode::Copy,
            Op::Fill { .. } => OpCode::Fill,
            Op::Arange { .. } => OpCode::Arange,
            Op::Random { .. } => OpCode::Random,
            Op::Take { .. } => OpCode::Take,
            Op::Matmul { .. } => OpCode::Matmul,
            Op::Sort { .. } => OpCode::Sort,
            Op::Argsort { .. } => OpCode::Argsort,
            Op::SearchSorted { .. } => OpCode::SearchSorted,
            Op::Nonzero { .. } => OpCode::Nonzero,
        }
    }

    /// The output operand (every op writes exactly one).
    pub fn output(&self) -> &T {
        match self {
            Op::Unary { out, .. }
            | Op::Binary { out, .. }
            | Op::Cast { out, .. }
            | Op::Where { out, .. }
            | Op::Reduce { out, .. }
            | Op::Scan { out, .. }
            | Op::Copy { out, .. }
            | Op::Fill { out, .. }
            | Op::Arange { out, .. }
            | Op::Random { out, .. }
            | Op::Take { out, .. }
            | Op::Matmul { out, .. }
            | Op::Sort { out, .. }
            | Op::Argsort { out, .. }
            | Op::SearchSorted { out, .. }
            | Op::Nonzero { out, .. } => out,
        }
    }

    /// The array inputs (scalars excluded), in argument order.
    pub fn inputs(&self) -> impl Iterator<Item = &T> {
        // At most three array inputs: a fixed array keeps this free of heap
        // allocation, since backends check operands on every call.
        let slots: [Option<&T>; 3] = match self {
            Op::Unary { x, .. }
            | Op::Cast { x, .. }
            | Op::Reduce { x, .. }
            | Op::Scan { x, .. }
            | Op::Copy { x, .. }
            | Op::Sort { x, .. }
            | Op::Argsort { x, .. }
            | Op::Nonzero { x, .. } => [Some(x), None, None],
            Op::Binary { lhs, rhs, .. } => [lhs.tensor(), rhs.tensor(), None],
            Op::Where { cond, x, y, .. } => [Some(cond), x.tensor(), y.tensor()],
            Op::Fill { .. } | Op::Arange { .. } | Op::Random { .. } => [None, None, None],
            Op::Take { x, indices, .. } => [Some(x), Some(indices), None],
            Op::Matmul { a, b, .. } => [Some(a), Some(b), None],
            Op::SearchSorted { sorted, values, .. } => [Some(sorted), Some(values), None],
        };
        slots.into_iter().flatten()
    }

    /// The same call with every operand converted by `f` (for example from
    /// runtime buffer references to host pointers or plugin handles).
    ///
    /// Inlined into each caller: an out-of-line call returned the converted
    /// op (about 200 bytes) through a `Result` the caller then copied, a
    /// tenth of a small op's host time on the CPU.
    #[inline(always)]
    pub fn try_map<U, E>(&self, mut f: impl FnMut(&T) -> Result<U, E>) -> Result<Op<'a, U>, E> {
        let f = &mut f;
        Ok(match self {
            Op::Unary { op, x, out } => Op::Unary {
                op: *op,
                x: f(x)?,
                out: f(out)?,
            },
            Op::Binary { op, lhs, rhs, out } => Op::Binary {
                op: *op,
                lhs: lhs.map(f)?,
                rhs: rhs.map(f)?,
                out: f(out)?,
            },
            Op::Cast { x, out } => Op::Cast { x: f(x)?, out: f(out)? },
            Op::Where { cond, x, y, out } => Op::Where {
                cond: f(cond)?,
                x: x.map(f)?,
                y: y.map(f)?,
                out: f(out)?,
            },
            Op::Reduce { op, x, axes, out } => Op::Reduce {
                op: *op,
                x: f(x)?,
                axes,
                out: f(out)?,
            },
            Op::Scan { op, x, axis, out } => Op::Scan {
                op: *op,
                x: f(x)?,
                axis: *axis,
                out: f(out)?,
            },
            Op::Copy { x, out } => Op::Copy { x: f(x)?, out: f(out)? },
            Op::Fill { out, value } => Op::Fill {
                out: f(out)?,
                value: *value,
            },
            Op::Arange { out, start, step } => Op::Arange {
                out: f(out)?,
                start: *start,
                step: *step,
            },
            Op::Random {
                out,
                dist,
                seed,
                counter,
            } => Op::Random {
                out: f(out)?,
                dist: *dist,
                seed: *seed,
                counter: *counter,
            },
            Op::Take { x, indices, axis, out } => Op::Take {
                x: f(x)?,
                indices: f(indices)?,
                axis: *axis,
                out: f(out)?,
            },
            Op::Matmul { a, b, out } => Op::Matmul {
                a: f(a)?,
                b: f(b)?,
                out: f(out)?,
            },
            Op::Sort {
                x,
                axis,
                descending,
                out,
            } => Op::Sort {
                x: f(x)?,
                axis: *axis,
                descending: *descending,
                out: f(out)?,
            },
            Op::Argsort {
                x,
                axis,
                descending,
                out,
            } => Op::Argsort {
                x: f(x)?,
                axis: *axis,
                descending: *descending,
                out: f(out)?,
            },
            Op::SearchSorted {
                sorted,
                values,
                right,
                out,
            } => Op::SearchSorted {
                sorted: f(sorted)?,
                values: f(values)?,
                right: *right,
                out: f(out)?,
            },
            Op::Nonzero { x, out } => Op::Nonzero { x: f(x)?, out: f(out)? },
        })
    }
}

impl<T> Operand<T> {
    /// The array operand, if this is not a scalar.
    pub fn tensor(&self) -> Option<&T> {
        match self {
            Operand::Tensor(t) => Some(t),
            Operand::Scalar(_) => None,
        }
    }
}

impl<T: TensorDType> Op<'_, T> {
    /// The dtype a backend's support for this call is declared under: the
    /// dtype of the primary input, or of the output for ops without one
    /// (`fill`, `arange`, `random`). For `astype` it is the source dtype; the
    /// array layer checks the target separately.
    pub fn support_dtype(&self) -> DType {
        match self {
            Op::Binary { lhs, .. } => lhs.dtype(),
            Op::Where { x, .. } => x.dtype(),
            Op::SearchSorted { sorted, .. } => sorted.dtype(),
            Op::Matmul { a, .. } => a.dtype(),
            Op::Fill { out, .. } | Op::Arange { out, .. } | Op::Random { out, .. } => out.dtype(),
            Op::Unary { x, .. }
            | Op::Cast { x, .. }
            | Op::Reduce { x, .. }
            | Op::Scan { x, .. }
            | Op::Copy { x, .. }
            | Op::Take { x, .. }
            | Op::Sort { x, .. }
            | Op::Argsort { x, .. }
            | Op::Nonzero { x, .. } => x.dtype(),
        }
    }
}
