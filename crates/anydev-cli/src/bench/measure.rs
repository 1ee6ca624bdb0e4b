//! Timing one benchmark case honestly on any device.
//!
//! Async devices (wgpu, CUDA) return from an op call once the work is
//! queued, so every timed batch ends with a device synchronisation: the
//! time per call then covers the work itself, not just its submission. A
//! batch holds enough calls that timer resolution and the one
//! synchronisation are negligible, and the median over several batches
//! keeps a neighbour's compile burst on a shared machine out of the result.

use anydev::Result;
use std::time::{Duration, Instant};

/// How long to spend on one case.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Measured time per case (warm-up and calibration come on top).
    pub target: Duration,
    /// Batches whose median is reported, when calls are short enough.
    pub samples: usize,
}

/// The result of timing one case.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Median seconds per call over the batches.
    pub seconds: f64,
    /// Calls timed in all batches together (warm-up not counted).
    pub calls: usize,
}

/// Times `call` (one op, output dropped) with `sync` after every batch.
pub fn time(budget: Budget, call: &mut dyn FnMut() -> Result<()>, sync: &dyn Fn() -> Result<()>) -> Result<Timing> {
    // Warm-up: first-call costs (kernel compilation, page faults, pool
    // start-up) are not what a loop of calls pays.
    let once = batch(1, call, sync)?;
    let slice = budget.target.as_secs_f64() / budget.samples as f64;
    let mut per_batch = 1usize;
    let mut estimate = once;
    // Grow the batch until it fills its time slice (the estimate from the
    // growing batches also finishes the warm-up of cheap calls).
    while estimate * (per_batch as f64) < slice && per_batch < 1 << 24 {
        per_batch = (per_batch * 2)
            .max((slice / estimate.max(1e-9) / 2.0) as usize)
            .min(1 << 24);
        estimate = batch(per_batch, call, sync)?;
    }
    // Slow calls get fewer batches so one case stays near its budget, but
    // always at least one timed batch after the warm-up.
    let affordable = (budget.target.as_secs_f64() / (estimate * per_batch as f64)).floor() as usize;
    let samples = affordable.clamp(1, budget.samples);
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        times.push(batch(per_batch, call, sync)?);
    }
    Ok(Timing {
        seconds: median(&mut times),
        calls: samples * per_batch,
    })
}

/// Seconds per call over `n` calls followed by one synchronisation.
fn batch(n: usize, call: &mut dyn FnMut() -> Result<()>, sync: &dyn Fn() -> Result<()>) -> Result<f64> {
    let start = Instant::now();
    for _ in 0..n {
        call()?;
    }
    sync()?;
    Ok(start.elapsed().as_secs_f64() / n as f64)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    /// How many batches there are depends on how long the calls took (a
    /// busy machine gives fewer): what holds whatever the timing is that
    /// every batch ends with a synchronisation and the warm-up call is not
    /// counted.
    #[test]
    fn every_batch_is_synchronised_and_counted() {
        let calls = std::cell::Cell::new(0usize);
        let unsynchronised = std::cell::Cell::new(0usize);
        let batches = std::cell::Cell::new(0usize);
        let budget = Budget {
            target: Duration::from_millis(5),
            samples: 3,
        };
        let t = time(
            budget,
            &mut || {
                calls.set(calls.get() + 1);
                unsynchronised.set(unsynchronised.get() + 1);
                Ok(())
            },
            &|| {
                assert!(unsynchronised.get() > 0, "a synchronisation with no call before it");
                unsynchronised.set(0);
                batches.set(batches.get() + 1);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(unsynchronised.get(), 0, "the last batch was not synchronised");
        assert!(batches.get() >= 2, "the warm-up and at least one timed batch");
        assert!(
            t.calls >= 1 && t.calls < calls.get(),
            "{} timed of {}",
            t.calls,
            calls.get()
        );
        assert!(t.seconds >= 0.0);
    }
}
