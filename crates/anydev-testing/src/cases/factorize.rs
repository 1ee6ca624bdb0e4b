//! The `linalg` functions that need a factorization, checked by what they
//! promise (`L Lᵀ = x`, `x · solve(x, b) = b`, `U S Vh = x`, `Q R = x`,
//! `x v = λ v`, ...) with plain loops, where the device's kind has a
//! kernel; elsewhere each is `NoKernel` naming the device and `cpu`.

use crate::case::{check, Case, CaseCtx, Failure};
use crate::cases::linalg_ext::factorized;
use crate::reference::{self as r};
use anydev_array::{self as ad, Array};
use anydev_core::{DType, Error};

pub fn cases() -> Vec<Case> {
    // What runs depends on whether the device's kind has the kernels.
    vec![Case::new("factorize::properties_hold", properties_hold)
        .dtypes(&[DType::F32, DType::F64])
        .asks_support_itself()]
}

/// `a (n x k) @ b (k x m)`, row-major.
fn mm(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
    (0..n * m)
        .map(|ij| (0..k).map(|p| a[ij / m * k + p] * b[p * m + ij % m]).sum())
        .collect()
}

fn t(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols).map(|ij| a[(ij % rows) * cols + ij / rows]).collect()
}

/// Within `tol` of each other, relative to the largest magnitude.
fn near(what: &str, want: &[f64], got: &[f64], tol: f64) -> Result<(), Failure> {
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let worst = want.iter().zip(got).map(|(w, g)| (w - g).abs()).fold(0.0, f64::max);
    check(
        want.len() == got.len() && worst <= tol * scale,
        what,
        format!("{want:?} (within {tol} relative)"),
        format!("{got:?}"),
    )
}

fn properties_hold(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let tol = if dtype == DType::F32 { 1e-4 } else { 1e-10 };
    // A symmetric positive-definite 3 x 3 matrix, and a general 3 x 2 one.
    let spd = [4.0, 2.0, 0.6, 2.0, 5.0, 1.0, 0.6, 1.0, 3.0];
    let general = [1.0, 2.0, 3.0, -1.0, 0.5, 4.0];
    let x = r::array(&spd, &[3, 3], dtype, dev)?;
    let Some(l) = factorized(dev, ad::cholesky(&x, false))? else {
        // No kernel for this kind: every other function says so too.
        for result in [ad::inv(&x), ad::det(&x), ad::svdvals(&x), ad::eigvalsh(&x)] {
            factorized(dev, result)?;
        }
        return Ok(());
    };
    let l = l.to_f64_vec()?;
    check(
        l[1] == 0.0 && l[2] == 0.0 && l[5] == 0.0,
        "cholesky is lower triangular",
        "zeros above",
        format!("{l:?}"),
    )?;
    near("L Lᵀ = x", &spd, &mm(&l, &t(&l, 3, 3), 3, 3, 3), tol)?;
    let u = ad::cholesky(&x, true)?.to_f64_vec()?;
    near("Uᵀ U = x", &spd, &mm(&t(&u, 3, 3), &u, 3, 3, 3), tol)?;
    let inverse = ad::inv(&x)?.to_f64_vec()?;
    near(
        "x inv(x) = I",
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        &mm(&spd, &inverse, 3, 3, 3),
        tol,
    )?;
    let b = [1.0, -2.0, 0.5];
    let solved = ad::solve(&x, &r::array(&b, &[3], dtype, dev)?)?;
    near("x solve(x, b) = b", &b, &mm(&spd, &solved.to_f64_vec()?, 3, 3, 1), tol)?;
    // A batch of two right-hand sides each for a batch of one matrix.
    let rhs = r::array(
        &[1.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 0.0, 1.0, 0.0],
        &[2, 3, 2],
        dtype,
        dev,
    )?;
    let many = ad::solve(&x.expand_dims(0)?, &rhs)?;
    check(
        many.shape() == [2, 3, 2],
        "solve broadcasts batches",
        "[2, 3, 2]",
        format!("{:?}", many.shape()),
    )?;
    let det = spd[0] * (spd[4] * spd[8] - spd[5] * spd[7]) - spd[1] * (spd[3] * spd[8] - spd[5] * spd[6])
        + spd[2] * (spd[3] * spd[7] - spd[4] * spd[6]);
    near("det", &[det], &ad::det(&x)?.to_f64_vec()?, tol)?;
    let (sign, log) = ad::slogdet(&x.negative()?)?;
    near("slogdet sign of -x", &[-1.0], &sign.to_f64_vec()?, 0.0)?;
    near("slogdet log of -x", &[det.ln()], &log.to_f64_vec()?, tol)?;
    let (values, vectors) = ad::eigh(&x)?;
    let (values, vectors) = (values.to_f64_vec()?, vectors.to_f64_vec()?);
    check(
        values.windows(2).all(|w| w[0] <= w[1]),
        "eigh ascending",
        "ascending",
        format!("{values:?}"),
    )?;
    let scaled: Vec<f64> = (0..9).map(|ij| vectors[ij] * values[ij % 3]).collect();
    near("x V = V diag(λ)", &scaled, &mm(&spd, &vectors, 3, 3, 3), tol)?;
    let g = r::array(&general, &[3, 2], dtype, dev)?;
    let (u, s, vh) = ad::svd(&g, false)?;
    let (u, s, vh) = (u.to_f64_vec()?, s.to_f64_vec()?, vh.to_f64_vec()?);
    check(
        s.len() == 2 && s[0] >= s[1] && s[1] >= 0.0,
        "singular values descending",
        "2, descending",
        format!("{s:?}"),
    )?;
    let us: Vec<f64> = (0..6).map(|ij| u[ij] * s[ij % 2]).collect();
    near("U S Vh = x", &general, &mm(&us, &vh, 3, 2, 2), tol)?;
    let full = ad::svd(&g, true)?;
    check(
        full.0.shape() == [3, 3] && full.2.shape() == [2, 2],
        "full svd shapes",
        "[3, 3], [2, 2]",
        format!("{:?}", full.0.shape()),
    )?;
    let (q, rr) = ad::qr(&g, false)?;
    let (q, rr) = (q.to_f64_vec()?, rr.to_f64_vec()?);
    near("Q R = x", &general, &mm(&q, &rr, 3, 2, 2), tol)?;
    near("Qᵀ Q = I", &[1.0, 0.0, 0.0, 1.0], &mm(&t(&q, 3, 2), &q, 2, 3, 2), tol)?;
    // pinv of a full-rank tall matrix is its left inverse; a rank-1 one has rank 1.
    let p = ad::pinv(&g, None)?.to_f64_vec()?;
    near("pinv(x) x = I", &[1.0, 0.0, 0.0, 1.0], &mm(&p, &general, 2, 3, 2), tol)?;
    let rank_one = r::array(&[1.0, 2.0, 2.0, 4.0, 3.0, 6.0], &[3, 2], dtype, dev)?;
    near(
        "matrix_rank",
        &[2.0, 1.0],
        &[
            ad::matrix_rank(&g, None)?.to_f64_vec()?[0],
            ad::matrix_rank(&rank_one, None)?.to_f64_vec()?[0],
        ],
        0.0,
    )?;
    // Bad input is an error before or instead of a wrong number.
    let singular = r::array(&[1.0, 2.0, 2.0, 4.0], &[2, 2], dtype, dev)?;
    let refusals: [(&str, anydev_core::Result<Array>); 4] = [
        ("inv of a singular matrix", ad::inv(&singular)),
        ("cholesky of an indefinite matrix", ad::cholesky(&x.negative()?, false)),
        ("inv of a 3 x 2 matrix", ad::inv(&g)),
        (
            "solve with a mismatched b",
            ad::solve(&x, &r::array(&[1.0, 2.0], &[2], dtype, dev)?),
        ),
    ];
    for (what, result) in refusals {
        check(
            matches!(result, Err(Error::InvalidArgument { .. } | Error::ShapeMismatch { .. })),
            what,
            "an error",
            format!("{result:?}"),
        )?;
    }
    let ints = r::array(&[1.0, 0.0, 0.0, 1.0], &[2, 2], DType::I32, dev)?;
    check(
        matches!(ad::inv(&ints), Err(Error::InvalidDType { .. })),
        "inv of integers",
        "InvalidDType",
        "another result",
    )
}
