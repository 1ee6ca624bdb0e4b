//! Random: reproducibility, counter offsets, pool independence, moments.

mod common;

use anydev_kernels::{philox, KernelError};
use anydev_ops::{Distribution, Op};
use common::*;
use half::f16;

fn draw<T: Dt>(shape: &[usize], dist: Distribution, seed: u64, counter: u64, layout: Layout) -> Vec<T> {
    let mut out = Arr::with_layout(&vec![T::default(); numel(shape)], shape, layout);
    run(Op::Random {
        out: out.view_mut(),
        dist,
        seed,
        counter,
    })
    .unwrap();
    out.values()
}

const U01: Distribution = Distribution::Uniform { low: 0.0, high: 1.0 };
const N01: Distribution = Distribution::Normal { mean: 0.0, std: 1.0 };

#[test]
fn same_seed_and_counter_give_same_numbers_in_any_layout() {
    let a = draw::<f64>(&[100, 7], U01, 42, 0, Layout::C);
    let b = draw::<f64>(&[100, 7], U01, 42, 0, Layout::F);
    let c = draw::<f64>(&[100, 7], U01, 43, 0, Layout::C);
    assert_eq!(a, b, "element i is row-major element i whatever the layout");
    assert_ne!(a, c);
    // Matches the public helper element by element.
    assert!(a
        .iter()
        .enumerate()
        .all(|(i, &v)| v == philox::uniform(42, 0, i as u64)));
}

#[test]
fn element_i_at_counter_c_is_element_i_plus_c_at_counter_zero() {
    for dist in [U01, N01] {
        let base = draw::<f32>(&[1000], dist, 7, 0, Layout::C);
        let shifted = draw::<f32>(&[900], dist, 7, 100, Layout::C);
        assert_eq!(&base[100..], &shifted[..]);
    }
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let n = 200_003;
    let mut runs = Vec::new();
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        runs.push(pool.install(|| {
            let u = draw::<f32>(&[n], U01, 99, 5, Layout::C);
            let z = draw::<f64>(&[n / 7, 7], N01, 99, 5, Layout::Reversed);
            (
                u.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                z.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            )
        }));
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

#[test]
fn moments_are_about_right() {
    let n = 400_000;
    let u = draw::<f64>(&[n], Distribution::Uniform { low: -2.0, high: 4.0 }, 1, 0, Layout::C);
    let mean = u.iter().sum::<f64>() / n as f64;
    let var = u.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
    assert!((mean - 1.0).abs() < 0.02, "{mean}");
    assert!((var - 3.0).abs() < 0.03, "{var}");
    assert!(u.iter().all(|&v| (-2.0..4.0).contains(&v)));
    let z = draw::<f32>(&[n], Distribution::Normal { mean: 3.0, std: 2.0 }, 2, 0, Layout::C);
    let mean = z.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    let var = z.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64;
    assert!((mean - 3.0).abs() < 0.02, "{mean}");
    assert!((var - 4.0).abs() < 0.06, "{var}");
    // Narrow types never reach the open upper bound.
    let h = draw::<f16>(&[n], Distribution::Uniform { low: 0.0, high: 1.0 }, 3, 0, Layout::C);
    assert!(h.iter().all(|v| v.to_f64() < 1.0 && v.to_f64() >= 0.0));
}

#[test]
fn bad_parameters_and_integer_outputs_are_refused() {
    let mut out = Arr::<f32>::zeros(&[4]);
    let r = run(Op::Random {
        out: out.view_mut(),
        dist: Distribution::Uniform { low: 1.0, high: 0.0 },
        seed: 0,
        counter: 0,
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let r = run(Op::Random {
        out: out.view_mut(),
        dist: Distribution::Normal {
            mean: 0.0,
            std: f64::NAN,
        },
        seed: 0,
        counter: 0,
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let mut i = Arr::<i32>::zeros(&[4]);
    let r = run(Op::Random {
        out: i.view_mut(),
        dist: U01,
        seed: 0,
        counter: 0,
    });
    assert!(matches!(r, Err(KernelError::Unsupported { .. })));
}
