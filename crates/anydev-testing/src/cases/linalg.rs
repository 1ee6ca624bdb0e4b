//! Matrix products against triple loops: batches, broadcasting, 1-D rules.

use crate::case::{expect_err, Case, CaseCtx, Failure};
use crate::reference::{self as r, check_array};
use anydev_array as ad;
use anydev_core::ops::OpCode;
use anydev_core::{DType, Error};

/// `a` [.., m, k] times `b` [k, n] per batch (b shared), by loops.
fn matmul_ref(a: &[f64], b: &[f64], batch: usize, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; batch * m * n];
    for p in 0..batch {
        for i in 0..m {
            for j in 0..n {
                out[(p * m + i) * n + j] = (0..k).map(|t| a[(p * m + i) * k + t] * b[t * n + j]).sum();
            }
        }
    }
    out
}

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("linalg::matmul", matmul)
            .dtypes(&[DType::F16, DType::F32, DType::F64, DType::I32])
            .op(OpCode::Matmul),
        Case::new("linalg::matmul_shape_errors", matmul_shape_errors),
    ]
}

fn matmul(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let (batch, m, k, n) = (2, 3, 5, 4);
    // Integers small enough that f16 holds every product sum exactly.
    let a: Vec<f64> = r::sample(DType::I8, batch * m * k, 11)
        .iter()
        .map(|v| (v / 4.0).trunc())
        .collect();
    let b: Vec<f64> = r::sample(DType::I8, k * n, 12)
        .iter()
        .map(|v| (v / 4.0).trunc())
        .collect();
    let x = r::array(&a, &[batch, m, k], dtype, ctx.device)?;
    let y = r::array(&b, &[k, n], dtype, ctx.device)?;
    let want = matmul_ref(&a, &b, batch, m, k, n);
    check_array(
        "[2,3,5] @ [5,4] (broadcast batch)",
        &[batch, m, n],
        &want,
        &x.matmul(&y)?,
    )?;
    // A transposed operand: the same product from b stored as [n, k].
    let bt: Vec<f64> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
    let yt = r::array(&bt, &[n, k], dtype, ctx.device)?.matrix_transpose()?;
    check_array(
        "with a transposed right operand",
        &[batch, m, n],
        &want,
        &x.matmul(&yt)?,
    )?;
    // 1-D operands: vector @ matrix drops the vector's axis.
    let v = r::array(&b[..k], &[k], dtype, ctx.device)?;
    let mat = r::array(&b, &[k, n], dtype, ctx.device)?;
    let vm: Vec<f64> = (0..n).map(|j| (0..k).map(|t| b[t] * b[t * n + j]).sum()).collect();
    check_array("[5] @ [5,4]", &[n], &vm, &v.matmul(&mat)?)?;
    let dot: f64 = b[..k].iter().map(|x| x * x).sum();
    check_array("[5] @ [5]", &[], &[dot], &v.matmul(&v)?)
}

fn matmul_shape_errors(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0; 6], &[2, 3], DType::F32, ctx.device)?;
    expect_err("[2,3] @ [2,3]", "ShapeMismatch", x.matmul(&x), |e| {
        matches!(e, Error::ShapeMismatch { .. })
    })?;
    let s = r::array(&[1.0], &[], DType::F32, ctx.device)?;
    expect_err("0-d @ [2,3]", "an error", ad::matmul(&s, &x), |e| {
        !matches!(e, Error::Unsupported { .. })
    })?;
    Ok(())
}
