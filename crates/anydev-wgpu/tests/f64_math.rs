//! The f64 exponentials, logarithms, trigonometric and hyperbolic
//! functions and their inverses written in WGSL (`shader::math_f64`)
//! against std's (glibc's libm) over random bit patterns, their whole
//! finite ranges, the regions where they cancel, the overflow and underflow
//! thresholds, subnormals and the special values; on adapters that hold
//! f64 (llvmpipe does).

mod common;

use anydev_core::backend::TensorRef;
use anydev_core::ops::{BinaryOp, Op, OpCode, Operand, UnaryOp};
use anydev_core::DType;
use common::*;

/// Units in the last place between `got` and `want`; NaN only matches
/// NaN, and a sign (zeros' included) that differs matches nothing.
fn ulps(got: f64, want: f64) -> u64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() { 0 } else { u64::MAX };
    }
    if got.is_sign_negative() != want.is_sign_negative() {
        return u64::MAX;
    }
    (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs()
}

fn inputs() -> Vec<f64> {
    let mut rng = Rng(64);
    let mut x: Vec<f64> = (0..40_000).map(|_| f64::from_bits(rng.next_u64())).collect();
    x.extend(rng.vec(40_000, -750.0, 712.0));
    x.extend(rng.vec(40_000, -1.0, 1.0));
    // Magnitudes from 2^-1074 to 2^1023, both signs.
    for _ in 0..40_000 {
        let m = rng.uniform(-1074.0, 1023.0).exp2();
        x.extend([m, -m]);
    }
    x.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        10.0,
        0.5,
        5e-324,
        -5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        -f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        // exp's overflow and underflow thresholds, either side.
        709.782712893384,
        709.7827128933841,
        -745.1332191019411,
        -745.1332191019412,
        -708.3964185322641,
        // log1p's pole and expm1's saturation.
        -1.0 + f64::EPSILON / 2.0,
        -37.5,
        -38.0,
        1e-17,
        -1e-17,
        // Arguments near multiples of pi/2 that the reduction must
        // resolve: 1e22, pi/4, pi/2, pi (for the closest of all, see
        // `f64_trigonometry_of_the_hardest_reduction`).
        1e22,
        std::f64::consts::FRAC_PI_4,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::PI,
        -std::f64::consts::PI,
    ]);
    x
}

/// Above this, `x^2 + 1` is `x^2` and `ln(2x)` is the inverse hyperbolic
/// sine and cosine of `x`.
const HUGE: f64 = 1e150;

/// std's `asinh` forms `x + sqrt(x^2 + 1)`, which overflows from about
/// 1e154 on; this reference takes std's `ln_1p` and `ln` through forms
/// that neither overflow nor cancel (not the shader's: it switches
/// formulas at 2 and 2^28).
fn asinh(x: f64) -> f64 {
    let a = x.abs();
    let r = if a > HUGE {
        a.ln() + std::f64::consts::LN_2
    } else {
        (a + a * a / (1.0 + (1.0 + a * a).sqrt())).ln_1p()
    };
    r.copysign(x)
}

/// std's `acosh` takes `ln` of a value near 1 just above 1, where the
/// result is small and the logarithm's absolute error is not: `ln_1p` of
/// the distance to 1 instead (exact: `x - 1` is).
fn acosh(x: f64) -> f64 {
    if x.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x > HUGE {
        return x.ln() + std::f64::consts::LN_2;
    }
    let t = x - 1.0;
    (t + (2.0 * t + t * t).sqrt()).ln_1p()
}

/// std's `atanh` rounds `1 - x` away for negative `x` near -1: computed
/// on `|x|` instead.
fn atanh(x: f64) -> f64 {
    let a = x.abs();
    (0.5 * (2.0 * a / (1.0 - a)).ln_1p()).copysign(x)
}

/// An op, its reference and its bound in ulps.
type Checked = (UnaryOp, fn(f64) -> f64, u64);

/// The wgpu device, when it holds f64 (llvmpipe does); where none does
/// there is nothing here to check, and the reason is printed.
fn f64_gpu() -> Option<&'static Gpu> {
    let g = gpu()?;
    if !g.holds(DType::F64) {
        eprintln!("SKIPPED: the wgpu device does not hold f64");
        return None;
    }
    Some(g)
}

/// `op` over contiguous f64 operands, each uploaded from `inputs`.
fn launch(
    g: &Gpu,
    op: impl for<'a> FnOnce(&[TensorRef<'a>], TensorRef<'a>) -> Op<'a, TensorRef<'a>>,
    inputs: &[&[f64]],
) -> Vec<f64> {
    let shape = [inputs[0].len()];
    let strides = contiguous(&shape);
    let buffers: Vec<_> = inputs.iter().map(|x| g.upload(&encode(DType::F64, x))).collect();
    let out = g.alloc(shape[0] * 8);
    let operands: Vec<TensorRef<'_>> = buffers
        .iter()
        .map(|b| tensor(b, DType::F64, &shape, &strides, 0))
        .collect();
    g.run(&op(&operands, tensor(&out, DType::F64, &shape, &strides, 0)))
        .unwrap();
    decode(DType::F64, &g.download(&out))
}

fn run(g: &Gpu, op: UnaryOp, x: &[f64]) -> Vec<f64> {
    launch(g, |t, out| Op::Unary { op, x: t[0], out }, &[x])
}

/// Each function within `bound` ulps of its reference at every input,
/// special values exact. The references are not correctly rounded either:
/// glibc's `log10`, `sinh`, `cosh` and `tanh` document errors of up to 2
/// ulps. At the worst inputs the shader's results were within 2 ulps of
/// the correctly rounded value (Python's `decimal`, 60 digits): `log10`,
/// `sinh`, `cosh` and `acosh` within 1 (the references 1 or 2 off),
/// `tanh` and `atanh` within 2 (the references 1 off).
#[test]
fn f64_unary_functions_match_references() {
    let Some(g) = f64_gpu() else { return };
    let x = inputs();
    let functions: [Checked; 18] = [
        (UnaryOp::Exp, f64::exp, 1),
        (UnaryOp::Expm1, f64::exp_m1, 1),
        (UnaryOp::Log, f64::ln, 1),
        (UnaryOp::Log1p, f64::ln_1p, 1),
        (UnaryOp::Log2, f64::log2, 1),
        (UnaryOp::Log10, f64::log10, 2),
        (UnaryOp::Sinh, f64::sinh, 3),
        (UnaryOp::Cosh, f64::cosh, 3),
        (UnaryOp::Tanh, f64::tanh, 3),
        (UnaryOp::Asinh, asinh, 2),
        (UnaryOp::Acosh, acosh, 2),
        (UnaryOp::Atanh, atanh, 3),
        (UnaryOp::Asin, f64::asin, 1),
        (UnaryOp::Acos, f64::acos, 1),
        (UnaryOp::Atan, f64::atan, 1),
        (UnaryOp::Sin, f64::sin, 1),
        (UnaryOp::Cos, f64::cos, 1),
        (UnaryOp::Tan, f64::tan, 1),
    ];
    for (op, reference, bound) in functions {
        assert!(g.backend.supports(0, OpCode::Unary(op), DType::F64), "{op} f64");
        let got = run(g, op, &x);
        let (worst, at) = x
            .iter()
            .zip(&got)
            .map(|(&a, &y)| (ulps(y, reference(a)), a))
            .max_by_key(|&(u, _)| u)
            .unwrap();
        if op == UnaryOp::Exp {
            // Results far below the normal range (under 2^-1038, at most 36
            // significant bits) carry so few bits that rounding
            // them once leaves no error: they must be std's (correctly
            // rounded) exactly, barring ties.
            let tiny: Vec<(f64, f64)> = x
                .iter()
                .zip(&got)
                .filter(|&(&a, _)| (-745.2..-720.0).contains(&a))
                .map(|(&a, &y)| (a, y))
                .collect();
            let off = tiny.iter().filter(|&&(a, y)| y != a.exp()).count();
            assert!(
                tiny.len() > 20 && off * 1000 <= tiny.len(),
                "exp f64: {off} of {} subnormal results differ",
                tiny.len()
            );
        }
        assert!(
            worst <= bound,
            "{op} f64: {worst} ulps at {at:e}: got {:e}, want {:e}",
            got[x.iter().position(|v| v.to_bits() == at.to_bits()).unwrap()],
            reference(at)
        );
    }
}

fn run_binary(g: &Gpu, op: BinaryOp, pairs: &[(f64, f64)]) -> Vec<f64> {
    let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    launch(
        g,
        |t, out| Op::Binary {
            op,
            lhs: Operand::Tensor(t[0]),
            rhs: Operand::Tensor(t[1]),
            out,
        },
        &[&a, &b],
    )
}

/// `atan2` within 1 ulp of std's over pairs of the inputs above (every
/// quadrant, ratios from 2^-2098 to 2^2098), and the standard's special
/// values of signed zeros and infinities exactly.
#[test]
fn f64_atan2_matches_std() {
    let Some(g) = f64_gpu() else { return };
    assert!(g.backend.supports(0, OpCode::Binary(BinaryOp::Atan2), DType::F64));
    let x = inputs();
    let specials = [0.0, -0.0, 1.0, -1.0, 5e-324, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    let mut pairs: Vec<(f64, f64)> = x.iter().zip(x.iter().rev()).map(|(&a, &b)| (a, b)).collect();
    pairs.extend(specials.iter().flat_map(|&a| specials.iter().map(move |&b| (a, b))));
    let got = run_binary(g, BinaryOp::Atan2, &pairs);
    for (&(a, b), &z) in pairs.iter().zip(&got) {
        let want = a.atan2(b);
        assert!(ulps(z, want) <= 1, "atan2({a:e}, {b:e}) f64: got {z:e}, want {want:e}");
    }
}

/// The double closest to a multiple of pi/2 relative to its size,
/// 6381956970095103 2^797, is 4.687e-19 past one (n = 1 mod 4). Exact
/// values (the reduction redone with Python integers, 3000 bits of pi):
/// glibc's `cos` there is 8 ulps off, so std is no reference.
#[test]
fn f64_trigonometry_of_the_hardest_reduction() {
    let Some(g) = f64_gpu() else { return };
    let x = [6381956970095103.0 * 2f64.powi(797)];
    for (op, want) in [
        (UnaryOp::Sin, 1.0),
        (UnaryOp::Cos, -4.687165924254628e-19),
        (UnaryOp::Tan, -2.133485385753704e18),
    ] {
        let got = run(g, op, &x)[0];
        assert!(
            ulps(got, want) <= 1,
            "{op} f64 of {:e}: got {got:e}, want {want:e}",
            x[0]
        );
    }
}

/// `pow` within 1 ulp of std's: positive bases across the whole range
/// with moderate exponents (half of them integers), negative bases with
/// integer exponents (odd ones give negative results), bases near 1 with
/// exponents beyond 2^31, results that overflow, underflow or land among
/// the subnormals, and every pair of C99's special values (zeros,
/// infinities, NaN, +-1, +-0.5, +-2, +-3).
#[test]
fn f64_pow_matches_std() {
    let Some(g) = f64_gpu() else { return };
    assert!(g.backend.supports(0, OpCode::Binary(BinaryOp::Pow), DType::F64));
    let mut rng = Rng(7);
    let mut pairs = Vec::new();
    for i in 0..60_000 {
        let x = rng.uniform(-1074.0, 1023.0).exp2();
        let y = rng.uniform(-50.0, 50.0);
        pairs.push((x, if i % 2 == 0 { y.round() } else { y }));
        let z = rng.uniform(-40.0, 40.0).exp2();
        pairs.push((-z, rng.uniform(-30.0, 30.0).round()));
        pairs.push((1.0 + rng.uniform(-1e-9, 1e-9), rng.uniform(-1e12, 1e12)));
        pairs.push((rng.uniform(0.0, 4.0), rng.uniform(-1200.0, 1200.0)));
    }
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    pairs.extend(specials.iter().flat_map(|&a| specials.iter().map(move |&b| (a, b))));
    let got = run_binary(g, BinaryOp::Pow, &pairs);
    let worst = pairs
        .iter()
        .zip(&got)
        .map(|(&(a, b), &z)| (ulps(z, a.powf(b)), a, b, z))
        .max_by_key(|w| w.0)
        .unwrap();
    let (u, a, b, z) = worst;
    assert!(
        u <= 1,
        "pow({a:e}, {b:e}) f64: {u} ulps: got {z:e}, want {:e}",
        a.powf(b)
    );
}

/// `logaddexp` as the host kernels define it (NumPy's: the larger argument
/// plus `ln_1p(exp(-|x - y|))`), computed here with std's functions: within
/// 2 ulps of the larger of |result| and the larger argument's magnitude
/// (where the result is near 0 and the arguments are not, the sum cancels
/// in both), special values exact.
#[test]
fn f64_logaddexp_matches_the_host_definition() {
    let Some(g) = f64_gpu() else { return };
    let mut rng = Rng(9);
    let mut pairs: Vec<(f64, f64)> = (0..100_000)
        .map(|_| (rng.uniform(-800.0, 800.0), rng.uniform(-800.0, 800.0)))
        .collect();
    pairs.extend((0..100_000).map(|_| {
        let x = rng.uniform(-50.0, 50.0);
        (x, x + rng.uniform(-40.0, 40.0))
    }));
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    pairs.extend(specials.iter().flat_map(|&a| specials.iter().map(move |&b| (a, b))));
    let reference = |x: f64, y: f64| {
        if x == y {
            return x + std::f64::consts::LN_2;
        }
        let d = x - y;
        if d > 0.0 {
            x + (-d).exp().ln_1p()
        } else if d <= 0.0 {
            y + d.exp().ln_1p()
        } else {
            d
        }
    };
    let got = run_binary(g, BinaryOp::LogAddExp, &pairs);
    for (&(x, y), &z) in pairs.iter().zip(&got) {
        let want = reference(x, y);
        let scale = want.abs().max(x.abs().max(y.abs()).min(f64::MAX));
        let ok = if want.is_finite() {
            z.is_finite() && (z - want).abs() <= 2.0 * f64::EPSILON * scale
        } else {
            ulps(z, want) == 0
        };
        assert!(ok, "logaddexp({x:e}, {y:e}) f64: got {z:e}, want {want:e}");
    }
}
