//! Exact comparisons of integers whose promoted dtype cannot hold both.
//!
//! Arithmetic on a signed integer and a `u64` promotes to `f64` (no
//! integer dtype holds both), but a comparison computed there is wrong
//! above 2^53: `equal(i64::MAX, 2^63 as u64)` would be true. Comparisons
//! instead split on the sign of the signed operand: a negative value is
//! below every `u64`, and a non-negative one compares exactly as `u64`.
//! An integer scalar outside the array's dtype (NumPy 2 accepts these in
//! comparisons) is above or below every element. Both are composed from
//! primitives every backend has (`less`, a cast, a comparison of `u64`s,
//! `where`), so they are exact on every device.

use crate::array::Array;
use crate::dispatch::Arg;
use crate::elementwise::Domain;
use crate::promote::{result_type, Weak};
use anydev_core::{DType, Result};
use anydev_ops::{BinaryOp, DTypeKind};
use std::cmp::Ordering;

/// `op(x1, x2)` when it is a comparison of integers the ordinary path
/// would get wrong or refuse; `None` for every other call.
pub(crate) fn exact_integer_comparison(op: BinaryOp, x1: Arg<'_>, x2: Arg<'_>) -> Result<Option<Array>> {
    if !is_comparison(op) {
        return Ok(None);
    }
    match (x1, x2) {
        (Arg::Array(a), Arg::Array(b)) if needs_split(a.dtype(), b.dtype()) => split_on_sign(op, a, b).map(Some),
        (Arg::Array(a), Arg::Scalar(Weak::Int(v))) => out_of_range(op, a, v, Ordering::Less),
        (Arg::Scalar(Weak::Int(v)), Arg::Array(b)) => out_of_range(op, b, v, Ordering::Greater),
        _ => Ok(None),
    }
}

fn is_comparison(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(op, Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual)
}

/// Whether two integer dtypes promote to a float.
fn needs_split(a: DType, b: DType) -> bool {
    a.is_integer() && b.is_integer() && result_type(a, b).is_float()
}

/// Whether `op(x1, x2)` holds when `x1` compares as `ordering` to `x2`.
fn holds(op: BinaryOp, ordering: Ordering) -> bool {
    use BinaryOp::*;
    match op {
        Equal => ordering.is_eq(),
        NotEqual => ordering.is_ne(),
        Less => ordering.is_lt(),
        LessEqual => ordering.is_le(),
        Greater => ordering.is_gt(),
        _ => ordering.is_ge(),
    }
}

/// A signed integer array against a `u64` one (either side).
fn split_on_sign(op: BinaryOp, a: &Array, b: &Array) -> Result<Array> {
    let (signed, signed_first) = if a.dtype().kind() == DTypeKind::SignedInt {
        (a, true)
    } else {
        (b, false)
    };
    let negative = signed.less(0)?;
    let (ua, ub) = (a.astype(DType::U64)?, b.astype(DType::U64)?);
    let as_unsigned = crate::elementwise::binary(op, Domain::Any, Arg::Array(&ua), Arg::Array(&ub))?;
    // Where the signed operand is negative it is below the other.
    let ordering = if signed_first {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    crate::where_(&negative, Weak::Bool(holds(op, ordering)), &as_unsigned)
}

/// An integer array `x` against the integer scalar `v` that its dtype
/// cannot hold; `when_above` is how the first operand compares to the
/// second when `v` is above every element (Less with `x` first).
fn out_of_range(op: BinaryOp, x: &Array, v: i128, when_above: Ordering) -> Result<Option<Array>> {
    if !x.dtype().is_integer() || Weak::Int(v).to_scalar("compare", x.dtype()).is_ok() {
        return Ok(None);
    }
    // Every integer dtype holds 0, so `v` is beyond one end of the range.
    let ordering = if v > 0 { when_above } else { when_above.reverse() };
    crate::full_like(x, Weak::Bool(holds(op, ordering)), DType::Bool).map(Some)
}
