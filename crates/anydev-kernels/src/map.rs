//! The typed elementwise engine: `out[i] = f(a[i], b[i], ...)` for one to
//! three inputs, each a strided tensor or a scalar value.
//!
//! Rows from [`for_each_row`] whose operands are contiguous (or scalar
//! broadcasts, stride 0) run as plain slice loops that the compiler
//! vectorises (once per instruction set, picked at run time, where the
//! op asks for it with [`Vectorised`]); other rows run a strided pointer
//! loop. An output that is the same memory as an input (in-place ops) is
//! never turned into both a shared and a mutable slice: such rows are
//! staged through small stack buffers instead.

use crate::element::Storage;
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, Space, MAX_DIMS, ZEROS};
use crate::tensor::HostTensor;
use std::mem::size_of;

/// Elements per staging block on the in-place path.
const BLOCK: usize = 256;

/// An elementwise input: a tensor of the output's shape or a scalar.
#[derive(Clone, Copy)]
pub(crate) enum Src<'a, T> {
    Tensor(HostTensor<'a>),
    Value(T),
}

impl<T: Storage> Src<'_, T> {
    /// Checks dtype and shape against the output's shape.
    fn check(&self, what: &str, shape: &[usize]) -> Result<(), KernelError> {
        if let Src::Tensor(t) = self {
            t.expect(what, T::DTYPE)?;
            crate::tensor::same_shape(what, t.shape, shape)?;
        }
        Ok(())
    }

    /// Base pointer and element strides; a value lives at `self`.
    fn layout(&self, ndim: usize) -> (*mut u8, &[isize]) {
        match self {
            Src::Tensor(t) => (t.data, t.strides),
            Src::Value(v) => (v as *const T as *mut u8, &ZEROS[..ndim]),
        }
    }
}

/// One row of an input as the safe kernels see it.
#[derive(Clone, Copy)]
pub(crate) enum Arg<'s, T> {
    Slice(&'s [T]),
    Value(T),
}

impl<T: Copy> Arg<'_, T> {
    #[inline(always)]
    fn get(&self, i: usize) -> T {
        match self {
            Arg::Slice(s) => s[i],
            Arg::Value(v) => *v,
        }
    }
}

/// A contiguous (byte stride = element size) or broadcast (stride 0) row.
///
/// # Safety
/// `p` must be valid for `len` reads of `T` (one if `stride` is 0).
#[inline(always)]
unsafe fn arg<'s, T: Copy>(p: *mut u8, stride: isize, len: usize) -> Arg<'s, T> {
    if stride == 0 {
        // SAFETY: the caller guarantees one readable, aligned element.
        Arg::Value(unsafe { *(p as *const T) })
    } else {
        // SAFETY: the caller guarantees `len` readable, aligned elements
        // that no mutable slice covers.
        Arg::Slice(unsafe { std::slice::from_raw_parts(p as *const T, len) })
    }
}

/// Copies `len` elements from `p + start` into `buf` (or reads the
/// broadcast value) so an in-place row never aliases a slice.
///
/// # Safety
/// As for [`arg`], for elements `start..start + len`.
#[inline(always)]
unsafe fn staged<T: Copy>(buf: &mut [T], p: *mut u8, stride: isize, start: usize, len: usize) -> Arg<'_, T> {
    if stride == 0 {
        // SAFETY: as in `arg`.
        Arg::Value(unsafe { *(p as *const T) })
    } else {
        // SAFETY: source elements are readable; `buf` is a distinct local
        // buffer of at least `len` elements; `copy` tolerates overlap.
        unsafe { std::ptr::copy((p as *const T).add(start), buf.as_mut_ptr(), len) };
        Arg::Slice(&buf[..len])
    }
}

/// Reads element `j` of a strided row.
///
/// # Safety
/// `p + j * stride` must be a readable, aligned `T`.
#[inline(always)]
unsafe fn read<T: Copy>(p: *mut u8, stride: isize, j: usize) -> T {
    // SAFETY: guaranteed by the caller.
    unsafe { *(p.wrapping_offset(j as isize * stride) as *const T) }
}

/// How a call's dense rows run, chosen by the type of the `plan`
/// argument of `mapN`: a plain grain (`usize`) compiles them once for
/// the target's baseline (SSE2 on x86-64); [`Vectorised`] compiles them
/// once per instruction set and picks at run time.
pub(crate) trait Plan: Copy {
    /// Elements per parallel task, as for [`for_each_row`].
    fn grain(self) -> usize;
    /// Runs one dense-row loop.
    fn rows<R>(body: impl FnOnce() -> R) -> R;
}

impl Plan for usize {
    fn grain(self) -> usize {
        self
    }
    #[inline(always)]
    fn rows<R>(body: impl FnOnce() -> R) -> R {
        body()
    }
}

/// Dense rows under the best instruction set the CPU has (AVX-512, AVX2
/// with FMA, or the baseline), detected at run time: the loop and what
/// is inlined into it (the element function, [`crate::vmath`]) are
/// compiled once per set. The element function must be a function item
/// marked `#[inline(always)]`: a closure may be compiled into another
/// codegen unit and then runs, called per element, without the set. Rust never contracts `a * b + c` into a fused
/// multiply-add, so every set computes the same bits. Worth it where
/// wider vectors pay (arithmetic on operands in cache, division,
/// [`crate::vmath`]); the three copies cost compile time, so it is
/// opt-in per op.
#[derive(Clone, Copy)]
pub(crate) struct Vectorised(pub usize);

impl Plan for Vectorised {
    fn grain(self) -> usize {
        self.0
    }
    #[inline(always)]
    fn rows<R>(body: impl FnOnce() -> R) -> R {
        pulp::Arch::new().dispatch(body)
    }
}

fn overlaps(a: *mut u8, a_len: usize, b: *mut u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b + b_len && b < a + a_len
}

#[inline(always)]
fn kernel1<A: Copy, O, F: Fn(A) -> O>(a: Arg<A>, out: &mut [O], f: &F) {
    match a {
        Arg::Slice(a) => out.iter_mut().zip(a).for_each(|(o, &x)| *o = f(x)),
        Arg::Value(x) => out.iter_mut().for_each(|o| *o = f(x)),
    }
}

#[inline(always)]
fn kernel2<A: Copy, B: Copy, O, F: Fn(A, B) -> O>(a: Arg<A>, b: Arg<B>, out: &mut [O], f: &F) {
    match (a, b) {
        (Arg::Slice(a), Arg::Slice(b)) => {
            let n = out.len().min(a.len()).min(b.len());
            let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
            for i in 0..n {
                out[i] = f(a[i], b[i]);
            }
        }
        (Arg::Slice(a), Arg::Value(y)) => out.iter_mut().zip(a).for_each(|(o, &x)| *o = f(x, y)),
        (Arg::Value(x), Arg::Slice(b)) => out.iter_mut().zip(b).for_each(|(o, &y)| *o = f(x, y)),
        (Arg::Value(x), Arg::Value(y)) => out.iter_mut().for_each(|o| *o = f(x, y)),
    }
}

#[inline(always)]
fn kernel3<A: Copy, B: Copy, C: Copy, O, F: Fn(A, B, C) -> O>(a: Arg<A>, b: Arg<B>, c: Arg<C>, out: &mut [O], f: &F) {
    match (a, b, c) {
        (Arg::Slice(a), Arg::Slice(b), Arg::Slice(c)) => {
            let n = out.len().min(a.len()).min(b.len()).min(c.len());
            let (a, b, c, out) = (&a[..n], &b[..n], &c[..n], &mut out[..n]);
            for i in 0..n {
                out[i] = f(a[i], b[i], c[i]);
            }
        }
        (Arg::Slice(a), Arg::Value(y), Arg::Value(z)) => out.iter_mut().zip(a).for_each(|(o, &x)| *o = f(x, y, z)),
        (a, b, c) => out
            .iter_mut()
            .enumerate()
            .for_each(|(i, o)| *o = f(a.get(i), b.get(i), c.get(i))),
    }
}

/// Generates `mapN`: validation, collapsing, parallel rows, and the
/// contiguous / in-place / strided row paths, for N inputs.
macro_rules! define_map {
    ($(#[$doc:meta])* $name:ident, $kernel:ident, $o:tt, [$($a:ident : $A:ident = $i:tt),+]) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// Every tensor operand must describe memory valid for the call
        /// (reads for inputs, writes for `out`); `out` may share memory
        /// with an input only with an identical layout.
        pub(crate) unsafe fn $name<$($A: Storage,)+ O: Storage, P: Plan, F>(
            $($a: Src<'_, $A>,)+
            out: &HostTensor<'_>,
            plan: P,
            f: F,
        ) -> Result<(), KernelError>
        where
            F: Fn($($A),+) -> O + Sync,
        {
            let n = out.expect("output", O::DTYPE)?;
            $($a.check(stringify!($a), out.shape)?;)+
            if out.ndim() > MAX_DIMS {
                return invalid("too many dimensions");
            }
            if n == 0 {
                return Ok(());
            }
            let layouts = [$($a.layout(out.ndim()),)+ (out.data, out.strides)];
            let sizes = [$(size_of::<$A>(),)+ size_of::<O>()];
            let sp = Space::new(out.shape, layouts.map(|l| l.1), sizes)?;
            let base = layouts.map(|l| l.0);
            let f = &f;
            // SAFETY: the caller guarantees the layouts; each row writes
            // only its own output elements.
            unsafe {
                for_each_row(&sp, base, plan.grain(), |_, len, p, s| {
                    let o = p[$o] as *mut O;
                    let dense = s[$o] == sizes[$o] as isize
                        $(&& (s[$i] == 0 || s[$i] == sizes[$i] as isize))+;
                    if !dense {
                        for j in 0..len {
                            let v = f($(read::<$A>(p[$i], s[$i], j)),+);
                            *(p[$o].wrapping_offset(j as isize * s[$o]) as *mut O) = v;
                        }
                        return;
                    }
                    let alias = false
                        $(|| (s[$i] != 0 && overlaps(p[$i], len * sizes[$i], p[$o], len * sizes[$o])))+;
                    if !alias {
                        let out = std::slice::from_raw_parts_mut(o, len);
                        P::rows(#[inline(always)] || $kernel($(arg::<$A>(p[$i], s[$i], len),)+ out, f));
                        return;
                    }
                    $(let mut $a = [<$A>::default(); BLOCK];)+
                    P::rows(#[inline(always)] || {
                        for start in (0..len).step_by(BLOCK) {
                            let m = BLOCK.min(len - start);
                            $kernel(
                                $(staged(&mut $a, p[$i], s[$i], start, m),)+
                                std::slice::from_raw_parts_mut(o.add(start), m),
                                f,
                            );
                        }
                    });
                });
            }
            Ok(())
        }
    };
}

define_map!(
    /// `out[i] = f(a[i])`.
    map1, kernel1, 1, [a: A = 0]
);
define_map!(
    /// `out[i] = f(a[i], b[i])`.
    map2, kernel2, 2, [a: A = 0, b: B = 1]
);
define_map!(
    /// `out[i] = f(a[i], b[i], c[i])`.
    map3, kernel3, 3, [a: A = 0, b: B = 1, c: C = 2]
);
