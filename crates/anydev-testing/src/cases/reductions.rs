//! Reductions over every subset of axes, arg-reductions, scans, integer
//! accumulation, empty and bad-axis cases.

use crate::case::{check, expect_err, Case, CaseCtx, Failure};
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp, ScanOp, UnaryOp};
use anydev_core::{DType, Error};

type Reduce = fn(&Array, Vec<isize>) -> ad::Result<Array>;
type Sample = fn(DType, usize, u64) -> Vec<f64>;

/// Values near 1 (`r::sample`'s scaled into [0.875, 1.125)), whose
/// products over a few hundred elements stay finite in f32.
fn near_one(dtype: DType, n: usize, seed: u64) -> Vec<f64> {
    let values = r::sample(dtype, n, seed).into_iter();
    values.map(|v| r::round_to(dtype, 1.0 + v / 64.0)).collect()
}

/// The reduced shape and values of `values` (row-major, `shape`) over `axes`.
fn reduce_ref(values: &[f64], shape: &[usize], axes: &[usize], f: fn(&[f64]) -> f64) -> (Vec<usize>, Vec<f64>) {
    let out: Vec<usize> = (0..shape.len())
        .filter(|d| !axes.contains(d))
        .map(|d| shape[d])
        .collect();
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); out.iter().product()];
    for (flat, idx) in r::indices(shape).iter().enumerate() {
        let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).map(|d| idx[d]).collect();
        let pos = kept.iter().zip(&out).fold(0, |acc, (&i, &n)| acc * n + i);
        groups[pos].push(values[flat]);
    }
    (out, groups.iter().map(|g| f(g)).collect())
}

fn max_of(g: &[f64]) -> f64 {
    g.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `op` over every subset of the axes of a [2, 3, 4] and a [3, 5, 17]
/// array and of a permuted view of the latter, against plain loops. The
/// larger ones reduce non-adjacent axes whose innermost has 16 or more
/// elements, which a backend may take in passes. `sample` draws the
/// values (`r::sample`'s signature). Over no axes the result is the view
/// itself, which reading back copies: cases using this declare `copy`.
fn over_all_axes(ctx: &CaseCtx, name: &str, op: Reduce, f: fn(&[f64]) -> f64, sample: Sample) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    for (seed, shape) in [[2, 3, 4], [3, 5, 17]].into_iter().enumerate() {
        let values = sample(dtype, shape.iter().product(), 7 + seed as u64);
        let x = r::array(&values, &shape, dtype, ctx.device)?;
        all_subsets(name, op, f, dtype, &x, &shape, &values)?;
    }
    // [17, 3, 5]: axis 0 of the view is the innermost in memory.
    let shape = [3, 5, 17];
    let values = sample(dtype, 255, 9);
    let view = r::array(&values, &shape, dtype, ctx.device)?.permute_dims(&[2, 0, 1])?;
    let view_shape = [17, 3, 5];
    let view_values: Vec<f64> = r::indices(&view_shape)
        .iter()
        .map(|i| values[(i[1] * 5 + i[2]) * 17 + i[0]])
        .collect();
    all_subsets(name, op, f, dtype, &view, &view_shape, &view_values)
}

/// `op` of `x` (`values` in row-major order over `shape`) over every
/// subset of its axes, against `f` of each group of values.
fn all_subsets(
    name: &str,
    op: Reduce,
    f: fn(&[f64]) -> f64,
    dtype: DType,
    x: &Array,
    shape: &[usize; 3],
    values: &[f64],
) -> Result<(), Failure> {
    for mask in 0u32..8 {
        let axes: Vec<usize> = (0..3).filter(|d| mask & (1 << d) != 0).collect();
        let (out, want) = reduce_ref(values, shape, &axes, f);
        let want: Vec<f64> = want.into_iter().map(|v| r::round_to(dtype, v)).collect();
        let iaxes: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
        let what = format!("{name} over axes {axes:?} of {shape:?}");
        check_array(&what, &out, &want, &op(x, iaxes)?)?;
    }
    Ok(())
}

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("reductions::sum_axes", |c| {
            over_all_axes(c, "sum", |x, a| ad::sum(x, a, false), |g| g.iter().sum(), r::sample)
        })
        .dtypes(&[DType::F16, DType::F32, DType::F64, DType::I64])
        .op(OpCode::Reduce(ReduceOp::Sum))
        .op(OpCode::Copy),
        Case::new("reductions::max_axes", |c| {
            over_all_axes(c, "max", |x, a| ad::max(x, a, false), max_of, r::sample)
        })
        .dtypes(&[DType::F32, DType::F64, DType::I32, DType::U8])
        .op(OpCode::Reduce(ReduceOp::Max))
        .op(OpCode::Copy),
        Case::new("reductions::prod_axes", |c| {
            over_all_axes(
                c,
                "prod",
                |x, a| ad::prod(x, a, false),
                |g| g.iter().product(),
                near_one,
            )
        })
        .dtypes(&[DType::F32, DType::F64])
        .op(OpCode::Reduce(ReduceOp::Prod))
        .op(OpCode::Copy),
        Case::new("reductions::mean_axes", |c| {
            over_all_axes(
                c,
                "mean",
                |x, a| ad::mean(x, a, false),
                |g| g.iter().sum::<f64>() / g.len() as f64,
                r::sample,
            )
        })
        .dtypes(&[DType::F32, DType::F64])
        .op(OpCode::Reduce(ReduceOp::Sum))
        .op(OpCode::Binary(BinaryOp::Divide)),
        Case::new("reductions::half_statistics_widen", half_statistics_widen)
            .dtypes(&[DType::F16, DType::BF16])
            .op(OpCode::Reduce(ReduceOp::Sum))
            .op(OpCode::Reduce(ReduceOp::Max))
            .op(OpCode::Fill)
            .op(OpCode::Cast)
            .needs(crate::Need::DType(DType::Bool))
            .ops_for(
                DType::F32,
                &[
                    OpCode::Reduce(ReduceOp::Sum),
                    OpCode::Reduce(ReduceOp::Max),
                    OpCode::Cast,
                    OpCode::Where,
                    OpCode::Unary(UnaryOp::Exp),
                    OpCode::Unary(UnaryOp::Log),
                    OpCode::Unary(UnaryOp::IsFinite),
                    OpCode::Unary(UnaryOp::Square),
                    OpCode::Unary(UnaryOp::Sqrt),
                    OpCode::Binary(BinaryOp::Add),
                    OpCode::Binary(BinaryOp::Subtract),
                    OpCode::Binary(BinaryOp::Divide),
                ],
            ),
        Case::new("reductions::argmax_and_cumsum", argmax_and_cumsum)
            .dtypes(&[DType::F32, DType::I32])
            .op(OpCode::Reduce(ReduceOp::ArgMax))
            .op(OpCode::Scan(ScanOp::CumulativeSum))
            .op(OpCode::Cast)
            .ops_for(DType::I64, &[OpCode::Scan(ScanOp::CumulativeSum)]),
        Case::new("reductions::integer_sums_widen", integer_sums_widen)
            .needs(crate::Need::DType(DType::I8))
            .op(OpCode::Reduce(ReduceOp::Sum))
            .needs(crate::Need::Op(OpCode::Reduce(ReduceOp::Sum), Some(DType::I64)))
            .needs(crate::Need::Op(OpCode::Cast, Some(DType::I8))),
        Case::new("reductions::empty_and_zero_d", empty_and_zero_d)
            .op(OpCode::Reduce(ReduceOp::Sum))
            .op(OpCode::Reduce(ReduceOp::Max)),
        Case::new("reductions::bad_axes", bad_axes),
        Case::new(
            "reductions::rows_and_columns_of_many_lengths",
            rows_and_columns_of_many_lengths,
        )
        .dtypes(&[DType::F32, DType::I32])
        .op(OpCode::Reduce(ReduceOp::Sum))
        .op(OpCode::Reduce(ReduceOp::Max))
        .op(OpCode::Reduce(ReduceOp::ArgMin))
        // argmin gives int64; int32 sums widen to int64 first.
        .needs(crate::Need::DType(DType::I64))
        .op(OpCode::Cast)
        .ops_for(DType::I64, &[OpCode::Reduce(ReduceOp::Sum)]),
        Case::new("reductions::long_sums_stay_accurate", long_sums_stay_accurate)
            .dtypes(&[DType::F32])
            .op(OpCode::Fill)
            .op(OpCode::Reduce(ReduceOp::Sum)),
    ]
}

/// Sums of 2^20 + 3 copies of 0.1f32, whole, by columns and over a
/// strided view, within 5e-7 of the exact sum of what is stored, as
/// pairwise (NumPy) or tree (GPU) summation gives. Values added one after
/// another are off by about 1e-2 at this length.
fn long_sums_stay_accurate(ctx: &CaseCtx) -> Result<(), Failure> {
    let tenth = 0.1f32 as f64;
    let n = (1 << 20) + 3;
    let flat = ad::full(&[n], tenth, (DType::F32, ctx.device))?;
    let columns = ad::full(&[1 << 16, 16], tenth, (DType::F32, ctx.device))?;
    let sums = [
        ("sum of the whole", flat.sum(ad::ALL, false)?, n),
        ("sum over axis 0 of [65536, 16]", columns.sum(0isize, false)?, 1 << 16),
        (
            "sum over axis 1 of its transpose",
            columns.permute_dims(&[1, 0])?.sum(1isize, false)?,
            1 << 16,
        ),
    ];
    for (what, sum, count) in sums {
        let exact = tenth * count as f64;
        for got in sum.to_f64_vec()? {
            let error = (got - exact).abs() / exact;
            check(
                error <= 5e-7,
                what,
                format!("{exact} within 5e-7"),
                format!("{got} ({error:.1e} off)"),
            )?;
        }
    }
    Ok(())
}

/// Sums, maxima and first minima along the rows or columns of matrices
/// whose shapes pick each of a GPU backend's reduction kernels: a thread
/// per output, its column whole or split into parts; a warp per output; a
/// block per output, whole or split. The values are small integers
/// (exact sums in f32 in any order) repeating every 23, so each minimum
/// ties and the first index must win wherever the line was split.
fn rows_and_columns_of_many_lengths(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let value = |i: usize| ((i * 37) % 23) as i64 - 11;
    let shapes = [
        (300, 1030, 0),
        (1100, 1024, 0),
        (40_000, 3, 0),
        (2000, 70, 1),
        (1100, 1000, 1),
        (3, 40_000, 1),
    ];
    for (rows, cols, axis) in shapes {
        let values: Vec<f64> = (0..rows * cols).map(|i| value(i) as f64).collect();
        let x = r::array(&values, &[rows, cols], dtype, ctx.device)?;
        let (outputs, length) = if axis == 0 { (cols, rows) } else { (rows, cols) };
        let (mut sum, mut max, mut argmin) = (vec![], vec![], vec![]);
        for o in 0..outputs {
            let line: Vec<i64> = (0..length)
                .map(|k| value(if axis == 0 { k * cols + o } else { o * cols + k }))
                .collect();
            let lowest = line.iter().min().copied().unwrap_or_default();
            sum.push(line.iter().sum::<i64>() as f64);
            max.push(line.iter().max().copied().unwrap_or_default() as f64);
            argmin.push(line.iter().position(|&v| v == lowest).unwrap_or_default() as f64);
        }
        let what = |op: &str| format!("{op} over axis {axis} of [{rows}, {cols}]");
        let axis = axis as isize;
        check_array(&what("sum"), &[outputs], &sum, &x.sum(axis, false)?)?;
        check_array(&what("max"), &[outputs], &max, &x.max(axis, false)?)?;
        check_array(&what("argmin"), &[outputs], &argmin, &x.argmin(Some(axis), false)?)?;
    }
    Ok(())
}

fn argmax_and_cumsum(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    // Ties go to the first occurrence.
    let values = [1.0, 5.0, 5.0, -2.0, 0.0, 7.0, 7.0, 3.0];
    let x = r::array(&values, &[2, 4], dtype, ctx.device)?;
    check_array("argmax along axis 1", &[2], &[1.0, 1.0], &x.argmax(Some(1), false)?)?;
    check_array("argmax flattened", &[], &[5.0], &x.argmax(None, false)?)?;
    check_array(
        "cumulative_sum along axis 1",
        &[2, 4],
        &[1.0, 6.0, 11.0, 9.0, 0.0, 7.0, 14.0, 17.0],
        &ad::cumulative_sum(&x, Some(1), false)?,
    )
}

/// `mean`, `var`, `std` and `logsumexp` of f16 and bf16 compute in f32:
/// a count or a sum above f16's largest value (65,504) must not become
/// infinite before the division. Every expected value is exact in both
/// dtypes, so the reference is plain arithmetic.
fn half_statistics_widen(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let n = 70_000;
    let halves = ad::full(&[n], 0.5, (dtype, ctx.device))?;
    check_array("mean of 70,000 x 0.5", &[], &[0.5], &halves.mean(ad::ALL, false)?)?;
    check_array("var of 70,000 x 0.5", &[], &[0.0], &halves.var(ad::ALL, 0.0, false)?)?;
    let ones = ad::full(&[2, n / 2], 1.0, (dtype, ctx.device))?;
    check_array("mean of 2 x 35,000 ones", &[], &[1.0], &ones.mean(ad::ALL, false)?)?;
    let big = r::array(&[60_000.0, 60_000.0, 0.0, 0.0], &[4], dtype, ctx.device)?;
    let mean = big.mean(ad::ALL, false)?;
    crate::case::check_eq("dtype of mean(f16/bf16)", dtype, mean.dtype())?;
    let stored = big.to_f64_vec()?[0];
    check_array("mean of [6e4, 6e4, 0, 0]", &[], &[stored / 2.0], &mean)?;
    check_array(
        "std of [6e4, 6e4, 0, 0]",
        &[],
        &[stored / 2.0],
        &big.std(ad::ALL, 0.0, false)?,
    )?;
    let zeros = ad::full(&[n], 0.0, (dtype, ctx.device))?;
    let want = r::round_to(dtype, (n as f64).ln());
    check_array(
        "logsumexp of 70,000 zeros",
        &[],
        &[want],
        &zeros.logsumexp(ad::ALL, false)?,
    )
}

fn integer_sums_widen(ctx: &CaseCtx) -> Result<(), Failure> {
    // The standard: sum of a small signed integer dtype accumulates in the
    // default integer dtype, so 100 * 100 does not wrap in i8.
    let x = r::array(&[100.0; 100], &[100], DType::I8, ctx.device)?;
    let s = ad::sum(&x, ad::ALL, false)?;
    crate::case::check_eq("dtype of sum(i8)", DType::I64, s.dtype())?;
    check_array("sum of 100 x 100i8", &[], &[10_000.0], &s)
}

fn empty_and_zero_d(ctx: &CaseCtx) -> Result<(), Failure> {
    let empty = r::array(&[], &[0, 3], DType::F32, ctx.device)?;
    check_array(
        "sum over an empty axis",
        &[3],
        &[0.0; 3],
        &ad::sum(&empty, 0isize, false)?,
    )?;
    expect_err(
        "max over an empty axis",
        "an error",
        ad::max(&empty, 0isize, false),
        |_| true,
    )?;
    let z = r::array(&[4.5], &[], DType::F32, ctx.device)?;
    check_array("sum of a 0-d array", &[], &[4.5], &ad::sum(&z, ad::ALL, false)?)?;
    let kept = ad::sum(&r::array(&[1.0; 6], &[2, 3], DType::F32, ctx.device)?, 1isize, true)?;
    check_array("keepdims", &[2, 1], &[3.0, 3.0], &kept)
}

fn bad_axes(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0; 6], &[2, 3], DType::F32, ctx.device)?;
    for axes in [vec![2isize], vec![-3], vec![0, 0]] {
        let e = expect_err(
            format!("sum over axes {axes:?}"),
            "an error",
            ad::sum(&x, axes.clone(), false),
            |e| !matches!(e, Error::Unsupported { .. }),
        )?;
        check(!e.to_string().is_empty(), "the error has a message", "text", "empty")?;
    }
    Ok(())
}
