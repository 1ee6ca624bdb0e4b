//! c64 and c128 kernels against references written here: textbook
//! formulas in f64 for finite arguments away from branch cuts, and the
//! special values of C99 Annex G (as NumPy returns them) written out.

mod common;

use anydev_kernels::{supports, KernelError};
use anydev_ops::{BinaryOp, DType, Op, OpCode, Operand, ReduceOp, Scalar, ScanOp, UnaryOp};
use common::*;
use num_complex::{Complex32, Complex64 as C};
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

fn un<T: Dt, O: Dt>(op: UnaryOp, a: &Arr<T>) -> Result<Vec<O>, KernelError> {
    let mut out = Arr::<O>::zeros(&a.shape);
    run(Op::Unary {
        op,
        x: a.view(),
        out: out.view_mut(),
    })?;
    Ok(out.values())
}

fn bin<T: Dt, O: Dt>(
    op: BinaryOp,
    a: Operand<anydev_kernels::HostTensor>,
    b: Operand<anydev_kernels::HostTensor>,
    shape: &[usize],
) -> Result<Vec<O>, KernelError> {
    let mut out = Arr::<O>::zeros(shape);
    run(Op::Binary {
        op,
        lhs: a,
        rhs: b,
        out: out.view_mut(),
    })?;
    Ok(out.values())
}

/// Reference by the textbook definitions (no Annex G care needed: the
/// test points are finite and off the axes).
fn reference(op: UnaryOp, z: C) -> C {
    use UnaryOp::*;
    let (x, y) = (z.re, z.im);
    let i = c(0.0, 1.0);
    let one = c(1.0, 0.0);
    let log = |w: C| c(w.re.hypot(w.im).ln(), w.im.atan2(w.re));
    let sqrt = |w: C| {
        let (r, t) = (w.re.hypot(w.im), w.im.atan2(w.re));
        c(r.sqrt() * (t / 2.0).cos(), r.sqrt() * (t / 2.0).sin())
    };
    let sin = |w: C| c(w.re.sin() * w.im.cosh(), w.re.cos() * w.im.sinh());
    let cos = |w: C| c(w.re.cos() * w.im.cosh(), -w.re.sin() * w.im.sinh());
    let sinh = |w: C| c(w.re.sinh() * w.im.cos(), w.re.cosh() * w.im.sin());
    let cosh = |w: C| c(w.re.cosh() * w.im.cos(), w.re.sinh() * w.im.sin());
    match op {
        Negative => -z,
        Square => z * z,
        Reciprocal => one / z,
        Sqrt => sqrt(z),
        Exp => c(x.exp() * y.cos(), x.exp() * y.sin()),
        Expm1 => c(x.exp() * y.cos() - 1.0, x.exp() * y.sin()),
        Log => log(z),
        Log1p => log(one + z),
        Log2 => log(z) / 2f64.ln(),
        Log10 => log(z) / 10f64.ln(),
        Sin => sin(z),
        Cos => cos(z),
        Tan => sin(z) / cos(z),
        Sinh => sinh(z),
        Cosh => cosh(z),
        Tanh => sinh(z) / cosh(z),
        Asin => -i * log(i * z + sqrt(one - z * z)),
        Acos => c(FRAC_PI_2, 0.0) + i * log(i * z + sqrt(one - z * z)),
        Atan => i / 2.0 * (log(one - i * z) - log(one + i * z)),
        Asinh => log(z + sqrt(z * z + one)),
        Acosh => log(z + sqrt(z + one) * sqrt(z - one)),
        Atanh => (log(one + z) - log(one - z)) / 2.0,
        Sign => z / z.re.hypot(z.im),
        Conj => z.conj(),
        _ => unreachable!(),
    }
}

const FUNCS: [UnaryOp; 24] = {
    use UnaryOp::*;
    [
        Negative, Square, Reciprocal, Sqrt, Exp, Expm1, Log, Log1p, Log2, Log10, Sin, Cos, Tan, Sinh, Cosh, Tanh, Asin,
        Acos, Atan, Asinh, Acosh, Atanh, Sign, Conj,
    ]
};

fn points() -> Vec<C> {
    let mut rng = Rng(0x5eed_c0de);
    (0..64)
        .map(|_| {
            let (mut x, mut y) = (rng.float(-3.0, 3.0), rng.float(-3.0, 3.0));
            // Keep off the axes (branch cuts) and away from the branch points.
            if x.abs() < 0.05 {
                x += 0.1;
            }
            if y.abs() < 0.05 {
                y += 0.1;
            }
            c(x, y)
        })
        .collect()
}

/// `got` within `tol` of `want`, relative to `|want|` (both components).
fn near(got: C, want: C, tol: f64) -> bool {
    let scale = want.re.hypot(want.im).max(1e-300);
    (got.re - want.re).abs() <= tol * scale && (got.im - want.im).abs() <= tol * scale
}

#[test]
fn c128_functions_match_the_definitions() {
    let zs = points();
    for layout in LAYOUTS {
        let a = Arr::with_layout(&zs, &[8, 8], layout);
        for op in FUNCS {
            let got: Vec<C> = un(op, &a).unwrap();
            for (&z, &g) in zs.iter().zip(&got) {
                let want = reference(op, z);
                assert!(near(g, want, 1e-13), "{op}({z}) = {g}, want {want}");
            }
        }
    }
}

#[test]
fn c64_functions_are_rounded_from_f64() {
    let zs = points();
    let z32: Vec<Complex32> = zs.iter().map(|z| Complex32::new(z.re as f32, z.im as f32)).collect();
    let a = Arr::new(z32.clone(), &[64]);
    for op in FUNCS {
        let got: Vec<Complex32> = un(op, &a).unwrap();
        for (&z, &g) in z32.iter().zip(&got) {
            let want = reference(op, c(z.re as f64, z.im as f64));
            let g = c(g.re as f64, g.im as f64);
            assert!(near(g, want, 2e-7), "{op}({z}) = {g}, want {want}");
        }
    }
}

#[test]
fn abs_real_imag_and_predicates_give_real_or_bool() {
    let zs = vec![
        c(3.0, 4.0),
        c(-0.0, 2.0),
        c(3e300, 4e300),
        c(1e-310, -1e-310),
        c(NAN, 1.0),
        c(1.0, -INF),
    ];
    let a = Arr::new(zs.clone(), &[6]);
    let abs: Vec<f64> = un(UnaryOp::Abs, &a).unwrap();
    assert_eq!(&abs[..3], &[5.0, 2.0, 5e300]);
    assert!(close(abs[3], 1e-310 * 2f64.sqrt(), 1e-6));
    assert!(abs[4].is_nan() && abs[5] == INF);
    let re: Vec<f64> = un(UnaryOp::Real, &a).unwrap();
    let im: Vec<f64> = un(UnaryOp::Imag, &a).unwrap();
    for (z, (r, i)) in zs.iter().zip(re.iter().zip(&im)) {
        assert!(same(*r, z.re) && same(*i, z.im) && r.is_sign_negative() == z.re.is_sign_negative());
    }
    let nan: Vec<bool> = un(UnaryOp::IsNan, &a).unwrap();
    let inf: Vec<bool> = un(UnaryOp::IsInf, &a).unwrap();
    let fin: Vec<bool> = un(UnaryOp::IsFinite, &a).unwrap();
    assert_eq!(nan, [false, false, false, false, true, false]);
    assert_eq!(inf, [false, false, false, false, false, true]);
    assert_eq!(fin, [true, true, true, true, false, false]);
    let a32 = Arr::new(vec![Complex32::new(3.0, -4.0)], &[1]);
    assert_eq!(un::<Complex32, f32>(UnaryOp::Abs, &a32).unwrap(), [5.0]);
    // The output dtype is the component dtype, not the complex one.
    assert!(matches!(un::<C, C>(UnaryOp::Abs, &a), Err(KernelError::Invalid(_))));
}

#[test]
fn round_sign_and_reciprocal_edge_values() {
    let a = Arr::new(
        vec![c(2.5, -3.5), c(0.0, 0.0), c(-0.5, 1.5), c(INF, 1.0), c(3e300, -4e300)],
        &[5],
    );
    let r: Vec<C> = un(UnaryOp::Round, &a).unwrap();
    assert_eq!(r[0], c(2.0, -4.0));
    assert_eq!(r[2], c(-0.0, 2.0));
    let s: Vec<C> = un(UnaryOp::Sign, &a).unwrap();
    assert_eq!(s[1], c(0.0, 0.0));
    assert_eq!(s[3], c(1.0, 0.0));
    assert!(near(s[4], c(0.6, -0.8), 1e-15), "{}", s[4]);
    let q: Vec<C> = un(UnaryOp::Reciprocal, &a).unwrap();
    assert!(q[1].re.is_nan() && q[1].im.is_nan());
    assert!(near(q[4], c(1.2e-301, 1.6e-301), 1e-14), "{}", q[4]);
}

/// Bit-level equality up to NaN, with the sign of zero checked.
fn exact(a: C, b: C) -> bool {
    let one = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || (x == y && x.is_sign_negative() == y.is_sign_negative());
    one(a.re, b.re) && one(a.im, b.im)
}

#[test]
fn annex_g_special_values() {
    use UnaryOp::*;
    let acos2 = 2f64.acosh();
    let cases: Vec<(UnaryOp, C, C)> = vec![
        (Sqrt, c(-4.0, 0.0), c(0.0, 2.0)),
        (Sqrt, c(-4.0, -0.0), c(0.0, -2.0)),
        (Sqrt, c(-0.0, 0.0), c(0.0, 0.0)),
        (Sqrt, c(NAN, INF), c(INF, INF)),
        (Sqrt, c(-INF, 1.0), c(0.0, INF)),
        (Sqrt, c(INF, -1.0), c(INF, -0.0)),
        (Sqrt, c(-INF, NAN), c(NAN, INF)),
        (Log, c(-0.0, 0.0), c(-INF, PI)),
        (Log, c(0.0, -0.0), c(-INF, -0.0)),
        (Log, c(-1.0, -0.0), c(0.0, -PI)),
        (Log, c(-INF, INF), c(INF, 3.0 * FRAC_PI_4)),
        (Log, c(NAN, INF), c(INF, NAN)),
        (Exp, c(INF, 0.0), c(INF, 0.0)),
        (Exp, c(-INF, INF), c(0.0, 0.0)),
        (Exp, c(INF, NAN), c(INF, NAN)),
        (Exp, c(NAN, -0.0), c(NAN, -0.0)),
        (Exp, c(1.0, INF), c(NAN, NAN)),
        (Acos, c(2.0, 0.0), c(0.0, -acos2)),
        (Acos, c(2.0, -0.0), c(0.0, acos2)),
        (Acos, c(0.0, 0.0), c(FRAC_PI_2, -0.0)),
        (Acos, c(-INF, 1.0), c(PI, -INF)),
        (Acos, c(INF, INF), c(FRAC_PI_4, -INF)),
        (Acosh, c(INF, NAN), c(INF, NAN)),
        (Acosh, c(0.0, 0.0), c(0.0, FRAC_PI_2)),
        (Asinh, c(INF, INF), c(INF, FRAC_PI_4)),
        (Asinh, c(NAN, 0.0), c(NAN, 0.0)),
        (Asinh, c(-0.0, -0.0), c(-0.0, -0.0)),
        (Asin, c(2.0, 0.0), c(FRAC_PI_2, acos2)),
        (Asin, c(2.0, -0.0), c(FRAC_PI_2, -acos2)),
        (Atanh, c(1.0, 0.0), c(INF, 0.0)),
        (Atanh, c(-INF, 2.0), c(-0.0, FRAC_PI_2)),
        (Atanh, c(NAN, -INF), c(0.0, -FRAC_PI_2)),
        (Atan, c(0.0, 1.0), c(0.0, INF)),
        (Tanh, c(INF, 1.0), c(1.0, 0.0)),
        (Tanh, c(-INF, -2.0), c(-1.0, 0.0)),
        (Tanh, c(NAN, 0.0), c(NAN, 0.0)),
        (Tanh, c(800.0, 1.0), c(1.0, 0.0)),
        (Sinh, c(INF, 0.0), c(INF, 0.0)),
        (Sinh, c(NAN, 0.0), c(NAN, 0.0)),
        (Cosh, c(INF, 0.0), c(INF, 0.0)),
        (Cosh, c(0.0, INF), c(NAN, 0.0)),
        (Sin, c(0.0, INF), c(0.0, INF)),
        (Cos, c(0.0, INF), c(INF, -0.0)),
        (Sign, c(NAN, 1.0), c(NAN, NAN)),
        // The Array API standard: a NaN component decides (NumPy: 1, -i).
        (Sign, c(INF, NAN), c(NAN, NAN)),
        (Sign, c(NAN, -INF), c(NAN, NAN)),
        // Where Annex G leaves a sign open: NumPy's (glibc's) choice.
        (Sinh, c(-INF, INF), c(INF, NAN)),
        (Sin, c(INF, -INF), c(NAN, INF)),
        (Asin, c(-INF, NAN), c(NAN, -INF)),
        (Acos, c(INF, NAN), c(NAN, -INF)),
        (Atan, c(-INF, NAN), c(-FRAC_PI_2, 0.0)),
        (Asinh, c(NAN, -INF), c(-INF, NAN)),
        // The Array API standard (Annex G: NaN + NaN i).
        (Acosh, c(0.0, NAN), c(NAN, FRAC_PI_2)),
        (Acosh, c(1.0, NAN), c(NAN, NAN)),
        (Acosh, c(INF, NAN), c(INF, NAN)),
    ];
    for (op, z, want) in cases {
        let got: Vec<C> = un(op, &Arr::new(vec![z], &[1])).unwrap();
        let g = got[0];
        let ok = exact(g, want) || (want.re.is_finite() && want.im.is_finite() && near(g, want, 1e-15));
        assert!(ok, "{op}({z}) = {g}, want {want}");
    }
    // Results whose exp(|x|) overflows while the result does not.
    let got: Vec<C> = un(Cosh, &Arr::new(vec![c(710.0, 1.5)], &[1])).unwrap();
    assert!(got[0].re.is_finite() && got[0].im.is_finite(), "{}", got[0]);
    let got: Vec<C> = un(Exp, &Arr::new(vec![c(710.0, 1.5)], &[1])).unwrap();
    assert!(got[0].re.is_finite(), "{}", got[0]);
}

#[test]
fn arithmetic_division_and_pow() {
    use BinaryOp::*;
    let mut rng = Rng(7);
    let xs: Vec<C> = (0..32).map(|_| c(rng.float(-5.0, 5.0), rng.float(-5.0, 5.0))).collect();
    let ys: Vec<C> = (0..32).map(|_| c(rng.float(-5.0, 5.0), rng.float(0.5, 5.0))).collect();
    let (a, b) = (Arr::new(xs.clone(), &[32]), Arr::new(ys.clone(), &[32]));
    for op in [Add, Subtract, Multiply, Divide, Pow] {
        let got: Vec<C> = bin::<C, C>(op, Operand::Tensor(a.view()), Operand::Tensor(b.view()), &[32]).unwrap();
        for ((&x, &y), &g) in xs.iter().zip(&ys).zip(&got) {
            let want = match op {
                Add => x + y,
                Subtract => x - y,
                Multiply => c(x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re),
                Divide => {
                    let d = y.re * y.re + y.im * y.im;
                    c((x.re * y.re + x.im * y.im) / d, (x.im * y.re - x.re * y.im) / d)
                }
                _ => {
                    let (r, t) = (x.re.hypot(x.im), x.im.atan2(x.re));
                    let l = c(r.ln(), t);
                    let e = l * y;
                    c(e.re.exp() * e.im.cos(), e.re.exp() * e.im.sin())
                }
            };
            assert!(near(g, want, 1e-12), "{op}({x}, {y}) = {g}, want {want}");
        }
    }
    // Robust division: no overflow in the denominator, NumPy's zero divisor.
    let big = Arr::new(vec![c(1e300, 1e300), c(1.0, 1.0)], &[2]);
    let den = Arr::new(vec![c(1e300, 1e300), c(0.0, 0.0)], &[2]);
    let q: Vec<C> = bin::<C, C>(Divide, Operand::Tensor(big.view()), Operand::Tensor(den.view()), &[2]).unwrap();
    assert_eq!(q[0], c(1.0, 0.0));
    assert!(q[1].re == INF && q[1].im == INF);
    // Integer powers multiply out; zero bases.
    let base = Arr::new(vec![c(1.0, 1.0), c(0.0, 0.0), c(0.0, 0.0), c(2.0, 0.0)], &[4]);
    let ex = Arr::new(vec![c(4.0, 0.0), c(2.0, 0.0), c(-1.0, 0.0), c(0.0, 0.0)], &[4]);
    let p: Vec<C> = bin::<C, C>(Pow, Operand::Tensor(base.view()), Operand::Tensor(ex.view()), &[4]).unwrap();
    assert_eq!(p[0], c(-4.0, 0.0));
    assert_eq!(p[1], c(0.0, 0.0));
    assert!(p[2].re.is_nan());
    assert_eq!(p[3], c(1.0, 0.0));
}

#[test]
fn equality_with_tensors_and_c64_scalars() {
    let a = Arr::new(
        vec![
            Complex32::new(1.0, 2.0),
            Complex32::new(1.0, -2.0),
            Complex32::new(f32::NAN, 0.0),
        ],
        &[3],
    );
    let s = Operand::Scalar(Scalar::C64(Complex32::new(1.0, 2.0)));
    let eq: Vec<bool> = bin::<Complex32, bool>(BinaryOp::Equal, Operand::Tensor(a.view()), s, &[3]).unwrap();
    assert_eq!(eq, [true, false, false]);
    let ne: Vec<bool> = bin::<Complex32, bool>(BinaryOp::NotEqual, s, Operand::Tensor(a.view()), &[3]).unwrap();
    assert_eq!(ne, [false, true, true]);
    let nan_eq: Vec<bool> = bin::<Complex32, bool>(
        BinaryOp::Equal,
        Operand::Tensor(a.view()),
        Operand::Tensor(a.view()),
        &[3],
    )
    .unwrap();
    assert_eq!(nan_eq, [true, true, false]);
    let sum: Vec<Complex32> = bin::<Complex32, Complex32>(BinaryOp::Add, Operand::Tensor(a.view()), s, &[3]).unwrap();
    assert_eq!(sum[0], Complex32::new(2.0, 4.0));
    // A scalar of another dtype is malformed.
    let wrong = Operand::Scalar(Scalar::F32(1.0));
    assert!(bin::<Complex32, bool>(BinaryOp::Equal, Operand::Tensor(a.view()), wrong, &[3]).is_err());
}

fn cast<S: Dt, D: Dt>(x: &Arr<S>) -> Vec<D> {
    let mut out = Arr::<D>::zeros(&x.shape);
    run(Op::Cast {
        x: x.view(),
        out: out.view_mut(),
    })
    .unwrap();
    out.values()
}

#[test]
fn casts_to_and_from_complex() {
    let r = Arr::new(vec![1.5f64, -0.0, NAN], &[3]);
    let z: Vec<C> = cast(&r);
    assert!(exact(z[0], c(1.5, 0.0)) && exact(z[1], c(-0.0, 0.0)) && z[2].re.is_nan() && z[2].im == 0.0);
    let i = Arr::new(vec![16_777_217i64, -3], &[2]);
    let z: Vec<Complex32> = cast(&i);
    assert_eq!(z, [Complex32::new(16_777_216.0, 0.0), Complex32::new(-3.0, 0.0)]);
    let b = Arr::new(vec![true, false], &[2]);
    assert_eq!(cast::<bool, C>(&b), [c(1.0, 0.0), c(0.0, 0.0)]);
    let zs = Arr::new(
        vec![c(0.0, 0.0), c(0.0, -1.0), c(NAN, 0.0), c(2.7, 9.0), c(1e40, 1.0)],
        &[5],
    );
    assert_eq!(cast::<C, bool>(&zs), [false, true, true, true, true]);
    // Complex to another real dtype takes the real part (no panic).
    assert_eq!(cast::<C, i32>(&zs)[3], 2);
    let f: Vec<f32> = cast(&zs);
    assert!(f[4] == f32::INFINITY && f[3] == 2.7);
    let down: Vec<Complex32> = cast(&zs);
    assert_eq!(down[3], Complex32::new(2.7, 9.0));
    assert_eq!(down[4].re, f32::INFINITY);
    let up: Vec<C> = cast(&Arr::new(down, &[5]));
    assert_eq!(up[3], c(2.7f32 as f64, 9.0));
}

#[test]
fn byte_movers_copy_where_fill_take_hold_16_byte_elements() {
    let vals: Vec<C> = (0..12).map(|k| c(k as f64, -(k as f64) - 0.5)).collect();
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &[3, 4], layout);
        let mut out = Arr::<C>::zeros(&[3, 4]);
        run(Op::Copy {
            x: x.view(),
            out: out.view_mut(),
        })
        .unwrap();
        assert_eq!(out.values(), vals, "{layout:?}");
        let idx = Arr::new(vec![3i64, -4, 1], &[3]);
        let mut taken = Arr::<C>::zeros(&[3, 3]);
        run(Op::Take {
            x: x.view(),
            indices: idx.view(),
            axis: 1,
            out: taken.view_mut(),
        })
        .unwrap();
        assert_eq!(taken.get(&[2, 0]), vals[11]);
        assert_eq!(taken.get(&[1, 1]), vals[4]);
    }
    let mut filled = Arr::<C>::zeros(&[5]);
    let v = c(1.25, -NAN);
    run(Op::Fill {
        out: filled.view_mut(),
        value: Scalar::C128(v),
    })
    .unwrap();
    assert!(filled
        .values()
        .iter()
        .all(|z| z.re == 1.25 && z.im.to_bits() == v.im.to_bits()));
    let cond = Arr::new(vec![true, false, true], &[3]);
    let x = Arr::new(vec![Complex32::new(1.0, 1.0); 3], &[3]);
    let mut out = Arr::<Complex32>::zeros(&[3]);
    run(Op::Where {
        cond: cond.view(),
        x: Operand::Tensor(x.view()),
        y: Operand::Scalar(Scalar::C64(Complex32::new(-2.0, 0.5))),
        out: out.view_mut(),
    })
    .unwrap();
    assert_eq!(out.values()[1], Complex32::new(-2.0, 0.5));
    assert_eq!(out.values()[2], Complex32::new(1.0, 1.0));
    let y = Arr::new(vec![c(9.0, 9.0); 3], &[3]);
    let x = Arr::new(vec![c(1.0, -1.0); 3], &[3]);
    let mut out = Arr::<C>::zeros(&[3]);
    run(Op::Where {
        cond: cond.view(),
        x: Operand::Tensor(x.view()),
        y: Operand::Tensor(y.view()),
        out: out.view_mut(),
    })
    .unwrap();
    assert_eq!(out.values(), [c(1.0, -1.0), c(9.0, 9.0), c(1.0, -1.0)]);
}

#[test]
fn sums_products_scans_and_nonzero() {
    let mut rng = Rng(11);
    let vals: Vec<C> = (0..24).map(|_| c(rng.float(-1.0, 1.0), rng.float(-1.0, 1.0))).collect();
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &[2, 3, 4], layout);
        for (op, axes) in [
            (ReduceOp::Sum, vec![1usize]),
            (ReduceOp::Prod, vec![0, 2]),
            (ReduceOp::Sum, vec![0, 1, 2]),
        ] {
            let shape: Vec<usize> = (0..3).map(|d| if axes.contains(&d) { 1 } else { x.shape[d] }).collect();
            let mut out = Arr::<C>::zeros(&shape);
            run(Op::Reduce {
                op,
                x: x.view(),
                axes: &axes,
                out: out.view_mut(),
            })
            .unwrap();
            for (k, &g) in out.values().iter().enumerate() {
                let oi = unravel(k, &shape);
                let mut want = if op == ReduceOp::Sum { c(0.0, 0.0) } else { c(1.0, 0.0) };
                for (i, &v) in vals.iter().enumerate() {
                    let idx = unravel(i, &[2, 3, 4]);
                    if (0..3).all(|d| axes.contains(&d) || idx[d] == oi[d]) {
                        want = if op == ReduceOp::Sum { want + v } else { want * v };
                    }
                }
                assert!(near(g, want, 1e-13), "{op} {axes:?} {layout:?}: {g} vs {want}");
            }
        }
        let mut out = Arr::<C>::zeros(&[2, 3, 4]);
        run(Op::Scan {
            op: ScanOp::CumulativeProd,
            x: x.view(),
            axis: 2,
            out: out.view_mut(),
        })
        .unwrap();
        let mut acc = c(1.0, 0.0);
        for j in 0..4 {
            acc *= vals[4 + j];
            assert!(near(out.get(&[0, 1, j]), acc, 1e-13));
        }
    }
    let z32: Vec<Complex32> = vals.iter().map(|z| Complex32::new(z.re as f32, z.im as f32)).collect();
    let x = Arr::new(z32.clone(), &[24]);
    let mut out = Arr::<Complex32>::zeros(&[24]);
    run(Op::Scan {
        op: ScanOp::CumulativeSum,
        x: x.view(),
        axis: 0,
        out: out.view_mut(),
    })
    .unwrap();
    let total = z32.iter().fold(c(0.0, 0.0), |a, z| a + c(z.re as f64, z.im as f64));
    let last = out.values()[23];
    assert!(near(c(last.re as f64, last.im as f64), total, 1e-6));
    // all / any are `!= 0`; nonzero counts either component.
    let zs = Arr::new(vec![c(0.0, 0.0), c(0.0, -0.5), c(NAN, 0.0), c(-0.0, 0.0)], &[4]);
    let mut any = Arr::<bool>::zeros(&[1]);
    run(Op::Reduce {
        op: ReduceOp::All,
        x: zs.view(),
        axes: &[0],
        out: any.view_mut(),
    })
    .unwrap();
    assert_eq!(any.values(), [false]);
    let mut nz = Arr::<i64>::zeros(&[2, 1]);
    run(Op::Nonzero {
        x: zs.view(),
        out: nz.view_mut(),
    })
    .unwrap();
    assert_eq!(nz.values(), [1, 2]);
}

#[test]
fn matmul_matches_a_naive_product() {
    let mut rng = Rng(3);
    let (m, k, n) = (5, 7, 3);
    let a: Vec<C> = (0..m * k)
        .map(|_| c(rng.float(-1.0, 1.0), rng.float(-1.0, 1.0)))
        .collect();
    let b: Vec<C> = (0..k * n)
        .map(|_| c(rng.float(-1.0, 1.0), rng.float(-1.0, 1.0)))
        .collect();
    for layout in LAYOUTS {
        let (aa, bb) = (
            Arr::with_layout(&a, &[m, k], layout),
            Arr::with_layout(&b, &[k, n], Layout::C),
        );
        let mut out = Arr::<C>::zeros(&[m, n]);
        run(Op::Matmul {
            a: aa.view(),
            b: bb.view(),
            out: out.view_mut(),
        })
        .unwrap();
        for i in 0..m {
            for j in 0..n {
                let want = (0..k).fold(c(0.0, 0.0), |s, p| s + a[i * k + p] * b[p * n + j]);
                assert!(near(out.get(&[i, j]), want, 1e-13), "{layout:?}");
            }
        }
        let a32: Vec<Complex32> = a.iter().map(|z| Complex32::new(z.re as f32, z.im as f32)).collect();
        let b32: Vec<Complex32> = b.iter().map(|z| Complex32::new(z.re as f32, z.im as f32)).collect();
        let (aa, bb) = (Arr::with_layout(&a32, &[m, k], layout), Arr::new(b32, &[k, n]));
        let mut out = Arr::<Complex32>::zeros(&[m, n]);
        run(Op::Matmul {
            a: aa.view(),
            b: bb.view(),
            out: out.view_mut(),
        })
        .unwrap();
        let want = (0..k).fold(c(0.0, 0.0), |s, p| s + a[p] * b[p * n]);
        let g = out.get(&[0, 0]);
        assert!(near(c(g.re as f64, g.im as f64), want, 1e-5));
    }
}

#[test]
fn orderings_and_creation_are_refused_for_complex() {
    for dt in [DType::C64, DType::C128] {
        for code in [
            OpCode::Sort,
            OpCode::Argsort,
            OpCode::SearchSorted,
            OpCode::Arange,
            OpCode::Random,
            OpCode::Reduce(ReduceOp::Max),
            OpCode::Reduce(ReduceOp::ArgMin),
            OpCode::Binary(BinaryOp::Maximum),
            OpCode::Binary(BinaryOp::Less),
            OpCode::Binary(BinaryOp::FloorDivide),
            OpCode::Unary(UnaryOp::Floor),
            OpCode::Unary(UnaryOp::SignBit),
        ] {
            assert!(!supports(code, dt), "{code} {dt}");
        }
        assert!(anydev_kernels::dtypes().contains(&dt));
    }
    let x = Arr::new(vec![c(2.0, 0.0), c(1.0, 0.0)], &[2]);
    let mut out = Arr::<C>::zeros(&[2]);
    let r = run(Op::Sort {
        x: x.view(),
        axis: 0,
        descending: false,
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Unsupported { .. })), "{r:?}");
    let r: Result<Vec<C>, _> = un(UnaryOp::Floor, &x);
    assert!(matches!(r, Err(KernelError::Unsupported { .. })));
    let mut mx = Arr::<C>::zeros(&[1]);
    let r = run(Op::Reduce {
        op: ReduceOp::Max,
        x: x.view(),
        axes: &[0],
        out: mx.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Unsupported { .. })), "{r:?}");
}
