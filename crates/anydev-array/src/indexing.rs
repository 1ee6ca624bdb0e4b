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
        let (coordinates, index_shape) = array_coordinates("index", self, indices)?;
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

/// The in-range `i64` coordinates (negative indices resolved) that integer
/// `indices` give along the leading axes of `x`, each broadcast to the
/// indices' common shape, and that shape. Checks the devices, the number
/// of index arrays and their range, as reads and writes need alike.
pub(crate) fn array_coordinates(op: &str, x: &Array, indices: &[&Array]) -> Result<(Vec<Array>, Vec<usize>)> {
    let mut operands = vec![x];
    operands.extend_from_slice(indices);
    same_device(op, &operands)?;
    let k = indices.len();
    if k == 0 || k > x.ndim() {
        return Err(Error::invalid_argument(
            op,
            format!(
                "{k} index arrays for an array of {} dimensions: give 1 to {0}",
                x.ndim()
            ),
        ));
    }
    let shapes: Vec<&[usize]> = indices.iter().map(|i| i.shape()).collect();
    let index_shape = broadcast_shapes(op, &shapes)?;
    let coordinates = indices
        .iter()
        .zip(x.shape())
        .map(|(index, &len)| positions_in(op, &index.broadcast_to(&index_shape)?, len))
        .collect::<Result<Vec<_>>>()?;
    Ok((coordinates, index_shape.to_vec()))
}

/// Row-major flat positions, as a contiguous 1-D `i64` array, of the
/// in-range `coordinates` along the first `coordinates.len()` axes of `x`:
/// positions along those axes merged into one.
pub(crate) fn flat_positions(x: &Array, coordinates: &[Array]) -> Result<Array> {
    let Some((last, leading)) = coordinates.split_last() else {
        return Err(Error::invalid_argument("index", "no coordinates to merge"));
    };
    let mut flat = last.clone();
    let mut stride = x.shape()[leading.len()];
    for (axis, coordinate) in leading.iter().enumerate().rev() {
        flat = flat.add(&coordinate.multiply(stride as i64)?)?;
        stride *= x.shape()[axis];
    }
    flat.flatten()?.as_contiguous()
}

/// `x` with its first `k` axes merged into one, as a contiguous array.
pub(crate) fn merge_leading(x: &Array, k: usize) -> Result<Array> {
    let merged: Vec<usize> = std::iter::once(x.shape()[..k].iter().product())
        .chain(x.shape()[k..].iter().copied())
        .collect();
    x.as_contiguous()?.reshape_to(&merged)
}

/// Gathers from `x` the elements whose first `coordinates.len()` axes sit
/// at the given in-range `i64` coordinates (each of shape `index_shape`),
/// with the remaining axes whole.
fn gather_leading(x: &Array, coordinates: &[Array], index_shape: &[usize]) -> Result<Array> {
    let k = coordinates.len();
    let flat = flat_positions(x, coordinates)?;
    let out_shape: Vec<usize> = index_shape.iter().chain(&x.shape()[k..]).copied().collect();
    take_checked(&merge_leading(x, k)?, &flat, 0)?.reshape_to(&out_shape)
}
