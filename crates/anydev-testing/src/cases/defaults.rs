//! Default dtypes belong to the device (design section 14): they follow
//! its declared dtypes, and creation without a dtype uses them, whatever
//! the device. (On a device without `f64` these checks are what make
//! `zeros(shape)` work at all; the simulator with `f64` refused covers
//! that in `plugins/sim/tests/arrays.rs`.)

use crate::case::{check_eq, Case, CaseCtx, Failure, Need};
use anydev_array::{self as ad, Array, DefaultDTypes};
use anydev_core::ops::OpCode;
use anydev_core::{with_device, DType};

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("defaults::follow_the_declared_dtypes", follow_the_declared_dtypes),
        // Declared for f64 and i64, the defaults of a device that has them;
        // a device without f64 (f32 defaults) is covered by the simulator's
        // own test with f64 refused (plugins/sim/tests/arrays.rs).
        Case::new("defaults::creation_without_a_dtype_uses_them", creation_uses_them)
            .needs(Need::Op(OpCode::Fill, Some(DType::F64)))
            .needs(Need::Op(OpCode::Arange, Some(DType::F64)))
            .needs(Need::Op(OpCode::Fill, Some(DType::I64)))
            .needs(Need::Op(OpCode::Arange, Some(DType::I64))),
    ]
}

/// The expected defaults, from the capabilities alone.
fn expected(ctx: &CaseCtx) -> Result<DefaultDTypes, Failure> {
    let caps = ctx.runtime.capabilities(ctx.device)?;
    let pick = |wide, narrow| if caps.supports_dtype(wide) { wide } else { narrow };
    Ok(DefaultDTypes {
        real_floating: pick(DType::F64, DType::F32),
        complex_floating: pick(DType::C128, DType::C64),
        integral: pick(DType::I64, DType::I32),
        indexing: DType::I64,
    })
}

fn follow_the_declared_dtypes(ctx: &CaseCtx) -> Result<(), Failure> {
    let want = expected(ctx)?;
    check_eq("default_dtypes(device)", want, ad::default_dtypes(Some(ctx.device))?)?;
    // Without a device: the scope's.
    let scoped = with_device(ctx.device, || ad::default_dtypes(None))?;
    check_eq("default_dtypes(None) in the device's scope", want, scoped)
}

fn creation_uses_them(ctx: &CaseCtx) -> Result<(), Failure> {
    let want = expected(ctx)?;
    let (float, int, dev) = (want.real_floating, want.integral, ctx.device);
    let made: [(&str, Array, DType, Vec<f64>); 8] = [
        ("zeros", ad::zeros(&[3], dev)?, float, vec![0.0; 3]),
        ("ones", ad::ones(&[2], dev)?, float, vec![1.0; 2]),
        ("full of a float", ad::full(&[2], 2.5, dev)?, float, vec![2.5; 2]),
        ("full of an int", ad::full(&[2], 7, dev)?, int, vec![7.0; 2]),
        ("arange of ints", ad::arange(0, 3, 1, dev)?, int, vec![0.0, 1.0, 2.0]),
        (
            "arange of floats",
            ad::arange(0.0, 1.0, 0.5, dev)?,
            float,
            vec![0.0, 0.5],
        ),
        (
            "linspace",
            ad::linspace(0.0, 1.0, 3, true, dev)?,
            float,
            vec![0.0, 0.5, 1.0],
        ),
        ("empty", ad::empty(&[0], dev)?, float, vec![]),
    ];
    for (what, array, dtype, values) in made {
        check_eq(format!("{what}: dtype"), dtype, array.dtype())?;
        check_eq(format!("{what}: device"), dev, array.device())?;
        check_eq(format!("{what}: values"), values, array.to_f64_vec()?)?;
    }
    Ok(())
}
