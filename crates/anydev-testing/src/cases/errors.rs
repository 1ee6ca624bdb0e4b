//! Errors a device must report as errors: dtypes it lacks, ops it lacks,
//! memory it does not have.

use crate::case::{check, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference as r;
use anydev_array::{self as ad, SliceArg};
use anydev_core::ops::{OpCode, ScanOp};
use anydev_core::{DType, Error};

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("errors::undeclared_dtypes_are_refused", undeclared_dtypes),
        Case::new("errors::out_of_memory_is_an_error", out_of_memory).needs(Need::MemoryLimit),
        Case::new("errors::huge_sizes_are_refused_before_building", huge_sizes)
            .op(OpCode::Take)
            .op(OpCode::SearchSorted)
            .op(OpCode::Copy)
            .ops_for(
                DType::I64,
                &[
                    OpCode::Arange,
                    OpCode::Scan(ScanOp::CumulativeSum),
                    OpCode::SearchSorted,
                ],
            ),
        Case::new("errors::more_than_64_dimensions_are_refused", too_many_dims)
            .dtypes(&[DType::F32])
            .op(OpCode::Fill),
    ]
}

/// 64 dimensions, NumPy's limit, work on every device; 65 are refused
/// alike by every way of making them, before any kernel sees them.
fn too_many_dims(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let most = ad::full(&[1; 64], 1.5, (dtype, dev))?;
    check(most.ndim() == 64, "64 dimensions", 64, most.ndim())?;
    r::check_array("full(1 x 64, 1.5)", &[1; 64], &[1.5], &most)?;
    let flat = ad::zeros(&[2], (dtype, dev))?;
    let shape: Vec<usize> = std::iter::repeat_n(1, 64).chain([2]).collect();
    let signed: Vec<isize> = shape.iter().map(|&n| n as isize).collect();
    let attempts = [
        ("zeros of 65 dimensions", ad::zeros(&shape, (dtype, dev))),
        ("reshape to 65", flat.reshape(&signed)),
        ("broadcast_to 65", flat.broadcast_to(&shape)),
        ("expand_dims to 65", most.expand_dims(0)),
        ("a new axis to 65", most.slice(&[SliceArg::NewAxis, SliceArg::Ellipsis])),
    ];
    for (what, result) in attempts {
        let e = expect_err(what, "InvalidArgument", result, |e| {
            matches!(e, Error::InvalidArgument { .. })
        })?;
        check(
            e.to_string().contains("at most 64 dimensions"),
            format!("{what}: the message"),
            "at most 64 dimensions",
            e.to_string(),
        )?;
    }
    Ok(())
}

fn undeclared_dtypes(ctx: &CaseCtx) -> Result<(), Failure> {
    let caps = ctx.runtime.capabilities(ctx.device)?;
    for dtype in DType::ALL.into_iter().filter(|&d| !caps.supports_dtype(d)) {
        let e = expect_err(
            format!("zeros of undeclared dtype {dtype}"),
            "UnsupportedDType",
            ad::zeros(&[2], (dtype, ctx.device)),
            |e| matches!(e, Error::UnsupportedDType { .. }),
        )?;
        let text = e.to_string();
        check(
            text.contains(dtype.name()) && text.contains(&ctx.device.to_string()),
            "the message names the dtype and the device",
            format!("{dtype} and {}", ctx.device),
            text,
        )?;
    }
    Ok(())
}

fn out_of_memory(ctx: &CaseCtx) -> Result<(), Failure> {
    let backend = ctx.runtime.backend(ctx.device)?;
    let limit = backend.memory_stats(ctx.device.index())?.limit.unwrap_or(usize::MAX);
    let elements = limit / 4 + 1;
    let e = expect_err(
        format!("an array of {} bytes on a device limited to {limit}", elements * 4),
        "OutOfMemory",
        ad::zeros(&[elements], (DType::F32, ctx.device)),
        |e| matches!(e, Error::OutOfMemory { .. }),
    )?;
    check(
        e.to_string().contains(&ctx.device.to_string()),
        "the message names the device",
        ctx.device,
        e,
    )?;
    // The device still works afterwards.
    let x = r::array(&[1.0], &[1], DType::F32, ctx.device)?;
    r::check_array("a small array after OutOfMemory", &[1], &[1.0], &x)
}

/// Results too large for memory, or for `usize`, are an error before any
/// host or device memory is touched: never a "capacity overflow" panic,
/// an arithmetic overflow, or an abort from a failed host allocation.
fn huge_sizes(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = r::array(&[1.0, 2.0], &[2], DType::F32, ctx.device)?;
    let refused = |e: &Error| matches!(e, Error::OutOfMemory { .. } | Error::InvalidArgument { .. });
    let huge = 1usize << 61;
    let calls: [(&str, ad::Result<ad::Array>); 9] = [
        ("repeat by 2^61 each", ad::repeat(&x, huge, None)),
        ("repeat by usize::MAX each", ad::repeat(&x, usize::MAX, None)),
        ("repeat by [2^61, 2^61]", ad::repeat(&x, &[huge, huge][..], None)),
        ("repeat by [usize::MAX, 1]", ad::repeat(&x, &[usize::MAX, 1][..], None)),
        // 8 TiB of output: more than any device here has.
        ("repeat by [2^40, 0]", ad::repeat(&x, &[1 << 40, 0][..], None)),
        ("tile by [usize::MAX]", ad::tile(&x, &[usize::MAX])),
        ("broadcast_to [usize::MAX, 2]", x.broadcast_to(&[usize::MAX, 2])),
        ("zeros of [2^61, 8]", ad::zeros(&[huge, 8], (DType::F32, ctx.device))),
        (
            "linspace of usize::MAX values",
            ad::linspace(0.0, 1.0, usize::MAX, true, (DType::F32, ctx.device)),
        ),
    ];
    for (what, result) in calls {
        expect_err(what, "OutOfMemory or InvalidArgument", result, refused)?;
    }
    // The device still works afterwards.
    r::check_array(
        "repeat by [2, 1]",
        &[3],
        &[1.0, 1.0, 2.0],
        &ad::repeat(&x, &[2, 1][..], None)?,
    )
}
