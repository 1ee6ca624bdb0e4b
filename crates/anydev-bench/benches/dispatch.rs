//! The fixed cost of one small op, end to end from Rust: validation,
//! placement, promotion, output allocation on the device, the backend call
//! and the kernel. The target (issue 3) is a 100-element f32 add under 1 µs,
//! output allocation included; ndarray's add of the same vectors shows
//! what the arithmetic and allocation alone cost.

use anydev_bench::{config, Pair};
use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::Ix1;
use std::hint::black_box;

fn small_ops(c: &mut Criterion) {
    let (x, y) = (Pair::new(&[100], 1), Pair::new(&[100], 2));
    let (nx, ny) = (
        x.ndarray.clone().into_dimensionality::<Ix1>().unwrap(),
        y.ndarray.clone().into_dimensionality::<Ix1>().unwrap(),
    );
    let one = Pair::new(&[1], 3);
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("anydev add 100", |b| {
        b.iter(|| black_box(&x.anydev).add(black_box(&y.anydev)).unwrap())
    });
    group.bench_function("ndarray add 100", |b| b.iter(|| black_box(&nx) + black_box(&ny)));
    // Pure dispatch: one element leaves nothing but the fixed cost.
    group.bench_function("anydev add 1", |b| {
        b.iter(|| black_box(&one.anydev).add(black_box(&one.anydev)).unwrap())
    });
    // The array-scalar form: promotion of a weak scalar, no device array for it.
    group.bench_function("anydev add scalar 100", |b| {
        b.iter(|| black_box(&x.anydev).add(black_box(1.0f32)).unwrap())
    });
    group.bench_function("anydev exp 100", |b| b.iter(|| black_box(&x.anydev).exp().unwrap()));
    group.bench_function("anydev sum 100", |b| {
        b.iter(|| black_box(&x.anydev).sum(anydev::ALL, false).unwrap())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = small_ops
}
criterion_main!(benches);
