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
            .op(OpCode::Take)
            .op(OpCode::SearchSorted),
        Case::new("manipulation::extreme_slices", extreme_slices)
            .dtypes(&[DType::F32, DType::I64])
            .op(OpCode::Copy),
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

/// The positions `list(range(n))[start:stop:step]` selects, by Python's
/// rule (CPython's `PySlice_AdjustIndices`) in i128, where no bound or
/// step of `isize` overflows.
fn python_slice(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<usize> {
    let (n, step) = (n as i128, step as i128);
    let adjust = |v: Option<isize>, default: i128| match v.map(|v| v as i128) {
        None => default,
        Some(v) if v < 0 => (v + n).max(if step < 0 { -1 } else { 0 }),
        Some(v) => v.min(if step < 0 { n - 1 } else { n }),
    };
    let mut i = adjust(start, if step < 0 { n - 1 } else { 0 });
    let stop = adjust(stop, if step < 0 { -1 } else { n });
    let mut out = Vec::new();
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        i += step;
    }
    out
}

/// Slices whose bounds and steps are `isize`'s extremes select what
/// Python's slices select, and the resulting views slice and copy again.
fn extreme_slices(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let n = 20;
    let values: Vec<f64> = (0..n).map(|v| v as f64 * 3.0 - 7.0).collect();
    let x = r::array(&values, &[n], dtype, ctx.device)?;
    let (min, max) = (isize::MIN, isize::MAX);
    let specs = [
        (None, None, min),
        (None, None, max),
        (Some(1), None, min),
        (Some(3), None, max),
        (Some(min), Some(max), 1),
        (Some(max), Some(min), -1),
        (Some(max), Some(min), min),
        (Some(min), Some(max), max),
        (Some(-3), Some(min), -7),
        (Some(max - 1), None, -(max - 1)),
    ];
    for (start, stop, step) in specs {
        let arg = ad::SliceArg::Slice { start, stop, step };
        let picked = python_slice(n, start, stop, step);
        let want: Vec<f64> = picked.iter().map(|&i| values[i]).collect();
        let what = format!("x[{start:?}:{stop:?}:{step}]");
        let view = x.slice(&[arg])?;
        check_array(&what, &[want.len()], &want, &view)?;
        // The view sliced again with the same spec: Python's rule on the
        // view's length, composed.
        let again: Vec<f64> = python_slice(want.len(), start, stop, step)
            .iter()
            .map(|&i| want[i])
            .collect();
        check_array(&format!("{what} twice"), &[again.len()], &again, &view.slice(&[arg])?)?;
    }
    Ok(())
}
