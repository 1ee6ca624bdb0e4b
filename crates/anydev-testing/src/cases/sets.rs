//! The standard's set and indexing helpers composed in the array layer
//! (`unique_all` and its two narrower forms, `isin`, `diff`,
//! `take_along_axis`, `count_nonzero`, `unstack`), against references
//! computed here by plain loops. `unique_all` and `isin` run on complex
//! input too, ordered as NumPy orders it.

use super::complex::{carr, near};
use crate::case::{check_eq, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp, ScanOp, UnaryOp};
use anydev_core::{DType, Error};
use num_complex::Complex64 as C;
use std::cmp::Ordering;

const DTYPES: &[DType] = &[DType::F32, DType::F64, DType::I32, DType::U8];

/// What `unique_all` dispatches besides sorting and gathering values: run
/// starts, their positions, counts and the inverse permutation.
fn unique_needs(case: Case) -> Case {
    let i64_op = |op| Need::Op(op, Some(DType::I64));
    case.op(OpCode::Take)
        .op(OpCode::Binary(BinaryOp::NotEqual))
        .needs(Need::Op(OpCode::Nonzero, Some(DType::Bool)))
        .needs(i64_op(OpCode::Scan(ScanOp::CumulativeSum)))
        .needs(i64_op(OpCode::Binary(BinaryOp::Subtract)))
        .needs(i64_op(OpCode::Argsort))
        .needs(i64_op(OpCode::Reduce(ReduceOp::Sum)))
        .needs(i64_op(OpCode::Copy))
        .needs(i64_op(OpCode::Fill))
        .needs(i64_op(OpCode::Take))
        .needs(Need::Op(OpCode::Cast, Some(DType::Bool)))
        .needs(Need::Op(OpCode::Copy, Some(DType::Bool)))
        .needs(Need::Op(OpCode::Fill, Some(DType::Bool)))
        .counts_nonzero()
}

pub fn cases() -> Vec<Case> {
    let i64_op = |op| Need::Op(op, Some(DType::I64));
    // Complex values are sorted by their components, in the real dtype:
    // one case per dtype, each needing its own component's ops.
    let complex_order = |case: Case, dt: DType| {
        unique_needs(case.dtypes(&[dt]))
            .op(OpCode::Unary(UnaryOp::Real))
            .op(OpCode::Unary(UnaryOp::Imag))
            .ops_for(
                dt.real_dtype(),
                &[OpCode::Argsort, OpCode::Take, OpCode::Unary(UnaryOp::IsNan)],
            )
            .needs(i64_op(OpCode::Binary(BinaryOp::Multiply)))
            .needs(i64_op(OpCode::Binary(BinaryOp::Add)))
    };
    let complex = [DType::C64, DType::C128].into_iter().flat_map(|dt| {
        [
            complex_order(Case::new(format!("sets::unique_all_{dt}"), unique_all_complex), dt),
            complex_order(Case::new(format!("sets::isin_{dt}"), isin_complex), dt)
                .op(OpCode::Copy)
                .counts_nonzero()
                .needs(Need::Op(OpCode::Cast, Some(dt.real_dtype())))
                .needs(i64_op(OpCode::Binary(BinaryOp::Less)))
                .needs(Need::Op(OpCode::Unary(UnaryOp::LogicalNot), Some(DType::Bool))),
        ]
    });
    let mut cases = vec![
        unique_needs(Case::new("sets::unique_all", unique_all).dtypes(DTYPES)).op(OpCode::Argsort),
        Case::new("sets::isin", isin)
            .dtypes(DTYPES)
            .op(OpCode::Sort)
            .op(OpCode::SearchSorted)
            .op(OpCode::Take)
            .op(OpCode::Binary(BinaryOp::Equal))
            .op(OpCode::Binary(BinaryOp::NotEqual))
            .needs(i64_op(OpCode::Binary(BinaryOp::Minimum)))
            .needs(Need::Op(OpCode::Fill, Some(DType::Bool))),
        Case::new("sets::diff", diff)
            .dtypes(DTYPES)
            .op(OpCode::Binary(BinaryOp::Subtract))
            .needs(Need::Op(OpCode::Binary(BinaryOp::NotEqual), Some(DType::Bool))),
        Case::new("sets::take_along_axis", take_along_axis)
            .dtypes(DTYPES)
            .op(OpCode::Copy)
            .op(OpCode::Take)
            .checks_indices()
            .needs(i64_op(OpCode::Binary(BinaryOp::Multiply)))
            .needs(i64_op(OpCode::Arange)),
        Case::new("sets::count_nonzero_and_unstack", count_nonzero_and_unstack)
            .dtypes(DTYPES)
            .op(OpCode::Cast)
            .op(OpCode::Copy)
            .counts_nonzero()
            .needs(Need::DType(DType::I64)),
    ];
    cases.extend(complex);
    cases
}

/// Test values for `dtype`: repeats, both zeros and (floats) two NaNs.
fn values(dtype: DType) -> Vec<f64> {
    if dtype.is_float() {
        vec![3.0, 1.0, f64::NAN, 2.0, 1.0, -0.0, 0.0, 3.0, f64::NAN, 2.0, 2.0, 7.5]
    } else {
        vec![3.0, 1.0, 200.0, 2.0, 1.0, 0.0, 0.0, 3.0, 200.0, 2.0, 2.0, 7.0]
    }
}

/// The standard's order: NaN after every number, NaNs alike.
fn nan_last(a: &f64, b: &f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (x, y) => x.cmp(&y),
    }
}

/// NumPy's order of complex numbers: numbers, then those with a NaN
/// imaginary part, a NaN real part, both; each by real then imaginary part.
fn complex_order(a: &C, b: &C) -> Ordering {
    let nans = |z: &C| (z.re.is_nan(), z.im.is_nan());
    nans(a)
        .cmp(&nans(b))
        .then(nan_last(&a.re, &b.re))
        .then(nan_last(&a.im, &b.im))
}

/// Distinct values (every NaN its own), first indices, inverse indices
/// and counts, by sorting positions stably and grouping equal neighbours.
fn unique_reference<T: Copy + PartialEq>(
    v: &[T],
    order_of: fn(&T, &T) -> Ordering,
) -> (Vec<T>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| order_of(&v[a], &v[b]));
    let (mut values, mut first, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    let mut inverse = vec![0.0; v.len()];
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || v[i] != v[order[k - 1]] {
            values.push(v[i]);
            first.push(i as f64);
            counts.push(0.0);
        }
        *counts.last_mut().expect("a group was opened") += 1.0;
        inverse[i] = (values.len() - 1) as f64;
    }
    (values, first, inverse, counts)
}

fn unique_all(ctx: &CaseCtx) -> Result<(), Failure> {
    let v = values(ctx.dtype());
    let x = r::array(&v, &[3, 4], ctx.dtype(), ctx.device)?;
    let (values, first, inverse, counts) = unique_reference(&v, nan_last);
    let u = ad::unique_all(&x)?;
    check_array("unique_all values", &[values.len()], &values, &u.values)?;
    check_array("unique_all indices", &[first.len()], &first, &u.indices)?;
    check_array("unique_all inverse_indices", &[3, 4], &inverse, &u.inverse_indices)?;
    check_array("unique_all counts", &[counts.len()], &counts, &u.counts)?;
    check_eq("index dtype", DType::I64, u.indices.dtype())?;
    let (vals, counts_only) = ad::unique_counts(&x)?;
    check_array("unique_counts values", &[values.len()], &values, &vals)?;
    check_array("unique_counts counts", &[counts.len()], &counts, &counts_only)?;
    let (_, inverse_only) = ad::unique_inverse(&x)?;
    check_array("unique_inverse", &[3, 4], &inverse, &inverse_only)?;
    // Empty and one-element inputs.
    let empty = ad::unique_all(&r::array(&[], &[0], ctx.dtype(), ctx.device)?)?;
    check_eq("unique_all of nothing", 0, empty.values.size() + empty.counts.size())?;
    let one = ad::unique_all(&r::array(&[5.0], &[1, 1], ctx.dtype(), ctx.device)?)?;
    check_array("unique_all of one: counts", &[1], &[1.0], &one.counts)?;
    check_array("unique_all of one: inverse", &[1, 1], &[0.0], &one.inverse_indices)
}

fn unique_all_complex(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let c = C::new;
    let nan = f64::NAN;
    // Repeats, both signs of zero (a `-0.0` real part must not sort below
    // `0.0`), real parts that outrank imaginary ones, and NaN components.
    let v = [
        c(1.0, 1.0),
        c(0.0, 2.0),
        c(1.0, nan),
        c(nan, 0.0),
        c(1.0, 1.0),
        c(-0.0, 3.0),
        c(0.0, -0.0),
        c(nan, nan),
        c(2.0, -1.0),
        c(-0.0, 0.0),
        c(0.0, 2.0),
        c(nan, -4.0),
    ];
    let x = carr(&v, &[3, 4], dtype, dev)?;
    let (values, first, inverse, counts) = unique_reference(&v, complex_order);
    let u = ad::unique_all(&x)?;
    near("unique_all values", dtype, &values, &u.values)?;
    check_array("unique_all indices", &[first.len()], &first, &u.indices)?;
    check_array("unique_all inverse_indices", &[3, 4], &inverse, &u.inverse_indices)?;
    check_array("unique_all counts", &[counts.len()], &counts, &u.counts)?;
    near("unique_values", dtype, &values, &ad::unique_values(&x)?)?;
    let (_, counts_only) = ad::unique_counts(&x)?;
    check_array("unique_counts counts", &[counts.len()], &counts, &counts_only)?;
    let (_, inverse_only) = ad::unique_inverse(&x)?;
    check_array("unique_inverse", &[3, 4], &inverse, &inverse_only)?;
    let empty = ad::unique_all(&carr(&[], &[0], dtype, dev)?)?;
    check_eq("unique_all of nothing", 0, empty.values.size() + empty.counts.size())?;
    let scalar = ad::unique_all(&carr(&[c(nan, 1.0)], &[], dtype, dev)?)?;
    near("unique_all of 0-d: values", dtype, &[c(nan, 1.0)], &scalar.values)?;
    check_array("unique_all of 0-d: inverse", &[], &[0.0], &scalar.inverse_indices)
}

fn isin(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let needles: Vec<f64> = if dtype.is_float() {
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN, -0.0]
    } else {
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 250.0, 9.0]
    };
    let haystack = [5.0, 3.0, 1.0, 9.0, 0.0, 3.0];
    let want: Vec<f64> = needles.iter().map(|n| haystack.contains(n) as u8 as f64).collect();
    let x1 = r::array(&needles, &[2, 4], dtype, dev)?;
    let x2 = r::array(&haystack, &[3, 2], dtype, dev)?;
    check_array("isin", &[2, 4], &want, &ad::isin(&x1, &x2, false)?)?;
    let inverted: Vec<f64> = want.iter().map(|w| 1.0 - w).collect();
    check_array("isin(invert)", &[2, 4], &inverted, &ad::isin(&x1, &x2, true)?)?;
    let none = r::array(&[], &[0], dtype, dev)?;
    check_array("isin of nothing", &[2, 4], &[0.0; 8], &ad::isin(&x1, &none, false)?)
}

/// `isin` of complex values, which have no order to search in: equal
/// values are found whatever the sign of their zeros, NaNs never are.
fn isin_complex(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let c = C::new;
    let nan = f64::NAN;
    let haystack = [
        c(1.0, 2.0),
        c(0.0, -0.0),
        c(3.0, 1.0),
        c(1.0, 2.0),
        c(nan, 1.0),
        c(-5.0, 0.5),
    ];
    let needles = [
        c(1.0, 2.0),
        c(2.0, 1.0),
        c(-0.0, 0.0),
        c(nan, 1.0),
        c(-5.0, 0.5),
        c(3.0, -1.0),
        c(1.0, nan),
        c(3.0, 1.0),
    ];
    let want: Vec<f64> = needles
        .iter()
        .map(|n| haystack.iter().any(|h| h == n) as u8 as f64)
        .collect();
    let (x1, x2) = (carr(&needles, &[2, 4], dtype, dev)?, carr(&haystack, &[6], dtype, dev)?);
    check_array("isin", &[2, 4], &want, &ad::isin(&x1, &x2, false)?)?;
    let inverted: Vec<f64> = want.iter().map(|w| 1.0 - w).collect();
    check_array("isin(invert)", &[2, 4], &inverted, &ad::isin(&x1, &x2, true)?)?;
    // Needles of a real dtype promote to the haystack's complex one.
    let real = r::array(&[3.0, 0.0, 7.0], &[3], dtype.real_dtype(), dev)?;
    check_array(
        "isin of real needles",
        &[3],
        &[0.0, 1.0, 0.0],
        &ad::isin(&real, &x2, false)?,
    )?;
    let empty = carr(&[], &[0], dtype, dev)?;
    check_array("isin of no needles", &[0], &[], &ad::isin(&empty, &x2, false)?)
}

fn diff(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let squares = [1.0, 4.0, 9.0, 16.0, 25.0];
    let x = r::array(&squares, &[5], dtype, dev)?;
    check_array("diff n=1", &[4], &[3.0, 5.0, 7.0, 9.0], &ad::diff(&x, -1, 1)?)?;
    check_array("diff n=2", &[3], &[2.0, 2.0, 2.0], &ad::diff(&x, 0, 2)?)?;
    check_array("diff n=0", &[5], &squares, &ad::diff(&x, 0, 0)?)?;
    check_array("diff n=7", &[0], &[], &ad::diff(&x, 0, 7)?)?;
    let m = r::array(&[1.0, 2.0, 4.0, 8.0, 9.0, 12.0], &[2, 3], dtype, dev)?;
    check_array("diff along axis 0", &[1, 3], &[7.0, 7.0, 8.0], &ad::diff(&m, 0, 1)?)?;
    let flags = r::array(&[1.0, 1.0, 0.0, 1.0], &[4], DType::Bool, dev)?;
    let changed = ad::diff(&flags, 0, 1)?;
    check_eq("diff of bool: dtype", DType::Bool, changed.dtype())?;
    check_array("diff of bool", &[3], &[0.0, 1.0, 1.0], &changed)?;
    expect_err("diff along axis 2 of 1-D", "InvalidAxis", ad::diff(&x, 2, 1), |e| {
        matches!(e, Error::InvalidAxis { .. })
    })?;
    Ok(())
}

fn take_along_axis(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let v: Vec<f64> = (0..12).map(|i| (i * 10 % 17) as f64).collect();
    let x = r::array(&v, &[3, 4], dtype, dev)?;
    let idx = Array::from_slice(&[3i64, 0, -1, 1, 2, 2], &[3, 2], dev)?;
    let want: Vec<f64> = [(0, 3), (0, 0), (1, 3), (1, 1), (2, 2), (2, 2)]
        .iter()
        .map(|&(i, j)| v[i * 4 + j])
        .collect();
    check_array(
        "take_along_axis, axis 1",
        &[3, 2],
        &want,
        &ad::take_along_axis(&x, &idx, 1)?,
    )?;
    // Along axis 0 with one row of indices broadcast over the columns.
    let rows = Array::from_slice(&[2i32, 0, 1, -3], &[1, 4], dev)?;
    let want: Vec<f64> = [2usize, 0, 1, 0]
        .iter()
        .enumerate()
        .map(|(j, &i)| v[i * 4 + j])
        .collect();
    check_array(
        "take_along_axis, axis 0",
        &[1, 4],
        &want,
        &ad::take_along_axis(&x, &rows, 0)?,
    )?;
    let out_of_range = Array::from_slice(&[4i64], &[1, 1], dev)?;
    expect_err(
        "take_along_axis with index 4 of 4",
        "IndexOutOfBounds",
        ad::take_along_axis(&x, &out_of_range, 1),
        |e| matches!(e, Error::IndexOutOfBounds { index: 4, len: 4, .. }),
    )?;
    let flat = Array::from_slice(&[0i64], &[1], dev)?;
    expect_err(
        "take_along_axis with indices of another rank",
        "InvalidArgument",
        ad::take_along_axis(&x, &flat, 1),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    let floats = r::array(&[0.0], &[1, 1], DType::F32, dev)?;
    expect_err(
        "take_along_axis with float indices",
        "InvalidDType",
        ad::take_along_axis(&x, &floats, 1),
        |e| matches!(e, Error::InvalidDType { .. }),
    )?;
    Ok(())
}

fn count_nonzero_and_unstack(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let v = values(dtype);
    let x = r::array(&v, &[3, 4], dtype, dev)?;
    let nonzero = |part: &[f64]| part.iter().filter(|&&e| e != 0.0).count() as f64;
    let total = ad::count_nonzero(&x, ad::ALL, false)?;
    check_eq(
        "count_nonzero dtype",
        ad::default_dtypes(Some(dev))?.integral,
        total.dtype(),
    )?;
    check_array("count_nonzero", &[], &[nonzero(&v)], &total)?;
    let per_row: Vec<f64> = v.chunks(4).map(nonzero).collect();
    check_array(
        "count_nonzero axis 1",
        &[3, 1],
        &per_row,
        &ad::count_nonzero(&x, 1, true)?,
    )?;
    let columns = ad::unstack(&x, 1)?;
    check_eq("unstack count", 4, columns.len())?;
    for (j, column) in columns.iter().enumerate() {
        let want: Vec<f64> = (0..3).map(|i| v[i * 4 + j]).collect();
        check_array(&format!("unstack column {j}"), &[3], &want, column)?;
    }
    Ok(())
}
