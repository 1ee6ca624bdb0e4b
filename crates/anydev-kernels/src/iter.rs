//! N-d iteration over jointly collapsed strided operands.
//!
//! Elementwise-shaped kernels see their operands as `K` stride sets over
//! one shape. Dims of length 1 are dropped and neighbouring dims that are
//! contiguous with each other in *every* operand are merged, so a
//! C-contiguous call becomes one flat row, and only the outer dims pay for
//! index arithmetic (once per row). Rows are handed to a callback, in
//! parallel chunks above a size threshold; the callback learns the
//! row-major linear index of its first element, which keeps counter-based
//! kernels (arange, random) independent of chunking.

use crate::assist::run_tasks;
use crate::error::{invalid, KernelError};
use crate::tensor::{HostTensor, SendPtrs};
use rayon::prelude::*;
use smallvec::SmallVec;

/// Most non-unit dims a layout can have: each multiplies the element
/// count by at least 2, and that count fits in a `usize`.
pub(crate) const MAX_DIMS: usize = 64;

/// Zero strides, for scalars and broadcasts.
pub(crate) static ZEROS: [isize; MAX_DIMS] = [0; MAX_DIMS];

/// Least work worth a parallel task, in picoseconds of one core's time.
///
/// Handing work to rayon's pool from outside it wakes sleeping workers
/// and blocks the caller, some tens of microseconds; when the other
/// cores are busy a worker may wait a scheduler slice before it runs. A
/// call splits only when each task gets at least this much work, so a
/// split that finds no free core costs a small fraction of the call.
const TASK_PS: usize = 100_000_000;

/// Elements per task for work that costs `ps` picoseconds an element on
/// one core: [`for_each_row`] stays on the calling thread below two of
/// them, so the split depends on the call's estimated time (cost per
/// element times elements), not on its element count alone.
const fn grain(ps: usize) -> usize {
    TASK_PS / ps
}

/// Tasks per grain of a call below two grains, which [`run_tasks`]
/// shares between the calling thread and pool threads that are awake: a
/// few microseconds each, so the caller never waits long for a helper's
/// last task. Calls of fewer elements than one such task stay whole.
const ASSISTED_TASKS: usize = 32;

/// Memory-bound elementwise work (add, divide, casts, copies): about
/// 0.25 ns an element once the operands leave the caches.
pub(crate) const GRAIN_CHEAP: usize = grain(250);
/// Vectorised elementary functions ([`crate::vmath`]): about 1 ns.
pub(crate) const GRAIN_MATH: usize = grain(1_000);
/// Functions called element by element (`libm`, integer division,
/// sorting per lane): about 20 ns.
pub(crate) const GRAIN_HEAVY: usize = grain(20_000);

/// Collapsed dims held inline; a layout that collapses to more (rare: it
/// takes that many non-mergeable strided dims) spills to the heap.
///
/// Small on purpose: every elementwise call builds a [`Space`], and with
/// room for all [`MAX_DIMS`] inline, zeroing and moving it (2 KiB for a
/// binary op) was a quarter of a 100-element add.
const INLINE_DIMS: usize = 6;

type Dims<T> = SmallVec<[T; INLINE_DIMS]>;

/// `K` operands' strides (in bytes) over one collapsed shape.
pub(crate) struct Space<const K: usize> {
    pub shape: Dims<usize>,
    pub strides: [Dims<isize>; K],
}

impl<const K: usize> Space<K> {
    /// Collapses `shape` with each operand's element strides, converted
    /// to bytes with `sizes`. Operands must have been validated.
    ///
    /// Inlined, so that the space is built where the kernel keeps it
    /// rather than returned through a `Result` and copied (a tenth of a
    /// 100-element `exp`).
    #[inline(always)]
    pub fn new(shape: &[usize], strides: [&[isize]; K], sizes: [usize; K]) -> Result<Self, KernelError> {
        let mut sp = Space {
            shape: Dims::new(),
            strides: std::array::from_fn(|_| Dims::new()),
        };
        for (d, &n) in shape.iter().enumerate() {
            if n == 1 {
                continue;
            }
            if sp.ndim() > 0 {
                let last = sp.ndim() - 1;
                let inner = sp.shape[last] as isize;
                let mergeable = (0..K).all(|k| {
                    let s = strides[k][d].wrapping_mul(sizes[k] as isize);
                    sp.strides[k][last] == s.wrapping_mul(n as isize)
                });
                if mergeable {
                    sp.shape[last] = (inner as usize) * n;
                    for k in 0..K {
                        sp.strides[k][last] = strides[k][d].wrapping_mul(sizes[k] as isize);
                    }
                    continue;
                }
            }
            if sp.ndim() == MAX_DIMS {
                return invalid("too many dimensions");
            }
            sp.shape.push(n);
            for k in 0..K {
                sp.strides[k].push(strides[k][d].wrapping_mul(sizes[k] as isize));
            }
        }
        Ok(sp)
    }

    /// Dims left after collapsing.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Length of the innermost dim (1 for a 0-d space).
    pub fn inner_len(&self) -> usize {
        if self.ndim() == 0 {
            1
        } else {
            self.shape[self.ndim() - 1]
        }
    }

    /// Byte strides of the innermost dim.
    pub fn inner_strides(&self) -> [isize; K] {
        let mut s = [0; K];
        if self.ndim() > 0 {
            for (k, v) in s.iter_mut().enumerate() {
                *v = self.strides[k][self.ndim() - 1];
            }
        }
        s
    }
}

/// The dims of `x` other than `axis`, with `x`'s and `out`'s strides:
/// one lane per position, along which axis-wise kernels (scan, sort,
/// take) walk. `out` must have `x`'s rank.
pub(crate) fn lanes(x: &HostTensor, out: &HostTensor, axis: usize) -> Result<Space<2>, KernelError> {
    let dims: Vec<usize> = (0..x.ndim()).filter(|&d| d != axis).collect();
    let shape: Vec<usize> = dims.iter().map(|&d| x.shape[d]).collect();
    let xs: Vec<isize> = dims.iter().map(|&d| x.strides[d]).collect();
    let os: Vec<isize> = dims.iter().map(|&d| out.strides[d]).collect();
    Space::new(&shape, [&xs, &os], [x.dtype.size(), out.dtype.size()])
}

/// Position in the outer dims of a [`Space`] and the byte offsets it gives.
pub(crate) struct Cursor<const K: usize> {
    idx: Dims<usize>,
    pub off: [isize; K],
}

impl<const K: usize> Cursor<K> {
    /// The cursor at outer row `row` (row-major over `dims` outer dims).
    pub fn at(sp: &Space<K>, dims: usize, mut row: usize) -> Self {
        let mut c = Cursor {
            idx: smallvec::smallvec![0; dims],
            off: [0; K],
        };
        for d in (0..dims).rev() {
            let i = row % sp.shape[d];
            row /= sp.shape[d];
            c.idx[d] = i;
            for k in 0..K {
                c.off[k] += i as isize * sp.strides[k][d];
            }
        }
        c
    }

    /// Moves to the next row of the first `dims` dims.
    #[inline]
    pub fn advance(&mut self, sp: &Space<K>, dims: usize) {
        for d in (0..dims).rev() {
            self.idx[d] += 1;
            for k in 0..K {
                self.off[k] += sp.strides[k][d];
            }
            if self.idx[d] < sp.shape[d] {
                return;
            }
            for k in 0..K {
                self.off[k] -= sp.strides[k][d] * sp.shape[d] as isize;
            }
            self.idx[d] = 0;
        }
    }
}

/// Calls `row(first_linear_index, len, pointers, byte_strides)` for every
/// innermost row of `sp`, splitting rows into chunks of about `grain`
/// elements when the space is large.
///
/// # Safety
/// `base` plus every offset the space reaches must be valid for the
/// callback's accesses; the callback must only write elements of its row.
pub(crate) unsafe fn for_each_row<const K: usize, F>(sp: &Space<K>, base: [*mut u8; K], grain: usize, row: F)
where
    F: Fn(usize, usize, [*mut u8; K], [isize; K]) + Sync,
{
    let numel = sp.numel();
    if numel == 0 {
        return;
    }
    let inner = sp.inner_len();
    let strides = sp.inner_strides();
    let outer_dims = sp.ndim().saturating_sub(1);
    let rows = numel / inner;
    let base = SendPtrs(base);
    // One task: rows [r0, r1) or, for a long single row, a piece of it.
    let run = |r0: usize, r1: usize, e0: usize, e1: usize| {
        let mut cur = Cursor::at(sp, outer_dims, r0);
        for r in r0..r1 {
            let mut p = base.get();
            for k in 0..K {
                let off = cur.off[k] + e0 as isize * strides[k];
                p[k] = p[k].wrapping_offset(off);
            }
            row(r * inner + e0, e1 - e0, p, strides);
            cur.advance(sp, outer_dims);
        }
    };
    let threads = rayon::current_num_threads();
    if numel < grain / ASSISTED_TASKS || threads < 2 {
        run(0, rows, 0, inner);
        return;
    }
    // Calls too small to pay for waking a sleeping worker (under two
    // grains) run on the calling thread, which pool threads that are
    // already awake join; larger ones wait for the pool.
    let assisted = numel < 2 * grain;
    let chunk = if assisted {
        (grain / ASSISTED_TASKS).max(1)
    } else {
        (numel / (threads * 4)).max(grain)
    };
    let (tasks, task): (usize, &(dyn Fn(usize) + Sync)) = if inner >= chunk {
        let pieces = inner.div_ceil(chunk);
        let task = move |t: usize| {
            let (r, p) = (t / pieces, t % pieces);
            run(r, r + 1, p * chunk, ((p + 1) * chunk).min(inner));
        };
        (rows * pieces, &{ task })
    } else {
        let per = (chunk / inner).max(1);
        (rows.div_ceil(per), &move |t: usize| {
            run(t * per, ((t + 1) * per).min(rows), 0, inner)
        })
    };
    if assisted {
        run_tasks(tasks, task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
}
