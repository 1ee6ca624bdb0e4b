//! The argument checks of op calls that depend only on the op contract
//! ([`anydev_ops::Op`]) and the operands' [`TensorRef`]s, never on the
//! device that runs them.
//!
//! The array layer validates every call before dispatch, but a backend that
//! launches kernels on raw device addresses must still reject a malformed
//! call (a wrong output dtype, a shape that disagrees, an axis out of range)
//! before it touches memory: a kernel given such a call reads or writes
//! outside the operands instead of failing. The GPU backends share these
//! checks so that they refuse the same calls with the same errors.
//!
//! Each per-family check returns the facts the backend derives from the
//! operands anyway (the output shape of a `take`, the dims of a matmul,
//! the kept and reduced extents of a reduction), so that a backend does not
//! recompute them differently from what was checked.

use crate::backend::TensorRef;
use crate::{DType, Device, Error, Result, Scalar};
use anydev_ops::BinaryOp;
use anydev_ops::{Distribution, Operand, ReduceOp, UnaryOp};

/// The number of elements of `shape` (1 for a 0-d shape).
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// One op call being checked on one device: the name errors carry, and the
/// device that `Unsupported` errors name.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    pub op: &'static str,
    pub device: Device,
}

/// What a valid reduction looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The output's dtype: `bool` for `all`/`any`, `i64` for `argmin`/`argmax`,
    /// the input's otherwise.
    pub dtype: DType,
    /// The output's shape: the input's with the reduced axes of length 1.
    pub shape: Vec<usize>,
    /// The extents of the reduced axes, in axis order.
    pub reduced: Vec<usize>,
    /// Output elements (the product of the kept extents).
    pub n_out: usize,
    /// Input elements folded into each output.
    pub n_red: usize,
}

/// The dims of a valid batched matmul `[..., m, k] @ [..., k, n]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulDims {
    /// The number of matrices (the product of the batch dims).
    pub batch: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

/// What `Random` draws, checked: the two parameters (`low`/`high` or
/// `mean`/`std`) and whether the distribution is the normal one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomParams {
    pub p: f64,
    pub q: f64,
    pub normal: bool,
}

impl Check {
    pub fn new(op: &'static str, device: Device) -> Check {
        Check { op, device }
    }

    /// An `InvalidArgument` error of this op.
    pub fn invalid(&self, message: impl Into<String>) -> Error {
        Error::invalid_argument(self.op, message)
    }

    /// The op is not implemented for `dtype` on this device.
    pub fn unsupported(&self, dtype: DType) -> Error {
        Error::Unsupported {
            op: self.op.to_owned(),
            dtype,
            device: self.device,
        }
    }

    pub fn expect_dtype(&self, t: &TensorRef<'_>, dtype: DType, role: &str) -> Result<()> {
        if t.dtype == dtype {
            Ok(())
        } else {
            Err(self.invalid(format!("{role} has dtype {} where {dtype} is required", t.dtype)))
        }
    }

    pub fn expect_shape(&self, t: &TensorRef<'_>, shape: &[usize], role: &str) -> Result<()> {
        if t.shape == shape {
            Ok(())
        } else {
            Err(Error::ShapeMismatch {
                op: self.op.to_owned(),
                shapes: vec![t.shape.to_vec(), shape.to_vec()],
                reason: format!("{role} must have shape {shape:?}"),
            })
        }
    }

    /// The output has `dtype` and `shape`.
    pub fn expect_output(&self, out: &TensorRef<'_>, dtype: DType, shape: &[usize]) -> Result<()> {
        self.expect_dtype(out, dtype, "the output")?;
        self.expect_shape(out, shape, "the output")
    }

    /// `axis` names one of `ndim` dims.
    pub fn axis(&self, axis: usize, ndim: usize) -> Result<()> {
        if axis < ndim {
            Ok(())
        } else {
            Err(Error::InvalidAxis {
                op: self.op.to_owned(),
                axis: axis as isize,
                ndim,
            })
        }
    }

    /// The operand's offset in elements: kernels index in elements, so a
    /// byte offset between two elements cannot be expressed.
    pub fn element_offset(&self, t: &TensorRef<'_>) -> Result<usize> {
        if !t.offset.is_multiple_of(t.dtype.size()) {
            return Err(self.invalid(format!(
                "byte offset {} is not a multiple of the {}-byte size of {}",
                t.offset,
                t.dtype.size(),
                t.dtype
            )));
        }
        Ok(t.offset / t.dtype.size())
    }

    /// `Unary`: the output has [`UnaryOp::output_dtype`] of `x`'s dtype.
    pub fn unary(&self, op: UnaryOp, x: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        self.expect_dtype(out, op.output_dtype(x.dtype), "the output")
    }

    /// A scalar operand: any dtype but `c128`, whose 16 bytes the plugin
    /// ABI cannot carry; the array layer passes `c128` scalars as arrays.
    pub fn scalar(&self, s: Scalar) -> Result<()> {
        if s.dtype() == DType::C128 {
            return Err(self.invalid(format!(
                "the c128 scalar {s} reached a backend; c128 scalars are passed as arrays"
            )));
        }
        Ok(())
    }

    fn operand_scalar(&self, o: &Operand<TensorRef<'_>>) -> Result<()> {
        match o {
            Operand::Scalar(s) => self.scalar(*s),
            Operand::Tensor(_) => Ok(()),
        }
    }

    /// `Binary`: both operands share one dtype, which is returned; the
    /// output has it, or `bool` for comparisons.
    pub fn binary(
        &self,
        op: BinaryOp,
        lhs: &Operand<TensorRef<'_>>,
        rhs: &Operand<TensorRef<'_>>,
        out: &TensorRef<'_>,
    ) -> Result<DType> {
        self.operand_scalar(lhs)?;
        self.operand_scalar(rhs)?;
        let d = lhs.dtype();
        if rhs.dtype() != d {
            return Err(self.invalid(format!("operands have dtypes {d} and {}", rhs.dtype())));
        }
        self.expect_dtype(out, if op.outputs_bool() { DType::Bool } else { d }, "the output")?;
        Ok(d)
    }

    /// `Where`: the condition is `bool`; both values have the output's dtype.
    pub fn where_(
        &self,
        cond: &TensorRef<'_>,
        x: &Operand<TensorRef<'_>>,
        y: &Operand<TensorRef<'_>>,
        out: &TensorRef<'_>,
    ) -> Result<()> {
        self.expect_dtype(cond, DType::Bool, "the condition")?;
        for v in [x, y] {
            self.operand_scalar(v)?;
            if v.dtype() != out.dtype {
                return Err(self.invalid(format!(
                    "where: a value has dtype {} but the output {}",
                    v.dtype(),
                    out.dtype
                )));
            }
        }
        Ok(())
    }

    /// `Fill`: the value has the output's dtype.
    pub fn fill(&self, out: &TensorRef<'_>, value: Scalar) -> Result<()> {
        self.scalar(value)?;
        if value.dtype() != out.dtype {
            return Err(self.invalid(format!(
                "fill value {value} is {}, the output is {}",
                value.dtype(),
                out.dtype
            )));
        }
        Ok(())
    }

    /// `Random`: uniform bounds finite and ordered, a normal's mean and std
    /// finite with `std >= 0`.
    pub fn random(&self, dist: &Distribution) -> Result<RandomParams> {
        match *dist {
            Distribution::Uniform { low, high } => {
                if !(low.is_finite() && high.is_finite() && low <= high) {
                    return Err(self.invalid(format!("uniform bounds [{low}, {high}) are not finite and ordered")));
                }
                Ok(RandomParams {
                    p: low,
                    q: high,
                    normal: false,
                })
            }
            Distribution::Normal { mean, std } => {
                if !(mean.is_finite() && std.is_finite() && std >= 0.0) {
                    return Err(self.invalid(format!("normal mean {mean} / std {std} must be finite with std >= 0")));
                }
                Ok(RandomParams {
                    p: mean,
                    q: std,
                    normal: true,
                })
            }
        }
    }

    /// `Take`: `indices` is 1-D `i64`, the output has `x`'s dtype and
    /// shape with `axis` replaced by the number of indices; returns that
    /// shape.
    pub fn take(
        &self,
        x: &TensorRef<'_>,
        indices: &TensorRef<'_>,
        axis: usize,
        out: &TensorRef<'_>,
    ) -> Result<Vec<usize>> {
        self.axis(axis, x.shape.len())?;
        self.expect_dtype(indices, DType::I64, "the indices")?;
        self.expect_dtype(out, x.dtype, "the output")?;
        if indices.shape.len() != 1 {
            return Err(self.invalid("indices must be one-dimensional"));
        }
        let mut shape = x.shape.to_vec();
        shape[axis] = indices.shape[0];
        self.expect_shape(out, &shape, "the output")?;
        Ok(shape)
    }

    /// `Reduce`: the axes are in range, sorted and unique (exactly one for
    /// `argmin`/`argmax`); the output has the reduction's dtype and the
    /// input's shape with the reduced axes of length 1; ops without an
    /// identity (`min`, `max`, `argmin`, `argmax`) do not fold an empty
    /// axis into a non-empty output.
    pub fn reduce(&self, op: ReduceOp, x: &TensorRef<'_>, axes: &[usize], out: &TensorRef<'_>) -> Result<Reduction> {
        let nd = x.shape.len();
        for (i, &a) in axes.iter().enumerate() {
            self.axis(a, nd)?;
            if i > 0 && axes[i - 1] >= a {
                return Err(self.invalid("the axes must be sorted and unique"));
            }
        }
        if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) && axes.len() != 1 {
            return Err(self.invalid(format!("{op} reduces exactly one axis")));
        }
        let dtype = match op {
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            ReduceOp::ArgMax | ReduceOp::ArgMin => DType::I64,
            _ => x.dtype,
        };
        self.expect_dtype(out, dtype, "the output")?;
        let mut shape = x.shape.to_vec();
        for &a in axes {
            shape[a] = 1;
        }
        self.expect_shape(
            out,
            &shape,
            "the output (the input's shape with the reduced axes of length 1)",
        )?;
        let reduced: Vec<usize> = axes.iter().map(|&a| x.shape[a]).collect();
        let (n_out, n_red) = (numel(&shape), numel(&reduced));
        let needs_element = matches!(op, ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMax | ReduceOp::ArgMin);
        if needs_element && n_red == 0 && n_out > 0 {
            return Err(self.invalid(format!("{op} of an empty axis has no value")));
        }
        Ok(Reduction {
            dtype,
            shape,
            reduced,
            n_out,
            n_red,
        })
    }

    /// Scans and sorts: the output has `x`'s shape and `dtype`, and `axis`
    /// names a dim of `x`.
    pub fn lines(&self, x: &TensorRef<'_>, axis: usize, out: &TensorRef<'_>, dtype: DType) -> Result<()> {
        self.expect_output(out, dtype, x.shape)?;
        self.axis(axis, x.shape.len())
    }

    /// `SearchSorted`: `sorted` is 1-D, `values` has its dtype, the output
    /// is `i64` of `values`' shape.
    pub fn search_sorted(&self, sorted: &TensorRef<'_>, values: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        if sorted.shape.len() != 1 {
            return Err(self.invalid(format!(
                "searchsorted needs a 1-D sorted array, got {} dims",
                sorted.shape.len()
            )));
        }
        self.expect_dtype(values, sorted.dtype, "the values")?;
        self.expect_output(out, DType::I64, values.shape)
    }

    /// `Matmul`: operands of one rank >= 2 and one dtype, shaped
    /// `[..., m, k] @ [..., k, n] -> [..., m, n]` with equal batch dims.
    pub fn matmul(&self, a: &TensorRef<'_>, b: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<MatmulDims> {
        let nd = a.shape.len();
        if nd < 2 || b.shape.len() != nd || out.shape.len() != nd {
            return Err(self.invalid(format!(
                "matmul needs operands of one rank >= 2, got {}, {}, {}",
                nd,
                b.shape.len(),
                out.shape.len()
            )));
        }
        self.expect_dtype(b, a.dtype, "b")?;
        self.expect_dtype(out, a.dtype, "the output")?;
        let (m, k, n) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
        let batch = &a.shape[..nd - 2];
        if b.shape[nd - 2] != k
            || out.shape[nd - 2] != m
            || out.shape[nd - 1] != n
            || &b.shape[..nd - 2] != batch
            || &out.shape[..nd - 2] != batch
        {
            return Err(Error::ShapeMismatch {
                op: self.op.to_owned(),
                shapes: vec![a.shape.to_vec(), b.shape.to_vec(), out.shape.to_vec()],
                reason: "matmul needs [..., m, k] @ [..., k, n] -> [..., m, n]".into(),
            });
        }
        Ok(MatmulDims {
            batch: numel(batch),
            m,
            k,
            n,
        })
    }

    /// `Nonzero`: the output is `i64` of shape `[count, x.ndim]`.
    pub fn nonzero(&self, x: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
        self.expect_dtype(out, DType::I64, "the output")?;
        let nd = x.shape.len();
        if out.shape.len() != 2 || out.shape[1] != nd {
            return Err(self.invalid(format!("nonzero output must be [count, {nd}], got {:?}", out.shape)));
        }
        Ok(())
    }
}
