//! Indexing: `take` (gather along an axis) and `nonzero`.

use crate::dispatch::{with_any, with_size};
use crate::element::Storage;
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, Space, GRAIN_MATH};
use crate::tensor::HostTensor;
use anydev_ops::DType;
use std::sync::OnceLock;

/// `out = take(x, indices, axis)`. Indices in `[-len, len)` are accepted
/// (negatives count from the end); any other is an error, checked before
/// `x` is read through it (the output is then unspecified).
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn take(
    x: &HostTensor,
    indices: &HostTensor,
    axis: usize,
    out: &HostTensor,
) -> Result<(), KernelError> {
    x.validate("x")?;
    let count = indices.expect("indices", DType::I64)?;
    out.expect("output", x.dtype)?;
    if indices.ndim() != 1 {
        return invalid(format!("take needs 1-D indices, got {} dims", indices.ndim()));
    }
    let nd = x.ndim();
    if axis >= nd || out.ndim() != nd {
        return invalid(format!(
            "take: axis {axis} / output rank {} for a {nd}-d input",
            out.ndim()
        ));
    }
    for d in 0..nd {
        let want = if d == axis { count } else { x.shape[d] };
        if out.shape[d] != want {
            return invalid(format!(
                "take: output shape {:?} for input {:?} and {count} indices",
                out.shape, x.shape
            ));
        }
    }
    let size = x.dtype.size();
    let len = x.shape[axis] as i64;
    // The output's space with the indices as an operand (stepping along
    // the axis only) and `x` with a zero stride along the axis (each
    // position's lane start): rows of one index each when the axis is not
    // innermost, or runs of indices, which split across the pool like
    // any elementwise op.
    let mut lane_starts = x.strides.to_vec();
    lane_starts[axis] = 0;
    let mut index_steps = vec![0; nd];
    index_steps[axis] = indices.strides[0];
    let space = Space::new(out.shape, [&lane_starts, &index_steps, out.strides], [size, 8, size])?;
    if space.numel() == 0 {
        // Nothing to gather, but an index is checked all the same.
        for i in 0..count as isize {
            // SAFETY: i < count elements of the caller's valid index array.
            let v = unsafe { *(indices.data as *const i64).wrapping_offset(i * indices.strides[0]) };
            position(v, len)?;
        }
        return Ok(());
    }
    let step = x.strides[axis].wrapping_mul(size as isize);
    // An index out of range, if a task met one.
    let bad = OnceLock::new();
    with_size!(size as isize, |T| {
        // SAFETY: every index is checked before `x` is read through it; the
        // caller guarantees the layouts; each task writes its own rows.
        unsafe {
            let bad = &bad;
            // `move`: the row loop keeps `len` and `step` in registers
            // instead of reloading them after every store through `out`.
            // A read from anywhere in `x` costs about what a vectorised
            // function does per element, not a copy's 0.25 ns.
            for_each_row(
                &space,
                [x.data, indices.data, out.data],
                GRAIN_MATH,
                move |_, n, p, s| {
                    let at = |e: usize| *(p[1].wrapping_offset(e as isize * s[1]) as *const i64);
                    if s[1] == 0 {
                        // One index for the whole row.
                        let Ok(v) = position(at(0), len) else {
                            let _ = bad.set(at(0));
                            return;
                        };
                        let src = p[0].wrapping_offset(v * step);
                        if s[0] == size as isize && s[2] == size as isize {
                            std::ptr::copy_nonoverlapping(src as *const T, p[2] as *mut T, n);
                        } else {
                            for e in 0..n as isize {
                                *(p[2].wrapping_offset(e * s[2]) as *mut T) =
                                    *(src.wrapping_offset(e * s[0]) as *const T);
                            }
                        }
                        return;
                    }
                    for e in 0..n {
                        let Ok(v) = position(at(e), len) else {
                            let _ = bad.set(at(e));
                            return;
                        };
                        let src = p[0].wrapping_offset(e as isize * s[0] + v * step);
                        *(p[2].wrapping_offset(e as isize * s[2]) as *mut T) = *(src as *const T);
                    }
                },
            );
        }
    });
    match bad.into_inner() {
        Some(v) => position(v, len).map(|_| ()),
        None => Ok(()),
    }
}

/// Index `v` of an axis of length `len` as a position in it (negatives
/// count from the end), or the error that names it.
#[inline(always)]
fn position(v: i64, len: i64) -> Result<isize, KernelError> {
    let p = if v < 0 { v.wrapping_add(len) } else { v };
    if (0..len).contains(&p) {
        Ok(p as isize)
    } else {
        invalid(format!("take: index {v} out of range for axis of length {len}"))
    }
}

/// Row-major coordinates of the non-zero elements of `x` into `out`
/// (`i64`, `[count, ndim]`, `count` computed by the caller and checked).
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn nonzero(x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    let n = x.validate("x")?;
    out.expect("output", DType::I64)?;
    let nd = x.ndim();
    if out.ndim() != 2 || out.shape[1] != nd {
        return invalid(format!("nonzero output must be [count, {nd}], got {:?}", out.shape));
    }
    let count = out.shape[0];
    // SAFETY: forwarded from the caller.
    let found = match x.dtype {
        // SAFETY: forwarded from the caller.
        DType::C64 => unsafe { nonzero_typed::<num_complex::Complex32>(x, n, out, count) },
        // SAFETY: forwarded from the caller.
        DType::C128 => unsafe { nonzero_typed::<num_complex::Complex64>(x, n, out, count) },
        // SAFETY: forwarded from the caller.
        _ => with_any!(x.dtype, |T| unsafe { nonzero_typed::<T>(x, n, out, count) }),
    };
    if found != count {
        return invalid(format!(
            "nonzero: output has room for {count} coordinates but x has {found} non-zeros"
        ));
    }
    Ok(())
}

/// Writes coordinates while they fit; returns how many non-zeros exist
/// (counting stops one past `count`).
///
/// Rows along the last axis are walked without a branch on the values:
/// every element's coordinates are written to the next free output row,
/// which only a non-zero claims. With half the values zero, a branch on
/// each one was mispredicted every other element: `nonzero` of 1e6
/// random bools took 6.9 ms that way and 2.0 ms this way, the count the
/// caller makes first included (NumPy: 0.46 ms).
///
/// # Safety
/// As for [`crate::execute`]; layouts validated by the caller.
unsafe fn nonzero_typed<T: Storage>(x: &HostTensor, n: usize, out: &HostTensor, count: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let nd = x.ndim();
    // A 0-d array is one row of one element and no coordinates.
    let (len, stride) = match (x.shape.last(), x.strides.last()) {
        (Some(&len), Some(&stride)) => (len, stride),
        _ => (1, 0),
    };
    let size = std::mem::size_of::<T>() as isize;
    let lead_rank = nd.saturating_sub(1);
    let (lead_shape, lead_strides) = (&x.shape[..lead_rank], &x.strides[..lead_rank]);
    let mut lead = vec![0usize; lead_rank];
    let mut row_off = 0isize;
    let mut found = 0usize;
    for _ in 0..n / len {
        let mut off = row_off;
        for j in 0..len {
            // SAFETY: `off` is the offset of element (lead, j) inside `x`.
            let v = unsafe { *(x.data.wrapping_offset(off * size) as *const T) };
            let nonzero = v != T::default();
            if found < count {
                let row = (out.data as *mut i64).wrapping_offset(found as isize * out.strides[0]);
                let column = |d: usize| row.wrapping_offset(d as isize * out.strides[1]);
                for (d, &i) in lead.iter().enumerate() {
                    // SAFETY: found < count rows and d < ndim columns of the valid output.
                    unsafe { *column(d) = i as i64 };
                }
                if nd > 0 {
                    // SAFETY: as above, for the last column.
                    unsafe { *column(lead_rank) = j as i64 };
                }
            } else if nonzero {
                return found + 1;
            }
            found += usize::from(nonzero);
            off += stride;
        }
        for d in (0..lead_rank).rev() {
            lead[d] += 1;
            row_off += lead_strides[d];
            if lead[d] < lead_shape[d] {
                break;
            }
            row_off -= lead_strides[d] * lead_shape[d] as isize;
            lead[d] = 0;
        }
    }
    found
}
