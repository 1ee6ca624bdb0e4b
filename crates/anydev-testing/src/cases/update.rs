//! Writes into arrays (`x[...] = value`, in-place updates): the written
//! elements and nothing else change, every view of the memory sees the
//! write, overlapping sources read the old values, and values that would
//! change the array's dtype or writes through broadcast views are errors.
//! Writes through integer arrays (a scatter) are checked against a
//! reference that walks the indices and writes one element at a time.

use crate::case::{expect_err, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::{Array, SliceArg};
use anydev_core::ops::{BinaryOp, OpCode};
use anydev_core::{DType, Error};

const DTYPES: &[DType] = &[DType::F32, DType::F64, DType::I32, DType::U8];

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("update::assign_scalars_and_arrays", assign_values)
            .dtypes(DTYPES)
            .op(OpCode::Fill)
            .op(OpCode::Copy)
            .op(OpCode::Binary(BinaryOp::Add)),
        Case::new("update::overlapping_sources_read_old_values", overlapping)
            .dtypes(DTYPES)
            .op(OpCode::Copy),
        Case::new("update::masks", masks)
            .dtypes(DTYPES)
            .op(OpCode::Copy)
            .op(OpCode::Where)
            .needs(Need::DType(DType::Bool)),
        scatter(Case::new("update::integer_arrays", integer_arrays)),
        scatter(Case::new("update::integer_arrays_into_a_strided_view", strided_view)),
        Case::new("update::bad_writes_are_errors", bad_writes)
            .dtypes(&[DType::I32])
            .needs(Need::DType(DType::F32))
            .op(OpCode::Fill),
        // Writing a scalar through indices fills it on the device first.
        Case::new("update::values_from_another_device_are_an_error", other_device)
            .dtypes(&[DType::F32])
            .op(OpCode::Fill)
            // The index arrays of the scatter.
            .needs(Need::DType(DType::I64))
            .needs(Need::Devices(2))
            .all_devices(),
    ]
}

/// What a write through integer arrays dispatches: range checks and flat
/// positions in `i64`, a stable sort and a search of them, gathers, and
/// a `where` in the case's dtype.
fn scatter(case: Case) -> Case {
    let i64_op = |op| Need::Op(op, Some(DType::I64));
    case.dtypes(DTYPES)
        .op(OpCode::Take)
        .op(OpCode::Where)
        .op(OpCode::Copy)
        .op(OpCode::Fill)
        .checks_indices()
        .needs(i64_op(OpCode::Binary(BinaryOp::Multiply)))
        .needs(i64_op(OpCode::Binary(BinaryOp::Subtract)))
        .needs(i64_op(OpCode::Binary(BinaryOp::Maximum)))
        .needs(i64_op(OpCode::Binary(BinaryOp::Equal)))
        .needs(i64_op(OpCode::Argsort))
        .needs(i64_op(OpCode::SearchSorted))
        .needs(i64_op(OpCode::Take))
        .needs(i64_op(OpCode::Arange))
        .needs(i64_op(OpCode::Copy))
}

/// An index array for a scatter: `i64` values of a shape.
type Index<'a> = (&'a [i64], &'a [usize]);

/// `x[indices] = value` on host values: one element at a time, in
/// row-major order of the indices' broadcast shape, so that of several
/// writes to one element the last stays.
fn scatter_reference(
    x: &mut [f64],
    shape: &[usize],
    indices: &[Index],
    index_shape: &[usize],
    value: (&[f64], &[usize]),
) {
    let k = indices.len();
    let full: Vec<usize> = index_shape.iter().chain(&shape[k..]).copied().collect();
    for at in r::indices(&full) {
        let (s, rest) = at.split_at(index_shape.len());
        let target = indices.iter().zip(shape).map(|((values, ishape), &len)| {
            let i = values[r::source_index(ishape, index_shape, s)];
            if i < 0 {
                (i + len as i64) as usize
            } else {
                i as usize
            }
        });
        let flat = target
            .chain(rest.iter().copied())
            .zip(shape)
            .fold(0, |acc, (i, &n)| acc * n + i);
        x[flat] = value.0[r::source_index(value.1, &full, &at)];
    }
}

/// Scatters into `x` (of shape `shape`, values `want`) and into the
/// reference, and compares.
fn check_scatter(
    what: &str,
    x: &Array,
    want: &mut [f64],
    shape: &[usize],
    indices: &[Index],
    value: (&[f64], &[usize]),
) -> Result<(), Failure> {
    let dev = x.device();
    let arrays = indices
        .iter()
        .map(|(v, s)| Array::from_slice(v, s, dev))
        .collect::<anydev_core::Result<Vec<_>>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    x.assign_arrays(&refs, &r::array(value.0, value.1, x.dtype(), dev)?)?;
    let index_shape = indices
        .iter()
        .try_fold(Vec::new(), |s, (_, shape)| r::broadcast_shape(&s, shape))
        .ok_or_else(|| Failure::new(format!("{what}: the case's indices"), "broadcastable", "not"))?;
    scatter_reference(want, shape, indices, &index_shape, value);
    check_array(what, shape, want, x)
}

fn ramp(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

fn assign_values(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let mut want = ramp(12);
    let x = r::array(&want, &[3, 4], dtype, dev)?;
    let flat_alias = x.reshape(&[12])?;
    // A scalar into a strided view: rows 1.., every other column.
    x.assign_slice(
        &[
            SliceArg::from(1..),
            SliceArg::Slice {
                start: None,
                stop: None,
                step: 2,
            },
        ],
        7,
    )?;
    for (i, j) in [(1, 0), (1, 2), (2, 0), (2, 2)] {
        want[i * 4 + j] = 7.0;
    }
    check_array("x[1:, ::2] = 7", &[3, 4], &want, &x)?;
    // An array into a row, and a column vector broadcast into two columns.
    let row = r::array(&[10.0, 20.0, 30.0, 40.0], &[4], dtype, dev)?;
    x.assign_slice(&[SliceArg::Index(0)], &row)?;
    want[..4].copy_from_slice(&[10.0, 20.0, 30.0, 40.0]);
    let column = r::array(&[50.0, 60.0, 70.0], &[3, 1], dtype, dev)?;
    x.assign_slice(&[SliceArg::FULL, SliceArg::from(1..3)], &column)?;
    for i in 0..3 {
        want[i * 4 + 1] = 50.0 + 10.0 * i as f64;
        want[i * 4 + 2] = 50.0 + 10.0 * i as f64;
    }
    check_array("x[0] = row; x[:, 1:3] = column", &[3, 4], &want, &x)?;
    check_array("a view made before the writes sees them", &[12], &want, &flat_alias)?;
    // In place: x += 1.
    x.assign(&x.add(1)?)?;
    let plus_one: Vec<f64> = want.iter().map(|v| v + 1.0).collect();
    check_array("x += 1", &[3, 4], &plus_one, &x)?;
    // A copy shares nothing.
    let copy = x.copy()?;
    copy.assign(0)?;
    check_array("x after writing its copy", &[3, 4], &plus_one, &x)
}

fn overlapping(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let y = r::array(&ramp(6), &[6], dtype, dev)?;
    y.assign_slice(&[SliceArg::from(1..)], &y.slice(&[SliceArg::from(..5)])?)?;
    check_array("y[1:] = y[:-1]", &[6], &[0.0, 0.0, 1.0, 2.0, 3.0, 4.0], &y)?;
    y.assign(&y.flip(0)?)?;
    check_array("y[:] = y[::-1]", &[6], &[4.0, 3.0, 2.0, 1.0, 0.0, 0.0], &y)
}

fn masks(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let base = ramp(12);
    let x = r::array(&base, &[3, 4], dtype, dev)?;
    let flags: Vec<f64> = (0..12).map(|i| f64::from(i % 5 == 2)).collect();
    x.assign_mask(&r::array(&flags, &[3, 4], DType::Bool, dev)?, 9)?;
    let want: Vec<f64> = base
        .iter()
        .zip(&flags)
        .map(|(&v, &f)| if f == 1.0 { 9.0 } else { v })
        .collect();
    check_array("x[mask] = 9", &[3, 4], &want, &x)?;
    // A mask over rows with a value for the whole row.
    let rows = r::array(&[1.0, 0.0, 1.0], &[3], DType::Bool, dev)?;
    let row = r::array(&[1.0, 2.0, 3.0, 4.0], &[4], dtype, dev)?;
    x.assign_mask(&rows, &row)?;
    let mut want = want;
    for i in [0, 2] {
        want[i * 4..i * 4 + 4].copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    }
    check_array("x[row mask] = row", &[3, 4], &want, &x)?;
    // A value with one entry per selected row would pair them up in an
    // order NumPy does not use: refused.
    let per_row = r::array(&[1.0, 2.0], &[2, 1], dtype, dev)?;
    expect_err(
        "x[row mask] = value of shape [2, 1]",
        "ShapeMismatch",
        x.assign_mask(&rows, &per_row),
        |e| matches!(e, Error::ShapeMismatch { .. }),
    )?;
    check_array("x after the refused write", &[3, 4], &want, &x)?;
    Ok(())
}

fn integer_arrays(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let shape = [3, 4, 2];
    let mut want = ramp(24);
    let x = r::array(&want, &shape, dtype, dev)?;
    // Indices of shapes [2, 1] and [3] broadcast to [2, 3]; a value of
    // shape [3, 2] broadcasts to [2, 3, 2] (the last axis stays whole).
    let values: Vec<f64> = (30..36).map(f64::from).collect();
    check_scatter(
        "x[i0, i1] = value",
        &x,
        &mut want,
        &shape,
        &[(&[2, 0], &[2, 1]), (&[1, -1, 0], &[3])],
        (&values, &[3, 2]),
    )?;
    // Duplicates: rows 1, -2 (also 1) and 1 again: the last write wins.
    check_scatter(
        "x[[1, 0, 1, -2]] = one value per row",
        &x,
        &mut want,
        &shape,
        &[(&[1, 0, 1, -2], &[4])],
        (&[40.0, 41.0, 42.0, 43.0], &[4, 1, 1]),
    )?;
    check_scatter(
        "x[i0, i1, i2] = value, with repeats",
        &x,
        &mut want,
        &shape,
        &[(&[0, 2, 0], &[3]), (&[3, 1, 3], &[3]), (&[-1], &[])],
        (&[50.0, 51.0, 52.0], &[3]),
    )?;
    check_scatter(
        "x[0-d index] = row",
        &x,
        &mut want,
        &shape,
        &[(&[2], &[])],
        (&[60.0, 61.0], &[2]),
    )?;
    check_scatter(
        "x[empty index] = value",
        &x,
        &mut want,
        &shape,
        &[(&[], &[0])],
        (&[7.0], &[]),
    )?;
    // A scalar, and an index array of another integer dtype.
    let rows = Array::from_slice(&[0i32, 2], &[2], dev)?;
    x.assign_arrays(&[&rows], 9)?;
    for i in (0..8).chain(16..24) {
        want[i] = 9.0;
    }
    check_array("x[i32 rows] = 9", &shape, &want, &x)?;
    // Nothing is written when an index is out of range.
    let bad = Array::from_slice(&[0i64, 3], &[2], dev)?;
    expect_err(
        "x[[0, 3]] = 1 with 3 rows",
        "IndexOutOfBounds",
        x.assign_arrays(&[&bad], 1),
        |e| matches!(e, Error::IndexOutOfBounds { index: 3, len: 3, .. }),
    )?;
    let wide = r::array(&[1.0; 3], &[3], dtype, dev)?;
    expect_err(
        "x[[0, 3]] = value of shape [3]",
        "ShapeMismatch",
        x.assign_arrays(&[&rows], &wide),
        |e| matches!(e, Error::ShapeMismatch { .. }),
    )?;
    check_array("x after the refused writes", &shape, &want, &x)
}

fn strided_view(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let base = r::array(&ramp(24), &[4, 6], dtype, dev)?;
    // Every other column, transposed: shape [3, 4], strides [2, 6].
    let view = base
        .slice(&[
            SliceArg::FULL,
            SliceArg::Slice {
                start: None,
                stop: None,
                step: 2,
            },
        ])?
        .permute_dims(&[1, 0])?;
    let mut want: Vec<f64> = r::indices(&[3, 4])
        .iter()
        .map(|at| (at[1] * 6 + at[0] * 2) as f64)
        .collect();
    check_scatter(
        "view[i0, i1] = value",
        &view,
        &mut want,
        &[3, 4],
        &[(&[2, 0, 2], &[3]), (&[-1, 1, -1], &[3])],
        (&[70.0, 71.0, 72.0], &[3]),
    )?;
    let mut whole = ramp(24);
    for at in r::indices(&[3, 4]) {
        whole[at[1] * 6 + at[0] * 2] = want[at[0] * 4 + at[1]];
    }
    check_array("the viewed array", &[4, 6], &whole, &base)
}

fn bad_writes(ctx: &CaseCtx) -> Result<(), Failure> {
    let dev = ctx.device;
    let x = r::array(&ramp(4), &[4], DType::I32, dev)?;
    expect_err("an i32 array = 1.5", "InvalidDType", x.assign(1.5), |e| {
        matches!(e, Error::InvalidDType { .. })
    })?;
    expect_err("an i32 array = 2**40", "InvalidDType", x.assign(1i64 << 40), |e| {
        matches!(e, Error::InvalidDType { .. })
    })?;
    if ctx.runtime.capabilities(dev)?.supports_dtype(DType::I64) {
        let wide = r::array(&[1.0; 4], &[4], DType::I64, dev)?;
        expect_err("an i32 array = an i64 array", "InvalidDType", x.assign(&wide), |e| {
            matches!(e, Error::InvalidDType { .. })
        })?;
    }
    let broadcast = x.slice(&[SliceArg::from(..1)])?.broadcast_to(&[3, 1])?;
    expect_err(
        "writing into a broadcast view",
        "InvalidArgument",
        broadcast.assign(0),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    let index = Array::from_slice(&[0i32], &[1], dev)?;
    let floats = r::array(&[0.5], &[1], DType::F32, dev)?;
    for (what, result) in [
        ("x[[0]] = 1.5 into i32", x.assign_arrays(&[&index], 1.5)),
        ("x[[0]] = an f32 array into i32", x.assign_arrays(&[&index], &floats)),
        ("x[float indices] = 1", x.assign_arrays(&[&floats], 1)),
    ] {
        expect_err(what, "InvalidDType", result, |e| {
            matches!(e, Error::InvalidDType { .. })
        })?;
    }
    expect_err(
        "a broadcast view[[0]] = 0",
        "InvalidArgument",
        broadcast.assign_arrays(&[&index], 0),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    // A view of a broadcast view is refused too, even one element, which
    // repeats nothing itself but is every element of its row.
    for (what, view) in [
        (
            "a broadcast view's element",
            broadcast.slice(&[SliceArg::from(1), SliceArg::from(0)])?,
        ),
        ("a broadcast view's row", broadcast.slice(&[SliceArg::from(2)])?),
        ("a broadcast view reshaped", broadcast.reshape(&[3])?),
    ] {
        expect_err(format!("{what} = 0"), "InvalidArgument", view.assign(0), |e| {
            matches!(e, Error::InvalidArgument { .. })
        })?;
    }
    let mask = r::array(&[1.0, 0.0], &[2], DType::Bool, dev)?;
    expect_err(
        "a mask of the wrong shape",
        "ShapeMismatch",
        x.assign_mask(&mask, 0),
        |e| matches!(e, Error::ShapeMismatch { .. }),
    )?;
    check_array("x after the refused writes", &[4], &ramp(4), &x)
}

fn other_device(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&ramp(3), &[3], DType::F32, ctx.device)?;
    for other in ctx.others() {
        let v: Array = r::array(&[1.0; 3], &[3], DType::F32, other)?;
        expect_err(
            format!("{} = array on {other}", ctx.device),
            "DeviceMismatch",
            x.assign(&v),
            |e| matches!(e, Error::DeviceMismatch { .. }),
        )?;
        let here = Array::from_slice(&[0i64], &[1], ctx.device)?;
        let there = Array::from_slice(&[0i64], &[1], other)?;
        expect_err(
            format!("{}[[0]] = array on {other}", ctx.device),
            "DeviceMismatch",
            x.assign_arrays(&[&here], &v),
            |e| matches!(e, Error::DeviceMismatch { .. }),
        )?;
        expect_err(
            format!("{}[index on {other}] = 1", ctx.device),
            "DeviceMismatch",
            x.assign_arrays(&[&there], 1),
            |e| matches!(e, Error::DeviceMismatch { .. }),
        )?;
    }
    Ok(())
}
