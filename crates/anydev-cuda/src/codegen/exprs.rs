//! What each elementwise op computes, as a C expression over storage
//! values (`a`, `b`) that yields the output's storage value. The semantics
//! are those of the host kernels (anydev-kernels' `arith.rs`, `unary.rs`,
//! `binary.rs`): NumPy 2 integer rules, NaN-propagating min/max, f16/bf16
//! computed in f32 and rounded once, complex numbers computed in c128 by
//! the prelude's port of the host's `complex/math.rs` and rounded once
//! per component.
//!
//! `None` means the op is not defined for the dtype; the table is the same
//! as `anydev_kernels::supports`, which a unit test checks.

use super::ty::Ty;
use anydev_ops::{BinaryOp, UnaryOp};

/// `f(a)` computed in the compute type and rounded once.
fn lift1(t: Ty, f: impl Fn(&str) -> String) -> String {
    t.down(&f(&t.up("a")))
}

fn lift2(t: Ty, f: impl Fn(&str, &str) -> String) -> String {
    t.down(&f(&t.up("a"), &t.up("b")))
}

/// The expression of `op(a)`, or `None` when `op` is undefined for `t`.
pub fn unary(op: UnaryOp, t: Ty) -> Option<String> {
    use UnaryOp::*;
    if t.is_complex() {
        return complex_unary(op, t);
    }
    let s = t.storage();
    let w = t.wide();
    let (float, int, boolean) = (t.is_float(), t.is_int(), t.is_bool());
    let numeric = !boolean;
    let e = match op {
        IsFinite if float => format!("(u8)m_isfinite({})", t.up("a")),
        IsInf if float => format!("(u8)m_isinf({})", t.up("a")),
        IsNan if float => format!("(u8)m_isnan({})", t.up("a")),
        IsFinite => "(u8)1".into(),
        IsInf | IsNan => "(u8)0".into(),
        SignBit if float => format!("(u8)m_signbit({})", t.up("a")),
        SignBit if int => {
            if t.is_signed_int() {
                "(u8)(a < 0)".into()
            } else {
                "(u8)0".into()
            }
        }
        LogicalNot if boolean => "(u8)(a == 0)".into(),
        BitwiseInvert if boolean => "(u8)(a == 0)".into(),
        BitwiseInvert if int => format!("({s})(~a)"),
        Abs if int => {
            if t.is_signed_int() {
                format!("(a < 0 ? ({s})(({w})0 - ({w})a) : a)")
            } else {
                "a".into()
            }
        }
        Negative if int => format!("({s})(({w})0 - ({w})a)"),
        Sign if int => {
            if t.is_signed_int() {
                format!("(a > 0 ? ({s})1 : (a < 0 ? ({s})(-1) : ({s})0))")
            } else {
                format!("(a > 0 ? ({s})1 : ({s})0)")
            }
        }
        Square if int => format!("({s})(({w})a * ({w})a)"),
        Round | Floor | Ceil | Trunc if int => "a".into(),
        _ if !float || !numeric => return None,
        // Floats from here on.
        Abs => lift1(t, |x| format!("{}({x})", t.math("fabs"))),
        Negative => lift1(t, |x| format!("(-{x})")),
        Sign => lift1(t, |x| format!("sign_c({x})")),
        Square => lift1(t, |x| format!("({x} * {x})")),
        Round => lift1(t, |x| format!("{}({x})", t.math("rint"))),
        Floor => lift1(t, |x| format!("{}({x})", t.math("floor"))),
        Ceil => lift1(t, |x| format!("{}({x})", t.math("ceil"))),
        Trunc => lift1(t, |x| format!("{}({x})", t.math("trunc"))),
        Reciprocal => {
            let one = if t.compute() == "float" { "1.0f" } else { "1.0" };
            lift1(t, |x| format!("({one} / {x})"))
        }
        Acos | Acosh | Asin | Asinh | Atan | Atanh | Cos | Cosh | Exp | Expm1 | Log | Log1p | Log2 | Log10 | Sin
        | Sinh | Tan | Tanh | Sqrt => {
            let name = match op {
                Log => "log",
                other => other.name(),
            };
            lift1(t, |x| format!("{}({x})", t.math(name)))
        }
        SignBit | LogicalNot | BitwiseInvert | Conj | Real | Imag => return None,
    };
    Some(e)
}

/// The expression of `op(a, b)`, or `None` when `op` is undefined for `t`.
pub fn binary(op: BinaryOp, t: Ty) -> Option<String> {
    use BinaryOp::*;
    if t.is_complex() {
        return complex_binary(op, t);
    }
    let s = t.storage();
    let w = t.wide();
    let (float, int, boolean) = (t.is_float(), t.is_int(), t.is_bool());
    let bits = t.bits();
    // Comparisons run on compute values (f16 compares as f32, exactly).
    let cmp = |o: &str| format!("(u8)({} {o} {})", t.up("a"), t.up("b"));
    let e = match op {
        Equal => cmp("=="),
        NotEqual => cmp("!="),
        Less => cmp("<"),
        LessEqual => cmp("<="),
        Greater => cmp(">"),
        GreaterEqual => cmp(">="),
        Maximum if float => format!("((m_isnan({x}) || {x} >= {y}) ? a : b)", x = t.up("a"), y = t.up("b")),
        Minimum if float => format!("((m_isnan({x}) || {x} <= {y}) ? a : b)", x = t.up("a"), y = t.up("b")),
        Maximum => "(a >= b ? a : b)".into(),
        Minimum => "(a <= b ? a : b)".into(),
        LogicalAnd if boolean => "(u8)((a != 0) & (b != 0))".into(),
        LogicalOr if boolean => "(u8)((a != 0) | (b != 0))".into(),
        LogicalXor if boolean => "(u8)((a != 0) ^ (b != 0))".into(),
        BitwiseAnd if !float => format!("({s})(a & b)"),
        BitwiseOr if !float => format!("({s})(a | b)"),
        BitwiseXor if !float => format!("({s})(a ^ b)"),
        BitwiseLeftShift if int => format!("ishl<{s}, {w}>(a, b, {bits})"),
        BitwiseRightShift if int => format!("ishr<{s}>(a, b, {bits})"),
        Add if int => format!("({s})(({w})a + ({w})b)"),
        Subtract if int => format!("({s})(({w})a - ({w})b)"),
        Multiply if int => format!("({s})(({w})a * ({w})b)"),
        FloorDivide if int => format!("ifloordiv<{s}, {w}>(a, b)"),
        Remainder if int => format!("iremainder<{s}, {w}>(a, b)"),
        Pow if int => format!("ipow<{s}, {w}>(a, b)"),
        _ if !float => return None,
        // Floats from here on.
        Add => lift2(t, |x, y| format!("({x} + {y})")),
        Subtract => lift2(t, |x, y| format!("({x} - {y})")),
        Multiply => lift2(t, |x, y| format!("({x} * {y})")),
        Divide => lift2(t, |x, y| format!("({x} / {y})")),
        FloorDivide => lift2(t, |x, y| format!("floordiv_c({x}, {y})")),
        Remainder => lift2(t, |x, y| format!("remainder_c({x}, {y})")),
        Pow => lift2(t, |x, y| format!("{}({x}, {y})", t.math("pow"))),
        Atan2 => lift2(t, |x, y| format!("{}({x}, {y})", t.math("atan2"))),
        Hypot => lift2(t, |x, y| format!("{}({x}, {y})", t.math("hypot"))),
        CopySign => lift2(t, |x, y| format!("{}({x}, {y})", t.math("copysign"))),
        // In double, rounded once, as the host kernels do (cancellation
        // near a zero result costs f32 up to 2 ulp).
        LogAddExp => lift2(t, |x, y| {
            format!("({})logaddexp_c((double){x}, (double){y})", t.compute())
        }),
        NextAfter => {
            let bt = t.bits_type();
            t.from_bits(&format!(
                "nextafter_bits<{bt}, {c}>({}, {}, {}, {}, {bits})",
                t.to_bits("a"),
                t.to_bits("b"),
                t.up("a"),
                t.up("b"),
                c = t.compute()
            ))
        }
        // Bitwise and logical ops (and the comparisons, matched above).
        _ => return None,
    };
    Some(e)
}

/// [`unary`] for c64 and c128: the predicates look at both components,
/// `abs` is rounded to the component dtype, `real` and `imag` read one
/// component, and everything else is the prelude's `c_*` function of the
/// same name, computed in c128. Nothing that needs an order.
fn complex_unary(op: UnaryOp, t: Ty) -> Option<String> {
    use UnaryOp::*;
    let function = match op {
        IsNan => return Some("(u8)(m_isnan(a.re) || m_isnan(a.im))".into()),
        IsInf => return Some("(u8)(m_isinf(a.re) || m_isinf(a.im))".into()),
        IsFinite => return Some("(u8)(m_isfinite(a.re) && m_isfinite(a.im))".into()),
        Real => return Some("a.re".into()),
        Imag => return Some("a.im".into()),
        Abs => return Some(super::ty::from_f64(t.component(), &format!("c_abs({})", t.up("a")))),
        Floor | Ceil | Trunc | SignBit | BitwiseInvert | LogicalNot => return None,
        Negative => "c_negative",
        Conj => "c_conj",
        Square => "c_square",
        Round => "c_round",
        Sign => "c_sign",
        Reciprocal => "c_reciprocal",
        Sqrt => "c_sqrt",
        Exp => "c_exp",
        Expm1 => "c_expm1",
        Log => "c_log",
        Log1p => "c_log1p",
        Log2 => "c_log2",
        Log10 => "c_log10",
        Sin => "c_sin",
        Cos => "c_cos",
        Tan => "c_tan",
        Sinh => "c_sinh",
        Cosh => "c_cosh",
        Tanh => "c_tanh",
        Asin => "c_asin",
        Acos => "c_acos",
        Atan => "c_atan",
        Asinh => "c_asinh",
        Acosh => "c_acosh",
        Atanh => "c_atanh",
    };
    Some(lift1(t, |x| format!("{function}({x})")))
}

/// [`binary`] for c64 and c128: arithmetic and `pow` in c128 (the
/// prelude's `c_*`), and component-wise equality.
fn complex_binary(op: BinaryOp, t: Ty) -> Option<String> {
    use BinaryOp::*;
    let function = match op {
        Equal => return Some("(u8)c_equal(a, b)".into()),
        NotEqual => return Some("(u8)!c_equal(a, b)".into()),
        Add => "c_add",
        Subtract => "c_subtract",
        Multiply => "c_multiply",
        Divide => "c_divide",
        Pow => "c_pow",
        _ => return None,
    };
    Some(lift2(t, |x, y| format!("{function}({x}, {y})")))
}
