//! Integer-array and boolean-mask indexing against references computed
//! here by walking the index arrays and the mask, errors included.

use crate::case::{check_eq, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::Array;
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp};
use anydev_core::{DType, Error};

const DTYPES: &[DType] = &[DType::F32, DType::I64, DType::U8];

pub fn cases() -> Vec<Case> {
    let i64_op = |op| Need::Op(op, Some(DType::I64));
    let gather = |case: Case| {
        case.dtypes(DTYPES)
            .op(OpCode::Take)
            .op(OpCode::Copy)
            .needs(i64_op(OpCode::Binary(BinaryOp::Multiply)))
            .needs(i64_op(OpCode::Binary(BinaryOp::Add)))
    };
    vec![
        gather(Case::new("indexing::integer_arrays", integer_arrays)).checks_indices(),
        gather(Case::new("indexing::uint64_indices_do_not_wrap", uint64_indices))
            .checks_indices()
            .op(OpCode::Fill)
            .needs(Need::DType(DType::U64))
            .needs(Need::Op(OpCode::Reduce(ReduceOp::Min), Some(DType::U64)))
            .needs(Need::Op(OpCode::Reduce(ReduceOp::Max), Some(DType::U64)))
            .needs(Need::Op(OpCode::Cast, Some(DType::U64))),
        gather(Case::new("indexing::boolean_masks", boolean_masks))
            .counts_nonzero()
            .needs(Need::Op(OpCode::Nonzero, Some(DType::Bool)))
            .needs(Need::Op(OpCode::Reduce(ReduceOp::Sum), Some(DType::I64)))
            .needs(Need::Op(OpCode::Cast, Some(DType::Bool))),
    ]
}

/// `0..n`, exact in every dtype the cases use.
fn ramp(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

fn integer_arrays(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let v = ramp(24);
    let x = r::array(&v, &[3, 4, 2], dtype, dev)?;
    // Shapes [2, 1] and [3] broadcast to [2, 3]; the last axis stays whole.
    let (rows, cols) = ([2i64, 0], [1i64, -1, 0]);
    let i0 = Array::from_slice(&rows, &[2, 1], dev)?;
    let i1 = Array::from_slice(&[1i32, -1, 0], &[3], dev)?;
    let mut want = Vec::new();
    for &a in &rows {
        for &b in &cols {
            let b = if b < 0 { b + 4 } else { b };
            for c in 0..2 {
                want.push(v[(a as usize * 4 + b as usize) * 2 + c]);
            }
        }
    }
    check_array("x[i0, i1]", &[2, 3, 2], &want, &x.index_arrays(&[&i0, &i1])?)?;
    // One array: whole rows, repeated and from the end.
    let picks = Array::from_slice(&[1i64, 1, -3], &[3], dev)?;
    let want: Vec<f64> = [1usize, 1, 0]
        .iter()
        .flat_map(|&a| v[a * 8..a * 8 + 8].to_vec())
        .collect();
    check_array("x[i]", &[3, 4, 2], &want, &x.index_arrays(&[&picks])?)?;
    // A 0-d index array drops its axis.
    let two = Array::from_slice(&[2i64], &[], dev)?;
    check_array("x[2-d array]", &[4, 2], &v[16..24], &x.index_arrays(&[&two])?)?;
    let bad = Array::from_slice(&[3i64], &[1], dev)?;
    expect_err("index 3 of 3", "IndexOutOfBounds", x.index_arrays(&[&bad]), |e| {
        matches!(e, Error::IndexOutOfBounds { index: 3, len: 3, .. })
    })?;
    expect_err(
        "four index arrays on 3-d",
        "InvalidArgument",
        x.index_arrays(&[&two; 4]),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    let pair = Array::from_slice(&[0i64, 1], &[2], dev)?;
    let triple = Array::from_slice(&[0i64, 1, 2], &[3], dev)?;
    expect_err(
        "shapes [2] and [3]",
        "ShapeMismatch",
        x.index_arrays(&[&pair, &triple]),
        |e| matches!(e, Error::ShapeMismatch { .. }),
    )?;
    let floats = r::array(&[0.0], &[1], DType::F32, dev)?;
    expect_err("float indices", "InvalidDType", x.index_arrays(&[&floats]), |e| {
        matches!(e, Error::InvalidDType { .. })
    })?;
    Ok(())
}

/// `uint64` indices past `i64::MAX` are out of range, not negative
/// positions counting from the end (`2^64 - 1` is not `-1`), in every
/// operation that takes integer indices; smaller ones index as usual.
fn uint64_indices(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let v = ramp(4);
    let x = r::array(&v, &[4], dtype, dev)?;
    let ok = Array::from_slice(&[3u64, 0], &[2], dev)?;
    check_array("x[u64 [3, 0]]", &[2], &[3.0, 0.0], &x.index_arrays(&[&ok])?)?;
    check_array(
        "take(x, u64 [3, 0])",
        &[2],
        &[3.0, 0.0],
        &anydev_array::take(&x, &ok, None)?,
    )?;
    for big in [u64::MAX, u64::MAX - 1, 1 << 63] {
        let bad = Array::from_slice(&[0, big], &[2], dev)?;
        let named = |e: &Error| matches!(e, Error::IndexOutOfBounds { index, len: 4, .. } if *index == i128::from(big));
        expect_err(
            format!("x[u64 {big}]"),
            "IndexOutOfBounds",
            x.index_arrays(&[&bad]),
            named,
        )?;
        expect_err(
            format!("take(x, u64 {big})"),
            "IndexOutOfBounds",
            anydev_array::take(&x, &bad, None),
            named,
        )?;
        expect_err(
            format!("take_along_axis(x, u64 {big})"),
            "IndexOutOfBounds",
            anydev_array::take_along_axis(&x, &bad, 0),
            named,
        )?;
        expect_err(
            format!("x[u64 {big}] = 1"),
            "IndexOutOfBounds",
            x.assign_arrays(&[&bad], 1),
            named,
        )?;
    }
    check_array("x after refused writes", &[4], &v, &x)
}

fn boolean_masks(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let v = ramp(24);
    let x = r::array(&v, &[3, 4, 2], dtype, dev)?;
    let flags: Vec<f64> = (0..12).map(|i| f64::from(i % 3 == 1 || i == 11)).collect();
    let mask = r::array(&flags, &[3, 4], DType::Bool, dev)?;
    let want: Vec<f64> = (0..12)
        .filter(|&i| flags[i] == 1.0)
        .flat_map(|i| [v[2 * i], v[2 * i + 1]])
        .collect();
    check_array(
        "x[mask of the first two axes]",
        &[want.len() / 2, 2],
        &want,
        &x.index_mask(&mask)?,
    )?;
    let rows = r::array(&[0.0, 1.0, 1.0], &[3], DType::Bool, dev)?;
    check_array("x[mask of rows]", &[2, 4, 2], &v[8..], &x.index_mask(&rows)?)?;
    let everywhere = r::array(&[1.0; 24], &[3, 4, 2], DType::Bool, dev)?;
    check_array("x[full mask]", &[24], &v, &x.index_mask(&everywhere)?)?;
    let nowhere = r::array(&[0.0; 3], &[3], DType::Bool, dev)?;
    check_array("x[all-false mask]", &[0, 4, 2], &[], &x.index_mask(&nowhere)?)?;
    for (flag, len) in [(1.0, 1), (0.0, 0)] {
        let scalar = r::array(&[flag], &[], DType::Bool, dev)?;
        let got = x.index_mask(&scalar)?;
        check_eq(
            format!("x[{}] shape", flag == 1.0),
            vec![len, 3, 4, 2],
            got.shape().to_vec(),
        )?;
    }
    let wrong = r::array(&[1.0; 4], &[4], DType::Bool, dev)?;
    expect_err(
        "mask of shape [4] on [3, 4, 2]",
        "ShapeMismatch",
        x.index_mask(&wrong),
        |e| matches!(e, Error::ShapeMismatch { .. }),
    )?;
    let ints = r::array(&[1.0, 0.0, 1.0], &[3], DType::I64, dev)?;
    expect_err("an integer mask", "InvalidDType", x.index_mask(&ints), |e| {
        matches!(e, Error::InvalidDType { .. })
    })?;
    Ok(())
}
