//! Linear algebra: `matmul` (batched, broadcasting, the standard's 1-D
//! rules), `tensordot` and `vecdot`, composed onto the `Matmul` primitive.

use crate::array::Array;
use crate::dispatch::{alloc, execute, same_device};
use crate::elementwise::Domain;
use crate::promote::result_type;
use crate::shape::{broadcast_shapes, normalize_axis, Dims};
use anydev_core::ops::Op;
use anydev_core::{DType, Error, Result};
use std::borrow::Cow;

/// Matrix product. 1-D operands are promoted to matrices (a row for `x1`,
/// a column for `x2`) and that axis is removed from the result; leading
/// (batch) axes broadcast. 0-d operands are an error.
pub fn matmul(x1: &Array, x2: &Array) -> Result<Array> {
    let op = "matmul";
    let ctx = same_device(op, &[x1, x2])?;
    if x1.ndim() == 0 || x2.ndim() == 0 {
        return Err(Error::invalid_argument(
            op,
            format!(
                "operands must have at least 1 dimension, got shapes {:?} and {:?}",
                x1.shape(),
                x2.shape()
            ),
        ));
    }
    let dtype = Domain::Numeric.apply(op, result_type(x1.dtype(), x2.dtype()))?;
    // Borrowed where nothing changes: a small product is cheap enough that
    // cloning each operand three times showed in its profile.
    let a = if x1.ndim() == 1 {
        Cow::Owned(x1.expand_dims(0)?)
    } else {
        Cow::Borrowed(x1)
    };
    let b = if x2.ndim() == 1 {
        Cow::Owned(x2.expand_dims(1)?)
    } else {
        Cow::Borrowed(x2)
    };
    let (na, nb) = (a.ndim(), b.ndim());
    let (m, k, k2, n) = (
        a.shape()[na - 2],
        a.shape()[na - 1],
        b.shape()[nb - 2],
        b.shape()[nb - 1],
    );
    if k != k2 {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![x1.shape().to_vec(), x2.shape().to_vec()],
            reason: format!("the contracted extents differ ({k} and {k2})"),
        });
    }
    let batch = broadcast_shapes(op, &[&a.shape()[..na - 2], &b.shape()[..nb - 2]])?;
    let with = |tail: [usize; 2]| -> Dims { batch.iter().copied().chain(tail).collect() };
    let a = as_operand(a, dtype, &with([m, k]))?;
    let b = as_operand(b, dtype, &with([k, n]))?;
    let out_shape = with([m, n]);
    let out = if k == 0 {
        crate::creation::filled(ctx, dtype, &out_shape, crate::promote::float_scalar(0.0, dtype))?
    } else {
        let out = alloc(ctx, dtype, &out_shape)?;
        execute(
            ctx,
            &Op::Matmul {
                a: a.tensor_ref(),
                b: b.tensor_ref(),
                out: out.tensor_ref(),
            },
        )?;
        out
    };
    let nd = out.ndim();
    match (x1.ndim() == 1, x2.ndim() == 1) {
        (true, true) => Ok(out.drop_axes(&[nd - 2, nd - 1])),
        (true, false) => Ok(out.drop_axes(&[nd - 2])),
        (false, true) => Ok(out.drop_axes(&[nd - 1])),
        (false, false) => Ok(out),
    }
}

/// `x` as `dtype`, broadcast to `shape`: `x` itself when it is already both.
fn as_operand<'a>(x: Cow<'a, Array>, dtype: DType, shape: &[usize]) -> Result<Cow<'a, Array>> {
    if x.dtype() == dtype && x.shape() == shape {
        return Ok(x);
    }
    Ok(Cow::Owned(x.astype(dtype)?.broadcast_to(shape)?))
}

/// Which axes `tensordot` contracts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensordotAxes {
    /// The last `n` axes of `x1` with the first `n` of `x2`.
    Count(usize),
    /// `x1`'s axes `.0[i]` with `x2`'s axes `.1[i]`.
    Pairs(Vec<isize>, Vec<isize>),
}

impl From<usize> for TensordotAxes {
    fn from(n: usize) -> Self {
        TensordotAxes::Count(n)
    }
}

impl From<(Vec<isize>, Vec<isize>)> for TensordotAxes {
    fn from((a, b): (Vec<isize>, Vec<isize>)) -> Self {
        TensordotAxes::Pairs(a, b)
    }
}

/// Sum of products over the given axis pairs; the result has `x1`'s free
/// axes followed by `x2`'s.
pub fn tensordot(x1: &Array, x2: &Array, axes: impl Into<TensordotAxes>) -> Result<Array> {
    let op = "tensordot";
    same_device(op, &[x1, x2])?;
    let (a_axes, b_axes): (Vec<usize>, Vec<usize>) = match axes.into() {
        TensordotAxes::Count(n) => {
            if n > x1.ndim() || n > x2.ndim() {
                return Err(Error::invalid_argument(
                    op,
                    format!(
                        "cannot contract {n} axes of shapes {:?} and {:?}",
                        x1.shape(),
                        x2.shape()
                    ),
                ));
            }
            ((x1.ndim() - n..x1.ndim()).collect(), (0..n).collect())
        }
        TensordotAxes::Pairs(a, b) => {
            if a.len() != b.len() {
                return Err(Error::invalid_argument(
                    op,
                    format!("axis lists {a:?} and {b:?} differ in length"),
                ));
            }
            let norm = |axes: &[isize], x: &Array| -> Result<Vec<usize>> {
                // Rejects repeated axes; the order of the pairs is kept below.
                crate::shape::normalize_axes(op, Some(axes), x.ndim())?;
                axes.iter().map(|&v| normalize_axis(op, v, x.ndim())).collect()
            };
            (norm(&a, x1)?, norm(&b, x2)?)
        }
    };
    for (&i, &j) in a_axes.iter().zip(&b_axes) {
        if x1.shape()[i] != x2.shape()[j] {
            return Err(Error::ShapeMismatch {
                op: op.into(),
                shapes: vec![x1.shape().to_vec(), x2.shape().to_vec()],
                reason: format!(
                    "axis {i} of x1 has extent {} but axis {j} of x2 has {}",
                    x1.shape()[i],
                    x2.shape()[j]
                ),
            });
        }
    }
    let free_a: Vec<usize> = (0..x1.ndim()).filter(|d| !a_axes.contains(d)).collect();
    let free_b: Vec<usize> = (0..x2.ndim()).filter(|d| !b_axes.contains(d)).collect();
    let extent = |x: &Array, axes: &[usize]| axes.iter().map(|&d| x.shape()[d]).product::<usize>();
    let k = extent(x1, &a_axes);
    let order_a: Vec<isize> = free_a.iter().chain(&a_axes).map(|&d| d as isize).collect();
    let order_b: Vec<isize> = b_axes.iter().chain(&free_b).map(|&d| d as isize).collect();
    let a = x1.permute_dims(&order_a)?.reshape_to(&[extent(x1, &free_a), k])?;
    let b = x2.permute_dims(&order_b)?.reshape_to(&[k, extent(x2, &free_b)])?;
    let shape: Vec<usize> = free_a
        .iter()
        .map(|&d| x1.shape()[d])
        .chain(free_b.iter().map(|&d| x2.shape()[d]))
        .collect();
    matmul(&a, &b)?.reshape_to(&shape)
}

/// Dot products of vectors along `axis` (counted on the broadcast shape;
/// the extents along it must match without broadcasting).
pub fn vecdot(x1: &Array, x2: &Array, axis: isize) -> Result<Array> {
    let op = "vecdot";
    same_device(op, &[x1, x2])?;
    let shape = broadcast_shapes(op, &[x1.shape(), x2.shape()])?;
    let axis = normalize_axis(op, axis, shape.len())?;
    let from_end = shape.len() - axis;
    let extent = |x: &Array| (from_end <= x.ndim()).then(|| x.shape()[x.ndim() - from_end]);
    if extent(x1) != extent(x2) {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            shapes: vec![x1.shape().to_vec(), x2.shape().to_vec()],
            reason: format!("the extents along axis {axis} must be equal"),
        });
    }
    // The standard conjugates the first argument of a complex dot product.
    let x1 = if x1.dtype().is_complex() { &crate::conj(x1)? } else { x1 };
    let product = crate::multiply(x1, x2)?;
    crate::sum(&product, axis as isize, false)?.astype(product.dtype())
}

impl Array {
    /// Method form of [`matmul`].
    pub fn matmul(&self, other: &Array) -> Result<Array> {
        matmul(self, other)
    }
}
