//! Inclusive scans (cumulative sum and product) along one axis.
//!
//! The other dims form "lanes". When lanes are contiguous (scanning a
//! non-last axis of a C-order array) a block of lanes is scanned together,
//! one vectorised row at a time; otherwise each lane is walked with its
//! strides. Accumulation is in [`Accum::A`] (f32 for the 16-bit floats).

use crate::arith::Accum;
use crate::dispatch::with_numeric;
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, lanes, GRAIN_CHEAP};
use crate::tensor::{same_shape, HostTensor};
use anydev_ops::ScanOp;
use std::mem::size_of;

/// Lanes scanned together on the vectorised path.
const LANES: usize = 1024;

/// Runs `out = op(x, axis)`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn scan(op: ScanOp, x: &HostTensor, axis: usize, out: &HostTensor) -> Result<(), KernelError> {
    let numel = x.validate("x")?;
    out.expect("output", x.dtype)?;
    same_shape("scan", x.shape, out.shape)?;
    if axis >= x.ndim() {
        return invalid(format!("{op}: axis {axis} out of range for {} dims", x.ndim()));
    }
    if numel == 0 {
        return Ok(());
    }
    let prod = op == ScanOp::CumulativeProd;
    let unsupported = Err(KernelError::Unsupported {
        op: anydev_ops::OpCode::Scan(op),
        dtype: x.dtype,
    });
    if x.dtype.is_complex() {
        // SAFETY: forwarded from the caller.
        return unsafe { crate::complex::scan(x, axis, out, prod) };
    }
    // SAFETY: forwarded from the caller.
    with_numeric!(x.dtype, |T| unsafe { scan_typed::<T>(x, axis, out, prod) }, unsupported)
}

/// # Safety
/// As for [`crate::execute`]; layouts validated by the caller.
pub(crate) unsafe fn scan_typed<T: Accum>(
    x: &HostTensor,
    axis: usize,
    out: &HostTensor,
    prod: bool,
) -> Result<(), KernelError> {
    let op = |a: T::A, v: T| {
        if prod {
            T::acc_mul(a, v.lift())
        } else {
            T::acc_add(a, v.lift())
        }
    };
    let init = if prod { T::acc_one() } else { T::A::default() };
    let size = size_of::<T>() as isize;
    let n = x.shape[axis];
    let (ax, ao) = (x.strides[axis].wrapping_mul(size), out.strides[axis].wrapping_mul(size));
    let lanes = lanes(x, out, axis)?;
    if n == 0 {
        return Ok(());
    }
    let grain = (GRAIN_CHEAP / n).max(1);
    // SAFETY: the caller guarantees both layouts; each task writes only
    // its own lanes.
    unsafe {
        for_each_row(&lanes, [x.data, out.data], grain, |_, len, p, s| {
            if s[0] == size && s[1] == size && len >= 8 {
                for lane0 in (0..len).step_by(LANES) {
                    let l = LANES.min(len - lane0);
                    let off = lane0 as isize * size;
                    let mut acc = vec![init; l];
                    for i in 0..n as isize {
                        let xs = std::slice::from_raw_parts(p[0].wrapping_offset(off + i * ax) as *const T, l);
                        for (a, &v) in acc.iter_mut().zip(xs) {
                            *a = op(*a, v);
                        }
                        let os = std::slice::from_raw_parts_mut(p[1].wrapping_offset(off + i * ao) as *mut T, l);
                        for (o, &a) in os.iter_mut().zip(&acc) {
                            *o = T::lower(a);
                        }
                    }
                }
            } else {
                for j in 0..len as isize {
                    let (px, po) = (p[0].wrapping_offset(j * s[0]), p[1].wrapping_offset(j * s[1]));
                    let mut acc = init;
                    for i in 0..n as isize {
                        acc = op(acc, *(px.wrapping_offset(i * ax) as *const T));
                        *(po.wrapping_offset(i * ao) as *mut T) = T::lower(acc);
                    }
                }
            }
        });
    }
    Ok(())
}
