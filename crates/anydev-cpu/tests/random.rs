//! The counter-based generator gives the same numbers for the same seed,
//! whatever the thread count and however the draw is split.

use anydev_core::backend::{allocate, Backend, TensorRef};
use anydev_core::ops::{Distribution, Op};
use anydev_core::random::Generator;
use anydev_core::{DType, Device, MemoryKind};
use anydev_cpu::CpuBackend;
use std::sync::Arc;

const N: usize = 300_000;

/// Draws `n` f32 normals with (seed, counter) on the CPU.
fn draw(cpu: &Arc<dyn Backend>, n: usize, seed: u64, counter: u64) -> Vec<u32> {
    let buffer = allocate(cpu, Device::cpu(), n * 4, MemoryKind::System).unwrap();
    let shape = [n];
    let strides = [1isize];
    let out = TensorRef {
        buffer: &buffer,
        offset: 0,
        dtype: DType::F32,
        shape: &shape,
        strides: &strides,
    };
    let op = Op::Random {
        out,
        dist: Distribution::Normal { mean: 0.0, std: 1.0 },
        seed,
        counter,
    };
    let stream = cpu.default_stream(0).unwrap();
    cpu.execute(&stream, &op).unwrap();
    let mut bytes = vec![0u8; n * 4];
    cpu.copy_to_host(&stream, &buffer, 0, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn same_seed_same_numbers_regardless_of_thread_count() {
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    let runs: Vec<Vec<u32>> = [1, 2, 4, 7]
        .iter()
        .map(|&threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| draw(&cpu, N, 42, 0))
        })
        .collect();
    for run in &runs[1..] {
        assert!(run == &runs[0], "thread count changed the numbers");
    }
    let other_seed = draw(&cpu, N, 43, 0);
    let differing = other_seed.iter().zip(&runs[0]).filter(|(a, b)| a != b).count();
    assert!(differing > N * 99 / 100, "another seed must give other numbers");
}

#[test]
fn a_draw_split_by_the_generator_equals_one_draw() {
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    let whole = draw(&cpu, 1000, 7, 0);
    let generator = Generator::new(7);
    let mut pieces = Vec::new();
    for n in [1usize, 99, 400, 500] {
        let (seed, counter) = generator.reserve(n as u64);
        pieces.extend(draw(&cpu, n, seed, counter));
    }
    assert_eq!(pieces, whole);
}
