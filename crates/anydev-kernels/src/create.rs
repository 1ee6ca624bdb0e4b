//! Ops that write an output from its index alone: `arange` (and the
//! shared helper `random` uses).

use crate::dispatch::with_numeric;
use crate::element::Element;
use crate::error::KernelError;
use crate::iter::{for_each_row, Space};
use crate::tensor::HostTensor;
use std::mem::size_of;

/// Writes `out[i] = f(i)` for the row-major linear index `i` of every
/// element; `f` sees whole rows so it can vectorise or batch.
///
/// # Safety
/// `out` must describe memory valid for writes.
pub(crate) unsafe fn generate<T: Element, F>(out: &HostTensor, grain: usize, f: F) -> Result<(), KernelError>
where
    F: Fn(usize, &mut [T]) + Sync,
{
    if out.expect("output", T::DTYPE)? == 0 {
        return Ok(());
    }
    let sp = Space::new(out.shape, [out.strides], [size_of::<T>()])?;
    // SAFETY: the caller guarantees the layout; rows are disjoint.
    unsafe {
        for_each_row(&sp, [out.data], grain, |first, len, p, s| {
            let o = p[0] as *mut T;
            if s[0] == size_of::<T>() as isize {
                f(first, std::slice::from_raw_parts_mut(o, len));
            } else {
                let mut buf = [T::default(); 64];
                for start in (0..len).step_by(64) {
                    let m = 64.min(len - start);
                    f(first + start, &mut buf[..m]);
                    for (j, &v) in buf[..m].iter().enumerate() {
                        *(p[0].wrapping_offset((start + j) as isize * s[0]) as *mut T) = v;
                    }
                }
            }
        });
    }
    Ok(())
}

/// `out[i] = start + i * step`, computed in f64 and converted with the
/// cast rules.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn arange(out: &HostTensor, start: f64, step: f64) -> Result<(), KernelError> {
    let unsupported = Err(KernelError::Unsupported {
        op: anydev_ops::OpCode::Arange,
        dtype: out.dtype,
    });
    with_numeric!(
        out.dtype,
        |T| {
            let f = |first: usize, row: &mut [T]| {
                for (j, o) in row.iter_mut().enumerate() {
                    *o = T::from_f64(start + (first + j) as f64 * step);
                }
            };
            // SAFETY: forwarded from the caller.
            unsafe { generate::<T, _>(out, crate::iter::GRAIN_CHEAP, f) }
        },
        unsupported
    )
}
