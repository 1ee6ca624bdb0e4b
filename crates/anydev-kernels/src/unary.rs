//! Elementwise functions of one argument.

use crate::arith::{lift1, lift1_wide, Num};
use crate::dispatch::{with_any, with_bits, with_float, with_numeric};
use crate::element::{Element, Float};
use crate::error::KernelError;
use crate::hyperbolic;
use crate::iter::{GRAIN_CHEAP, GRAIN_HEAVY, GRAIN_MATH};
use crate::map::{map1, Src, Vectorised};
use crate::tensor::HostTensor;
use crate::vmath::VMath;
use anydev_ops::{OpCode, UnaryOp};

/// The [`VMath`] functions of storage types, in their compute type, as
/// function items that the dispatched row loops inline.
macro_rules! vmath_items {
    ($($name:ident),*) => {$(
        #[inline(always)]
        fn $name<T: Float>(v: T) -> T
        where
            T::C: VMath,
        {
            lift1(v, VMath::$name)
        }
    )*};
}
vmath_items!(exp, exp_m1, ln, ln_1p, tanh);

/// Runs `out = op(x)`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn unary(op: UnaryOp, x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    use UnaryOp::*;
    let dt = x.dtype;
    let unsupported = || {
        Err(KernelError::Unsupported {
            op: OpCode::Unary(op),
            dtype: dt,
        })
    };
    let (cheap, math, heavy) = (GRAIN_CHEAP, Vectorised(GRAIN_MATH), GRAIN_HEAVY);
    macro_rules! run {
        ($T:ty, $grain:expr, $f:expr) => {
            // SAFETY: forwarded from the caller.
            unsafe { map1(Src::<$T>::Tensor(*x), out, $grain, $f) }
        };
    }
    if dt.is_complex() {
        // SAFETY: forwarded from the caller.
        return unsafe { crate::complex::unary(op, x, out) };
    }
    match op {
        IsFinite => with_any!(dt, |T| run!(T, cheap, |v: T| !(v.is_nan() || v.is_inf()))),
        IsInf => with_any!(dt, |T| run!(T, cheap, |v: T| v.is_inf())),
        IsNan => with_any!(dt, |T| run!(T, cheap, |v: T| Element::is_nan(v))),
        SignBit => with_numeric!(dt, |T| run!(T, cheap, |v: T| v.sign_bit()), unsupported()),
        LogicalNot if dt == anydev_ops::DType::Bool => run!(bool, cheap, |v: bool| !v),
        BitwiseInvert => with_bits!(dt, |T| run!(T, cheap, |v: T| !v), unsupported()),
        Abs | Negative | Sign | Square | Round | Floor | Ceil | Trunc => with_numeric!(
            dt,
            |T| match op {
                Abs => run!(T, cheap, <T as Num>::abs),
                Negative => run!(T, cheap, <T as Num>::neg),
                Sign => run!(T, cheap, <T as Num>::sign),
                Square => run!(T, cheap, |v: T| <T as Num>::mul(v, v)),
                Round => run!(T, cheap, <T as Num>::round),
                Floor => run!(T, cheap, <T as Num>::floor),
                Ceil => run!(T, cheap, <T as Num>::ceil),
                _ => run!(T, cheap, <T as Num>::trunc),
            },
            unsupported()
        ),
        _ => with_float!(
            dt,
            |T| match op {
                Acos => run!(T, heavy, |v: T| lift1(v, |c| c.acos())),
                Acosh => run!(T, heavy, |v: T| lift1_wide(v, hyperbolic::acosh)),
                Asin => run!(T, heavy, |v: T| lift1(v, |c| c.asin())),
                Asinh => run!(T, heavy, |v: T| lift1_wide(v, hyperbolic::asinh)),
                Atan => run!(T, heavy, |v: T| lift1(v, |c| c.atan())),
                Atanh => run!(T, heavy, |v: T| lift1_wide(v, hyperbolic::atanh)),
                Cos => run!(T, heavy, |v: T| lift1(v, |c| c.cos())),
                Cosh => run!(T, heavy, |v: T| lift1_wide(v, f64::cosh)),
                Exp => run!(T, math, exp::<T>),
                Expm1 => run!(T, math, exp_m1::<T>),
                Log => run!(T, math, ln::<T>),
                Log1p => run!(T, math, ln_1p::<T>),
                Log2 => run!(T, heavy, |v: T| lift1(v, |c| c.log2())),
                Log10 => run!(T, heavy, |v: T| lift1(v, |c| c.log10())),
                Sin => run!(T, heavy, |v: T| lift1(v, |c| c.sin())),
                Sinh => run!(T, heavy, |v: T| lift1_wide(v, f64::sinh)),
                Tan => run!(T, heavy, |v: T| lift1(v, |c| c.tan())),
                Tanh => run!(T, math, tanh::<T>),
                Sqrt => run!(T, cheap, |v: T| lift1(v, |c| c.sqrt())),
                Reciprocal => run!(T, cheap, |v: T| lift1(v, |c| 1.0 / c)),
                _ => unsupported(),
            },
            unsupported()
        ),
    }
}
