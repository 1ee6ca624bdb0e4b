//! The factorizations on stacks of pseudo-random matrices of several
//! sizes, square and rectangular, batched, with every flag: each result
//! checked by what it promises, against products and an LU determinant
//! computed here in f64, matrix by matrix. The small fixed matrices of
//! `factorize` check the special cases; these check that the kernels
//! hold at sizes where every loop runs, and that each matrix of a batch
//! lands in its own place.

use crate::case::{check, check_eq, Case, CaseCtx, Failure};
use crate::cases::complex::carr;
use crate::cases::factorize::{h, identity, mm, near as near_real, near_complex as near};
use crate::cases::fft::complex_values;
use crate::cases::linalg_ext::factorized;
use anydev_array::{self as ad, Array};
use anydev_core::DType;
use num_complex::Complex64 as C;

pub fn cases() -> Vec<Case> {
    let dtypes = [DType::F32, DType::F64, DType::C64, DType::C128];
    vec![
        Case::new("factorize::random_stacks_hold", random_stacks_hold)
            .dtypes(&dtypes)
            .asks_support_itself(),
        Case::new(
            "factorize::large_matrices_hold_or_are_refused",
            large_matrices_hold_or_are_refused,
        )
        .dtypes(&dtypes)
        .asks_support_itself(),
    ]
}

/// Values in [-1, 1) from a linear congruential generator: the same data
/// on every run and device.
fn noise(seed: u64, len: usize) -> Vec<f64> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// An array of `dtype` on the case's device with pseudo-random elements
/// (complex for complex dtypes), and its elements as stored.
fn random(ctx: &CaseCtx, shape: &[usize], seed: u64) -> Result<(Array, Vec<C>), Failure> {
    let len: usize = shape.iter().product();
    let re = noise(seed, len);
    let im = if ctx.dtype().is_complex() {
        noise(seed + 1000, len)
    } else {
        vec![0.0; len]
    };
    let values: Vec<C> = re.iter().zip(&im).map(|(&r, &i)| C::new(r, i)).collect();
    let x = match ctx.dtype() {
        d if d.is_complex() => carr(&values, shape, d, ctx.device)?,
        d => Array::from_slice(&re, shape, anydev_core::Device::cpu())?
            .astype(d)?
            .to_device(ctx.device)?,
    };
    let stored = elements(&x)?;
    Ok((x, stored))
}

/// An array's elements as complex numbers, real dtypes included.
fn elements(x: &Array) -> Result<Vec<C>, Failure> {
    if x.dtype().is_complex() {
        complex_values(x)
    } else {
        Ok(x.to_f64_vec()?.into_iter().map(C::from).collect())
    }
}

/// `x xᴴ + n I` for a stack of `n x n` matrices `x`: Hermitian positive
/// definite and well conditioned; with its elements.
fn positive_definite(x: &Array, n: usize) -> Result<(Array, Vec<C>), Failure> {
    let xh = ad::conj(x)?.matrix_transpose()?;
    let shift = ad::eye(n, None, 0, (x.dtype(), x.device()))?.multiply(n as f64)?;
    let hpd = ad::add(&ad::matmul(x, &xh)?, &shift)?;
    let stored = elements(&hpd)?;
    Ok((hpd, stored))
}

/// The determinant by LU with partial pivoting, in f64.
fn lu_det(a: &[C], n: usize) -> C {
    let mut m = a.to_vec();
    let mut det = C::from(1.0);
    for k in 0..n {
        let pivot = (k..n)
            .max_by(|&i, &j| m[i * n + k].norm().total_cmp(&m[j * n + k].norm()))
            .expect("k < n");
        if pivot != k {
            for j in 0..n {
                m.swap(k * n + j, pivot * n + j);
            }
            det = -det;
        }
        let d = m[k * n + k];
        det *= d;
        if d == C::from(0.0) {
            return det;
        }
        for i in k + 1..n {
            let l = m[i * n + k] / d;
            for j in k..n {
                let u = m[k * n + j];
                m[i * n + j] -= l * u;
            }
        }
    }
    det
}

/// Matrix `b` of a stack of `size`-element matrices.
fn at(v: &[C], b: usize, size: usize) -> &[C] {
    &v[b * size..(b + 1) * size]
}

fn random_stacks_hold(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let single = dtype.real_dtype() == DType::F32;
    let tol = if single { 5e-4 } else { 1e-10 };
    let (probe, _) = random(ctx, &[2, 2], 1)?;
    if factorized(dev, ad::det(&probe))?.is_none() {
        return Ok(());
    }
    for (batch, n) in [(vec![2, 3], 5), (vec![], 1), (vec![], 16), (vec![2], 9)] {
        let count: usize = batch.iter().product();
        let shape: Vec<usize> = batch.iter().copied().chain([n, n]).collect();
        let (x, xs) = random(ctx, &shape, n as u64)?;
        let what = |f: &str, b: usize| format!("{f} of matrix {b} of {shape:?}");
        // Well conditioned: x + n I; Hermitian positive definite: x xᴴ + n I.
        let well = ad::add(&x, &ad::eye(n, None, 0, (dtype, dev))?.multiply(n as f64)?)?;
        let ws = elements(&well)?;
        let (hpd, hs) = positive_definite(&x, n)?;
        let sq = n * n;
        let l = elements(&ad::cholesky(&hpd, false)?)?;
        let u = elements(&ad::cholesky(&hpd, true)?)?;
        let inverse = elements(&ad::inv(&well)?)?;
        let rhs_shape: Vec<usize> = batch.iter().copied().chain([n, 2]).collect();
        let (rhs, rs) = random(ctx, &rhs_shape, 77)?;
        let solved = elements(&ad::solve(&well, &rhs)?)?;
        let det = elements(&ad::det(&x)?)?;
        let (sign, log) = ad::slogdet(&x)?;
        let (sign, log) = (elements(&sign)?, log.to_f64_vec()?);
        let (values, vectors) = ad::eigh(&hpd)?;
        let (values, vectors) = (values.to_f64_vec()?, elements(&vectors)?);
        for b in 0..count {
            let (lb, ub, hb) = (at(&l, b, sq), at(&u, b, sq), at(&hs, b, sq));
            check(
                (0..sq).all(|ij| ij % n <= ij / n || lb[ij] == C::from(0.0)),
                what("cholesky", b),
                "lower triangular",
                format!("{lb:?}"),
            )?;
            near(&what("L Lᴴ", b), hb, &mm(lb, &h(lb, n, n), n, n, n), tol)?;
            near(&what("Uᴴ U", b), hb, &mm(&h(ub, n, n), ub, n, n, n), tol)?;
            let wb = at(&ws, b, sq);
            near(
                &what("x inv(x)", b),
                &identity(n),
                &mm(wb, at(&inverse, b, sq), n, n, n),
                tol,
            )?;
            near(
                &what("x solve(x, b)", b),
                at(&rs, b, n * 2),
                &mm(wb, at(&solved, b, n * 2), n, n, 2),
                tol,
            )?;
            let want = lu_det(at(&xs, b, sq), n);
            near(&what("det", b), &[want], &det[b..b + 1], tol)?;
            near(&what("slogdet's sign", b), &[want / want.norm()], &sign[b..b + 1], tol)?;
            near(
                &what("slogdet's log", b),
                &[C::from(want.norm().ln())],
                &[C::from(log[b])],
                tol,
            )?;
            let (vb, lam) = (at(&vectors, b, sq), &values[b * n..(b + 1) * n]);
            check(
                lam.windows(2).all(|w| w[0] <= w[1]),
                what("eigh", b),
                "ascending",
                format!("{lam:?}"),
            )?;
            let scaled: Vec<C> = (0..sq).map(|ij| vb[ij] * lam[ij % n]).collect();
            near(&what("x V = V Λ (eigh)", b), &scaled, &mm(hb, vb, n, n, n), tol)?;
            near(
                &what("Vᴴ V (eigh)", b),
                &identity(n),
                &mm(&h(vb, n, n), vb, n, n, n),
                tol,
            )?;
        }
        eig_holds(ctx, &x, &xs, &batch, n, tol)?;
    }
    for (m, n) in [(7, 4), (4, 7), (6, 6)] {
        for batch in [vec![], vec![3]] {
            rectangular_hold(ctx, &batch, m, n, tol)?;
        }
    }
    empty_and_zero_sized(ctx)?;
    extreme_scales_hold(ctx, tol)
}

/// The eigenvalues and singular values of `[[1, 2], [2, 1]]` (-1 and 3;
/// 3 and 1) and the eigenvalues of `[[2, 1, 1], [1, 2, 1], [1, 1, 2]]`
/// (1, 1 and 4, through `eig`'s reflections) times 2^±e, where the
/// squares of the entries overflow or underflow the dtype: they scale
/// exactly with the matrix.
fn extreme_scales_hold(ctx: &CaseCtx, tol: f64) -> Result<(), Failure> {
    let e = if ctx.dtype().real_dtype() == DType::F64 {
        600
    } else {
        80
    };
    for exp in [e, -e] {
        let scale = 2f64.powi(exp);
        let values = [1.0, 2.0, 2.0, 1.0].map(|v| v * scale);
        let x = Array::from_slice(&values, &[2, 2], anydev_core::Device::cpu())?
            .astype(ctx.dtype())?
            .to_device(ctx.device)?;
        let unscaled =
            |a: Array| -> Result<Vec<f64>, Failure> { Ok(a.to_f64_vec()?.into_iter().map(|v| v / scale).collect()) };
        let what = format!("eigvalsh of [[1, 2], [2, 1]] 2^{exp}");
        near_real(&what, &[-1.0, 3.0], &unscaled(ad::eigvalsh(&x)?)?, tol)?;
        let what = format!("svdvals of [[1, 2], [2, 1]] 2^{exp}");
        near_real(&what, &[3.0, 1.0], &unscaled(ad::svdvals(&x)?)?, tol)?;
        let complex = ctx.dtype().complex_dtype().expect("a float dtype");
        if ctx.runtime.capabilities(ctx.device)?.supports_dtype(complex) {
            let values = [2.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 2.0].map(|v| v * scale);
            let x = Array::from_slice(&values, &[3, 3], anydev_core::Device::cpu())?
                .astype(ctx.dtype())?
                .to_device(ctx.device)?;
            let lambda = elements(&ad::eigvals(&x)?)?;
            let mut real: Vec<f64> = lambda.iter().map(|l| l.re / scale).collect();
            real.sort_by(f64::total_cmp);
            let what = format!("eigvals of [[2, 1, 1], [1, 2, 1], [1, 1, 2]] 2^{exp}");
            near_real(&what, &[1.0, 1.0, 4.0], &real, tol * 4.0)?;
            let imag: Vec<f64> = lambda.iter().map(|l| l.im / scale).collect();
            near_real(&format!("{what}: imaginary parts"), &[0.0; 3], &imag, tol * 4.0)?;
        }
    }
    Ok(())
}

/// `eig` of a general matrix: `x v = λ v` with unit `v`, the eigenvalues
/// summing to the trace and multiplying to the determinant.
fn eig_holds(ctx: &CaseCtx, x: &Array, xs: &[C], batch: &[usize], n: usize, tol: f64) -> Result<(), Failure> {
    let complex = ctx.dtype().complex_dtype().expect("a float dtype");
    if !ctx.runtime.capabilities(ctx.device)?.supports_dtype(complex) {
        return Ok(());
    }
    let (lambda, vectors) = ad::eig(x)?;
    let (lambda, vectors) = (elements(&lambda)?, elements(&vectors)?);
    let sq = n * n;
    // Eigenvectors of a nonnormal matrix are as accurate as it is
    // conditioned: a looser bound in single precision.
    let tol = tol * 4.0;
    for b in 0..batch.iter().product() {
        let (a, v, l) = (at(xs, b, sq), at(&vectors, b, sq), &lambda[b * n..(b + 1) * n]);
        let what = |f: &str| format!("{f} of matrix {b} of {batch:?} x {n} x {n}");
        let scaled: Vec<C> = (0..sq).map(|ij| v[ij] * l[ij % n]).collect();
        near(&what("x V = V Λ (eig)"), &mm(a, v, n, n, n), &scaled, tol)?;
        let norms: Vec<C> = (0..n)
            .map(|j| C::from((0..n).map(|i| v[i * n + j].norm_sqr()).sum::<f64>().sqrt()))
            .collect();
        near(&what("eigenvector norms"), &vec![C::from(1.0); n], &norms, tol)?;
        let trace: C = (0..n).map(|i| a[i * n + i]).sum();
        near(&what("sum of eigenvalues"), &[trace], &[l.iter().sum()], tol * n as f64)?;
        let product: C = l.iter().product();
        near(
            &what("product of eigenvalues"),
            &[lu_det(a, n)],
            &[product],
            tol * n as f64,
        )?;
    }
    Ok(())
}

/// `svd` and `qr` of `m x n` matrices, thin and full, and of a rank-2
/// product: orthonormal factors, descending singular values, the
/// products giving `x` back, `R` upper triangular.
fn rectangular_hold(ctx: &CaseCtx, batch: &[usize], m: usize, n: usize, tol: f64) -> Result<(), Failure> {
    let count: usize = batch.iter().product();
    let shape: Vec<usize> = batch.iter().copied().chain([m, n]).collect();
    let (x, xs) = random(ctx, &shape, (m * 10 + n) as u64)?;
    let k = m.min(n);
    for full in [false, true] {
        let (u, s, vh) = ad::svd(&x, full)?;
        let (uc, vr) = if full { (m, n) } else { (k, k) };
        check_eq(
            format!("svd shapes of {shape:?}, full {full}"),
            (m, uc, vr, n),
            (
                u.shape()[batch.len()],
                u.shape()[batch.len() + 1],
                vh.shape()[batch.len()],
                vh.shape()[batch.len() + 1],
            ),
        )?;
        let (u, s, vh) = (elements(&u)?, s.to_f64_vec()?, elements(&vh)?);
        for b in 0..count {
            let what = |f: &str| format!("{f} of matrix {b} of {shape:?}, full {full}");
            let (ub, sb, vb) = (at(&u, b, m * uc), &s[b * k..(b + 1) * k], at(&vh, b, vr * n));
            check(
                sb.windows(2).all(|w| w[0] >= w[1]) && sb.iter().all(|&v| v >= 0.0),
                what("singular values"),
                "descending, not negative",
                format!("{sb:?}"),
            )?;
            near(&what("Uᴴ U"), &identity(uc), &mm(&h(ub, m, uc), ub, uc, m, uc), tol)?;
            near(&what("Vh Vhᴴ"), &identity(vr), &mm(vb, &h(vb, vr, n), vr, n, vr), tol)?;
            // U[:, :k] diag(s) Vh[:k, :].
            let us: Vec<C> = (0..m * k).map(|ij| ub[ij / k * uc + ij % k] * sb[ij % k]).collect();
            near(&what("U S Vh"), at(&xs, b, m * n), &mm(&us, &vb[..k * n], m, k, n), tol)?;
        }
        let (q, r) = ad::qr(&x, full)?;
        let qc = if full { m } else { k };
        let (q, r) = (elements(&q)?, elements(&r)?);
        for b in 0..count {
            let what = |f: &str| format!("{f} of matrix {b} of {shape:?}, complete {full}");
            let (qb, rb) = (at(&q, b, m * qc), at(&r, b, qc * n));
            check(
                (0..qc * n).all(|ij| ij % n >= ij / n || rb[ij] == C::from(0.0)),
                what("R"),
                "upper triangular",
                format!("{rb:?}"),
            )?;
            near(&what("Qᴴ Q"), &identity(qc), &mm(&h(qb, m, qc), qb, qc, m, qc), tol)?;
            near(&what("Q R"), at(&xs, b, m * n), &mm(qb, rb, m, qc, n), tol)?;
        }
    }
    // Rank 2: the product of m x 2 and 2 x n factors.
    let left = random(ctx, &[m, 2], 5)?.0;
    let right = random(ctx, &[2, n], 6)?.0;
    let low = ad::matmul(&left, &right)?;
    let rank = ad::matrix_rank(&low, None)?.to_f64_vec()?;
    near(
        &format!("matrix_rank of a rank-2 {m} x {n} product"),
        &[C::from(2.0)],
        &[C::from(rank[0])],
        0.0,
    )?;
    let (u, _, _) = ad::svd(&low, false)?;
    let u = elements(&u)?;
    near(
        &format!("Uᴴ U of a rank-2 {m} x {n} product"),
        &identity(k),
        &mm(&h(&u, m, k), &u, k, m, k),
        tol,
    )?;
    Ok(())
}

/// A batch of no matrices gives empty results; the determinant of a
/// 0 x 0 matrix is 1, its log-determinant 0.
fn empty_and_zero_sized(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let none = ad::zeros(&[0, 3, 3], (dtype, dev))?;
    check_eq("inv of no matrices", &[0, 3, 3][..], ad::inv(&none)?.shape())?;
    check_eq("svdvals of no matrices", &[0, 3][..], ad::svdvals(&none)?.shape())?;
    let nothing = ad::zeros(&[0, 0], (dtype, dev))?;
    near(
        "det of a 0 x 0 matrix",
        &[C::from(1.0)],
        &elements(&ad::det(&nothing)?)?,
        0.0,
    )?;
    let (sign, log) = ad::slogdet(&nothing)?;
    near(
        "slogdet sign of a 0 x 0 matrix",
        &[C::from(1.0)],
        &elements(&sign)?,
        0.0,
    )?;
    near("slogdet log of a 0 x 0 matrix", &[C::from(0.0)], &elements(&log)?, 0.0)?;
    // Matrices with no rows or columns, alone and in batches: every
    // factorization gives results of the promised shapes, never an error.
    let empties = ad::zeros(&[2, 0, 0], (dtype, dev))?;
    check_eq(
        "cholesky of 0 x 0s",
        &[2, 0, 0][..],
        ad::cholesky(&empties, false)?.shape(),
    )?;
    let (w, v) = ad::eigh(&empties)?;
    check_eq("eigh of 0 x 0s", (&[2, 0][..], &[2, 0, 0][..]), (w.shape(), v.shape()))?;
    check_eq("eigvalsh of a 0 x 0", &[0][..], ad::eigvalsh(&nothing)?.shape())?;
    check_eq("inv of 0 x 0s", &[2, 0, 0][..], ad::inv(&empties)?.shape())?;
    check_eq(
        "solve of 0 x 0s",
        &[2, 0, 0][..],
        ad::solve(&empties, &empties)?.shape(),
    )?;
    // The right-hand sides broadcast over the batch: an empty view.
    let column = ad::zeros(&[0, 1], (dtype, dev))?;
    check_eq(
        "solve, broadcast",
        &[2, 0, 1][..],
        ad::solve(&empties, &column)?.shape(),
    )?;
    for shape in [[2, 3, 0], [2, 0, 3], [2, 0, 0]] {
        let k = 0; // min(rows, columns)
        let x = ad::zeros(&shape, (dtype, dev))?;
        let (q, r) = ad::qr(&x, false)?;
        check_eq(
            "qr of an empty matrix",
            (&[2, shape[1], k][..], &[2, k, shape[2]][..]),
            (q.shape(), r.shape()),
        )?;
        let (u, s, vh) = ad::svd(&x, false)?;
        check_eq(
            "svd of an empty matrix",
            (&[2, shape[1], k][..], &[2, k][..], &[2, k, shape[2]][..]),
            (u.shape(), s.shape(), vh.shape()),
        )?;
        let pinv = ad::pinv(&x, None)?;
        check_eq("pinv of an empty matrix", &[2, shape[2], shape[1]][..], pinv.shape())?;
        let rank = ad::matrix_rank(&x, None)?.to_device(anydev_core::Device::cpu())?;
        check_eq("matrix_rank of an empty matrix", vec![0i64; 2], rank.to_vec::<i64>()?)?;
    }
    Ok(())
}

/// A 48 x 48 matrix: `inv` and `eigh` hold, or the device refuses the
/// size as `FeatureUnsupported` naming itself (a wgpu adapter whose
/// shader compiler caps the loop iterations of an invocation, as
/// llvmpipe does); never a result cut short.
fn large_matrices_hold_or_are_refused(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let n = 48;
    let (x, _) = random(ctx, &[n, n], 48)?;
    if factorized(dev, ad::det(&x))?.is_none() {
        return Ok(());
    }
    let (hpd, hs) = positive_definite(&x, n)?;
    let tol = if dtype.real_dtype() == DType::F32 { 1e-3 } else { 1e-10 };
    let refused = |what: &str, e: anydev_core::Error| match e {
        anydev_core::Error::FeatureUnsupported { device, .. } if device == dev => Ok(()),
        e => Err(Failure::new(
            what,
            "a result, or FeatureUnsupported naming the device",
            format!("{e:?}"),
        )),
    };
    match ad::inv(&hpd) {
        Ok(inverse) => near(
            "x inv(x), 48 x 48",
            &identity(n),
            &mm(&hs, &elements(&inverse)?, n, n, n),
            tol,
        )?,
        Err(e) => refused("inv of 48 x 48", e)?,
    }
    match ad::eigh(&hpd) {
        Ok((values, vectors)) => {
            let (values, v) = (values.to_f64_vec()?, elements(&vectors)?);
            let scaled: Vec<C> = (0..n * n).map(|ij| v[ij] * values[ij % n]).collect();
            near("x V = V Λ, 48 x 48", &scaled, &mm(&hs, &v, n, n, n), tol)
        }
        Err(e) => refused("eigh of 48 x 48", e),
    }
}
