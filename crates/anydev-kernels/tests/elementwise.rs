//! Unary, binary and where kernels against plain references.

mod common;

use anydev_kernels::{supports, KernelError};
use anydev_ops::{BinaryOp, DType, Op, OpCode, Operand, Scalar, UnaryOp};
use common::*;
use half::{bf16, f16};

/// Runs a binary op over two arrays into a fresh C-order output.
fn bin<T: Dt, O: Dt>(op: BinaryOp, a: &Arr<T>, b: &Arr<T>) -> Result<Vec<O>, KernelError> {
    let mut out = Arr::<O>::zeros(&a.shape);
    run(Op::Binary {
        op,
        lhs: Operand::Tensor(a.view()),
        rhs: Operand::Tensor(b.view()),
        out: out.view_mut(),
    })?;
    Ok(out.values())
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

/// Integer reference: exact i128 arithmetic, wrapped into the type.
fn int_ref(op: BinaryOp, a: i128, b: i128, bits: u32, signed: bool) -> Option<i128> {
    let wrap = |v: i128| {
        let m = v & ((1i128 << bits) - 1);
        if signed && m >= 1i128 << (bits - 1) {
            m - (1i128 << bits)
        } else {
            m
        }
    };
    let r = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a.wrapping_mul(b),
        BinaryOp::FloorDivide => {
            if b == 0 {
                0
            } else {
                let q = a / b;
                if (a % b != 0) && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            }
        }
        BinaryOp::Remainder => {
            if b == 0 {
                0
            } else {
                let r = a % b;
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            }
        }
        BinaryOp::Pow => {
            if b < 0 {
                // 1/a^|b| truncated toward zero (0 for a = 0).
                match a {
                    1 => 1,
                    -1 if b % 2 != 0 => -1,
                    -1 => 1,
                    _ => 0,
                }
            } else {
                // Square-and-multiply modulo 2^128, which 2^bits divides.
                let (mut r, mut base, mut e) = (1u128, a as u128, b as u128);
                while e > 0 {
                    if e & 1 == 1 {
                        r = r.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                r as i128
            }
        }
        BinaryOp::BitwiseLeftShift => {
            if b < 0 || b >= bits as i128 {
                0
            } else {
                a << b
            }
        }
        BinaryOp::BitwiseRightShift => {
            if b < 0 || b >= bits as i128 {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> b
            }
        }
        BinaryOp::BitwiseAnd => a & b,
        BinaryOp::BitwiseOr => a | b,
        BinaryOp::BitwiseXor => a ^ b,
        BinaryOp::Maximum => a.max(b),
        BinaryOp::Minimum => a.min(b),
        _ => return None,
    };
    Some(wrap(r))
}

trait IntT: Dt {
    const BITS: u32;
    const SIGNED: bool;
    fn from_i(v: i128) -> Self;
    fn to_i(self) -> i128;
}

macro_rules! int_t {
    ($($t:ty),*) => {$(
        impl IntT for $t {
            const BITS: u32 = <$t>::BITS;
            const SIGNED: bool = <$t>::MIN != 0;
            fn from_i(v: i128) -> Self { v as $t }
            fn to_i(self) -> i128 { self as i128 }
        }
    )*};
}
int_t!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Edge values of an integer type plus some small ones.
fn int_values<T: IntT>() -> Vec<T> {
    let bits = T::BITS;
    let (min, max) = if T::SIGNED {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    [
        min,
        min + 1,
        -7,
        -3,
        -2,
        -1,
        0,
        1,
        2,
        3,
        5,
        7,
        bits as i128,
        bits as i128 - 1,
        max - 1,
        max,
    ]
    .iter()
    .map(|&v| T::from_i(v))
    .collect()
}

fn check_int_binary<T: IntT>() {
    let vals = int_values::<T>();
    let n = vals.len();
    // All pairs: lhs varies along axis 0, rhs along axis 1 (broadcast).
    let shape = [n, n];
    let a = Arr::broadcast(vals.clone(), &[n, 1], &shape);
    let b = Arr::broadcast(vals.clone(), &[n], &shape);
    let ops = [
        BinaryOp::Add,
        BinaryOp::Subtract,
        BinaryOp::Multiply,
        BinaryOp::FloorDivide,
        BinaryOp::Remainder,
        BinaryOp::Pow,
        BinaryOp::BitwiseLeftShift,
        BinaryOp::BitwiseRightShift,
        BinaryOp::BitwiseAnd,
        BinaryOp::BitwiseOr,
        BinaryOp::BitwiseXor,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
    ];
    for op in ops {
        let got = bin::<T, T>(op, &a, &b).unwrap();
        for i in 0..n {
            for j in 0..n {
                let (x, y) = (vals[i].to_i(), vals[j].to_i());
                let want = int_ref(op, x, y, T::BITS, T::SIGNED).unwrap();
                assert_eq!(got[i * n + j].to_i(), want, "{op} {:?}({x}, {y})", T::DT);
            }
        }
    }
    let cmp = [
        (BinaryOp::Less, x_lt as fn(i128, i128) -> bool),
        (BinaryOp::GreaterEqual, |x, y| x >= y),
        (BinaryOp::Equal, |x, y| x == y),
    ];
    for (op, f) in cmp {
        let got = bin::<T, bool>(op, &a, &b).unwrap();
        for i in 0..n {
            for j in 0..n {
                assert_eq!(got[i * n + j], f(vals[i].to_i(), vals[j].to_i()), "{op}");
            }
        }
    }
}

fn x_lt(x: i128, y: i128) -> bool {
    x < y
}

#[test]
fn integer_binary_ops_wrap_and_follow_numpy_edge_rules() {
    check_int_binary::<i8>();
    check_int_binary::<i16>();
    check_int_binary::<i32>();
    check_int_binary::<i64>();
    check_int_binary::<u8>();
    check_int_binary::<u16>();
    check_int_binary::<u32>();
    check_int_binary::<u64>();
}

#[test]
fn documented_integer_edge_cases() {
    let a = Arr::new(vec![7i32, -7, 7, -7, i32::MIN, 5, 1, -8], &[8]);
    let b = Arr::new(vec![-2i32, 2, 0, 0, -1, -1, 40, 1], &[8]);
    assert_eq!(
        bin::<i32, i32>(BinaryOp::FloorDivide, &a, &b).unwrap(),
        [-4, -4, 0, 0, i32::MIN, -5, 0, -8]
    );
    assert_eq!(
        bin::<i32, i32>(BinaryOp::Remainder, &a, &b).unwrap(),
        [-1, 1, 0, 0, 0, 0, 1, 0]
    );
    assert_eq!(bin::<i32, i32>(BinaryOp::BitwiseRightShift, &a, &b).unwrap()[6], 0);
    let x = Arr::new(vec![-8i8, 8], &[2]);
    let s = Arr::new(vec![100i8, -1], &[2]);
    assert_eq!(bin::<i8, i8>(BinaryOp::BitwiseRightShift, &x, &s).unwrap(), [-1, 0]);
    assert_eq!(bin::<i8, i8>(BinaryOp::BitwiseLeftShift, &x, &s).unwrap(), [0, 0]);
    let p = Arr::new(vec![3i64, 2, -2], &[3]);
    let e = Arr::new(vec![-1i64, 63, 63], &[3]);
    assert_eq!(bin::<i64, i64>(BinaryOp::Pow, &p, &e).unwrap(), [0, i64::MIN, i64::MIN]);
}

/// f64 reference for float binary ops (Python/NumPy semantics).
fn float_ref(op: BinaryOp, a: f64, b: f64) -> f64 {
    let divmod = |a: f64, b: f64| -> (f64, f64) {
        if b == 0.0 {
            return (a / b, a % b);
        }
        let m = a % b;
        let m2 = if m != 0.0 && ((m < 0.0) != (b < 0.0)) {
            m + b
        } else if m == 0.0 {
            0f64.copysign(b)
        } else {
            m
        };
        let q = ((a - m) / b).round() - if m != 0.0 && ((m < 0.0) != (b < 0.0)) { 1.0 } else { 0.0 };
        (if q == 0.0 { 0f64.copysign(a / b) } else { q }, m2)
    };
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a * b,
        BinaryOp::Divide => a / b,
        BinaryOp::Pow => a.powf(b),
        BinaryOp::Atan2 => a.atan2(b),
        BinaryOp::Hypot => a.hypot(b),
        BinaryOp::CopySign => a.copysign(b),
        BinaryOp::FloorDivide => divmod(a, b).0,
        BinaryOp::Remainder => divmod(a, b).1,
        BinaryOp::LogAddExp => {
            let m = a.max(b);
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else if m.is_infinite() {
                m
            } else {
                m + (-(a - b).abs()).exp().ln_1p()
            }
        }
        BinaryOp::Maximum => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }
        BinaryOp::Minimum => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }
        _ => unreachable!(),
    }
}

const FLOAT_BIN: [BinaryOp; 13] = [
    BinaryOp::Add,
    BinaryOp::Subtract,
    BinaryOp::Multiply,
    BinaryOp::Divide,
    BinaryOp::Pow,
    BinaryOp::Atan2,
    BinaryOp::Hypot,
    BinaryOp::CopySign,
    BinaryOp::FloorDivide,
    BinaryOp::Remainder,
    BinaryOp::LogAddExp,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
];

fn float_specials() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        7.25,
        -7.25,
        1e-3,
        100.0,
        1e30,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ]
}

fn check_float_binary<T: Dt>(to: fn(f64) -> T, tol: f64) {
    let vals: Vec<T> = float_specials().into_iter().map(to).collect();
    let n = vals.len();
    let shape = [n, n];
    let a = Arr::broadcast(vals.clone(), &[n, 1], &shape);
    let b = Arr::broadcast(vals.clone(), &[n], &shape);
    for op in FLOAT_BIN {
        let got = bin::<T, T>(op, &a, &b).unwrap();
        for i in 0..n {
            for j in 0..n {
                let (x, y) = (vals[i].f(), vals[j].f());
                // The reference is computed in f64 and rounded once.
                let want = to(float_ref(op, x, y)).f();
                let g = got[i * n + j].f();
                assert!(close(g, want, tol), "{op} {:?}({x}, {y}) = {g}, want {want}", T::DT);
                if want == 0.0 && op != BinaryOp::Maximum && op != BinaryOp::Minimum {
                    assert_eq!(
                        g.is_sign_negative(),
                        want.is_sign_negative(),
                        "{op}({x}, {y}) sign of zero"
                    );
                }
            }
        }
    }
}

#[test]
fn float_binary_ops_match_f64_reference_with_specials() {
    check_float_binary::<f64>(|v| v, 1e-15);
    check_float_binary::<f32>(|v| v as f32, 1e-6);
    check_float_binary::<f16>(f16::from_f64, 1e-3);
    check_float_binary::<bf16>(bf16::from_f64, 8e-3);
}

#[test]
fn nextafter_steps_one_ulp_in_the_storage_type() {
    let a = Arr::new(vec![1.0f32, 1.0, 0.0, -0.0, f32::NAN, 3.0], &[6]);
    let b = Arr::new(vec![2.0f32, 0.0, 1.0, -1.0, 1.0, 3.0], &[6]);
    let got = bin::<f32, f32>(BinaryOp::NextAfter, &a, &b).unwrap();
    assert_eq!(got[0], f32::from_bits(1.0f32.to_bits() + 1));
    assert_eq!(got[1], f32::from_bits(1.0f32.to_bits() - 1));
    assert_eq!(got[2], f32::from_bits(1));
    assert_eq!(got[3].to_bits(), (-f32::from_bits(1)).to_bits());
    assert!(got[4].is_nan());
    assert_eq!(got[5], 3.0);
    let h = Arr::new(vec![f16::ONE], &[1]);
    let t = Arr::new(vec![f16::from_f32(2.0)], &[1]);
    assert_eq!(
        bin::<f16, f16>(BinaryOp::NextAfter, &h, &t).unwrap()[0].to_bits(),
        f16::ONE.to_bits() + 1
    );
}

#[test]
fn float_comparisons_treat_nan_as_unordered() {
    let a = Arr::new(vec![1.0f64, f64::NAN, f64::NAN, -0.0], &[4]);
    let b = Arr::new(vec![2.0f64, 1.0, f64::NAN, 0.0], &[4]);
    assert_eq!(
        bin::<f64, bool>(BinaryOp::Less, &a, &b).unwrap(),
        [true, false, false, false]
    );
    assert_eq!(
        bin::<f64, bool>(BinaryOp::Equal, &a, &b).unwrap(),
        [false, false, false, true]
    );
    assert_eq!(
        bin::<f64, bool>(BinaryOp::NotEqual, &a, &b).unwrap(),
        [true, true, true, false]
    );
    assert_eq!(
        bin::<f64, bool>(BinaryOp::GreaterEqual, &a, &b).unwrap(),
        [false, false, false, true]
    );
}

#[test]
fn logical_and_bool_bitwise_ops() {
    let a = Arr::new(vec![false, false, true, true], &[4]);
    let b = Arr::new(vec![false, true, false, true], &[4]);
    assert_eq!(
        bin::<bool, bool>(BinaryOp::LogicalAnd, &a, &b).unwrap(),
        [false, false, false, true]
    );
    assert_eq!(
        bin::<bool, bool>(BinaryOp::LogicalOr, &a, &b).unwrap(),
        [false, true, true, true]
    );
    assert_eq!(
        bin::<bool, bool>(BinaryOp::LogicalXor, &a, &b).unwrap(),
        [false, true, true, false]
    );
    assert_eq!(
        bin::<bool, bool>(BinaryOp::BitwiseXor, &a, &b).unwrap(),
        [false, true, true, false]
    );
    assert_eq!(
        bin::<bool, bool>(BinaryOp::Maximum, &a, &b).unwrap(),
        [false, true, true, true]
    );
    assert_eq!(
        bin::<bool, bool>(BinaryOp::Less, &a, &b).unwrap(),
        [false, true, false, false]
    );
    assert_eq!(
        un::<bool, bool>(UnaryOp::LogicalNot, &a).unwrap(),
        [true, true, false, false]
    );
    assert_eq!(
        un::<bool, bool>(UnaryOp::BitwiseInvert, &a).unwrap(),
        [true, true, false, false]
    );
}

fn unary_ref(op: UnaryOp, x: f64) -> f64 {
    use UnaryOp::*;
    match op {
        Abs => x.abs(),
        Acos => x.acos(),
        // std's acosh loses digits just above 1; this identity keeps them
        // (and is NaN below 1, as acosh is).
        Acosh => 2.0 * ((x - 1.0) / 2.0).sqrt().asinh(),
        Asin => x.asin(),
        Asinh => x.asinh(),
        Atan => x.atan(),
        Atanh => x.atanh(),
        Ceil => x.ceil(),
        Cos => x.cos(),
        Cosh => x.cosh(),
        Exp => x.exp(),
        Expm1 => x.exp_m1(),
        Floor => x.floor(),
        Log => x.ln(),
        Log1p => x.ln_1p(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Negative => -x,
        Reciprocal => 1.0 / x,
        Round => {
            let r = x.round();
            if (x - x.trunc()).abs() == 0.5 {
                2.0 * (x / 2.0).round()
            } else {
                r
            }
        }
        Sign => {
            if x.is_nan() {
                x
            } else if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        Sin => x.sin(),
        Sinh => x.sinh(),
        Square => x * x,
        Sqrt => x.sqrt(),
        Tan => x.tan(),
        Tanh => x.tanh(),
        Trunc => x.trunc(),
        _ => unreachable!(),
    }
}

const FLOAT_UNARY: [UnaryOp; 28] = {
    use UnaryOp::*;
    [
        Abs, Acos, Acosh, Asin, Asinh, Atan, Atanh, Ceil, Cos, Cosh, Exp, Expm1, Floor, Log, Log1p, Log2, Log10,
        Negative, Reciprocal, Round, Sign, Sin, Sinh, Square, Sqrt, Tan, Tanh, Trunc,
    ]
};

fn check_float_unary<T: Dt>(to: fn(f64) -> T, tol: f64) {
    let mut vals = float_specials();
    vals.extend([
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        0.49999999999999994,
        0.3,
        -0.9,
        1.0 + 1e-9,
        20.0,
        -20.0,
    ]);
    let vals: Vec<T> = vals.into_iter().map(to).collect();
    for layout in LAYOUTS {
        let a = Arr::with_layout(&vals, &[vals.len()], layout);
        for op in FLOAT_UNARY {
            let got = un::<T, T>(op, &a).unwrap();
            for (x, g) in vals.iter().zip(&got) {
                let want = to(unary_ref(op, x.f())).f();
                assert!(
                    close(g.f(), want, tol),
                    "{op} {:?}({}) = {}, want {want}",
                    T::DT,
                    x.f(),
                    g.f()
                );
            }
        }
    }
}

#[test]
fn float_unary_ops_match_std_with_specials_and_layouts() {
    check_float_unary::<f64>(|v| v, 1e-15);
    check_float_unary::<f32>(|v| v as f32, 1e-6);
    check_float_unary::<f16>(f16::from_f64, 1e-3);
    check_float_unary::<bf16>(bf16::from_f64, 8e-3);
}

#[test]
fn round_is_half_to_even_and_sign_keeps_nan() {
    let a = Arr::new(vec![0.5f32, 1.5, 2.5, -0.5, -2.5, 3.5, f32::NAN], &[7]);
    let r = un::<f32, f32>(UnaryOp::Round, &a).unwrap();
    assert_eq!(&r[..6], [0.0, 2.0, 2.0, -0.0, -2.0, 4.0]);
    assert!(r[3].is_sign_negative());
    let s = un::<f32, f32>(UnaryOp::Sign, &a).unwrap();
    assert!(s[6].is_nan());
}

#[test]
fn predicates_output_bool_for_every_dtype_they_support() {
    let a = Arr::new(vec![1.0f32, f32::NAN, f32::INFINITY, -f32::INFINITY, -0.0], &[5]);
    assert_eq!(
        un::<f32, bool>(UnaryOp::IsNan, &a).unwrap(),
        [false, true, false, false, false]
    );
    assert_eq!(
        un::<f32, bool>(UnaryOp::IsInf, &a).unwrap(),
        [false, false, true, true, false]
    );
    assert_eq!(
        un::<f32, bool>(UnaryOp::IsFinite, &a).unwrap(),
        [true, false, false, false, true]
    );
    assert_eq!(
        un::<f32, bool>(UnaryOp::SignBit, &a).unwrap(),
        [false, false, false, true, true]
    );
    let i = Arr::new(vec![-3i16, 0, 4], &[3]);
    assert_eq!(un::<i16, bool>(UnaryOp::IsFinite, &i).unwrap(), [true; 3]);
    assert_eq!(un::<i16, bool>(UnaryOp::SignBit, &i).unwrap(), [true, false, false]);
    let u = Arr::new(vec![true], &[1]);
    assert_eq!(un::<bool, bool>(UnaryOp::IsNan, &u).unwrap(), [false]);
}

fn check_int_unary<T: IntT>() {
    let vals = int_values::<T>();
    let a = Arr::new(vals.clone(), &[vals.len()]);
    let wrap = |v: i128| T::from_i(v).to_i();
    type Case = (UnaryOp, fn(i128) -> i128);
    let cases: [Case; 8] = [
        (UnaryOp::Abs, |x| x.abs()),
        (UnaryOp::Negative, |x| -x),
        (UnaryOp::Sign, |x| x.signum()),
        (UnaryOp::Square, |x| x.wrapping_mul(x)),
        (UnaryOp::BitwiseInvert, |x| !x),
        (UnaryOp::Round, |x| x),
        (UnaryOp::Floor, |x| x),
        (UnaryOp::Trunc, |x| x),
    ];
    for (op, f) in cases {
        let got = un::<T, T>(op, &a).unwrap();
        for (x, g) in vals.iter().zip(&got) {
            let want = if op == UnaryOp::Sign && !T::SIGNED {
                x.to_i().signum()
            } else {
                wrap(f(x.to_i()))
            };
            assert_eq!(g.to_i(), want, "{op} {:?}({})", T::DT, x.to_i());
        }
    }
}

#[test]
fn integer_unary_ops_wrap() {
    check_int_unary::<i8>();
    check_int_unary::<i32>();
    check_int_unary::<i64>();
    check_int_unary::<u8>();
    check_int_unary::<u64>();
}

/// Every combination of operand layouts, broadcasting and scalars gives
/// the same values as a plain loop.
#[test]
fn layouts_broadcasts_and_scalars() {
    let shape = [3usize, 4, 5];
    let n = numel(&shape);
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i * 7 % 11) as f32 + 1.0).collect();
    for la in LAYOUTS {
        for lb in LAYOUTS {
            for lo in LAYOUTS {
                let a = Arr::with_layout(&xs, &shape, la);
                let b = Arr::with_layout(&ys, &shape, lb);
                let mut out = Arr::with_layout(&vec![0f32; n], &shape, lo);
                run(Op::Binary {
                    op: BinaryOp::Subtract,
                    lhs: Operand::Tensor(a.view()),
                    rhs: Operand::Tensor(b.view()),
                    out: out.view_mut(),
                })
                .unwrap();
                let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| x - y).collect();
                assert_eq!(out.values(), want, "{la:?} {lb:?} {lo:?}");
            }
        }
        // Scalar on either side.
        let a = Arr::with_layout(&xs, &shape, la);
        let mut out = Arr::<f32>::zeros(&shape);
        run(Op::Binary {
            op: BinaryOp::Subtract,
            lhs: Operand::Scalar(Scalar::F32(2.0)),
            rhs: Operand::Tensor(a.view()),
            out: out.view_mut(),
        })
        .unwrap();
        assert_eq!(out.values(), xs.iter().map(|x| 2.0 - x).collect::<Vec<_>>());
        run(Op::Binary {
            op: BinaryOp::Subtract,
            lhs: Operand::Tensor(a.view()),
            rhs: Operand::Scalar(Scalar::F32(2.0)),
            out: out.view_mut(),
        })
        .unwrap();
        assert_eq!(out.values(), xs.iter().map(|x| x - 2.0).collect::<Vec<_>>());
    }
    // A row broadcast along axis 0 and a column broadcast along axis 1.
    let row = Arr::broadcast(vec![1i16, 2, 3, 4, 5], &[5], &[4, 5]);
    let col = Arr::broadcast(vec![10i16, 20, 30, 40], &[4, 1], &[4, 5]);
    let got = bin::<i16, i16>(BinaryOp::Multiply, &row, &col).unwrap();
    for i in 0..4 {
        for j in 0..5 {
            assert_eq!(got[i * 5 + j], (j as i16 + 1) * (i as i16 + 1) * 10);
        }
    }
}

#[test]
fn in_place_ops_read_before_they_write() {
    for layout in LAYOUTS {
        let n = 1000i32;
        let xs: Vec<i32> = (0..n).collect();
        let mut a = Arr::with_layout(&xs, &[10, 100], layout);
        let b = Arr::with_layout(&xs.iter().map(|v| v * 3).collect::<Vec<_>>(), &[10, 100], layout);
        let view = a.view_mut();
        run(Op::Binary {
            op: BinaryOp::Add,
            lhs: Operand::Tensor(view),
            rhs: Operand::Tensor(b.view()),
            out: view,
        })
        .unwrap();
        assert_eq!(a.values(), xs.iter().map(|v| v * 4).collect::<Vec<_>>());
        let view = a.view_mut();
        run(Op::Unary {
            op: UnaryOp::Negative,
            x: view,
            out: view,
        })
        .unwrap();
        assert_eq!(a.values(), xs.iter().map(|v| -v * 4).collect::<Vec<_>>());
    }
}

#[test]
fn zero_dim_and_empty_shapes() {
    let a = Arr::new(vec![2.0f64], &[]);
    let b = Arr::new(vec![3.0f64], &[]);
    assert_eq!(bin::<f64, f64>(BinaryOp::Pow, &a, &b).unwrap(), [8.0]);
    let e = Arr::<f32>::new(vec![], &[3, 0, 2]);
    assert_eq!(bin::<f32, f32>(BinaryOp::Add, &e, &e).unwrap(), Vec::<f32>::new());
    assert_eq!(un::<f32, bool>(UnaryOp::IsNan, &e).unwrap(), Vec::<bool>::new());
}

/// Large operands take the parallel path; results do not depend on the
/// pool size.
#[test]
fn large_operands_in_pools_of_one_two_and_four_threads() {
    let n = 300_001;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01).collect();
    let a = Arr::new(xs.clone(), &[n]);
    let a_rev = Arr::with_layout(&xs, &[n], Layout::Reversed);
    let mut results = Vec::new();
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let exp: Vec<f32> = un(UnaryOp::Exp, &a).unwrap();
            let sum: Vec<f32> = bin(BinaryOp::Add, &a, &a_rev).unwrap();
            results.push((exp, sum));
        });
    }
    for (i, x) in xs.iter().enumerate() {
        assert!(close(results[0].0[i] as f64, (*x as f64).exp(), 1e-6));
        assert_eq!(results[0].1[i], x + xs[i]);
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
}

/// Mid-sized operands (under two grains) are shared between the calling
/// thread and pool threads that are awake, by pieces of long rows or by
/// groups of short ones; results do not depend on who ran which.
#[test]
fn mid_sized_operands_in_pools_of_one_two_and_four_threads() {
    for shape in [[3usize, 100_001], [5_000, 31]] {
        let n = shape[0] * shape[1];
        let xs: Vec<f32> = (0..n).map(|i| (i % 997) as f32 * 0.01).collect();
        let a = Arr::new(xs.clone(), &shape);
        // Column-major: its rows do not merge with the output's, so the
        // kernels walk rows of `shape[1]` elements.
        let a_f = Arr::with_layout(&xs, &shape, Layout::F);
        let mut results = Vec::new();
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                // Repeated, so that helpers are awake for some of the calls.
                for _ in 0..20 {
                    let exp: Vec<f32> = un(UnaryOp::Exp, &a_f).unwrap();
                    let sum: Vec<f32> = bin(BinaryOp::Add, &a, &a_f).unwrap();
                    results.push((exp, sum));
                }
            });
        }
        let expected: Vec<f32> = xs.iter().map(|x| x + x).collect();
        for (exp, sum) in &results {
            assert_eq!(sum, &expected, "{shape:?}");
            assert_eq!(exp, &results[0].0, "{shape:?}");
        }
        for (got, x) in results[0].0.iter().zip(&xs) {
            assert!(close(*got as f64, (*x as f64).exp(), 1e-6));
        }
    }
}

#[test]
fn where_selects_with_tensors_and_scalars() {
    let cond = Arr::new(vec![true, false, true, false, false, true], &[2, 3]);
    let x = Arr::with_layout(&[1u16, 2, 3, 4, 5, 6], &[2, 3], Layout::F);
    let y = Arr::with_layout(&[10u16, 20, 30, 40, 50, 60], &[2, 3], Layout::Reversed);
    let mut out = Arr::<u16>::zeros(&[2, 3]);
    run(Op::Where {
        cond: cond.view(),
        x: Operand::Tensor(x.view()),
        y: Operand::Tensor(y.view()),
        out: out.view_mut(),
    })
    .unwrap();
    assert_eq!(out.values(), [1, 20, 3, 40, 50, 6]);
    let mut fo = Arr::<f16>::zeros(&[2, 3]);
    run(Op::Where {
        cond: cond.view(),
        x: Operand::Scalar(Scalar::F16(f16::ONE)),
        y: Operand::Scalar(Scalar::F16(f16::NEG_ONE)),
        out: fo.view_mut(),
    })
    .unwrap();
    assert_eq!(
        fo.values().iter().map(|v| v.to_f32()).collect::<Vec<_>>(),
        [1.0, -1.0, 1.0, -1.0, -1.0, 1.0]
    );
    let bad = run(Op::Where {
        cond: x.view(),
        x: Operand::Tensor(x.view()),
        y: Operand::Tensor(y.view()),
        out: out.view_mut(),
    });
    assert!(matches!(bad, Err(KernelError::Invalid(_))), "{bad:?}");
}

#[test]
fn unsupported_pairs_are_reported_not_run() {
    let i = Arr::new(vec![1i32, 2], &[2]);
    let f = Arr::new(vec![1.0f32, 2.0], &[2]);
    let b = Arr::new(vec![true, false], &[2]);
    let unsupported = |r: Result<Vec<i32>, KernelError>| matches!(r, Err(KernelError::Unsupported { .. }));
    assert!(unsupported(un::<i32, i32>(UnaryOp::Sin, &i)));
    assert!(unsupported(bin::<i32, i32>(BinaryOp::LogicalAnd, &i, &i)));
    assert!(unsupported(bin::<i32, i32>(BinaryOp::Divide, &i, &i)));
    assert!(matches!(
        bin::<f32, f32>(BinaryOp::BitwiseAnd, &f, &f),
        Err(KernelError::Unsupported { .. })
    ));
    assert!(matches!(
        bin::<f32, f32>(BinaryOp::BitwiseLeftShift, &f, &f),
        Err(KernelError::Unsupported { .. })
    ));
    assert!(matches!(
        bin::<bool, bool>(BinaryOp::Add, &b, &b),
        Err(KernelError::Unsupported { .. })
    ));
    assert!(matches!(
        un::<bool, bool>(UnaryOp::Negative, &b),
        Err(KernelError::Unsupported { .. })
    ));
    assert!(matches!(
        un::<f32, bool>(UnaryOp::LogicalNot, &f),
        Err(KernelError::Unsupported { .. })
    ));
    // `supports` agrees with `execute` on every (op, dtype) pair that a
    // same-dtype elementwise call can express.
    let held = anydev_kernels::dtypes();
    for code in OpCode::all() {
        for dt in DType::ALL {
            let s = supports(code, dt);
            if code == OpCode::Cast || code == OpCode::Copy || code == OpCode::Fill {
                assert_eq!(s, held.contains(&dt), "{code} {dt}: held dtypes move and convert");
            }
            if matches!(code, OpCode::Unary(UnaryOp::Sin)) {
                assert_eq!(s, dt.is_inexact());
            }
        }
    }
    // Every elementwise and reduction pair runs exactly when `supports`
    // says so (any dtype, complex included).
    for dt in DType::ALL {
        let size = dt.size();
        let raw = |n: usize| vec![0u128; n * size / 16 + 1];
        let (shape, strides) = ([4usize], [1isize]);
        let tensor = |buf: &mut Vec<u128>, d: DType| {
            anydev_kernels::HostTensor::new(buf.as_mut_ptr() as *mut u8, d, &shape, &strides)
        };
        let outcome = |code: OpCode, r: Result<(), KernelError>| {
            assert_eq!(
                !matches!(r, Err(KernelError::Unsupported { .. })),
                supports(code, dt),
                "{code} {dt}: {r:?}"
            );
            if supports(code, dt) {
                assert!(r.is_ok(), "{code} {dt}: {r:?}");
            }
        };
        for &op in UnaryOp::ALL {
            let (mut x, mut o) = (raw(4), vec![0u128; 5]);
            let r = run(Op::Unary {
                op,
                x: tensor(&mut x, dt),
                out: tensor(&mut o, op.output_dtype(dt)),
            });
            outcome(OpCode::Unary(op), r);
        }
        for &op in BinaryOp::ALL {
            let (mut a, mut b, mut o) = (raw(4), raw(4), vec![0u128; 5]);
            let out_dt = if op.outputs_bool() { DType::Bool } else { dt };
            let r = run(Op::Binary {
                op,
                lhs: Operand::Tensor(tensor(&mut a, dt)),
                rhs: Operand::Tensor(tensor(&mut b, dt)),
                out: tensor(&mut o, out_dt),
            });
            outcome(OpCode::Binary(op), r);
        }
    }
}

#[test]
fn malformed_calls_are_invalid() {
    let a = Arr::new(vec![1.0f32, 2.0, 3.0], &[3]);
    let b = Arr::new(vec![1.0f32, 2.0], &[2]);
    let d = Arr::new(vec![1.0f64, 2.0, 3.0], &[3]);
    let invalid = |r: Result<Vec<f32>, KernelError>| matches!(r, Err(KernelError::Invalid(_)));
    assert!(invalid(bin(BinaryOp::Add, &a, &b)));
    let mut out = Arr::<f32>::zeros(&[3]);
    let r = run(Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(a.view()),
        rhs: Operand::Tensor(d.view()),
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let r = run(Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(a.view()),
        rhs: Operand::Scalar(Scalar::F64(1.0)),
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    // Output dtype must be bool for comparisons and the input's otherwise.
    let r = run(Op::Binary {
        op: BinaryOp::Less,
        lhs: Operand::Tensor(a.view()),
        rhs: Operand::Tensor(a.view()),
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    // Strides that disagree with the shape's length.
    let mut bad = a.view();
    let strides = [1isize, 1];
    bad.strides = &strides;
    let r = run(Op::Unary {
        op: UnaryOp::Abs,
        x: bad,
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    // A shape whose element count overflows.
    let huge = [usize::MAX, 3];
    let hs = [1isize, 1];
    let r = run(Op::Unary {
        op: UnaryOp::Abs,
        x: anydev_kernels::HostTensor {
            data: a.view().data,
            dtype: DType::F32,
            shape: &huge,
            strides: &hs,
        },
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
}

/// Absurd layouts are refused or handled without arithmetic overflow.
#[test]
fn absurd_strides_never_panic() {
    let a = Arr::new(vec![1.0f32; 4], &[4]);
    let mut out = Arr::<f32>::zeros(&[4]);
    let shapes: [&[usize]; 4] = [&[1, 4], &[0, 4], &[4, 1], &[1usize << 63, 0]];
    for shape in shapes {
        let strides = [isize::MAX, isize::MIN];
        let x = anydev_kernels::HostTensor {
            data: a.view().data,
            dtype: DType::F32,
            shape,
            strides: &strides,
        };
        let o = anydev_kernels::HostTensor {
            strides: &strides,
            shape,
            ..out.view_mut()
        };
        let _ = run(Op::Unary {
            op: UnaryOp::Abs,
            x,
            out: o,
        });
        let _ = run(Op::Scan {
            op: anydev_ops::ScanOp::CumulativeSum,
            x,
            axis: 0,
            out: o,
        });
        let _ = run(Op::Sort {
            x,
            axis: 1,
            descending: false,
            out: o,
        });
        let _ = run(Op::Reduce {
            op: anydev_ops::ReduceOp::Sum,
            x,
            axes: &[0],
            out: o,
        });
    }
}
