//! Matmul: cuBLAS (`cublasGemmStridedBatchedEx`) for f16, bf16, f32 and
//! f64 when the library is present and the operands have layouts it
//! reads (one unit stride per matrix); the generated kernel otherwise
//! (integers, complex numbers, no cuBLAS, unusual strides or sizes beyond
//! 32-bit).
//!
//! cuBLAS is column-major. A row-major product `C = A B` is computed as
//! the column-major product `C^T = B^T A^T`: a row-major matrix is the
//! column-major matrix of its transpose, so no data moves. f16/bf16/f32
//! accumulate in f32 (`CUBLAS_COMPUTE_32F`, no TF32), f64 in f64.

use crate::driver::{Raw, NAME};
use crate::exec::Exec;
use crate::layout::{blas_layout, coalesce};
use crate::loader::{self, Lib};
use anydev_core::backend::TensorRef;
use anydev_core::validate::MatmulDims;
use anydev_core::{DType, Error, Result};
use cudarc::cublas::sys as blas;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn data_type(dtype: DType) -> Option<(blas::cudaDataType, blas::cublasComputeType_t)> {
    use blas::cublasComputeType_t::*;
    use blas::cudaDataType::*;
    Some(match dtype {
        DType::F16 => (CUDA_R_16F, CUBLAS_COMPUTE_32F),
        DType::BF16 => (CUDA_R_16BF, CUBLAS_COMPUTE_32F),
        DType::F32 => (CUDA_R_32F, CUBLAS_COMPUTE_32F),
        DType::F64 => (CUDA_R_64F, CUBLAS_COMPUTE_64F),
        _ => return None,
    })
}

/// One matrix operand of the row-major formulation.
struct Mat {
    ptr: u64,
    trans: bool,
    ld: i32,
}

/// `out = a @ b` over the batch dims.
pub fn matmul(x: &Exec<'_>, a: &TensorRef<'_>, b: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<()> {
    let dt = a.dtype;
    let MatmulDims { batch, m, k, n } = x.check().matmul(a, b, out)?;
    if m == 0 || n == 0 || batch == 0 {
        return Ok(());
    }
    if k == 0 {
        return x.zero(out);
    }
    if data_type(dt).is_some() && loader::available(Lib::Cublas).is_ok() {
        if let Some(done) = try_cublas(x, a, b, out)? {
            return Ok(done);
        }
    }
    x.matmul_kernel(a, b, out)
}

/// `Ok(None)` when cuBLAS cannot take these operands (the caller falls
/// back to the kernel).
fn try_cublas(x: &Exec<'_>, a: &TensorRef<'_>, b: &TensorRef<'_>, out: &TensorRef<'_>) -> Result<Option<()>> {
    let nd = a.shape.len();
    let (m, k, n) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
    let fits = |v: usize| v <= i32::MAX as usize;
    if !(fits(m) && fits(n) && fits(k)) {
        return Ok(None);
    }
    let mat = |t: &TensorRef<'_>, rows: usize, cols: usize| -> Option<(bool, usize)> {
        blas_layout(rows, cols, t.strides[nd - 2], t.strides[nd - 1])
    };
    // The output must be row-major (C^T column-major); a column-major output
    // is the transposed problem: C^T = B^T A^T with the roles swapped.
    let (out_t, ldc) = match mat(out, m, n) {
        Some(l) => l,
        None => return Ok(None),
    };
    let (Some(la), Some(lb)) = (mat(a, m, k), mat(b, k, n)) else {
        return Ok(None);
    };
    if [la.1, lb.1, ldc].iter().any(|&l| !fits(l)) {
        return Ok(None);
    }
    let (ap, bp, cp) = (x.ptr_of(a)?, x.ptr_of(b)?, x.ptr_of(out)?);
    // Batch dims merged; cuBLAS strides are in elements.
    let (bs, bst) = coalesce(
        &a.shape[..nd - 2],
        &[&a.strides[..nd - 2], &b.strides[..nd - 2], &out.strides[..nd - 2]],
    );
    let a_m = Mat {
        ptr: ap,
        trans: la.0,
        ld: la.1 as i32,
    };
    let b_m = Mat {
        ptr: bp,
        trans: lb.0,
        ld: lb.1 as i32,
    };
    // Each call covers the innermost merged batch dim when its strides are
    // positive (a zero stride, broadcasting, is done one matrix at a time).
    let (inner, strides) = match bs.last() {
        Some(&count) if bst.iter().all(|s| s[bs.len() - 1] > 0) && fits(count) => (
            count,
            [bst[0][bs.len() - 1], bst[1][bs.len() - 1], bst[2][bs.len() - 1]],
        ),
        _ => (1, [0, 0, 0]),
    };
    let outer_dims = if inner > 1 { bs.len() - 1 } else { bs.len() };
    let outer: usize = bs[..outer_dims].iter().product();
    // Held across the calls: a cuBLAS handle is bound to one stream at a
    // time, so two threads must not set streams and call on it at once.
    let guard = handle(x)?;
    let handle = guard.handle;
    let elem = a.dtype.size() as i64;
    for o in 0..outer {
        // Offsets of the outer batch position, in elements.
        let (mut rest, mut off) = (o, [0i64; 3]);
        for d in (0..outer_dims).rev() {
            let c = rest % bs[d];
            rest /= bs[d];
            for (q, s) in off.iter_mut().zip(&bst) {
                *q += c as i64 * s[d] as i64;
            }
        }
        let at = |p: u64, e: i64| (p as i64 + e * elem) as u64;
        let (pa, pb, pc) = (at(a_m.ptr, off[0]), at(b_m.ptr, off[1]), at(cp, off[2]));
        let sa = Mat { ptr: pa, ..a_m };
        let sb = Mat { ptr: pb, ..b_m };
        let strides64 = [strides[0] as i64, strides[1] as i64, strides[2] as i64];
        if out_t {
            // C column-major: cuBLAS computes C = A B directly. In `gemm`'s
            // row-major terms that is the problem (n, m) with the operands
            // swapped (B^T, A^T) and each read the other way round.
            let ta = Mat { trans: !sa.trans, ..sa };
            let tb = Mat { trans: !sb.trans, ..sb };
            gemm(x, handle, a.dtype, n, m, k, &tb, &ta, pc, ldc, strides64, inner, true)?;
        } else {
            gemm(x, handle, a.dtype, m, n, k, &sa, &sb, pc, ldc, strides64, inner, false)?;
        }
    }
    Ok(Some(()))
}

/// One strided-batched call computing the row-major `C[m, n] = A[m, k] B[k, n]`
/// (or, with `swapped`, the column-major C with A, B given as `B^T`, `A^T`).
#[allow(clippy::too_many_arguments)]
fn gemm(
    x: &Exec<'_>,
    handle: blas::cublasHandle_t,
    dtype: DType,
    m: usize,
    n: usize,
    k: usize,
    a: &Mat,
    b: &Mat,
    c: u64,
    ldc: usize,
    strides: [i64; 3],
    batch: usize,
    swapped: bool,
) -> Result<()> {
    use blas::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    let Some((ty, compute)) = data_type(dtype) else {
        return Err(Error::backend(NAME, format!("cuBLAS has no {dtype} matmul")));
    };
    let op = |t: bool| if t { CUBLAS_OP_T } else { CUBLAS_OP_N };
    let (one32, zero32, one64, zero64) = (1.0f32, 0.0f32, 1.0f64, 0.0f64);
    let (alpha, beta) = if dtype == DType::F64 {
        (
            &one64 as *const f64 as *const c_void,
            &zero64 as *const f64 as *const c_void,
        )
    } else {
        (
            &one32 as *const f32 as *const c_void,
            &zero32 as *const f32 as *const c_void,
        )
    };
    // Row-major C^T (n x m, column-major, ld = ldc) = B^T (n x k) A^T (k x m).
    // With `swapped` the caller passed (B^T, A^T) as (a, b) already; the
    // strides follow the pointers.
    let (sa, sb) = if swapped {
        (strides[1], strides[0])
    } else {
        (strides[0], strides[1])
    };
    let status = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the handle is bound to this stream; pointers and leading
        // dimensions describe matrices inside checked allocations; alpha
        // and beta match the compute type.
        unsafe {
            blas::cublasGemmStridedBatchedEx(
                handle,
                op(b.trans),
                op(a.trans),
                n as i32,
                m as i32,
                k as i32,
                alpha,
                b.ptr as *const c_void,
                ty,
                b.ld,
                sb,
                a.ptr as *const c_void,
                ty,
                a.ld,
                sa,
                beta,
                c as *mut c_void,
                ty,
                ldc as i32,
                strides[2],
                batch as i32,
                compute,
                blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
    }))
    .map_err(|_| Error::backend(NAME, "cuBLAS lacks cublasGemmStridedBatchedEx"))?;
    if status != blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Err(Error::backend(
            NAME,
            format!("{}: cublasGemmStridedBatchedEx failed: {status:?}", x.name),
        ));
    }
    Ok(())
}

/// The device's cuBLAS handle, locked for the caller's calls.
struct Locked<'a> {
    _slot: std::sync::MutexGuard<'a, Option<std::result::Result<Raw<blas::cublasHandle_t>, String>>>,
    handle: blas::cublasHandle_t,
}

/// The device's cuBLAS handle, created on first use, set to `x`'s stream.
fn handle<'a>(x: &Exec<'a>) -> Result<Locked<'a>> {
    let mut slot = x
        .dev
        .blas
        .lock()
        .map_err(|_| Error::backend(NAME, "the cuBLAS handle lock is poisoned"))?;
    if slot.is_none() {
        let made = catch_unwind(|| {
            let mut h: blas::cublasHandle_t = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the device's context is current.
            let s = unsafe { blas::cublasCreate_v2(&mut h) };
            if s == blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
                Ok(Raw(h))
            } else {
                Err(format!("cublasCreate failed: {s:?}"))
            }
        })
        .unwrap_or_else(|_| Err("cuBLAS could not be loaded".into()));
        *slot = Some(made);
    }
    let h = match slot.as_ref() {
        Some(Ok(h)) => h.0,
        Some(Err(e)) => return Err(Error::backend(NAME, format!("{}: {e}", x.name))),
        None => return Err(Error::backend(NAME, "no cuBLAS handle")),
    };
    // SAFETY: live handle and stream of the bound context.
    let s = unsafe { blas::cublasSetStream_v2(h, x.stream as blas::cudaStream_t) };
    if s != blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Err(Error::backend(NAME, format!("cublasSetStream failed: {s:?}")));
    }
    Ok(Locked { _slot: slot, handle: h })
}
