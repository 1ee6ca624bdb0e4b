//! Complex op dispatch: elementwise functions, arithmetic and equality,
//! casts to and from every dtype, sums, products and scans.

use super::{math, Cplx};
use crate::binary::src;
use crate::dispatch::with_any;
use crate::element::{cast as cast_one, Element};
use crate::error::{invalid, KernelError};
use crate::iter::{GRAIN_CHEAP, GRAIN_HEAVY};
use crate::map::{map1, map2, Src};
use crate::reduce::{drive, Prod, Sum, Truth};
use crate::tensor::HostTensor;
use anydev_ops::{BinaryOp, DType, OpCode, Operand, ReduceOp, UnaryOp};
use num_complex::{Complex32, Complex64};

/// Calls `$f::<T>` with `T` the element type of complex `$dt`.
macro_rules! with_complex {
    ($dt:expr, |$T:ident| $body:expr, $other:expr) => {
        match $dt {
            DType::C64 => {
                type $T = Complex32;
                $body
            }
            DType::C128 => {
                type $T = Complex64;
                $body
            }
            _ => $other,
        }
    };
}

fn not_complex<R>(what: &str, dt: DType) -> Result<R, KernelError> {
    invalid(format!("{what}: {dt} is not a complex dtype"))
}

/// Runs `out = op(x)` for complex `x`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn unary(op: UnaryOp, x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    // SAFETY: forwarded from the caller.
    with_complex!(
        x.dtype,
        |T| unsafe { unary_typed::<T>(op, x, out) },
        not_complex("unary", x.dtype)
    )
}

unsafe fn unary_typed<T: Cplx>(op: UnaryOp, x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    use UnaryOp::*;
    let src = Src::<T>::Tensor(*x);
    let (cheap, heavy) = (GRAIN_CHEAP, GRAIN_HEAVY);
    let f: fn(Complex64) -> Complex64 = match op {
        // SAFETY (every early return): forwarded from the caller.
        Abs => return unsafe { map1(src, out, cheap, |v: T| T::R::from_f64(math::abs(v.up()))) },
        Real => return unsafe { map1(src, out, cheap, |v: T| v.re()) },
        Imag => return unsafe { map1(src, out, cheap, |v: T| v.im()) },
        IsNan => return unsafe { map1(src, out, cheap, |v: T| v.re().is_nan() || v.im().is_nan()) },
        IsInf => return unsafe { map1(src, out, cheap, |v: T| v.re().is_inf() || v.im().is_inf()) },
        IsFinite => {
            return unsafe {
                map1(src, out, cheap, |v: T| {
                    !(v.re().is_nan() || v.re().is_inf() || v.im().is_nan() || v.im().is_inf())
                })
            }
        }
        Conj => |z| z.conj(),
        Negative => |z| -z,
        Square => math::square,
        Round => math::round,
        Sign => math::sign,
        Reciprocal => math::reciprocal,
        Sqrt => math::sqrt,
        Exp => math::exp,
        Expm1 => math::expm1,
        Log => math::log,
        Log1p => math::log1p,
        Log2 => math::log2,
        Log10 => math::log10,
        Sin => math::sin,
        Cos => math::cos,
        Tan => math::tan,
        Sinh => math::sinh,
        Cosh => math::cosh,
        Tanh => math::tanh,
        Asin => math::asin,
        Acos => math::acos,
        Atan => math::atan,
        Asinh => math::asinh,
        Acosh => math::acosh,
        Atanh => math::atanh,
        _ => {
            return Err(KernelError::Unsupported {
                op: OpCode::Unary(op),
                dtype: x.dtype,
            })
        }
    };
    let grain = if matches!(op, Conj | Negative | Square | Round) {
        cheap
    } else {
        heavy
    };
    // SAFETY: forwarded from the caller.
    unsafe { map1(src, out, grain, |v: T| T::down(f(v.up()))) }
}

/// Runs `out = op(lhs, rhs)` for complex operands.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn binary(
    op: BinaryOp,
    lhs: &Operand<HostTensor>,
    rhs: &Operand<HostTensor>,
    out: &HostTensor,
) -> Result<(), KernelError> {
    let dt = lhs.dtype();
    // SAFETY: forwarded from the caller.
    with_complex!(
        dt,
        |T| unsafe { binary_typed::<T>(op, lhs, rhs, out) },
        not_complex("binary", dt)
    )
}

unsafe fn binary_typed<T: Cplx>(
    op: BinaryOp,
    lhs: &Operand<HostTensor>,
    rhs: &Operand<HostTensor>,
    out: &HostTensor,
) -> Result<(), KernelError> {
    use BinaryOp::*;
    let (a, b) = (src::<T>(lhs)?, src::<T>(rhs)?);
    let f: fn(Complex64, Complex64) -> Complex64 = match op {
        // SAFETY (both early returns): forwarded from the caller.
        Equal => return unsafe { map2(a, b, out, GRAIN_CHEAP, |x: T, y: T| x == y) },
        NotEqual => return unsafe { map2(a, b, out, GRAIN_CHEAP, |x: T, y: T| x != y) },
        Add => |x, y| x + y,
        Subtract => |x, y| x - y,
        Multiply => math::mul,
        Divide => math::div,
        Pow => math::pow,
        _ => {
            return Err(KernelError::Unsupported {
                op: OpCode::Binary(op),
                dtype: T::DTYPE,
            })
        }
    };
    let grain = if op == Pow { GRAIN_HEAVY } else { GRAIN_CHEAP };
    // SAFETY: forwarded from the caller.
    unsafe { map2(a, b, out, grain, |x: T, y: T| T::down(f(x.up(), y.up()))) }
}

/// `astype` with a complex source or target: real to complex sets the
/// imaginary part to 0; complex to bool is `!= 0`; complex to another
/// real dtype takes the real part (the array layer refuses that cast,
/// the kernel only defines it); complex to complex converts components.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn cast(x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    // SAFETY (every arm): forwarded from the caller.
    unsafe {
        match (x.dtype.is_complex(), out.dtype.is_complex()) {
            (true, true) => with_complex!(
                x.dtype,
                |S| with_complex!(
                    out.dtype,
                    |D| map1(Src::<S>::Tensor(*x), out, GRAIN_CHEAP, |v: S| D::down(v.up())),
                    unreachable!()
                ),
                unreachable!()
            ),
            (true, false) => with_complex!(
                x.dtype,
                |S| with_any!(out.dtype, |D| map1(
                    Src::<S>::Tensor(*x),
                    out,
                    GRAIN_CHEAP,
                    from_complex::<S, D>
                )),
                unreachable!()
            ),
            (false, true) => with_complex!(
                out.dtype,
                |D| with_any!(x.dtype, |S| map1(
                    Src::<S>::Tensor(*x),
                    out,
                    GRAIN_CHEAP,
                    to_complex::<S, D>
                )),
                unreachable!()
            ),
            (false, false) => invalid("complex cast of real dtypes"),
        }
    }
}

#[inline(always)]
fn from_complex<S: Cplx, D: Element>(v: S) -> D {
    if D::DTYPE == DType::Bool {
        D::from_i128((v != S::default()) as i128)
    } else {
        cast_one::<S::R, D>(v.re())
    }
}

#[inline(always)]
fn to_complex<S: Element, D: Cplx>(v: S) -> D {
    D::from_parts(cast_one::<S, D::R>(v), D::R::default())
}

/// Complex `sum`, `prod`, `all` and `any` (others have no complex
/// meaning). Output shape and dtype were checked by the caller.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn reduce(op: ReduceOp, x: &HostTensor, axes: &[usize], out: &HostTensor) -> Result<(), KernelError> {
    // SAFETY (every arm): forwarded from the caller.
    with_complex!(
        x.dtype,
        |T| unsafe {
            match op {
                ReduceOp::Sum => drive::<T, _>(x, axes, out, Sum),
                ReduceOp::Prod => drive::<T, _>(x, axes, out, Prod),
                ReduceOp::All => drive::<T, _>(x, axes, out, Truth::<true>),
                ReduceOp::Any => drive::<T, _>(x, axes, out, Truth::<false>),
                _ => Err(KernelError::Unsupported {
                    op: OpCode::Reduce(op),
                    dtype: x.dtype,
                }),
            }
        },
        not_complex("reduce", x.dtype)
    )
}

/// Complex `cumulative_sum` / `cumulative_prod` (checked by the caller).
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn scan(x: &HostTensor, axis: usize, out: &HostTensor, prod: bool) -> Result<(), KernelError> {
    // SAFETY: forwarded from the caller.
    with_complex!(
        x.dtype,
        |T| unsafe { crate::scan::scan_typed::<T>(x, axis, out, prod) },
        not_complex("scan", x.dtype)
    )
}
