//! Writes into arrays (`x[...] = value`, in-place updates): the written
//! elements and nothing else change, every view of the memory sees the
//! write, overlapping sources read the old values, and values that would
//! change the array's dtype or writes through broadcast views are errors.

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
        Case::new("update::bad_writes_are_errors", bad_writes)
            .dtypes(&[DType::I32])
            .op(OpCode::Fill),
        Case::new("update::values_from_another_device_are_an_error", other_device)
            .dtypes(&[DType::F32])
            .needs(Need::Devices(2))
            .all_devices(),
    ]
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
    }
    Ok(())
}
