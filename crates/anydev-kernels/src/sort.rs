//! Stable sort and argsort along one axis, and searchsorted.
//!
//! Order is the standard's: NaN sorts after every number in ascending
//! order and before them in descending order; equal keys keep their input
//! order in both directions. Each lane along the axis is gathered, sorted
//! with the standard library's stable sort, and scattered; lanes run in
//! parallel.

use crate::dispatch::with_any;
use crate::element::Element;
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, lanes};
use crate::map::{map1, Src};
use crate::tensor::{same_shape, HostTensor};
use std::cmp::Ordering;
use std::mem::size_of;

/// Total order with NaN greatest (NaNs equal to each other).
#[inline(always)]
pub(crate) fn nan_last<T: Element>(a: &T, b: &T) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (true, true) => Ordering::Equal,
    }
}

/// Sorts (`ARG = false`) or argsorts along `axis`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn sort<const ARG: bool>(
    x: &HostTensor,
    axis: usize,
    descending: bool,
    out: &HostTensor,
) -> Result<(), KernelError> {
    let numel = x.validate("x")?;
    out.expect("output", if ARG { anydev_ops::DType::I64 } else { x.dtype })?;
    same_shape("sort", x.shape, out.shape)?;
    if x.ndim() == 0 {
        if ARG {
            // SAFETY: a 0-d output holds one element.
            return unsafe { map1(Src::<i64>::Value(0), out, usize::MAX, |v| v) };
        }
        // SAFETY: forwarded from the caller.
        return unsafe { crate::cast::copy(x, out) };
    }
    if axis >= x.ndim() {
        return invalid(format!("sort axis {axis} out of range for {} dims", x.ndim()));
    }
    if numel == 0 {
        return Ok(());
    }
    // SAFETY: forwarded from the caller.
    with_any!(x.dtype, |T| unsafe { sort_typed::<T, ARG>(x, axis, descending, out) })
}

/// # Safety
/// As for [`crate::execute`]; layouts validated by the caller.
unsafe fn sort_typed<T: Element, const ARG: bool>(
    x: &HostTensor,
    axis: usize,
    descending: bool,
    out: &HostTensor,
) -> Result<(), KernelError> {
    let n = x.shape[axis];
    let osize = out.dtype.size();
    let lanes = lanes(x, out, axis)?;
    let (ax, ao) = (
        x.strides[axis].wrapping_mul(size_of::<T>() as isize),
        out.strides[axis].wrapping_mul(osize as isize),
    );
    let cmp = |a: &T, b: &T| {
        if descending {
            nan_last(b, a)
        } else {
            nan_last(a, b)
        }
    };
    let grain = (crate::iter::GRAIN_HEAVY / n.max(1)).max(1);
    // SAFETY: the caller guarantees the layouts; each lane is written by
    // one task only.
    unsafe {
        for_each_row(&lanes, [x.data, out.data], grain, |_, len, p, s| {
            let mut keys: Vec<(T, i64)> = Vec::with_capacity(n);
            for j in 0..len as isize {
                let (px, po) = (p[0].wrapping_offset(j * s[0]), p[1].wrapping_offset(j * s[1]));
                keys.clear();
                keys.extend((0..n).map(|i| (*(px.wrapping_offset(i as isize * ax) as *const T), i as i64)));
                keys.sort_by(|a, b| cmp(&a.0, &b.0));
                for (i, &(v, idx)) in keys.iter().enumerate() {
                    let q = po.wrapping_offset(i as isize * ao);
                    if ARG {
                        *(q as *mut i64) = idx;
                    } else {
                        *(q as *mut T) = v;
                    }
                }
            }
        });
    }
    Ok(())
}

/// Insertion points of `values` into the ascending 1-D `sorted`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn searchsorted(
    sorted: &HostTensor,
    values: &HostTensor,
    right: bool,
    out: &HostTensor,
) -> Result<(), KernelError> {
    let len = sorted.validate("sorted")?;
    if sorted.ndim() != 1 {
        return invalid(format!(
            "searchsorted needs a 1-D sorted array, got {} dims",
            sorted.ndim()
        ));
    }
    let step = sorted.strides[0];
    let base = crate::tensor::SendPtrs([sorted.data]);
    with_any!(sorted.dtype, |T| {
        let at = |i: usize| -> T {
            // SAFETY: i < len, inside the caller's valid `sorted`.
            unsafe { *(base.get()[0] as *const T).wrapping_offset(i as isize * step) }
        };
        let find = |v: T| -> i64 {
            // Binary search for the first index whose element is not
            // before `v` (left) or is after `v` (right).
            let (mut lo, mut hi) = (0usize, len);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let ord = nan_last(&at(mid), &v);
                let go_right = if right {
                    ord != Ordering::Greater
                } else {
                    ord == Ordering::Less
                };
                if go_right {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo as i64
        };
        // SAFETY: forwarded from the caller.
        unsafe { map1(Src::<T>::Tensor(*values), out, crate::iter::GRAIN_HEAVY, find) }
    })
}
