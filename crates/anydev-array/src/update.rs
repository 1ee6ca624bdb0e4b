//! Writing into arrays: `x[...] = value` and in-place updates.
//!
//! A write goes into the memory the array views, so every array that
//! shares that memory sees it, as in NumPy: other views of the same
//! buffer, and with unified memory the mappings `to_device` made of it.
//! Writes are ordinary ops on the array's device (a fill, or a strided
//! copy into the view), so the ordering rules hold for them as for any
//! output: later reads on any stream, and the host, wait for the write.
//!
//! Values keep the array's dtype: a value whose dtype would promote the
//! array's to another (an `f64` array into `f32`, a float into integers)
//! is an error, as in the standard's in-place operators, never a silent
//! rounding.

use crate::array::Array;
use crate::dispatch::{execute, same_device, Arg, IntoArg};
use crate::indexing::{array_coordinates, check_mask, flat_positions, merge_leading};
use crate::promote::result_type;
use crate::search::{searchsorted, take_checked, Order, Side};
use crate::slice::SliceArg;
use anydev_core::ops::Op;
use anydev_core::{DType, Error, Result};

impl Array {
    /// A contiguous copy on the same device that shares no memory with
    /// `self` (unlike `astype` to the same dtype or `as_contiguous`, which
    /// may return the array itself).
    pub fn copy(&self) -> Result<Array> {
        let out = crate::dispatch::alloc(self.ctx(), self.dtype(), self.shape())?;
        execute(
            self.ctx(),
            &Op::Copy {
                x: self.tensor_ref(),
                out: out.tensor_ref(),
            },
        )?;
        Ok(out)
    }

    /// Writes `value` into every element of this array, in place: a
    /// scalar, or an array on the same device that broadcasts to this
    /// array's shape. The value may overlap this array's memory (`x[1:] =
    /// x[:-1]` reads the old values, as in NumPy).
    pub fn assign<'a>(&self, value: impl IntoArg<'a>) -> Result<()> {
        let op = "assign";
        self.check_writable(op)?;
        match value.into_arg() {
            Arg::Scalar(v) => crate::dispatch::fill(self.ctx(), self, v.to_scalar(op, self.dtype())?),
            Arg::Array(v) => {
                same_device(op, &[self, v])?;
                keeps_dtype(op, self.dtype(), v.dtype())?;
                let v = if shares_memory(self, v) { v.copy()? } else { v.clone() };
                let v = v.astype(self.dtype())?.broadcast_to(self.shape())?;
                execute(
                    self.ctx(),
                    &Op::Copy {
                        x: v.tensor_ref(),
                        out: self.tensor_ref(),
                    },
                )
            }
        }
    }

    /// `x[spec] = value`: [`Array::assign`] into the view `spec` selects.
    pub fn assign_slice<'a>(&self, spec: &[SliceArg], value: impl IntoArg<'a>) -> Result<()> {
        self.slice(spec)?.assign(value)
    }

    /// `x[mask] = value` for a `bool` mask over the leading axes of `x`
    /// (as in [`Array::index_mask`]). The value is a scalar, or an array
    /// that broadcasts to the unmasked trailing axes, so every selected
    /// element (or sub-array) gets the same value, as NumPy gives it.
    pub fn assign_mask<'a>(&self, mask: &Array, value: impl IntoArg<'a>) -> Result<()> {
        let op = "assign_mask";
        check_mask(op, self, mask)?;
        let k = mask.ndim();
        let value = value.into_arg();
        if let Arg::Scalar(v) = value {
            v.to_scalar(op, self.dtype())?;
        }
        if let Arg::Array(v) = value {
            same_device(op, &[self, v])?;
            keeps_dtype(op, self.dtype(), v.dtype())?;
            if v.ndim() > self.ndim() - k {
                return Err(Error::ShapeMismatch {
                    op: op.into(),
                    shapes: vec![v.shape().to_vec(), self.shape()[k..].to_vec()],
                    reason: "the value must be a scalar or broadcast to the axes the mask leaves whole".into(),
                });
            }
        }
        // The mask over every axis of x; the value where it is true.
        let trailing: Vec<usize> = mask
            .shape()
            .iter()
            .copied()
            .chain(std::iter::repeat_n(1, self.ndim() - k))
            .collect();
        let everywhere = mask.reshape_to(&trailing)?.broadcast_to(self.shape())?;
        let updated = match value {
            Arg::Scalar(v) => crate::where_(&everywhere, Arg::Scalar(v), self)?,
            Arg::Array(v) => crate::where_(&everywhere, &v.astype(self.dtype())?, self)?,
        };
        self.assign(&updated.astype(self.dtype())?)
    }

    /// `x[i0, ..., ik-1] = value` for integer arrays indexing the first `k`
    /// axes, the scatter that mirrors [`Array::index_arrays`]: the index
    /// arrays broadcast to one shape `S`, and `value` (a scalar, or an
    /// array that broadcasts to `S + x.shape[k..]`) is written at
    /// `x[i0[s], ..., ik-1[s], ...]` for every `s`. Negative indices count
    /// from the end; one out of range is `IndexOutOfBounds`, and nothing
    /// is written.
    ///
    /// Where several `s` name one position, the last in row-major order of
    /// `S` wins. The standard leaves this unspecified and NumPy does not
    /// promise it, but that is what NumPy does in practice.
    ///
    /// It is composed from ops every device has (sort, search, gather,
    /// `where`), so plugins run it too, at a price: with `N` positions along
    /// the indexed axes and `K` indices it sorts the indices (`O(K log K)`),
    /// searches them for each of the `N` positions (`O(N log K)`), and
    /// rewrites the whole array, not only the elements it changes.
    pub fn assign_arrays<'a>(&self, indices: &[&Array], value: impl IntoArg<'a>) -> Result<()> {
        let op = "assign_arrays";
        self.check_writable(op)?;
        let value = match value.into_arg() {
            Arg::Scalar(v) => crate::creation::filled(self.ctx(), self.dtype(), &[], v.to_scalar(op, self.dtype())?)?,
            Arg::Array(v) => {
                same_device(op, &[self, v])?;
                keeps_dtype(op, self.dtype(), v.dtype())?;
                v.astype(self.dtype())?
            }
        };
        let (coordinates, index_shape) = array_coordinates(op, self, indices)?;
        let k = indices.len();
        let per_index: Vec<usize> = index_shape.iter().chain(&self.shape()[k..]).copied().collect();
        // One value (or sub-array) per index, in the indices' row-major order.
        let values = merge_leading(&value.broadcast_to(&per_index)?, index_shape.len())?;
        let positions = flat_positions(self, &coordinates)?;
        if positions.size() == 0 {
            return Ok(());
        }
        let (source, hit) = last_writes(&positions, self.shape()[..k].iter().product())?;
        let current = merge_leading(self, k)?;
        let hit = hit.reshape_to(&trailing_ones(hit.size(), current.ndim()))?;
        let updated = crate::where_(&hit, &take_checked(&values, &source, 0)?, &current)?;
        self.assign(&updated.reshape_to(self.shape())?)
    }

    /// Refuses writes through a broadcast view: its zero strides make
    /// several elements one memory location.
    fn check_writable(&self, op: &str) -> Result<()> {
        if self.is_read_only() {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "cannot write into a broadcast view or a view of one (shape {:?}, strides {:?}): several elements of the broadcast array are one location; copy it first",
                    self.shape(),
                    self.strides()
                ),
            ));
        }
        Ok(())
    }
}

/// For each of the `len` flat positions `q` along the merged indexed
/// axes: which index writes it (`source[q]`, into the flattened
/// indices) and whether any does (`hit[q]`). `positions` (1-D, in range,
/// not empty) is sorted stably, so among equal positions the last one in
/// the indices' order sorts last, and the right-side search for `q` finds
/// it. A `q` that no index names finds a smaller position, or (before the
/// first) the first, which is larger: either way not `q`.
fn last_writes(positions: &Array, len: usize) -> Result<(Array, Array)> {
    let order = positions.argsort(0, Order::Ascending)?;
    let sorted = take_checked(positions, &order, 0)?;
    let every = crate::arange(0, len as i64, 1, (DType::I64, positions.device()))?;
    let found = searchsorted(&sorted, &every, Side::Right)?.subtract(1)?.maximum(0)?;
    let hit = take_checked(&sorted, &found, 0)?.equal(&every)?;
    Ok((take_checked(&order, &found, 0)?, hit))
}

/// `[len, 1, 1, ...]` with `ndim` extents: a per-row flag that broadcasts
/// over the trailing axes.
fn trailing_ones(len: usize, ndim: usize) -> Vec<usize> {
    std::iter::once(len).chain(std::iter::repeat_n(1, ndim - 1)).collect()
}

/// Whether `a` and `b` view the same memory (a shared buffer, or a
/// mapping of it made by `to_device`): they share its ordering record.
fn shares_memory(a: &Array, b: &Array) -> bool {
    std::ptr::eq(a.buffer().usage(), b.buffer().usage())
}

/// A value of dtype `value` may be written into an array of dtype
/// `target` only if it does not change the array's dtype by promotion.
fn keeps_dtype(op: &str, target: DType, value: DType) -> Result<()> {
    if result_type(target, value) == target {
        return Ok(());
    }
    Err(Error::InvalidDType {
        op: op.into(),
        dtype: value,
        reason: format!("writing {value} into an array of {target} would change its values' type; astype first"),
    })
}
