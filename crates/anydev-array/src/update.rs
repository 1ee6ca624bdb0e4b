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
use crate::indexing::check_mask;
use crate::promote::result_type;
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

    /// Refuses writes through a broadcast view: its zero strides make
    /// several elements one memory location.
    fn check_writable(&self, op: &str) -> Result<()> {
        let aliased = self.shape().iter().zip(self.strides()).any(|(&n, &s)| n > 1 && s == 0);
        if aliased {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "cannot write into a broadcast view (shape {:?}, strides {:?}): several of its elements are one location; copy it first",
                    self.shape(),
                    self.strides()
                ),
            ));
        }
        Ok(())
    }
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
