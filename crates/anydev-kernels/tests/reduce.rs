//! Reductions and scans against plain loops.

mod common;

use anydev_kernels::KernelError;
use anydev_ops::{Op, ReduceOp, ScanOp};
use common::*;
use half::f16;

/// Reduces `x` over `axes` into a fresh C-order output of type `O`.
fn reduce<T: Dt, O: Dt>(op: ReduceOp, x: &Arr<T>, axes: &[usize]) -> Result<Arr<O>, KernelError> {
    let shape: Vec<usize> = x
        .shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if axes.contains(&d) { 1 } else { n })
        .collect();
    let mut out = Arr::<O>::zeros(&shape);
    run(Op::Reduce {
        op,
        x: x.view(),
        axes,
        out: out.view_mut(),
    })?;
    Ok(out)
}

/// Reference: for each output position, the list of reduced values in
/// row-major order of the reduced axes.
fn groups<T: Dt>(x: &Arr<T>, axes: &[usize]) -> Vec<Vec<T>> {
    let out_shape: Vec<usize> = x
        .shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if axes.contains(&d) { 1 } else { n })
        .collect();
    let mut g = vec![Vec::new(); numel(&out_shape)];
    for i in 0..numel(&x.shape) {
        let idx = unravel(i, &x.shape);
        let oidx: Vec<usize> = idx
            .iter()
            .enumerate()
            .map(|(d, &v)| if axes.contains(&d) { 0 } else { v })
            .collect();
        let lin = oidx
            .iter()
            .zip(c_strides(&out_shape))
            .map(|(&v, s)| v as isize * s)
            .sum::<isize>() as usize;
        g[lin].push(x.get(&idx));
    }
    g
}

const AXES: [&[usize]; 8] = [&[], &[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2]];

#[test]
fn float_reductions_over_every_axis_set_and_layout() {
    let shape = [4usize, 5, 33];
    let n = numel(&shape);
    let mut rng = Rng(7);
    let vals: Vec<f64> = (0..n).map(|_| rng.float(-2.0, 2.0)).collect();
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &shape, layout);
        for axes in AXES {
            let g = groups(&x, axes);
            let sum = reduce::<f64, f64>(ReduceOp::Sum, &x, axes).unwrap().data;
            let prod = reduce::<f64, f64>(ReduceOp::Prod, &x, axes).unwrap().data;
            let max = reduce::<f64, f64>(ReduceOp::Max, &x, axes).unwrap().data;
            let min = reduce::<f64, f64>(ReduceOp::Min, &x, axes).unwrap().data;
            for (k, grp) in g.iter().enumerate() {
                let s: f64 = grp.iter().sum();
                let p: f64 = grp.iter().product();
                assert!(close(sum[k], s, 1e-12), "{layout:?} {axes:?} sum {} vs {s}", sum[k]);
                assert!(close(prod[k], p, 1e-12), "{layout:?} {axes:?} prod");
                assert_eq!(max[k], grp.iter().cloned().fold(f64::MIN, f64::max));
                assert_eq!(min[k], grp.iter().cloned().fold(f64::MAX, f64::min));
            }
        }
    }
}

#[test]
fn integer_reductions_wrap_and_bool_all_any() {
    let shape = [3usize, 40];
    let vals: Vec<i8> = (0..120).map(|i| (i * 37 % 256 - 128) as i8).collect();
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &shape, layout);
        for axes in [&[][..], &[0], &[1], &[0, 1]] {
            let g = groups(&x, axes);
            let sum = reduce::<i8, i8>(ReduceOp::Sum, &x, axes).unwrap().data;
            let prod = reduce::<i8, i8>(ReduceOp::Prod, &x, axes).unwrap().data;
            let max = reduce::<i8, i8>(ReduceOp::Max, &x, axes).unwrap().data;
            let all = reduce::<i8, bool>(ReduceOp::All, &x, axes).unwrap().data;
            let any = reduce::<i8, bool>(ReduceOp::Any, &x, axes).unwrap().data;
            for (k, grp) in g.iter().enumerate() {
                assert_eq!(sum[k], grp.iter().fold(0i8, |a, &b| a.wrapping_add(b)));
                assert_eq!(prod[k], grp.iter().fold(1i8, |a, &b| a.wrapping_mul(b)));
                assert_eq!(max[k], *grp.iter().max().unwrap());
                assert_eq!(all[k], grp.iter().all(|&v| v != 0));
                assert_eq!(any[k], grp.iter().any(|&v| v != 0));
            }
        }
    }
    let b = Arr::new(vec![true, false, true, true], &[2, 2]);
    assert_eq!(
        reduce::<bool, bool>(ReduceOp::All, &b, &[1]).unwrap().data,
        [false, true]
    );
    assert_eq!(
        reduce::<bool, bool>(ReduceOp::Any, &b, &[0]).unwrap().data,
        [true, true]
    );
    let f = Arr::new(vec![f32::NAN, -0.0], &[2]);
    assert_eq!(
        reduce::<f32, bool>(ReduceOp::Any, &f, &[0]).unwrap().data,
        [true],
        "NaN is truthy"
    );
    assert_eq!(
        reduce::<f32, bool>(ReduceOp::All, &f, &[0]).unwrap().data,
        [false],
        "-0.0 is falsy"
    );
}

#[test]
fn nan_propagates_through_min_max_and_argmin_argmax_pick_first() {
    let x = Arr::new(vec![3.0f32, 1.0, f32::NAN, 1.0, 7.0, 7.0, 0.0, 2.0], &[2, 4]);
    let max = reduce::<f32, f32>(ReduceOp::Max, &x, &[1]).unwrap().data;
    assert!(max[0].is_nan());
    assert_eq!(max[1], 7.0);
    let am = reduce::<f32, i64>(ReduceOp::ArgMax, &x, &[1]).unwrap().data;
    assert_eq!(am, [2, 0], "first NaN wins; ties keep the first");
    let an = reduce::<f32, i64>(ReduceOp::ArgMin, &x, &[1]).unwrap().data;
    assert_eq!(an, [2, 2]);
    let y = Arr::with_layout(&[5i32, 1, 1, 9, 5, 9, 0, 0, 9], &[3, 3], Layout::F);
    assert_eq!(reduce::<i32, i64>(ReduceOp::ArgMax, &y, &[0]).unwrap().data, [1, 1, 1]);
    assert_eq!(reduce::<i32, i64>(ReduceOp::ArgMin, &y, &[1]).unwrap().data, [1, 1, 0]);
    // Long axis (row-accumulation and chunked paths) with ties.
    let n = 300_000;
    let mut v = vec![0u16; n];
    v[123_456] = 9;
    v[200_000] = 9;
    let z = Arr::new(v.clone(), &[n]);
    assert_eq!(reduce::<u16, i64>(ReduceOp::ArgMax, &z, &[0]).unwrap().data, [123_456]);
    let cols = Arr::with_layout(&v, &[n / 20, 20], Layout::C);
    let got = reduce::<u16, i64>(ReduceOp::ArgMax, &cols, &[0]).unwrap().data;
    assert_eq!(got[123_456 % 20], (123_456 / 20) as i64);
    assert_eq!(got[0], (200_000 / 20) as i64);
    assert_eq!(got[1], 0, "all-equal column gives index 0");
}

#[test]
fn large_sums_are_accurate_and_pool_independent() {
    let n = 3_000_001;
    let mut rng = Rng(11);
    let vals: Vec<f32> = (0..n).map(|_| rng.float(0.0, 1.0) as f32).collect();
    let exact: f64 = vals.iter().map(|&v| v as f64).sum();
    let x = Arr::new(vals.clone(), &[n]);
    let mut bits = Vec::new();
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let s = pool.install(|| reduce::<f32, f32>(ReduceOp::Sum, &x, &[0]).unwrap().data[0]);
        assert!(((s as f64) - exact).abs() / exact < 1e-6, "{s} vs {exact}");
        bits.push(s.to_bits());
    }
    assert!(
        bits.windows(2).all(|w| w[0] == w[1]),
        "sum depends on the pool: {bits:?}"
    );
    // Column sums of a C-order matrix (non-last axis) and row sums.
    let m = Arr::new(vals[..1_000_000].to_vec(), &[1000, 1000]);
    let cols = reduce::<f32, f32>(ReduceOp::Sum, &m, &[0]).unwrap().data;
    let rows = reduce::<f32, f32>(ReduceOp::Sum, &m, &[1]).unwrap().data;
    for j in 0..1000 {
        let c: f64 = (0..1000).map(|i| vals[i * 1000 + j] as f64).sum();
        let r: f64 = (0..1000).map(|i| vals[j * 1000 + i] as f64).sum();
        assert!(close(cols[j] as f64, c, 1e-5) && close(rows[j] as f64, r, 1e-5));
    }
    // f16 accumulates in f32: 4096 ones sum exactly, which f16 addition cannot.
    let h = Arr::new(vec![f16::ONE; 4096], &[4096]);
    assert_eq!(
        reduce::<f16, f16>(ReduceOp::Sum, &h, &[0]).unwrap().data[0].to_f32(),
        4096.0
    );
}

/// NumPy's pairwise summation as the kernels document it, written out:
/// blocks of 512 summed across 32 lanes (lane `i % 32`, the lanes folded
/// by halving, the remainder added in order), and the block sums combined
/// as a tree that splits off the largest power of two.
fn documented_pairwise_sum(xs: &[f32]) -> f32 {
    fn tree(sums: &[f32]) -> f32 {
        match sums.len() {
            0 => 0.0,
            1 => sums[0],
            n => {
                let half = if n.is_power_of_two() { n / 2 } else { 1 << n.ilog2() };
                tree(&sums[..half]) + tree(&sums[half..])
            }
        }
    }
    let block = |b: &[f32]| {
        let mut lanes = [0f32; 32];
        let whole = b.len() / 32 * 32;
        for (i, &x) in b[..whole].iter().enumerate() {
            lanes[i % 32] += x;
        }
        let mut width = 32;
        while width > 1 {
            width /= 2;
            for l in 0..width {
                lanes[l] += lanes[l + width];
            }
        }
        b[whole..].iter().fold(lanes[0], |a, &x| a + x)
    };
    tree(&xs.chunks(512).map(block).collect::<Vec<_>>())
}

/// A sum long enough to be split into chunks over the pool is still one
/// pairwise sum: the chunks combine as a tree, not one after another
/// (which made the error of a sum of 1e7 copies of 0.1 grow 13-fold).
#[test]
fn split_sums_keep_the_pairwise_tree() {
    let n = (1 << 22) + 12_345;
    let mut rng = Rng(5);
    let random: Vec<f32> = (0..n).map(|_| rng.float(-1.0, 3.0) as f32).collect();
    for vals in [vec![0.1f32; n], random] {
        let want = documented_pairwise_sum(&vals);
        let x = Arr::new(vals.clone(), &[n]);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let got = pool.install(|| reduce::<f32, f32>(ReduceOp::Sum, &x, &[0]).unwrap().data[0]);
            assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}, {threads} threads");
        }
        let exact: f64 = vals.iter().map(|&v| v as f64).sum();
        assert!(((want as f64) - exact).abs() <= 2e-7 * exact.abs(), "{want} vs {exact}");
    }
}

/// Reductions whose elements are not one contiguous run (column sums,
/// strided walks, many short rows) fold in blocks combined as a tree, so
/// their error stays near a pairwise sum's: folded one after another, a
/// column sum of 2e6 copies of 0.1f32 was 1.5% off.
#[test]
fn sums_across_rows_and_strides_stay_accurate() {
    let tenth = 0.1f32;
    // (path, shape, reduced axes)
    let cases: [(&str, &[usize], &[usize]); 3] = [
        ("rows into accumulators", &[1 << 18, 16], &[0]),
        ("strided walk", &[1 << 18, 8], &[0]),
        ("contiguous rows", &[4096, 2, 256], &[0, 2]),
    ];
    for (path, shape, axes) in cases {
        let x = Arr::new(vec![tenth; numel(shape)], shape);
        let got = reduce::<f32, f32>(ReduceOp::Sum, &x, axes).unwrap().data;
        let per_output: usize = axes.iter().map(|&a| shape[a]).product();
        let exact = tenth as f64 * per_output as f64;
        for s in got {
            assert!(((s as f64) - exact).abs() <= 5e-7 * exact, "{path}: {s} vs {exact}");
        }
    }
}

#[test]
fn empty_reductions_give_identities_or_errors() {
    let e = Arr::<f32>::new(vec![], &[2, 0]);
    assert_eq!(reduce::<f32, f32>(ReduceOp::Sum, &e, &[1]).unwrap().data, [0.0, 0.0]);
    assert_eq!(reduce::<f32, f32>(ReduceOp::Prod, &e, &[1]).unwrap().data, [1.0, 1.0]);
    assert_eq!(reduce::<f32, bool>(ReduceOp::All, &e, &[1]).unwrap().data, [true, true]);
    assert_eq!(
        reduce::<f32, bool>(ReduceOp::Any, &e, &[1]).unwrap().data,
        [false, false]
    );
    assert!(matches!(
        reduce::<f32, f32>(ReduceOp::Max, &e, &[1]),
        Err(KernelError::Invalid(_))
    ));
    assert!(matches!(
        reduce::<f32, i64>(ReduceOp::ArgMin, &e, &[1]),
        Err(KernelError::Invalid(_))
    ));
    assert_eq!(
        reduce::<f32, f32>(ReduceOp::Sum, &e, &[0]).unwrap().data,
        Vec::<f32>::new()
    );
    let s = Arr::new(vec![4.5f64], &[]);
    assert_eq!(reduce::<f64, f64>(ReduceOp::Sum, &s, &[]).unwrap().data, [4.5]);
}

#[test]
fn malformed_reductions_are_invalid_and_bool_sum_unsupported() {
    let x = Arr::new(vec![1.0f32; 6], &[2, 3]);
    let mut out = Arr::<f32>::zeros(&[2, 1]);
    let bad = |axes: &[usize], out: &mut Arr<f32>| {
        run(Op::Reduce {
            op: ReduceOp::Sum,
            x: x.view(),
            axes,
            out: out.view_mut(),
        })
    };
    assert!(
        matches!(bad(&[0], &mut out), Err(KernelError::Invalid(_))),
        "wrong output shape"
    );
    assert!(
        matches!(bad(&[1, 1], &mut out), Err(KernelError::Invalid(_))),
        "repeated axis"
    );
    assert!(
        matches!(bad(&[5], &mut out), Err(KernelError::Invalid(_))),
        "axis out of range"
    );
    assert!(bad(&[1], &mut out).is_ok());
    let mut flat = Arr::<f32>::zeros(&[1, 1]);
    let r = run(Op::Reduce {
        op: ReduceOp::ArgMax,
        x: x.view(),
        axes: &[0, 1],
        out: flat.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let b = Arr::new(vec![true; 2], &[2]);
    assert!(matches!(
        reduce::<bool, bool>(ReduceOp::Sum, &b, &[0]),
        Err(KernelError::Unsupported { .. })
    ));
}

fn scan<T: Dt>(op: ScanOp, x: &Arr<T>, axis: usize, layout: Layout) -> Vec<T> {
    let mut out = Arr::with_layout(&vec![T::default(); numel(&x.shape)], &x.shape, layout);
    run(Op::Scan {
        op,
        x: x.view(),
        axis,
        out: out.view_mut(),
    })
    .unwrap();
    out.values()
}

#[test]
fn scans_along_every_axis_and_layout() {
    let shape = [3usize, 4, 17];
    let n = numel(&shape);
    let vals: Vec<i32> = (0..n as i32).map(|i| i * 7919 % 1000 - 500).collect();
    let fvals: Vec<f64> = vals.iter().map(|&v| v as f64 / 256.0).collect();
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &shape, layout);
        let xf = Arr::with_layout(&fvals, &shape, layout);
        for axis in 0..3 {
            let sum = scan(ScanOp::CumulativeSum, &x, axis, layout);
            let prod = scan(ScanOp::CumulativeProd, &x, axis, Layout::C);
            let fsum = scan(ScanOp::CumulativeSum, &xf, axis, Layout::Reversed);
            for i in 0..n {
                let mut idx = unravel(i, &shape);
                let upto = idx[axis];
                let (mut s, mut p, mut fs) = (0i32, 1i32, 0f64);
                for k in 0..=upto {
                    idx[axis] = k;
                    s = s.wrapping_add(x.get(&idx));
                    p = p.wrapping_mul(x.get(&idx));
                    fs += xf.get(&idx);
                }
                assert_eq!(sum[i], s, "{layout:?} axis {axis}");
                assert_eq!(prod[i], p);
                assert!(close(fsum[i], fs, 1e-12));
            }
        }
    }
    let e = Arr::<f32>::new(vec![], &[0, 3]);
    assert!(scan(ScanOp::CumulativeSum, &e, 0, Layout::C).is_empty());
    let b = Arr::new(vec![true], &[1]);
    let mut out = Arr::<bool>::zeros(&[1]);
    let r = run(Op::Scan {
        op: ScanOp::CumulativeSum,
        x: b.view(),
        axis: 0,
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Unsupported { .. })));
    let r = run(Op::Scan {
        op: ScanOp::CumulativeSum,
        x: e.view(),
        axis: 2,
        out: Arr::<f32>::zeros(&[0, 3]).view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
}
