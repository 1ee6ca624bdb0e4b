//! Elementwise ops: broadcasting, strided layouts, scalars, special float
//! values, integer wrapping, `where`/`clip`, casts.

use crate::case::{check_eq, expect_err, Case, CaseCtx, Failure};
use crate::reference::{self as r, check_array, check_close};
use anydev_array::{self as ad, Array, IntoArg};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp, UnaryOp};
use anydev_core::{DType, Error};

type Binary = (BinaryOp, fn(f64, f64) -> f64);

/// Binary ops with their f64 reference (comparisons give 0/1).
const BINARY: &[Binary] = &[
    (BinaryOp::Add, |a, b| a + b),
    (BinaryOp::Subtract, |a, b| a - b),
    (BinaryOp::Multiply, |a, b| a * b),
    (BinaryOp::Maximum, f64::max),
    (BinaryOp::Minimum, f64::min),
    (BinaryOp::Less, |a, b| (a < b) as u8 as f64),
    (BinaryOp::Equal, |a, b| (a == b) as u8 as f64),
];

fn binary(op: BinaryOp, a: &Array, b: &Array) -> ad::Result<Array> {
    match op {
        BinaryOp::Add => ad::add(a, b),
        BinaryOp::Subtract => ad::subtract(a, b),
        BinaryOp::Multiply => ad::multiply(a, b),
        BinaryOp::Maximum => ad::maximum(a, b),
        BinaryOp::Minimum => ad::minimum(a, b),
        BinaryOp::Less => ad::less(a, b),
        BinaryOp::Equal => ad::equal(a, b),
        other => unreachable!("no case uses {other}"),
    }
}

fn reference_of(op: BinaryOp) -> fn(f64, f64) -> f64 {
    BINARY
        .iter()
        .find(|(o, _)| *o == op)
        .map(|(_, f)| *f)
        .expect("listed op")
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for &(op, _) in BINARY {
        // Bodies are plain fn pointers, so each op gets its own closure;
        // each op is then its own line and filterable.
        let body: fn(&CaseCtx) -> Result<(), Failure> = match op {
            BinaryOp::Add => |c| broadcast_case(c, BinaryOp::Add),
            BinaryOp::Subtract => |c| broadcast_case(c, BinaryOp::Subtract),
            BinaryOp::Multiply => |c| broadcast_case(c, BinaryOp::Multiply),
            BinaryOp::Maximum => |c| broadcast_case(c, BinaryOp::Maximum),
            BinaryOp::Minimum => |c| broadcast_case(c, BinaryOp::Minimum),
            BinaryOp::Less => |c| broadcast_case(c, BinaryOp::Less),
            _ => |c| broadcast_case(c, BinaryOp::Equal),
        };
        let case = Case::new(format!("elementwise::{}_broadcast", op.name()), body)
            .dtypes(&[DType::F16, DType::F32, DType::F64, DType::I32, DType::U8])
            .op(OpCode::Binary(op))
            .op(OpCode::Copy);
        // Comparisons answer in bool.
        cases.push(match op {
            BinaryOp::Less | BinaryOp::Equal => case.needs(crate::Need::DType(DType::Bool)),
            _ => case,
        });
    }
    cases.extend([
        Case::new("elementwise::unary_special_values", unary_special_values)
            .dtypes(&[DType::F32, DType::F64])
            .op(OpCode::Unary(UnaryOp::Exp))
            .op(OpCode::Unary(UnaryOp::Sqrt))
            .op(OpCode::Unary(UnaryOp::Abs))
            .op(OpCode::Unary(UnaryOp::Floor))
            .op(OpCode::Unary(UnaryOp::Negative))
            .op(OpCode::Unary(UnaryOp::Tanh)),
        Case::new("elementwise::inverse_hyperbolic_extremes", inverse_hyperbolic_extremes)
            .dtypes(&[DType::F32, DType::F64])
            .op(OpCode::Unary(UnaryOp::Asinh))
            .op(OpCode::Unary(UnaryOp::Acosh)),
        Case::new(
            "elementwise::integer_comparisons_are_exact",
            integer_comparisons_are_exact,
        )
        .needs(crate::Need::DType(DType::I64))
        .needs(crate::Need::DType(DType::U64))
        .needs(crate::Need::DType(DType::I8))
        .op(OpCode::Binary(BinaryOp::Less))
        .op(OpCode::Binary(BinaryOp::Equal))
        .op(OpCode::Where)
        .ops_for(DType::I8, &[OpCode::Binary(BinaryOp::Less), OpCode::Cast])
        .ops_for(DType::I64, &[OpCode::Binary(BinaryOp::Less), OpCode::Cast])
        .ops_for(
            DType::U64,
            &[
                OpCode::Binary(BinaryOp::Equal),
                OpCode::Binary(BinaryOp::NotEqual),
                OpCode::Binary(BinaryOp::Less),
                OpCode::Binary(BinaryOp::LessEqual),
                OpCode::Binary(BinaryOp::Greater),
                OpCode::Binary(BinaryOp::GreaterEqual),
            ],
        )
        .ops_for(DType::Bool, &[OpCode::Where, OpCode::Fill]),
        Case::new(
            "elementwise::integer_inputs_to_float_functions",
            integer_inputs_to_float_functions,
        )
        .needs(crate::Need::DType(DType::F16))
        .needs(crate::Need::DType(DType::F64))
        .needs(crate::Need::DType(DType::I8))
        .needs(crate::Need::DType(DType::I16))
        .op(OpCode::Unary(UnaryOp::Sqrt))
        .op(OpCode::Binary(BinaryOp::Divide))
        .ops_for(DType::F16, &[OpCode::Unary(UnaryOp::Sqrt)])
        .ops_for(
            DType::F64,
            &[
                OpCode::Unary(UnaryOp::Sqrt),
                OpCode::Binary(BinaryOp::Divide),
                OpCode::Reduce(ReduceOp::Sum),
            ],
        )
        .ops_for(DType::I8, &[OpCode::Binary(BinaryOp::Add), OpCode::Cast])
        .ops_for(DType::I16, &[OpCode::Cast])
        .ops_for(DType::I32, &[OpCode::Cast])
        .ops_for(DType::U8, &[OpCode::Cast])
        .ops_for(DType::U64, &[OpCode::Cast]),
        Case::new(
            "elementwise::clip_saturates_integer_bounds",
            clip_saturates_integer_bounds,
        )
        .needs(crate::Need::DType(DType::I8))
        .needs(crate::Need::DType(DType::I16))
        .needs(crate::Need::DType(DType::U8))
        .needs(crate::Need::DType(DType::I64))
        .needs(crate::Need::DType(DType::U64))
        .ops_for(DType::U8, &[OpCode::Binary(BinaryOp::Minimum)])
        .ops_for(DType::I8, &ORDER_AND_CAST)
        .ops_for(DType::I16, &ORDER_AND_CAST)
        .ops_for(DType::I64, &ORDER_AND_CAST)
        .ops_for(DType::U64, &ORDER_AND_CAST),
        Case::new(
            "elementwise::linspace_and_clip_of_integers",
            linspace_and_clip_of_integers,
        )
        .needs(crate::Need::DType(DType::I8))
        .op(OpCode::Arange)
        .op(OpCode::Unary(UnaryOp::Floor))
        .ops_for(
            DType::F64,
            &[
                OpCode::Arange,
                OpCode::Fill,
                OpCode::Cast,
                OpCode::Unary(UnaryOp::Floor),
            ],
        )
        .ops_for(
            DType::I8,
            &[OpCode::Binary(BinaryOp::Maximum), OpCode::Binary(BinaryOp::Minimum)],
        ),
        Case::new("elementwise::scalar_operands", scalar_operands)
            .dtypes(&[DType::F32, DType::F64, DType::I32])
            .op(OpCode::Binary(BinaryOp::Subtract))
            .op(OpCode::Binary(BinaryOp::Multiply)),
        Case::new("elementwise::integer_wrapping", integer_wrapping)
            .dtypes(&[DType::I32, DType::U8])
            .op(OpCode::Binary(BinaryOp::Add))
            .op(OpCode::Binary(BinaryOp::FloorDivide))
            .op(OpCode::Binary(BinaryOp::Remainder)),
        Case::new("elementwise::integer_powers", integer_powers)
            .dtypes(&[DType::I8, DType::I32, DType::I64])
            .op(OpCode::Binary(BinaryOp::Pow)),
        Case::new("elementwise::float_semantics", float_semantics)
            .dtypes(&[DType::F32, DType::F64])
            .op(OpCode::Unary(UnaryOp::Round))
            .op(OpCode::Unary(UnaryOp::IsNan))
            .op(OpCode::Binary(BinaryOp::Remainder))
            .needs(crate::Need::DType(DType::Bool)),
        Case::new("elementwise::where_and_clip", where_and_clip)
            .op(OpCode::Where)
            .op(OpCode::Binary(BinaryOp::Greater))
            .op(OpCode::Binary(BinaryOp::Maximum))
            .op(OpCode::Binary(BinaryOp::Minimum))
            .needs(crate::Need::DType(DType::Bool)),
        Case::new("elementwise::astype", astype)
            .needs(crate::Need::DType(DType::I32))
            .needs(crate::Need::DType(DType::U8))
            .op(OpCode::Cast)
            .ops_for(DType::I32, &[OpCode::Cast]),
        Case::new("elementwise::incompatible_shapes", incompatible_shapes),
    ]);
    cases
}

/// `op` over shapes that broadcast against each other, with the left
/// operand transposed and the right one reversed (negative strides), so
/// kernels see zero, negative and permuted strides at once; the last pair
/// keeps eight dims after merging, more than kernels hold inline.
fn broadcast_case(ctx: &CaseCtx, op: BinaryOp) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let reference = reference_of(op);
    for (sa, sb) in [
        (vec![3, 1, 4], vec![2, 4]),
        (vec![5], vec![]),
        (vec![2, 3], vec![0, 1, 3]),
        (vec![2, 3, 2, 3, 2, 3, 2, 3], vec![3, 2, 3, 2, 3, 2, 3]),
    ] {
        let va = r::sample(dtype, sa.iter().product(), 1);
        let vb = r::sample(dtype, sb.iter().product(), 2);
        let a = transposed(&va, &sa, dtype, ctx)?;
        let b = reversed(&vb, &sb, dtype, ctx)?;
        let out = r::broadcast_shape(&sa, &sb).expect("compatible shapes");
        let want: Vec<f64> = r::indices(&out)
            .iter()
            .map(|idx| {
                let x = va[r::source_index(&sa, &out, idx)];
                let y = vb[r::source_index(&sb, &out, idx)];
                r::round_to(
                    if op.name() == "less" || op.name() == "equal" {
                        DType::F64
                    } else {
                        dtype
                    },
                    reference(x, y),
                )
            })
            .collect();
        let got = binary(op, &a, &b)?;
        check_eq(format!("{op} device"), ctx.device, got.device())?;
        check_array(&format!("{op}({sa:?}, {sb:?})"), &out, &want, &got)?;
    }
    Ok(())
}

/// `values` (row-major for `shape`) stored transposed and permuted back.
fn transposed(values: &[f64], shape: &[usize], dtype: DType, ctx: &CaseCtx) -> ad::Result<Array> {
    let t_shape: Vec<usize> = shape.iter().rev().copied().collect();
    let stored: Vec<f64> = r::indices(&t_shape)
        .iter()
        .map(|ti| {
            let idx: Vec<usize> = ti.iter().rev().copied().collect();
            values[r::source_index(shape, shape, &idx)]
        })
        .collect();
    let axes: Vec<isize> = (0..shape.len() as isize).rev().collect();
    r::array(&stored, &t_shape, dtype, ctx.device)?.permute_dims(&axes)
}

/// `values` stored reversed and flipped back (negative strides).
fn reversed(values: &[f64], shape: &[usize], dtype: DType, ctx: &CaseCtx) -> ad::Result<Array> {
    let rev: Vec<f64> = values.iter().rev().copied().collect();
    r::array(&rev, shape, dtype, ctx.device)?.flip(ad::ALL)
}

fn unary_special_values(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let values = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        2.25,
        30.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let x = r::array(&values, &[values.len()], dtype, ctx.device)?;
    type Unary = (&'static str, fn(&Array) -> ad::Result<Array>, fn(f64) -> f64);
    let ops: [Unary; 6] = [
        ("exp", ad::exp, f64::exp),
        ("sqrt", ad::sqrt, f64::sqrt),
        ("abs", ad::abs, f64::abs),
        ("floor", ad::floor, f64::floor),
        ("negative", ad::negative, |v| -v),
        ("tanh", ad::tanh, f64::tanh),
    ];
    for (name, op, reference) in ops {
        let want: Vec<f64> = values.iter().map(|&v| r::round_to(dtype, reference(v))).collect();
        check_array(&format!("{name} of special values"), &[values.len()], &want, &op(&x)?)?;
    }
    Ok(())
}

/// `asinh` and `acosh` are finite for every finite input: at the largest
/// finite value a formula through `x + sqrt(x^2 + 1)` overflows. The
/// reference is std's f64 function where it cannot overflow (every f32
/// value) and `ln(2) + ln|x|` above 1e150, where `1/x^2` is far below an
/// f64 ulp.
fn inverse_hyperbolic_extremes(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let max = if dtype == DType::F32 { f32::MAX as f64 } else { f64::MAX };
    let values = [max, -max, max / 3.0, 1e30, 3.0, 1.0 + 1e-6, 1.0, 0.5, 1e-8, -0.0];
    let x = r::array(&values, &[values.len()], dtype, ctx.device)?;
    let stored = x.to_f64_vec()?;
    let ln_2x = |v: f64| v.abs().ln() + std::f64::consts::LN_2;
    let asinh = |v: f64| {
        if v.abs() > 1e150 {
            ln_2x(v).copysign(v)
        } else {
            v.asinh()
        }
    };
    let acosh = |v: f64| if v > 1e150 { ln_2x(v) } else { v.acosh() };
    let want: Vec<f64> = stored.iter().map(|&v| r::round_to(dtype, asinh(v))).collect();
    check_array(
        "asinh near the largest finite values",
        &[values.len()],
        &want,
        &x.asinh()?,
    )?;
    let want: Vec<f64> = stored.iter().map(|&v| r::round_to(dtype, acosh(v))).collect();
    check_array(
        "acosh near the largest finite values",
        &[values.len()],
        &want,
        &x.acosh()?,
    )
}

type Compare = fn(ad::Arg<'_>, ad::Arg<'_>) -> ad::Result<Array>;
type Comparison = (&'static str, Compare, fn(&i128, &i128) -> bool);
/// Two arrays with their values, named by their dtypes.
type Operands<'a> = (&'a str, &'a Array, &'a [i128], &'a Array, &'a [i128]);

/// The six comparisons with their exact reference on `i128` values.
const COMPARISONS: [Comparison; 6] = [
    ("equal", |a, b| ad::equal(a, b), i128::eq),
    ("not_equal", |a, b| ad::not_equal(a, b), i128::ne),
    ("less", |a, b| ad::less(a, b), i128::lt),
    ("less_equal", |a, b| ad::less_equal(a, b), i128::le),
    ("greater", |a, b| ad::greater(a, b), i128::gt),
    ("greater_equal", |a, b| ad::greater_equal(a, b), i128::ge),
];

/// Comparisons of integers are exact whatever the promotion rule for
/// arithmetic (a signed integer with `u64` promotes to `f64`, where
/// 2^63 - 1 and 2^63 are equal), and an integer scalar outside the
/// array's dtype compares as its value. The reference is `i128`.
fn integer_comparisons_are_exact(ctx: &CaseCtx) -> Result<(), Failure> {
    let signed: [i64; 6] = [i64::MAX, -1, 0, 5, i64::MIN, i64::MAX - 1];
    let unsigned: [u64; 6] = [1 << 63, u64::MAX, 0, 5, 0, (1 << 63) - 1];
    let small: [i8; 6] = [-128, -1, 0, 5, 127, 1];
    let s = ad::from_slice(&signed, &[6], ctx.device)?;
    let u = ad::from_slice(&unsigned, &[6], ctx.device)?;
    let i8s = ad::from_slice(&small, &[6], ctx.device)?;
    let wide = |v: &[i64]| v.iter().map(|&x| x as i128).collect::<Vec<_>>();
    let (sv, uv) = (wide(&signed), unsigned.iter().map(|&x| x as i128).collect::<Vec<_>>());
    let i8v = small.iter().map(|&x| x as i128).collect::<Vec<_>>();
    let check_bools = |what: String, want: Vec<bool>, got: Array| {
        crate::case::check_eq(what, want, got.to_vec::<bool>().map_err(Failure::from)?)
    };
    for (name, f, reference) in COMPARISONS {
        let pairs: [Operands; 4] = [
            ("i64, u64", &s, &sv, &u, &uv),
            ("u64, i64", &u, &uv, &s, &sv),
            ("i8, u64", &i8s, &i8v, &u, &uv),
            ("u64, i8", &u, &uv, &i8s, &i8v),
        ];
        for (types, a, av, b, bv) in pairs {
            let want = av.iter().zip(bv).map(|(x, y)| reference(x, y)).collect();
            check_bools(format!("{name}({types})"), want, f(a.into_arg(), b.into_arg())?)?;
        }
        // Scalars beyond the array's dtype, on either side.
        for (what, x, xv, v) in [
            ("u64 array, -1", &u, &uv, -1i128),
            ("i64 array, 2^63", &s, &sv, 1 << 63),
            ("i8 array, 300", &i8s, &i8v, 300),
            ("i8 array, -129", &i8s, &i8v, -129),
        ] {
            let scalar = ad::Weak::Int(v);
            let want = xv.iter().map(|x| reference(x, &v)).collect();
            check_bools(format!("{name}({what})"), want, f(x.into_arg(), scalar.into_arg())?)?;
            let want = xv.iter().map(|x| reference(&v, x)).collect();
            check_bools(
                format!("{name}({what}, swapped)"),
                want,
                f(scalar.into_arg(), x.into_arg())?,
            )?;
        }
    }
    Ok(())
}

/// Integer inputs to float functions compute in the float NumPy's loops
/// pick (docs/semantics.md): f16 for 8-bit, f32 for 16-bit, f64 for wider
/// integers; division and `mean` in the default float, as in NumPy.
fn integer_inputs_to_float_functions(ctx: &CaseCtx) -> Result<(), Failure> {
    let values = [0.0, 1.0, 4.0, 100.0];
    for (int, float) in [
        (DType::I8, DType::F16),
        (DType::U8, DType::F16),
        (DType::I16, DType::F32),
        (DType::I32, DType::F64),
        (DType::U64, DType::F64),
    ] {
        if ctx.runtime.capabilities(ctx.device)?.supports_dtype(int) {
            let x = r::array(&values, &[4], int, ctx.device)?;
            let root = x.sqrt()?;
            crate::case::check_eq(format!("dtype of sqrt({int})"), float, root.dtype())?;
            check_array(&format!("sqrt({int})"), &[4], &[0.0, 1.0, 2.0, 10.0], &root)?;
        }
    }
    let x = r::array(&[1.0, 3.0], &[2], DType::I8, ctx.device)?;
    let quotient = x.divide(&x.add(1)?)?;
    crate::case::check_eq("dtype of divide(i8, i8)", DType::F64, quotient.dtype())?;
    check_array("divide(i8, i8)", &[2], &[0.5, 0.75], &quotient)?;
    crate::case::check_eq("dtype of mean(i8)", DType::F64, x.mean(ad::ALL, false)?.dtype())
}

/// `linspace` into an integer dtype floors (NumPy) and refuses values the
/// dtype cannot hold; `clip` of an integer array refuses float bounds
/// (array-api-strict) instead of truncating them.
fn linspace_and_clip_of_integers(ctx: &CaseCtx) -> Result<(), Failure> {
    let spaced = ad::linspace(-2.5, 2.5, 5, true, (DType::I8, ctx.device))?;
    // -2.5, -1.25, 0, 1.25, 2.5, floored.
    check_array(
        "linspace(-2.5, 2.5, 5) as i8",
        &[5],
        &[-3.0, -2.0, 0.0, 1.0, 2.0],
        &spaced,
    )?;
    expect_err(
        "linspace(0, 300, 3) as i8",
        "InvalidArgument",
        ad::linspace(0.0, 300.0, 3, true, (DType::I8, ctx.device)),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    let x = r::array(&[-5.0, 20.0, 100.0], &[3], DType::I8, ctx.device)?;
    expect_err("clip(i8, 1.5, 50.5)", "InvalidDType", x.clip(1.5, 50.5), |e| {
        matches!(e, Error::InvalidDType { .. })
    })?;
    check_array("clip(i8, 1, 50)", &[3], &[1.0, 20.0, 50.0], &x.clip(1, 50)?)
}

/// What saturating a bound dispatches: both comparisons, then a cast.
const ORDER_AND_CAST: [OpCode; 3] = [
    OpCode::Binary(BinaryOp::Maximum),
    OpCode::Binary(BinaryOp::Minimum),
    OpCode::Cast,
];

/// `clip` of an integer array by integer bounds of other dtypes: a bound
/// beyond the array's range saturates, an array bound as a scalar one
/// does, rather than wrapping when the result narrows back (an `i16` 1000
/// for `i8`) or rounding in `f64` (`i64` with `u64`, which promote there).
fn clip_saturates_integer_bounds(ctx: &CaseCtx) -> Result<(), Failure> {
    let dev = ctx.device;
    let x = Array::from_slice(&[1i8, 50, -100], &[3], dev)?;
    let low = Array::from_slice(&[1000i16, -1000, 5], &[3], dev)?;
    check_eq(
        "clip(i8, min=i16 [1000, -1000, 5])",
        vec![127i8, 50, 5],
        x.clip(&low, ())?.to_vec::<i8>()?,
    )?;
    let x = Array::from_slice(&[200u8, 3], &[2], dev)?;
    let high = Array::from_slice(&[-1i8, 100], &[2], dev)?;
    check_eq(
        "clip(u8, max=i8 [-1, 100])",
        vec![0u8, 3],
        x.clip((), &high)?.to_vec::<u8>()?,
    )?;
    let big = (1i64 << 62) + 1;
    let x = Array::from_slice(&[big, -5], &[2], dev)?;
    let low = Array::from_slice(&[0u64, 1 << 63], &[2], dev)?;
    check_eq(
        "clip(i64, min=u64 [0, 2^63])",
        vec![big, i64::MAX],
        x.clip(&low, ())?.to_vec::<i64>()?,
    )?;
    let x = Array::from_slice(&[u64::MAX - 1, 7], &[2], dev)?;
    let high = Array::from_slice(&[-1i64, i64::MAX], &[2], dev)?;
    check_eq(
        "clip(u64, max=i64 [-1, MAX])",
        vec![0u64, 7],
        x.clip((), &high)?.to_vec::<u64>()?,
    )?;
    // Scalar bounds beyond i64: no bound above, i64::MAX below.
    let x = Array::from_slice(&[big, 5], &[2], dev)?;
    check_eq(
        "clip(i64, max=u64::MAX)",
        vec![big, 5],
        x.clip((), u64::MAX)?.to_vec::<i64>()?,
    )?;
    check_eq(
        "clip(i64, min=2^63)",
        vec![i64::MAX; 2],
        x.clip(1u64 << 63, ())?.to_vec::<i64>()?,
    )
}

fn scalar_operands(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let x = r::array(&[1.0, 2.0, 4.0], &[3], dtype, ctx.device)?;
    check_array("10 - x", &[3], &[9.0, 8.0, 6.0], &ad::subtract(10, &x)?)?;
    check_array("x * 3", &[3], &[3.0, 6.0, 12.0], &x.multiply(3)?)?;
    check_eq("dtype of x * 3", dtype, x.multiply(3)?.dtype())?;
    let s = r::array(&[3.0], &[], dtype, ctx.device)?;
    check_array("x * 0-d array", &[3], &[3.0, 6.0, 12.0], &x.multiply(&s)?)?;
    let empty = r::array(&[], &[0, 3], dtype, ctx.device)?;
    check_array("empty * x", &[0, 3], &[], &empty.multiply(&x)?)
}

fn integer_wrapping(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    // Operands, then the expected sum, floor quotient and remainder.
    let [a, b, sum, fdiv, rem]: [Vec<f64>; 5] = match dtype {
        DType::I32 => {
            let (max, min) = (i32::MAX as f64, i32::MIN as f64);
            [
                vec![max, min, -7.0, 7.0, 5.0],
                vec![1.0, -1.0, 3.0, -3.0, 0.0],
                vec![min, max, -4.0, 4.0, 5.0],
                // floor division rounds down; by zero gives 0
                vec![max, min, -3.0, -3.0, 0.0],
                // the remainder takes the divisor's sign; by zero gives 0
                vec![0.0, 0.0, 2.0, -2.0, 0.0],
            ]
        }
        _ => [
            vec![255.0, 0.0, 7.0, 200.0, 5.0],
            vec![1.0, 0.0, 3.0, 100.0, 0.0],
            vec![0.0, 0.0, 10.0, 44.0, 5.0],
            vec![255.0, 0.0, 2.0, 2.0, 0.0],
            vec![0.0, 0.0, 1.0, 0.0, 0.0],
        ],
    };
    let x = r::array(&a, &[5], dtype, ctx.device)?;
    let y = r::array(&b, &[5], dtype, ctx.device)?;
    check_array("add wraps", &[5], &sum, &x.add(&y)?)?;
    check_array("floor_divide", &[5], &fdiv, &x.floor_divide(&y)?)?;
    check_array("remainder", &[5], &rem, &x.remainder(&y)?)
}

/// Integer `pow`: wrap-around past the dtype's width, and a negative
/// exponent as `1/a^|b|` truncated toward zero (only 1 and -1 have nonzero
/// results; 0 gives 0, as integer division by zero does).
fn integer_powers(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let bits = 8 * dtype.size() as i32;
    let pairs: [(i32, i32); 12] = [
        (1, -5),
        (-1, -3),
        (-1, -4),
        (-1, -1),
        (2, -1),
        (-2, -1),
        (0, -2),
        (5, -7),
        (-3, 3),
        (7, 0),
        (2, bits - 1),
        (2, bits),
    ];
    let reference = |(a, b): (i32, i32)| -> f64 {
        if b >= 0 {
            // 2^(bits-1) wraps to the dtype's minimum and 2^bits to 0.
            let (exact, half) = ((a as f64).powi(b), 2f64.powi(bits - 1));
            if (-half..half).contains(&exact) {
                return exact;
            }
            let wrapped = exact.rem_euclid(2.0 * half);
            if wrapped >= half {
                wrapped - 2.0 * half
            } else {
                wrapped
            }
        } else if a == 0 {
            0.0
        } else {
            (1.0 / (a as f64).powi(-b)).trunc()
        }
    };
    let n = pairs.len();
    let bases: Vec<f64> = pairs.iter().map(|p| p.0 as f64).collect();
    let exponents: Vec<f64> = pairs.iter().map(|p| p.1 as f64).collect();
    let want: Vec<f64> = pairs.iter().map(|&p| reference(p)).collect();
    let x = r::array(&bases, &[n], dtype, ctx.device)?;
    let y = r::array(&exponents, &[n], dtype, ctx.device)?;
    check_array("pow", &[n], &want, &ad::pow(&x, &y)?)
}

fn float_semantics(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let x = r::array(&[0.5, 1.5, 2.5, -0.5, -1.5, f64::NAN], &[6], dtype, ctx.device)?;
    let rounded = x.round()?.to_f64_vec()?;
    check_close(
        "round half to even",
        dtype,
        &[0.0, 2.0, 2.0, -0.0, -2.0, f64::NAN],
        &rounded,
    )?;
    crate::case::check(rounded[3].is_sign_negative(), "round(-0.5)", "-0", rounded[3])?;
    check_array("isnan", &[6], &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0], &x.isnan()?)?;
    let m = r::array(&[-7.5, 7.5], &[2], dtype, ctx.device)?;
    check_array("remainder by 2", &[2], &[0.5, 1.5], &m.remainder(2.0)?)?;
    check_array("remainder by -2", &[2], &[-1.5, -0.5], &m.remainder(-2.0)?)
}

fn where_and_clip(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0, -2.0, f64::NAN, 5.0], &[4], DType::F32, ctx.device)?;
    let positive = x.greater(0.0)?;
    check_array(
        "where(x > 0, x, 0)",
        &[4],
        &[1.0, 0.0, 0.0, 5.0],
        &ad::where_(&positive, &x, 0.0)?,
    )?;
    check_array("clip(x, -1, 2)", &[4], &[1.0, -1.0, f64::NAN, 2.0], &x.clip(-1.0, 2.0)?)?;
    // Bounds broadcast with x: the result takes their common shape.
    let lows = r::array(&[0.0, 3.0], &[2, 1], DType::F32, ctx.device)?;
    check_array(
        "clip(x, [[0], [3]])",
        &[2, 4],
        &[1.0, 0.0, f64::NAN, 5.0, 3.0, 3.0, f64::NAN, 5.0],
        &x.clip(&lows, ())?,
    )?;
    let bad = r::array(&[0.0; 3], &[3], DType::F32, ctx.device)?;
    expect_err(
        "clip with a bound of another shape",
        "ShapeMismatch",
        x.clip(&bad, ()),
        |e| matches!(e, Error::ShapeMismatch { .. }),
    )?;
    Ok(())
}

fn astype(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[-1.75, 2.75, 300.0, -1.0], &[4], DType::F32, ctx.device)?;
    check_array(
        "f32 -> i32 truncates",
        &[4],
        &[-1.0, 2.0, 300.0, -1.0],
        &x.astype(DType::I32)?,
    )?;
    let i = x.astype(DType::I32)?;
    check_array(
        "i32 -> u8 wraps",
        &[4],
        &[255.0, 2.0, 44.0, 255.0],
        &i.astype(DType::U8)?,
    )?;
    check_eq(
        "astype to the same dtype shares the buffer",
        true,
        i.astype(DType::I32)?.shares_buffer(&i),
    )
}

fn incompatible_shapes(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[0.0; 6], &[2, 3], DType::F32, ctx.device)?;
    let y = r::array(&[0.0; 8], &[2, 4], DType::F32, ctx.device)?;
    let e = expect_err("add([2,3], [2,4])", "ShapeMismatch", ad::add(&x, &y), |e| {
        matches!(e, Error::ShapeMismatch { .. })
    })?;
    let text = e.to_string();
    crate::case::check(
        text.contains("[2, 3]") && text.contains("[2, 4]"),
        "the error names both shapes",
        "[2, 3] and [2, 4] in the message",
        text,
    )
}
