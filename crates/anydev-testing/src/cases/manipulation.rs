//! Joining, repeating, rolling and copying strided views into new arrays.

use crate::case::{Case, CaseCtx, Failure};
use crate::reference::{self as r, check_array};
use anydev_array as ad;
use anydev_core::ops::OpCode;
use anydev_core::DType;

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("manipulation::concat_stack", concat_stack)
            .dtypes(&[DType::F32, DType::I64, DType::U8])
            .op(OpCode::Copy),
        Case::new("manipulation::repeat_tile_roll", repeat_tile_roll)
            .dtypes(&[DType::F32, DType::I32])
            .op(OpCode::Copy)
            .op(OpCode::Take),
        Case::new("manipulation::strided_copies", strided_copies)
            .dtypes(&[DType::F32, DType::F64, DType::I8])
            .op(OpCode::Copy),
    ]
}

fn concat_stack(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let a = r::array(&[1.0, 2.0, 3.0, 4.0], &[2, 2], dtype, ctx.device)?;
    let b = r::array(&[5.0, 6.0], &[1, 2], dtype, ctx.device)?;
    check_array(
        "concat axis 0",
        &[3, 2],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        &ad::concat(&[&a, &b], Some(0))?,
    )?;
    check_array(
        "concat flattened",
        &[6],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        &ad::concat(&[&a, &b], None)?,
    )?;
    let at = a.matrix_transpose()?;
    check_array(
        "stack axis 1",
        &[2, 2, 2],
        &[1.0, 2.0, 1.0, 3.0, 3.0, 4.0, 2.0, 4.0],
        &ad::stack(&[&a, &at], 1)?,
    )
}

fn repeat_tile_roll(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let x = r::array(&[1.0, 2.0, 3.0], &[3], dtype, ctx.device)?;
    check_array(
        "repeat 2",
        &[6],
        &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0],
        &ad::repeat(&x, 2usize, None)?,
    )?;
    check_array(
        "tile [2, 2]",
        &[2, 6],
        &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
        &ad::tile(&x, &[2, 2])?,
    )?;
    check_array("roll 1", &[3], &[3.0, 1.0, 2.0], &ad::roll(&x, &[1], ad::ALL)?)?;
    check_array("roll -4", &[3], &[2.0, 3.0, 1.0], &ad::roll(&x, &[-4], ad::ALL)?)
}

fn strided_copies(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let values = r::sample(dtype, 24, 5);
    let x = r::array(&values, &[2, 3, 4], dtype, ctx.device)?;
    // permute to [4, 2, 3], flip the middle axis, then copy to contiguous.
    let v = x.permute_dims(&[2, 0, 1])?.flip(1isize)?;
    let want: Vec<f64> = r::indices(&[4, 2, 3])
        .iter()
        .map(|i| values[((1 - i[1]) * 3 + i[2]) * 4 + i[0]])
        .collect();
    let c = v.as_contiguous()?;
    crate::case::check(
        c.is_contiguous(),
        "as_contiguous",
        "a contiguous array",
        "a strided one",
    )?;
    check_array("permuted, flipped copy", &[4, 2, 3], &want, &c)?;
    // reshape of a non-contiguous view copies.
    check_array("reshape of a strided view", &[24], &want, &v.reshape(&[-1])?)
}
