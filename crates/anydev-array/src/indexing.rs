//! Integer-array and boolean-mask indexing (reading), as the standard's
//! indexing section defines them. Both are one gather from the array with
//! its indexed leading axes merged: the flat position of each selected
//! element along them is computed on the device (from the index arrays,
//! or from the mask's `nonzero` coordinates), so nothing but two range
//! bounds is read back.

use crate::array::Array;
use crate::dispatch::same_device;
use crate::search::{nonzero, positions_in, take_checked};
use crate::shape::broadcast_shapes;
use anydev_core::{DType, Error, Result};

impl Array {
    /// `x[i0, ..., ik-1]` for integer arrays indexing the first `k` axes;
    /// the other axes are taken whole. The index arrays broadcast to one
    /// shape `S` and the result has shape `S + x.shape[k..]`, with
    /// `result[s, ...] = x[i0[s], ..., ik-1[s], ...]`. Negative indices
    /// count from the end; one out of range is `IndexOutOfBounds`.
    pub fn index_arrays(&self, indices: &[&Array]) -> Result<Array> {
        let op = "index";
        let mut operands = vec![self];
        operands.extend_from_slice(indices);
        same_device(op, &operands)?;
        let k = indices.len();
        if k == 0 || k > self.ndim() {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "{k} index arrays for an array of {} dimensions: give 1 to {0}",
                    self.ndim()
                ),
            ));
        }
        let shapes: Vec<&[usize]> = indices.iter().map(|i| i.shape()).collect();
        let index_shape = broadcast_shapes(op, &shapes)?;
        let mut coordinates = Vec::with_capacity(k);
        for (axis, index) in indices.iter().enumerate() {
            coordinates.push(positions_in(
                op,
                &index.broadcast_to(&index_shape)?,
                self.shape()[axis],
            )?);
        }
        gather_leading(self, &coordinates, &index_shape)
    }

    /// `x[mask]` for a `bool` mask whose shape equals the first
    /// `mask.ndim()` axes of `x`: the elements (or sub-arrays) where the
    /// mask is true, in row-major order, as shape `[count] + x.shape[k..]`.
    /// A 0-d mask adds an axis of length 1 (true) or 0 (false).
    pub fn index_mask(&self, mask: &Array) -> Result<Array> {
        if mask.ndim() == 0 && mask.dtype() == DType::Bool {
            return self.expand_dims(0)?.index_mask(&mask.reshape_to(&[1])?);
        }
        check_mask("index", self, mask)?;
        let coordinates = nonzero(mask)?;
        let count = coordinates[0].size();
        gather_leading(self, &coordinates, &[count])
    }
}

/// Checks that `mask` can select from `x`: on its device, `bool`, and
/// shaped like the leading axes of `x`.
pub(crate) fn check_mask(op: &str, x: &Array, mask: &Array) -> Result<()> {
    same_device(op, &[x, mask])?;
    if mask.dtype() != DType::Bool {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype: mask.dtype(),
            reason: "a mask must be bool; integer arrays index by position (index_arrays)".into(),
        });
    }
    let k = mask.ndim();
    if k > x.ndim() || mask.shape() != &x.shape()[..k] {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![x.shape().to_vec(), mask.shape().to_vec()],
            reason: "a mask's shape must equal the leading axes of the array".into(),
        });
    }
    Ok(())
}

/// Gathers from `x` the elements whose first `coordinates.len()` axes sit
/// at the given in-range `i64` coordinates (each of shape `index_shape`),
/// with the remaining axes whole.
fn gather_leading(x: &Array, coordinates: &[Array], index_shape: &[usize]) -> Result<Array> {
    let k = coordinates.len();
    // Row-major flat positions over the leading axes.
    let mut flat: Option<Array> = None;
    let mut stride = 1usize;
    for axis in (0..k).rev() {
        let term = coordinates[axis].multiply(stride as i64)?;
        flat = Some(match flat {
            None => term,
            Some(f) => f.add(&term)?,
        });
        stride *= x.shape()[axis];
    }
    let flat = flat.expect("at least one coordinate array");
    let rest = &x.shape()[k..];
    let merged: Vec<usize> = std::iter::once(stride).chain(rest.iter().copied()).collect();
    let src = x.as_contiguous()?.reshape_to(&merged)?;
    let out_shape: Vec<usize> = index_shape.iter().chain(rest).copied().collect();
    take_checked(&src, &flat.flatten()?.as_contiguous()?, 0)?.reshape_to(&out_shape)
}
