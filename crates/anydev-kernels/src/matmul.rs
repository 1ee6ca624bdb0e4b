//! Batched matrix product.
//!
//! f16, f32, f64, c64 and c128 go to the `gemm` crate (packed, SIMD micro-kernels,
//! arbitrary strides). Integers (wrapping) and bf16 (f32 accumulation)
//! use a simple row-times-packed-B loop that the compiler vectorises.
//! Small matrices in a batch run in parallel across the batch; large ones
//! are parallelised inside each product.

use crate::arith::Accum;
use crate::dispatch::with_dtype;
use crate::error::{invalid, KernelError};
use crate::iter::{for_each_row, Space};
use crate::tensor::HostTensor;
use anydev_ops::{DType, OpCode};
use gemm::Parallelism;
use half::f16;
use rayon::prelude::*;

/// Multiply-adds per product above which a product is split across threads.
const PAR_FLOPS: usize = 1 << 18;

/// One matrix operand: base pointer and (row, column) strides in elements.
#[derive(Clone, Copy)]
struct Mat {
    p: *mut u8,
    rs: isize,
    cs: isize,
}

impl Mat {
    /// The base address (a method, so closures capture the whole `Sync` `Mat`).
    fn ptr(&self) -> *mut u8 {
        self.p
    }
}

// SAFETY: a `Mat` is an address plus strides; tasks that share one read
// it (inputs) or write disjoint rows of it (output).
unsafe impl Send for Mat {}
// SAFETY: as above.
unsafe impl Sync for Mat {}

/// Runs `out = a @ b` over the batch dims.
///
/// # Safety
/// As for [`crate::execute`]; `out` must not overlap `a` or `b`.
pub(crate) unsafe fn matmul(a: &HostTensor, b: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    let dt = a.dtype;
    a.validate("a")?;
    b.expect("b", dt)?;
    out.expect("output", dt)?;
    let nd = a.ndim();
    if nd < 2 || b.ndim() != nd || out.ndim() != nd {
        return invalid(format!(
            "matmul needs operands of one rank >= 2, got {}, {}, {}",
            nd,
            b.ndim(),
            out.ndim()
        ));
    }
    let (m, k, n) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
    let batch = &a.shape[..nd - 2];
    if b.shape[nd - 2] != k
        || out.shape[nd - 2] != m
        || out.shape[nd - 1] != n
        || &b.shape[..nd - 2] != batch
        || &out.shape[..nd - 2] != batch
    {
        return invalid(format!(
            "matmul shapes {:?} @ {:?} -> {:?} disagree",
            a.shape, b.shape, out.shape
        ));
    }
    let mat = |t: &HostTensor| Mat {
        p: t.data,
        rs: t.strides[nd - 2],
        cs: t.strides[nd - 1],
    };
    let (ma, mb, mo) = (mat(a), mat(b), mat(out));
    let unsupported = Err(KernelError::Unsupported {
        op: OpCode::Matmul,
        dtype: dt,
    });
    let size = dt.size();
    let space = Space::new(
        batch,
        [&a.strides[..nd - 2], &b.strides[..nd - 2], &out.strides[..nd - 2]],
        [size; 3],
    )?;
    let flops = m.saturating_mul(n).saturating_mul(k);
    let inner_par = flops >= PAR_FLOPS;
    let grain = if inner_par {
        usize::MAX / 4
    } else {
        (PAR_FLOPS / flops.max(1)).max(1)
    };
    // SAFETY: the caller guarantees the layouts; each batch element writes
    // only its own output matrix.
    let run = |f: &(dyn Fn(Mat, Mat, Mat) + Sync)| unsafe {
        for_each_row(&space, [a.data, b.data, out.data], grain, |_, len, p, s| {
            for j in 0..len as isize {
                let at = |base: Mat, q: *mut u8, st: isize| Mat {
                    p: q.wrapping_offset(j * st),
                    ..base
                };
                f(at(ma, p[0], s[0]), at(mb, p[1], s[1]), at(mo, p[2], s[2]));
            }
        });
    };
    if m == 0 || n == 0 {
        return Ok(());
    }
    let par = if inner_par {
        Parallelism::Rayon(rayon::current_num_threads())
    } else {
        Parallelism::None
    };
    match dt {
        DType::F16 => run(&|a, b, o| unsafe { gemm_float::<f16>(m, n, k, a, b, o, par) }),
        DType::F32 => run(&|a, b, o| unsafe { gemm_float::<f32>(m, n, k, a, b, o, par) }),
        DType::F64 => run(&|a, b, o| unsafe { gemm_float::<f64>(m, n, k, a, b, o, par) }),
        DType::C64 => run(&|a, b, o| unsafe { gemm_float::<num_complex::Complex32>(m, n, k, a, b, o, par) }),
        DType::C128 => run(&|a, b, o| unsafe { gemm_float::<num_complex::Complex64>(m, n, k, a, b, o, par) }),
        _ => with_dtype!(
            dt,
            |T| run(&|a, b, o| unsafe { loop_mm::<T>(m, n, k, a, b, o, inner_par) }),
            [I8, I16, I32, I64, U8, U16, U32, U64, BF16],
            return unsupported
        ),
    }
    Ok(())
}

/// One product through `gemm` (f16 / f32 / f64 / c64 / c128 only: `gemm`
/// dispatches on the type).
///
/// # Safety
/// The matrices must be valid for their shapes and strides.
unsafe fn gemm_float<T: num_traits::Zero + num_traits::One + Copy + 'static>(
    m: usize,
    n: usize,
    k: usize,
    a: Mat,
    b: Mat,
    o: Mat,
    par: Parallelism,
) {
    if k == 0 {
        for i in 0..m as isize {
            for j in 0..n as isize {
                // SAFETY: an element of the valid output.
                unsafe { *(o.p as *mut T).wrapping_offset(i * o.rs + j * o.cs) = T::zero() };
            }
        }
        return;
    }
    // SAFETY: shapes and strides describe valid matrices (caller); with
    // `read_dst = false` the destination is only written.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            o.p as *mut T,
            o.cs,
            o.rs,
            false,
            a.p as *const T,
            a.cs,
            a.rs,
            b.p as *const T,
            b.cs,
            b.rs,
            T::zero(),
            T::one(),
            false,
            false,
            false,
            par,
        )
    }
}

/// One product by rows: `out[i, :] = sum_p a[i, p] * B[p, :]` with B
/// packed contiguously in the accumulator type.
///
/// # Safety
/// The matrices must be valid for their shapes and strides.
unsafe fn loop_mm<T: Accum>(m: usize, n: usize, k: usize, a: Mat, b: Mat, o: Mat, par: bool) {
    let at = |x: Mat, i: usize, j: usize| -> T {
        // SAFETY: (i, j) lies inside a valid matrix (callers stay in range).
        unsafe { *(x.p as *const T).wrapping_offset(i as isize * x.rs + j as isize * x.cs) }
    };
    let mut packed = vec![T::A::default(); k * n];
    for p in 0..k {
        for j in 0..n {
            packed[p * n + j] = at(b, p, j).lift();
        }
    }
    let packed = &packed;
    let row = |i: usize| {
        let mut acc = vec![T::A::default(); n];
        for p in 0..k {
            let x = at(a, i, p).lift();
            for (c, &y) in acc.iter_mut().zip(&packed[p * n..(p + 1) * n]) {
                *c = T::acc_add(*c, T::acc_mul(x, y));
            }
        }
        let base = o.ptr() as *mut T;
        for (j, &c) in acc.iter().enumerate() {
            // SAFETY: (i, j) is inside the valid output; rows are disjoint
            // between tasks.
            unsafe { *base.wrapping_offset(i as isize * o.rs + j as isize * o.cs) = T::lower(c) };
        }
    };
    if par {
        (0..m).into_par_iter().for_each(row);
    } else {
        (0..m).for_each(row);
    }
}
