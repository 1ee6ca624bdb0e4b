//! Errors a device must report as errors: dtypes it lacks, ops it lacks,
//! memory it does not have.

use crate::case::{check, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference as r;
use anydev_array::{self as ad};
use anydev_core::{DType, Error};

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("errors::undeclared_dtypes_are_refused", undeclared_dtypes),
        Case::new("errors::out_of_memory_is_an_error", out_of_memory).needs(Need::MemoryLimit),
    ]
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
