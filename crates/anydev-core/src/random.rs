//! Seedable generator state for counter-based random numbers.
//!
//! Numbers come from Philox4x32-10 keyed by a seed and indexed by a 64-bit
//! counter (the backends implement it in `Op::Random`). A [`Generator`]
//! only hands out disjoint counter ranges, so a draw of `n` numbers is a
//! pure function of (seed, start counter): the same on any thread count,
//! any device, and any chunking of the work.

use serde::Serialize;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A generator's whole state: its seed and the next unused counter.
/// Saving it and setting it back later replays the same numbers, as
/// `torch.cuda.get_rng_state`/`set_rng_state` do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct RngState {
    pub seed: u64,
    pub counter: u64,
}

/// A seed and the next unused counter, changed together under one lock:
/// a draw on another thread sees the old state or the new one, never the
/// new seed with the old counter.
#[derive(Debug)]
pub struct Generator {
    state: Mutex<RngState>,
}

impl Generator {
    pub const fn new(seed: u64) -> Generator {
        Generator {
            state: Mutex::new(RngState { seed, counter: 0 }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, RngState> {
        // Every update is one assignment, so a poisoned lock holds a
        // consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Restarts the sequence from `seed`, like `torch.manual_seed`.
    pub fn manual_seed(&self, seed: u64) {
        *self.lock() = RngState { seed, counter: 0 };
    }

    /// Reserves `n` counters and returns `(seed, first counter)` for them.
    /// Counters wrap around after 2^64 numbers, as Philox's do.
    pub fn reserve(&self, n: u64) -> (u64, u64) {
        let mut state = self.lock();
        let start = state.counter;
        state.counter = start.wrapping_add(n);
        (state.seed, start)
    }

    pub fn state(&self) -> RngState {
        *self.lock()
    }

    pub fn set_state(&self, state: RngState) {
        *self.lock() = state;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_disjoint_and_reseeding_restarts() {
        let g = Generator::new(7);
        assert_eq!(g.reserve(10), (7, 0));
        assert_eq!(g.reserve(5), (7, 10));
        g.manual_seed(9);
        assert_eq!(g.reserve(1), (9, 0));
    }

    #[test]
    fn a_saved_state_replays_the_same_ranges() {
        let g = Generator::new(3);
        g.reserve(4);
        let saved = g.state();
        assert_eq!(saved, RngState { seed: 3, counter: 4 });
        let first = g.reserve(8);
        g.set_state(saved);
        assert_eq!(g.reserve(8), first);
    }
}
