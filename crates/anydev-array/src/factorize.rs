//! The `linalg` functions that need a matrix factorization: `cholesky`,
//! `inv`, `solve`, `det`, `slogdet`, `eig`, `eigvals`, `eigh`, `eigvalsh`,
//! `svd`, `svdvals` and `qr`, and what builds on them (`pinv`,
//! `matrix_rank`, the spectral and nuclear norms, negative matrix powers).
//!
//! Each factorization is an extension op (design section 11) named
//! `linalg::<function>` whose `cpu` kernel is faer's, run over every matrix
//! of the batch by `anydev_numerics` (which the simulator plugin runs for
//! the same ops on its own devices); wgpu devices implement the ops
//! themselves, in WGSL. A device kind with neither a kernel
//! nor a backend implementing the op says `NoKernel` naming the op, the
//! device and the kinds that run it, and runs nowhere else unless the
//! caller opts in to the host fallback (`extension::set_host_fallback`).
//! Real and complex floating-point input (`f32`, `f64`, `c64`, `c128`);
//! the narrow floats are refused, since faer does not factorize them.

use crate::array::Array;
use crate::extension::{self as ext, AttrKind, AttrValue, Attrs, OpDef};
use anydev_core::extension::TensorMeta;
use anydev_core::{DType, Error, Result};
use std::sync::{Arc, OnceLock};

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

/// One op: its name under `linalg::`, input count, attributes and shape rule.
type OpRow = (&'static str, usize, Vec<(String, AttrKind)>, Arc<ext::ShapeRule>);

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
                ),
                (
                    "inv",
                    1,
                    vec![],
                    rule("inv", true, &[Out::Same], |b, n, _, _| Ok(vec![with(b, &[n, n])])),
                ),
                ("solve", 2, vec![], Arc::new(solve_rule)),
                (
                    "slogdet",
                    1,
                    vec![],
                    rule("slogdet", true, &[Out::Same, Out::Real], |b, _, _, _| {
                        Ok(vec![b.to_vec(), b.to_vec()])
                    }),
                ),
                (
                    "det",
                    1,
                    vec![],
                    rule("det", true, &[Out::Same], |b, _, _, _| Ok(vec![b.to_vec()])),
                ),
                (
                    "eigh",
                    1,
                    vec![],
                    rule("eigh", true, &[Out::Real, Out::Same], |b, n, _, _| {
                        Ok(vec![with(b, &[n]), with(b, &[n, n])])
                    }),
                ),
                (
                    "eig",
                    1,
                    vec![],
                    rule("eig", true, &[Out::Complex, Out::Complex], |b, n, _, _| {
                        Ok(vec![with(b, &[n]), with(b, &[n, n])])
                    }),
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
                ),
                (
                    "qr",
                    1,
                    flag("complete"),
                    rule("qr", false, &[Out::Same, Out::Same], |b, m, n, attrs| {
                        let k = if attrs.bool("complete")? { m } else { m.min(n) };
                        Ok(vec![with(b, &[m, k]), with(b, &[k, n])])
                    }),
                ),
            ];
            for (name, inputs, attrs, shape_rule) in ops {
                let name = format!("linalg::{name}");
                let kernel = ext::numerics_kernel(&name);
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
/// same batch and dtype (the array layer promotes, broadcasts and shapes
/// them first).
fn solve_rule(inputs: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    // x1 alone: a stack of square real matrices.
    rule("solve", true, &[Out::Same], |b, n, _, _| Ok(vec![with(b, &[n, n])]))(&inputs[..1], attrs)?;
    let (a, y) = (&inputs[0], &inputs[1]);
    let n = a.shape.len();
    if y.shape.len() != n || y.shape[..n - 1] != a.shape[..n - 1] {
        return Err(Error::ShapeMismatch {
            op: "solve".into(),
            shapes: vec![a.shape.clone(), y.shape.clone()],
            reason: "x2 must be (..., n, k) for x1 of (..., n, n), with the same batch".into(),
        });
    }
    if y.dtype != a.dtype {
        return Err(Error::InvalidDType {
            op: "solve".into(),
            dtype: y.dtype,
            reason: format!("the op needs x2 of x1's dtype, {}", a.dtype),
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
/// `(n,)` or a stack of `(n, k)` matrices (batches broadcast). Both are
/// promoted to their result type first ([`crate::result_type`]: `f32`
/// with `f64` solves in `f64`, a real float with a complex one in complex).
pub fn solve(x1: &Array, x2: &Array) -> Result<Array> {
    let op = "solve";
    crate::dispatch::same_device(op, &[x1, x2])?;
    if x1.ndim() < 2 {
        return Err(Error::invalid_argument(
            op,
            format!("x1 must be a stack of matrices, got shape {:?}", x1.shape()),
        ));
    }
    let n = x1.shape()[x1.ndim() - 1];
    // The extent x2 must have n of: a vector's only axis, a matrix's rows.
    let rows = match x2.ndim() {
        0 => None,
        1 => Some(x2.shape()[0]),
        d => Some(x2.shape()[d - 2]),
    };
    if x1.shape()[x1.ndim() - 2] != n || rows != Some(n) {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![x1.shape().to_vec(), x2.shape().to_vec()],
            reason: "x1 must be a stack of square matrices (..., n, n) and x2 a vector (n,) or a stack of \
                     matrices (..., n, k)"
                .into(),
        });
    }
    let vector = x2.ndim() == 1;
    let x2 = if vector { x2.expand_dims(-1)? } else { x2.clone() };
    let batch_of = |x: &Array| x.shape()[..x.ndim() - 2].to_vec();
    let batch = crate::shape::broadcast_shapes(op, &[&batch_of(x1), &batch_of(&x2)])?;
    let dtype = crate::promote::result_type(x1.dtype(), x2.dtype());
    let full = |x: &Array| -> Result<Array> {
        let shape: Vec<usize> = batch.iter().chain(&x.shape()[x.ndim() - 2..]).copied().collect();
        let x = if x.dtype() == dtype {
            x.clone()
        } else {
            x.astype(dtype)?
        };
        x.broadcast_to(&shape)
    };
    let x = call(op, &[&full(x1)?, &full(&x2)?], &Attrs::new()).map(one)?;
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

/// The relative cutoff of [`pinv`] and [`matrix_rank`]: singular values
/// at or below it times the largest count as zero. `None`, an `f64` or an
/// array convert into it.
#[derive(Clone, Copy, Debug, Default)]
pub enum Rtol<'a> {
    /// The standard's `max(M, N) * eps` of the dtype.
    #[default]
    Default,
    /// One cutoff for every matrix.
    Value(f64),
    /// A real floating-point array on `x`'s device that broadcasts to the
    /// stack shape (`x`'s shape without its last two axes): one cutoff per
    /// matrix.
    Array(&'a Array),
}

impl From<Option<f64>> for Rtol<'_> {
    fn from(rtol: Option<f64>) -> Self {
        rtol.map_or(Rtol::Default, Rtol::Value)
    }
}

impl From<f64> for Rtol<'_> {
    fn from(rtol: f64) -> Self {
        Rtol::Value(rtol)
    }
}

impl<'a> From<&'a Array> for Rtol<'a> {
    fn from(rtol: &'a Array) -> Self {
        Rtol::Array(rtol)
    }
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

/// A resolved [`Rtol`]: one number, or an array of shape `(..., 1)` over
/// the stack shape that multiplies the largest singular values.
enum Cutoff {
    Scalar(f64),
    PerMatrix(Array),
}

/// Checks `x` (a stack of matrices) and `rtol` for `op` and resolves the cutoff.
fn cutoff(op: &str, x: &Array, rtol: Rtol<'_>) -> Result<Cutoff> {
    if x.ndim() < 2 {
        return Err(Error::invalid_argument(
            op,
            format!("needs a stack of matrices, got shape {:?}", x.shape()),
        ));
    }
    let r = match rtol {
        Rtol::Default => return Ok(Cutoff::Scalar(default_rtol(x))),
        Rtol::Value(v) => return Ok(Cutoff::Scalar(v)),
        Rtol::Array(r) => r,
    };
    crate::dispatch::same_device(op, &[x, r])?;
    if !r.dtype().is_float() {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype: r.dtype(),
            reason: "an array rtol must have a real floating-point dtype".into(),
        });
    }
    let stack = &x.shape()[..x.ndim() - 2];
    // Broadcasting to the stack shape: rtol may not add axes or change
    // extents other than 1.
    let fits = r.ndim() <= stack.len()
        && r.shape()
            .iter()
            .rev()
            .zip(stack.iter().rev())
            .all(|(&e, &s)| e == 1 || e == s);
    if !fits {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![r.shape().to_vec(), stack.to_vec()],
            reason: format!(
                "rtol must broadcast to x's stack shape {stack:?} (x's shape {:?} without its last two axes)",
                x.shape()
            ),
        });
    }
    Ok(Cutoff::PerMatrix(r.broadcast_to(stack)?.expand_dims(-1)?))
}

/// Singular values above the cutoff times the largest, as a `bool` mask.
fn significant(s: &Array, cutoff: &Cutoff) -> Result<Array> {
    if s.shape().last() == Some(&0) {
        // An empty matrix has no singular values, and no largest one.
        return crate::full(s.shape(), false, (DType::Bool, s.device()));
    }
    let largest = crate::max(s, -1, true)?;
    let cutoff = match cutoff {
        Cutoff::Scalar(rtol) => largest.multiply(*rtol)?,
        Cutoff::PerMatrix(rtol) => largest.multiply(rtol)?,
    };
    s.greater(&cutoff)
}

/// The Moore-Penrose pseudo-inverse of each matrix, `V diag(1/S) Uᴴ` from
/// its SVD: singular values at or below `rtol` times the largest (default
/// `max(M, N) * eps`; an array gives one cutoff per matrix) count as zero.
pub fn pinv<'a>(x: &Array, rtol: impl Into<Rtol<'a>>) -> Result<Array> {
    let cutoff = cutoff("pinv", x, rtol.into())?;
    let (u, s, vh) = svd(x, false)?;
    let inverted = crate::where_(&significant(&s, &cutoff)?, &s.reciprocal()?, 0.0)?;
    vh.conj()?
        .matrix_transpose()?
        .multiply(&inverted.expand_dims(-2)?)?
        .matmul(&u.conj()?.matrix_transpose()?)
}

/// The rank of each matrix: how many singular values exceed `rtol` times
/// the largest (default `max(M, N) * eps`; an array gives one cutoff per
/// matrix).
pub fn matrix_rank<'a>(x: &Array, rtol: impl Into<Rtol<'a>>) -> Result<Array> {
    let cutoff = cutoff("matrix_rank", x, rtol.into())?;
    let s = svdvals(x)?;
    crate::count_nonzero(&significant(&s, &cutoff)?, -1, false)
}
