//! Matmul against a naive triple loop.

mod common;

use anydev_kernels::KernelError;
use anydev_ops::Op;
use common::*;
use half::{bf16, f16};

/// Naive reference over (batch, m, k) x (batch, k, n) in f64 via `get`.
fn naive<T: Dt>(a: &Arr<T>, b: &Arr<T>) -> Vec<f64> {
    let nd = a.shape.len();
    let (m, k, n) = (a.shape[nd - 2], a.shape[nd - 1], b.shape[nd - 1]);
    let batch: Vec<usize> = a.shape[..nd - 2].to_vec();
    let mut out = Vec::new();
    let (mut ia, mut ib) = (vec![0; nd], vec![0; nd]);
    for bi in 0..numel(&batch) {
        let bidx = unravel(bi, &batch);
        ia[..nd - 2].copy_from_slice(&bidx);
        ib[..nd - 2].copy_from_slice(&bidx);
        for i in 0..m {
            for j in 0..n {
                let mut s = 0f64;
                for p in 0..k {
                    (ia[nd - 2], ia[nd - 1], ib[nd - 2], ib[nd - 1]) = (i, p, p, j);
                    s += a.get(&ia).f() * b.get(&ib).f();
                }
                out.push(s);
            }
        }
    }
    out
}

fn mm<T: Dt>(a: &Arr<T>, b: &Arr<T>, out_layout: Layout) -> Result<Vec<T>, KernelError> {
    let nd = a.shape.len();
    let mut shape = a.shape.clone();
    shape[nd - 1] = b.shape[nd - 1];
    let mut out = Arr::with_layout(&vec![T::default(); numel(&shape)], &shape, out_layout);
    run(Op::Matmul {
        a: a.view(),
        b: b.view(),
        out: out.view_mut(),
    })?;
    Ok(out.values())
}

fn check<T: Dt>(to: fn(f64) -> T, tol: f64) {
    let mut rng = Rng(3);
    for (m, k, n) in [(1, 1, 1), (3, 5, 2), (17, 31, 9), (20, 40, 33), (4, 0, 3), (0, 3, 2)] {
        let av: Vec<T> = (0..2 * m * k).map(|_| to(rng.int(-4, 5) as f64)).collect();
        let bv: Vec<T> = (0..2 * k * n).map(|_| to(rng.int(-4, 5) as f64)).collect();
        for la in LAYOUTS {
            for lb in [Layout::C, Layout::F, Layout::Reversed] {
                let a = Arr::with_layout(&av, &[2, m, k], la);
                let b = Arr::with_layout(&bv, &[2, k, n], lb);
                let want = naive(&a, &b);
                let got = mm(&a, &b, if la == Layout::F { Layout::F } else { Layout::C }).unwrap();
                for (g, w) in got.iter().zip(&want) {
                    // Integers wrap: compare with the reference wrapped the same way.
                    let w = &if tol == 0.0 { to(*w).f() } else { *w };
                    assert!(
                        close(g.f(), *w, tol),
                        "{:?} {m}x{k}x{n} {la:?} {lb:?}: {} vs {w}",
                        T::DT,
                        g.f()
                    );
                }
            }
        }
    }
}

#[test]
fn every_numeric_dtype_matches_the_naive_product() {
    check::<f64>(|v| v, 1e-12);
    check::<f32>(|v| v as f32, 1e-5);
    check::<f16>(f16::from_f64, 1e-2);
    check::<bf16>(bf16::from_f64, 1e-2);
    check::<i32>(|v| v as i64 as i32, 0.0);
    check::<i64>(|v| v as i64, 0.0);
    check::<i8>(|v| v as i64 as i8, 0.0);
    check::<u16>(|v| v as i64 as u16, 0.0);
}

#[test]
fn batched_with_broadcast_batch_and_transposed_strides() {
    let (m, k, n) = (5, 7, 3);
    let mut rng = Rng(5);
    let av: Vec<f32> = (0..m * k).map(|_| rng.float(-1.0, 1.0) as f32).collect();
    let bv: Vec<f32> = (0..4 * k * n).map(|_| rng.float(-1.0, 1.0) as f32).collect();
    // `a` is one matrix broadcast over a batch of 4 (zero batch stride).
    let a = Arr::broadcast(av.clone(), &[m, k], &[4, m, k]);
    // `b` is stored as [4, n, k] and viewed transposed.
    let mut b = Arr::new(bv.clone(), &[4, n, k]);
    b.shape = vec![4, k, n];
    b.strides = vec![(n * k) as isize, 1, k as isize];
    let got = mm(&a, &b, Layout::C).unwrap();
    let want = naive(&a, &b);
    for (g, w) in got.iter().zip(&want) {
        assert!(close(*g as f64, *w, 1e-5));
    }
    // Integers wrap.
    let x = Arr::new(vec![100i8, 100], &[1, 2]);
    let y = Arr::new(vec![2i8, 1], &[2, 1]);
    assert_eq!(mm(&x, &y, Layout::C).unwrap(), [(300i32 as i8).wrapping_add(0)]);
}

#[test]
fn large_product_runs_parallel_and_matches() {
    let (m, k, n) = (150, 200, 130);
    let mut rng = Rng(9);
    let av: Vec<f64> = (0..m * k).map(|_| rng.float(-1.0, 1.0)).collect();
    let bv: Vec<f64> = (0..k * n).map(|_| rng.float(-1.0, 1.0)).collect();
    let a = Arr::new(av.clone(), &[m, k]);
    let b = Arr::new(bv.clone(), &[k, n]);
    let want = naive(&a, &b);
    for threads in [1, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let got = pool.install(|| mm(&a, &b, Layout::C).unwrap());
        assert!(got.iter().zip(&want).all(|(g, w)| close(*g, *w, 1e-10)));
        let ai = Arr::new(av.iter().map(|v| (v * 10.0) as i32).collect(), &[m, k]);
        let bi = Arr::new(bv.iter().map(|v| (v * 10.0) as i32).collect(), &[k, n]);
        let wi = naive(&ai, &bi);
        let gi = pool.install(|| mm(&ai, &bi, Layout::C).unwrap());
        assert!(gi.iter().zip(&wi).all(|(g, w)| *g as f64 == *w));
    }
}

#[test]
fn bad_shapes_and_bool_are_refused() {
    let a = Arr::new(vec![1.0f32; 6], &[2, 3]);
    let b = Arr::new(vec![1.0f32; 6], &[2, 3]);
    let mut out = Arr::<f32>::zeros(&[2, 3]);
    let r = run(Op::Matmul {
        a: a.view(),
        b: b.view(),
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let v = Arr::new(vec![1.0f32; 3], &[3]);
    let mut o1 = Arr::<f32>::zeros(&[]);
    let r = run(Op::Matmul {
        a: v.view(),
        b: v.view(),
        out: o1.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let t = Arr::new(vec![true; 4], &[2, 2]);
    let mut bo = Arr::<bool>::zeros(&[2, 2]);
    let r = run(Op::Matmul {
        a: t.view(),
        b: t.view(),
        out: bo.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Unsupported { .. })));
}
