//! Elementwise functions of two arguments, with the scalar-operand form.

use crate::arith::{ge, gt, le, lift2, logaddexp, lt, maximum, minimum, Int, Num};
use crate::dispatch::{with_any, with_bits, with_float, with_int, with_numeric};
use crate::element::{Compute, Float, Storage};
use crate::error::{invalid, KernelError};
use crate::iter::{GRAIN_CHEAP, GRAIN_HEAVY};
use crate::map::{map2, Src, Vectorised};
use crate::tensor::HostTensor;
use anydev_ops::{BinaryOp, DType, OpCode, Operand};

/// The input as the engine sees it; a scalar must have the op's dtype.
pub(crate) fn src<'a, T: Storage>(o: &Operand<HostTensor<'a>>) -> Result<Src<'a, T>, KernelError> {
    match o {
        Operand::Tensor(t) => Ok(Src::Tensor(*t)),
        Operand::Scalar(s) => match T::from_scalar(*s) {
            Some(v) => Ok(Src::Value(v)),
            None => invalid(format!("scalar {s} ({}) where {} is required", s.dtype(), T::DTYPE)),
        },
    }
}

/// `a / b` in the compute type: a function item, which the dispatched
/// row loops inline.
#[inline(always)]
fn divide<T: Float>(a: T, b: T) -> T {
    T::down(a.up() / b.up())
}

/// Runs `out = op(lhs, rhs)`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn binary(
    op: BinaryOp,
    lhs: &Operand<HostTensor>,
    rhs: &Operand<HostTensor>,
    out: &HostTensor,
) -> Result<(), KernelError> {
    use BinaryOp::*;
    let dt = lhs.dtype();
    if rhs.dtype() != dt {
        return invalid(format!("{op}: operands have dtypes {dt} and {}", rhs.dtype()));
    }
    if dt.is_complex() {
        // SAFETY: forwarded from the caller.
        return unsafe { crate::complex::binary(op, lhs, rhs, out) };
    }
    let unsupported = || {
        Err(KernelError::Unsupported {
            op: OpCode::Binary(op),
            dtype: dt,
        })
    };
    let (cheap, heavy) = (GRAIN_CHEAP, GRAIN_HEAVY);
    macro_rules! run {
        ($T:ty, $O:ty, $grain:expr, $f:expr) => {
            // SAFETY: forwarded from the caller.
            unsafe { map2::<$T, $T, $O, _, _>(src(lhs)?, src(rhs)?, out, $grain, $f) }
        };
    }
    match op {
        Equal => with_any!(dt, |T| run!(T, bool, cheap, |a: T, b: T| a == b)),
        NotEqual => with_any!(dt, |T| run!(T, bool, cheap, |a: T, b: T| a != b)),
        Less => with_any!(dt, |T| run!(T, bool, cheap, lt::<T>)),
        LessEqual => with_any!(dt, |T| run!(T, bool, cheap, le::<T>)),
        Greater => with_any!(dt, |T| run!(T, bool, cheap, gt::<T>)),
        GreaterEqual => with_any!(dt, |T| run!(T, bool, cheap, ge::<T>)),
        Maximum => with_any!(dt, |T| run!(T, T, cheap, maximum::<T>)),
        Minimum => with_any!(dt, |T| run!(T, T, cheap, minimum::<T>)),
        LogicalAnd | LogicalOr | LogicalXor if dt == DType::Bool => match op {
            LogicalAnd => run!(bool, bool, cheap, |a: bool, b: bool| a & b),
            LogicalOr => run!(bool, bool, cheap, |a: bool, b: bool| a | b),
            _ => run!(bool, bool, cheap, |a: bool, b: bool| a ^ b),
        },
        BitwiseAnd => with_bits!(dt, |T| run!(T, T, cheap, |a: T, b: T| a & b), unsupported()),
        BitwiseOr => with_bits!(dt, |T| run!(T, T, cheap, |a: T, b: T| a | b), unsupported()),
        BitwiseXor => with_bits!(dt, |T| run!(T, T, cheap, |a: T, b: T| a ^ b), unsupported()),
        BitwiseLeftShift => with_int!(dt, |T| run!(T, T, cheap, <T as Int>::shl), unsupported()),
        BitwiseRightShift => with_int!(dt, |T| run!(T, T, cheap, <T as Int>::shr), unsupported()),
        Add | Subtract | Multiply | FloorDivide | Remainder | Pow => with_numeric!(
            dt,
            |T| match op {
                // In cache these are limited by vector width, not memory.
                Add => run!(T, T, Vectorised(cheap), <T as Num>::add),
                Subtract => run!(T, T, Vectorised(cheap), <T as Num>::sub),
                Multiply => run!(T, T, Vectorised(cheap), <T as Num>::mul),
                FloorDivide => run!(T, T, heavy, <T as Num>::floor_div),
                Remainder => run!(T, T, heavy, <T as Num>::rem),
                _ => run!(T, T, heavy, <T as Num>::pow),
            },
            unsupported()
        ),
        _ => with_float!(
            dt,
            |T| match op {
                Divide => run!(T, T, Vectorised(cheap), divide::<T>),
                Atan2 => run!(T, T, heavy, |a: T, b: T| lift2(a, b, |x, y| x.atan2(y))),
                Hypot => run!(T, T, heavy, |a: T, b: T| lift2(a, b, |x, y| x.hypot(y))),
                CopySign => run!(T, T, cheap, |a: T, b: T| lift2(a, b, |x, y| x.copysign(y))),
                // In f64, rounded once: in f32 the cancellation near a zero
                // result (logaddexp(-1.5, -0.1)) costs up to 2 ulp.
                LogAddExp => run!(T, T, heavy, |a: T, b: T| lift2(a, b, |x, y| Compute::of(logaddexp(
                    x.wide(),
                    y.wide()
                )))),
                NextAfter => run!(T, T, cheap, <T as Float>::next_after),
                _ => unsupported(),
            },
            unsupported()
        ),
    }
}
