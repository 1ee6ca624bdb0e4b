//! The standard's `linalg` extension functions that are compositions of
//! views, elementwise ops, reductions and `matmul`: `diagonal`, `trace`,
//! `outer`, `cross`, `vector_norm`, `matrix_norm` (all but the spectral
//! norms) and `matrix_power` (non-negative powers). Built from primitives
//! every backend has, they run on every device.
//!
//! `matrix_norm` with `ord` 2, -2 or `nuc` and negative matrix powers need
//! a factorization (`svdvals`, `inv`), so they run where those have a
//! kernel (see `factorize.rs`).

use crate::array::Array;
use crate::dispatch::same_device;
use crate::shape::normalize_axis;
use crate::view::Axes;
use anydev_core::{Error, Result};

/// The order of a norm: `p` (any real except 0 for matrices), or the
/// Frobenius and nuclear norms of matrices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    P(f64),
    Fro,
    Nuc,
}

/// Fails unless `x` is a real or complex floating-point array (the
/// standard's norms take both and return the real component dtype).
fn inexact(op: &str, x: &Array) -> Result<()> {
    if x.dtype().is_inexact() {
        return Ok(());
    }
    Err(Error::InvalidDType {
        op: op.into(),
        dtype: x.dtype(),
        reason: "a real or complex floating-point array is required; astype first".into(),
    })
}

/// Fails unless `x` has at least two axes.
fn matrices(op: &str, x: &Array) -> Result<()> {
    if x.ndim() >= 2 {
        return Ok(());
    }
    Err(Error::invalid_argument(
        op,
        format!("needs a stack of matrices (at least 2 axes), got shape {:?}", x.shape()),
    ))
}

/// The diagonal of each matrix in the last two axes (`offset` above the
/// main diagonal when positive, below when negative), as a new array of
/// shape `(..., k)`.
pub fn diagonal(x: &Array, offset: isize) -> Result<Array> {
    matrices("diagonal", x)?;
    let n = x.ndim();
    let (rows, cols) = (x.shape()[n - 2], x.shape()[n - 1]);
    let (rs, cs) = (x.strides()[n - 2], x.strides()[n - 1]);
    // The first element of the diagonal and how many there are (none for
    // an offset past the matrix, `isize::MIN` included).
    let skip = offset.unsigned_abs();
    let (r0, c0) = if offset >= 0 { (0, skip) } else { (skip, 0) };
    let len = rows.saturating_sub(r0).min(cols.saturating_sub(c0));
    let mut shape = x.shape()[..n - 2].to_vec();
    shape.push(len);
    let mut strides = x.strides()[..n - 2].to_vec();
    strides.push(rs + cs);
    let start = if len == 0 {
        0
    } else {
        r0 as isize * rs + c0 as isize * cs
    };
    let offset = (x.offset as isize + start) as usize;
    x.view(shape.into(), strides.into(), offset).copy()
}

/// Sum of each matrix's diagonal (see [`diagonal`]); integers accumulate
/// as [`crate::sum`] does.
pub fn trace(x: &Array, offset: isize) -> Result<Array> {
    crate::sum(&diagonal(x, offset)?, -1, false)
}

/// `x1[i] * x2[j]` for 1-D `x1` and `x2`.
pub fn outer(x1: &Array, x2: &Array) -> Result<Array> {
    same_device("outer", &[x1, x2])?;
    if x1.ndim() != 1 || x2.ndim() != 1 {
        return Err(Error::invalid_argument(
            "outer",
            format!("needs two 1-D arrays, got shapes {:?} and {:?}", x1.shape(), x2.shape()),
        ));
    }
    x1.expand_dims(1)?.multiply(&x2.expand_dims(0)?)
}

/// Cross products of 3-vectors along `axis` (of the broadcast shape;
/// both extents there must be 3).
pub fn cross(x1: &Array, x2: &Array, axis: isize) -> Result<Array> {
    let op = "cross";
    same_device(op, &[x1, x2])?;
    let ndim = x1.ndim().max(x2.ndim());
    let axis = normalize_axis(op, axis, ndim)?;
    // Extents along the axis, counted on the broadcast shape: a missing
    // leading axis would broadcast from 1, which is not 3 either.
    let extent = |x: &Array| (axis + x.ndim()).checked_sub(ndim).map(|a| x.shape()[a]);
    if extent(x1) != Some(3) || extent(x2) != Some(3) {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![x1.shape().to_vec(), x2.shape().to_vec()],
            reason: format!("both need 3 elements along axis {axis}"),
        });
    }
    let both = crate::broadcast_arrays(&[x1, x2])?;
    let (a, b) = (&both[0], &both[1]);
    let part = |x: &Array, i: isize| x.slice(&crate::manipulation::along(axis, ndim, crate::SliceArg::Index(i)));
    let component = |i: isize, j: isize| -> Result<Array> {
        part(a, i)?
            .multiply(&part(b, j)?)?
            .subtract(&part(a, j)?.multiply(&part(b, i)?)?)
    };
    let parts = [component(1, 2)?, component(2, 0)?, component(0, 1)?];
    crate::stack(&[&parts[0], &parts[1], &parts[2]], axis as isize)
}

/// The vector `ord`-norm over `axes` (all axes for [`crate::ALL`]):
/// `max |x|` for +inf, `min |x|` for -inf, the count of non-zeros for 0,
/// `(sum |x|^p)^(1/p)` otherwise. Real or complex floating-point input;
/// the result has the real component dtype.
pub fn vector_norm(x: &Array, axes: impl Into<Axes>, keepdims: bool, ord: f64) -> Result<Array> {
    inexact("vector_norm", x)?;
    let axes = axes.into();
    // Checked here, so that a bad axis names vector_norm, not the
    // reduction it is computed with.
    crate::shape::normalize_axes("vector_norm", axes.as_option(), x.ndim())?;
    let magnitude = x.abs()?;
    if ord == f64::INFINITY {
        crate::max(&magnitude, axes, keepdims)
    } else if ord == f64::NEG_INFINITY {
        crate::min(&magnitude, axes, keepdims)
    } else if ord == 0.0 {
        crate::count_nonzero(x, axes, keepdims)?.astype(x.dtype().real_dtype())
    } else if ord == 1.0 {
        crate::sum(&magnitude, axes, keepdims)
    } else if ord == 2.0 {
        crate::sum(&magnitude.square()?, axes, keepdims)?.sqrt()
    } else if ord.is_nan() {
        Err(Error::invalid_argument("vector_norm", "ord is NaN"))
    } else {
        crate::sum(&magnitude.pow(ord)?, axes, keepdims)?.pow(1.0 / ord)
    }
}

/// The matrix norm of each matrix in the last two axes: Frobenius, or
/// `ord` 1 / -1 (largest / smallest column sum of `|x|`) and +inf / -inf
/// (largest / smallest row sum); the spectral norms (`ord` 2, -2) and the
/// nuclear norm from the singular values.
pub fn matrix_norm(x: &Array, keepdims: bool, ord: NormOrd) -> Result<Array> {
    let op = "matrix_norm";
    inexact(op, x)?;
    matrices(op, x)?;
    let last_two = Axes::from(vec![-2, -1]);
    let magnitude = x.abs()?;
    // Sums over one axis of each matrix, then the extreme over the other.
    let extreme_sum = |summed: isize, largest: bool| -> Result<Array> {
        let sums = crate::sum(&magnitude, summed, true)?;
        let other = if summed == -2 { -1 } else { -2 };
        let out = if largest {
            crate::max(&sums, other, true)?
        } else {
            crate::min(&sums, other, true)?
        };
        if keepdims {
            Ok(out)
        } else {
            out.squeeze(last_two.clone())
        }
    };
    match ord {
        NormOrd::Fro => crate::sum(&magnitude.square()?, last_two.clone(), keepdims)?.sqrt(),
        NormOrd::P(p) if p == 1.0 || p == -1.0 => extreme_sum(-2, p > 0.0),
        NormOrd::P(p) if p.is_infinite() => extreme_sum(-1, p > 0.0),
        // The singular values' largest, smallest and sum.
        NormOrd::P(2.0) => spectral(x, keepdims, |s| crate::max(s, -1, false)),
        NormOrd::P(-2.0) => spectral(x, keepdims, |s| crate::min(s, -1, false)),
        NormOrd::Nuc => spectral(x, keepdims, |s| crate::sum(s, -1, false)),
        NormOrd::P(p) => Err(Error::invalid_argument(
            op,
            format!("ord {p} is not a matrix norm (use 'fro', 'nuc', 1, -1, 2, -2, inf or -inf)"),
        )),
    }
}

/// A norm of each matrix from its singular values (`cpu` has the
/// kernel; other kinds say `NoKernel`).
fn spectral(x: &Array, keepdims: bool, of: impl Fn(&Array) -> Result<Array>) -> Result<Array> {
    let out = of(&crate::svdvals(x)?)?;
    if keepdims {
        out.expand_dims(-1)?.expand_dims(-1)
    } else {
        Ok(out)
    }
}

/// `x` multiplied by itself `n` times (each matrix in the last two axes,
/// which must be square); `n = 0` gives identities, negative powers are
/// powers of the inverse.
pub fn matrix_power(x: &Array, n: i64) -> Result<Array> {
    let op = "matrix_power";
    matrices(op, x)?;
    let k = x.ndim();
    if x.shape()[k - 1] != x.shape()[k - 2] {
        return Err(Error::invalid_argument(
            op,
            format!("needs square matrices, got shape {:?}", x.shape()),
        ));
    }
    if n < 0 {
        return matrix_power(
            &crate::inv(x)?,
            n.checked_neg()
                .ok_or_else(|| Error::invalid_argument(op, format!("the power {n} has no positive counterpart")))?,
        );
    }
    if n == 0 {
        let size = x.shape()[k - 1];
        let identity = crate::eye(size, None, 0, (x.dtype(), x.device()))?;
        return identity.broadcast_to(x.shape())?.copy();
    }
    if n == 1 {
        return x.copy();
    }
    // Binary powering: square the running power, multiply it in where n
    // has a bit set.
    let (mut result, mut power, mut rest) = (None::<Array>, x.clone(), n as u64);
    loop {
        if rest & 1 == 1 {
            result = Some(match result {
                None => power.clone(),
                Some(r) => r.matmul(&power)?,
            });
        }
        rest >>= 1;
        if rest == 0 {
            return Ok(result.expect("n > 1 sets a bit"));
        }
        power = power.matmul(&power)?;
    }
}
