//! Sizes around the limits a backend has: more elements along an axis or
//! more rows than one kernel launch, one invocation's loops or one
//! workgroup grid dimension covers (65,535 workgroups; 65,535 x 256
//! threads; llvmpipe's 65,535 loop iterations per invocation), checked
//! against exact host references (running sums in exact integers or f64,
//! std's stable sort, a `BTreeSet`).

use crate::case::{Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, Order};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp, ScanOp};
use anydev_core::DType;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Lengths on both sides of 65,535 workgroups and of 2^16 elements.
pub const LONG: &[usize] = &[65_531, 65_532, 65_536, 100_003];

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("limits::cumulative_sum_of_long_axes", cumulative_sum_of_long_axes)
            .dtypes(&[DType::I32, DType::F64])
            .op(OpCode::Scan(ScanOp::CumulativeSum))
            .op(OpCode::Cast)
            .op(OpCode::Copy)
            .ops_for(DType::I64, &[OpCode::Scan(ScanOp::CumulativeSum), OpCode::Copy]),
        Case::new("limits::cumulative_prod_of_long_axes", cumulative_prod_of_long_axes)
            .dtypes(&[DType::I32, DType::F32])
            .op(OpCode::Scan(ScanOp::CumulativeProd))
            .op(OpCode::Cast)
            .op(OpCode::Copy)
            .ops_for(DType::I64, &[OpCode::Scan(ScanOp::CumulativeProd), OpCode::Copy]),
        Case::new(
            "limits::search_and_take_along_long_axes",
            search_and_take_along_long_axes,
        )
        .dtypes(&[DType::I32, DType::F32])
        .op(OpCode::SearchSorted)
        .op(OpCode::Take)
        .needs(Need::DType(DType::I64))
        .ops_for(DType::I64, super::search::TAKE_RANGE_CHECK),
        Case::new("limits::sort_and_argsort_of_long_axes", sort_and_argsort_of_long_axes)
            .dtypes(&[DType::I32, DType::F32])
            .op(OpCode::Sort)
            .op(OpCode::Argsort)
            .op(OpCode::Copy)
            .needs(Need::DType(DType::I64)),
        Case::new("limits::unique_values_of_long_arrays", unique_values_of_long_arrays)
            .dtypes(&[DType::I32, DType::F32])
            .op(OpCode::Sort)
            .op(OpCode::Nonzero)
            .op(OpCode::Take)
            .op(OpCode::Binary(BinaryOp::NotEqual))
            .counts_nonzero()
            .ops_for(DType::I64, &[OpCode::Reduce(ReduceOp::Sum)])
            .ops_for(
                DType::Bool,
                &[OpCode::Cast, OpCode::Copy, OpCode::Fill, OpCode::Nonzero],
            ),
        Case::new("limits::long_and_many_reductions", long_and_many_reductions)
            .dtypes(&[DType::I32, DType::F32])
            .op(OpCode::Reduce(ReduceOp::Sum))
            .op(OpCode::Reduce(ReduceOp::Max))
            .op(OpCode::Reduce(ReduceOp::ArgMax))
            .op(OpCode::Reduce(ReduceOp::ArgMin))
            .op(OpCode::Cast)
            .ops_for(DType::I64, &[OpCode::Reduce(ReduceOp::Sum)]),
        Case::new("limits::nonzero_of_long_arrays", nonzero_of_long_arrays)
            .dtypes(&[DType::I32, DType::U8])
            .op(OpCode::Nonzero)
            .op(OpCode::Cast)
            .counts_nonzero()
            .ops_for(DType::I64, &[OpCode::Reduce(ReduceOp::Sum), OpCode::Copy])
            .ops_for(DType::Bool, &[OpCode::Cast]),
        // One dtype each: a k of 2^20 in one workgroup, and 65,537
        // workgroups of 256 threads, take seconds on llvmpipe.
        Case::new("limits::matmul_along_a_long_k", matmul_along_a_long_k)
            .dtypes(&[DType::I32])
            .op(OpCode::Matmul),
        Case::new("limits::matmul_of_many_matrices", matmul_of_many_matrices)
            .dtypes(&[DType::I32])
            .op(OpCode::Matmul),
        Case::new("limits::f64_to_half_rounds_once", f64_to_half_rounds_once)
            .dtypes(&[DType::F16, DType::BF16])
            .needs(Need::F64)
            .op(OpCode::Cast)
            .ops_for(DType::F64, &[OpCode::Cast]),
    ]
}

/// Values that sum exactly in f64 and in i64, so the reference is exact.
fn values(n: usize, seed: u64) -> Vec<f64> {
    r::sample(DType::I32, n, seed)
}

/// Running sums along the last axis of `rows` lines of `len` values.
fn running_sums(x: &[f64], len: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for line in x.chunks(len) {
        let mut acc = 0.0;
        out.extend(line.iter().map(|v| {
            acc += v;
            acc
        }));
    }
    out
}

fn cumulative_sum_of_long_axes(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    for &len in LONG {
        let x = values(len, len as u64);
        let a = r::array(&x, &[len], dtype, ctx.device)?;
        check_array(
            &format!("cumulative_sum of {len} elements"),
            &[len],
            &running_sums(&x, len),
            &ad::cumulative_sum(&a, None, false)?,
        )?;
    }
    // Three rows of a long axis, scanned along the rows and, transposed,
    // along a strided axis.
    let len = 70_001;
    let x = values(3 * len, 7);
    let a = r::array(&x, &[3, len], dtype, ctx.device)?;
    let want = running_sums(&x, len);
    check_array(
        "cumulative_sum along 3 rows of 70001",
        &[3, len],
        &want,
        &ad::cumulative_sum(&a, Some(1), false)?,
    )?;
    let t = a.permute_dims(&[1, 0])?;
    let got = ad::cumulative_sum(&t, Some(0), false)?.permute_dims(&[1, 0])?;
    check_array("cumulative_sum along a strided axis of 70001", &[3, len], &want, &got)
}

/// Running products of signs (exact at any length) along long axes,
/// rows and a strided axis, with a zero late in the last row.
fn cumulative_prod_of_long_axes(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let (rows, len) = (3, 100_003);
    let mut x: Vec<f64> = values(rows * len, 13)
        .iter()
        .map(|v| if *v < 0.0 { -1.0 } else { 1.0 })
        .collect();
    x[2 * len + 70_000] = 0.0;
    let mut want = Vec::with_capacity(x.len());
    for line in x.chunks(len) {
        let mut acc = 1.0;
        want.extend(line.iter().map(|v| {
            acc *= v;
            acc
        }));
    }
    let a = r::array(&x, &[rows, len], dtype, ctx.device)?;
    check_array(
        "cumulative_prod along 3 rows of 100003",
        &[rows, len],
        &want,
        &ad::cumulative_prod(&a, Some(1), false)?,
    )?;
    let t = a.permute_dims(&[1, 0])?;
    let got = ad::cumulative_prod(&t, Some(0), false)?.permute_dims(&[1, 0])?;
    check_array(
        "cumulative_prod along a strided axis of 100003",
        &[rows, len],
        &want,
        &got,
    )
}

/// `searchsorted` of 70,001 queries into 100,003 sorted values with ties,
/// and `take` of 100,003 indices along the long axis of three rows; both
/// are one thread per result, with no loop that grows past ~17 steps.
fn search_and_take_along_long_axes(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let n = 100_003;
    // Each value k appears k % 3 times: ties and gaps.
    let sorted: Vec<f64> = (0..)
        .flat_map(|k: u32| std::iter::repeat_n(k as f64, k as usize % 3))
        .take(n)
        .collect();
    let queries: Vec<f64> = (0..70_001u64).map(|i| (i * 7_919 % 75_000) as f64).collect();
    let s = r::array(&sorted, &[n], dtype, ctx.device)?;
    let q = r::array(&queries, &[queries.len()], dtype, ctx.device)?;
    for side in [ad::Side::Left, ad::Side::Right] {
        let want: Vec<f64> = queries
            .iter()
            .map(|&v| sorted.partition_point(|&e| if side == ad::Side::Left { e < v } else { e <= v }) as f64)
            .collect();
        check_array(
            &format!("searchsorted {side:?} into {n}"),
            &[queries.len()],
            &want,
            &ad::searchsorted(&s, &q, side)?,
        )?;
    }
    let x = values(3 * n, 17);
    let a = r::array(&x, &[3, n], dtype, ctx.device)?;
    let idx: Vec<f64> = (0..n as u64).map(|i| (i * 48_271 % n as u64) as f64).collect();
    let i = r::array(&idx, &[n], DType::I64, ctx.device)?;
    let want: Vec<f64> = (0..3)
        .flat_map(|row| idx.iter().map(move |&j| (row, j as usize)))
        .map(|(row, j)| x[row * n + j])
        .collect();
    check_array(
        &format!("take of {n} along the long axis"),
        &[3, n],
        &want,
        &a.take(&i, Some(1))?,
    )
}

/// The sort order of the array API: ascending with NaNs last, or
/// descending with NaNs first.
fn order(a: f64, b: f64, descending: bool) -> Ordering {
    let up = match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    };
    if descending {
        up.reverse()
    } else {
        up
    }
}

/// Stable argsort of every line of `len` values, as positions in the line.
fn host_argsort(x: &[f64], len: usize, descending: bool) -> Vec<f64> {
    x.chunks(len)
        .flat_map(|line| {
            let mut idx: Vec<usize> = (0..len).collect();
            idx.sort_by(|&a, &b| order(line[a], line[b], descending));
            idx.into_iter().map(|i| i as f64)
        })
        .collect()
}

/// `x` permuted line by line by `positions`.
fn gather(x: &[f64], len: usize, positions: &[f64]) -> Vec<f64> {
    positions
        .iter()
        .enumerate()
        .map(|(e, &p)| x[e / len * len + p as usize])
        .collect()
}

/// Sample values with many ties (for stability) and, for floats, a NaN
/// every 997 elements.
fn with_nans(dtype: DType, n: usize, seed: u64) -> Vec<f64> {
    let mut x = values(n, seed);
    if dtype.is_float() {
        x.iter_mut().step_by(997).for_each(|v| *v = f64::NAN);
    }
    x
}

fn sort_and_argsort_of_long_axes(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    for &len in LONG {
        let x = with_nans(dtype, len, len as u64);
        let a = r::array(&x, &[len], dtype, ctx.device)?;
        let want = host_argsort(&x, len, false);
        check_array(
            &format!("argsort of {len} elements"),
            &[len],
            &want,
            &a.argsort(0, Order::Ascending)?,
        )?;
        check_array(
            &format!("sort of {len} elements"),
            &[len],
            &gather(&x, len, &want),
            &a.sort(0, Order::Ascending)?,
        )?;
    }
    // Three rows of a long axis, descending, along the rows and, transposed,
    // along a strided axis.
    let len = 70_001;
    let x = with_nans(dtype, 3 * len, 11);
    let a = r::array(&x, &[3, len], dtype, ctx.device)?;
    let want = host_argsort(&x, len, true);
    check_array(
        "descending argsort along 3 rows of 70001",
        &[3, len],
        &want,
        &a.argsort(1, Order::Descending)?,
    )?;
    let t = a.permute_dims(&[1, 0])?;
    let got = t.sort(0, Order::Descending)?.permute_dims(&[1, 0])?;
    check_array(
        "descending sort along a strided axis of 70001",
        &[3, len],
        &gather(&x, len, &want),
        &got,
    )
}

fn unique_values_of_long_arrays(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    for &n in LONG {
        // Integers below 2^16 that f32 holds exactly, most of them distinct.
        let x: Vec<f64> = (0..n as u64).map(|i| (i * 2_654_435_761 % 60_013) as f64).collect();
        let a = r::array(&x, &[n], dtype, ctx.device)?;
        let want: Vec<f64> = x
            .iter()
            .map(|&v| v as i64)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|v| v as f64)
            .collect();
        check_array(
            &format!("unique_values of {n} elements"),
            &[want.len()],
            &want,
            &ad::unique_values(&a)?,
        )?;
    }
    Ok(())
}

/// Reductions longer than one invocation may loop over (millions of
/// elements into one result, over one axis and over three) and with more
/// results than one grid dimension has workgroups.
fn long_and_many_reductions(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let shape = [64, 256, 256];
    let n: usize = shape.iter().product();
    let x = values(n, 3);
    let a = r::array(&x, &shape, dtype, ctx.device)?;
    let total: f64 = x.iter().sum();
    check_array(
        &format!("sum of {shape:?}"),
        &[],
        &[total],
        &ad::sum(&a, ad::ALL, false)?,
    )?;

    // The extremes late in a long line, each twice (the first counts).
    let n = 6_000_000;
    let mut x = values(n, 5);
    for (at, v) in [
        (5_900_000, 100.0),
        (5_999_999, 100.0),
        (5_950_000, -100.0),
        (5_950_001, -100.0),
    ] {
        x[at] = v;
    }
    let a = r::array(&x, &[n], dtype, ctx.device)?;
    check_array(&format!("max of {n}"), &[], &[100.0], &ad::max(&a, ad::ALL, false)?)?;
    check_array(
        &format!("argmax of {n}"),
        &[],
        &[5_900_000.0],
        &ad::argmax(&a, None, false)?,
    )?;
    check_array(
        &format!("argmin of {n}"),
        &[],
        &[5_950_000.0],
        &ad::argmin(&a, None, false)?,
    )?;

    // 70,001 results of 3 elements each.
    let rows = 70_001;
    let x = values(rows * 3, 9);
    let a = r::array(&x, &[rows, 3], dtype, ctx.device)?;
    let want: Vec<f64> = x.chunks(3).map(|c| c.iter().sum()).collect();
    check_array(
        &format!("sum of {rows} rows"),
        &[rows],
        &want,
        &ad::sum(&a, 1isize, false)?,
    )
}

/// Non-zeros spread over 3,000,000 elements in two dimensions, more than
/// one workgroup's threads may loop over.
fn nonzero_of_long_arrays(ctx: &CaseCtx) -> Result<(), Failure> {
    let shape = [3, 1_000_000];
    let n = shape[0] * shape[1];
    let hit = |e: usize| e.is_multiple_of(1001) || e == n - 1;
    let x: Vec<f64> = (0..n).map(|e| if hit(e) { (e % 7 + 1) as f64 } else { 0.0 }).collect();
    let a = r::array(&x, &shape, ctx.dtype(), ctx.device)?;
    let at: Vec<usize> = (0..n).filter(|&e| hit(e)).collect();
    let got = ad::nonzero(&a)?;
    let rows: Vec<f64> = at.iter().map(|e| (e / shape[1]) as f64).collect();
    let cols: Vec<f64> = at.iter().map(|e| (e % shape[1]) as f64).collect();
    check_array("nonzero rows", &[at.len()], &rows, &got[0])?;
    check_array("nonzero columns", &[at.len()], &cols, &got[1])
}

/// Row-major `[m, k] @ [k, n]` for each of `batches` pairs, in f64 (exact
/// for the small integers of [`values`]).
fn host_matmul(a: &[f64], b: &[f64], batches: usize, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; batches * m * n];
    for (q, o) in out.iter_mut().enumerate() {
        let (p, i, j) = (q / (m * n), q / n % m, q % n);
        *o = (0..k).map(|l| a[(p * m + i) * k + l] * b[(p * k + l) * n + j]).sum();
    }
    out
}

/// `batches` products `[m, k] @ [k, n]` against the host's.
fn check_matmul(ctx: &CaseCtx, batches: usize, m: usize, k: usize, n: usize) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let (x, y) = (values(batches * m * k, 1), values(batches * k * n, 2));
    let a = r::array(&x, &[batches, m, k], dtype, ctx.device)?;
    let b = r::array(&y, &[batches, k, n], dtype, ctx.device)?;
    check_array(
        &format!("{batches} products of [{m}, {k}] @ [{k}, {n}]"),
        &[batches, m, n],
        &host_matmul(&x, &y, batches, m, k, n),
        &ad::matmul(&a, &b)?,
    )
}

/// A `k` longer than one invocation may loop over (more than 65,535 steps
/// of 16).
fn matmul_along_a_long_k(ctx: &CaseCtx) -> Result<(), Failure> {
    check_matmul(ctx, 1, 1, 1_100_000, 1)
}

/// More matrices than one grid dimension has workgroups.
fn matmul_of_many_matrices(ctx: &CaseCtx) -> Result<(), Failure> {
    check_matmul(ctx, 65_537, 1, 2, 1)
}

/// f64 values next to a rounding boundary of f16 and bf16, where rounding
/// through f32 first lands exactly on the boundary and then breaks the tie
/// the wrong way; each with the value rounded once (to nearest, ties to
/// even), worked out by hand: `(x, as f16, as bf16)`.
fn half_boundaries() -> Vec<(f64, f64, f64)> {
    let p = |e: i32| 2f64.powi(e);
    let f16_max = 65504.0;
    let bf16_max = (2.0 - p(-7)) * p(127);
    vec![
        // Just above the tie between 1 and the next value up.
        (1.0 + p(-11) + p(-40), 1.0 + p(-10), 1.0),
        (1.0 + p(-8) + p(-40), 1.0 + p(-8), 1.0 + p(-7)),
        (-(1.0 + p(-11) + p(-40)), -(1.0 + p(-10)), -1.0),
        // Exact ties go to even.
        (1.0 + p(-11), 1.0, 1.0),
        (1.0 + 3.0 * p(-11), 1.0 + p(-9), 1.0),
        // Just above half the smallest subnormal of each.
        (p(-25) + p(-50), p(-24), p(-25)),
        (p(-134) + p(-160), 0.0, p(-133)),
        (p(-134), 0.0, 0.0),
        // Just below half an ulp above the largest finite value, and at it.
        (65520.0 - p(-30), f16_max, 65536.0),
        (65520.0, f64::INFINITY, 65536.0),
        ((2.0 - p(-8)) * p(127) - p(90), f64::INFINITY, bf16_max),
        ((2.0 - p(-8)) * p(127), f64::INFINITY, f64::INFINITY),
        (-1e300, f64::NEG_INFINITY, f64::NEG_INFINITY),
        (f64::INFINITY, f64::INFINITY, f64::INFINITY),
        (f64::NAN, f64::NAN, f64::NAN),
        (-0.0, 0.0, 0.0),
    ]
}

fn f64_to_half_rounds_once(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let table = half_boundaries();
    let x: Vec<f64> = table.iter().map(|t| t.0).collect();
    let want: Vec<f64> = table
        .iter()
        .map(|t| if dtype == DType::F16 { t.1 } else { t.2 })
        .collect();
    let a = r::array(&x, &[x.len()], DType::F64, ctx.device)?;
    let got = a.astype(dtype)?;
    check_array(&format!("f64 -> {dtype}"), &[x.len()], &want, &got)?;
    // Exact: a result one ulp off is within the dtype's tolerance.
    let bits = got.to_f64_vec()?;
    match (0..x.len()).find(|&i| !(bits[i] == want[i] || (bits[i].is_nan() && want[i].is_nan()))) {
        None => Ok(()),
        Some(i) => Err(Failure::new(format!("f64 -> {dtype} of {:e}", x[i]), want[i], bits[i])),
    }
}
