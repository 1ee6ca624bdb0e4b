//! `Random`: fills a float output from the Philox stream. Element `i`
//! (row-major) uses counter `counter + i`, so the result is independent
//! of thread count, chunking and device.

use crate::create::generate;
use crate::dispatch::with_float;
use crate::element::Float;
use crate::error::{invalid, KernelError};
use crate::iter::GRAIN_HEAVY;
use crate::philox;
use crate::tensor::HostTensor;
use anydev_ops::{Distribution, OpCode};

/// Runs `Random`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn random(out: &HostTensor, dist: Distribution, seed: u64, counter: u64) -> Result<(), KernelError> {
    match dist {
        Distribution::Uniform { low, high } if !(low.is_finite() && high.is_finite() && low <= high) => {
            return invalid(format!("uniform bounds [{low}, {high}) are not finite and ordered"));
        }
        Distribution::Normal { mean, std } if !(mean.is_finite() && std.is_finite() && std >= 0.0) => {
            return invalid(format!("normal mean {mean} / std {std} must be finite with std >= 0"));
        }
        _ => {}
    }
    let unsupported = Err(KernelError::Unsupported {
        op: OpCode::Random,
        dtype: out.dtype,
    });
    with_float!(
        out.dtype,
        |T| {
            let f = |first: usize, row: &mut [T]| fill_row(row, first as u64, dist, seed, counter);
            // SAFETY: forwarded from the caller.
            unsafe { generate::<T, _>(out, GRAIN_HEAVY, f) }
        },
        unsupported
    )
}

/// Writes elements `first..first + row.len()` of the stream.
fn fill_row<T: Float>(row: &mut [T], first: u64, dist: Distribution, seed: u64, counter: u64) {
    match dist {
        Distribution::Uniform { low, high } => {
            let (lo, span) = (T::from_f64(low), high - low);
            for (j, o) in row.iter_mut().enumerate() {
                let v = T::from_f64(low + span * philox::uniform(seed, counter, first + j as u64));
                // Rounding to a narrow type can reach `high`; the interval is half-open.
                *o = if v.to_f64() >= high && high > low {
                    v.next_after(lo)
                } else {
                    v
                };
            }
        }
        Distribution::Normal { mean, std } => {
            for (j, o) in row.iter_mut().enumerate() {
                *o = T::from_f64(mean + std * philox::normal(seed, counter, first + j as u64));
            }
        }
    }
}
