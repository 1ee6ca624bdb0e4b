//! Shapes, strides and axes: the pure arithmetic of layouts.
//!
//! Nothing here touches a device. Shapes and strides live in inline
//! [`SmallVec`]s so that the common case (up to six dimensions) costs no
//! heap allocation per op.

use anydev_core::{Error, Result};
use smallvec::SmallVec;

/// Inline capacity of shapes and strides.
pub const INLINE_DIMS: usize = 6;

/// A shape: extents per axis.
pub type Dims = SmallVec<[usize; INLINE_DIMS]>;

/// Strides per axis, in elements; negative for reversed views, zero for
/// broadcast axes.
pub type Strides = SmallVec<[isize; INLINE_DIMS]>;

/// Most dimensions an array has: NumPy's limit, and the most any
/// backend's kernels index (every device refuses more alike).
pub const MAX_NDIM: usize = 64;

/// An error for a result of more than [`MAX_NDIM`] dimensions.
pub fn check_ndim(op: &str, ndim: usize) -> Result<()> {
    if ndim > MAX_NDIM {
        return Err(Error::invalid_argument(
            op,
            format!("arrays have at most {MAX_NDIM} dimensions; this one would have {ndim}"),
        ));
    }
    Ok(())
}

/// Number of elements of `shape` (1 for a 0-d shape), or an error when it
/// has more than [`MAX_NDIM`] dimensions or its size overflows `usize`.
pub fn checked_size(op: &str, shape: &[usize]) -> Result<usize> {
    check_ndim(op, shape.len())?;
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| Error::invalid_argument(op, format!("shape {shape:?} has more elements than fit in memory")))
}

/// Number of elements of a shape already known to be valid.
pub fn size(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major (C-order) strides of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = SmallVec::from_elem(0, shape.len());
    let mut acc = 1isize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(n.max(1) as isize);
    }
    strides
}

/// Whether a layout visits memory in row-major order with no gaps, so it
/// can be read or written as one byte range. Axes of length 1 may have any
/// stride; an empty array is trivially contiguous.
pub fn is_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected = 1isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n != 1 {
            if s != expected {
                return false;
            }
            expected *= n as isize;
        }
    }
    true
}

/// Normalises a possibly negative axis against `ndim` (Python style).
pub fn normalize_axis(op: &str, axis: isize, ndim: usize) -> Result<usize> {
    let n = ndim as isize;
    let a = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&a) {
        Ok(a as usize)
    } else {
        Err(Error::InvalidAxis {
            op: op.to_owned(),
            axis,
            ndim,
        })
    }
}

/// Normalises a set of axes: each in range, none repeated; returned sorted.
/// `None` means every axis.
pub fn normalize_axes(op: &str, axes: Option<&[isize]>, ndim: usize) -> Result<SmallVec<[usize; INLINE_DIMS]>> {
    let Some(axes) = axes else {
        return Ok((0..ndim).collect());
    };
    let mut out: SmallVec<[usize; INLINE_DIMS]> = SmallVec::with_capacity(axes.len());
    for &axis in axes {
        let a = normalize_axis(op, axis, ndim)?;
        if out.contains(&a) {
            return Err(Error::invalid_argument(
                op,
                format!("axis {axis} is repeated in {axes:?}; name each axis once"),
            ));
        }
        out.push(a);
    }
    out.sort_unstable();
    Ok(out)
}

/// The broadcast of several shapes under the standard's rules (align on the
/// right; extents must be equal or 1). The error shows every shape.
pub fn broadcast_shapes(op: &str, shapes: &[&[usize]]) -> Result<Dims> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out: Dims = SmallVec::from_elem(1, ndim);
    for shape in shapes {
        let lead = ndim - shape.len();
        for (i, &n) in shape.iter().enumerate() {
            let o = &mut out[lead + i];
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                return Err(Error::ShapeMismatch {
                    op: op.to_owned(),
                    shapes: shapes.iter().map(|s| s.to_vec()).collect(),
                    reason: format!(
                        "axis {} (counting from the end) has extents {} and {n}, which cannot be broadcast; each must be equal or 1",
                        shape.len() - i,
                        *o
                    ),
                });
            }
        }
    }
    Ok(out)
}

/// Strides that view `(shape, strides)` as `target` (which `shape`
/// broadcasts to): new leading axes and stretched axes get stride 0.
pub fn broadcast_strides(op: &str, shape: &[usize], strides: &[isize], target: &[usize]) -> Result<Strides> {
    let mismatch = || Error::ShapeMismatch {
        op: op.to_owned(),
        shapes: vec![shape.to_vec(), target.to_vec()],
        reason: format!("an array of shape {shape:?} cannot be broadcast to {target:?}"),
    };
    if shape.len() > target.len() {
        return Err(mismatch());
    }
    let lead = target.len() - shape.len();
    let mut out: Strides = SmallVec::from_elem(0, target.len());
    for (i, (&n, &s)) in shape.iter().zip(strides).enumerate() {
        let t = target[lead + i];
        out[lead + i] = if n == t {
            s
        } else if n == 1 {
            0
        } else {
            return Err(mismatch());
        };
    }
    Ok(out)
}

/// Resolves a requested shape with at most one `-1` against `size` elements.
pub fn resolve_shape(op: &str, size: usize, requested: &[isize]) -> Result<Dims> {
    check_ndim(op, requested.len())?;
    let mut unknown = None;
    let mut known = 1usize;
    let mut out: Dims = SmallVec::with_capacity(requested.len());
    for (i, &n) in requested.iter().enumerate() {
        match n {
            -1 if unknown.is_none() => {
                unknown = Some(i);
                out.push(1);
            }
            -1 => {
                return Err(Error::invalid_argument(
                    op,
                    format!("shape {requested:?} has more than one -1"),
                ))
            }
            n if n < 0 => {
                return Err(Error::invalid_argument(
                    op,
                    format!("shape {requested:?} has a negative extent {n}; only -1 (infer) is allowed"),
                ))
            }
            n => {
                known = known
                    .checked_mul(n as usize)
                    .ok_or_else(|| Error::invalid_argument(op, format!("shape {requested:?} is too large")))?;
                out.push(n as usize);
            }
        }
    }
    let incompatible = || Error::ShapeMismatch {
        op: op.to_owned(),
        shapes: vec![vec![size], out.to_vec()],
        reason: format!("cannot reshape an array of {size} elements into shape {requested:?}"),
    };
    match unknown {
        Some(i) if known != 0 && size.is_multiple_of(known) => out[i] = size / known,
        Some(_) if known == 0 && size == 0 => {
            return Err(Error::invalid_argument(
                op,
                format!("shape {requested:?} is ambiguous for an empty array: -1 could be anything"),
            ))
        }
        Some(_) => return Err(incompatible()),
        None if known != size => return Err(incompatible()),
        None => {}
    }
    Ok(out)
}

/// Strides that view the layout `(shape, strides)` as `new_shape` without
/// copying, or `None` when the layout does not allow it (NumPy's
/// `_attempt_nocopy_reshape`): each run of old axes that merges into, or
/// splits from, new axes must itself be contiguous.
pub fn reshape_strides(shape: &[usize], strides: &[isize], new_shape: &[usize]) -> Option<Strides> {
    if size(shape) == 0 || shape.is_empty() || new_shape.is_empty() {
        return Some(contiguous_strides(new_shape));
    }
    // Drop length-1 axes of the old layout: their strides carry no information.
    let old: SmallVec<[(usize, isize); INLINE_DIMS]> = shape
        .iter()
        .zip(strides)
        .filter(|(&n, _)| n != 1)
        .map(|(&n, &s)| (n, s))
        .collect();
    let mut out: Strides = SmallVec::from_elem(0, new_shape.len());
    let (mut oi, mut ni) = (0usize, 0usize);
    while ni < new_shape.len() {
        if new_shape[ni] == 1 {
            out[ni] = 0;
            ni += 1;
            continue;
        }
        let (oj_start, nj_start) = (oi, ni);
        let mut op = old.get(oi)?.0;
        let mut np = new_shape[ni];
        oi += 1;
        ni += 1;
        while op != np {
            if np < op {
                np *= *new_shape.get(ni)?;
                ni += 1;
            } else {
                op *= old.get(oi)?.0;
                oi += 1;
            }
        }
        // The old run must be contiguous within itself.
        for k in oj_start..oi - 1 {
            if old[k].1 != old[k + 1].1 * old[k + 1].0 as isize {
                return None;
            }
        }
        // Lay out the new run from the innermost old stride outwards.
        let mut stride = old[oi - 1].1;
        for k in (nj_start..ni).rev() {
            out[k] = stride;
            stride *= new_shape[k] as isize;
        }
    }
    if oi != old.len() {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_and_contiguity() {
        assert_eq!(contiguous_strides(&[2, 3, 4]).as_slice(), &[12, 4, 1]);
        assert_eq!(contiguous_strides(&[]).as_slice(), &[] as &[isize]);
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(is_contiguous(&[2, 1, 3], &[3, 99, 1]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(!is_contiguous(&[3], &[-1]));
        assert!(is_contiguous(&[0, 3], &[7, 7]));
    }

    #[test]
    fn axes_normalise_and_reject_bad_input() {
        assert_eq!(normalize_axis("sum", -1, 3).unwrap(), 2);
        assert!(matches!(
            normalize_axis("sum", 3, 3),
            Err(Error::InvalidAxis { axis: 3, ndim: 3, .. })
        ));
        assert!(normalize_axis("sum", -4, 3).is_err());
        assert!(normalize_axis("sum", 0, 0).is_err());
        assert_eq!(normalize_axes("sum", Some(&[2, -3]), 3).unwrap().as_slice(), &[0, 2]);
        assert_eq!(normalize_axes("sum", None, 2).unwrap().as_slice(), &[0, 1]);
        assert!(normalize_axes("sum", Some(&[1, -1]), 2).is_err());
    }

    #[test]
    fn broadcasting_follows_the_standard() {
        let b = |shapes: &[&[usize]]| broadcast_shapes("add", shapes).map(|d| d.to_vec());
        assert_eq!(b(&[&[2, 1, 3], &[4, 1]]).unwrap(), vec![2, 4, 3]);
        assert_eq!(b(&[&[], &[5]]).unwrap(), vec![5]);
        assert_eq!(b(&[&[0, 1], &[1, 3]]).unwrap(), vec![0, 3]);
        assert_eq!(b(&[&[1], &[0]]).unwrap(), vec![0]);
        let err = b(&[&[2, 3], &[4]]).unwrap_err().to_string();
        assert!(err.contains("[2, 3]") && err.contains("[4]"), "{err}");
        assert!(b(&[&[0], &[2]]).is_err());
        assert_eq!(
            broadcast_strides("add", &[3, 1], &[1, 1], &[2, 3, 4])
                .unwrap()
                .as_slice(),
            &[0, 1, 0]
        );
        assert!(broadcast_strides("add", &[3], &[1], &[4]).is_err());
    }

    #[test]
    fn reshape_shapes_resolve() {
        assert_eq!(resolve_shape("reshape", 12, &[3, -1]).unwrap().as_slice(), &[3, 4]);
        assert_eq!(resolve_shape("reshape", 0, &[0, 5]).unwrap().as_slice(), &[0, 5]);
        assert!(resolve_shape("reshape", 12, &[5, -1]).is_err());
        assert!(resolve_shape("reshape", 12, &[-1, -1]).is_err());
        assert!(resolve_shape("reshape", 12, &[2, 5]).is_err());
        assert!(resolve_shape("reshape", 0, &[0, -1]).is_err());
        assert!(resolve_shape("reshape", 1, &[-2]).is_err());
        assert_eq!(resolve_shape("reshape", 1, &[]).unwrap().len(), 0);
    }

    #[test]
    fn reshape_views_when_the_layout_allows() {
        let v = |shape: &[usize], strides: &[isize], new: &[usize]| {
            reshape_strides(shape, strides, new).map(|s| s.to_vec())
        };
        assert_eq!(v(&[2, 3], &[3, 1], &[6]), Some(vec![1]));
        assert_eq!(v(&[6], &[1], &[2, 3]), Some(vec![3, 1]));
        assert_eq!(v(&[6], &[-2], &[2, 3]), Some(vec![-6, -2]));
        // A transposed matrix cannot be flattened without a copy...
        assert_eq!(v(&[3, 2], &[1, 3], &[6]), None);
        // ...but its axes can be split further.
        assert_eq!(v(&[4, 2], &[1, 4], &[2, 2, 2]), Some(vec![2, 1, 4]));
        assert_eq!(v(&[2, 3], &[3, 1], &[3, 1, 2]), Some(vec![2, 2, 1]));
        assert_eq!(v(&[1, 4], &[100, 1], &[2, 2]), Some(vec![2, 1]));
        assert_eq!(v(&[2, 3], &[0, 1], &[6]), None);
        assert_eq!(v(&[2, 3], &[0, 1], &[2, 3, 1]), Some(vec![0, 1, 0]));
    }
}
