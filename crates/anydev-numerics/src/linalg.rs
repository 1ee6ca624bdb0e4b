//! The factorizations of the `linalg` extension ops, faer's, over every
//! matrix of a row-major batch: Cholesky, inverse and solve (LU with
//! partial pivoting), determinants, eigendecompositions (Hermitian and
//! general), SVD and QR. Real and complex input (`f32`, `f64`, `c64`,
//! `c128`); faer does not factorize the narrow floats.

use crate::operand::{flag, inputs, outputs, slice, slice_mut, Element};
use crate::{AttrLookup, NumericsError, Operand, OperandMut};
use anydev_ops::DType;
use faer::linalg::solvers::{DenseSolveCore, PartialPivLu, Solve};
use faer::traits::math_utils::{abs, conj, mul_real, real, recip};
use faer::traits::{ComplexField, RealField};
use faer::{Mat, MatRef, Side};
use num_complex::Complex;

/// The ops' names.
pub mod op {
    /// `(x[..., n, n]; upper: Bool) -> L or U [..., n, n]`
    pub const CHOLESKY: &str = "linalg::cholesky";
    /// `(x[..., n, n]) -> [..., n, n]`
    pub const INV: &str = "linalg::inv";
    /// `(x1[..., n, n], x2[..., n, k]) -> [..., n, k]`
    pub const SOLVE: &str = "linalg::solve";
    /// `(x[..., n, n]) -> (sign [...], logabsdet real [...])`
    pub const SLOGDET: &str = "linalg::slogdet";
    /// `(x[..., n, n]) -> [...]`
    pub const DET: &str = "linalg::det";
    /// `(x[..., n, n]) -> (eigenvalues real [..., n], eigenvectors [..., n, n])`
    pub const EIGH: &str = "linalg::eigh";
    /// `(x[..., n, n]) -> (eigenvalues complex [..., n], eigenvectors complex [..., n, n])`
    pub const EIG: &str = "linalg::eig";
    /// `(x[..., m, n]; full_matrices: Bool) -> (U, S real [..., k], Vh)`
    pub const SVD: &str = "linalg::svd";
    /// `(x[..., m, n]; complete: Bool) -> (Q, R)`
    pub const QR: &str = "linalg::qr";

    /// Every factorization.
    pub const ALL: [&str; 9] = [CHOLESKY, INV, SOLVE, SLOGDET, DET, EIGH, EIG, SVD, QR];
}

type Outcome = Result<(), NumericsError>;

/// The component types: `f32` and `f64`.
trait Real: RealField + Element {
    /// The exponent of the smallest power of two above the largest finite value.
    const MAX_EXP: i32;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Real for f32 {
    const MAX_EXP: i32 = f32::MAX_EXP;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Real for f64 {
    const MAX_EXP: i32 = f64::MAX_EXP;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// The element types faer factorizes here: the real floats and the
/// complex numbers made of them.
trait Field: ComplexField<Real: Real> + Element {
    /// `x / |x|` (0 for 0): the sign of a real number, the point on the
    /// unit circle of a complex one. Divided, not multiplied by the
    /// reciprocal, so that a real sign is exactly 1 or -1.
    fn unit(self) -> Self;
}

impl<T: Real> Field for T {
    fn unit(self) -> Self {
        if self == T::zero_impl() {
            self
        } else {
            self / abs(&self)
        }
    }
}

impl<T: Real> Field for Complex<T>
where
    Complex<T>: ComplexField<Real = T> + Element,
{
    fn unit(self) -> Self {
        let magnitude = abs(&self);
        if magnitude == T::zero_impl() {
            self
        } else {
            self / magnitude
        }
    }
}

/// The matrices of a batched input, each `rows x cols`, row-major.
fn matrices<'a, T: Field>(function: &str, t: &'a Operand<'_>) -> Result<Vec<MatRef<'a, T>>, NumericsError> {
    let n = t.shape.len();
    if n < 2 {
        return Err(NumericsError::new(
            function,
            format!("needs a stack of matrices, got shape {:?}", t.shape),
        ));
    }
    let (rows, cols) = (t.shape[n - 2], t.shape[n - 1]);
    let data = slice::<T>(function, t)?;
    let (count, step) = (t.shape[..n - 2].iter().product(), rows * cols);
    // `slice` checked that `data` holds `count` matrices.
    Ok((0..count)
        .map(|b| MatRef::from_row_major_slice(&data[b * step..(b + 1) * step], rows, cols))
        .collect())
}

/// `a` times a power of two that brings its largest magnitude near 1, and
/// the exponent to scale values computed from it back by. The iterative
/// decompositions (eigen and singular values) work with squares of the
/// entries, which overflow or underflow from about 1e154 or 1e-154 in f64,
/// and then fail to converge or lose accuracy; LAPACK scales the same way.
/// Scaling by a power of two is exact.
fn balanced<T: Field>(a: MatRef<'_, T>) -> (Mat<T>, i32) {
    let largest = a.norm_max().to_f64();
    let limit = T::Real::MAX_EXP - 2;
    let exp = if largest > 0.0 && largest.is_finite() {
        (largest.log2().round() as i32).clamp(-limit, limit)
    } else {
        0
    };
    let scale = T::Real::from_f64(2f64.powi(-exp));
    (
        Mat::from_fn(a.nrows(), a.ncols(), |i, j| mul_real(&a[(i, j)], &scale)),
        exp,
    )
}

/// `v` times 2^`exp`, undoing [`balanced`] on an eigenvalue or singular value.
fn unbalanced<T: Field>(v: T, exp: i32) -> T {
    // Two steps, so that 2^exp itself need not be finite in T.
    let half = T::Real::from_f64(2f64.powi(exp / 2));
    let rest = T::Real::from_f64(2f64.powi(exp - exp / 2));
    mul_real(&mul_real(&v, &half), &rest)
}

/// Fails unless every matrix of a batch is square.
fn square<T: Field>(function: &str, batch: &[MatRef<'_, T>]) -> Outcome {
    match batch.first() {
        Some(a) if a.nrows() != a.ncols() => Err(NumericsError::new(
            function,
            format!("needs square matrices, got {} x {}", a.nrows(), a.ncols()),
        )),
        _ => Ok(()),
    }
}

/// Writes `m` (or its conjugate transpose) row-major into `out`.
fn write<T: Field>(out: &mut [T], m: MatRef<'_, T>, adjoint: bool) {
    let (rows, cols) = if adjoint {
        (m.ncols(), m.nrows())
    } else {
        (m.nrows(), m.ncols())
    };
    for i in 0..rows {
        for j in 0..cols {
            out[i * cols + j] = if adjoint { conj(&m[(j, i)]) } else { m[(i, j)] };
        }
    }
}

/// Writes the real parts of the diagonal `d` into `out`: the eigenvalues
/// of a Hermitian matrix and singular values, which faer keeps in the
/// matrix's own (possibly complex) type.
fn write_real<T: Field>(out: &mut [T::Real], d: faer::ColRef<'_, T>) {
    for (i, v) in d.iter().enumerate() {
        out[i] = real(v);
    }
}

/// The LU factors of `a`, or an error when `a` is singular (a zero pivot).
fn lu<T: Field>(function: &str, a: MatRef<'_, T>) -> Result<PartialPivLu<T>, NumericsError> {
    let lu = a.partial_piv_lu();
    let u = lu.U();
    if (0..u.nrows()).any(|i| u[(i, i)] == T::zero_impl()) {
        return Err(NumericsError::new(function, "the matrix is singular"));
    }
    Ok(lu)
}

/// The square matrices of a one-input op and their size `n`.
fn square_input<'a, T: Field>(
    function: &str,
    ins: &'a [Operand<'_>],
) -> Result<(Vec<MatRef<'a, T>>, usize), NumericsError> {
    let [x] = inputs(function, ins)?;
    let batch = matrices::<T>(function, x)?;
    square(function, &batch)?;
    let n = x.shape[x.shape.len() - 1];
    Ok((batch, n))
}

fn cholesky<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome {
    let f = "cholesky";
    let upper = flag(f, attr, "upper")?;
    let (batch, n) = square_input::<T>(f, ins)?;
    let [out] = outputs(f, outs)?;
    let out = slice_mut::<T>(f, out, batch.len() * n * n)?;
    for (b, a) in batch.into_iter().enumerate() {
        let llt = a
            .llt(Side::Lower)
            .map_err(|_| NumericsError::new(f, "the matrix is not positive definite"))?;
        write(&mut out[b * n * n..(b + 1) * n * n], llt.L(), upper);
    }
    Ok(())
}

fn inv<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], _: &AttrLookup<'_>) -> Outcome {
    let f = "inv";
    let (batch, n) = square_input::<T>(f, ins)?;
    let [out] = outputs(f, outs)?;
    let out = slice_mut::<T>(f, out, batch.len() * n * n)?;
    for (b, a) in batch.into_iter().enumerate() {
        write(
            &mut out[b * n * n..(b + 1) * n * n],
            lu(f, a)?.inverse().as_ref(),
            false,
        );
    }
    Ok(())
}

fn solve<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], _: &AttrLookup<'_>) -> Outcome {
    let f = "solve";
    let [a, y] = inputs(f, ins)?;
    let (lhs, rhs) = (matrices::<T>(f, a)?, matrices::<T>(f, y)?);
    square(f, &lhs)?;
    if lhs.len() != rhs.len() || lhs.iter().zip(&rhs).any(|(a, y)| a.nrows() != y.nrows()) {
        return Err(NumericsError::new(
            f,
            format!("x2 of shape {:?} does not fit x1 of shape {:?}", y.shape, a.shape),
        ));
    }
    let [out] = outputs(f, outs)?;
    let out = slice_mut::<T>(f, out, y.shape.iter().product())?;
    for (b, (a, y)) in lhs.into_iter().zip(rhs).enumerate() {
        let size = y.nrows() * y.ncols();
        let x: Mat<T> = lu(f, a)?.solve(y);
        write(&mut out[b * size..(b + 1) * size], x.as_ref(), false);
    }
    Ok(())
}

/// Sign and log |det| from the LU factors, so that neither overflows: the
/// pivots' units times the permutation's parity, and the sum of the
/// pivots' log magnitudes. The sign of a complex matrix is complex, of
/// magnitude 1 (0 when singular).
fn slogdet_of<T: Field>(a: MatRef<'_, T>) -> (T, f64) {
    let lu = a.partial_piv_lu();
    let u = lu.U();
    let (forward, _) = lu.P().arrays();
    // A permutation of n elements with c cycles has the parity of n - c.
    let mut seen = vec![false; forward.len()];
    let mut cycles = 0;
    for start in 0..forward.len() {
        if !seen[start] {
            cycles += 1;
            let mut i = start;
            while !seen[i] {
                seen[i] = true;
                i = forward[i];
            }
        }
    }
    let one = T::one_impl();
    let mut sign = if (forward.len() - cycles) % 2 == 0 { one } else { -one };
    let mut log = 0.0;
    for i in 0..u.nrows() {
        let pivot = u[(i, i)];
        sign *= pivot.unit();
        log += abs(&pivot).to_f64().ln();
    }
    (sign, log)
}

fn det<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], _: &AttrLookup<'_>) -> Outcome {
    let f = "det";
    let (batch, _) = square_input::<T>(f, ins)?;
    let [out] = outputs(f, outs)?;
    let out = slice_mut::<T>(f, out, batch.len())?;
    for (b, a) in batch.into_iter().enumerate() {
        out[b] = a.determinant();
    }
    Ok(())
}

fn slogdet<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], _: &AttrLookup<'_>) -> Outcome {
    let f = "slogdet";
    let (batch, _) = square_input::<T>(f, ins)?;
    let [signs, logs] = outputs(f, outs)?;
    let signs = slice_mut::<T>(f, signs, batch.len())?;
    let logs = slice_mut::<T::Real>(f, logs, batch.len())?;
    for (b, a) in batch.into_iter().enumerate() {
        let (sign, log) = slogdet_of(a);
        (signs[b], logs[b]) = (sign, T::Real::from_f64(log));
    }
    Ok(())
}

fn eigh<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], _: &AttrLookup<'_>) -> Outcome {
    let f = "eigh";
    let (batch, n) = square_input::<T>(f, ins)?;
    let [values, vectors] = outputs(f, outs)?;
    let values = slice_mut::<T::Real>(f, values, batch.len() * n)?;
    let vectors = slice_mut::<T>(f, vectors, batch.len() * n * n)?;
    if n == 0 {
        // faer's workspace size underflows for an empty matrix.
        return Ok(());
    }
    for (b, a) in batch.into_iter().enumerate() {
        let (a, exp) = balanced(a);
        let evd = a
            .self_adjoint_eigen(Side::Lower)
            .map_err(|_| NumericsError::new(f, "the eigendecomposition did not converge"))?;
        let values = &mut values[b * n..(b + 1) * n];
        write_real(values, evd.S().column_vector());
        values.iter_mut().for_each(|v| *v = unbalanced(*v, exp));
        write(&mut vectors[b * n * n..(b + 1) * n * n], evd.U(), false);
    }
    Ok(())
}

/// The eigenvalues and eigenvectors of a general matrix, complex even for
/// real input; each eigenvector scaled to unit 2-norm, as LAPACK's `geev`
/// (and so NumPy) returns them.
fn eig<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], _: &AttrLookup<'_>) -> Outcome
where
    Complex<T::Real>: Field<Real = T::Real>,
{
    let f = "eig";
    let (batch, n) = square_input::<T>(f, ins)?;
    let [values, vectors] = outputs(f, outs)?;
    let values = slice_mut::<Complex<T::Real>>(f, values, batch.len() * n)?;
    let vectors = slice_mut::<Complex<T::Real>>(f, vectors, batch.len() * n * n)?;
    for (b, a) in batch.into_iter().enumerate() {
        let (a, exp) = balanced(a);
        let evd = a
            .eigen()
            .map_err(|_| NumericsError::new(f, "the eigendecomposition did not converge"))?;
        for (i, v) in evd.S().column_vector().iter().enumerate() {
            values[b * n + i] = unbalanced(*v, exp);
        }
        let mut u = evd.U().to_owned();
        for j in 0..n {
            let norm = u.col(j).norm_l2();
            if norm != T::Real::zero_impl() {
                let scale = recip(&norm);
                for i in 0..n {
                    u[(i, j)] = mul_real(&u[(i, j)], &scale);
                }
            }
        }
        write(&mut vectors[b * n * n..(b + 1) * n * n], u.as_ref(), false);
    }
    Ok(())
}

/// The dimensions `(rows, cols)` of the matrices of input `x`.
fn dims(x: &Operand<'_>) -> (usize, usize) {
    let n = x.shape.len();
    (x.shape[n - 2], x.shape[n - 1])
}

fn svd<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome {
    let f = "svd";
    let full = flag(f, attr, "full_matrices")?;
    let [x] = inputs(f, ins)?;
    let batch = matrices::<T>(f, x)?;
    let (m, n) = dims(x);
    let k = m.min(n);
    let (us, vs) = if full { (m * m, n * n) } else { (m * k, k * n) };
    let [u_out, s_out, vh_out] = outputs(f, outs)?;
    let count = batch.len();
    let u_out = slice_mut::<T>(f, u_out, count * us)?;
    let s_out = slice_mut::<T::Real>(f, s_out, count * k)?;
    let vh_out = slice_mut::<T>(f, vh_out, count * vs)?;
    for (b, a) in batch.into_iter().enumerate() {
        let (a, exp) = balanced(a);
        let decomposition = if full { a.svd() } else { a.thin_svd() };
        let d = decomposition.map_err(|_| NumericsError::new(f, "the decomposition did not converge"))?;
        let s = &mut s_out[b * k..(b + 1) * k];
        write_real(s, d.S().column_vector());
        s.iter_mut().for_each(|v| *v = unbalanced(*v, exp));
        write(&mut u_out[b * us..(b + 1) * us], d.U(), false);
        write(&mut vh_out[b * vs..(b + 1) * vs], d.V(), true);
    }
    Ok(())
}

fn qr<T: Field>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome {
    let f = "qr";
    let complete = flag(f, attr, "complete")?;
    let [x] = inputs(f, ins)?;
    let batch = matrices::<T>(f, x)?;
    let (m, n) = dims(x);
    let k = if complete { m } else { m.min(n) };
    let [q_out, r_out] = outputs(f, outs)?;
    let count = batch.len();
    let q_out = slice_mut::<T>(f, q_out, count * m * k)?;
    let r_out = slice_mut::<T>(f, r_out, count * k * n)?;
    for (b, a) in batch.into_iter().enumerate() {
        let d = a.qr();
        let (q, r) = if complete {
            (d.compute_Q(), d.R())
        } else {
            (d.compute_thin_Q(), d.thin_R())
        };
        write(&mut q_out[b * m * k..(b + 1) * m * k], q.as_ref(), false);
        // faer's R has min(m, n) rows; a complete R of a tall matrix has m,
        // the rest zero. Outputs arrive uninitialised (reused blocks).
        let r_rows = &mut r_out[b * k * n..(b + 1) * k * n];
        r_rows.fill(T::zero_impl());
        write(&mut r_rows[..r.nrows() * n], r, false);
    }
    Ok(())
}

/// Runs `$kernel` instantiated for the element type of `$dtype`.
macro_rules! by_dtype {
    ($f:expr, $dtype:expr, $kernel:ident($($arg:expr),*)) => {
        match $dtype {
            DType::F32 => $kernel::<f32>($($arg),*),
            DType::F64 => $kernel::<f64>($($arg),*),
            DType::C64 => $kernel::<Complex<f32>>($($arg),*),
            DType::C128 => $kernel::<Complex<f64>>($($arg),*),
            other => Err(NumericsError::new(
                $f,
                format!("needs f32, f64, c64 or c128 input, got {other}"),
            )),
        }
    };
}

/// Runs the factorization `name` (one of [`op::ALL`]).
pub fn run(name: &str, ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome {
    let function = name.strip_prefix("linalg::").unwrap_or(name);
    let dtype = ins
        .first()
        .ok_or_else(|| NumericsError::new(function, "no input"))?
        .dtype;
    match name {
        op::CHOLESKY => by_dtype!(function, dtype, cholesky(ins, outs, attr)),
        op::INV => by_dtype!(function, dtype, inv(ins, outs, attr)),
        op::SOLVE => by_dtype!(function, dtype, solve(ins, outs, attr)),
        op::SLOGDET => by_dtype!(function, dtype, slogdet(ins, outs, attr)),
        op::DET => by_dtype!(function, dtype, det(ins, outs, attr)),
        op::EIGH => by_dtype!(function, dtype, eigh(ins, outs, attr)),
        op::EIG => by_dtype!(function, dtype, eig(ins, outs, attr)),
        op::SVD => by_dtype!(function, dtype, svd(ins, outs, attr)),
        op::QR => by_dtype!(function, dtype, qr(ins, outs, attr)),
        other => Err(NumericsError::new(
            other,
            format!("not a factorization (they are: {})", op::ALL.join(", ")),
        )),
    }
}
