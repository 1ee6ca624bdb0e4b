//! Reductions over any set of axes, scans, and the statistics composed
//! from them (`mean`, `var`, `std`, `logsumexp`).
//!
//! Accumulation follows the standard: `sum`, `prod` and the cumulative
//! forms of bool and signed integers accumulate in `i64`, of unsigned
//! integers in `u64` (the array is cast first); floats keep their dtype
//! (backends sum pairwise or better). The statistics (`mean`, `var`,
//! `std`, `logsumexp`) of f16 and bf16 compute in f32 and round once. Over an empty set of elements `sum`
//! is 0, `prod` 1, `all` true, `any` false, `mean`/`var` NaN; `min`,
//! `max`, `argmin` and `argmax` are errors.

use crate::array::Array;
use crate::creation::filled;
use crate::dispatch::{alloc, execute};
use crate::elementwise::Domain;
use crate::shape::{normalize_axes, normalize_axis, INLINE_DIMS};
use crate::view::Axes;
use anydev_core::ops::Op;
use anydev_core::{DType, Error, Result};
use anydev_ops::{ReduceOp, ScanOp};
use smallvec::SmallVec;

type AxisList = SmallVec<[usize; INLINE_DIMS]>;

/// The dtype `sum`, `prod` and scans accumulate `dtype` in.
fn accumulation_dtype(dtype: DType) -> DType {
    match dtype.kind() {
        anydev_ops::DTypeKind::Bool | anydev_ops::DTypeKind::SignedInt => DType::I64,
        anydev_ops::DTypeKind::UnsignedInt => DType::U64,
        anydev_ops::DTypeKind::Float | anydev_ops::DTypeKind::Complex => dtype,
    }
}

/// Number of elements each output element reduces.
fn reduced_count(x: &Array, axes: &[usize]) -> usize {
    axes.iter().map(|&a| x.shape()[a]).product()
}

/// One primitive reduction of `x` (already in the dtype to reduce in).
fn reduce_primitive(op: ReduceOp, x: &Array, axes: &[usize], keepdims: bool) -> Result<Array> {
    let out_dtype = match op {
        ReduceOp::All | ReduceOp::Any => DType::Bool,
        ReduceOp::ArgMin | ReduceOp::ArgMax => DType::I64,
        _ => x.dtype(),
    };
    if matches!(op, ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax) && reduced_count(x, axes) == 0
    {
        return Err(Error::invalid_argument(
            op.name(),
            format!(
                "cannot reduce an empty set of elements (shape {:?}, axes {axes:?}): {} has no identity",
                x.shape(),
                op.name()
            ),
        ));
    }
    if axes.is_empty() {
        // Reducing over no axes leaves every element as it is.
        return x.astype(out_dtype);
    }
    let mut shape = x.shape.clone();
    for &a in axes {
        shape[a] = 1;
    }
    let out = alloc(x.ctx(), out_dtype, &shape)?;
    execute(
        x.ctx(),
        &Op::Reduce {
            op,
            x: x.tensor_ref(),
            axes,
            out: out.tensor_ref(),
        },
    )?;
    Ok(if keepdims { out } else { out.drop_axes(axes) })
}

/// Normalised axes of `x` for reduction `op`.
fn axes_of(op: &str, x: &Array, axes: Axes) -> Result<AxisList> {
    normalize_axes(op, axes.as_option(), x.ndim())
}

pub fn sum(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = axes_of("sum", x, axes.into())?;
    reduce_primitive(
        ReduceOp::Sum,
        &x.astype(accumulation_dtype(x.dtype()))?,
        &axes,
        keepdims,
    )
}

/// How many elements are non-zero over `axes` (NaN is non-zero), in the
/// device's default integer dtype. The flags are summed as `i32` where the
/// device holds it and no count can pass `i32::MAX`: half the bytes of
/// `sum`'s `i64`, and most of a count's time is the cast.
pub fn count_nonzero(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = axes_of("count_nonzero", x, axes.into())?;
    let counts = if x.ctx().check_dtype(DType::I32).is_ok() && reduced_count(x, &axes) <= i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    };
    let flags = x.astype(DType::Bool)?.astype(counts)?;
    reduce_primitive(ReduceOp::Sum, &flags, &axes, keepdims)?.astype(x.ctx().default_int())
}

pub fn prod(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let axes = axes_of("prod", x, axes.into())?;
    reduce_primitive(
        ReduceOp::Prod,
        &x.astype(accumulation_dtype(x.dtype()))?,
        &axes,
        keepdims,
    )
}

/// Smallest element (NaN propagates); an error over an empty set.
pub fn min(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    Domain::RealNumeric.apply("min", x.dtype())?;
    reduce_primitive(ReduceOp::Min, x, &axes_of("min", x, axes.into())?, keepdims)
}

/// Largest element (NaN propagates); an error over an empty set.
pub fn max(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    Domain::RealNumeric.apply("max", x.dtype())?;
    reduce_primitive(ReduceOp::Max, x, &axes_of("max", x, axes.into())?, keepdims)
}

/// Whether every element is non-zero (NaN counts as non-zero).
pub fn all(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduce_primitive(ReduceOp::All, x, &axes_of("all", x, axes.into())?, keepdims)
}

/// Whether any element is non-zero.
pub fn any(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    reduce_primitive(ReduceOp::Any, x, &axes_of("any", x, axes.into())?, keepdims)
}

/// The dtype a statistic of `x` is computed in, and the dtype of its
/// result. f16 and bf16 compute in f32 and round once at the end: in
/// their own dtype both the element count and the sum pass 65,504 (f16's
/// largest value) on long axes, and every intermediate would round.
fn statistic_dtypes(op: &str, x: &Array) -> Result<(DType, DType)> {
    let result = x.ctx().float_for(Domain::DefaultFloat.apply(op, x.dtype())?);
    let work = match result {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    };
    Ok((work, result))
}

/// `var` and `std` are defined for real dtypes only (the standard).
fn real_only(op: &str, dtype: DType) -> Result<()> {
    if dtype.is_complex() {
        return Err(Error::InvalidDType {
            op: op.to_owned(),
            dtype,
            reason: format!("{op} needs a real dtype (take abs() or real() of complex input first)"),
        });
    }
    Ok(())
}

/// Arithmetic mean (complex stays complex); integers are averaged in the device's default float
/// dtype (`f64`, else `f32`), f16 and bf16 in f32.
pub fn mean(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let (work, result) = statistic_dtypes("mean", x)?;
    let xw = x.astype(work)?;
    let axes = axes_of("mean", &xw, axes.into())?;
    mean_of(&xw, &axes, keepdims)?.astype(result)
}

/// Mean of `x` (already in its work dtype) over normalised `axes`.
fn mean_of(x: &Array, axes: &[usize], keepdims: bool) -> Result<Array> {
    let total = reduce_primitive(ReduceOp::Sum, x, axes, keepdims)?;
    total.divide(reduced_count(x, axes) as f64)
}

/// Variance of `x` (already in its work dtype) over normalised `axes`.
fn var_of(x: &Array, axes: &[usize], correction: f64, keepdims: bool) -> Result<Array> {
    let n = reduced_count(x, axes) as f64;
    let centred = x.subtract(&mean_of(x, axes, true)?)?;
    let squares = reduce_primitive(ReduceOp::Sum, &centred.square()?, axes, keepdims)?;
    squares.divide((n - correction).max(0.0))
}

/// Variance with `correction` degrees of freedom removed (0 for the
/// population variance, 1 for the sample variance).
pub fn var(x: &Array, axes: impl Into<Axes>, correction: f64, keepdims: bool) -> Result<Array> {
    real_only("var", x.dtype())?;
    let (work, result) = statistic_dtypes("var", x)?;
    let xw = x.astype(work)?;
    let axes = axes_of("var", &xw, axes.into())?;
    var_of(&xw, &axes, correction, keepdims)?.astype(result)
}

/// Standard deviation: the square root of [`var`], rounded once.
pub fn std(x: &Array, axes: impl Into<Axes>, correction: f64, keepdims: bool) -> Result<Array> {
    real_only("std", x.dtype())?;
    let (work, result) = statistic_dtypes("std", x)?;
    let xw = x.astype(work)?;
    let axes = axes_of("std", &xw, axes.into())?;
    var_of(&xw, &axes, correction, keepdims)?.sqrt()?.astype(result)
}

/// `log(sum(exp(x)))`, computed stably by shifting by the maximum; over an
/// empty set it is `-inf`.
pub fn logsumexp(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
    let (work, result) = statistic_dtypes("logsumexp", x)?;
    let xw = x.astype(work)?;
    let axes = axes_of("logsumexp", &xw, axes.into())?;
    if reduced_count(&xw, &axes) == 0 {
        let shape: SmallVec<[usize; INLINE_DIMS]> = (0..xw.ndim())
            .filter(|a| keepdims || !axes.contains(a))
            .map(|a| if axes.contains(&a) { 1 } else { xw.shape()[a] })
            .collect();
        let value = crate::promote::float_scalar(f64::NEG_INFINITY, result);
        return filled(xw.ctx(), result, &shape, value);
    }
    let peak = reduce_primitive(ReduceOp::Max, &xw, &axes, true)?;
    let shift = crate::where_(&peak.isfinite()?, &peak, 0)?;
    let total = reduce_primitive(ReduceOp::Sum, &xw.subtract(&shift)?.exp()?, &axes, true)?;
    let out = total.log()?.add(&shift)?.astype(result)?;
    Ok(if keepdims { out } else { out.drop_axes(&axes) })
}

/// `argmin`/`argmax` over one axis, or over the flattened array.
fn arg_reduce(op: ReduceOp, x: &Array, axis: Option<isize>, keepdims: bool) -> Result<Array> {
    Domain::RealNumeric.apply(op.name(), x.dtype())?;
    match axis {
        Some(axis) => {
            let axis = normalize_axis(op.name(), axis, x.ndim())?;
            reduce_primitive(op, x, &[axis], keepdims)
        }
        None => {
            let flat = reduce_primitive(op, &x.flatten()?, &[0], false)?;
            if keepdims {
                flat.reshape_to(&vec![1; x.ndim()])
            } else {
                Ok(flat)
            }
        }
    }
}

/// Index (`i64`) of the first smallest element along `axis` (flattened for `None`).
pub fn argmin(x: &Array, axis: Option<isize>, keepdims: bool) -> Result<Array> {
    arg_reduce(ReduceOp::ArgMin, x, axis, keepdims)
}

/// Index (`i64`) of the first largest element along `axis` (flattened for `None`).
pub fn argmax(x: &Array, axis: Option<isize>, keepdims: bool) -> Result<Array> {
    arg_reduce(ReduceOp::ArgMax, x, axis, keepdims)
}

/// Inclusive scan along `axis` (which may be omitted only for 0-d and 1-D
/// arrays); `include_initial` prepends the identity.
fn scan(op: ScanOp, x: &Array, axis: Option<isize>, include_initial: bool) -> Result<Array> {
    let name = op.name();
    let x = match (axis, x.ndim()) {
        (None, 0) => x.reshape(&[1])?,
        (None, 1) => x.clone(),
        (None, n) => {
            return Err(Error::invalid_argument(
                name,
                format!("an array of {n} dimensions needs an explicit axis"),
            ))
        }
        (Some(_), _) => x.clone(),
    };
    let axis = normalize_axis(name, axis.unwrap_or(0), x.ndim())?;
    let x = x.astype(accumulation_dtype(x.dtype()))?;
    let out = alloc(x.ctx(), x.dtype(), x.shape())?;
    execute(
        x.ctx(),
        &Op::Scan {
            op,
            x: x.tensor_ref(),
            axis,
            out: out.tensor_ref(),
        },
    )?;
    if !include_initial {
        return Ok(out);
    }
    let identity = match op {
        ScanOp::CumulativeSum => 0.0,
        ScanOp::CumulativeProd => 1.0,
    };
    let mut head_shape = x.shape.clone();
    head_shape[axis] = 1;
    let head = filled(
        x.ctx(),
        x.dtype(),
        &head_shape,
        crate::promote::float_scalar(identity, x.dtype()),
    )?;
    crate::concat(&[&head, &out], Some(axis as isize))
}

/// Running sum along `axis` (integers accumulate in `i64`/`u64`).
pub fn cumulative_sum(x: &Array, axis: Option<isize>, include_initial: bool) -> Result<Array> {
    scan(ScanOp::CumulativeSum, x, axis, include_initial)
}

/// Running product along `axis`.
pub fn cumulative_prod(x: &Array, axis: Option<isize>, include_initial: bool) -> Result<Array> {
    scan(ScanOp::CumulativeProd, x, axis, include_initial)
}

/// Declares method forms of the `(x, axes, keepdims)` reductions.
macro_rules! reduction_methods {
    ($($name:ident),*) => {
        impl Array {
            $(
                #[doc = concat!("Method form of [`", stringify!($name), "`](crate::", stringify!($name), ").")]
                pub fn $name(&self, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
                    $name(self, axes, keepdims)
                }
            )*
        }
    };
}

reduction_methods!(sum, prod, min, max, all, any, mean, logsumexp);

impl Array {
    /// Method form of [`var`].
    pub fn var(&self, axes: impl Into<Axes>, correction: f64, keepdims: bool) -> Result<Array> {
        var(self, axes, correction, keepdims)
    }

    /// Method form of [`std`](fn@crate::std).
    pub fn std(&self, axes: impl Into<Axes>, correction: f64, keepdims: bool) -> Result<Array> {
        std(self, axes, correction, keepdims)
    }

    /// Method form of [`argmin`].
    pub fn argmin(&self, axis: Option<isize>, keepdims: bool) -> Result<Array> {
        argmin(self, axis, keepdims)
    }

    /// Method form of [`argmax`].
    pub fn argmax(&self, axis: Option<isize>, keepdims: bool) -> Result<Array> {
        argmax(self, axis, keepdims)
    }

    /// Method form of [`cumulative_sum`].
    pub fn cumulative_sum(&self, axis: Option<isize>, include_initial: bool) -> Result<Array> {
        cumulative_sum(self, axis, include_initial)
    }

    /// Method form of [`cumulative_prod`].
    pub fn cumulative_prod(&self, axis: Option<isize>, include_initial: bool) -> Result<Array> {
        cumulative_prod(self, axis, include_initial)
    }
}
