//! Random arrays from counter-based generators: each device has its own
//! [`Generator`] (as each CUDA device has in PyTorch), which hands out
//! disjoint counter ranges, and the device fills the array with
//! Philox4x32-10 numbers for (seed, counter + i). A draw is a function of
//! the generator's state alone, so the same seed gives the same numbers on
//! every device and thread count.

use crate::array::Array;
use crate::context::{creation_placement, runtime};
use crate::creation::Spec;
use crate::dispatch::{alloc, execute};
use anydev_core::ops::{Distribution, Op};
use anydev_core::random::{Generator, RngState};
use anydev_core::{Device, Error, Result};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The generators made so far, and the seed a new one starts from.
struct Generators {
    seed: u64,
    by_device: Vec<(Device, Arc<Generator>)>,
}

/// Seed 0 until [`manual_seed`].
static GENERATORS: Mutex<Generators> = Mutex::new(Generators {
    seed: 0,
    by_device: Vec::new(),
});

fn generators() -> MutexGuard<'static, Generators> {
    // Updates are single assignments and pushes, consistent when poisoned.
    GENERATORS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The generator of `device`, made now from the process seed if new.
fn generator(device: Device) -> Arc<Generator> {
    let mut all = generators();
    if let Some((_, g)) = all.by_device.iter().find(|(d, _)| *d == device) {
        return Arc::clone(g);
    }
    let g = Arc::new(Generator::new(all.seed));
    all.by_device.push((device, Arc::clone(&g)));
    g
}

/// Restarts every device's random sequence from `seed`, those of devices
/// not used yet included (like `torch.manual_seed`).
pub fn manual_seed(seed: u64) {
    let mut all = generators();
    all.seed = seed;
    for (_, g) in &all.by_device {
        g.manual_seed(seed);
    }
}

/// Restarts `device`'s random sequence from `seed`; other devices keep
/// theirs (like `torch.cuda.manual_seed`). A device the runtime does not
/// serve is an error.
pub fn manual_seed_device(device: Device, seed: u64) -> Result<()> {
    served_generator(device)?.manual_seed(seed);
    Ok(())
}

/// `device`'s generator state, to hand back to [`set_rng_state`] later
/// and replay the same numbers. A device the runtime does not serve is
/// an error.
pub fn rng_state(device: Device) -> Result<RngState> {
    Ok(served_generator(device)?.state())
}

/// Sets `device`'s generator state, saved earlier with [`rng_state`]. A
/// device the runtime does not serve is an error.
pub fn set_rng_state(device: Device, state: RngState) -> Result<()> {
    served_generator(device)?.set_state(state);
    Ok(())
}

/// The generator of `device` once the runtime is found to serve it: a
/// misspelt device or one that is not there must be reported, not given
/// a generator nothing ever draws from.
fn served_generator(device: Device) -> Result<Arc<Generator>> {
    runtime().backend(device)?;
    Ok(generator(device))
}

fn random(op: &str, shape: &[usize], dist: Distribution, spec: Spec) -> Result<Array> {
    let (ctx, _memory) = creation_placement(op, &spec)?;
    let dtype = spec.dtype.unwrap_or(ctx.default_float());
    if !dtype.is_float() {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype,
            reason: "random numbers are drawn in floating-point dtypes; astype the result for integers".into(),
        });
    }
    let out = alloc(&ctx, dtype, shape)?;
    let (seed, counter) = generator(ctx.device).reserve(out.size() as u64);
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
