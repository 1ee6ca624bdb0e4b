//! Elementwise ops against plain f64 / i128 references: every supported
//! unary and binary op on every dtype, strided, reversed, broadcast and
//! scalar operands, NaN/inf and integer edge values, casts, where, fill,
//! copy and arange.

mod common;

use anydev_core::ops::{BinaryOp, Op, OpCode, Operand, UnaryOp};
use anydev_core::{DType, Scalar};
use common::*;

fn float_inputs() -> Vec<f64> {
    vec![
        -3.7,
        -2.5,
        -1.0,
        -0.5,
        -0.0,
        0.0,
        0.25,
        0.5,
        0.75,
        1.5,
        2.5,
        3.0,
        7.25,
        100.0,
        -100.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ]
}

/// Reference of a float unary op in f64; `None` where the op is not a float op.
fn unary_ref(op: UnaryOp, x: f64) -> f64 {
    use UnaryOp::*;
    let b = |v: bool| v as u8 as f64;
    match op {
        Abs => x.abs(),
        Negative => -x,
        Square => x * x,
        Sqrt => x.sqrt(),
        Reciprocal => 1.0 / x,
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
        Floor => x.floor(),
        Ceil => x.ceil(),
        Trunc => x.trunc(),
        Round => x.round_ties_even(),
        IsNan => b(x.is_nan()),
        IsInf => b(x.is_infinite()),
        IsFinite => b(x.is_finite()),
        SignBit => b(x.is_sign_negative()),
        Exp => x.exp(),
        Expm1 => x.exp_m1(),
        Log => x.ln(),
        Log1p => x.ln_1p(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Asin => x.asin(),
        Acos => x.acos(),
        Atan => x.atan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        Asinh => x.asinh(),
        Acosh => x.acosh(),
        Atanh => x.atanh(),
        LogicalNot | BitwiseInvert | Conj | Real | Imag => unreachable!("{op} is no real float op"),
    }
}

fn is_exact(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Abs | Negative | Square | Sign | Floor | Ceil | Trunc | Round | IsNan | IsInf | IsFinite | SignBit
    )
}

/// Runs a unary op with `x` reversed and `out` gapped; returns the output as f64s.
fn run_unary(g: &Gpu, op: UnaryOp, dtype: DType, x_bytes_of: impl Fn(&View) -> Vec<u8>, shape: &[usize]) -> Vec<u8> {
    let xv = View::reversed(shape);
    let ov = View::gapped(shape);
    let out_dtype = if op.outputs_bool() { DType::Bool } else { dtype };
    let x = g.upload(&x_bytes_of(&xv));
    let out = g.upload(&vec![0u8; ov.len * out_dtype.size()]);
    g.run(&Op::Unary {
        op,
        x: xv.tensor(&x, dtype),
        out: ov.tensor(&out, out_dtype),
    })
    .unwrap();
    let all = g.download(&out);
    let size = out_dtype.size();
    ov.gather(&all.chunks_exact(size).collect::<Vec<_>>()).concat()
}

#[test]
fn float_unary_ops_match_f64_references() {
    let g = gpu_or_skip!();
    let inputs = float_inputs();
    let shape = [3, inputs.len() / 3];
    let mut checked = 0;
    for dtype in FLOATS.into_iter().filter(|&d| g.holds(d)) {
        let x: Vec<f64> = inputs.iter().map(|&v| round_to(dtype, v)).collect();
        for &op in UnaryOp::ALL {
            if !g.backend.supports(0, OpCode::Unary(op), dtype) {
                continue;
            }
            let got = run_unary(g, op, dtype, |v| v.place(dtype, &x), &shape);
            let out_dtype = if op.outputs_bool() { DType::Bool } else { dtype };
            let got = decode(out_dtype, &got);
            for (i, (&xi, &gi)) in x.iter().zip(&got).enumerate() {
                let want = round_to(out_dtype, unary_ref(op, xi));
                let ok = if is_exact(op) {
                    got[i] == want || (want.is_nan() && gi.is_nan())
                } else if matches!(op, UnaryOp::Sqrt | UnaryOp::Reciprocal) {
                    close(out_dtype, gi, want, 3.0)
                } else {
                    // Transcendentals: Vulkan only bounds their error loosely
                    // (llvmpipe's acos is good to ~1e-5), so 2e-4 relative
                    // to max(|want|, 1).
                    close(out_dtype, gi, want, 64.0) || (gi - want).abs() <= 2e-4 * want.abs().max(1.0)
                };
                assert!(ok, "{op} {dtype}: x={xi} got {gi} want {want}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} values checked");
}

#[test]
fn integer_and_bool_unary_ops_wrap_like_the_cpu() {
    let g = gpu_or_skip!();
    for dtype in INTS.into_iter().filter(|&d| g.holds(d)) {
        let (lo, hi) = int_range(dtype);
        let x: Vec<i128> = vec![lo, lo + 1, -7, -1, 0, 1, 2, 7, 100, hi - 1, hi]
            .into_iter()
            .map(|v| wrap(dtype, v))
            .collect();
        let shape = [x.len()];
        for &op in UnaryOp::ALL {
            if !g.backend.supports(0, OpCode::Unary(op), dtype) {
                continue;
            }
            use UnaryOp::*;
            let got = run_unary(g, op, dtype, |v| v.place_int(dtype, &x), &shape);
            let out_dtype = if op.outputs_bool() { DType::Bool } else { dtype };
            let got = decode_int(out_dtype, &got);
            for (&xi, &gi) in x.iter().zip(&got) {
                let want = match op {
                    Abs => wrap(dtype, xi.abs()),
                    Negative => wrap(dtype, -xi),
                    Square => wrap(dtype, xi.wrapping_mul(xi)),
                    Sign => wrap(dtype, xi.signum()),
                    BitwiseInvert => wrap(dtype, !xi),
                    Round | Floor | Ceil | Trunc => xi,
                    SignBit => (xi < 0) as i128,
                    IsNan | IsInf => 0,
                    IsFinite => 1,
                    other => panic!("{other} should not be supported for {dtype}"),
                };
                assert_eq!(gi, want, "{op} {dtype}: x={xi}");
            }
        }
    }
    let x = [0i128, 1, 1, 0];
    for op in [UnaryOp::LogicalNot, UnaryOp::BitwiseInvert] {
        let got = decode_int(
            DType::Bool,
            &run_unary(g, op, DType::Bool, |v| v.place_int(DType::Bool, &x), &[4]),
        );
        assert_eq!(got, vec![1, 0, 0, 1], "{op}");
    }
    assert!(!g.backend.supports(0, OpCode::Unary(UnaryOp::Abs), DType::Bool));
}

/// NumPy's `divmod` for floats.
fn divmod(a: f64, b: f64) -> (f64, f64) {
    if b == 0.0 {
        return (a / b, f64::NAN);
    }
    let mut m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0f64.copysign(b);
    }
    let q = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0f64.copysign(a / b)
    };
    (q, m)
}

fn binary_float_ref(op: BinaryOp, a: f64, b: f64, dtype: DType) -> f64 {
    use BinaryOp::*;
    let t = |v: bool| v as u8 as f64;
    match op {
        Add => a + b,
        Subtract => a - b,
        Multiply => a * b,
        Divide => a / b,
        Maximum => {
            if a.is_nan() || a >= b {
                a
            } else {
                b
            }
        }
        Minimum => {
            if a.is_nan() || a <= b {
                a
            } else {
                b
            }
        }
        FloorDivide => divmod(a, b).0,
        Remainder => divmod(a, b).1,
        Pow => a.powf(b),
        Atan2 => a.atan2(b),
        Hypot => a.hypot(b),
        CopySign => a.copysign(b),
        LogAddExp => {
            if a == b {
                a + std::f64::consts::LN_2
            } else {
                let m = a.max(b);
                m + (-(a - b).abs()).exp().ln_1p()
            }
        }
        NextAfter => next_in(dtype, a, b),
        Equal => t(a == b),
        NotEqual => t(a != b),
        Less => t(a < b),
        LessEqual => t(a <= b),
        Greater => t(a > b),
        GreaterEqual => t(a >= b),
        _ => unreachable!("{op}"),
    }
}

/// NumPy's nextafter: one step of `dtype`'s own precision from `a` toward
/// `b`, on the bits; zeros step to the smallest subnormal of `b`'s sign.
fn next_in(dtype: DType, a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        return b;
    }
    type Codec = (fn(f64) -> u64, fn(u64) -> f64);
    let (to_bits, from_bits): Codec = match dtype {
        DType::F16 => (
            |v| anydev_ops::f16_from_f64(v).to_bits().into(),
            |b| half::f16::from_bits(b as u16).to_f64(),
        ),
        DType::BF16 => (
            |v| anydev_ops::bf16_from_f64(v).to_bits().into(),
            |b| half::bf16::from_bits(b as u16).to_f64(),
        ),
        DType::F32 => (|v| (v as f32).to_bits().into(), |b| f32::from_bits(b as u32).into()),
        _ => (f64::to_bits, f64::from_bits),
    };
    if a == 0.0 {
        return from_bits(1).copysign(b);
    }
    let bits = to_bits(a);
    from_bits(if (a < b) == (a > 0.0) { bits + 1 } else { bits - 1 })
}

/// `lhs` is [rows, cols] column-major; `rhs` is one row broadcast over
/// the rows (zero stride), or a scalar.
fn run_binary(
    g: &Gpu,
    op: BinaryOp,
    dtype: DType,
    lhs: &[u8],
    rhs: &[u8],
    (rows, cols): (usize, usize),
    rhs_scalar: Option<Scalar>,
) -> Vec<u8> {
    let shape = [rows, cols];
    let lv = View::column_major(&shape);
    let rv = View {
        shape: shape.to_vec(),
        strides: vec![0, 1],
        offset: 0,
        len: cols,
    };
    let ov = View::contiguous(&shape);
    let out_dtype = if op.outputs_bool() { DType::Bool } else { dtype };
    let (l, r) = (g.upload(lhs), g.upload(rhs));
    let out = g.alloc(ov.len * out_dtype.size());
    let rhs = match rhs_scalar {
        Some(s) => Operand::Scalar(s),
        None => Operand::Tensor(rv.tensor(&r, dtype)),
    };
    g.run(&Op::Binary {
        op,
        lhs: Operand::Tensor(lv.tensor(&l, dtype)),
        rhs,
        out: ov.tensor(&out, out_dtype),
    })
    .unwrap();
    g.download(&out)
}

#[test]
fn float_binary_ops_match_f64_references_with_broadcasting() {
    let g = gpu_or_skip!();
    let a_vals = [-3.5, -1.0, -0.0, 0.0, 0.5, 2.0, 7.0, f64::INFINITY, f64::NAN, 1e30];
    let b_vals = [2.0, -0.5, 3.0, -0.0, f64::NAN, 0.0, -7.25, 1.0, f64::NEG_INFINITY, 1.5];
    let mut checked = 0;
    for dtype in FLOATS.into_iter().filter(|&d| g.holds(d)) {
        let a: Vec<f64> = a_vals.iter().map(|&v| round_to(dtype, v)).collect();
        let b: Vec<f64> = b_vals.iter().map(|&v| round_to(dtype, v)).collect();
        let (rows, cols) = (a.len(), b.len());
        // lhs[r][c] = a[r] (stored column-major), rhs broadcasts b over rows.
        let lhs_logical: Vec<f64> = (0..rows * cols).map(|i| a[i / cols]).collect();
        let lhs = View::column_major(&[rows, cols]).place(dtype, &lhs_logical);
        for &op in BinaryOp::ALL {
            if !g.backend.supports(0, OpCode::Binary(op), dtype) {
                continue;
            }
            let out_dtype = if op.outputs_bool() { DType::Bool } else { dtype };
            let got = decode(
                out_dtype,
                &run_binary(g, op, dtype, &lhs, &encode(dtype, &b), (rows, cols), None),
            );
            let scalar = Scalar::from_bits(
                dtype,
                u128::from_le_bytes({
                    let mut w = [0u8; 16];
                    w[..dtype.size()].copy_from_slice(&encode(dtype, &[b[1]]));
                    w
                }),
            );
            let with_scalar = decode(
                out_dtype,
                &run_binary(g, op, dtype, &lhs, &encode(dtype, &b), (rows, cols), Some(scalar)),
            );
            for i in 0..rows * cols {
                let (x, y) = (a[i / cols], b[i % cols]);
                let want = round_to(out_dtype, binary_float_ref(op, x, y, dtype));
                let inexact = matches!(
                    op,
                    BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::LogAddExp | BinaryOp::Hypot
                );
                let ulps = if inexact { 64.0 } else { 1.0 };
                let ok = |gi: f64, want: f64| {
                    close(out_dtype, gi, want, ulps) || (inexact && (gi - want).abs() <= 2e-4 * want.abs().max(1.0))
                };
                assert!(ok(got[i], want), "{op} {dtype}: {x} vs {y}: got {} want {want}", got[i]);
                let want_s = round_to(out_dtype, binary_float_ref(op, x, b[1], dtype));
                if i % cols == 0 {
                    assert!(
                        ok(with_scalar[i], want_s),
                        "{op} {dtype} scalar: {x} vs {}: got {} want {want_s}",
                        b[1],
                        with_scalar[i]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 3000, "only {checked} values checked");
}

fn binary_int_ref(op: BinaryOp, dtype: DType, a: i128, b: i128) -> i128 {
    use BinaryOp::*;
    let bits = dtype.size() as i128 * 8;
    let w = |v: i128| wrap(dtype, v);
    match op {
        Add => w(a + b),
        Subtract => w(a - b),
        Multiply => w(a.wrapping_mul(b)),
        FloorDivide => {
            if b == 0 {
                0
            } else {
                w(a.div_euclid(b) - if b < 0 && a.rem_euclid(b) != 0 { 1 } else { 0 })
            }
        }
        Remainder => {
            if b == 0 {
                0
            } else {
                let r = a % b;
                w(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
            }
        }
        Pow => {
            if b < 0 {
                // 1/a^|b| truncated toward zero (0 for a = 0).
                match a {
                    1 => 1,
                    -1 if b % 2 != 0 => -1,
                    -1 => 1,
                    _ => 0,
                }
            } else {
                let (mut r, mut base, mut e) = (1i128, a, b);
                while e > 0 {
                    if e & 1 == 1 {
                        r = w(r.wrapping_mul(base));
                    }
                    base = w(base.wrapping_mul(base));
                    e >>= 1;
                }
                r
            }
        }
        BitwiseAnd => a & b,
        BitwiseOr => a | b,
        BitwiseXor => a ^ b,
        BitwiseLeftShift => {
            if (0..bits).contains(&b) {
                w(a << b)
            } else {
                0
            }
        }
        BitwiseRightShift => {
            if (0..bits).contains(&b) {
                a >> b
            } else if a < 0 {
                -1
            } else {
                0
            }
        }
        Maximum => a.max(b),
        Minimum => a.min(b),
        Equal => (a == b) as i128,
        NotEqual => (a != b) as i128,
        Less => (a < b) as i128,
        LessEqual => (a <= b) as i128,
        Greater => (a > b) as i128,
        GreaterEqual => (a >= b) as i128,
        LogicalAnd => (a != 0 && b != 0) as i128,
        LogicalOr => (a != 0 || b != 0) as i128,
        LogicalXor => ((a != 0) != (b != 0)) as i128,
        _ => unreachable!("{op}"),
    }
}

#[test]
fn integer_binary_ops_wrap_and_divide_by_zero_to_zero() {
    let g = gpu_or_skip!();
    for dtype in INTS.into_iter().chain([DType::Bool]).filter(|&d| g.holds(d)) {
        let (lo, hi) = if dtype == DType::Bool { (0, 1) } else { int_range(dtype) };
        let a: Vec<i128> = [lo, lo + 1, -9, -1, 0, 1, 3, 7, 100, hi]
            .iter()
            .map(|&v| wrap_or_bool(dtype, v))
            .collect();
        let b: Vec<i128> = [-1, 0, 1, 2, 3, -7, 5, 9, lo, hi]
            .iter()
            .map(|&v| wrap_or_bool(dtype, v))
            .collect();
        let (rows, cols) = (a.len(), b.len());
        let lhs_logical: Vec<i128> = (0..rows * cols).map(|i| a[i / cols]).collect();
        let lhs = View::column_major(&[rows, cols]).place_int(dtype, &lhs_logical);
        for &op in BinaryOp::ALL {
            if !g.backend.supports(0, OpCode::Binary(op), dtype) {
                continue;
            }
            let out_dtype = if op.outputs_bool() { DType::Bool } else { dtype };
            let got = decode_int(
                out_dtype,
                &run_binary(g, op, dtype, &lhs, &encode_int(dtype, &b), (rows, cols), None),
            );
            for i in 0..rows * cols {
                let (x, y) = (a[i / cols], b[i % cols]);
                assert_eq!(got[i], binary_int_ref(op, dtype, x, y), "{op} {dtype}: {x} vs {y}");
            }
        }
    }
}

fn wrap_or_bool(dtype: DType, v: i128) -> i128 {
    if dtype == DType::Bool {
        (v != 0) as i128
    } else {
        wrap(dtype, v)
    }
}

#[test]
fn casts_truncate_saturate_wrap_and_map_nan_to_zero() {
    let g = gpu_or_skip!();
    let float_values = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e10,
        -1e10,
        2.5,
        -2.5,
        300.7,
        -129.9,
        0.0,
        -0.0,
        65519.0,
        1.0 / 3.0,
    ];
    let int_values: [i128; 9] = [0, 1, -1, 127, -128, 255, 40000, -70000, 1 << 40];
    // Complex casts are checked in complex.rs.
    let dtypes: Vec<DType> = DType::ALL
        .into_iter()
        .filter(|&d| g.holds(d) && !d.is_complex())
        .collect();
    for &src in &dtypes {
        for &dst in &dtypes {
            let shape = [if src.is_float() {
                float_values.len()
            } else {
                int_values.len()
            }];
            let xv = View::reversed(&shape);
            let (bytes, reference): (Vec<u8>, Vec<Vec<u8>>) = if src.is_float() {
                let x: Vec<f64> = float_values.iter().map(|&v| round_to(src, v)).collect();
                (xv.place(src, &x), x.iter().map(|&v| encode(dst, &[v])).collect())
            } else {
                let x: Vec<i128> = int_values.iter().map(|&v| wrap_or_bool(src, v)).collect();
                let reference = x
                    .iter()
                    .map(|&v| match dst {
                        DType::Bool => vec![(v != 0) as u8],
                        d if d.is_float() => encode(d, &[v as f64]),
                        d => encode_int(d, &[v]),
                    })
                    .collect();
                (xv.place_int(src, &x), reference)
            };
            let x = g.upload(&bytes);
            let ov = View::contiguous(&shape);
            let out = g.alloc(ov.len * dst.size());
            g.run(&Op::Cast {
                x: xv.tensor(&x, src),
                out: ov.tensor(&out, dst),
            })
            .unwrap();
            let got = g.download(&out);
            for (i, want) in reference.iter().enumerate() {
                let got_i = &got[i * dst.size()..(i + 1) * dst.size()];
                let both_nan = dst.is_float() && decode(dst, got_i)[0].is_nan() && decode(dst, want)[0].is_nan();
                assert!(
                    got_i == &want[..] || both_nan,
                    "{src} -> {dst}, element {i}: got {got_i:?} want {want:?}"
                );
            }
        }
    }
}

#[test]
fn where_fill_copy_and_arange() {
    let g = gpu_or_skip!();
    for dtype in [DType::F32, DType::I8, DType::U16, DType::F16, DType::I64, DType::F64]
        .into_iter()
        .filter(|&d| g.holds(d))
    {
        let shape = [4, 5];
        let n = 20;
        let cond: Vec<i128> = (0..n).map(|i| (i % 3 == 0) as i128).collect();
        let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let cv = View::gapped(&shape);
        let xv = View::reversed(&shape);
        let ov = View::contiguous(&shape);
        let (c, xb) = (
            g.upload(&cv.place_int(DType::Bool, &cond)),
            g.upload(&xv.place(dtype, &x)),
        );
        let out = g.alloc(n * dtype.size());
        let y = Scalar::from_bits(
            dtype,
            u128::from_le_bytes({
                let mut w = [0u8; 16];
                w[..dtype.size()].copy_from_slice(&encode(dtype, &[-3.0]));
                w
            }),
        );
        g.run(&Op::Where {
            cond: cv.tensor(&c, DType::Bool),
            x: Operand::Tensor(xv.tensor(&xb, dtype)),
            y: Operand::Scalar(y),
            out: ov.tensor(&out, dtype),
        })
        .unwrap();
        let want: Vec<f64> = (0..n)
            .map(|i| if cond[i] == 1 { x[i] } else { round_to(dtype, -3.0) })
            .collect();
        assert_eq!(decode(dtype, &g.download(&out)), want, "where {dtype}");

        g.run(&Op::Fill {
            out: cv.tensor(&c, DType::Bool),
            value: Scalar::Bool(true),
        })
        .unwrap();
        assert_eq!(
            cv.gather(&decode_int(DType::Bool, &g.download(&c))),
            vec![1; n],
            "fill bool"
        );

        g.run(&Op::Copy {
            x: xv.tensor(&xb, dtype),
            out: View::column_major(&shape).tensor(&g.alloc(1), dtype),
        })
        .expect_err("copy out of range must fail");
        let cm = View::column_major(&shape);
        let out2 = g.alloc(cm.len * dtype.size());
        g.run(&Op::Copy {
            x: xv.tensor(&xb, dtype),
            out: cm.tensor(&out2, dtype),
        })
        .unwrap();
        assert_eq!(cm.gather(&decode(dtype, &g.download(&out2))), x, "copy {dtype}");

        g.run(&Op::Arange {
            out: cm.tensor(&out2, dtype),
            start: 2.0,
            step: 3.0,
        })
        .unwrap();
        let want: Vec<f64> = (0..n).map(|i| round_to(dtype, 2.0 + 3.0 * i as f64)).collect();
        assert_eq!(cm.gather(&decode(dtype, &g.download(&out2))), want, "arange {dtype}");
    }
    // 0-d and empty operands.
    let scalar_buf = g.upload(&encode(DType::F32, &[4.0]));
    let out = g.alloc(4);
    g.run(&Op::Unary {
        op: UnaryOp::Sqrt,
        x: tensor(&scalar_buf, DType::F32, &[], &[], 0),
        out: tensor(&out, DType::F32, &[], &[], 0),
    })
    .unwrap();
    assert_eq!(decode(DType::F32, &g.download(&out)), vec![2.0]);
    let empty_shape = [3, 0];
    let strides = [0isize, 1];
    g.run(&Op::Unary {
        op: UnaryOp::Exp,
        x: tensor(&scalar_buf, DType::F32, &empty_shape, &strides, 0),
        out: tensor(&out, DType::F32, &empty_shape, &strides, 0),
    })
    .unwrap();
    assert_eq!(
        decode(DType::F32, &g.download(&out)),
        vec![2.0],
        "an empty op writes nothing"
    );
    // Unsupported pairs are an Unsupported error, not a crash.
    let err = g
        .run(&Op::Unary {
            op: UnaryOp::Exp,
            x: tensor(&scalar_buf, DType::I32, &[], &[], 0),
            out: tensor(&out, DType::I32, &[], &[], 0),
        })
        .unwrap_err();
    assert!(matches!(err, anydev_core::Error::Unsupported { .. }), "{err}");
}

/// One-dimensional operands take the kernels' linear and `vec4` forms
/// (chosen per call from strides, offsets and whether the output spans
/// its buffer): every length around the vector width, operands that start
/// at and after their buffer's first element, a broadcast operand,
/// scalars, outputs inside a larger buffer whose elements outside the
/// view must keep their values, and outputs of exactly their length,
/// 4-, 2- and 1-byte ones.
#[test]
fn one_dimensional_operands_at_every_length_and_offset() {
    let g = gpu_or_skip!();
    const SENTINEL: f64 = -77.0;
    let lengths = [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 1023, 1029];
    for n in lengths {
        for (x_off, out_off) in [(0, 0), (1, 0), (0, 3), (4, 8), (2, 6), (5, 5)] {
            let x: Vec<f64> = (0..n).map(|i| (i as f64) * 0.5 - 3.0).collect();
            let y: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
            let padded = |values: &[f64], off: usize| {
                let mut v = vec![SENTINEL; off];
                v.extend_from_slice(values);
                v.extend([SENTINEL; 5]);
                v
            };
            let shape = [n];
            let unit = [1isize];
            let xb = g.upload(&encode(DType::F32, &padded(&x, x_off)));
            let yb = g.upload(&encode(DType::F32, &padded(&y, x_off)));
            let ob = g.upload(&encode(DType::F32, &padded(&vec![0.0; n], out_off)));
            let xt = tensor(&xb, DType::F32, &shape, &unit, x_off);
            let yt = tensor(&yb, DType::F32, &shape, &unit, x_off);
            let ot = tensor(&ob, DType::F32, &shape, &unit, out_off);
            let check = |what: &str, want: Vec<f64>| {
                let got = decode(DType::F32, &g.download(&ob));
                assert_eq!(
                    got,
                    padded(&want, out_off),
                    "{what}, n = {n}, offsets {x_off}, {out_off}"
                );
            };
            let add = |rhs| Op::Binary {
                op: BinaryOp::Add,
                lhs: Operand::Tensor(xt),
                rhs,
                out: ot,
            };
            g.run(&add(Operand::Tensor(yt))).unwrap();
            check("x + y", (0..n).map(|i| round_to(DType::F32, x[i] + y[i])).collect());
            g.run(&add(Operand::Scalar(Scalar::F32(2.0)))).unwrap();
            check("x + 2", (0..n).map(|i| x[i] + 2.0).collect());
            // The first element of y broadcast along the axis.
            let first = tensor(&yb, DType::F32, &shape, &[0], x_off);
            g.run(&add(Operand::Tensor(first))).unwrap();
            check(
                "x + y[0]",
                (0..n).map(|i| x[i] + y.first().copied().unwrap_or(0.0)).collect(),
            );
            g.run(&Op::Unary {
                op: UnaryOp::Negative,
                x: yt,
                out: ot,
            })
            .unwrap();
            check("-y", y.iter().map(|v| -v).collect());
            g.run(&Op::Fill {
                out: ot,
                value: Scalar::F32(9.5),
            })
            .unwrap();
            check("fill", vec![9.5; n]);
            let ib = g.upload(&encode_int(
                DType::I32,
                &(0..n as i128 + x_off as i128).collect::<Vec<_>>(),
            ));
            g.run(&Op::Cast {
                x: tensor(&ib, DType::I32, &shape, &unit, x_off),
                out: ot,
            })
            .unwrap();
            check("cast", (0..n).map(|i| (i + x_off) as f64).collect());
            // 1- and 2-byte outputs that span their allocation: whole
            // 4-byte words per thread, with bits past the end in padding.
            let less = |out| Op::Binary {
                op: BinaryOp::Less,
                lhs: Operand::Tensor(xt),
                rhs: Operand::Tensor(yt),
                out,
            };
            let below: Vec<i128> = (0..n).map(|i| (x[i] < y[i]) as i128).collect();
            let mask = g.alloc(n);
            g.run(&less(tensor(&mask, DType::Bool, &shape, &unit, 0))).unwrap();
            assert_eq!(decode_int(DType::Bool, &g.download(&mask)), below, "x < y, n = {n}");
            let half = g.alloc(n * 2);
            g.run(&Op::Cast {
                x: xt,
                out: tensor(&half, DType::F16, &shape, &unit, 0),
            })
            .unwrap();
            let want: Vec<f64> = x.iter().map(|&v| round_to(DType::F16, v)).collect();
            assert_eq!(decode(DType::F16, &g.download(&half)), want, "f16 cast, n = {n}");
            // A bool output inside a larger buffer keeps its neighbours.
            let padded_mask = g.upload(&vec![1u8; out_off + n + 3]);
            g.run(&less(tensor(&padded_mask, DType::Bool, &shape, &unit, out_off)))
                .unwrap();
            let mut want = vec![1i128; out_off];
            want.extend(&below);
            want.extend([1; 3]);
            assert_eq!(
                decode_int(DType::Bool, &g.download(&padded_mask)),
                want,
                "x < y inside, n = {n}"
            );
            if x_off == 0 {
                // An output that spans its allocation: the vec4 form, which
                // stores whole vectors into the buffer's padding.
                let exact = g.alloc(n * 4);
                let exact_t = tensor(&exact, DType::F32, &shape, &unit, 0);
                g.run(&Op::Binary {
                    op: BinaryOp::Multiply,
                    lhs: Operand::Tensor(xt),
                    rhs: Operand::Tensor(yt),
                    out: exact_t,
                })
                .unwrap();
                let want: Vec<f64> = (0..n).map(|i| round_to(DType::F32, x[i] * y[i])).collect();
                assert_eq!(decode(DType::F32, &g.download(&exact)), want, "x * y, n = {n}");
            }
        }
    }
}
