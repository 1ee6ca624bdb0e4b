//! Sorting and searching: `sort`, `argsort`, `searchsorted`, `take`,
//! `take_along_axis`, `nonzero`.

use crate::array::Array;
use crate::dispatch::{alloc, execute, same_device};
use crate::elementwise::Domain;
use crate::manipulation::along;
use crate::promote::result_type;
use crate::shape::{broadcast_shapes, normalize_axis, Dims};
use crate::slice::SliceArg;
use anydev_core::ops::Op;
use anydev_core::{DType, Error, Result};

/// Sort order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    #[default]
    Ascending,
    Descending,
}

/// Sorted copy along `axis` (stable; NaNs last when ascending).
pub fn sort(x: &Array, axis: isize, order: Order) -> Result<Array> {
    Domain::Ordered.apply("sort", x.dtype())?;
    let axis = normalize_axis("sort", axis, x.ndim())?;
    let out = alloc(x.ctx(), x.dtype(), x.shape())?;
    execute(
        x.ctx(),
        &Op::Sort {
            x: x.tensor_ref(),
            axis,
            descending: order == Order::Descending,
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

/// Indices (`i64`) that sort `x` along `axis` (stable).
pub fn argsort(x: &Array, axis: isize, order: Order) -> Result<Array> {
    Domain::Ordered.apply("argsort", x.dtype())?;
    let axis = normalize_axis("argsort", axis, x.ndim())?;
    let out = alloc(x.ctx(), DType::I64, x.shape())?;
    execute(
        x.ctx(),
        &Op::Argsort {
            x: x.tensor_ref(),
            axis,
            descending: order == Order::Descending,
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

/// Which insertion point `searchsorted` reports for equal values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Side {
    /// The first position (`x1[i-1] < v <= x1[i]`).
    #[default]
    Left,
    /// The last position (`x1[i-1] <= v < x1[i]`).
    Right,
}

/// Insertion indices (`i64`, shape of `x2`) of `x2`'s values into the
/// ascending 1-D `x1`; both on one device, compared in their promoted dtype.
pub fn searchsorted(x1: &Array, x2: &Array, side: Side) -> Result<Array> {
    let op = "searchsorted";
    let ctx = same_device(op, &[x1, x2])?;
    Domain::Ordered.apply(op, result_type(x1.dtype(), x2.dtype()))?;
    if x1.ndim() != 1 {
        return Err(Error::invalid_argument(
            op,
            format!("x1 must be 1-D, got shape {:?}", x1.shape()),
        ));
    }
    let dtype = result_type(x1.dtype(), x2.dtype());
    let (sorted, values) = (x1.astype(dtype)?, x2.astype(dtype)?);
    let out = alloc(ctx, DType::I64, x2.shape())?;
    execute(
        ctx,
        &Op::SearchSorted {
            sorted: sorted.tensor_ref(),
            values: values.tensor_ref(),
            right: side == Side::Right,
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

/// Elements of `x` at `indices` (a 1-D integer array on `x`'s device;
/// negative counts from the end) along `axis`, which may be omitted only
/// for 1-D `x`. Out-of-range indices are an error, checked on the device
/// before the gather runs (only the smallest and largest index are read
/// back; see [`positions_in`]).
pub fn take(x: &Array, indices: &Array, axis: Option<isize>) -> Result<Array> {
    let op = "take";
    same_device(op, &[x, indices])?;
    if !indices.dtype().is_integer() {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype: indices.dtype(),
            reason: "indices must be integers".into(),
        });
    }
    if indices.ndim() != 1 {
        return Err(Error::invalid_argument(
            op,
            format!("indices must be 1-D, got shape {:?}", indices.shape()),
        ));
    }
    let axis = match axis {
        Some(a) => normalize_axis(op, a, x.ndim())?,
        None if x.ndim() == 1 => 0,
        None => {
            return Err(Error::invalid_argument(
                op,
                format!("an array of {} dimensions needs an explicit axis", x.ndim()),
            ))
        }
    };
    let positions = positions_in(op, indices, x.shape()[axis])?;
    take_checked(x, &positions, axis)
}

/// Elements of `x` picked along `axis` by `indices`, an integer array of
/// `x`'s rank (the standard's `take_along_axis`): `out[..., i, ...] =
/// x[..., indices[..., i, ...], ...]`. The other axes broadcast; negative
/// indices count from the end; one out of range is an error.
pub fn take_along_axis(x: &Array, indices: &Array, axis: isize) -> Result<Array> {
    let op = "take_along_axis";
    let ctx = same_device(op, &[x, indices])?;
    if indices.ndim() != x.ndim() {
        return Err(Error::invalid_argument(
            op,
            format!(
                "x and indices must have the same number of dimensions, got shapes {:?} and {:?}",
                x.shape(),
                indices.shape()
            ),
        ));
    }
    let axis = normalize_axis(op, axis, x.ndim())?;
    let len = x.shape()[axis];
    let mut x_rest: Dims = x.shape().into();
    let mut i_rest: Dims = indices.shape().into();
    (x_rest[axis], i_rest[axis]) = (1, 1);
    let mut out_shape = broadcast_shapes(op, &[&x_rest, &i_rest])?;
    let mut src_shape = out_shape.clone();
    (src_shape[axis], out_shape[axis]) = (len, indices.shape()[axis]);
    let idx = positions_in(op, &indices.broadcast_to(&out_shape)?, len)?;
    // Positions in the contiguous broadcast source: the offset of each
    // line (its axis coordinate 0) plus the index times the axis stride.
    let src = x.broadcast_to(&src_shape)?.as_contiguous()?;
    let stride: usize = src_shape[axis + 1..].iter().product();
    let offsets = crate::arange(0, src.size() as i64, 1, (DType::I64, ctx.device))?.reshape_to(&src_shape)?;
    let line_starts = offsets.slice(&along(axis, src.ndim(), SliceArg::from(0..1)))?;
    let positions = idx.multiply(stride as i64)?.add(&line_starts)?;
    take_checked(&src.flatten()?, &positions.flatten()?.as_contiguous()?, 0)?.reshape_to(&out_shape)
}

/// Integer `indices` into an axis of length `len` as `i64` positions
/// (negative ones count from the end), or `IndexOutOfBounds` naming one
/// outside `-len..len`. The range is checked on the device: only the
/// smallest and largest index are read back.
pub(crate) fn positions_in(op: &str, indices: &Array, len: usize) -> Result<Array> {
    if !indices.dtype().is_integer() {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype: indices.dtype(),
            reason: "indices must be integers".into(),
        });
    }
    // `uint64` indices are checked as they are: in `i64` the large ones
    // would wrap to negative positions that count from the end.
    let checked = match indices.dtype() {
        DType::U64 => indices.clone(),
        _ => indices.astype(DType::I64)?,
    };
    let mut negative = false;
    if indices.size() > 0 {
        for extreme in [
            crate::min(&checked, crate::ALL, false)?,
            crate::max(&checked, crate::ALL, false)?,
        ] {
            let index = exact_indices(&extreme)?[0];
            position(op, index, len)?;
            negative |= index < 0;
        }
    }
    // In range, so every index fits in `i64`; without a negative one
    // there is nothing to count from the end.
    let idx = checked.astype(DType::I64)?;
    if !negative {
        return Ok(idx);
    }
    crate::where_(&idx.less(0)?, &idx.add(len as i64)?, &idx)
}

/// Integer `indices` read back without wrapping: a `uint64` index past
/// `i64::MAX` stays the large positive number it is rather than turning
/// into a negative one that would count from the end.
fn exact_indices(indices: &Array) -> Result<Vec<i128>> {
    Ok(if indices.dtype() == DType::U64 {
        indices.to_vec::<u64>()?.into_iter().map(i128::from).collect()
    } else {
        indices
            .astype(DType::I64)?
            .to_vec::<i64>()?
            .into_iter()
            .map(i128::from)
            .collect()
    })
}

/// The position in an axis of length `len` that `index` names (negative
/// counts from the end), or `IndexOutOfBounds`.
fn position(op: &str, index: i128, len: usize) -> Result<i64> {
    let len = len as i128;
    let pos = if index < 0 { index + len } else { index };
    if (0..len).contains(&pos) {
        Ok(pos as i64)
    } else {
        Err(Error::IndexOutOfBounds {
            op: op.into(),
            index,
            len: len as usize,
        })
    }
}

/// `take` with `i64` indices already known to be in range.
pub(crate) fn take_checked(x: &Array, indices: &Array, axis: usize) -> Result<Array> {
    let mut shape = x.shape.clone();
    shape[axis] = indices.size();
    let out = alloc(x.ctx(), x.dtype(), &shape)?;
    execute(
        x.ctx(),
        &Op::Take {
            x: x.tensor_ref(),
            indices: indices.tensor_ref(),
            axis,
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

/// Coordinates of the non-zero elements, one `i64` array per axis (the
/// standard's tuple), in row-major order. 0-d arrays are an error.
pub fn nonzero(x: &Array) -> Result<Vec<Array>> {
    if x.ndim() == 0 {
        return Err(Error::invalid_argument(
            "nonzero",
            "0-d arrays have no coordinates; reshape to 1-D first",
        ));
    }
    let count = crate::count_nonzero(x, crate::ALL, false)?
        .astype(DType::I64)?
        .to_scalar::<i64>()? as usize;
    let out = alloc(x.ctx(), DType::I64, &[count, x.ndim()])?;
    execute(
        x.ctx(),
        &Op::Nonzero {
            x: x.tensor_ref(),
            out: out.tensor_ref(),
        },
    )?;
    (0..x.ndim() as isize)
        .map(|d| out.slice(&[SliceArg::FULL, SliceArg::Index(d)]))
        .collect()
}

impl Array {
    /// Method form of [`sort`].
    pub fn sort(&self, axis: isize, order: Order) -> Result<Array> {
        sort(self, axis, order)
    }

    /// Method form of [`argsort`].
    pub fn argsort(&self, axis: isize, order: Order) -> Result<Array> {
        argsort(self, axis, order)
    }

    /// Method form of [`take`].
    pub fn take(&self, indices: &Array, axis: Option<isize>) -> Result<Array> {
        take(self, indices, axis)
    }
}
