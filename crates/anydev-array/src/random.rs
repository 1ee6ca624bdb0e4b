//! Random arrays from the counter-based generator: one process-wide
//! [`Generator`] hands out disjoint counter ranges, and the device fills
//! the array with Philox4x32-10 numbers for (seed, counter + i), so a draw
//! is the same on every device and thread count.

use crate::array::Array;
use crate::context::creation_ctx;
use crate::creation::Spec;
use crate::dispatch::{alloc, execute};
use anydev_core::ops::{Distribution, Op};
use anydev_core::random::Generator;
use anydev_core::{Error, Result};

/// The process-wide generator; seed 0 until [`manual_seed`].
static GENERATOR: Generator = Generator::new(0);

/// Restarts the random sequence from `seed` (like `torch.manual_seed`).
pub fn manual_seed(seed: u64) {
    GENERATOR.manual_seed(seed);
}

fn random(op: &str, shape: &[usize], dist: Distribution, spec: Spec) -> Result<Array> {
    let ctx = creation_ctx(spec.device)?;
    let dtype = spec.dtype.unwrap_or(ctx.default_float());
    if !dtype.is_float() {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype,
            reason: "random numbers are drawn in floating-point dtypes; astype the result for integers".into(),
        });
    }
    let out = alloc(&ctx, dtype, shape)?;
    let (seed, counter) = GENERATOR.reserve(out.size() as u64);
    execute(
        &ctx,
        &Op::Random {
            out: out.tensor_ref(),
            dist,
            seed,
            counter,
        },
    )?;
    Ok(out)
}

/// Uniform numbers on `[low, high)` (default dtype: the device's default float).
pub fn random_uniform(shape: &[usize], low: f64, high: f64, spec: impl Into<Spec>) -> Result<Array> {
    if !(low.is_finite() && high.is_finite() && low < high) {
        return Err(Error::invalid_argument(
            "random_uniform",
            format!("needs finite low < high, got [{low}, {high})"),
        ));
    }
    random(
        "random_uniform",
        shape,
        Distribution::Uniform { low, high },
        spec.into(),
    )
}

/// Normal numbers with `mean` and standard deviation `std` (default dtype: the device's default float).
pub fn random_normal(shape: &[usize], mean: f64, std: f64, spec: impl Into<Spec>) -> Result<Array> {
    if !(mean.is_finite() && std.is_finite() && std >= 0.0) {
        return Err(Error::invalid_argument(
            "random_normal",
            format!("needs a finite mean and std >= 0, got {mean} and {std}"),
        ));
    }
    random("random_normal", shape, Distribution::Normal { mean, std }, spec.into())
}
