//! Elementwise functions, `where`, `clip` and `astype`.
//!
//! Every function here goes through [`prepare`]: placement (one device for
//! all array operands, scalars take it), promotion (arrays by the table,
//! Rust scalars weakly), the op's dtype domain, and broadcasting by zero
//! strides. Scalar operands reach the backend as `Operand::Scalar`, never
//! as device arrays.
//!
//! Semantics the backends implement (see `anydev_ops`): integer overflow
//! wraps; integer `floor_divide` and `remainder` by zero give 0 (no panic);
//! `round` is half to even; `remainder` takes the divisor's sign.

use crate::array::Array;
use crate::context::DeviceCtx;
use crate::dispatch::{alloc, arrays_of, execute, same_device, Arg, IntoArg};
use crate::promote::{self, Weak, DEFAULT_FLOAT};
use crate::shape::{self, Dims};
use anydev_core::ops::{Op, Operand};
use anydev_core::{DType, Error, Result, Scalar, TensorRef};
use anydev_ops::{BinaryOp, UnaryOp};
use std::sync::Arc;

/// Which dtypes an op accepts once its operands are promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Domain {
    /// Every dtype.
    Any,
    /// Every dtype but the complex ones, which have no order
    /// (comparisons, `maximum`, `minimum`).
    Ordered,
    /// Integers, floats and complex; bool is an error.
    Numeric,
    /// Integers and real floats (`floor`, `remainder`, `signbit`, ...).
    RealNumeric,
    /// Real floats. Integers compute in the float NumPy's loops pick:
    /// `f16` for 8-bit, `f32` for 16-bit, `f64` for wider integers (see
    /// `docs/semantics.md`); bool is an error (the standard requires a
    /// float).
    Float,
    /// Real and complex floats; integers as in [`Domain::Float`].
    Inexact,
    /// Real and complex floats; integers compute in the default float
    /// dtype, as NumPy's `true_divide` and `mean` do.
    DefaultFloat,
    /// Integers and bool (bitwise ops).
    Bits,
    /// Integers only (shifts).
    Int,
    /// Bool; other dtypes are read as `x != 0`.
    Logical,
}

impl Domain {
    /// The dtype the op computes in, or why `dtype` is not accepted.
    pub(crate) fn apply(self, op: &str, dtype: DType) -> Result<DType> {
        let reject = |what: &str| {
            Err(Error::InvalidDType {
                op: op.to_owned(),
                dtype,
                reason: format!("{op} needs {what}"),
            })
        };
        let complex = dtype.is_complex();
        match self {
            Domain::Any => Ok(dtype),
            Domain::Ordered | Domain::RealNumeric | Domain::Float if complex => {
                reject("a real dtype; complex numbers have no order (compare real() or abs() instead)")
            }
            Domain::Ordered => Ok(dtype),
            Domain::Numeric | Domain::RealNumeric if dtype == DType::Bool => {
                reject("a numeric dtype; convert bools with astype first")
            }
            Domain::Numeric | Domain::RealNumeric => Ok(dtype),
            Domain::Inexact | Domain::DefaultFloat if complex => Ok(dtype),
            Domain::Float | Domain::Inexact | Domain::DefaultFloat if dtype.is_float() => Ok(dtype),
            Domain::Float | Domain::Inexact if dtype.is_integer() => Ok(match dtype.size() {
                1 => DType::F16,
                2 => DType::F32,
                _ => DType::F64,
            }),
            Domain::DefaultFloat if dtype.is_integer() => Ok(DEFAULT_FLOAT),
            Domain::Float | Domain::Inexact | Domain::DefaultFloat => reject("a floating-point or integer dtype"),
            Domain::Bits if dtype.is_inexact() => reject("an integer or bool dtype"),
            Domain::Bits => Ok(dtype),
            Domain::Int if dtype.is_integer() => Ok(dtype),
            Domain::Int => reject("an integer dtype"),
            Domain::Logical => Ok(DType::Bool),
        }
    }
}

/// An operand after promotion and broadcasting: the caller's array when
/// nothing had to change, a converted view, or a scalar of the op's dtype.
pub(crate) enum Prep<'a> {
    Borrowed(&'a Array),
    Owned(Array),
    Scalar(Scalar),
}

impl Prep<'_> {
    pub(crate) fn operand(&self) -> Operand<TensorRef<'_>> {
        match self {
            Prep::Borrowed(a) => Operand::Tensor(a.tensor_ref()),
            Prep::Owned(a) => Operand::Tensor(a.tensor_ref()),
            Prep::Scalar(s) => Operand::Scalar(*s),
        }
    }

    /// The operand viewed with `shape` (scalars need no view).
    fn broadcast(self, shape: &[usize]) -> Result<Self> {
        Ok(match self {
            Prep::Borrowed(a) if a.shape() != shape => Prep::Owned(a.broadcast_to(shape)?),
            Prep::Owned(a) if a.shape() != shape => Prep::Owned(a.broadcast_to(shape)?),
            other => other,
        })
    }
}

/// Operands of one elementwise call, ready for the backend.
pub(crate) struct Prepared<'a, const N: usize> {
    pub ctx: &'a Arc<DeviceCtx>,
    /// The dtype the op computes in.
    pub dtype: DType,
    pub shape: Dims,
    pub args: [Prep<'a>; N],
}

/// Placement, promotion, domain and broadcasting for `args`. `others`
/// (the condition of `where`) share the device and the broadcast shape but
/// not the dtype.
pub(crate) fn prepare<'a, const N: usize>(
    op: &str,
    args: [Arg<'a>; N],
    domain: Domain,
    others: &[&'a Array],
) -> Result<Prepared<'a, N>> {
    let mut arrays = arrays_of(&args);
    let typed = arrays.len();
    arrays.extend_from_slice(others);
    if arrays.is_empty() {
        return Err(Error::invalid_argument(
            op,
            "needs at least one array operand; got only scalars",
        ));
    }
    let ctx = same_device(op, &arrays)?;
    let mut dtype = promote::result_type_all(arrays[..typed].iter().map(|a| a.dtype()));
    for arg in &args {
        if let Arg::Scalar(w) = arg {
            dtype = Some(dtype.map_or(w.natural_dtype(), |d| w.promote_with(d)));
        }
    }
    // Integers meeting floats land on the device's floats (design 14).
    let wanted = domain.apply(op, dtype.expect("an array or a scalar operand"))?;
    let dtype = ctx.float_for(wanted);
    // That narrowing stands in for a width only integers asked for: an
    // operand's own float precision is never dropped (`f64` with `c64`
    // on a device without `c128` is refused, not computed in `c64`). Ops
    // that compute in bool (the logical ones) read floats as `x != 0`.
    let precision = |d: DType| if d.is_inexact() { d.real_dtype().size() } else { 0 };
    if dtype != DType::Bool && arrays[..typed].iter().any(|a| precision(a.dtype()) > precision(dtype)) {
        return Err(Error::UnsupportedDType {
            dtype: wanted,
            device: ctx.device,
        });
    }
    let first = arrays[0].shape();
    let shape: Dims = if arrays.iter().all(|a| a.shape() == first) {
        first.into()
    } else {
        let shapes: smallvec::SmallVec<[&[usize]; 4]> = arrays.iter().map(|a| a.shape()).collect();
        shape::broadcast_shapes(op, &shapes)?
    };
    let convert = |arg: Arg<'a>| -> Result<Prep<'a>> {
        match arg {
            Arg::Array(a) if a.dtype() == dtype => Prep::Borrowed(a).broadcast(&shape),
            Arg::Array(a) => Prep::Owned(a.astype(dtype)?).broadcast(&shape),
            Arg::Scalar(w) if domain == Domain::Logical => Ok(Prep::Scalar(Scalar::Bool(w.is_nonzero()))),
            Arg::Scalar(w) => match w.to_scalar(op, dtype)? {
                wide @ Scalar::C128(_) => Prep::Owned(crate::dispatch::scalar_array(ctx, wide)?).broadcast(&shape),
                s => Ok(Prep::Scalar(s)),
            },
        }
    };
    // A fixed-size array, not a Vec: no heap allocation per call.
    let converted = args.map(convert);
    if let Some(Err(e)) = converted.iter().find(|r| r.is_err()) {
        return Err(e.clone());
    }
    let args = converted.map(|r| r.unwrap_or_else(|_| unreachable!("errors returned above")));
    Ok(Prepared {
        ctx,
        dtype,
        shape,
        args,
    })
}

pub(crate) fn unary(op: UnaryOp, domain: Domain, x: &Array) -> Result<Array> {
    let dtype = x.ctx().float_for(domain.apply(op.name(), x.dtype())?);
    let converted;
    let x = if dtype == x.dtype() {
        x
    } else {
        converted = x.astype(dtype)?;
        &converted
    };
    let out = alloc(x.ctx(), op.output_dtype(dtype), x.shape())?;
    execute(
        x.ctx(),
        &Op::Unary {
            op,
            x: x.tensor_ref(),
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

pub(crate) fn binary(op: BinaryOp, domain: Domain, x1: Arg<'_>, x2: Arg<'_>) -> Result<Array> {
    if let Some(exact) = crate::compare::exact_integer_comparison(op, x1, x2)? {
        return Ok(exact);
    }
    if let (Arg::Array(a), Arg::Array(b)) = (x1, x2) {
        // Fast path: same dtype and shape need no promotion, no broadcast
        // views and no operand bookkeeping.
        if a.dtype() == b.dtype() && a.shape() == b.shape() && domain.apply(op.name(), a.dtype())? == a.dtype() {
            let ctx = same_device(op.name(), &[a, b])?;
            let out_dtype = if op.outputs_bool() { DType::Bool } else { a.dtype() };
            let out = alloc(ctx, out_dtype, a.shape())?;
            execute(
                ctx,
                &Op::Binary {
                    op,
                    lhs: Operand::Tensor(a.tensor_ref()),
                    rhs: Operand::Tensor(b.tensor_ref()),
                    out: out.tensor_ref(),
                },
            )?;
            return Ok(out);
        }
    }
    let p = prepare(op.name(), [x1, x2], domain, &[])?;
    let out_dtype = if op.outputs_bool() { DType::Bool } else { p.dtype };
    let out = alloc(p.ctx, out_dtype, &p.shape)?;
    let [lhs, rhs] = &p.args;
    execute(
        p.ctx,
        &Op::Binary {
            op,
            lhs: lhs.operand(),
            rhs: rhs.operand(),
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

/// Declares the unary functions (free function and method) with their
/// domains.
macro_rules! unary_ops {
    ($($name:ident => $op:ident, $domain:ident;)*) => {
        $(
            #[doc = concat!("Elementwise `", stringify!($name), "` (Array API standard).")]
            pub fn $name(x: &Array) -> Result<Array> {
                unary(UnaryOp::$op, Domain::$domain, x)
            }
        )*
        impl Array {
            $(
                #[doc = concat!("Method form of [`", stringify!($name), "`](crate::", stringify!($name), ").")]
                pub fn $name(&self) -> Result<Array> {
                    $name(self)
                }
            )*
        }
    };
}

unary_ops! {
    abs => Abs, Numeric;
    acos => Acos, Inexact;
    acosh => Acosh, Inexact;
    asin => Asin, Inexact;
    asinh => Asinh, Inexact;
    atan => Atan, Inexact;
    atanh => Atanh, Inexact;
    bitwise_invert => BitwiseInvert, Bits;
    ceil => Ceil, RealNumeric;
    cos => Cos, Inexact;
    cosh => Cosh, Inexact;
    exp => Exp, Inexact;
    expm1 => Expm1, Inexact;
    floor => Floor, RealNumeric;
    isfinite => IsFinite, Any;
    isinf => IsInf, Any;
    isnan => IsNan, Any;
    log => Log, Inexact;
    log1p => Log1p, Inexact;
    log2 => Log2, Inexact;
    log10 => Log10, Inexact;
    logical_not => LogicalNot, Logical;
    negative => Negative, Numeric;
    reciprocal => Reciprocal, Inexact;
    round => Round, Numeric;
    sign => Sign, Numeric;
    signbit => SignBit, RealNumeric;
    sin => Sin, Inexact;
    sinh => Sinh, Inexact;
    square => Square, Numeric;
    sqrt => Sqrt, Inexact;
    tan => Tan, Inexact;
    tanh => Tanh, Inexact;
    trunc => Trunc, RealNumeric;
}

/// The complex conjugate (Array API standard); real input is returned
/// as it is.
pub fn conj(x: &Array) -> Result<Array> {
    component(UnaryOp::Conj, x)
}

/// The real part (Array API standard): the component dtype of complex
/// input (`f32` for `c64`); real input is returned as it is.
pub fn real(x: &Array) -> Result<Array> {
    component(UnaryOp::Real, x)
}

/// The imaginary part (Array API standard): the component dtype of
/// complex input; zeros of real input's dtype for real input.
pub fn imag(x: &Array) -> Result<Array> {
    component(UnaryOp::Imag, x)
}

/// `conj`, `real` and `imag`: a kernel for complex input, none for real
/// input, where their results need no computation.
fn component(op: UnaryOp, x: &Array) -> Result<Array> {
    if x.dtype().is_complex() {
        return unary(op, Domain::Any, x);
    }
    Domain::Numeric.apply(op.name(), x.dtype())?;
    match op {
        UnaryOp::Imag => crate::zeros_like(x, ()),
        _ => Ok(x.clone()),
    }
}

/// Declares the binary functions: `f(x1, x2)` where either operand may be
/// a Rust scalar, and the method `x1.f(x2)`.
macro_rules! binary_ops {
    ($($name:ident => $op:ident, $domain:ident;)*) => {
        $(
            #[doc = concat!("Elementwise `", stringify!($name), "` (Array API standard); either operand may be a Rust scalar.")]
            pub fn $name<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Result<Array> {
                binary(BinaryOp::$op, Domain::$domain, x1.into_arg(), x2.into_arg())
            }
        )*
        impl Array {
            $(
                #[doc = concat!("Method form of [`", stringify!($name), "`](crate::", stringify!($name), ").")]
                pub fn $name<'a>(&'a self, x2: impl IntoArg<'a>) -> Result<Array> {
                    $name(self, x2)
                }
            )*
        }
    };
}

binary_ops! {
    add => Add, Numeric;
    atan2 => Atan2, Float;
    bitwise_and => BitwiseAnd, Bits;
    bitwise_left_shift => BitwiseLeftShift, Int;
    bitwise_or => BitwiseOr, Bits;
    bitwise_right_shift => BitwiseRightShift, Int;
    bitwise_xor => BitwiseXor, Bits;
    copysign => CopySign, Float;
    divide => Divide, DefaultFloat;
    equal => Equal, Any;
    floor_divide => FloorDivide, RealNumeric;
    greater => Greater, Ordered;
    greater_equal => GreaterEqual, Ordered;
    hypot => Hypot, Float;
    less => Less, Ordered;
    less_equal => LessEqual, Ordered;
    logaddexp => LogAddExp, Float;
    logical_and => LogicalAnd, Logical;
    logical_or => LogicalOr, Logical;
    logical_xor => LogicalXor, Logical;
    maximum => Maximum, Ordered;
    minimum => Minimum, Ordered;
    multiply => Multiply, Numeric;
    nextafter => NextAfter, Float;
    not_equal => NotEqual, Any;
    pow => Pow, Numeric;
    remainder => Remainder, RealNumeric;
    subtract => Subtract, Numeric;
}

/// `+x`: the array itself (numeric dtypes only).
pub fn positive(x: &Array) -> Result<Array> {
    Domain::Numeric.apply("positive", x.dtype())?;
    Ok(x.clone())
}

/// `cond ? x1 : x2` elementwise, broadcasting all three. `cond` is read as
/// `cond != 0` when not bool; `x1`/`x2` may be Rust scalars.
pub fn where_<'a>(cond: &'a Array, x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Result<Array> {
    let p = prepare("where", [x1.into_arg(), x2.into_arg()], Domain::Any, &[cond])?;
    let cond = cond.astype(DType::Bool)?.broadcast_to(&p.shape)?;
    let [a, b] = &p.args;
    let out = alloc(p.ctx, p.dtype, &p.shape)?;
    execute(
        p.ctx,
        &Op::Where {
            cond: cond.tensor_ref(),
            x: a.operand(),
            y: b.operand(),
            out: out.tensor_ref(),
        },
    )?;
    Ok(out)
}

/// A scalar clip bound pulled into `dtype`'s range, so that bounds outside
/// an integer dtype's range mean "no bound" instead of an error.
fn clamp_bound(bound: Arg<'_>, dtype: DType) -> Arg<'_> {
    match (bound, promote::int_limits(dtype)) {
        (Arg::Scalar(Weak::Int(v)), Some((lo, hi))) => Arg::Scalar(Weak::Int(v.clamp(lo, hi))),
        (other, _) => other,
    }
}

/// A clip bound: `()` for none, else anything [`IntoArg`] (a Rust scalar
/// or `&Array`), or an `Option<Arg>`.
pub trait IntoBound<'a> {
    fn into_bound(self) -> Option<Arg<'a>>;
}

impl<'a, T: IntoArg<'a>> IntoBound<'a> for T {
    fn into_bound(self) -> Option<Arg<'a>> {
        Some(self.into_arg())
    }
}

impl<'a> IntoBound<'a> for Option<Arg<'a>> {
    fn into_bound(self) -> Option<Arg<'a>> {
        self
    }
}

impl IntoBound<'_> for () {
    fn into_bound(self) -> Option<Arg<'static>> {
        None
    }
}

/// `min(max(x, low), high)` elementwise, in `x`'s dtype (the standard's
/// rule); a bound may be absent (`()`), a Rust scalar, or an array on
/// `x`'s device; the result has the broadcast shape of `x` and the bounds.
/// NaN in `x` stays NaN.
pub fn clip<'a>(x: &'a Array, min: impl IntoBound<'a>, max: impl IntoBound<'a>) -> Result<Array> {
    let (min, max) = (min.into_bound(), max.into_bound());
    let bounds: smallvec::SmallVec<[Arg<'a>; 2]> = min.into_iter().chain(max).collect();
    let mut all = arrays_of(&bounds);
    all.insert(0, x);
    same_device("clip", &all)?;
    Domain::RealNumeric.apply("clip", x.dtype())?;
    // A float bound cannot be honoured in an integer dtype without
    // rounding it one way or the other: refused, as array-api-strict does
    // (NumPy 2 would return floats, the standard says x's dtype).
    let float_bound = bounds.iter().find(|b| match b {
        Arg::Scalar(w) => matches!(w, Weak::Float(_)),
        Arg::Array(a) => a.dtype().is_float(),
    });
    if let (Some(bound), false) = (float_bound, x.dtype().is_float()) {
        return Err(Error::InvalidDType {
            op: "clip".into(),
            dtype: x.dtype(),
            reason: format!(
                "a float bound ({}) cannot clip an array of {}; cast the array or round the bound first",
                match bound {
                    Arg::Scalar(w) => w.to_string(),
                    Arg::Array(a) => format!("an array of {}", a.dtype()),
                },
                x.dtype()
            ),
        });
    }
    // The result has the broadcast shape of x and the bounds (the
    // standard's, NumPy's); shapes that do not broadcast fail as clip's.
    let shapes: smallvec::SmallVec<[&[usize]; 3]> = all.iter().map(|a| a.shape()).collect();
    shape::broadcast_shapes("clip", &shapes)?;
    let mut out = x.clone();
    for (bound, op) in [(min, BinaryOp::Maximum), (max, BinaryOp::Minimum)] {
        let Some(bound) = bound else { continue };
        let narrowed = match bound {
            Arg::Array(a) => saturated(a, x.dtype())?,
            _ => None,
        };
        let bound = narrowed
            .as_ref()
            .map_or_else(|| clamp_bound(bound, x.dtype()), Arg::Array);
        out = binary(op, Domain::Ordered, Arg::Array(&out), bound)?;
    }
    out.astype(x.dtype())
}

/// An integer array bound of another integer dtype than `dtype`'s, its
/// values saturated to `dtype`'s range (in its own dtype) and cast to
/// `dtype`: the comparison then runs in `dtype`, where promoting would
/// wrap a wider bound on the way back (`i16` 1000 for `i8`) or round
/// 64-bit values in `f64` (`i64` with `u64`). `None` for other bounds.
fn saturated(bound: &Array, dtype: DType) -> Result<Option<Array>> {
    let (Some((lo, hi)), Some((bound_lo, bound_hi))) = (promote::int_limits(dtype), promote::int_limits(bound.dtype()))
    else {
        return Ok(None);
    };
    if bound.dtype() == dtype {
        return Ok(None);
    }
    let low = binary(
        BinaryOp::Maximum,
        Domain::Ordered,
        Arg::Array(bound),
        Arg::Scalar(Weak::Int(lo.max(bound_lo))),
    )?;
    let both = binary(
        BinaryOp::Minimum,
        Domain::Ordered,
        Arg::Array(&low),
        Arg::Scalar(Weak::Int(hi.min(bound_hi))),
    )?;
    both.astype(dtype).map(Some)
}

impl Array {
    /// The array converted to `dtype` (on its own device, which must hold
    /// `dtype`). Floats to integers truncate toward zero and saturate, NaN
    /// becomes 0; integers wrap; anything to bool is `!= 0`; real values
    /// become complex with a zero imaginary part. Complex to a real dtype
    /// other than bool is an error, as the standard asks: the imaginary
    /// part is never dropped silently (take `real`, `imag` or `abs`).
    /// Converting to the array's own dtype returns the array.
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        if dtype == self.dtype {
            return Ok(self.clone());
        }
        if self.dtype.is_complex() && !dtype.is_complex() && dtype != DType::Bool {
            return Err(Error::InvalidDType {
                op: "astype".into(),
                dtype: self.dtype,
                reason: format!(
                    "casting {} to {dtype} would drop the imaginary part; take real(), imag() or abs() first",
                    self.dtype
                ),
            });
        }
        let out = alloc(self.ctx(), dtype, self.shape())?;
        execute(
            self.ctx(),
            &Op::Cast {
                x: self.tensor_ref(),
                out: out.tensor_ref(),
            },
        )?;
        Ok(out)
    }

    /// [`Array::astype`] then [`Array::to_device`].
    pub fn astype_on(&self, dtype: DType, device: anydev_core::Device) -> Result<Array> {
        self.astype(dtype)?.to_device(device)
    }

    /// Method form of [`where_`] with `self` as the condition.
    pub fn select<'a>(&'a self, x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Result<Array> {
        where_(self, x1, x2)
    }

    /// Method form of [`clip`].
    pub fn clip<'a>(&'a self, min: impl IntoBound<'a>, max: impl IntoBound<'a>) -> Result<Array> {
        clip(self, min, max)
    }

    /// Method form of [`positive`].
    pub fn positive(&self) -> Result<Array> {
        positive(self)
    }

    /// Method form of [`conj`].
    pub fn conj(&self) -> Result<Array> {
        conj(self)
    }

    /// Method form of [`real`].
    pub fn real(&self) -> Result<Array> {
        real(self)
    }

    /// Method form of [`imag`].
    pub fn imag(&self) -> Result<Array> {
        imag(self)
    }
}
