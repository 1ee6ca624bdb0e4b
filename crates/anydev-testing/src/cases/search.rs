//! Sorting (NaN last, stable), searchsorted, nonzero, take, unique values.

use crate::case::{expect_err, Case, CaseCtx, Failure};
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, Order, Side};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp};
use anydev_core::DType;

/// The `i64` ops with which `take` checks its indices on the device: the
/// smallest and the largest, and the wrap of negative ones.
pub(crate) const TAKE_RANGE_CHECK: &[OpCode] = &[
    OpCode::Reduce(ReduceOp::Min),
    OpCode::Reduce(ReduceOp::Max),
    OpCode::Binary(BinaryOp::Less),
    OpCode::Binary(BinaryOp::Add),
    OpCode::Where,
];

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("search::sort_and_argsort", sort_and_argsort)
            .dtypes(&[DType::F32, DType::F64])
            .op(OpCode::Sort)
            .op(OpCode::Argsort)
            .needs(crate::Need::DType(DType::I64)),
        Case::new("search::sort_rows_and_columns", sort_rows_and_columns)
            .dtypes(&[DType::I32, DType::U8, DType::F16])
            .op(OpCode::Sort),
        Case::new("search::searchsorted", searchsorted)
            .dtypes(&[DType::F32, DType::I32])
            .op(OpCode::SearchSorted)
            .needs(crate::Need::DType(DType::I64)),
        Case::new("search::nonzero_take_unique", nonzero_take_unique)
            .needs(crate::Need::DType(DType::I32))
            .needs(crate::Need::Op(OpCode::Nonzero, Some(DType::I32)))
            .needs(crate::Need::Op(OpCode::Take, Some(DType::F32)))
            .needs(crate::Need::Op(OpCode::Sort, Some(DType::I32)))
            .ops_for(
                DType::I32,
                &[OpCode::Binary(BinaryOp::NotEqual), OpCode::Cast, OpCode::Take],
            )
            .ops_for(DType::I64, TAKE_RANGE_CHECK)
            .counts_nonzero()
            .ops_for(DType::I64, &[OpCode::Reduce(ReduceOp::Sum), OpCode::Copy])
            .ops_for(
                DType::Bool,
                &[OpCode::Cast, OpCode::Copy, OpCode::Fill, OpCode::Nonzero],
            ),
    ]
}

fn sort_and_argsort(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let x = r::array(&[3.0, f64::NAN, 1.0, 3.0, -2.0], &[5], dtype, ctx.device)?;
    check_array(
        "sort puts NaN last",
        &[5],
        &[-2.0, 1.0, 3.0, 3.0, f64::NAN],
        &x.sort(0, Order::Ascending)?,
    )?;
    check_array(
        "argsort is stable",
        &[5],
        &[4.0, 2.0, 0.0, 3.0, 1.0],
        &x.argsort(0, Order::Ascending)?,
    )?;
    let desc = x.argsort(-1, Order::Descending)?.to_f64_vec()?;
    crate::reference::check_close(
        "descending argsort after NaN",
        DType::I64,
        &[0.0, 3.0, 2.0, 4.0],
        &desc[1..],
    )
}

fn sort_rows_and_columns(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let m = r::array(&[3.0, 1.0, 2.0, 9.0, 8.0, 7.0], &[2, 3], dtype, ctx.device)?;
    check_array(
        "sort axis 0",
        &[2, 3],
        &[3.0, 1.0, 2.0, 9.0, 8.0, 7.0],
        &m.sort(0, Order::Ascending)?,
    )?;
    check_array(
        "sort axis 1",
        &[2, 3],
        &[1.0, 2.0, 3.0, 7.0, 8.0, 9.0],
        &m.sort(1, Order::Ascending)?,
    )?;
    check_array(
        "sort descending",
        &[2, 3],
        &[3.0, 2.0, 1.0, 9.0, 8.0, 7.0],
        &m.sort(1, Order::Descending)?,
    )
}

fn searchsorted(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let edges = r::array(&[1.0, 2.0, 2.0, 3.0], &[4], dtype, ctx.device)?;
    let v = r::array(&[2.0, 0.0, 5.0], &[3], dtype, ctx.device)?;
    check_array(
        "left",
        &[3],
        &[1.0, 0.0, 4.0],
        &ad::searchsorted(&edges, &v, Side::Left)?,
    )?;
    check_array(
        "right",
        &[3],
        &[3.0, 0.0, 4.0],
        &ad::searchsorted(&edges, &v, Side::Right)?,
    )?;
    let m = r::array(&[1.0; 4], &[2, 2], dtype, ctx.device)?;
    expect_err(
        "searchsorted into a 2-D array",
        "an error",
        ad::searchsorted(&m, &v, Side::Left),
        |_| true,
    )?;
    Ok(())
}

fn nonzero_take_unique(ctx: &CaseCtx) -> Result<(), Failure> {
    let nz = ad::nonzero(&r::array(&[0.0, 1.0, 2.0, 0.0], &[2, 2], DType::I32, ctx.device)?)?;
    crate::case::check_eq("nonzero returns one array per axis", 2, nz.len())?;
    check_array("nonzero rows", &[2], &[0.0, 1.0], &nz[0])?;
    check_array("nonzero columns", &[2], &[1.0, 0.0], &nz[1])?;
    let x = r::array(&[10.0, 20.0, 30.0], &[3], DType::F32, ctx.device)?;
    let idx = r::array(&[2.0, 0.0, 2.0, -1.0], &[4], DType::I64, ctx.device)?;
    check_array(
        "take with a negative index",
        &[4],
        &[30.0, 10.0, 30.0, 30.0],
        &x.take(&idx, None)?,
    )?;
    let out_of_range = r::array(&[3.0], &[1], DType::I64, ctx.device)?;
    expect_err("take out of range", "an error", x.take(&out_of_range, None), |_| true)?;
    let u = ad::unique_values(&r::array(&[3.0, 1.0, 3.0, 2.0, 1.0], &[5], DType::I32, ctx.device)?)?;
    check_array("unique_values", &[3], &[1.0, 2.0, 3.0], &u)
}
