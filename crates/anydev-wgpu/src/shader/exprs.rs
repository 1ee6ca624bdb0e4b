//! The op half of the kernel generator: one table from op to WGSL
//! expression, per dtype family. A `None` here is the only source of
//! "unsupported" for elementwise ops, so `supports` and the kernels can
//! never disagree.

use super::dtype::Repr;
use anydev_ops::{BinaryOp, DType, UnaryOp};

/// A WGSL expression over the operands `a` (and `b`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A value of the operands' compute type.
    Value(String),
    /// A WGSL `bool` (the op outputs the `bool` dtype).
    Bool(String),
}

impl Expr {
    /// The expression as a value of the output's compute type
    /// (`bool` results become 0/1 `u32`s, the compute type of `bool`).
    pub fn into_value(self) -> String {
        match self {
            Expr::Value(v) => v,
            Expr::Bool(b) => format!("select(0u, 1u, {b})"),
        }
    }
}

fn value(s: impl Into<String>) -> Option<Expr> {
    Some(Expr::Value(s.into()))
}

fn boolean(s: impl Into<String>) -> Option<Expr> {
    Some(Expr::Bool(s.into()))
}

/// Whether the transcendental functions of this compute type are written:
/// f32's in [`super::math_exp`] and [`super::math_trig`], f64's in
/// [`super::math_f64`] (WGSL's built-ins are too loose for f32 and absent
/// for f64).
fn has_transcendentals(r: &Repr) -> bool {
    matches!(r.compute, "f32" | "f64")
}

/// `op(a)` for dtype `r`, or `None` where it is unsupported.
pub fn unary(op: UnaryOp, r: &Repr) -> Option<Expr> {
    use UnaryOp::*;
    let t = r.compute;
    if r.dtype.is_complex() {
        return super::complex::unary(op, r);
    }
    if r.is_float() {
        // Some GPUs' transcendentals lose NaNs; pass them through explicitly.
        let transcendental = |f: &str| {
            has_transcendentals(r).then(|| Expr::Value(format!("select({}, a, isnan_{t}(a))", f.replace("$T", t))))
        };
        return match op {
            Abs => value("abs(a)"),
            Negative => value("-a"),
            Square => value("a * a"),
            Sqrt => value("sqrt(a)"),
            Reciprocal => value(format!("{t}(1.0) / a")),
            Sign => value(format!("sign_{t}(a)")),
            Floor => value("floor(a)"),
            Ceil => value("ceil(a)"),
            // llvmpipe's f64 `trunc` on an AVX2-only host returned +0.0
            // for negative inputs above -1 (the NumPy differential tests);
            // the result always has the input's sign.
            Trunc => value(format!("copysign_{t}(trunc(a), a)")),
            Round => value(format!("round_{t}(a)")),
            IsNan => boolean(format!("isnan_{t}(a)")),
            IsInf => boolean(format!("isinf_{t}(a)")),
            IsFinite => boolean(format!("isfinite_{t}(a)")),
            SignBit => boolean(format!("signbit_{t}(a)")),
            Exp => transcendental("exp_$T(a)"),
            Expm1 => transcendental("expm1_$T(a)"),
            Log => transcendental("log_$T(a)"),
            Log1p => transcendental("log1p_$T(a)"),
            Log2 => transcendental("log2_$T(a)"),
            Log10 => transcendental("log10_$T(a)"),
            Sin => transcendental("sin_$T(a)"),
            Cos => transcendental("cos_$T(a)"),
            Tan => transcendental("tan_$T(a)"),
            Asin => transcendental("asin_$T(a)"),
            Acos => transcendental("acos_$T(a)"),
            Atan => transcendental("atan_$T(a)"),
            Sinh => transcendental("sinh_$T(a)"),
            Cosh => transcendental("cosh_$T(a)"),
            Tanh => transcendental("tanh_$T(a)"),
            Asinh => transcendental("asinh_$T(a)"),
            Acosh => transcendental("acosh_$T(a)"),
            Atanh => transcendental("atanh_$T(a)"),
            BitwiseInvert | LogicalNot | Conj | Real | Imag => None,
        };
    }
    if r.is_bool() {
        return match op {
            LogicalNot | BitwiseInvert => value("(a ^ 1u)"),
            IsNan | IsInf => boolean("false"),
            IsFinite => boolean("true"),
            _ => None,
        };
    }
    let signed = r.is_signed_int();
    match op {
        Abs if signed => value(format!("select(a, {t}(0) - a, a < {t}(0))")),
        Negative => value(format!("({t}(0) - a)")),
        Abs | Round | Floor | Ceil | Trunc => value("a"),
        Square => value("a * a"),
        Sign => value(format!("sign_{t}(a)")),
        SignBit => boolean(format!("a < {t}(0)")),
        BitwiseInvert => value("~a"),
        IsNan | IsInf => boolean("false"),
        IsFinite => boolean("true"),
        _ => None,
    }
}

/// `op(a, b)` for dtype `r`, or `None` where it is unsupported.
pub fn binary(op: BinaryOp, r: &Repr) -> Option<Expr> {
    use BinaryOp::*;
    let t = r.compute;
    let bits = r.bits();
    if r.dtype.is_complex() {
        return super::complex::binary(op, r);
    }
    match op {
        Equal => return boolean("a == b"),
        // `!=` may compile to an ordered comparison; NaN != x must be true.
        NotEqual => return boolean("!(a == b)"),
        Less => return boolean("a < b"),
        LessEqual => return boolean("a <= b"),
        Greater => return boolean("a > b"),
        GreaterEqual => return boolean("a >= b"),
        _ => {}
    }
    if r.is_bool() {
        return match op {
            LogicalAnd | BitwiseAnd => value("(a & b)"),
            LogicalOr | BitwiseOr => value("(a | b)"),
            LogicalXor | BitwiseXor => value("(a ^ b)"),
            Maximum => value("max(a, b)"),
            Minimum => value("min(a, b)"),
            _ => None,
        };
    }
    let common = match op {
        Add => value("a + b"),
        Subtract => value("a - b"),
        Multiply => value("a * b"),
        Maximum => value(format!("maximum_{t}(a, b)")),
        Minimum => value(format!("minimum_{t}(a, b)")),
        FloorDivide => value(format!("floordiv_{t}(a, b)")),
        Remainder => value(format!("remainder_{t}(a, b)")),
        _ => None,
    };
    if common.is_some() {
        return common;
    }
    if r.is_float() {
        let transcendental = |f: String| has_transcendentals(r).then_some(Expr::Value(f));
        return match op {
            Divide => value("a / b"),
            CopySign => value(format!("copysign_{t}(a, b)")),
            Hypot => value(format!("hypot_{t}(a, b)")),
            // nextafter steps in the storage format; packed floats compute in f32.
            NextAfter => value(match r.dtype {
                DType::F16 => "nextafter_f16(a, b)".to_owned(),
                DType::BF16 => "nextafter_bf16(a, b)".to_owned(),
                _ => format!("nextafter_{t}(a, b)"),
            }),
            Pow => transcendental(format!("pow_{t}(a, b)")),
            Atan2 => transcendental(format!("atan2_{t}(a, b)")),
            LogAddExp => transcendental(format!("logaddexp_{t}(a, b)")),
            _ => None,
        };
    }
    match op {
        Pow => value(format!("ipow_{t}(a, b)")),
        BitwiseAnd => value("(a & b)"),
        BitwiseOr => value("(a | b)"),
        BitwiseXor => value("(a ^ b)"),
        BitwiseLeftShift => value(format!("shl_{t}(a, b, {bits}u)")),
        BitwiseRightShift => value(format!("shr_{t}(a, b, {bits}u)")),
        _ => None,
    }
}

/// WGSL bool: whether the compute value `v` of dtype `r` is non-zero.
pub fn nonzero(r: &Repr, v: &str) -> String {
    if r.dtype.is_complex() {
        super::complex::nonzero(r, v)
    } else if r.is_float() {
        format!("(cast_bool_{}({v}) != 0u)", r.compute)
    } else {
        format!("({v} != {}(0))", r.compute)
    }
}

/// The bounds a float is saturated to when cast to integer dtype `dst`,
/// as (lowest value kept, first value too large), both powers of two.
fn saturation(dst: DType) -> (f64, f64) {
    let bits = dst.size() as i32 * 8;
    if dst.is_signed() {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1))
    } else {
        (0.0, 2f64.powi(bits))
    }
}

/// WGSL literal of the largest and smallest value of integer dtype `dst`
/// in the compute type `ct`.
fn int_limits(dst: DType, ct: &str) -> (String, String) {
    let bits = dst.size() as u32 * 8;
    if dst.is_signed() {
        let max = (1i128 << (bits - 1)) - 1;
        // The most negative literal is not expressible directly.
        (format!("{ct}({max})"), format!("({ct}(-{max}) - {ct}(1))"))
    } else {
        let max = (1u128 << bits) - 1;
        let max = if ct == "u64" {
            format!("{max}lu")
        } else {
            format!("{ct}({max}u)")
        };
        (max, format!("{ct}(0)"))
    }
}

/// WGSL converting the compute value `v` of dtype `src` to the compute
/// type of `dst`, with `astype`'s rules: float to integer truncates toward
/// zero and saturates (NaN gives 0), integer to integer wraps, anything to
/// bool is `!= 0`. Packed destinations are narrowed by their store.
pub fn cast(src: &Repr, dst: &Repr, v: &str) -> String {
    let (s, d) = (src.compute, dst.compute);
    if src.dtype.is_complex() || dst.dtype.is_complex() {
        return super::complex::cast(src, dst, v);
    }
    if dst.is_bool() {
        return format!("select(0u, 1u, {})", nonzero(src, v));
    }
    if src.is_float() && !dst.is_float() {
        let (low, high) = saturation(dst.dtype);
        let (max, min) = int_limits(dst.dtype, d);
        return format!(
            "select(select(select({d}(trunc({v})), {min}, trunc({v}) < {s}({low:?})), {max}, trunc({v}) >= {s}({high:?})), {d}(0), isnan_{s}({v}))"
        );
    }
    if s == d {
        return v.to_owned();
    }
    if s == "f64" && d == "f32" && dst.word.is_none() {
        // Round to f16/bf16 as the host does (see the prelude).
        return format!("f64_to_f32_for_half({v})");
    }
    match (s, d) {
        ("i32", "u32") | ("u32", "i32") | ("i64", "u64") | ("u64", "i64") => format!("bitcast<{d}>({v})"),
        ("i64", "i32") | ("u64", "i32") => format!("bitcast<i32>(u32(bitcast<u64>({v}) & 0xfffffffflu))"),
        ("i64", "u32") | ("u64", "u32") => format!("u32(bitcast<u64>({v}) & 0xfffffffflu)"),
        ("i32", "u64") => format!("bitcast<u64>(i64({v}))"),
        // Zero-extend explicitly: u32 -> i64 must not sign-extend.
        ("u32", "i64") => format!("bitcast<i64>(u64({v}))"),
        _ => format!("{d}({v})"),
    }
}
