//! The `linalg` functions that need a matrix factorization: `cholesky`,
//! `inv`, `solve`, `det`, `slogdet`, `eig`, `eigvals`, `eigh`, `eigvalsh`,
//! `svd`, `svdvals` and `qr`, and what builds on them (`pinv`,
//! `matrix_rank`, the spectral and nuclear norms, negative matrix powers).
//!
//! Each factorization is an extension op (design section 11) named
//! `linalg::<function>` whose `cpu` kernel is faer's, run over every matrix
//! of the batch. Other device kinds have no kernel yet: a call there is
//! `NoKernel` naming the op, the device and `cpu`, and runs nowhere else
//! unless the caller opts in to the host fallback
//! (`extension::set_host_fallback`). Real and complex floating-point input
//! (`f32`, `f64`, `c64`, `c128`); the narrow floats are refused, since
//! faer does not factorize them.

use crate::array::Array;
use crate::extension::{self as ext, AttrKind, AttrValue, Attrs, HostFn, HostTensor, HostTensorMut, Kernel, OpDef};
use anydev_core::extension::TensorMeta;
use anydev_core::{DType, Error, Result};
use faer::linalg::solvers::{DenseSolveCore, PartialPivLu, Solve};
use faer::traits::math_utils::{abs, conj, mul_real, real, recip};
use faer::traits::{ComplexField, RealField};
use faer::{Mat, MatRef, Side};
use num_complex::Complex;
use std::sync::{Arc, OnceLock};

/// The component types: `f32` and `f64`.
trait Real: RealField + bytemuck::Pod {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Real for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Real for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// The element types faer factorizes here: the real floats and the
/// complex numbers made of them.
trait Field: ComplexField<Real: Real> + bytemuck::Pod {
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
    Complex<T>: ComplexField<Real = T>,
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
fn matrices<'a, T: Field>(t: &'a HostTensor<'_>) -> Result<Vec<MatRef<'a, T>>> {
    let n = t.shape.len();
    let (rows, cols) = (t.shape[n - 2], t.shape[n - 1]);
    let data = t.as_slice::<T>()?;
    let count: usize = t.shape[..n - 2].iter().product();
    let step = rows * cols;
    Ok((0..count)
        .map(|b| MatRef::from_row_major_slice(&data[b * step..(b + 1) * step], rows, cols))
        .collect())
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
fn lu<T: Field>(op: &str, a: MatRef<'_, T>) -> Result<PartialPivLu<T>> {
    let lu = a.partial_piv_lu();
    let u = lu.U();
    if (0..u.nrows()).any(|i| u[(i, i)] == T::zero_impl()) {
        return Err(Error::invalid_argument(op, "the matrix is singular"));
    }
    Ok(lu)
}

fn cholesky_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs) -> Result<()> {
    let upper = attrs.bool("upper")?;
    let out = outs[0].as_mut_slice::<T>()?;
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let n = a.nrows();
        let llt = a
            .llt(Side::Lower)
            .map_err(|_| Error::invalid_argument("cholesky", "the matrix is not positive definite"))?;
        write(&mut out[b * n * n..(b + 1) * n * n], llt.L(), upper);
    }
    Ok(())
}

fn inv_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], _: &Attrs) -> Result<()> {
    let out = outs[0].as_mut_slice::<T>()?;
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let n = a.nrows();
        write(
            &mut out[b * n * n..(b + 1) * n * n],
            lu("inv", a)?.inverse().as_ref(),
            false,
        );
    }
    Ok(())
}

fn solve_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], _: &Attrs) -> Result<()> {
    let out = outs[0].as_mut_slice::<T>()?;
    let (lhs, rhs) = (matrices::<T>(&ins[0])?, matrices::<T>(&ins[1])?);
    for (b, (a, y)) in lhs.into_iter().zip(rhs).enumerate() {
        let size = y.nrows() * y.ncols();
        let x: Mat<T> = lu("solve", a)?.solve(y);
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

fn det_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], _: &Attrs) -> Result<()> {
    let out = outs[0].as_mut_slice::<T>()?;
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        out[b] = a.determinant();
    }
    Ok(())
}

fn slogdet_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], _: &Attrs) -> Result<()> {
    let (signs, logs) = outs.split_at_mut(1);
    let (signs, logs) = (signs[0].as_mut_slice::<T>()?, logs[0].as_mut_slice::<T::Real>()?);
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let (sign, log) = slogdet_of(a);
        (signs[b], logs[b]) = (sign, T::Real::from_f64(log));
    }
    Ok(())
}

fn eigh_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], _: &Attrs) -> Result<()> {
    let (values, vectors) = outs.split_at_mut(1);
    let (values, vectors) = (values[0].as_mut_slice::<T::Real>()?, vectors[0].as_mut_slice::<T>()?);
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let n = a.nrows();
        let evd = a
            .self_adjoint_eigen(Side::Lower)
            .map_err(|_| Error::invalid_argument("eigh", "the eigendecomposition did not converge"))?;
        write_real(&mut values[b * n..(b + 1) * n], evd.S().column_vector());
        write(&mut vectors[b * n * n..(b + 1) * n * n], evd.U(), false);
    }
    Ok(())
}

/// The eigenvalues and eigenvectors of a general matrix, complex even for
/// real input; each eigenvector scaled to unit 2-norm, as LAPACK's `geev`
/// (and so NumPy) returns them.
fn eig_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], _: &Attrs) -> Result<()>
where
    Complex<T::Real>: Field<Real = T::Real>,
{
    let (values, vectors) = outs.split_at_mut(1);
    let values = values[0].as_mut_slice::<Complex<T::Real>>()?;
    let vectors = vectors[0].as_mut_slice::<Complex<T::Real>>()?;
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let n = a.nrows();
        let evd = a
            .eigen()
            .map_err(|_| Error::invalid_argument("eig", "the eigendecomposition did not converge"))?;
        for (i, v) in evd.S().column_vector().iter().enumerate() {
            values[b * n + i] = *v;
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

fn svd_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs) -> Result<()> {
    let full = attrs.bool("full_matrices")?;
    let [u_out, s_out, vh_out] = outs else {
        return Err(Error::invalid_argument("svd", "three outputs expected"));
    };
    let (u_out, s_out, vh_out) = (
        u_out.as_mut_slice::<T>()?,
        s_out.as_mut_slice::<T::Real>()?,
        vh_out.as_mut_slice::<T>()?,
    );
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let decomposition = if full { a.svd() } else { a.thin_svd() };
        let d = decomposition.map_err(|_| Error::invalid_argument("svd", "the decomposition did not converge"))?;
        let (u, s, v) = (d.U(), d.S().column_vector(), d.V());
        let k = s.nrows();
        write_real(&mut s_out[b * k..(b + 1) * k], s);
        let (us, vs) = (u.nrows() * u.ncols(), v.nrows() * v.ncols());
        write(&mut u_out[b * us..(b + 1) * us], u, false);
        write(&mut vh_out[b * vs..(b + 1) * vs], v, true);
    }
    Ok(())
}

fn qr_kernel<T: Field>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs) -> Result<()> {
    let complete = attrs.bool("complete")?;
    let (q_out, r_out) = outs.split_at_mut(1);
    let (q_out, r_out) = (q_out[0].as_mut_slice::<T>()?, r_out[0].as_mut_slice::<T>()?);
    for (b, a) in matrices::<T>(&ins[0])?.into_iter().enumerate() {
        let d = a.qr();
        let (q, r) = if complete {
            (d.compute_Q(), d.R())
        } else {
            (d.compute_thin_Q(), d.thin_R())
        };
        let (qs, rs) = (q.nrows() * q.ncols(), r.nrows() * r.ncols());
        write(&mut q_out[b * qs..(b + 1) * qs], q.as_ref(), false);
        write(&mut r_out[b * rs..(b + 1) * rs], r, false);
    }
    Ok(())
}

/// A host kernel running the instantiation of a kernel for the input's
/// dtype (the shape rule admits only these four).
macro_rules! host {
    ($kernel:ident) => {{
        let f: Arc<HostFn> = Arc::new(|ins, outs, attrs| match ins[0].dtype {
            DType::F32 => $kernel::<f32>(ins, outs, attrs),
            DType::F64 => $kernel::<f64>(ins, outs, attrs),
            DType::C64 => $kernel::<Complex<f32>>(ins, outs, attrs),
            _ => $kernel::<Complex<f64>>(ins, outs, attrs),
        });
        Kernel::Host(f)
    }};
}

/// The output shapes of an op from its input's `(batch, rows, cols)`.
type Outputs = fn(&[usize], usize, usize, &Attrs) -> Result<Vec<Vec<usize>>>;

/// The dtype of an output, from the input's.
#[derive(Clone, Copy)]
enum Out {
    /// The input's dtype.
    Same,
    /// The input's component dtype: eigenvalues of Hermitian matrices,
    /// singular values, log-determinants.
    Real,
    /// The complex dtype of the input's components: general eigenvalues
    /// and eigenvectors.
    Complex,
}

impl Out {
    fn of(self, input: DType) -> DType {
        match self {
            Out::Same => input,
            Out::Real => input.real_dtype(),
            Out::Complex => input.complex_dtype().unwrap_or(input),
        }
    }
}

/// Checks that the first input is a stack of floating-point (square,
/// where asked) matrices and applies `outputs`, one dtype of `dtypes` each.
fn rule(name: &'static str, square: bool, dtypes: &'static [Out], outputs: Outputs) -> Arc<ext::ShapeRule> {
    Arc::new(move |inputs: &[TensorMeta], attrs: &Attrs| {
        let x = &inputs[0];
        if !matches!(x.dtype, DType::F32 | DType::F64 | DType::C64 | DType::C128) {
            return Err(Error::InvalidDType {
                op: name.into(),
                dtype: x.dtype,
                reason: "a real or complex floating-point array (f32, f64, c64 or c128) is required".into(),
            });
        }
        let n = x.shape.len();
        if n < 2 || (square && x.shape[n - 1] != x.shape[n - 2]) {
            return Err(Error::invalid_argument(
                name,
                format!(
                    "needs a stack of {}matrices, got shape {:?}",
                    if square { "square " } else { "" },
                    x.shape
                ),
            ));
        }
        let (batch, rows, cols) = (&x.shape[..n - 2], x.shape[n - 2], x.shape[n - 1]);
        Ok(outputs(batch, rows, cols, attrs)?
            .into_iter()
            .zip(dtypes)
            .map(|(shape, out)| TensorMeta {
                dtype: out.of(x.dtype),
                shape,
            })
            .collect())
    })
}

fn with(batch: &[usize], tail: &[usize]) -> Vec<usize> {
    batch.iter().chain(tail).copied().collect()
}

/// One op: its name under `linalg::`, input count, attributes, shape rule
/// and cpu kernel.
type OpRow = (
    &'static str,
    usize,
    Vec<(String, AttrKind)>,
    Arc<ext::ShapeRule>,
    Kernel,
);

/// Defines the ops and registers their cpu kernels, once per process.
pub(crate) fn defined() -> Result<()> {
    static DEFINED: OnceLock<Result<()>> = OnceLock::new();
    DEFINED
        .get_or_init(|| {
            let flag = |name: &str| vec![(name.to_owned(), AttrKind::Bool)];
            let ops: [OpRow; 9] = [
                (
                    "cholesky",
                    1,
                    flag("upper"),
                    rule("cholesky", true, &[Out::Same], |b, n, _, _| Ok(vec![with(b, &[n, n])])),
                    host!(cholesky_kernel),
                ),
                (
                    "inv",
                    1,
                    vec![],
                    rule("inv", true, &[Out::Same], |b, n, _, _| Ok(vec![with(b, &[n, n])])),
                    host!(inv_kernel),
                ),
                ("solve", 2, vec![], Arc::new(solve_rule), host!(solve_kernel)),
                (
                    "slogdet",
                    1,
                    vec![],
                    rule("slogdet", true, &[Out::Same, Out::Real], |b, _, _, _| {
                        Ok(vec![b.to_vec(), b.to_vec()])
                    }),
                    host!(slogdet_kernel),
                ),
                (
                    "det",
                    1,
                    vec![],
                    rule("det", true, &[Out::Same], |b, _, _, _| Ok(vec![b.to_vec()])),
                    host!(det_kernel),
                ),
                (
                    "eigh",
                    1,
                    vec![],
                    rule("eigh", true, &[Out::Real, Out::Same], |b, n, _, _| {
                        Ok(vec![with(b, &[n]), with(b, &[n, n])])
                    }),
                    host!(eigh_kernel),
                ),
                (
                    "eig",
                    1,
                    vec![],
                    rule("eig", true, &[Out::Complex, Out::Complex], |b, n, _, _| {
                        Ok(vec![with(b, &[n]), with(b, &[n, n])])
                    }),
                    host!(eig_kernel),
                ),
                (
                    "svd",
                    1,
                    flag("full_matrices"),
                    rule("svd", false, &[Out::Same, Out::Real, Out::Same], |b, m, n, attrs| {
                        let k = m.min(n);
                        let (u, v) = if attrs.bool("full_matrices")? { (m, n) } else { (k, k) };
                        Ok(vec![with(b, &[m, u]), with(b, &[k]), with(b, &[v, n])])
                    }),
                    host!(svd_kernel),
                ),
                (
                    "qr",
                    1,
                    flag("complete"),
                    rule("qr", false, &[Out::Same, Out::Same], |b, m, n, attrs| {
                        let k = if attrs.bool("complete")? { m } else { m.min(n) };
                        Ok(vec![with(b, &[m, k]), with(b, &[k, n])])
                    }),
                    host!(qr_kernel),
                ),
            ];
            for (name, inputs, attrs, shape_rule, kernel) in ops {
                let name = format!("linalg::{name}");
                ext::define_host_op(
                    OpDef {
                        name,
                        inputs,
                        attrs,
                        shape_rule,
                    },
                    kernel,
                )?;
            }
            Ok(())
        })
        .clone()
}

/// `solve`'s rule: square `x1` (..., n, n) and `x2` (..., n, k) with the
/// same batch (the array layer broadcasts and shapes them first).
fn solve_rule(inputs: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    // x1 alone: a stack of square real matrices.
    rule("solve", true, &[Out::Same], |b, n, _, _| Ok(vec![with(b, &[n, n])]))(&inputs[..1], attrs)?;
    let (a, y) = (&inputs[0], &inputs[1]);
    let n = a.shape.len();
    if y.dtype != a.dtype || y.shape.len() != n || y.shape[..n - 1] != a.shape[..n - 1] {
        return Err(Error::ShapeMismatch {
            op: "solve".into(),
            shapes: vec![a.shape.clone(), y.shape.clone()],
            reason: "x2 must be (..., n, k) of x1's dtype for x1 of (..., n, n)".into(),
        });
    }
    Ok(vec![y.clone()])
}

/// Calls `linalg::<name>` on `inputs`.
fn call(name: &str, inputs: &[&Array], attrs: &Attrs) -> Result<Vec<Array>> {
    defined()?;
    ext::call(&format!("linalg::{name}"), inputs, attrs)
}

fn flag(name: &str, value: bool) -> Attrs {
    Attrs::new().with(name, AttrValue::Bool(value))
}

fn one(mut outputs: Vec<Array>) -> Array {
    outputs.swap_remove(0)
}

/// Calls `linalg::<name>`, an op of two outputs, and returns them.
fn two(name: &str, inputs: &[&Array], attrs: &Attrs) -> Result<(Array, Array)> {
    let mut out = call(name, inputs, attrs)?;
    let second = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), second))
}

/// The Cholesky factor of each Hermitian (real: symmetric)
/// positive-definite matrix: lower (`x = L Lᴴ`), or upper (`x = Uᴴ U`)
/// with `upper`. Only the lower
/// triangle of `x` is read.
pub fn cholesky(x: &Array, upper: bool) -> Result<Array> {
    call("cholesky", &[x], &flag("upper", upper)).map(one)
}

/// The inverse of each square matrix; a singular one is an error.
pub fn inv(x: &Array) -> Result<Array> {
    call("inv", &[x], &Attrs::new()).map(one)
}

/// `x` with `x1 @ x = x2` for each square `x1`: `x2` is a vector of shape
/// `(n,)` or a stack of `(n, k)` matrices (batches broadcast).
pub fn solve(x1: &Array, x2: &Array) -> Result<Array> {
    crate::dispatch::same_device("solve", &[x1, x2])?;
    let vector = x2.ndim() == 1;
    let x2 = if vector { x2.expand_dims(-1)? } else { x2.clone() };
    if x1.ndim() < 2 {
        return Err(Error::invalid_argument(
            "solve",
            format!("x1 must be a stack of matrices, got shape {:?}", x1.shape()),
        ));
    }
    let batch_of = |x: &Array| x.shape()[..x.ndim() - 2].to_vec();
    let batch = crate::shape::broadcast_shapes("solve", &[&batch_of(x1), &batch_of(&x2)])?;
    let full = |x: &Array| -> Result<Array> {
        let shape: Vec<usize> = batch.iter().chain(&x.shape()[x.ndim() - 2..]).copied().collect();
        x.broadcast_to(&shape)
    };
    let x = call("solve", &[&full(x1)?, &full(&x2)?], &Attrs::new()).map(one)?;
    if vector {
        x.squeeze(-1)
    } else {
        Ok(x)
    }
}

/// The determinant of each square matrix.
pub fn det(x: &Array) -> Result<Array> {
    call("det", &[x], &Attrs::new()).map(one)
}

/// The sign (-1, 0 or 1; for complex input a complex number of magnitude 1,
/// or 0) and the natural log of the absolute value (real) of each square
/// matrix's determinant, which overflow neither.
pub fn slogdet(x: &Array) -> Result<(Array, Array)> {
    two("slogdet", &[x], &Attrs::new())
}

/// The eigenvalues and eigenvectors (columns, of unit 2-norm) of each
/// square matrix, complex (`c64` for `f32` input, `c128` for `f64`).
/// The eigenvalues come in the order the Schur form yields them, not
/// sorted; a real matrix's complex conjugate pairs are adjacent, the one
/// of positive imaginary part first.
pub fn eig(x: &Array) -> Result<(Array, Array)> {
    two("eig", &[x], &Attrs::new())
}

/// The eigenvalues of each square matrix: those of [`eig`], in its order.
pub fn eigvals(x: &Array) -> Result<Array> {
    Ok(eig(x)?.0)
}

/// The eigenvalues (ascending, real) and eigenvectors (columns) of each
/// Hermitian (real: symmetric) matrix; only the lower triangle is read.
pub fn eigh(x: &Array) -> Result<(Array, Array)> {
    two("eigh", &[x], &Attrs::new())
}

/// The eigenvalues (ascending, real) of each Hermitian matrix.
pub fn eigvalsh(x: &Array) -> Result<Array> {
    Ok(eigh(x)?.0)
}

/// `(U, S, Vh)` with `x = U diag(S) Vh` for each matrix, singular values
/// real and descending; `U` and `Vh` are square with `full_matrices`, else reduced.
pub fn svd(x: &Array, full_matrices: bool) -> Result<(Array, Array, Array)> {
    let mut out = call("svd", &[x], &flag("full_matrices", full_matrices))?;
    let vh = out.pop().expect("three outputs");
    let s = out.pop().expect("three outputs");
    Ok((out.pop().expect("three outputs"), s, vh))
}

/// The singular values of each matrix, real and descending.
pub fn svdvals(x: &Array) -> Result<Array> {
    Ok(svd(x, false)?.1)
}

/// `(Q, R)` with `x = Q R`, `Q` orthonormal (unitary) columns and `R` upper
/// triangular; `Q` square with `complete`, else reduced.
pub fn qr(x: &Array, complete: bool) -> Result<(Array, Array)> {
    two("qr", &[x], &flag("complete", complete))
}

/// The default relative cutoff of `pinv` and `matrix_rank`: the standard's
/// `max(M, N) * eps` of the dtype.
fn default_rtol(x: &Array) -> f64 {
    let n = x.ndim();
    let size = x.shape()[n - 2].max(x.shape()[n - 1]) as f64;
    let eps = if x.dtype().real_dtype() == DType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    size * eps
}

/// Singular values above `rtol` times the largest, as a `bool` mask.
fn significant(s: &Array, rtol: f64) -> Result<Array> {
    let cutoff = crate::max(s, -1, true)?.multiply(rtol)?;
    s.greater(&cutoff)
}

/// The Moore-Penrose pseudo-inverse of each matrix, `V diag(1/S) Uᴴ` from
/// its SVD: singular values at or below `rtol` times the largest (default
/// `max(M, N) * eps`) count as zero.
pub fn pinv(x: &Array, rtol: Option<f64>) -> Result<Array> {
    if x.ndim() < 2 {
        return Err(Error::invalid_argument(
            "pinv",
            format!("needs a stack of matrices, got shape {:?}", x.shape()),
        ));
    }
    let (u, s, vh) = svd(x, false)?;
    let rtol = rtol.unwrap_or_else(|| default_rtol(x));
    let inverted = crate::where_(&significant(&s, rtol)?, &s.reciprocal()?, 0.0)?;
    vh.conj()?
        .matrix_transpose()?
        .multiply(&inverted.expand_dims(-2)?)?
        .matmul(&u.conj()?.matrix_transpose()?)
}

/// The rank of each matrix: how many singular values exceed `rtol` times
/// the largest (default `max(M, N) * eps`).
pub fn matrix_rank(x: &Array, rtol: Option<f64>) -> Result<Array> {
    if x.ndim() < 2 {
        return Err(Error::invalid_argument(
            "matrix_rank",
            format!("needs a stack of matrices, got shape {:?}", x.shape()),
        ));
    }
    let s = svdvals(x)?;
    crate::count_nonzero(&significant(&s, rtol.unwrap_or_else(|| default_rtol(x)))?, -1, false)
}
