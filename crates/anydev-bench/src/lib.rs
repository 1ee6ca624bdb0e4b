//! Shared inputs for the criterion benchmarks in `benches/`: the same f32
//! values as an anydev array on `cpu:0` and as an ndarray array, so both
//! libraries do identical work in the same run.
//!
//! Run them with `cargo bench -p anydev-bench`; results are written down in
//! `docs/performance.md`.

use anydev::{Array, DType, Device};
use criterion::Criterion;

/// Elements per input of the elementwise and reduction benchmarks.
pub const SIZES: [usize; 5] = [100, 10_000, 100_000, 1_000_000, 10_000_000];

/// `n` of the square f32 matmuls.
pub const MATMUL_SIZES: [usize; 3] = [64, 256, 1024];

/// The host device every benchmark runs on.
pub fn cpu() -> Device {
    "cpu:0".parse().expect("a valid device name")
}

/// `len` deterministic values in [0.5, 1.5): no overflow in `exp`, no
/// division by zero, and no denormals.
pub fn values(len: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            // xorshift32: cheap and good enough for benchmark inputs.
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            0.5 + (state >> 8) as f32 / (1u32 << 24) as f32
        })
        .collect()
}

/// The same values in both libraries, with `shape` (one or two dims).
pub struct Pair {
    pub anydev: Array,
    pub ndarray: ndarray::ArrayD<f32>,
}

impl Pair {
    pub fn new(shape: &[usize], seed: u32) -> Pair {
        let data = values(shape.iter().product(), seed);
        Pair {
            anydev: Array::from_slice(&data, shape, (DType::F32, cpu())).expect("cpu:0 holds f32"),
            ndarray: ndarray::ArrayD::from_shape_vec(shape, data).expect("the shape fits the data"),
        }
    }
}

/// Criterion settings that keep a full run to a few minutes on a 2-core
/// machine: short warm-up and measurement, enough samples for a median.
pub fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2))
        .sample_size(20)
}
