//! anydev on `cpu:0` against ndarray, op by op and size by size, in one
//! run: add, multiply, divide, exp and sum of f32 vectors (throughput in
//! bytes read plus written, as `anydev bench` counts them) and square f32
//! matmuls (throughput in elements of the output). Output allocation is
//! part of every call on both sides.

use anydev_bench::{config, Pair, MATMUL_SIZES, SIZES};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ndarray::{Array1, Array2, Ix1, Ix2};
use std::hint::black_box;

/// One elementwise or reduction op in both libraries.
struct Case {
    name: &'static str,
    /// Arrays touched per call (inputs plus output), for the byte count.
    arrays: u64,
    anydev: fn(&anydev::Array, &anydev::Array) -> anydev::Array,
    ndarray: fn(&Array1<f32>, &Array1<f32>) -> Array1<f32>,
}

const CASES: [Case; 5] = [
    Case {
        name: "add",
        arrays: 3,
        anydev: |x, y| x.add(y).unwrap(),
        ndarray: |x, y| x + y,
    },
    Case {
        name: "multiply",
        arrays: 3,
        anydev: |x, y| x.multiply(y).unwrap(),
        ndarray: |x, y| x * y,
    },
    Case {
        name: "divide",
        arrays: 3,
        anydev: |x, y| x.divide(y).unwrap(),
        ndarray: |x, y| x / y,
    },
    Case {
        name: "exp",
        arrays: 2,
        anydev: |x, _| x.exp().unwrap(),
        ndarray: |x, _| x.mapv(f32::exp),
    },
    Case {
        name: "sum",
        arrays: 1,
        anydev: |x, _| x.sum(anydev::ALL, false).unwrap(),
        // A 0-d result would not fit the signature; one element is the same work.
        ndarray: |x, _| Array1::from_elem(1, x.sum()),
    },
];

fn elementwise(c: &mut Criterion) {
    for case in &CASES {
        let mut group = c.benchmark_group(case.name);
        for n in SIZES {
            let (x, y) = (Pair::new(&[n], 1), Pair::new(&[n], 2));
            let (nx, ny) = (vector(&x), vector(&y));
            group.throughput(Throughput::Bytes(case.arrays * n as u64 * 4));
            group.bench_with_input(BenchmarkId::new("anydev", n), &n, |b, _| {
                b.iter(|| (case.anydev)(black_box(&x.anydev), black_box(&y.anydev)))
            });
            group.bench_with_input(BenchmarkId::new("ndarray", n), &n, |b, _| {
                b.iter(|| (case.ndarray)(black_box(&nx), black_box(&ny)))
            });
        }
        group.finish();
    }
}

fn matmul(c: &mut Criterion) {
    let mut group = c.benchmark_group("matmul");
    group.sample_size(10);
    for n in MATMUL_SIZES {
        let (a, b) = (Pair::new(&[n, n], 1), Pair::new(&[n, n], 2));
        let (na, nb) = (matrix(&a), matrix(&b));
        // Multiply-adds per call; GFLOP/s is twice criterion's "elements/s".
        group.throughput(Throughput::Elements((n as u64).pow(3)));
        group.bench_with_input(BenchmarkId::new("anydev", n), &n, |bench, _| {
            bench.iter(|| black_box(&a.anydev).matmul(black_box(&b.anydev)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("ndarray", n), &n, |bench, _| {
            bench.iter(|| black_box(&na).dot(black_box(&nb)))
        });
    }
    group.finish();
}

fn vector(p: &Pair) -> Array1<f32> {
    p.ndarray.clone().into_dimensionality::<Ix1>().expect("a vector")
}

fn matrix(p: &Pair) -> Array2<f32> {
    p.ndarray.clone().into_dimensionality::<Ix2>().expect("a matrix")
}

criterion_group! {
    name = benches;
    config = config();
    targets = elementwise, matmul
}
criterion_main!(benches);
