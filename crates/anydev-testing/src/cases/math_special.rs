//! Values where float functions are easy to get wrong: arguments so small
//! that a formula cancels (`tanh(1e-8)`), results near the overflow
//! threshold (`cosh(89)`), subnormal arguments and results, the special
//! values of C99 and NumPy (NaN, ±inf, ±0, `pow`'s table), and `nextafter`
//! in each float format's own precision. References are std's f64
//! functions of the exact input rounded once to the dtype, or exact by
//! hand; a result must be within one ulp and have the reference's NaN,
//! infinity and zero sign.

use crate::case::{Case, CaseCtx, Failure};
use crate::cases::accuracy::{ulps, MISMATCH};
use crate::reference::{self as r};
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, OpCode, UnaryOp};
use anydev_core::DType;
use std::f64::consts::LN_2;

pub fn cases() -> Vec<Case> {
    use BinaryOp::{FloorDivide, LogAddExp, NextAfter, Pow, Remainder};
    // A case needs every op it calls, so a device without one of them
    // skips it by name instead of failing.
    let needing = |case: Case, ops: &[OpCode]| ops.iter().fold(case, |c, &op| c.op(op));
    let unary_ops: Vec<OpCode> = unary_table().iter().map(|row| OpCode::Unary(row.0)).collect();
    vec![
        needing(
            Case::new("math_special::unary_values", unary_values).dtypes(&[DType::F32]),
            &unary_ops,
        ),
        needing(
            Case::new("math_special::binary_values", binary_values).dtypes(&[DType::F32]),
            &[OpCode::Binary(Pow), OpCode::Binary(LogAddExp)],
        ),
        needing(
            Case::new("math_special::subnormal_divisors", subnormal_divisors).dtypes(&[DType::F32, DType::F64]),
            &[OpCode::Binary(Remainder), OpCode::Binary(FloorDivide)],
        ),
        Case::new("math_special::nextafter_in_own_precision", nextafter_in_own_precision)
            .dtypes(&[DType::F16, DType::BF16, DType::F32, DType::F64])
            .op(OpCode::Binary(NextAfter)),
    ]
}

type Unary = fn(&Array) -> ad::Result<Array>;
type Binary = fn(&Array, &Array) -> ad::Result<Array>;
/// A function under test (its op and its call), its f64 reference and the arguments it is checked at.
type UnaryRow = (UnaryOp, Unary, fn(f64) -> f64, Vec<f64>);
/// A binary function under test, its f64 reference and its argument pairs.
type BinaryRow<'a> = (&'static str, Binary, fn(f64, f64) -> f64, &'a [(f64, f64)]);

/// The smallest positive subnormal of `dtype`.
fn tiny(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2f64.powi(-24),
        DType::BF16 => 2f64.powi(-133),
        DType::F32 => 2f64.powi(-149),
        _ => f64::from_bits(1),
    }
}

/// Checks `got[i]` against `want[i]` within `bound` ulps of `dtype`, naming
/// the inputs of the first that is not.
fn check_ulps(
    what: &str,
    dtype: DType,
    args: &[Vec<f64>],
    want: &[f64],
    got: &Array,
    bound: u64,
) -> Result<(), Failure> {
    let got = got.to_f64_vec()?;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let e = ulps(dtype, g, w);
        if e == MISMATCH || e > bound {
            let inputs: Vec<String> = args.iter().map(|a| format!("{:e}", a[i])).collect();
            return Err(Failure::new(
                format!("{what}({}) within {bound} ulp ({dtype})", inputs.join(", ")),
                format!("{w:e}"),
                format!("{g:e}"),
            ));
        }
    }
    Ok(())
}

/// The special values every function must map exactly, then finite
/// arguments that stress it.
fn unary_table() -> Vec<UnaryRow> {
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0];
    let with = |v: &[f64]| specials.iter().chain(v).copied().collect::<Vec<f64>>();
    let sub = tiny(DType::F32);
    vec![
        (
            UnaryOp::Exp,
            ad::exp,
            f64::exp,
            with(&[1.0, 10.0, -10.0, 88.7, -87.0, -100.0, -103.5, sub]),
        ),
        (
            UnaryOp::Expm1,
            ad::expm1,
            f64::exp_m1,
            with(&[88.0, 88.7, 1e-8, -1e-8, -20.0, 0.5, sub]),
        ),
        (
            UnaryOp::Log,
            ad::log,
            f64::ln,
            with(&[sub, 1e-40, 1.0, 2.0, -1.0, 3.4e38]),
        ),
        (
            UnaryOp::Log1p,
            ad::log1p,
            f64::ln_1p,
            with(&[sub, 1e-8, -1.0, -2.0, 3.4e38]),
        ),
        (UnaryOp::Log2, ad::log2, f64::log2, with(&[sub, 1e-40, 8.0, 0.1])),
        (UnaryOp::Log10, ad::log10, f64::log10, with(&[sub, 1000.0, 1e-30])),
        (
            UnaryOp::Sinh,
            ad::sinh,
            f64::sinh,
            with(&[1e-8, -1e-8, 89.0, -89.0, 0.5, sub]),
        ),
        (UnaryOp::Cosh, ad::cosh, f64::cosh, with(&[89.0, -89.0, 1e-8, 0.5])),
        (UnaryOp::Tanh, ad::tanh, f64::tanh, with(&[1e-8, -1e-8, 0.3, 20.0, sub])),
        (
            UnaryOp::Asinh,
            ad::asinh,
            f64::asinh,
            with(&[1e-8, -1e-8, 0.5, 1e4, sub]),
        ),
        (
            UnaryOp::Acosh,
            ad::acosh,
            f64::acosh,
            with(&[-2.0, -1.0, 0.5, 1.0, 1.0000001, 1e4]),
        ),
        (
            UnaryOp::Atanh,
            ad::atanh,
            f64::atanh,
            with(&[1e-8, -1e-8, 0.5, 1.0, -1.0, 1.5, sub]),
        ),
    ]
}

fn unary_values(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    for (op, call, reference, values) in unary_table() {
        let x: Vec<f64> = values.iter().map(|&v| r::round_to(dtype, v)).collect();
        let want: Vec<f64> = x.iter().map(|&v| r::round_to(dtype, reference(v))).collect();
        let got = call(&r::array(&x, &[x.len()], dtype, ctx.device)?)?;
        check_ulps(op.name(), dtype, &[x], &want, &got, 1)?;
    }
    Ok(())
}

/// NumPy's logaddexp: equal arguments (infinities of one sign included)
/// give `a + ln 2`.
fn logaddexp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        a + LN_2
    } else {
        a.max(b) + (-(a - b).abs()).exp().ln_1p()
    }
}

fn binary_values(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let pow_pairs = [
        // C99 F.9.4.4, in its order.
        (0.0, -3.0),
        (-0.0, -3.0),
        (0.0, -2.0),
        (-0.0, -inf),
        (0.0, 3.0),
        (-0.0, 3.0),
        (-0.0, 2.0),
        (-1.0, inf),
        (-1.0, -inf),
        (1.0, nan),
        (nan, 0.0),
        (nan, -0.0),
        (-2.0, 0.5),
        (0.5, -inf),
        (2.0, -inf),
        (0.5, inf),
        (2.0, inf),
        (-inf, -3.0),
        (-inf, -2.0),
        (-inf, 3.0),
        (-inf, 2.0),
        (inf, -1.0),
        (inf, 1.0),
        // Exact and extreme finite cases.
        (3.4e38, 1.0),
        (1e-45, 1.0),
        (-2.0, 3.0),
        (-2.0, -3.0),
        (2.0, -149.0),
        (2.0, 127.99),
        (10.0, 38.5),
        (1.0000001, 1e8),
        (0.5, 149.5),
    ];
    let logaddexp_pairs = [
        (inf, inf),
        (-inf, -inf),
        (-inf, -0.0),
        (inf, -inf),
        (nan, 1.0),
        (1e-8, 1e-8),
        (100.0, -100.0),
        (-1e30, -1e30),
    ];
    let table: [BinaryRow; 2] = [
        ("pow", |a, b| ad::pow(a, b), f64::powf, &pow_pairs),
        ("logaddexp", |a, b| ad::logaddexp(a, b), logaddexp, &logaddexp_pairs),
    ];
    for (name, call, reference, pairs) in table {
        let a: Vec<f64> = pairs.iter().map(|p| r::round_to(dtype, p.0)).collect();
        let b: Vec<f64> = pairs.iter().map(|p| r::round_to(dtype, p.1)).collect();
        let want: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| r::round_to(dtype, reference(x, y)))
            .collect();
        let got = call(
            &r::array(&a, &[a.len()], dtype, ctx.device)?,
            &r::array(&b, &[b.len()], dtype, ctx.device)?,
        )?;
        check_ulps(name, dtype, &[a, b], &want, &got, 1)?;
    }
    Ok(())
}

/// Divisors (and dividends) below the normal range, which a long division
/// through `frexp`/`ldexp` loses: exact results, from NumPy's `divmod`.
fn subnormal_divisors(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let t = tiny(dtype);
    // (a, b, a // b, a % b)
    let rows = [
        (10.0, t, None, 0.0),
        (-10.0, t, None, 0.0),
        (3.0 * t, 2.0 * t, Some(1.0), t),
        (-3.0 * t, 2.0 * t, Some(-2.0), t),
        (7.0 * t, -2.0 * t, Some(-4.0), -t),
        (7.0 * t, 7.0 * t, Some(1.0), 0.0),
        (t, 3.0 * t, Some(0.0), t),
        (-t, 3.0 * t, Some(-1.0), 2.0 * t),
        (1.0, 3.0 * t, None, if dtype == DType::F32 { 2.0 * t } else { t }),
        (1.0, 1.5, Some(0.0), 1.0),
    ];
    let a: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let b: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let x = r::array(&a, &[a.len()], dtype, ctx.device)?;
    let y = r::array(&b, &[b.len()], dtype, ctx.device)?;
    let rem: Vec<f64> = rows.iter().map(|r| r.3).collect();
    check_ulps("remainder", dtype, &[a.clone(), b.clone()], &rem, &x.remainder(&y)?, 0)?;
    // Quotients too large to be exact are left to the accuracy sweep.
    let exact: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].2.is_some()).collect();
    let got = x.floor_divide(&y)?.to_f64_vec()?;
    for i in exact {
        let want = rows[i].2.unwrap_or_default();
        if ulps(dtype, got[i], want) != 0 {
            return Err(Failure::new(
                format!("floor_divide({:e}, {:e}) ({dtype})", a[i], b[i]),
                want,
                got[i],
            ));
        }
    }
    // 10 / 2^-149 overflows f32 (and 10 / 2^-1074 overflows f64).
    crate::case::check(
        got[0] == f64::INFINITY,
        "floor_divide(10, smallest subnormal)",
        "inf",
        got[0],
    )
}

/// NumPy's nextafter: one step of the dtype's own precision toward `b`.
fn nextafter_in_own_precision(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let t = tiny(dtype);
    let (eps, max) = match dtype {
        DType::F16 => (2f64.powi(-10), 65504.0),
        DType::BF16 => (2f64.powi(-7), (2.0 - 2f64.powi(-7)) * 2f64.powi(127)),
        DType::F32 => (2f64.powi(-23), f32::MAX.into()),
        _ => (f64::EPSILON, f64::MAX),
    };
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // (a, b, nextafter(a, b))
    let rows = [
        (1.0, 2.0, 1.0 + eps),
        (1.0, 0.0, 1.0 - eps / 2.0),
        (-1.0, -inf, -1.0 - eps),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (-0.0, 1.0, t),
        (0.0, -0.0, -0.0),
        (-0.0, 0.0, 0.0),
        (t, 0.0, 0.0),
        (-t, 0.0, -0.0),
        (t, 1.0, 2.0 * t),
        (max, inf, inf),
        (inf, 0.0, max),
        (-inf, 0.0, -max),
        (nan, 1.0, nan),
        (1.0, nan, nan),
        (1.0, 1.0, 1.0),
    ];
    let a: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let b: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let want: Vec<f64> = rows.iter().map(|r| r.2).collect();
    let got = ad::nextafter(
        &r::array(&a, &[a.len()], dtype, ctx.device)?,
        &r::array(&b, &[b.len()], dtype, ctx.device)?,
    )?;
    check_ulps("nextafter", dtype, &[a, b], &want, &got, 0)
}
