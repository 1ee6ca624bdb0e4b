//! c64 kernels against num-complex references computed in f64: every
//! supported unary and binary op on strided, reversed, broadcast and
//! scalar operands, C99 Annex G special values, casts, where, fill, copy,
//! take, reductions, scans, matmul and nonzero, and clean refusals of what
//! is not generated.
//!
//! Accuracy is measured normwise, `|got - want| / |want|` in units of
//! f32's epsilon (2^-23), against the f64 reference; a reference
//! component that rounds to an infinity or NaN in f32 must be matched
//! exactly, and an error below f32's smallest normal number counts as 0.

mod common;

use anydev_core::ops::{BinaryOp, Op, OpCode, Operand, ReduceOp, ScanOp, UnaryOp};
use anydev_core::{DType, Scalar};
use common::*;
use num_complex::{Complex32, Complex64};

type C = Complex64;

const C64: DType = DType::C64;
const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

/// The shared device when it holds c64, or `None` (the reason printed).
fn c64_gpu() -> Option<&'static Gpu> {
    let g = common::gpu()?;
    if !g.holds(C64) {
        eprintln!("SKIPPED: this wgpu device does not hold c64");
        return None;
    }
    Some(g)
}

macro_rules! c64_or_skip {
    () => {
        match c64_gpu() {
            Some(g) => g,
            None => return,
        }
    };
}

/// The value rounded to c64, componentwise.
fn round(z: C) -> C {
    c(z.re as f32 as f64, z.im as f32 as f64)
}

fn encode_c(values: &[C]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|z| [(z.re as f32).to_le_bytes(), (z.im as f32).to_le_bytes()].concat())
        .collect()
}

fn decode_c(bytes: &[u8]) -> Vec<C> {
    bytes
        .chunks_exact(8)
        .map(|w| {
            c(
                f32::from_le_bytes(w[..4].try_into().unwrap()) as f64,
                f32::from_le_bytes(w[4..].try_into().unwrap()) as f64,
            )
        })
        .collect()
}

/// Buffer bytes of a view with `values` at their places and 7+7i elsewhere.
fn place_c(view: &View, values: &[C]) -> Vec<u8> {
    let mut all = vec![c(7.0, 7.0); view.len];
    for (i, &v) in values.iter().enumerate() {
        all[element_index(i, &view.shape, &view.strides, view.offset)] = v;
    }
    encode_c(&all)
}

/// Any output dtype's elements as complex numbers (real outputs have
/// imaginary part 0, bools are 0 or 1).
fn decode_any(dtype: DType, bytes: &[u8]) -> Vec<C> {
    if dtype == C64 {
        decode_c(bytes)
    } else {
        decode(dtype, bytes).into_iter().map(|v| c(v, 0.0)).collect()
    }
}

/// Normwise error of `got` against the f64 reference in units of 2^-23;
/// infinite where a component whose reference rounds to a non-finite f32
/// differs, or where `got` is not finite but the reference is.
fn err_ulps(got: C, want: C) -> f64 {
    let w = round(want);
    for (g, w) in [(got.re, w.re), (got.im, w.im)] {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            g.is_finite()
        };
        if !ok {
            return INF;
        }
    }
    let part = |g: f64, v: f64, w: f64| if w.is_finite() { (g - v, v) } else { (0.0, 0.0) };
    let (dx, wx) = part(got.re, want.re, w.re);
    let (dy, wy) = part(got.im, want.im, w.im);
    let mag = wx.hypot(wy);
    let d = dx.hypot(dy);
    // Results below f32's normal range may lose their relative precision
    // (drivers may flush subnormals).
    if d <= 2f64.powi(-126) {
        return 0.0;
    }
    if d == 0.0 {
        0.0
    } else if mag == 0.0 {
        INF
    } else {
        d / mag / 2f64.powi(-23)
    }
}

/// Random values with components ±10^u, u uniform in `[lo, hi]`, a few
/// exact zeros among them.
fn values(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<C> {
    let part = |rng: &mut Rng| {
        if rng.next_u64().is_multiple_of(16) {
            return 0.0;
        }
        let s = if rng.next_u64().is_multiple_of(2) { 1.0 } else { -1.0 };
        round_to(DType::F32, s * 10f64.powf(rng.uniform(lo, hi)))
    };
    (0..n).map(|_| c(part(rng), part(rng))).collect()
}

/// Values around the unit circle (where ln |z| cancels) and small ones.
fn near_one(rng: &mut Rng, n: usize) -> Vec<C> {
    (0..n)
        .map(|i| {
            let t = rng.uniform(-3.2, 3.2);
            let r = if i % 2 == 0 {
                1.0 + rng.uniform(-1e-3, 1e-3)
            } else {
                rng.uniform(0.01, 0.45)
            };
            round(c(r * t.cos(), r * t.sin()))
        })
        .collect()
}

/// The f64 reference of a unary op.
fn unary_ref(op: UnaryOp, z: C) -> C {
    use UnaryOp::*;
    let b = |v: bool| c(v as u8 as f64, 0.0);
    match op {
        Abs => c(z.norm(), 0.0),
        Real => c(z.re, 0.0),
        Imag => c(z.im, 0.0),
        Conj => z.conj(),
        Negative => -z,
        Square => z * z,
        // NumPy's 1 / 0 is NaN + NaN i (its formula divides 0 by 0), not
        // the infinity of a division by 0.
        Reciprocal if z.norm() == 0.0 => c(NAN, NAN),
        Reciprocal => binary_ref(BinaryOp::Divide, c(1.0, 0.0), z),
        Sign => {
            if z.norm() == 0.0 {
                c(0.0, 0.0)
            } else {
                z / z.norm()
            }
        }
        Round => c(z.re.round_ties_even(), z.im.round_ties_even()),
        IsNan => b(z.re.is_nan() || z.im.is_nan()),
        IsInf => b(z.re.is_infinite() || z.im.is_infinite()),
        IsFinite => b(z.re.is_finite() && z.im.is_finite()),
        Sqrt => z.sqrt(),
        Exp => z.exp(),
        Expm1 => z.exp() - 1.0,
        Log => z.ln(),
        Log1p => (z + 1.0).ln(),
        Log2 => z.ln() / std::f64::consts::LN_2,
        Log10 => z.ln() / std::f64::consts::LN_10,
        Sin => z.sin(),
        Cos => z.cos(),
        Tan => z.tan(),
        Sinh => z.sinh(),
        Cosh => z.cosh(),
        Tanh => z.tanh(),
        Asin => z.asin(),
        Acos => z.acos(),
        Atan => z.atan(),
        Asinh => z.asinh(),
        Acosh => z.acosh(),
        Atanh => z.atanh(),
        _ => unreachable!("{op} is not generated for c64"),
    }
}

/// The ops generated for c64, with the normwise bound (units of 2^-23)
/// each is tested to; 0 is exact.
const UNARY: [(UnaryOp, f64); 31] = [
    (UnaryOp::Abs, 1.0),
    (UnaryOp::Real, 0.0),
    (UnaryOp::Imag, 0.0),
    (UnaryOp::Conj, 0.0),
    (UnaryOp::Negative, 0.0),
    (UnaryOp::Round, 0.0),
    (UnaryOp::IsNan, 0.0),
    (UnaryOp::IsInf, 0.0),
    (UnaryOp::IsFinite, 0.0),
    (UnaryOp::Square, 2.0),
    (UnaryOp::Reciprocal, 2.0),
    (UnaryOp::Sign, 2.0),
    (UnaryOp::Sqrt, 2.0),
    (UnaryOp::Exp, 2.0),
    (UnaryOp::Expm1, 3.0),
    (UnaryOp::Log, 2.0),
    (UnaryOp::Log1p, 2.0),
    (UnaryOp::Log2, 2.0),
    (UnaryOp::Log10, 3.0),
    (UnaryOp::Sin, 2.0),
    (UnaryOp::Cos, 3.0),
    (UnaryOp::Tan, 4.0),
    (UnaryOp::Sinh, 2.0),
    (UnaryOp::Cosh, 2.0),
    (UnaryOp::Tanh, 4.0),
    (UnaryOp::Asin, 3.0),
    (UnaryOp::Acos, 3.0),
    (UnaryOp::Atan, 3.0),
    (UnaryOp::Asinh, 3.0),
    (UnaryOp::Acosh, 3.0),
    (UnaryOp::Atanh, 3.0),
];

/// Inputs of a unary op: moderate values for all, the whole exponent
/// range where the op does not overflow on the way, values near the unit
/// circle for the logarithms.
fn unary_inputs(op: UnaryOp, rng: &mut Rng) -> Vec<C> {
    use UnaryOp::*;
    let mut x = values(rng, 160, -3.0, 1.3);
    match op {
        Abs | Sqrt | Log | Log2 | Log10 | Reciprocal | Sign | Real | Imag | Conj | Negative | IsNan | IsInf
        | IsFinite => {
            x.extend(values(rng, 96, -37.0, 38.0));
            x.push(round(c(3.0e38, 3.0e38)));
        }
        _ => {}
    }
    if matches!(
        op,
        Log | Log1p | Log2 | Log10 | Expm1 | Sqrt | Asin | Acos | Atan | Asinh | Acosh | Atanh
    ) {
        x.extend(near_one(rng, 64));
    }
    if matches!(op, Exp | Sinh | Cosh) {
        // Real parts where e^x overflows f32 but the result need not.
        x.extend(
            [
                c(90.0, 1.5),
                c(89.5, -3.0),
                c(-90.0, 1.5),
                c(95.0, std::f64::consts::FRAC_PI_2),
            ]
            .map(round),
        );
    }
    if matches!(op, Tan | Tanh) {
        // Keep away from the poles, where the f64 reference itself loses digits.
        x.retain(|z| {
            let (a, b) = if op == Tan { (z.im, z.re) } else { (z.re, z.im) };
            (2.0 * a).cosh() + (2.0 * b).cos() > 1e-3
        });
    }
    x.extend(
        [
            c(0.0, 0.0),
            c(-0.0, 0.0),
            c(1.0, 0.0),
            c(-1.0, 0.0),
            c(0.0, -1.0),
            c(2.5, -1.5),
            c(-0.5, 0.5),
        ]
        .map(round),
    );
    if matches!(op, Asin | Acos | Atan | Asinh | Acosh | Atanh) {
        // On a branch cut the side is the sign of a zero component, which
        // the f64 reference does not follow (the special cases check it).
        x.retain(|z| z.re != 0.0 && z.im != 0.0);
    }
    x.retain(|z| {
        let w = unary_ref(op, *z);
        // Overflow to infinity is checked as such; results below f32's
        // normal range lose their relative precision by design.
        !(w.norm() < 1e-37 && w.norm() != 0.0)
    });
    x
}

fn out_dtype(op: UnaryOp) -> DType {
    op.output_dtype(C64)
}

/// Runs unary `op` with `x` reversed and the output gapped.
fn run_unary(g: &Gpu, op: UnaryOp, x: &[C], shape: &[usize]) -> Vec<C> {
    let xv = View::reversed(shape);
    let ov = View::gapped(shape);
    let od = out_dtype(op);
    let xb = g.upload(&place_c(&xv, x));
    let out = g.upload(&vec![0u8; ov.len * od.size()]);
    g.run(&Op::Unary {
        op,
        x: xv.tensor(&xb, C64),
        out: ov.tensor(&out, od),
    })
    .unwrap_or_else(|e| panic!("{op}: {e}"));
    ov.gather(&decode_any(od, &g.download(&out)))
}

#[test]
fn unary_ops_match_f64_references() {
    let g = c64_or_skip!();
    let mut rng = Rng(7);
    let mut report = Vec::new();
    for (op, bound) in UNARY {
        assert!(
            g.backend.supports(0, OpCode::Unary(op), C64),
            "{op} must be supported for c64"
        );
        let x = unary_inputs(op, &mut rng);
        let n = x.len();
        let got = run_unary(g, op, &x, &[1, n]);
        let mut worst = 0f64;
        for (z, got) in x.iter().zip(&got) {
            let want = unary_ref(op, *z);
            let e = err_ulps(*got, want);
            assert!(e <= bound, "{op}({z}): got {got} want {want} ({e:.2} > {bound} ulp)");
            worst = worst.max(e);
        }
        report.push(format!("{op} {worst:.2}"));
    }
    eprintln!("c64 unary, worst normwise error in ulp (2^-23): {}", report.join(", "));
}

/// Every other unary op is refused for c64, cleanly.
#[test]
fn unary_ops_not_generated_are_refused() {
    let g = c64_or_skip!();
    for &op in UnaryOp::ALL {
        if UNARY.iter().any(|&(u, _)| u == op) {
            continue;
        }
        assert!(!g.backend.supports(0, OpCode::Unary(op), C64), "{op}");
        let xb = g.upload(&encode_c(&[c(1.0, 2.0)]));
        let od = op.output_dtype(C64);
        let out = g.alloc(od.size());
        let (shape, strides) = ([1usize], [1isize]);
        let e = g
            .run(&Op::Unary {
                op,
                x: tensor(&xb, C64, &shape, &strides, 0),
                out: tensor(&out, od, &shape, &strides, 0),
            })
            .expect_err("unsupported op ran");
        eprintln!("{op} on c64: {e}");
    }
}

fn same(got: f64, want: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else if want == 0.0 || want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= 4.0 * 2f64.powi(-23) * want.abs()
    }
}

/// C99 Annex G's special values (FreeBSD's msun, which NumPy follows); a
/// zero's or NaN's sign is not checked here.
#[test]
fn special_values_follow_annex_g() {
    use UnaryOp::*;
    let g = c64_or_skip!();
    let (c1, s1) = (1f64.cos(), 1f64.sin());
    let pi = std::f64::consts::PI;
    #[rustfmt::skip]
    let cases: Vec<(UnaryOp, C, C)> = vec![
        (Exp, c(0.0, 0.0), c(1.0, 0.0)), (Exp, c(-0.0, 0.0), c(1.0, 0.0)),
        (Exp, c(2.0, INF), c(NAN, NAN)), (Exp, c(2.0, NAN), c(NAN, NAN)),
        (Exp, c(INF, 0.0), c(INF, 0.0)), (Exp, c(-INF, 1.0), c(0.0, 0.0)),
        (Exp, c(INF, 1.0), c(INF, INF)), (Exp, c(-INF, INF), c(0.0, 0.0)),
        (Exp, c(INF, INF), c(INF, NAN)), (Exp, c(-INF, NAN), c(0.0, 0.0)),
        (Exp, c(INF, NAN), c(INF, NAN)), (Exp, c(NAN, 0.0), c(NAN, 0.0)),
        (Exp, c(NAN, 1.0), c(NAN, NAN)), (Exp, c(0.0, 1.0), c(c1, s1)),
        (Log, c(-0.0, 0.0), c(-INF, pi)), (Log, c(0.0, 0.0), c(-INF, 0.0)),
        (Log, c(2.0, INF), c(INF, pi / 2.0)), (Log, c(2.0, NAN), c(NAN, NAN)),
        (Log, c(-INF, 1.0), c(INF, pi)), (Log, c(INF, 1.0), c(INF, 0.0)),
        (Log, c(-INF, INF), c(INF, 0.75 * pi)), (Log, c(INF, INF), c(INF, pi / 4.0)),
        (Log, c(INF, NAN), c(INF, NAN)), (Log, c(-INF, NAN), c(INF, NAN)),
        (Log, c(NAN, 1.0), c(NAN, NAN)), (Log, c(NAN, INF), c(INF, NAN)),
        (Log, c(NAN, NAN), c(NAN, NAN)), (Log, c(-1.0, -0.0), c(0.0, -pi)),
        (Sqrt, c(0.0, 0.0), c(0.0, 0.0)), (Sqrt, c(-0.0, 0.0), c(0.0, 0.0)),
        (Sqrt, c(2.0, INF), c(INF, INF)), (Sqrt, c(NAN, INF), c(INF, INF)),
        (Sqrt, c(2.0, NAN), c(NAN, NAN)), (Sqrt, c(-INF, 1.0), c(0.0, INF)),
        (Sqrt, c(INF, 1.0), c(INF, 0.0)), (Sqrt, c(INF, NAN), c(INF, NAN)),
        (Sqrt, c(NAN, 1.0), c(NAN, NAN)), (Sqrt, c(NAN, NAN), c(NAN, NAN)),
        (Sqrt, c(-4.0, -0.0), c(0.0, -2.0)), (Sqrt, c(-4.0, 0.0), c(0.0, 2.0)),
        (Sinh, c(0.0, 0.0), c(0.0, 0.0)), (Sinh, c(0.0, INF), c(0.0, NAN)),
        (Sinh, c(0.0, NAN), c(0.0, NAN)), (Sinh, c(2.0, INF), c(NAN, NAN)),
        (Sinh, c(2.0, NAN), c(NAN, NAN)), (Sinh, c(INF, 0.0), c(INF, 0.0)),
        (Sinh, c(INF, 1.0), c(INF, INF)), (Sinh, c(-INF, 1.0), c(-INF, INF)),
        (Sinh, c(NAN, 0.0), c(NAN, 0.0)), (Sinh, c(NAN, 1.0), c(NAN, NAN)),
        (Cosh, c(0.0, 0.0), c(1.0, 0.0)), (Cosh, c(0.0, INF), c(NAN, 0.0)),
        (Cosh, c(0.0, NAN), c(NAN, 0.0)), (Cosh, c(2.0, INF), c(NAN, NAN)),
        (Cosh, c(2.0, NAN), c(NAN, NAN)), (Cosh, c(INF, 0.0), c(INF, 0.0)),
        (Cosh, c(INF, 1.0), c(INF, INF)), (Cosh, c(INF, NAN), c(INF, NAN)),
        (Cosh, c(NAN, 0.0), c(NAN, 0.0)), (Cosh, c(NAN, 1.0), c(NAN, NAN)),
        (Tanh, c(0.0, 0.0), c(0.0, 0.0)), (Tanh, c(2.0, INF), c(NAN, NAN)),
        (Tanh, c(2.0, NAN), c(NAN, NAN)), (Tanh, c(INF, 1.0), c(1.0, 0.0)),
        (Tanh, c(-INF, INF), c(-1.0, 0.0)), (Tanh, c(INF, NAN), c(1.0, 0.0)),
        (Tanh, c(NAN, 0.0), c(NAN, 0.0)), (Tanh, c(NAN, 1.0), c(NAN, NAN)),
        (Tanh, c(0.0, INF), c(0.0, NAN)), (Tanh, c(40.0, 1.0), c(1.0, 2f64.sin() / (80f64.cosh() + 2f64.cos()))),
        (Sin, c(0.0, INF), c(0.0, INF)), (Sin, c(INF, 0.0), c(NAN, 0.0)),
        (Cos, c(0.0, INF), c(INF, 0.0)), (Cos, c(INF, 0.0), c(NAN, 0.0)),
        (Tan, c(1.0, INF), c(0.0, 1.0)), (Tan, c(INF, 1.0), c(NAN, NAN)),
        (Sign, c(INF, 2.0), c(1.0, 0.0)), (Sign, c(2.0, -INF), c(0.0, -1.0)),
        (Sign, c(INF, INF), c(NAN, NAN)), (Sign, c(NAN, 1.0), c(NAN, NAN)),
        (Sign, c(-0.0, 0.0), c(0.0, 0.0)), (Abs, c(NAN, INF), c(INF, 0.0)),
        (Abs, c(3e38, 3e38), c(INF, 0.0)), (Abs, c(2e38, -2e38), c(2e38 * 2f64.sqrt(), 0.0)),
        (Reciprocal, c(0.0, 0.0), c(NAN, NAN)), (Reciprocal, c(INF, 1.0), c(0.0, 0.0)),
        (Expm1, c(INF, 0.0), c(INF, 0.0)), (Expm1, c(-INF, 1.0), c(-1.0, 0.0)),
        (Log1p, c(-1.0, 0.0), c(-INF, 0.0)), (Log1p, c(INF, NAN), c(INF, NAN)),
        (Asinh, c(0.0, 0.0), c(0.0, 0.0)), (Asinh, c(1.0, INF), c(INF, pi / 2.0)),
        (Asinh, c(1.0, NAN), c(NAN, NAN)), (Asinh, c(INF, 1.0), c(INF, 0.0)),
        (Asinh, c(INF, INF), c(INF, pi / 4.0)), (Asinh, c(INF, NAN), c(INF, NAN)),
        (Asinh, c(NAN, 0.0), c(NAN, 0.0)), (Asinh, c(NAN, 1.0), c(NAN, NAN)),
        (Acos, c(0.0, 0.0), c(pi / 2.0, 0.0)), (Acos, c(0.0, NAN), c(pi / 2.0, NAN)),
        (Acos, c(1.0, INF), c(pi / 2.0, -INF)), (Acos, c(1.0, NAN), c(NAN, NAN)),
        (Acos, c(-INF, 1.0), c(pi, -INF)), (Acos, c(INF, 1.0), c(0.0, -INF)),
        (Acos, c(-INF, INF), c(0.75 * pi, -INF)), (Acos, c(INF, INF), c(pi / 4.0, -INF)),
        (Acos, c(NAN, 1.0), c(NAN, NAN)), (Acos, c(NAN, INF), c(NAN, -INF)),
        (Acos, c(NAN, NAN), c(NAN, NAN)),
        (Acosh, c(0.0, 0.0), c(0.0, pi / 2.0)), (Acosh, c(1.0, INF), c(INF, pi / 2.0)),
        (Acosh, c(-INF, 1.0), c(INF, pi)), (Acosh, c(INF, 1.0), c(INF, 0.0)),
        (Acosh, c(-INF, INF), c(INF, 0.75 * pi)), (Acosh, c(INF, INF), c(INF, pi / 4.0)),
        (Acosh, c(NAN, INF), c(INF, NAN)), (Acosh, c(NAN, 1.0), c(NAN, NAN)),
        // The Array API standard's value (Annex G: NaN + NaN i).
        (Acosh, c(0.0, NAN), c(NAN, pi / 2.0)), (Sign, c(INF, NAN), c(NAN, NAN)),
        (Atanh, c(0.0, 0.0), c(0.0, 0.0)), (Atanh, c(0.0, NAN), c(0.0, NAN)),
        (Atanh, c(1.0, 0.0), c(INF, 0.0)), (Atanh, c(1.0, INF), c(0.0, pi / 2.0)),
        (Atanh, c(1.0, NAN), c(NAN, NAN)), (Atanh, c(INF, 1.0), c(0.0, pi / 2.0)),
        (Atanh, c(INF, INF), c(0.0, pi / 2.0)), (Atanh, c(INF, NAN), c(0.0, NAN)),
        (Atanh, c(NAN, 1.0), c(NAN, NAN)), (Atanh, c(NAN, INF), c(0.0, pi / 2.0)),
        (Atanh, c(NAN, NAN), c(NAN, NAN)),
        (Atan, c(0.0, 1.0), c(0.0, INF)), (Atan, c(INF, 1.0), c(pi / 2.0, 0.0)),
        // The side of a branch cut is the sign of the zero component.
        (Asin, c(2.0, 0.0), c(pi / 2.0, (2.0 + 3f64.sqrt()).ln())),
        (Asin, c(2.0, -0.0), c(pi / 2.0, -(2.0 + 3f64.sqrt()).ln())),
        (Acos, c(2.0, 0.0), c(0.0, -(2.0 + 3f64.sqrt()).ln())),
        (Acos, c(2.0, -0.0), c(0.0, (2.0 + 3f64.sqrt()).ln())),
        (Atanh, c(2.0, 0.0), c(3f64.ln() / 2.0, pi / 2.0)),
        (Atanh, c(2.0, -0.0), c(3f64.ln() / 2.0, -pi / 2.0)),
        (Acosh, c(-2.0, 0.0), c((2.0 + 3f64.sqrt()).ln(), pi)),
        (Acosh, c(-2.0, -0.0), c((2.0 + 3f64.sqrt()).ln(), -pi)),
        // Far from 0, where the functions switch to their asymptotic forms.
        (Asinh, c(1e20, 1e20), c((2e20 * 2f64.sqrt()).ln(), pi / 4.0)),
        (Asinh, c(-1e20, 1e20), c(-(2e20 * 2f64.sqrt()).ln(), pi / 4.0)),
        (Asin, c(0.0, 1e10), c(0.0, 2e10f64.ln())),
        (Acos, c(1e20, 0.0), c(0.0, -2e20f64.ln())),
        (Acosh, c(-1e10, 0.0), c(2e10f64.ln(), pi)),
        (Atanh, c(1e20, 1e20), c(5e-21, pi / 2.0)),
        (Atan, c(1e20, -1e20), c(pi / 2.0, -5e-21)),
    ];
    let mut failures = Vec::new();
    for (op, z, want) in cases {
        let got = run_unary(g, op, &[z], &[1])[0];
        if !(same(got.re, want.re) && same(got.im, want.im)) {
            failures.push(format!("{op}({z}): got {got} want {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn binary_ref(op: BinaryOp, a: C, b: C) -> C {
    let t = |v: bool| c(v as u8 as f64, 0.0);
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a * b,
        // By zero as NumPy: each component divided by +0.
        BinaryOp::Divide if b.norm() == 0.0 => c(a.re / 0.0, a.im / 0.0),
        BinaryOp::Divide => a / b,
        BinaryOp::Equal => t(a == b),
        BinaryOp::NotEqual => t(a != b),
        _ => unreachable!(),
    }
}

const BINARY: [(BinaryOp, f64); 6] = [
    (BinaryOp::Add, 0.0),
    (BinaryOp::Subtract, 0.0),
    (BinaryOp::Multiply, 2.0),
    (BinaryOp::Divide, 2.0),
    (BinaryOp::Equal, 0.0),
    (BinaryOp::NotEqual, 0.0),
];

/// Tensor ⊕ broadcast row, tensor ⊕ scalar and scalar ⊕ tensor.
#[test]
fn binary_ops_with_broadcast_and_scalar_operands() {
    let g = c64_or_skip!();
    let mut rng = Rng(11);
    let (rows, cols) = (6usize, 40usize);
    let shape = [rows, cols];
    let mut report = Vec::new();
    for (op, bound) in BINARY {
        assert!(g.backend.supports(0, OpCode::Binary(op), C64), "{op}");
        let wide = op == BinaryOp::Divide;
        let (lo, hi) = if wide { (-18.0, 18.0) } else { (-3.0, 3.0) };
        let mut a = values(&mut rng, rows * cols, lo, hi);
        let mut row = values(&mut rng, cols, lo, hi);
        // Equal values, signed zeros and NaNs for the comparisons.
        a[..4].copy_from_slice(&[c(1.5, -2.0), c(-0.0, 0.0), c(NAN, 1.0), c(3.0, 0.0)]);
        row[..4].copy_from_slice(&[c(1.5, -2.0), c(0.0, -0.0), c(NAN, 1.0), c(3.0, 1e-7)]);
        if wide {
            // Where the textbook formula over- or underflows in f32.
            a[4..8].copy_from_slice(&[c(1e30, 1e30), c(1e-30, 2e-30), c(3e38, -1e38), c(1.0, 1.0)]);
            row[4..8].copy_from_slice(&[c(2e30, -1e30), c(1e-30, -3e-30), c(1e38, 2e38), c(1e-25, 1e-25)]);
        }
        let (a, row): (Vec<C>, Vec<C>) = (a.into_iter().map(round).collect(), row.into_iter().map(round).collect());
        let scalar = round(c(-1.25, 0.75));
        let od = if op.outputs_bool() { DType::Bool } else { C64 };
        let av = View::reversed(&shape);
        let rv = View {
            shape: shape.to_vec(),
            strides: vec![0, 2],
            offset: 1,
            len: 2 * cols + 1,
        };
        let ab = g.upload(&place_c(&av, &a));
        let rb = g.upload(&place_c(&View::gapped(&[cols]), &row));
        let ov = View::column_major(&shape);
        let mut worst = 0f64;
        for case in 0..3 {
            let out = g.alloc(ov.len * od.size());
            let s = Scalar::C64(Complex32::new(scalar.re as f32, scalar.im as f32));
            let (lhs, rhs) = match case {
                0 => (
                    Operand::Tensor(av.tensor(&ab, C64)),
                    Operand::Tensor(rv.tensor(&rb, C64)),
                ),
                1 => (Operand::Tensor(av.tensor(&ab, C64)), Operand::Scalar(s)),
                _ => (Operand::Scalar(s), Operand::Tensor(av.tensor(&ab, C64))),
            };
            g.run(&Op::Binary {
                op,
                lhs,
                rhs,
                out: ov.tensor(&out, od),
            })
            .unwrap_or_else(|e| panic!("{op}: {e}"));
            let got = ov.gather(&decode_any(od, &g.download(&out)));
            for i in 0..rows * cols {
                let (x, y) = match case {
                    0 => (a[i], row[i % cols]),
                    1 => (a[i], scalar),
                    _ => (scalar, a[i]),
                };
                let want = binary_ref(op, x, y);
                let e = if bound == 0.0 {
                    // Exact: the componentwise rounding of the f64 result.
                    let w = round(want);
                    let eq = |g: f64, w: f64| g == w || (g.is_nan() && w.is_nan());
                    if eq(got[i].re, w.re) && eq(got[i].im, w.im) {
                        0.0
                    } else {
                        INF
                    }
                } else {
                    err_ulps(got[i], want)
                };
                assert!(
                    e <= bound,
                    "{op}({x}, {y}) case {case}: got {} want {want} ({e:.2} > {bound} ulp)",
                    got[i]
                );
                worst = worst.max(e);
            }
        }
        report.push(format!("{op} {worst:.2}"));
    }
    eprintln!("c64 binary, worst normwise error in ulp (2^-23): {}", report.join(", "));
    for &op in BinaryOp::ALL {
        let generated = BINARY.iter().any(|&(b, _)| b == op);
        let generated = generated || op == BinaryOp::Pow;
        assert_eq!(g.backend.supports(0, OpCode::Binary(op), C64), generated, "{op}");
    }
}

/// Division by zero and by infinities, as NumPy's Smith division gives.
#[test]
fn division_special_values() {
    let g = c64_or_skip!();
    let cases = [
        (c(1.0, 1.0), c(0.0, 0.0), c(INF, INF)),
        (c(0.0, 0.0), c(0.0, 0.0), c(NAN, NAN)),
        (c(1.0, 2.0), c(INF, 0.0), c(0.0, 0.0)),
        (c(1.0, 2.0), c(NAN, 1.0), c(NAN, NAN)),
        (c(4.0, -2.0), c(2.0, 0.0), c(2.0, -1.0)),
    ];
    let n = cases.len();
    let (shape, strides) = ([n], [1isize]);
    let a: Vec<C> = cases.iter().map(|t| t.0).collect();
    let b: Vec<C> = cases.iter().map(|t| t.1).collect();
    let (ab, bb) = (g.upload(&encode_c(&a)), g.upload(&encode_c(&b)));
    let out = g.alloc(n * 8);
    g.run(&Op::Binary {
        op: BinaryOp::Divide,
        lhs: Operand::Tensor(tensor(&ab, C64, &shape, &strides, 0)),
        rhs: Operand::Tensor(tensor(&bb, C64, &shape, &strides, 0)),
        out: tensor(&out, C64, &shape, &strides, 0),
    })
    .unwrap();
    for (got, (x, y, want)) in decode_c(&g.download(&out)).into_iter().zip(cases) {
        assert!(
            same(got.re, want.re) && same(got.im, want.im),
            "{x} / {y}: got {got} want {want}"
        );
    }
}

/// Real to c64 (imaginary part 0) for every real dtype held, c64 to bool
/// (`!= 0`), and c64 to the other real dtypes (the real part, with the
/// real casts' rules).
#[test]
fn casts_between_c64_and_real_dtypes() {
    let g = c64_or_skip!();
    let reals: Vec<DType> = DType::ALL
        .into_iter()
        .filter(|&d| g.holds(d) && !d.is_complex())
        .collect();
    let zs = [
        c(0.0, 0.0),
        c(-0.0, 2.0),
        c(2.75, -1.0),
        c(-3.5, 0.0),
        c(NAN, 0.0),
        c(0.0, NAN),
        c(INF, 1.0),
        c(300.5, 7.0),
    ];
    let shape = [zs.len()];
    let xv = View::reversed(&shape);
    let ov = View::contiguous(&shape);
    let xb = g.upload(&place_c(&xv, &zs));
    for &d in &reals {
        assert!(g.backend.supports(0, OpCode::Cast, C64));
        // c64 -> d
        let out = g.alloc(zs.len() * d.size());
        g.run(&Op::Cast {
            x: xv.tensor(&xb, C64),
            out: ov.tensor(&out, d),
        })
        .unwrap();
        let got = g.download(&out);
        for (i, z) in zs.iter().enumerate() {
            let want = if d == DType::Bool {
                vec![(z.re != 0.0 || z.im != 0.0) as u8]
            } else if d.is_float() {
                encode(d, &[z.re])
            } else {
                // Truncated and saturated, as the real float casts.
                let (lo, hi) = int_range(d);
                encode_int(d, &[(z.re.trunc() as i128).clamp(lo, hi)])
            };
            let got_i = &got[i * d.size()..(i + 1) * d.size()];
            let both_nan = d.is_float() && decode(d, got_i)[0].is_nan() && z.re.is_nan();
            // NaN and infinity to an integer: the real casts' rules, checked elsewhere.
            let skip = d.is_integer() && !z.re.is_finite();
            assert!(
                skip || both_nan || got_i == &want[..],
                "{z} -> {d}: got {got_i:?} want {want:?}"
            );
        }
        // d -> c64
        let reals_in: Vec<f64> = [0.0, 1.0, -2.0, 100.0, 3.25, -0.5, 7.0, 65.0]
            .iter()
            .map(|&v| if d == DType::Bool { (v != 0.0) as u8 as f64 } else { v })
            .map(|v| if d.is_signed() || d.is_float() { v } else { v.abs() })
            .collect();
        let rb = g.upload(&xv.place(d, &reals_in));
        let out = g.alloc(zs.len() * 8);
        g.run(&Op::Cast {
            x: xv.tensor(&rb, d),
            out: ov.tensor(&out, C64),
        })
        .unwrap();
        let got = decode_c(&g.download(&out));
        for (i, &v) in reals_in.iter().enumerate() {
            let want = c(round_to(d, v) as f32 as f64, 0.0);
            assert!(
                got[i] == want && got[i].im.to_bits() == 0,
                "{d} {v} -> c64: got {}",
                got[i]
            );
        }
    }
}

#[test]
fn where_fill_copy_and_take() {
    let g = c64_or_skip!();
    let shape = [3usize, 5];
    let n = 15;
    let x: Vec<C> = (0..n).map(|i| c(i as f64, -(i as f64) / 4.0)).collect();
    let xv = View::reversed(&shape);
    let xb = g.upload(&place_c(&xv, &x));
    let ov = View::gapped(&shape);
    let y = c(-3.5, 0.25);
    let ys = Scalar::C64(Complex32::new(-3.5, 0.25));
    // where(cond, x, scalar)
    let cond: Vec<i128> = (0..n).map(|i| (i % 3 == 0) as i128).collect();
    let cv = View::column_major(&shape);
    let cb = g.upload(&cv.place_int(DType::Bool, &cond));
    let out = g.alloc(ov.len * 8);
    g.run(&Op::Where {
        cond: cv.tensor(&cb, DType::Bool),
        x: Operand::Tensor(xv.tensor(&xb, C64)),
        y: Operand::Scalar(ys),
        out: ov.tensor(&out, C64),
    })
    .unwrap();
    let got = ov.gather(&decode_c(&g.download(&out)));
    let want: Vec<C> = (0..n).map(|i| if cond[i] == 1 { x[i] } else { y }).collect();
    assert_eq!(got, want, "where");
    // fill
    let out = g.alloc(ov.len * 8);
    g.run(&Op::Fill {
        out: ov.tensor(&out, C64),
        value: ys,
    })
    .unwrap();
    assert_eq!(ov.gather(&decode_c(&g.download(&out))), vec![y; n], "fill");
    // copy
    let out = g.alloc(ov.len * 8);
    g.run(&Op::Copy {
        x: xv.tensor(&xb, C64),
        out: ov.tensor(&out, C64),
    })
    .unwrap();
    assert_eq!(ov.gather(&decode_c(&g.download(&out))), x, "copy");
    // take along axis 1
    if g.holds(DType::I64) {
        let idx = [4i128, 0, 2, 2];
        let ib = g.upload(&encode_int(DType::I64, &idx));
        let (ishape, istr) = ([4usize], [1isize]);
        let tv = View::contiguous(&[3, 4]);
        let out = g.alloc(12 * 8);
        g.run(&Op::Take {
            x: xv.tensor(&xb, C64),
            indices: tensor(&ib, DType::I64, &ishape, &istr, 0),
            axis: 1,
            out: tv.tensor(&out, C64),
        })
        .unwrap();
        let want: Vec<C> = (0..12).map(|i| x[(i / 4) * 5 + idx[i % 4] as usize]).collect();
        assert_eq!(decode_c(&g.download(&out)), want, "take");
    }
}

/// sum and prod (per-thread and per-workgroup kernels), all and any.
#[test]
fn reductions_sum_prod_all_any() {
    let g = c64_or_skip!();
    let mut rng = Rng(3);
    for (shape, axes) in [
        (vec![3usize, 4, 5], vec![1usize]),
        (vec![3, 4, 5], vec![0, 2]),
        (vec![2, 600], vec![1]),
    ] {
        let n: usize = shape.iter().product();
        let x: Vec<C> = (0..n)
            .map(|_| round(c(rng.uniform(0.8, 1.2), rng.uniform(-0.3, 0.3))))
            .collect();
        let mut with_zeros = x.clone();
        for v in with_zeros.iter_mut().step_by(7) {
            *v = c(0.0, 0.0);
        }
        let xv = View::reversed(&shape);
        let mut out_shape = shape.clone();
        axes.iter().for_each(|&a| out_shape[a] = 1);
        let ov = View::gapped(&out_shape);
        for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::All, ReduceOp::Any] {
            assert!(g.backend.supports(0, OpCode::Reduce(op), C64), "{op}");
            let data = if matches!(op, ReduceOp::All | ReduceOp::Any) {
                &with_zeros
            } else {
                &x
            };
            let xb = g.upload(&place_c(&xv, data));
            let od = if op == ReduceOp::Sum || op == ReduceOp::Prod {
                C64
            } else {
                DType::Bool
            };
            let out = g.alloc(ov.len * od.size());
            g.run(&Op::Reduce {
                op,
                x: xv.tensor(&xb, C64),
                axes: &axes,
                out: ov.tensor(&out, od),
            })
            .unwrap();
            let got = ov.gather(&decode_any(od, &g.download(&out)));
            let out_n: usize = out_shape.iter().product();
            let mut groups = vec![Vec::new(); out_n];
            for (i, &z) in data.iter().enumerate() {
                groups[reduced_index(i, &shape, &out_shape)].push(z);
            }
            for (o, group) in groups.iter().enumerate() {
                let want = match op {
                    ReduceOp::Sum => group.iter().sum::<C>(),
                    ReduceOp::Prod => group.iter().product::<C>(),
                    ReduceOp::All => c(group.iter().all(|z| *z != c(0.0, 0.0)) as u8 as f64, 0.0),
                    _ => c(group.iter().any(|z| *z != c(0.0, 0.0)) as u8 as f64, 0.0),
                };
                // Each step rounds once (about one ulp of the partial
                // result, which is at most a few times the result here).
                let bound = if od == C64 { 4.0 * group.len() as f64 } else { 0.0 };
                let e = err_ulps(got[o], want);
                assert!(
                    e <= bound,
                    "{op} {shape:?} {axes:?} out {o}: got {} want {want} ({e:.1} ulp)",
                    got[o]
                );
            }
        }
    }
    for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::ArgMax, ReduceOp::ArgMin] {
        assert!(
            !g.backend.supports(0, OpCode::Reduce(op), C64),
            "{op} has no order for c64"
        );
    }
}

#[test]
fn scans_matmul_and_nonzero() {
    let g = c64_or_skip!();
    let mut rng = Rng(5);
    // cumsum and cumprod along both axes of a column-major input.
    let shape = [3usize, 6];
    let x: Vec<C> = (0..18)
        .map(|_| round(c(rng.uniform(0.5, 1.5), rng.uniform(-0.5, 0.5))))
        .collect();
    let xv = View::column_major(&shape);
    let xb = g.upload(&place_c(&xv, &x));
    for (op, axis) in [
        (ScanOp::CumulativeSum, 1usize),
        (ScanOp::CumulativeProd, 0),
        (ScanOp::CumulativeProd, 1),
    ] {
        let ov = View::reversed(&shape);
        let out = g.alloc(ov.len * 8);
        g.run(&Op::Scan {
            op,
            x: xv.tensor(&xb, C64),
            axis,
            out: ov.tensor(&out, C64),
        })
        .unwrap();
        let got = ov.gather(&decode_c(&g.download(&out)));
        for r in 0..3 {
            for col in 0..6 {
                let line: Vec<C> = if axis == 1 {
                    (0..=col).map(|k| x[r * 6 + k]).collect()
                } else {
                    (0..=r).map(|k| x[k * 6 + col]).collect()
                };
                let want = if op == ScanOp::CumulativeSum {
                    line.iter().sum::<C>()
                } else {
                    line.iter().product()
                };
                let e = err_ulps(got[r * 6 + col], want);
                assert!(
                    e <= 4.0 * line.len() as f64,
                    "{op:?} axis {axis} ({r},{col}): {e:.1} ulp"
                );
            }
        }
    }
    // matmul: a [2, 33, 17] (transposed in memory) times b [17, 20] broadcast over the batch.
    let (bt, m, k, n) = (2usize, 33usize, 17usize, 20usize);
    let a: Vec<C> = (0..bt * m * k)
        .map(|_| round(c(rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0))))
        .collect();
    let b: Vec<C> = (0..k * n)
        .map(|_| round(c(rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0))))
        .collect();
    let av = View::column_major(&[bt, m, k]);
    let bv = View {
        shape: vec![bt, k, n],
        strides: vec![0, n as isize, 1],
        offset: 0,
        len: k * n,
    };
    let ov = View::contiguous(&[bt, m, n]);
    let (ab, bb) = (g.upload(&place_c(&av, &a)), g.upload(&encode_c(&b)));
    let out = g.alloc(bt * m * n * 8);
    g.run(&Op::Matmul {
        a: av.tensor(&ab, C64),
        b: bv.tensor(&bb, C64),
        out: ov.tensor(&out, C64),
    })
    .unwrap();
    let got = decode_c(&g.download(&out));
    for p in 0..bt {
        for i in 0..m {
            for j in 0..n {
                let terms: Vec<C> = (0..k).map(|q| a[(p * m + i) * k + q] * b[q * n + j]).collect();
                let want: C = terms.iter().sum();
                // Absolute bound: k rounded products and sums, relative to the terms' size.
                let scale: f64 = terms.iter().map(|t| t.norm()).sum();
                let d = (got[(p * m + i) * n + j] - want).norm();
                assert!(
                    d <= 4.0 * k as f64 * 2f64.powi(-23) * scale,
                    "matmul ({p},{i},{j}): got {} want {want}",
                    got[(p * m + i) * n + j]
                );
            }
        }
    }
    // nonzero: a value is non-zero when either component is (NaN counts).
    if g.holds(DType::I64) {
        let shape = [4usize, 5];
        let z: Vec<C> = (0..20)
            .map(|i| match i % 5 {
                0 => c(0.0, 1.0),
                1 => c(-0.0, 0.0),
                2 => c(NAN, 0.0),
                3 => c(0.0, -0.0),
                _ => c(2.0, 0.0),
            })
            .collect();
        let zv = View::reversed(&shape);
        let zb = g.upload(&place_c(&zv, &z));
        let coords: Vec<[i128; 2]> = (0..20)
            .filter(|&i| z[i].re != 0.0 || z[i].im != 0.0 || z[i].re.is_nan())
            .map(|i| [(i / 5) as i128, (i % 5) as i128])
            .collect();
        let oshape = [coords.len(), 2];
        let ostr = contiguous(&oshape);
        let out = g.alloc(coords.len() * 16);
        g.run(&Op::Nonzero {
            x: zv.tensor(&zb, C64),
            out: tensor(&out, DType::I64, &oshape, &ostr, 0),
        })
        .unwrap();
        assert_eq!(decode_int(DType::I64, &g.download(&out)), coords.concat());
    }
}

/// What has no meaning or no kernel for c64 is refused, never run.
#[test]
fn unordered_and_ungenerated_ops_are_refused() {
    let g = c64_or_skip!();
    for op in [
        OpCode::Sort,
        OpCode::Argsort,
        OpCode::SearchSorted,
        OpCode::Arange,
        OpCode::Random,
    ] {
        assert!(!g.backend.supports(0, op, C64), "{op:?}");
    }
    assert!(!g.backend.supports(0, OpCode::Cast, DType::C128), "c128 is not held");
    let xb = g.upload(&encode_c(&[c(2.0, 1.0), c(1.0, 0.0)]));
    let (shape, strides) = ([2usize], [1isize]);
    let out = g.alloc(16);
    let e = g
        .run(&Op::Sort {
            x: tensor(&xb, C64, &shape, &strides, 0),
            axis: 0,
            descending: false,
            out: tensor(&out, C64, &shape, &strides, 0),
        })
        .expect_err("sorting c64 ran");
    eprintln!("sort on c64: {e}");
    // c128 is neither held nor a cast target: refused, not run.
    let f = g.upload(&encode(DType::F32, &[1.0, 2.0]));
    let wide = g.alloc(32);
    let e = g
        .run(&Op::Cast {
            x: tensor(&f, DType::F32, &shape, &strides, 0),
            out: tensor(&wide, DType::C128, &shape, &strides, 0),
        })
        .expect_err("a cast to c128 ran");
    eprintln!("cast to c128: {e}");
    assert!(!g.holds(DType::C128));
}

/// `pow`, NumPy's: integer exponents by repeated squaring, others as
/// exp(b log a); the error of the latter grows with |b log a|, as the
/// exponent's rounding error becomes the result's relative error.
#[test]
fn pow_matches_f64_references() {
    let g = c64_or_skip!();
    let mut rng = Rng(13);
    let mut bases = values(&mut rng, 24, -1.0, 1.0);
    bases.extend([c(-2.0, 0.0), c(0.0, 1.0), c(1.0, 0.0)]);
    let exps: Vec<C> = [
        c(0.0, 0.0),
        c(1.0, 0.0),
        c(2.0, 0.0),
        c(3.0, 0.0),
        c(7.0, 0.0),
        c(-1.0, 0.0),
        c(-4.0, 0.0),
        c(0.5, 0.0),
        c(-1.5, 0.0),
        c(0.0, 1.0),
        c(1.25, -0.75),
        c(2.5, 2.0),
    ]
    .to_vec();
    let (na, nb) = (bases.len(), exps.len());
    let shape = [na, nb];
    // a broadcast along the columns, b along the rows.
    let av = View {
        shape: shape.to_vec(),
        strides: vec![1, 0],
        offset: 0,
        len: na,
    };
    let bv = View {
        shape: shape.to_vec(),
        strides: vec![0, 1],
        offset: 0,
        len: nb,
    };
    let ov = View::reversed(&shape);
    let (ab, bb) = (g.upload(&encode_c(&bases)), g.upload(&encode_c(&exps)));
    let out = g.alloc(ov.len * 8);
    g.run(&Op::Binary {
        op: BinaryOp::Pow,
        lhs: Operand::Tensor(av.tensor(&ab, C64)),
        rhs: Operand::Tensor(bv.tensor(&bb, C64)),
        out: ov.tensor(&out, C64),
    })
    .unwrap();
    let got = ov.gather(&decode_c(&g.download(&out)));
    let mut worst = 0f64;
    for (i, &a) in bases.iter().enumerate() {
        for (j, &b) in exps.iter().enumerate() {
            let integer = b.im == 0.0 && b.re.fract() == 0.0;
            let want = if b == c(0.0, 0.0) {
                c(1.0, 0.0)
            } else if a == c(0.0, 0.0) {
                if b.re > 0.0 && b.im == 0.0 {
                    c(0.0, 0.0)
                } else {
                    c(NAN, NAN)
                }
            } else if integer {
                a.powi(b.re as i32)
            } else {
                a.powc(b)
            };
            let n = if integer { b.re.abs() } else { 1.0 };
            let bound = if integer {
                // One rounding per multiplication (and the reciprocal).
                2.0 * n + 2.0
            } else {
                4.0 + 4.0 * (b * a.ln()).norm()
            };
            let e = err_ulps(got[i * nb + j], want);
            assert!(
                e <= bound,
                "pow({a}, {b}): got {} want {want} ({e:.2} > {bound:.1} ulp)",
                got[i * nb + j]
            );
            worst = worst.max(e);
        }
    }
    eprintln!("c64 pow, worst normwise error in ulp (2^-23): {worst:.2}");
    // 0 to a non-real or non-positive power is NaN, as NumPy.
    let z = g.upload(&encode_c(&[c(0.0, 0.0)]));
    let e = g.upload(&encode_c(&[c(-1.0, 0.0)]));
    let out = g.alloc(8);
    let (sh, st) = ([1usize], [1isize]);
    g.run(&Op::Binary {
        op: BinaryOp::Pow,
        lhs: Operand::Tensor(tensor(&z, C64, &sh, &st, 0)),
        rhs: Operand::Tensor(tensor(&e, C64, &sh, &st, 0)),
        out: tensor(&out, C64, &sh, &st, 0),
    })
    .unwrap();
    let r = decode_c(&g.download(&out))[0];
    assert!(r.re.is_nan() && r.im.is_nan(), "0 ** -1: {r}");
}
