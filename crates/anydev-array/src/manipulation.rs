//! Manipulations that build new arrays from pieces: `concat`, `stack`,
//! `roll`, `tile`, `repeat`, `broadcast_arrays`. (The pure views live in
//! `view.rs`.)

use crate::array::Array;
use crate::dispatch::{alloc, execute, same_device};
use crate::promote::result_type_all;
use crate::shape::{broadcast_shapes, normalize_axis, INLINE_DIMS};
use crate::slice::SliceArg;
use crate::view::Axes;
use anydev_core::ops::Op;
use anydev_core::{DType, Error, Result};
use smallvec::SmallVec;

/// An index selecting `range` along `axis` and everything elsewhere.
pub(crate) fn along(axis: usize, ndim: usize, range: SliceArg) -> SmallVec<[SliceArg; INLINE_DIMS]> {
    (0..ndim)
        .map(|a| if a == axis { range } else { SliceArg::FULL })
        .collect()
}

/// The error for a result with more elements than an address space holds
/// (checked before anything is built, so it is never a panic or abort).
fn too_large(op: &str, shape: &[usize]) -> Error {
    Error::invalid_argument(
        op,
        format!("a result of shape {shape:?} has more elements than fit in memory"),
    )
}

/// Joins arrays along an existing axis (`None`: flattens them first). All
/// on one device; dtypes promote; other extents must match.
pub fn concat(arrays: &[&Array], axis: Option<isize>) -> Result<Array> {
    let op = "concat";
    let ctx = same_device(op, arrays)?;
    let flat: Vec<Array>;
    let (arrays, axis): (Vec<&Array>, isize) = match axis {
        Some(axis) => (arrays.to_vec(), axis),
        None => {
            flat = arrays.iter().map(|a| a.flatten()).collect::<Result<_>>()?;
            (flat.iter().collect(), 0)
        }
    };
    let first = arrays[0];
    let axis = normalize_axis(op, axis, first.ndim())?;
    let mut shape = first.shape.clone();
    shape[axis] = 0;
    for a in &arrays {
        let same_rest =
            a.ndim() == first.ndim() && (0..a.ndim()).all(|d| d == axis || a.shape()[d] == first.shape()[d]);
        if !same_rest {
            return Err(Error::ShapeMismatch {
                op: op.into(),
                shapes: arrays.iter().map(|a| a.shape().to_vec()).collect(),
                reason: format!("all extents except along axis {axis} must match"),
            });
        }
        shape[axis] = shape[axis]
            .checked_add(a.shape()[axis])
            .ok_or_else(|| too_large(op, &shape))?;
    }
    let dtype = result_type_all(arrays.iter().map(|a| a.dtype())).expect("non-empty");
    let out = alloc(ctx, dtype, &shape)?;
    let mut start = 0isize;
    for a in &arrays {
        let n = a.shape()[axis] as isize;
        let part = a.astype(dtype)?;
        let dst = out.slice(&along(axis, shape.len(), SliceArg::from(start..start + n)))?;
        execute(
            ctx,
            &Op::Copy {
                x: part.tensor_ref(),
                out: dst.tensor_ref(),
            },
        )?;
        start += n;
    }
    Ok(out)
}

/// Joins arrays of one shape along a new axis.
pub fn stack(arrays: &[&Array], axis: isize) -> Result<Array> {
    same_device("stack", arrays)?;
    if let Some(a) = arrays.iter().find(|a| a.shape() != arrays[0].shape()) {
        return Err(Error::ShapeMismatch {
            op: "stack".into(),
            shapes: vec![arrays[0].shape().to_vec(), a.shape().to_vec()],
            reason: "all arrays must have the same shape".into(),
        });
    }
    let axis = normalize_axis("stack", axis, arrays[0].ndim() + 1)? as isize;
    let expanded: Vec<Array> = arrays.iter().map(|a| a.expand_dims(axis)).collect::<Result<_>>()?;
    let refs: Vec<&Array> = expanded.iter().collect();
    concat(&refs, Some(axis))
}

/// Rotates elements by `shifts` along `axes` (one shift per axis, or one
/// for all; the same axis may appear twice and its shifts add). With
/// [`crate::ALL`] the array is rolled as if flattened.
pub fn roll(x: &Array, shifts: &[isize], axes: impl Into<Axes>) -> Result<Array> {
    let op = "roll";
    let axes = axes.into();
    let Some(axes) = axes.as_option() else {
        let [shift] = shifts else {
            return Err(Error::invalid_argument(
                op,
                "rolling the flattened array takes exactly one shift",
            ));
        };
        return roll(&x.flatten()?, &[*shift], 0)?.reshape_to(x.shape());
    };
    if shifts.len() != axes.len() && shifts.len() != 1 {
        return Err(Error::invalid_argument(
            op,
            format!(
                "{} shifts given for {} axes; give one per axis or one for all",
                shifts.len(),
                axes.len()
            ),
        ));
    }
    let mut total: SmallVec<[isize; INLINE_DIMS]> = SmallVec::from_elem(0, x.ndim());
    for (i, &axis) in axes.iter().enumerate() {
        total[normalize_axis(op, axis, x.ndim())?] += shifts[if shifts.len() == 1 { 0 } else { i }];
    }
    let mut out = x.clone();
    for (axis, &shift) in total.iter().enumerate() {
        let n = x.shape()[axis] as isize;
        if n == 0 || shift.rem_euclid(n) == 0 {
            continue;
        }
        let k = n - shift.rem_euclid(n);
        let tail = out.slice(&along(axis, x.ndim(), SliceArg::from(k..)))?;
        let head = out.slice(&along(axis, x.ndim(), SliceArg::from(..k)))?;
        out = concat(&[&tail, &head], Some(axis as isize))?;
    }
    Ok(out)
}

/// Repeats the whole array `reps[i]` times along axis `i` (NumPy's `tile`:
/// shorter `reps` or shapes are padded with leading ones).
pub fn tile(x: &Array, reps: &[usize]) -> Result<Array> {
    let ndim = x.ndim().max(reps.len());
    let mut shape: SmallVec<[usize; INLINE_DIMS]> = SmallVec::from_elem(1, ndim - x.ndim());
    shape.extend_from_slice(x.shape());
    let mut full_reps: SmallVec<[usize; INLINE_DIMS]> = SmallVec::from_elem(1, ndim - reps.len());
    full_reps.extend_from_slice(reps);
    let interleaved: Vec<usize> = shape.iter().flat_map(|&n| [1, n]).collect();
    let target: Vec<usize> = shape.iter().zip(&full_reps).flat_map(|(&n, &r)| [r, n]).collect();
    let result: Vec<usize> = shape
        .iter()
        .zip(&full_reps)
        .map(|(&n, &r)| n.checked_mul(r).ok_or_else(|| too_large("tile", &target)))
        .collect::<Result<_>>()?;
    x.reshape_to(&interleaved)?
        .broadcast_to(&target)?
        .as_contiguous()?
        .reshape_to(&result)
}

/// How often `repeat` repeats each element.
#[derive(Clone, Copy, Debug)]
pub enum Repeats<'a> {
    /// Every element the same number of times.
    Each(usize),
    /// One count per element along the axis.
    PerElement(&'a [usize]),
    /// Counts in an integer array on the input's device.
    Array(&'a Array),
}

impl From<usize> for Repeats<'_> {
    fn from(n: usize) -> Self {
        Repeats::Each(n)
    }
}

impl<'a> From<&'a [usize]> for Repeats<'a> {
    fn from(v: &'a [usize]) -> Self {
        Repeats::PerElement(v)
    }
}

impl<'a> From<&'a Array> for Repeats<'a> {
    fn from(a: &'a Array) -> Self {
        Repeats::Array(a)
    }
}

/// Repeats each element along `axis` (`None`: of the flattened array).
pub fn repeat<'a>(x: &Array, repeats: impl Into<Repeats<'a>>, axis: Option<isize>) -> Result<Array> {
    let op = "repeat";
    let (x, axis) = match axis {
        Some(a) => (x.clone(), normalize_axis(op, a, x.ndim())?),
        None => (x.flatten()?, 0),
    };
    let n = x.shape()[axis];
    let counts: Vec<usize> = match repeats.into() {
        Repeats::Each(r) => {
            let mut spread: Vec<usize> = x.shape().to_vec();
            spread.insert(axis + 1, r);
            let mut merged: Vec<usize> = x.shape().to_vec();
            merged[axis] = merged[axis].checked_mul(r).ok_or_else(|| too_large(op, &spread))?;
            return x
                .expand_dims(axis as isize + 1)?
                .broadcast_to(&spread)?
                .as_contiguous()?
                .reshape_to(&merged);
        }
        Repeats::PerElement(v) => v.to_vec(),
        Repeats::Array(r) => {
            same_device(op, &[&x, r])?;
            if !r.dtype().is_integer() {
                return Err(Error::InvalidDType {
                    op: op.into(),
                    dtype: r.dtype(),
                    reason: "repeat counts must be integers".into(),
                });
            }
            let v = r.astype(DType::I64)?.to_vec::<i64>()?;
            if let Some(bad) = v.iter().find(|&&c| c < 0) {
                return Err(Error::invalid_argument(
                    op,
                    format!("repeat counts must be non-negative, got {bad}"),
                ));
            }
            v.into_iter().map(|c| c as usize).collect()
        }
    };
    if counts.len() != n {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![x.shape().to_vec(), vec![counts.len()]],
            reason: format!("{} counts given for an axis of length {n}", counts.len()),
        });
    }
    let total = counts
        .iter()
        .try_fold(0i64, |acc, &c| acc.checked_add(i64::try_from(c).ok()?))
        .ok_or_else(|| Error::invalid_argument(op, "the repeat counts add up to more elements than fit in memory"))?;
    // Output position j along the axis copies element `i`, the number of
    // running totals of the counts that are <= j. The indices are computed
    // on the device, whose allocator refuses an oversized result cleanly;
    // no host list of the output's length is ever built.
    let counts: Vec<i64> = counts.iter().map(|&c| c as i64).collect();
    let counts = crate::transfer::upload(x.ctx(), DType::I64, &[n], &crate::element::to_bytes(&counts))?;
    let ends = crate::cumulative_sum(&counts, Some(0), false)?;
    let positions = crate::creation::arange_on(x.ctx(), DType::I64, total as usize, 0.0, 1.0)?;
    let indices = crate::searchsorted(&ends, &positions, crate::Side::Right)?;
    crate::search::take_checked(&x, &indices, axis)
}

/// `n`-th discrete difference along `axis` (`x[1:] - x[:-1]`, `n` times;
/// `!=` for `bool`, as NumPy does). An axis shorter than `n + 1` gives an
/// empty result.
pub fn diff(x: &Array, axis: isize, n: usize) -> Result<Array> {
    let axis = normalize_axis("diff", axis, x.ndim())?;
    let mut out = x.clone();
    for _ in 0..n {
        let len = out.shape()[axis] as isize;
        let later = out.slice(&along(axis, out.ndim(), SliceArg::from(len.min(1)..)))?;
        let earlier = out.slice(&along(axis, out.ndim(), SliceArg::from(..(len - 1).max(0))))?;
        out = if out.dtype() == DType::Bool {
            later.not_equal(&earlier)?
        } else {
            later.subtract(&earlier)?
        };
    }
    Ok(out)
}

/// The slices of `x` along `axis`, as views (the standard's `unstack`).
pub fn unstack(x: &Array, axis: isize) -> Result<Vec<Array>> {
    let axis = normalize_axis("unstack", axis, x.ndim())?;
    (0..x.shape()[axis] as isize)
        .map(|i| x.slice(&along(axis, x.ndim(), SliceArg::Index(i))))
        .collect()
}

/// The arrays broadcast against each other (views).
pub fn broadcast_arrays(arrays: &[&Array]) -> Result<Vec<Array>> {
    same_device("broadcast_arrays", arrays)?;
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
    let shape = broadcast_shapes("broadcast_arrays", &shapes)?;
    arrays.iter().map(|a| a.broadcast_to(&shape)).collect()
}
