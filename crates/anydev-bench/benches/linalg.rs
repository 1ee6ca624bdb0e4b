//! The `linalg` factorizations on `wgpu:0` against `cpu:0` (faer) in the
//! same run, on batches of small matrices, where the wgpu kernels run one
//! matrix per invocation in parallel (larger single matrices run on one
//! GPU thread there, and llvmpipe refuses them past about 20 x 20:
//! docs/semantics.md). Without a wgpu adapter only `cpu:0` is timed.
//!
//! `cargo bench -p anydev-bench --bench linalg`; results in
//! docs/performance.md.

use anydev::{Array, DType, Device};
use anydev_bench::{config, cpu, values};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;

/// `count` well-conditioned, symmetric positive definite `n x n` f32
/// matrices (`x xᵀ + n I`) on `device`.
fn spd(count: usize, n: usize, device: Device) -> Array {
    let x = anydev::from_vec(values(count * n * n, 7), &[count, n, n], cpu()).expect("input");
    let gram = x.matmul(&x.matrix_transpose().expect("transpose")).expect("x xᵀ");
    let shift = anydev::eye(n, None, 0, (DType::F32, cpu()))
        .and_then(|i| i.multiply(n as f64))
        .expect("n I");
    gram.add(&shift).and_then(|a| a.to_device(device)).expect("input")
}

/// A factorization, reduced to the one result read back.
type Factorization = fn(&Array) -> anydev::Result<Array>;

fn factorizations(c: &mut Criterion) {
    let devices: Vec<Device> = [cpu()]
        .into_iter()
        .chain(
            "wgpu:0"
                .parse::<Device>()
                .ok()
                .filter(|d| anydev::runtime().devices().contains(d)),
        )
        .collect();
    let mut group = c.benchmark_group("linalg f32");
    group.sample_size(10);
    for (count, n) in [(4096, 4), (256, 16)] {
        for device in &devices {
            let a = spd(count, n, *device);
            let size = format!("{count} x {n}x{n}");
            let ops: [(&str, Factorization); 4] = [
                ("inv", anydev::inv),
                ("cholesky", |a| anydev::cholesky(a, false)),
                ("eigh", |a| anydev::eigh(a).map(|(values, _)| values)),
                ("svd", |a| anydev::svd(a, false).map(|(_, s, _)| s)),
            ];
            for (name, op) in ops {
                group.bench_with_input(BenchmarkId::new(format!("{name} {device}"), &size), &a, |b, a| {
                    b.iter(|| op(black_box(a)).and_then(|y| y.to_vec::<f32>()).expect("runs"))
                });
            }
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = factorizations
}
criterion_main!(benches);
