//! The trigonometric functions at the arguments that break them: huge
//! arguments and those closest to a multiple of pi/2, where argument
//! reduction needs the most bits of pi; the edges of the reduced ranges;
//! and every special value C99 defines (NaN, infinities, signed zeros,
//! subnormals, |x| > 1 for asin/acos, the zero and infinity cases of
//! atan2). The dense sweep is `accuracy`; these points are the ones a
//! sweep would hit only by chance.

use super::accuracy::ulps;
use crate::case::{Body, Case, CaseCtx, Failure};
use crate::reference as r;
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, OpCode, UnaryOp};
use anydev_core::DType;

/// The f32 error allowed here: the bound every backend promises for these
/// functions (docs/accuracy.md).
const ULPS: u64 = 2;

/// f32 values given by their bits.
fn f(bits: u32) -> f64 {
    f64::from(f32::from_bits(bits))
}

/// Arguments of sin, cos and tan.
fn periodic_args() -> Vec<f64> {
    let mut v = vec![
        1e10,
        3.4e38,
        f64::from(f32::MAX),
        // The f32 neighbours of pi/2, pi and 3pi/2.
        f64::from(std::f32::consts::FRAC_PI_2),
        f(0x3fc9_0fda),
        f64::from(std::f32::consts::PI),
        4.712_389,
        102_940.41,
        // Among the closest f32 values to a multiple of pi/2 (Muller,
        // "Elementary Functions", the worst case of single precision).
        16_367_173.0 * 2f64.powi(72),
        // Close to multiples of pi among large values.
        f64::from((1e6 * std::f64::consts::PI) as f32),
        f64::from((12_345_678.0 * std::f64::consts::PI) as f32),
        f64::from((1e12 * std::f64::consts::PI) as f32),
        // Both sides of pi/4, where the kernels switch.
        f(0x3f49_0fdb),
        f(0x3f49_0fdc),
        // Tiny and subnormal: sin(x) = tan(x) = x.
        1e-5,
        2.4e-4,
        1e-40,
        f(1),
        0.5,
        1.0,
        2.0,
        100.0,
        1e5,
        8_388_607.5,
        1.6e7,
    ];
    let negated: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

/// Arguments of asin, acos and atan: both sides of the switch at 1/2, the
/// ends of the domain, and large ones for atan.
fn inverse_args() -> Vec<f64> {
    let mut v = vec![
        0.5,
        f(0x3eff_ffff),
        f(0x3f00_0001),
        0.6,
        0.97,
        f(0x3f7f_ffff),
        1.0,
        0.1,
        1e-5,
        1e-40,
        f(1),
        f(0x3f80_0001),
        2.0,
        1e10,
        3.4e38,
    ];
    let negated: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

const SPECIAL: [f64; 5] = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];

type Unary = fn(&Array) -> ad::Result<Array>;

/// Each of `args` (plus the special values) through `call` on the device,
/// against `reference` rounded to f32.
fn check_unary(ctx: &CaseCtx, name: &str, call: Unary, reference: fn(f64) -> f64, args: &[f64]) -> Result<(), Failure> {
    let args: Vec<f64> = args
        .iter()
        .chain(&SPECIAL)
        .map(|&a| r::round_to(DType::F32, a))
        .collect();
    let x = r::array(&args, &[args.len()], DType::F32, ctx.device)?;
    let got = call(&x)?.to_f64_vec()?;
    for (&a, &g) in args.iter().zip(&got) {
        let want = r::round_to(DType::F32, reference(a));
        let err = ulps(DType::F32, g, want);
        if err > ULPS {
            return Err(Failure::new(
                format!("{name}({:e}) within {ULPS} ulp", a as f32),
                format!("{:e}", want as f32),
                format!("{:e} ({err} ulp)", g as f32),
            ));
        }
    }
    Ok(())
}

fn sin(ctx: &CaseCtx) -> Result<(), Failure> {
    check_unary(ctx, "sin", ad::sin, f64::sin, &periodic_args())
}

fn cos(ctx: &CaseCtx) -> Result<(), Failure> {
    check_unary(ctx, "cos", ad::cos, f64::cos, &periodic_args())
}

fn tan(ctx: &CaseCtx) -> Result<(), Failure> {
    check_unary(ctx, "tan", ad::tan, f64::tan, &periodic_args())
}

fn asin(ctx: &CaseCtx) -> Result<(), Failure> {
    check_unary(ctx, "asin", ad::asin, f64::asin, &inverse_args())
}

fn acos(ctx: &CaseCtx) -> Result<(), Failure> {
    check_unary(ctx, "acos", ad::acos, f64::acos, &inverse_args())
}

fn atan(ctx: &CaseCtx) -> Result<(), Failure> {
    check_unary(ctx, "atan", ad::atan, f64::atan, &inverse_args())
}

/// Every pair of signed zeros, infinities, NaN and finite values of both
/// signs and very different magnitudes: all of C99's special cases and
/// every quadrant.
fn atan2(ctx: &CaseCtx) -> Result<(), Failure> {
    let values = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.7,
        -3.0,
        1e-30,
        -1e-20,
        1e30,
        -3.4e38,
    ];
    let values = values.map(|v| r::round_to(DType::F32, v));
    let (ys, xs): (Vec<f64>, Vec<f64>) = values.iter().flat_map(|&y| values.iter().map(move |&x| (y, x))).unzip();
    let y = r::array(&ys, &[ys.len()], DType::F32, ctx.device)?;
    let x = r::array(&xs, &[xs.len()], DType::F32, ctx.device)?;
    let got = ad::atan2(&y, &x)?.to_f64_vec()?;
    for ((&a, &b), &g) in ys.iter().zip(&xs).zip(&got) {
        let want = r::round_to(DType::F32, a.atan2(b));
        let err = ulps(DType::F32, g, want);
        if err > ULPS {
            return Err(Failure::new(
                format!("atan2({a:e}, {b:e}) within {ULPS} ulp"),
                format!("{:e}", want as f32),
                format!("{:e} ({err} ulp)", g as f32),
            ));
        }
    }
    Ok(())
}

pub fn cases() -> Vec<Case> {
    let unary = |name: &str, body: Body, op: UnaryOp| {
        Case::new(format!("math_trig::{name}"), body)
            .dtypes(&[DType::F32])
            .op(OpCode::Unary(op))
    };
    vec![
        unary("sin", sin, UnaryOp::Sin),
        unary("cos", cos, UnaryOp::Cos),
        unary("tan", tan, UnaryOp::Tan),
        unary("asin", asin, UnaryOp::Asin),
        unary("acos", acos, UnaryOp::Acos),
        unary("atan", atan, UnaryOp::Atan),
        Case::new("math_trig::atan2", atan2)
            .dtypes(&[DType::F32])
            .op(OpCode::Binary(BinaryOp::Atan2)),
    ]
}
