//! Seedable generator state for counter-based random numbers.
//!
//! Numbers come from Philox4x32-10 keyed by a seed and indexed by a 64-bit
//! counter (the backends implement it in `Op::Random`). A [`Generator`]
//! only hands out disjoint counter ranges, so a draw of `n` numbers is a
//! pure function of (seed, start counter): the same on any thread count,
//! any device, and any chunking of the work.

use std::sync::atomic::{AtomicU64, Ordering};

/// A seed and the next unused counter.
#[derive(Debug)]
pub struct Generator {
    seed: AtomicU64,
    counter: AtomicU64,
}

impl Generator {
    pub const fn new(seed: u64) -> Generator {
        Generator {
            seed: AtomicU64::new(seed),
            counter: AtomicU64::new(0),
        }
    }

    /// Restarts the sequence from `seed`, like `torch.manual_seed`.
    pub fn manual_seed(&self, seed: u64) {
        self.seed.store(seed, Ordering::SeqCst);
        self.counter.store(0, Ordering::SeqCst);
    }

    /// Reserves `n` counters and returns `(seed, first counter)` for them.
    pub fn reserve(&self, n: u64) -> (u64, u64) {
        let start = self.counter.fetch_add(n, Ordering::SeqCst);
        (self.seed.load(Ordering::SeqCst), start)
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
}
