//! Stable sort and argsort along one axis, and searchsorted.
//!
//! Order is the standard's: NaN sorts after every number in ascending
//! order and before them in descending order; equal keys (-0.0 and 0.0
//! among them) keep their input order in both directions. Each lane along
//! the axis is gathered, ordered, and scattered; lanes run in parallel.
//! A lane of [`RADIX_MIN`] elements or more is ordered by a radix sort of
//! each element's rank in the sort order as an unsigned integer (stable,
//! in linear time: a sort of 1e6 f32 took 86 ms as a merge sort of
//! (value, position) pairs and takes 19 ms this way), a shorter one by
//! the standard library's stable sort.

use crate::dispatch::with_any;
use crate::element::Element;
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, lanes};
use crate::map::{map1, Src};
use crate::tensor::{same_shape, HostTensor};
use std::cmp::Ordering;
use std::mem::size_of;

/// The shortest lane the radix sort orders: from 32 f32 up it was the
/// faster of the two (0.93 against 1.7 µs a call at 64).
const RADIX_MIN: usize = 32;

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
    let grain = (crate::iter::GRAIN_HEAVY / n.max(1)).max(1);
    // SAFETY: the caller guarantees the layouts; each lane is written by
    // one task only.
    unsafe {
        for_each_row(&lanes, [x.data, out.data], grain, |_, len, p, s| {
            let mut scratch = Scratch::default();
            for j in 0..len as isize {
                let (px, po) = (p[0].wrapping_offset(j * s[0]), p[1].wrapping_offset(j * s[1]));
                let lane = (0..n).map(|i| *(px.wrapping_offset(i as isize * ax) as *const T));
                scratch.sort(lane, descending, |i, from, v| {
                    let q = po.wrapping_offset(i as isize * ao);
                    if ARG {
                        *(q as *mut i64) = from as i64;
                    } else {
                        *(q as *mut T) = v;
                    }
                });
            }
        });
    }
    Ok(())
}

/// One task's buffers, kept from lane to lane.
#[derive(Default)]
struct Scratch<T> {
    /// A long lane's elements, for the radix sort.
    values: Vec<T>,
    /// Ranks with their positions, for the radix sort.
    narrow: Vec<(u32, u32)>,
    wide: Vec<(u64, u32)>,
    /// Values with their positions, for the merge sort.
    pairs: Vec<(T, usize)>,
}

impl<T: Element> Scratch<T> {
    /// Orders the `lane`'s elements as the standard says and calls
    /// `emit(i, from, v)` for each place `i` of the result: the element
    /// `v` that goes there, from position `from`.
    fn sort(
        &mut self,
        lane: impl ExactSizeIterator<Item = T>,
        descending: bool,
        mut emit: impl FnMut(usize, usize, T),
    ) {
        let n = lane.len();
        if n < RADIX_MIN || u32::try_from(n).is_err() {
            // Pairs read straight from the lane: a short lane's time is
            // mostly its copies, and comparing positions through a copy
            // of the values took rows of 20 a third longer.
            self.pairs.clear();
            self.pairs.extend(lane.zip(0..));
            self.pairs.sort_by(|a, b| directed(&a.0, &b.0, descending));
            place(self.pairs.iter().map(|&(v, i)| (i, v)), &mut emit);
            return;
        }
        self.values.clear();
        self.values.extend(lane);
        let values = &self.values;
        if size_of::<T>() <= 4 {
            place(
                radix_sort(values, descending, &mut self.narrow).map(|i| (i, values[i])),
                &mut emit,
            );
        } else {
            place(
                radix_sort(values, descending, &mut self.wide).map(|i| (i, values[i])),
                &mut emit,
            );
        }
    }
}

/// Calls `emit(i, from, v)` for the `i`th of `sorted`, the element `v`
/// from position `from`.
fn place<T>(sorted: impl Iterator<Item = (usize, T)>, emit: &mut impl FnMut(usize, usize, T)) {
    for (i, (from, v)) in sorted.enumerate() {
        emit(i, from, v);
    }
}

/// The sort order of `a` against `b`, reversed for `descending`.
fn directed<T: Element>(a: &T, b: &T, descending: bool) -> Ordering {
    if descending {
        nan_last(b, a)
    } else {
        nan_last(a, b)
    }
}

/// An unsigned integer radix key, at least as wide as the ranks it holds.
trait Word: radsort::Key + Copy {
    fn of(rank: u64) -> Self;
}

impl Word for u32 {
    fn of(rank: u64) -> u32 {
        rank as u32
    }
}

impl Word for u64 {
    fn of(rank: u64) -> u64 {
        rank
    }
}

/// The positions of `values` (fewer than 2^32) in stable sorted order, by
/// a radix sort of their ranks (`K` wide enough for [`rank`]'s).
fn radix_sort<'a, T: Element, K: Word>(
    values: &[T],
    descending: bool,
    keyed: &'a mut Vec<(K, u32)>,
) -> impl Iterator<Item = usize> + 'a {
    keyed.clear();
    keyed.extend(values.iter().zip(0u32..).map(|(&v, i)| {
        let r = rank(v);
        (K::of(if descending { !r } else { r }), i)
    }));
    radsort::sort_by_key(keyed, |&(k, _)| k);
    keyed.iter().map(|&(_, i)| i as usize)
}

/// `v`'s place in the ascending order as an unsigned integer, within 32
/// bits when `T` is at most 4 bytes wide: an integer less its dtype's
/// lowest value; a float's bits with the sign bit set (positive) or every
/// bit flipped (negative), which orders them as numbers, once -0.0 is made
/// 0.0; every NaN the largest value of the width, after infinity. Equal
/// values get equal ranks, so the stable radix sort keeps them in input
/// order; in descending order the ranks' complements do the same.
fn rank<T: Element>(v: T) -> u64 {
    let narrow = size_of::<T>() <= 4;
    if !T::IS_FLOAT {
        return (v.to_i128() - T::LOWEST.to_i128()) as u64;
    }
    if v.is_nan() {
        return if narrow { u32::MAX as u64 } else { u64::MAX };
    }
    // Adding 0.0 turns -0.0 into 0.0.
    let f = v.to_f64() + 0.0;
    if narrow {
        let bits = (f as f32).to_bits();
        (if bits >> 31 == 1 { !bits } else { bits | 1 << 31 }) as u64
    } else {
        let bits = f.to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        }
    }
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
