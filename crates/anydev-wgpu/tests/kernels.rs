//! Reductions, scans, matmul, sorting, searching, take, nonzero and
//! random numbers against references computed in the test.

mod common;

use anydev_core::ops::{Distribution, Op, ReduceOp, ScanOp};
use anydev_core::DType;
use common::*;

/// Reference reduction of the values `xs` (in order).
fn reduce_ref(op: ReduceOp, xs: &[f64]) -> f64 {
    match op {
        ReduceOp::Sum => xs.iter().sum(),
        ReduceOp::Prod => xs.iter().product(),
        ReduceOp::Max => xs
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, |a, b| if a.is_nan() || a >= b { a } else { b }),
        ReduceOp::Min => xs
            .iter()
            .copied()
            .fold(f64::INFINITY, |a, b| if a.is_nan() || a <= b { a } else { b }),
        ReduceOp::All => xs.iter().all(|&v| v != 0.0) as u8 as f64,
        ReduceOp::Any => xs.iter().any(|&v| v != 0.0) as u8 as f64,
        ReduceOp::ArgMax | ReduceOp::ArgMin => {
            let mut best = 0;
            for (i, &v) in xs.iter().enumerate() {
                let b = xs[best];
                let better = if b.is_nan() {
                    false
                } else if v.is_nan() {
                    true
                } else if op == ReduceOp::ArgMax {
                    v > b
                } else {
                    v < b
                };
                if better {
                    best = i;
                }
            }
            best as f64
        }
    }
}

/// Every reduction over several axis sets, on a reversed 3-D input, for
/// shapes that take both the per-thread and the per-workgroup kernel.
#[test]
fn reductions_over_any_axes_match_loops() {
    let g = gpu_or_skip!();
    let mut rng = Rng(1);
    for (shape, axes_list) in [
        (
            vec![3usize, 4, 5],
            vec![vec![0usize], vec![2], vec![0, 2], vec![0, 1, 2]],
        ),
        (vec![2, 700, 3], vec![vec![1], vec![0, 1]]),
        // Few outputs of many elements: split into partial results.
        (vec![3, 9000], vec![vec![1], vec![0, 1]]),
        (vec![4, 0, 2], vec![vec![1]]),
    ] {
        let n: usize = shape.iter().product();
        for dtype in [
            DType::F32,
            DType::F64,
            DType::F16,
            DType::I32,
            DType::U8,
            DType::I64,
            DType::Bool,
        ] {
            if !g.holds(dtype) {
                continue;
            }
            let mut x: Vec<f64> = (0..n).map(|_| (rng.uniform(-4.0, 4.0)).round()).collect();
            if dtype == DType::Bool {
                x.iter_mut().for_each(|v| *v = (*v > 0.0) as u8 as f64);
            } else if dtype == DType::U8 {
                x.iter_mut().for_each(|v| *v = v.abs());
            }
            if dtype.is_float() && n > 7 {
                x[7] = f64::NAN;
            }
            let xv = View::reversed(&shape);
            let xb = g.upload(&xv.place(dtype, &x));
            for axes in &axes_list {
                for op in [
                    ReduceOp::Sum,
                    ReduceOp::Prod,
                    ReduceOp::Max,
                    ReduceOp::Min,
                    ReduceOp::All,
                    ReduceOp::Any,
                    ReduceOp::ArgMax,
                    ReduceOp::ArgMin,
                ] {
                    let arg = matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin);
                    let empty = axes.iter().any(|&a| shape[a] == 0);
                    if (arg && axes.len() != 1) || (empty && (arg || matches!(op, ReduceOp::Max | ReduceOp::Min))) {
                        continue;
                    }
                    if !g.backend.supports(0, anydev_core::ops::OpCode::Reduce(op), dtype) {
                        assert_eq!(dtype, DType::Bool, "{op} must be supported for {dtype}");
                        continue;
                    }
                    let out_dtype = match op {
                        ReduceOp::All | ReduceOp::Any => DType::Bool,
                        _ if arg => DType::I64,
                        _ => dtype,
                    };
                    let mut out_shape = shape.clone();
                    axes.iter().for_each(|&a| out_shape[a] = 1);
                    let ov = View::gapped(&out_shape);
                    let out = g.alloc(ov.len * out_dtype.size());
                    g.run(&Op::Reduce {
                        op,
                        x: xv.tensor(&xb, dtype),
                        axes,
                        out: ov.tensor(&out, out_dtype),
                    })
                    .unwrap();
                    let got = ov.gather(&decode(out_dtype, &g.download(&out)));
                    // Reference: group the logical elements by output coordinate.
                    let out_n: usize = out_shape.iter().product();
                    let mut groups = vec![Vec::new(); out_n];
                    for (i, &xi) in x.iter().enumerate() {
                        groups[reduced_index(i, &shape, &out_shape)].push(round_to(dtype, xi));
                    }
                    for (o, group) in groups.iter().enumerate() {
                        let want = if dtype.is_integer() && matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
                            // Integers wrap: fold exactly in i128, wrapping at each step.
                            let fold = |a: i128, v: &f64| {
                                let v = *v as i128;
                                wrap(dtype, if op == ReduceOp::Sum { a + v } else { a.wrapping_mul(v) })
                            };
                            group.iter().fold((op == ReduceOp::Prod) as i128, fold) as f64
                        } else {
                            round_to(out_dtype, reduce_ref(op, group))
                        };
                        let ulps = if matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
                            64.0
                        } else {
                            0.0
                        };
                        assert!(
                            close(out_dtype, got[o], want, ulps),
                            "{op} {dtype} {shape:?} axes {axes:?} out {o}: got {} want {want}",
                            got[o]
                        );
                    }
                }
            }
        }
    }
}

/// Whole-array reductions of contiguous 4-byte operands take the `vec4`
/// form of the split reduction; lengths that are and are not multiples
/// of four, and a view that starts one element in (the scalar form).
#[test]
fn whole_array_reductions_of_contiguous_operands() {
    let g = gpu_or_skip!();
    let mut rng = Rng(7);
    for n in [8192usize, 9003, 20_001] {
        for start in [0usize, 1] {
            for dtype in [DType::F32, DType::I32, DType::U32] {
                // Zeros only in the odd lengths, so that `all` is true once.
                let low = (n % 2) as f64;
                let x: Vec<f64> = (0..start + n).map(|_| rng.uniform(low, 9.0).round()).collect();
                let xb = g.upload(&encode(dtype, &x));
                let values = &x[start..];
                for op in [
                    ReduceOp::Sum,
                    ReduceOp::Max,
                    ReduceOp::Min,
                    ReduceOp::All,
                    ReduceOp::Any,
                ] {
                    let out_dtype = if matches!(op, ReduceOp::All | ReduceOp::Any) {
                        DType::Bool
                    } else {
                        dtype
                    };
                    let out = g.alloc(out_dtype.size());
                    g.run(&Op::Reduce {
                        op,
                        x: tensor(&xb, dtype, &[n], &[1], start),
                        axes: &[0],
                        out: tensor(&out, out_dtype, &[1], &[1], 0),
                    })
                    .unwrap();
                    let got = decode(out_dtype, &g.download(&out))[0];
                    assert_eq!(got, reduce_ref(op, values), "{op} of {n} {dtype} from element {start}");
                }
            }
        }
    }
}

/// Long float sums in every kernel form stay close to the exact sum of
/// what is stored: 0.1f32 added up one value after another in each thread
/// drifted by up to 2.3e-5 (relative) at 1e7 elements.
#[test]
fn long_float_sums_keep_their_rounding_error_small() {
    let g = gpu_or_skip!();
    let tenth = 0.1f32 as f64;
    const N: usize = (1 << 21) + 3;
    let xb = g.upload(&encode(DType::F32, &vec![tenth; N + 1]));
    // The form, then the operand's shape, strides and element offset, and
    // the reduced axes.
    type Case = (
        &'static str,
        &'static [usize],
        &'static [isize],
        usize,
        &'static [usize],
    );
    let cases: [Case; 4] = [
        ("vector split", &[N], &[1], 0, &[0]),
        ("scalar split", &[N], &[1], 1, &[0]),
        ("thread per output", &[16_384, 128], &[128, 1], 0, &[1]),
        ("workgroup per output", &[1024, 2, 1024], &[2048, 1024, 1], 0, &[0, 2]),
    ];
    for (form, shape, strides, offset, axes) in cases {
        let outputs: usize = (0..shape.len())
            .filter(|d| !axes.contains(d))
            .map(|d| shape[d])
            .product();
        let out_shape: Vec<usize> = (0..shape.len())
            .map(|d| if axes.contains(&d) { 1 } else { shape[d] })
            .collect();
        let out_strides: Vec<isize> = (0..out_shape.len())
            .map(|d| out_shape[d + 1..].iter().product::<usize>() as isize)
            .collect();
        let out = g.alloc(outputs * 4);
        g.run(&Op::Reduce {
            op: ReduceOp::Sum,
            x: tensor(&xb, DType::F32, shape, strides, offset),
            axes,
            out: tensor(&out, DType::F32, &out_shape, &out_strides, 0),
        })
        .unwrap();
        let exact = tenth * (shape.iter().product::<usize>() / outputs) as f64;
        let worst = decode(DType::F32, &g.download(&out))
            .iter()
            .map(|&s| (s - exact).abs() / exact)
            .fold(0.0, f64::max);
        assert!(worst < 5e-7, "{form}: relative error {worst:e}");
    }
}

#[test]
fn scans_accumulate_along_an_axis() {
    let g = gpu_or_skip!();
    for dtype in [DType::F32, DType::I16, DType::U32, DType::F64]
        .into_iter()
        .filter(|&d| g.holds(d))
    {
        let shape = [3usize, 6];
        let x: Vec<f64> = (0..18).map(|i| ((i * 7) % 5) as f64 + 1.0).collect();
        let xv = View::column_major(&shape);
        let xb = g.upload(&xv.place(dtype, &x));
        for (op, axis) in [
            (ScanOp::CumulativeSum, 1usize),
            (ScanOp::CumulativeProd, 0),
            (ScanOp::CumulativeSum, 0),
        ] {
            let ov = View::reversed(&shape);
            let out = g.alloc(ov.len * dtype.size());
            g.run(&Op::Scan {
                op,
                x: xv.tensor(&xb, dtype),
                axis,
                out: ov.tensor(&out, dtype),
            })
            .unwrap();
            let got = ov.gather(&decode(dtype, &g.download(&out)));
            for r in 0..3 {
                for c in 0..6 {
                    let line: Vec<f64> = if axis == 1 {
                        (0..=c).map(|k| x[r * 6 + k]).collect()
                    } else {
                        (0..=r).map(|k| x[k * 6 + c]).collect()
                    };
                    let want = if op == ScanOp::CumulativeSum {
                        line.iter().sum::<f64>()
                    } else {
                        line.iter().product()
                    };
                    assert_eq!(
                        got[r * 6 + c],
                        round_to(dtype, want),
                        "{op:?} {dtype} axis {axis} at ({r},{c})"
                    );
                }
            }
        }
    }
}

fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|q| a[i * k + q] * b[q * n + j]).sum();
        }
    }
    out
}

#[test]
fn tiled_matmul_matches_naive_loops_for_odd_and_batched_shapes() {
    let g = gpu_or_skip!();
    let mut rng = Rng(7);
    for (batch, m, k, n) in [
        (1usize, 37usize, 53usize, 29usize),
        (3, 5, 70, 33),
        (2, 64, 32, 64),
        (1, 1, 1, 1),
        (1, 4, 0, 3),
    ] {
        for dtype in [DType::F32, DType::F16, DType::I32, DType::F64]
            .into_iter()
            .filter(|&d| g.holds(d))
        {
            let a: Vec<f64> = (0..batch * m * k)
                .map(|_| round_to(dtype, rng.uniform(-3.0, 3.0).round()))
                .collect();
            let b: Vec<f64> = (0..k * n)
                .map(|_| round_to(dtype, rng.uniform(-3.0, 3.0).round()))
                .collect();
            // a: batched, row-major; b: one matrix broadcast over the batch
            // (zero batch stride), stored column-major.
            let av = View::contiguous(&[batch, m, k]);
            let bv = View {
                shape: vec![batch, k, n],
                strides: vec![0, 1, k.max(1) as isize],
                offset: 0,
                len: (k * n).max(1),
            };
            let b_storage: Vec<f64> = (0..k * n).map(|i| b[(i % k.max(1)) * n + i / k.max(1)]).collect();
            let ov = View::reversed(&[batch, m, n]);
            let (ab, bb) = (
                g.upload(&av.place(dtype, &a)),
                g.upload(&encode(
                    dtype,
                    &if b_storage.is_empty() { vec![0.0] } else { b_storage },
                )),
            );
            let out = g.alloc(ov.len * dtype.size());
            g.run(&Op::Matmul {
                a: av.tensor(&ab, dtype),
                b: bv.tensor(&bb, dtype),
                out: ov.tensor(&out, dtype),
            })
            .unwrap();
            let got = ov.gather(&decode(dtype, &g.download(&out)));
            for p in 0..batch {
                let want = naive_matmul(&a[p * m * k..(p + 1) * m * k], &b, m, k, n);
                for (i, &w) in want.iter().enumerate() {
                    let gi = got[p * m * n + i];
                    assert!(
                        close(dtype, gi, round_to(dtype, w), 4.0),
                        "{dtype} {batch}x{m}x{k}x{n} [{p}][{i}]: got {gi} want {w}"
                    );
                }
            }
        }
    }
}

#[test]
fn sorts_are_stable_with_nans_at_the_right_end() {
    let g = gpu_or_skip!();
    for dtype in [DType::F32, DType::I8, DType::F16, DType::U64]
        .into_iter()
        .filter(|&d| g.holds(d))
    {
        let mut row: Vec<f64> = vec![3.0, 1.0, 2.0, 1.0, 5.0, 2.0, 0.0, 3.0, 1.0];
        if dtype.is_float() {
            row[4] = f64::NAN;
            row[6] = f64::NAN;
        }
        let shape = [2usize, row.len()];
        let x: Vec<f64> = row.iter().chain(row.iter().rev()).copied().collect();
        let xv = View::gapped(&shape);
        let xb = g.upload(&xv.place(dtype, &x));
        for descending in [false, true] {
            let ov = View::reversed(&shape);
            let sorted = g.alloc(ov.len * dtype.size());
            let idx = g.alloc(ov.len * 8);
            g.run(&Op::Sort {
                x: xv.tensor(&xb, dtype),
                axis: 1,
                descending,
                out: ov.tensor(&sorted, dtype),
            })
            .unwrap();
            g.run(&Op::Argsort {
                x: xv.tensor(&xb, dtype),
                axis: 1,
                descending,
                out: ov.tensor(&idx, DType::I64),
            })
            .unwrap();
            let got = ov.gather(&decode(dtype, &g.download(&sorted)));
            let got_idx = ov.gather(&decode_int(DType::I64, &g.download(&idx)));
            for r in 0..2 {
                let line = &x[r * row.len()..(r + 1) * row.len()];
                let mut order: Vec<usize> = (0..line.len()).collect();
                // Stable reference: NaN is the largest value.
                order.sort_by(|&i, &j| {
                    let (a, b) = (line[i], line[j]);
                    let c = match (a.is_nan(), b.is_nan()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => std::cmp::Ordering::Greater,
                        (false, true) => std::cmp::Ordering::Less,
                        _ => a.partial_cmp(&b).unwrap(),
                    };
                    if descending {
                        c.reverse()
                    } else {
                        c
                    }
                });
                for (p, &i) in order.iter().enumerate() {
                    let at = r * row.len() + p;
                    assert_eq!(got_idx[at], i as i128, "argsort {dtype} desc={descending} row {r}");
                    assert!(
                        got[at] == line[i] || (got[at].is_nan() && line[i].is_nan()),
                        "sort {dtype} desc={descending}"
                    );
                }
            }
        }
    }
}

#[test]
fn searchsorted_take_and_nonzero() {
    let g = gpu_or_skip!();
    if !g.holds(DType::I64) {
        return eprintln!("SKIPPED: index ops need i64 (SHADER_INT64)");
    }
    // searchsorted, both sides, sorted given reversed in memory.
    let sorted = [1.0, 2.0, 2.0, 2.0, 5.0, f64::NAN];
    let values = [0.0, 1.0, 2.0, 3.0, 5.0, 6.0, f64::NAN];
    let sv = View::reversed(&[sorted.len()]);
    let (sb, vb) = (
        g.upload(&sv.place(DType::F32, &sorted)),
        g.upload(&encode(DType::F32, &values)),
    );
    let vshape = [values.len()];
    let vstr = [1isize];
    for (right, want) in [(false, [0i128, 0, 1, 4, 4, 5, 5]), (true, [0, 1, 4, 4, 5, 5, 6])] {
        let out = g.alloc(values.len() * 8);
        g.run(&Op::SearchSorted {
            sorted: sv.tensor(&sb, DType::F32),
            values: tensor(&vb, DType::F32, &vshape, &vstr, 0),
            right,
            out: tensor(&out, DType::I64, &vshape, &vstr, 0),
        })
        .unwrap();
        assert_eq!(decode_int(DType::I64, &g.download(&out)), want, "right={right}");
    }
    // take along axis 1 of a column-major [3, 4] u16 array.
    let x: Vec<f64> = (0..12).map(|v| v as f64 * 10.0).collect();
    let xv = View::column_major(&[3, 4]);
    let xb = g.upload(&xv.place(DType::U16, &x));
    let idx = [3i128, 0, 0, 2, 1];
    let ib = g.upload(&encode_int(DType::I64, &idx));
    let (ishape, istr) = ([5usize], [1isize]);
    let ov = View::contiguous(&[3, 5]);
    let out = g.alloc(15 * 2);
    g.run(&Op::Take {
        x: xv.tensor(&xb, DType::U16),
        indices: tensor(&ib, DType::I64, &ishape, &istr, 0),
        axis: 1,
        out: ov.tensor(&out, DType::U16),
    })
    .unwrap();
    let want: Vec<f64> = (0..15).map(|i| x[(i / 5) * 4 + idx[i % 5] as usize]).collect();
    assert_eq!(decode(DType::U16, &g.download(&out)), want);
    // nonzero of a strided bool-ish i8 array, 600 elements (several chunks per thread).
    let shape = [20usize, 30];
    let vals: Vec<f64> = (0..600)
        .map(|i| ((i * 37) % 11 == 0) as u8 as f64 * (i % 3) as f64)
        .collect();
    let nv = View::reversed(&shape);
    let nb = g.upload(&nv.place(DType::I8, &vals));
    let coords: Vec<[i128; 2]> = (0..600)
        .filter(|&i| vals[i] != 0.0)
        .map(|i| [(i / 30) as i128, (i % 30) as i128])
        .collect();
    let oshape = [coords.len(), 2];
    let ostr = contiguous(&oshape);
    let out = g.alloc(coords.len() * 16);
    g.run(&Op::Nonzero {
        x: nv.tensor(&nb, DType::I8),
        out: tensor(&out, DType::I64, &oshape, &ostr, 0),
    })
    .unwrap();
    assert_eq!(decode_int(DType::I64, &g.download(&out)), coords.concat());
    // 75,001 elements: several workgroups, which count first and then
    // write after the rows of the workgroups before them; a run of zeros
    // leaves some workgroups with nothing to write.
    let n = 75_001usize;
    let vals: Vec<f64> = (0..n)
        .map(|i| {
            if (20_000..45_000).contains(&i) {
                0.0
            } else {
                ((i * 7) % 5 == 0) as u8 as f64
            }
        })
        .collect();
    let shape = [n];
    let nb = g.upload(&encode(DType::F32, &vals));
    let coords: Vec<i128> = (0..n).filter(|&i| vals[i] != 0.0).map(|i| i as i128).collect();
    let oshape = [coords.len(), 1];
    let out = g.alloc(coords.len() * 8);
    g.run(&Op::Nonzero {
        x: tensor(&nb, DType::F32, &shape, &[1], 0),
        out: tensor(&out, DType::I64, &oshape, &contiguous(&oshape), 0),
    })
    .unwrap();
    assert_eq!(decode_int(DType::I64, &g.download(&out)), coords);
}

// Philox4x32-10 as the host kernels define it, for bit-exact uniforms.
fn philox(counter: u64, seed: u64) -> [u32; 4] {
    let mut c = [counter as u32, (counter >> 32) as u32, 0, 0];
    let mut k = [seed as u32, (seed >> 32) as u32];
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(0x9E37_79B9), k[1].wrapping_add(0xBB67_AE85)];
        }
        let p0 = 0xD251_1F53u64 * c[0] as u64;
        let p1 = 0xCD9E_8D57u64 * c[2] as u64;
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

fn unit(hi: u32, lo: u32) -> f64 {
    (((hi as u64) << 21) | ((lo as u64) >> 11)) as f64 / (1u64 << 53) as f64
}

#[test]
fn random_numbers_follow_the_counter_contract() {
    let g = gpu_or_skip!();
    if !g.holds(DType::F64) {
        return eprintln!("SKIPPED: bit-exact uniforms need f64 on the device");
    }
    let (seed, counter) = (0x1234_5678_9abc_def0u64, u32::MAX as u64 - 5);
    let n = 4099;
    for dtype in [DType::F32, DType::F64, DType::BF16] {
        let shape = [n];
        let ov = View::gapped(&shape);
        let out = g.alloc(ov.len * dtype.size());
        g.run(&Op::Random {
            out: ov.tensor(&out, dtype),
            dist: Distribution::Uniform { low: -2.0, high: 3.0 },
            seed,
            counter,
        })
        .unwrap();
        let got = ov.gather(&decode(dtype, &g.download(&out)));
        for (i, &v) in got.iter().enumerate() {
            let w = philox(counter.wrapping_add(i as u64), seed);
            let want = round_to(dtype, -2.0 + 5.0 * unit(w[0], w[1]));
            if want >= 3.0 {
                // Rounded up to `high`: one step down, as the host does.
                assert!(v < 3.0 && v > 2.9, "uniform {dtype} element {i}: {v}");
                continue;
            }
            assert_eq!(v, want, "uniform {dtype} element {i}");
        }
        g.run(&Op::Random {
            out: ov.tensor(&out, dtype),
            dist: Distribution::Normal { mean: 1.0, std: 2.0 },
            seed,
            counter,
        })
        .unwrap();
        let got = ov.gather(&decode(dtype, &g.download(&out)));
        for (i, &v) in got.iter().enumerate() {
            let w = philox(counter.wrapping_add(i as u64), seed);
            let (u1, u2) = (1.0 - unit(w[0], w[1]), unit(w[2], w[3]));
            let want = 1.0 + 2.0 * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            assert!(
                (v - want).abs() <= 1e-4 * want.abs().max(1.0) + 2f64.powi(-7) * want.abs(),
                "normal {dtype} element {i}: {v} vs {want}"
            );
        }
        let mean = got.iter().sum::<f64>() / n as f64;
        assert!((mean - 1.0).abs() < 0.15, "normal mean {mean}");
    }
}

/// Every element index of a buffer fits the kernels' `i32` arithmetic,
/// even of one-byte elements in the largest binding a driver allows.
#[test]
fn buffers_are_small_enough_for_i32_element_indices() {
    let g = gpu_or_skip!();
    let max = g.backend.capabilities(0).unwrap().int("max_allocation_bytes").unwrap();
    assert!(max <= i64::from(i32::MAX), "{max} bytes");
    let bytes = i32::MAX as usize + 1;
    let err = anydev_core::backend::allocate(&g.backend, g.device, bytes, anydev_core::MemoryKind::Device)
        .expect_err("must fail");
    assert!(matches!(err, anydev_core::Error::OutOfMemory { .. }), "{err}");
}
