//! Reductions over a set of axes.
//!
//! The input's dims are split into kept dims (one output element per
//! position) and reduced dims. Three paths, chosen per output row:
//! - reduced elements contiguous: each output folds a slice (pairwise
//!   for sums, `crate::pairwise`; eight lanes otherwise) — `sum(axis=-1)`;
//! - outputs contiguous in the input instead: whole input rows are folded
//!   into a block of accumulators, vectorised across outputs —
//!   `sum(axis=0)` of a C-order matrix;
//! - otherwise a strided walk.
//!
//! One long contiguous reduction with few outputs is split into fixed
//! chunks (not per thread), so its result does not depend on the pool,
//! and the chunks combine as a tree, so a split sum has the bits of the
//! unsplit pairwise one.

use crate::arith::{maximum, minimum, Accum};
use crate::dispatch::{with_any, with_numeric};
use crate::element::{Element, Storage};
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, Cursor, Space, GRAIN_CHEAP};
use crate::pairwise;
use crate::tensor::HostTensor;
use anydev_ops::{DType, ReduceOp};
use rayon::prelude::*;
use std::mem::size_of;

/// Elements per chunk of a single long reduction: a power-of-two number
/// of pairwise blocks, so that the chunks' sums, combined by
/// [`pairwise::tree`], are the pairwise sum of the whole.
const CHUNK: usize = 1 << 16;
const _: () = assert!(CHUNK.is_multiple_of(pairwise::BLOCK) && (CHUNK / pairwise::BLOCK).is_power_of_two());
/// Accumulators per block on the row-accumulation path (fits in L1).
const LANES: usize = 1024;
/// Values folded one after another before their result joins a
/// [`pairwise::Tree`], where the reduced elements are not one contiguous
/// run: rows on the row-accumulation path, elements of a strided walk.
/// The rounding error of a sum then grows with `ROWS + log2(n / ROWS)`
/// rather than with `n` (a column sum of 2e6 copies of 0.1f32 was 1.5%
/// off, as NumPy's is).
const ROWS: usize = 32;

/// A reduction's algebra. `i` is the position in the reduced index space
/// (row-major), used by argmin/argmax.
pub(crate) trait Reducer<T: Storage>: Sync {
    type Acc: Copy + Send + Sync;
    type Out: Storage;
    /// No identity (min, max, argmin, argmax): an empty reduction is
    /// rejected rather than given an invented value.
    const NEEDS_ELEMENTS: bool = false;
    fn init(&self) -> Self::Acc;
    fn step(&self, acc: Self::Acc, x: T, i: usize) -> Self::Acc;
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn finish(&self, acc: Self::Acc) -> Self::Out;

    /// Folds a contiguous run whose first element has index `i0`.
    #[inline(always)]
    fn fold(&self, acc: Self::Acc, xs: &[T], i0: usize) -> Self::Acc {
        xs.iter().enumerate().fold(acc, |a, (j, &x)| self.step(a, x, i0 + j))
    }

    /// Folds one input row into one accumulator per output.
    #[inline(always)]
    fn fold_rows(&self, accs: &mut [Self::Acc], xs: &[T], i: usize) {
        accs.iter_mut().zip(xs).for_each(|(a, &x)| *a = self.step(*a, x, i));
    }
}

/// `N` independent accumulators, so the loop vectorises (and, for
/// floats, so rounding errors grow more slowly), combined by
/// [`fold_lanes`].
#[inline(always)]
pub(crate) fn lanes<const N: usize, T: Copy, A: Copy>(
    xs: &[T],
    init: A,
    f: impl Fn(A, T) -> A,
    g: impl Fn(A, A) -> A,
) -> A {
    let mut acc = [init; N];
    let chunks = xs.chunks_exact(N);
    let rest = chunks.remainder();
    for c in chunks {
        for l in 0..N {
            acc[l] = f(acc[l], c[l]);
        }
    }
    rest.iter().fold(fold_lanes(acc, g), |a, &x| f(a, x))
}

/// Combines `N` (a power of two) lane accumulators as a fixed tree, lane
/// `l` with lane `l + N/2` first: the result does not depend on how the
/// lanes were held (scalars, or vectors of any width).
#[inline(always)]
pub(crate) fn fold_lanes<const N: usize, A: Copy>(mut acc: [A; N], g: impl Fn(A, A) -> A) -> A {
    let mut width = N;
    while width > 1 {
        width /= 2;
        for l in 0..width {
            acc[l] = g(acc[l], acc[l + width]);
        }
    }
    acc[0]
}

pub(crate) struct Sum;
impl<T: Accum> Reducer<T> for Sum {
    type Acc = T::A;
    type Out = T;
    fn init(&self) -> T::A {
        T::A::default()
    }
    #[inline(always)]
    fn step(&self, acc: T::A, x: T, _: usize) -> T::A {
        T::acc_add(acc, x.lift())
    }
    fn combine(&self, a: T::A, b: T::A) -> T::A {
        T::acc_add(a, b)
    }
    fn finish(&self, acc: T::A) -> T {
        T::lower(acc)
    }
    fn fold(&self, acc: T::A, xs: &[T], _: usize) -> T::A {
        T::acc_add(acc, pairwise::sum(xs))
    }
}

pub(crate) struct Prod;
impl<T: Accum> Reducer<T> for Prod {
    type Acc = T::A;
    type Out = T;
    fn init(&self) -> T::A {
        T::acc_one()
    }
    #[inline(always)]
    fn step(&self, acc: T::A, x: T, _: usize) -> T::A {
        T::acc_mul(acc, x.lift())
    }
    fn combine(&self, a: T::A, b: T::A) -> T::A {
        T::acc_mul(a, b)
    }
    fn finish(&self, acc: T::A) -> T {
        T::lower(acc)
    }
    fn fold(&self, acc: T::A, xs: &[T], _: usize) -> T::A {
        T::acc_mul(
            acc,
            lanes::<8, _, _>(xs, T::acc_one(), |a, x| T::acc_mul(a, x.lift()), T::acc_mul),
        )
    }
}

/// `max` (`MAX = true`) or `min`, propagating NaN.
struct Extreme<const MAX: bool>;
impl<T: Element, const MAX: bool> Reducer<T> for Extreme<MAX> {
    type Acc = T;
    type Out = T;
    const NEEDS_ELEMENTS: bool = true;
    fn init(&self) -> T {
        if MAX {
            T::LOWEST
        } else {
            T::HIGHEST
        }
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: usize) -> T {
        if MAX {
            maximum(acc, x)
        } else {
            minimum(acc, x)
        }
    }
    fn combine(&self, a: T, b: T) -> T {
        self.step(a, b, 0)
    }
    fn finish(&self, acc: T) -> T {
        acc
    }
    fn fold(&self, acc: T, xs: &[T], _: usize) -> T {
        let f = |a, x| self.step(a, x, 0);
        lanes::<8, _, _>(xs, acc, f, f)
    }
}

/// `argmax` (`MAX = true`) or `argmin`: the first extreme, or the first NaN.
struct ArgExtreme<const MAX: bool>;
impl<T: Element, const MAX: bool> Reducer<T> for ArgExtreme<MAX> {
    type Acc = (T, usize);
    type Out = i64;
    const NEEDS_ELEMENTS: bool = true;
    fn init(&self) -> (T, usize) {
        (<Extreme<MAX> as Reducer<T>>::init(&Extreme::<MAX>), 0)
    }
    #[inline(always)]
    fn step(&self, acc: (T, usize), x: T, i: usize) -> (T, usize) {
        let better = if MAX { x > acc.0 } else { x < acc.0 };
        if (better || x.is_nan()) && !acc.0.is_nan() {
            (x, i)
        } else {
            acc
        }
    }
    fn combine(&self, a: (T, usize), b: (T, usize)) -> (T, usize) {
        self.step(a, b.0, b.1)
    }
    fn finish(&self, acc: (T, usize)) -> i64 {
        acc.1 as i64
    }
}

/// `all` (`ALL = true`) or `any`: truth is `!= 0` (NaN is true).
pub(crate) struct Truth<const ALL: bool>;
impl<T: Storage, const ALL: bool> Reducer<T> for Truth<ALL> {
    type Acc = bool;
    type Out = bool;
    fn init(&self) -> bool {
        ALL
    }
    #[inline(always)]
    fn step(&self, acc: bool, x: T, _: usize) -> bool {
        if ALL {
            acc & (x != T::default())
        } else {
            acc | (x != T::default())
        }
    }
    fn combine(&self, a: bool, b: bool) -> bool {
        if ALL {
            a & b
        } else {
            a | b
        }
    }
    fn finish(&self, acc: bool) -> bool {
        acc
    }
}

/// Runs `out = op(x, axes)`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn reduce(op: ReduceOp, x: &HostTensor, axes: &[usize], out: &HostTensor) -> Result<(), KernelError> {
    x.validate("x")?;
    let nd = x.ndim();
    if out.ndim() != nd {
        return invalid(format!("{op}: output has {} dims, input {nd}", out.ndim()));
    }
    if axes.windows(2).any(|w| w[0] >= w[1]) || axes.iter().any(|&a| a >= nd) {
        return invalid(format!("{op}: axes {axes:?} are not sorted, unique and below {nd}"));
    }
    for d in 0..nd {
        let want = if axes.contains(&d) { 1 } else { x.shape[d] };
        if out.shape[d] != want {
            return invalid(format!(
                "{op}: output shape {:?} does not match input {:?}",
                out.shape, x.shape
            ));
        }
    }
    let out_dtype = match op {
        ReduceOp::ArgMin | ReduceOp::ArgMax => {
            if axes.len() != 1 {
                return invalid(format!("{op} reduces exactly one axis, got {axes:?}"));
            }
            DType::I64
        }
        ReduceOp::All | ReduceOp::Any => DType::Bool,
        _ => x.dtype,
    };
    out.expect("output", out_dtype)?;
    let unsupported = || {
        Err(KernelError::Unsupported {
            op: anydev_ops::OpCode::Reduce(op),
            dtype: x.dtype,
        })
    };
    if x.dtype.is_complex() {
        // SAFETY: forwarded from the caller.
        return unsafe { crate::complex::reduce(op, x, axes, out) };
    }
    // SAFETY (every arm): forwarded from the caller.
    unsafe {
        match op {
            ReduceOp::Sum => with_numeric!(x.dtype, |T| drive::<T, _>(x, axes, out, Sum), unsupported()),
            ReduceOp::Prod => with_numeric!(x.dtype, |T| drive::<T, _>(x, axes, out, Prod), unsupported()),
            ReduceOp::Max => with_numeric!(x.dtype, |T| drive::<T, _>(x, axes, out, Extreme::<true>), unsupported()),
            ReduceOp::Min => with_numeric!(
                x.dtype,
                |T| drive::<T, _>(x, axes, out, Extreme::<false>),
                unsupported()
            ),
            ReduceOp::ArgMax => {
                with_numeric!(
                    x.dtype,
                    |T| drive::<T, _>(x, axes, out, ArgExtreme::<true>),
                    unsupported()
                )
            }
            ReduceOp::ArgMin => {
                with_numeric!(
                    x.dtype,
                    |T| drive::<T, _>(x, axes, out, ArgExtreme::<false>),
                    unsupported()
                )
            }
            ReduceOp::All => with_any!(x.dtype, |T| drive::<T, _>(x, axes, out, Truth::<true>)),
            ReduceOp::Any => with_any!(x.dtype, |T| drive::<T, _>(x, axes, out, Truth::<false>)),
        }
    }
}

/// The generic reduction driver (layouts validated by the caller).
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn drive<T: Storage, R: Reducer<T>>(
    x: &HostTensor,
    axes: &[usize],
    out: &HostTensor,
    r: R,
) -> Result<(), KernelError> {
    let size = size_of::<T>();
    let (mut ks, mut kx, mut ko, mut rs, mut rx) = (vec![], vec![], vec![], vec![], vec![]);
    for d in 0..x.ndim() {
        if axes.contains(&d) {
            rs.push(x.shape[d]);
            rx.push(x.strides[d]);
        } else {
            ks.push(x.shape[d]);
            kx.push(x.strides[d]);
            ko.push(out.strides[d]);
        }
    }
    let kept = Space::new(&ks, [&kx, &ko], [size, size_of::<R::Out>()])?;
    let red = Space::new(&rs, [&rx], [size])?;
    let (m, rn) = (kept.numel(), red.numel());
    if m == 0 {
        return Ok(());
    }
    if rn == 0 && R::NEEDS_ELEMENTS {
        return invalid("reduction over an empty axis has no identity for this op");
    }
    let red_inner = red.inner_len();
    let red_stride = red.inner_strides()[0];
    let red_outer = red.ndim().saturating_sub(1);
    let contiguous_red = red_stride == size as isize;
    let r = &r;
    let combine = |a, b| r.combine(a, b);
    // Folds the whole reduced space starting at `p`.
    let reduce_at = |p: *mut u8| -> R::Acc {
        // The reduced elements `i0..i0 + len` of one row starting at `q`.
        let fold_row = |q: *mut u8, i0: usize, len: usize| {
            if contiguous_red {
                // SAFETY: a contiguous run of the caller's valid input.
                let xs = unsafe { std::slice::from_raw_parts(q as *const T, len) };
                return r.fold(r.init(), xs, i0);
            }
            (0..len).fold(r.init(), |acc, j| {
                // SAFETY: an element of the caller's valid input.
                let v = unsafe { *(q.wrapping_offset(j as isize * red_stride) as *const T) };
                r.step(acc, v, i0 + j)
            })
        };
        // A contiguous row is one part (folded pairwise by `fold` for
        // sums); strided ones are split into parts of ROWS elements.
        let part = if contiguous_red { red_inner } else { ROWS };
        let rows = rn / red_inner.max(1);
        if rows <= 1 && red_inner <= part {
            return if rn == 0 { r.init() } else { fold_row(p, 0, rn) };
        }
        let mut tree = pairwise::Tree::new();
        let mut cur = Cursor::at(&red, red_outer, 0);
        for row in 0..rows {
            let q = p.wrapping_offset(cur.off[0]);
            for j0 in (0..red_inner).step_by(part) {
                let q = q.wrapping_offset(j0 as isize * red_stride);
                tree.push(fold_row(q, row * red_inner + j0, part.min(red_inner - j0)), combine);
            }
            cur.advance(&red, red_outer);
        }
        tree.finish(combine).unwrap_or(r.init())
    };
    let long_single = red.ndim() == 1 && contiguous_red && rn >= 2 * CHUNK && m <= 4;
    let grain = if long_single {
        usize::MAX / 4
    } else {
        (GRAIN_CHEAP / rn.max(1)).max(1)
    };
    // SAFETY: the caller guarantees the layouts; each row writes only its
    // own outputs.
    unsafe {
        for_each_row(&kept, [x.data, out.data], grain, |_, len, p, s| {
            let write = |j: usize, acc: R::Acc| {
                *(p[1].wrapping_offset(j as isize * s[1]) as *mut R::Out) = r.finish(acc);
            };
            if long_single {
                for j in 0..len {
                    let xs = std::slice::from_raw_parts(p[0].wrapping_offset(j as isize * s[0]) as *const T, rn);
                    let parts: Vec<R::Acc> = xs
                        .par_chunks(CHUNK)
                        .enumerate()
                        .map(|(c, xs)| r.fold(r.init(), xs, c * CHUNK))
                        .collect();
                    write(j, pairwise::tree(parts, combine).unwrap_or(r.init()));
                }
            } else if s[0] == size as isize && len >= 16 && !contiguous_red && rn > 1 {
                for lane0 in (0..len).step_by(LANES) {
                    let l = LANES.min(len - lane0);
                    let base = p[0].wrapping_add(lane0 * size);
                    let mut cur = Cursor::at(&red, red.ndim(), 0);
                    // Each block of ROWS rows into its own accumulators,
                    // the blocks combined as a tree.
                    let blocks = (0..rn).step_by(ROWS).map(|i0| {
                        let mut accs = vec![r.init(); l];
                        for i in i0..rn.min(i0 + ROWS) {
                            let xs = std::slice::from_raw_parts(base.wrapping_offset(cur.off[0]) as *const T, l);
                            r.fold_rows(&mut accs, xs, i);
                            cur.advance(&red, red.ndim());
                        }
                        accs
                    });
                    let accs = pairwise::tree(blocks, |mut below: Vec<R::Acc>, above| {
                        below.iter_mut().zip(above).for_each(|(a, b)| *a = r.combine(*a, b));
                        below
                    })
                    .unwrap_or_else(|| vec![r.init(); l]);
                    for (j, &a) in accs.iter().enumerate() {
                        write(lane0 + j, a);
                    }
                }
            } else {
                for j in 0..len {
                    write(j, reduce_at(p[0].wrapping_offset(j as isize * s[0])));
                }
            }
        });
    }
    Ok(())
}
