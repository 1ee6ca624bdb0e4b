//! The `linalg` functions that need a factorization, checked by what they
//! promise (`L Lᴴ = x`, `x · solve(x, b) = b`, `U S Vh = x`, `Q R = x`,
//! `x v = λ v`, ...) with plain loops, for real and complex input, where
//! the device's kind has a kernel; elsewhere each is `NoKernel` naming the
//! device and `cpu`.

use crate::case::{check, check_eq, Case, CaseCtx, Failure};
use crate::cases::complex::carr;
use crate::cases::fft::complex_values as values;
use crate::cases::linalg_ext::factorized;
use crate::reference::{self as r};
use anydev_array::{self as ad, Array, NormOrd};
use anydev_core::{DType, Device, Error};
use num_complex::Complex64 as C;
use std::iter::Sum;
use std::ops::Mul;

pub fn cases() -> Vec<Case> {
    // What runs depends on whether the device's kind has the kernels.
    vec![
        Case::new("factorize::properties_hold", properties_hold)
            .dtypes(&[DType::F32, DType::F64])
            .asks_support_itself(),
        Case::new("factorize::complex_properties_hold", complex_properties_hold)
            .dtypes(&[DType::C64, DType::C128])
            .asks_support_itself(),
        Case::new("factorize::eig_pairs_hold", eig_pairs_hold)
            .dtypes(&[DType::F32, DType::F64, DType::C64, DType::C128])
            .asks_support_itself(),
    ]
}

/// `a (n x k) @ b (k x m)`, row-major.
pub(crate) fn mm<T: Copy + Mul<Output = T> + Sum>(a: &[T], b: &[T], n: usize, k: usize, m: usize) -> Vec<T> {
    (0..n * m)
        .map(|ij| (0..k).map(|p| a[ij / m * k + p] * b[p * m + ij % m]).sum())
        .collect()
}

fn t<T: Copy>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..rows * cols).map(|ij| a[(ij % rows) * cols + ij / rows]).collect()
}

/// The conjugate transpose of `a (rows x cols)`.
pub(crate) fn h(a: &[C], rows: usize, cols: usize) -> Vec<C> {
    t(a, rows, cols).into_iter().map(|z| z.conj()).collect()
}

/// Real and imaginary parts, interleaved, to compare with [`near`].
fn parts(v: &[C]) -> Vec<f64> {
    v.iter().flat_map(|z| [z.re, z.im]).collect()
}

fn ascending(what: &str, v: &[f64]) -> Result<(), Failure> {
    check(v.windows(2).all(|w| w[0] <= w[1]), what, "ascending", format!("{v:?}"))
}

/// The `n x n` identity, complex.
pub(crate) fn identity(n: usize) -> Vec<C> {
    (0..n * n).map(|ij| C::from(f64::from(ij % (n + 1) == 0))).collect()
}

/// The determinant of a 3 x 3 matrix by cofactors.
fn det3<T: Copy + Mul<Output = T> + std::ops::Sub<Output = T> + std::ops::Add<Output = T>>(m: &[T]) -> T {
    m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])
}

/// Within `tol` of each other, relative to the largest magnitude.
pub(crate) fn near(what: &str, want: &[f64], got: &[f64], tol: f64) -> Result<(), Failure> {
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let worst = want.iter().zip(got).map(|(w, g)| (w - g).abs()).fold(0.0, f64::max);
    check(
        want.len() == got.len() && worst <= tol * scale,
        what,
        format!("{want:?} (within {tol} relative)"),
        format!("{got:?}"),
    )
}

/// [`near`] for complex numbers, part by part.
pub(crate) fn near_complex(what: &str, want: &[C], got: &[C], tol: f64) -> Result<(), Failure> {
    near(what, &parts(want), &parts(got), tol)
}

/// `cholesky(x)` where the device's kind has the kernels; where it has
/// none, `None` once every other function has said so too.
fn cholesky_where_kernels(dev: Device, x: &Array) -> Result<Option<Array>, Failure> {
    let l = factorized(dev, ad::cholesky(x, false))?;
    if l.is_none() {
        for result in [ad::inv(x), ad::det(x), ad::svdvals(x), ad::eigvalsh(x), ad::eigvals(x)] {
            factorized(dev, result)?;
        }
    }
    Ok(l)
}

fn properties_hold(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let tol = if dtype == DType::F32 { 1e-4 } else { 1e-10 };
    // A symmetric positive-definite 3 x 3 matrix, and a general 3 x 2 one.
    let spd = [4.0, 2.0, 0.6, 2.0, 5.0, 1.0, 0.6, 1.0, 3.0];
    let general = [1.0, 2.0, 3.0, -1.0, 0.5, 4.0];
    let x = r::array(&spd, &[3, 3], dtype, dev)?;
    let Some(l) = cholesky_where_kernels(dev, &x)? else {
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
    let det = det3(&spd);
    near("det", &[det], &ad::det(&x)?.to_f64_vec()?, tol)?;
    let (sign, log) = ad::slogdet(&x.negative()?)?;
    near("slogdet sign of -x", &[-1.0], &sign.to_f64_vec()?, 0.0)?;
    near("slogdet log of -x", &[det.ln()], &log.to_f64_vec()?, tol)?;
    let (values, vectors) = ad::eigh(&x)?;
    let (values, vectors) = (values.to_f64_vec()?, vectors.to_f64_vec()?);
    ascending("eigh's eigenvalues", &values)?;
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
    // An array rtol: one cutoff per matrix, broadcast over the stack.
    // g's singular values are about 4.59 and 3.19 (ratio 0.69).
    let pair = ad::stack(&[&g, &g], 0)?;
    let rtols = r::array(&[0.5, 0.9], &[2], dtype, dev)?;
    let ranks = ad::matrix_rank(&pair, &rtols)?.to_f64_vec()?;
    near("matrix_rank, rtol per matrix", &[2.0, 1.0], &ranks, 0.0)?;
    let one_rtol = r::array(&[0.9], &[1], dtype, dev)?;
    let ranks = ad::matrix_rank(&pair, &one_rtol)?.to_f64_vec()?;
    near("matrix_rank, rtol broadcast", &[1.0, 1.0], &ranks, 0.0)?;
    let per_matrix = ad::pinv(&pair, &rtols)?.to_f64_vec()?;
    let each = [ad::pinv(&g, 0.5)?.to_f64_vec()?, ad::pinv(&g, 0.9)?.to_f64_vec()?].concat();
    near("pinv, rtol per matrix", &each, &per_matrix, tol)?;
    let three = r::array(&[0.1, 0.2, 0.3], &[3], dtype, dev)?;
    check(
        matches!(ad::pinv(&pair, &three), Err(Error::ShapeMismatch { .. })),
        "pinv with an rtol of 3 for a stack of 2",
        "ShapeMismatch",
        "another result",
    )?;
    let int_rtol = r::array(&[1.0, 1.0], &[2], DType::I32, dev)?;
    check(
        matches!(ad::matrix_rank(&pair, &int_rtol), Err(Error::InvalidDType { .. })),
        "matrix_rank with an integer rtol",
        "InvalidDType",
        "another result",
    )?;
    // solve promotes its operands: f64 with f32 solves in f64.
    if dtype == DType::F64 {
        let narrow_b = r::array(&b, &[3], DType::F32, dev)?;
        let narrow_x = x.astype(DType::F32)?;
        for solved in [
            ad::solve(&x, &narrow_b)?,
            ad::solve(&narrow_x, &r::array(&b, &[3], dtype, dev)?)?,
        ] {
            check_eq("solve of f64 and f32", DType::F64, solved.dtype())?;
            near(
                "x solve(x, b) = b, mixed",
                &b,
                &mm(&spd, &solved.to_f64_vec()?, 3, 3, 1),
                1e-6,
            )?;
        }
    }
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

/// The complex counterparts of the real checks: Hermitian input to
/// `cholesky` and `eigh`, conjugate transposes in `svd` and `pinv`, real
/// singular values, eigenvalues and log-determinants, a complex sign.
fn complex_properties_hold(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let real = dtype.real_dtype();
    let tol = if dtype == DType::C64 { 1e-4 } else { 1e-10 };
    let c = C::new;
    // Hermitian and diagonally dominant, so positive definite.
    let hpd = [
        c(4.0, 0.0),
        c(1.0, 1.0),
        c(0.5, -0.5),
        c(1.0, -1.0),
        c(5.0, 0.0),
        c(0.0, 1.0),
        c(0.5, 0.5),
        c(0.0, -1.0),
        c(3.0, 0.0),
    ];
    let general = [
        c(1.0, 1.0),
        c(2.0, 0.0),
        c(0.0, -1.0),
        c(0.5, 2.0),
        c(3.0, 0.0),
        c(-1.0, 1.0),
    ];
    let x = carr(&hpd, &[3, 3], dtype, dev)?;
    let Some(l) = cholesky_where_kernels(dev, &x)? else {
        return Ok(());
    };
    let l = values(&l)?;
    check(
        [1, 2, 5].iter().all(|&i| l[i] == C::from(0.0)),
        "cholesky is lower triangular",
        "zeros above",
        format!("{l:?}"),
    )?;
    let near_c = |what: &str, want: &[C], got: &[C]| near_complex(what, want, got, tol);
    near_c("L Lᴴ = x", &hpd, &mm(&l, &h(&l, 3, 3), 3, 3, 3))?;
    let u = values(&ad::cholesky(&x, true)?)?;
    near_c("Uᴴ U = x", &hpd, &mm(&h(&u, 3, 3), &u, 3, 3, 3))?;
    near_c(
        "x inv(x) = I",
        &identity(3),
        &mm(&hpd, &values(&ad::inv(&x)?)?, 3, 3, 3),
    )?;
    let b = [c(1.0, -1.0), c(-2.0, 0.5), c(0.0, 3.0)];
    let solved = values(&ad::solve(&x, &carr(&b, &[3], dtype, dev)?)?)?;
    near_c("x solve(x, b) = b", &b, &mm(&hpd, &solved, 3, 3, 1))?;
    // A real matrix with a complex right-hand side solves in complex.
    let real_x = r::array(&[4.0, 1.0, 0.0, 1.0, 5.0, 1.0, 0.0, 1.0, 3.0], &[3, 3], real, dev)?;
    let solved = ad::solve(&real_x, &carr(&b, &[3], dtype, dev)?)?;
    check_eq("solve of a real and a complex array", dtype, solved.dtype())?;
    let real_c: Vec<C> = real_x.to_f64_vec()?.into_iter().map(C::from).collect();
    near_c(
        "x solve(x, b) = b, x real",
        &b,
        &mm(&real_c, &values(&solved)?, 3, 3, 1),
    )?;
    // A general square matrix: its determinant, sign and log magnitude.
    let square = [
        c(1.0, 1.0),
        c(2.0, 0.0),
        c(0.0, -1.0),
        c(0.5, 0.0),
        c(-1.0, 2.0),
        c(1.0, 0.0),
        c(3.0, 0.0),
        c(0.0, 1.0),
        c(2.0, -1.0),
    ];
    let s3 = carr(&square, &[3, 3], dtype, dev)?;
    let det = det3(&square);
    near_c("det", &[det], &values(&ad::det(&s3)?)?)?;
    let (sign, log) = ad::slogdet(&s3)?;
    check_eq("slogdet's logabsdet is real", real, log.dtype())?;
    near_c("slogdet sign", &[det / det.norm()], &values(&sign)?)?;
    near("slogdet log", &[det.norm().ln()], &log.to_f64_vec()?, tol)?;
    let (eigenvalues, vectors) = ad::eigh(&x)?;
    check_eq("eigh's eigenvalues are real", real, eigenvalues.dtype())?;
    let (eigenvalues, vectors) = (eigenvalues.to_f64_vec()?, values(&vectors)?);
    ascending("eigh's eigenvalues", &eigenvalues)?;
    let scaled: Vec<C> = (0..9).map(|ij| vectors[ij] * eigenvalues[ij % 3]).collect();
    near_c("x V = V diag(λ)", &scaled, &mm(&hpd, &vectors, 3, 3, 3))?;
    let g = carr(&general, &[3, 2], dtype, dev)?;
    let (u, s, vh) = ad::svd(&g, false)?;
    check_eq("singular values are real", real, s.dtype())?;
    let (u, s, vh) = (values(&u)?, s.to_f64_vec()?, values(&vh)?);
    let us: Vec<C> = (0..6).map(|ij| u[ij] * s[ij % 2]).collect();
    near_c("U S Vh = x", &general, &mm(&us, &vh, 3, 2, 2))?;
    let (q, rr) = ad::qr(&g, false)?;
    let (q, rr) = (values(&q)?, values(&rr)?);
    near_c("Q R = x", &general, &mm(&q, &rr, 3, 2, 2))?;
    near_c("Qᴴ Q = I", &identity(2), &mm(&h(&q, 3, 2), &q, 2, 3, 2))?;
    let p = values(&ad::pinv(&g, None)?)?;
    near_c("pinv(x) x = I", &identity(2), &mm(&p, &general, 2, 3, 2))?;
    near("matrix_rank", &[2.0], &ad::matrix_rank(&g, None)?.to_f64_vec()?, 0.0)?;
    let nuclear = ad::matrix_norm(&g, false, NormOrd::Nuc)?;
    check_eq("the nuclear norm is real", real, nuclear.dtype())?;
    near("nuclear norm", &[s[0] + s[1]], &nuclear.to_f64_vec()?, tol)?;
    // Widths faer does not factorize are refused, not misread.
    check(
        matches!(
            ad::inv(&ad::real(&x)?.astype(DType::F16)?),
            Err(Error::InvalidDType { .. })
        ),
        "inv of f16",
        "InvalidDType",
        "another result",
    )
}

/// Fails unless each of `want` is within `tol` (relative, at least
/// absolute) of its own element of `got`, in any order: the standard
/// leaves the order of `eig`'s eigenvalues open.
fn same_set(what: &str, want: &[C], got: &[C], tol: f64) -> Result<(), Failure> {
    let mut left: Vec<C> = got.to_vec();
    for w in want {
        let nearest = (0..left.len()).min_by(|&i, &j| (left[i] - w).norm().total_cmp(&(left[j] - w).norm()));
        match nearest {
            Some(i) if (left[i] - w).norm() <= tol * w.norm().max(1.0) => {
                left.swap_remove(i);
            }
            _ => return Err(Failure::new(what, format!("{want:?} in any order"), format!("{got:?}"))),
        }
    }
    Ok(())
}

/// A matrix whose eigenvalues are known: the companion matrix of
/// `x⁴ - x³ + x² + 9x - 10 = (x - 1)(x + 2)(x² - 2x + 5)` for real dtypes,
/// of `x³ - (1 + 2i)x² - (3 - 3i)x + 2 + 2i = (x - i)(x - 2)(x + 1 - i)`
/// for complex ones, and its eigenvalues.
fn companion(dtype: DType, device: Device) -> Result<(Array, Vec<C>, usize), Failure> {
    let c = C::new;
    if dtype.is_complex() {
        let z = C::from(0.0);
        let one = C::from(1.0);
        let m = [c(1.0, 2.0), c(3.0, -3.0), c(-2.0, -2.0), one, z, z, z, one, z];
        let want = vec![c(0.0, 1.0), c(2.0, 0.0), c(-1.0, 1.0)];
        return Ok((carr(&m, &[3, 3], dtype, device)?, want, 3));
    }
    let mut m = vec![0.0; 16];
    m[..4].copy_from_slice(&[1.0, -1.0, -9.0, 10.0]);
    for i in 1..4 {
        m[i * 4 + i - 1] = 1.0;
    }
    let want = vec![c(1.0, 0.0), c(-2.0, 0.0), c(1.0, 2.0), c(1.0, -2.0)];
    Ok((r::array(&m, &[4, 4], dtype, device)?, want, 4))
}

/// `eig` and `eigvals` of a general matrix and its transpose (one batch):
/// complex results, `x v = λ v` with `|v| = 1` for each pair, the known
/// eigenvalues in any order, `eigvals` equal to `eig`'s eigenvalues, and
/// a real matrix's conjugate pairs adjacent, positive imaginary part first.
fn eig_pairs_hold(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let tol = if dtype.real_dtype() == DType::F32 { 1e-4 } else { 1e-10 };
    let (a, want, n) = companion(dtype, dev)?;
    let complex = dtype.complex_dtype().expect("a float dtype");
    if !ctx.runtime.capabilities(dev)?.supports_dtype(complex) {
        // f64 input on a device without c128: the results' dtype is refused.
        return match ad::eigvals(&a) {
            Err(Error::UnsupportedDType { dtype: refused, .. }) if refused == complex => Ok(()),
            Err(Error::NoKernel { .. }) => factorized(dev, ad::eigvals(&a)).map(drop),
            got => Err(Failure::new(
                format!("eigvals of {dtype}"),
                format!("UnsupportedDType {complex}: the device does not hold it"),
                format!("{:?}", got.map(|y| y.dtype())),
            )),
        };
    }
    if factorized(dev, ad::eigvals(&a))?.is_none() {
        factorized(dev, ad::eig(&a).map(|(values, _)| values))?;
        return Ok(());
    }
    let batch = ad::stack(&[&a, &a.matrix_transpose()?], 0)?;
    let eigenvalues = ad::eigvals(&batch)?;
    let (lambda, vectors) = ad::eig(&batch)?;
    check_eq("eig's dtypes", (complex, complex), (lambda.dtype(), vectors.dtype()))?;
    check_eq(
        "eig's shapes",
        (&[2, n][..], &[2, n, n][..]),
        (lambda.shape(), vectors.shape()),
    )?;
    let (lambda, vectors) = (values(&lambda)?, values(&vectors)?);
    check_eq("eigvals = eig's eigenvalues", &lambda, &values(&eigenvalues)?)?;
    let matrices = values(&batch.astype(complex)?)?;
    for b in 0..2 {
        let (m, l) = (&matrices[b * n * n..(b + 1) * n * n], &lambda[b * n..(b + 1) * n]);
        same_set(&format!("eigenvalues of matrix {b}"), &want, l, tol)?;
        let v = &vectors[b * n * n..(b + 1) * n * n];
        let scaled: Vec<C> = (0..n * n).map(|ij| v[ij] * l[ij % n]).collect();
        near(
            &format!("x V = V diag(λ) for matrix {b}"),
            &parts(&scaled),
            &parts(&mm(m, v, n, n, n)),
            tol,
        )?;
        let norms: Vec<f64> = (0..n)
            .map(|j| (0..n).map(|i| v[i * n + j].norm_sqr()).sum::<f64>().sqrt())
            .collect();
        near("eigenvectors have unit norm", &vec![1.0; n], &norms, tol)?;
        if !dtype.is_complex() {
            let pairs = (0..n)
                .filter(|&j| l[j].im > tol)
                .all(|j| j + 1 < n && (l[j + 1] - l[j].conj()).norm() <= tol);
            check(
                pairs,
                "conjugate pairs adjacent, positive first",
                "λ, conj(λ)",
                format!("{l:?}"),
            )?;
        }
    }
    Ok(())
}
