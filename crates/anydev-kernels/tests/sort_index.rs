//! Sort, argsort, searchsorted, take and nonzero.

mod common;

use anydev_kernels::KernelError;
use anydev_ops::Op;
use common::*;

fn sort<T: Dt>(x: &Arr<T>, axis: usize, descending: bool) -> Vec<T> {
    let mut out = Arr::<T>::zeros(&x.shape);
    run(Op::Sort {
        x: x.view(),
        axis,
        descending,
        out: out.view_mut(),
    })
    .unwrap();
    out.values()
}

fn argsort<T: Dt>(x: &Arr<T>, axis: usize, descending: bool) -> Vec<i64> {
    let mut out = Arr::<i64>::zeros(&x.shape);
    run(Op::Argsort {
        x: x.view(),
        axis,
        descending,
        out: out.view_mut(),
    })
    .unwrap();
    out.values()
}

/// Reference stable sort with NaN last: insertion sort on (key, index).
fn reference(v: &[f64], descending: bool) -> Vec<usize> {
    let key = |x: f64| if x.is_nan() { f64::INFINITY } else { x };
    let rank = |x: f64| (x.is_nan() as u8, key(x));
    let mut idx: Vec<usize> = (0..v.len()).collect();
    for i in 1..idx.len() {
        let mut j = i;
        while j > 0 {
            let (a, b) = (rank(v[idx[j - 1]]), rank(v[idx[j]]));
            let out_of_order = if descending { a < b } else { a > b };
            if !out_of_order {
                break;
            }
            idx.swap(j - 1, j);
            j -= 1;
        }
    }
    idx
}

#[test]
fn stable_sort_with_duplicates_and_nan_in_both_directions() {
    let vals = [3.0, f64::NAN, 1.0, 3.0, -0.0, 0.0, f64::NAN, -5.0, 1.0, f64::INFINITY];
    for descending in [false, true] {
        let want = reference(&vals, descending);
        for layout in LAYOUTS {
            let x = Arr::with_layout(&vals, &[vals.len()], layout);
            let idx = argsort(&x, 0, descending);
            assert_eq!(
                idx,
                want.iter().map(|&i| i as i64).collect::<Vec<_>>(),
                "{layout:?} desc={descending}"
            );
            let s = sort(&x, 0, descending);
            for (g, &i) in s.iter().zip(&want) {
                assert!(same(*g, vals[i]) && g.is_sign_negative() == vals[i].is_sign_negative());
            }
        }
    }
    // NaN last ascending, first descending.
    let x = Arr::new(vals.to_vec(), &[vals.len()]);
    assert!(sort(&x, 0, false)[8].is_nan() && sort(&x, 0, true)[0].is_nan());
}

#[test]
fn sort_along_each_axis_of_a_3d_array_for_several_dtypes() {
    let shape = [3usize, 4, 5];
    let vals: Vec<i16> = (0..60).map(|i| (i * 37 % 11) as i16 - 5).collect();
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &shape, layout);
        let xu = Arr::with_layout(&vals.iter().map(|&v| (v + 5) as u8).collect::<Vec<_>>(), &shape, layout);
        for axis in 0..3 {
            for descending in [false, true] {
                let s = sort(&x, axis, descending);
                let a = argsort(&xu, axis, descending);
                for i in 0..60 {
                    let mut idx = unravel(i, &shape);
                    let lane: Vec<f64> = (0..shape[axis])
                        .map(|k| {
                            idx[axis] = k;
                            x.get(&idx) as f64
                        })
                        .collect();
                    let order = reference(&lane, descending);
                    let pos = unravel(i, &shape)[axis];
                    assert_eq!(s[i] as f64, lane[order[pos]]);
                    assert_eq!(a[i], order[pos] as i64);
                }
            }
        }
    }
    let b = Arr::new(vec![true, false, true, false], &[4]);
    assert_eq!(sort(&b, 0, false), [false, false, true, true]);
    assert_eq!(argsort(&b, 0, true), [0, 2, 1, 3]);
    let z = Arr::new(vec![7u64], &[]);
    assert_eq!(sort(&z, 0, false), [7]);
}

/// Lanes of `pool`'s values in a scrambled order with repeats, long
/// enough for the radix sort (and one just short of it), sorted along
/// both axes of a `[len, 3]` array in two layouts: argsort against the
/// insertion-sort reference, and sort against the elements it picks, bit
/// for bit with -0.0 apart from 0.0 (NaN only as NaN: the cast to `f64`
/// that compares them need not keep a NaN's sign).
fn check_long_lanes<T: Dt>(pool: &[T]) {
    // Miri interprets every step: one length either side of the switch.
    let lens: &[usize] = if cfg!(miri) { &[31, 33] } else { &[31, 32, 33, 300] };
    for &len in lens {
        let mut state = 12_345u32;
        let vals: Vec<T> = (0..len * 3)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                pool[(state >> 16) as usize % pool.len()]
            })
            .collect();
        let shape = [len, 3];
        for layout in [Layout::C, Layout::Reversed] {
            let x = Arr::with_layout(&vals, &shape, layout);
            for axis in 0..2 {
                for descending in [false, true] {
                    let s = sort(&x, axis, descending);
                    let a = argsort(&x, axis, descending);
                    for other in 0..shape[1 - axis] {
                        let at = |k: usize| {
                            let mut idx = [0; 2];
                            idx[axis] = k;
                            idx[1 - axis] = other;
                            idx
                        };
                        let lane: Vec<f64> = (0..shape[axis]).map(|k| x.get(&at(k)).f()).collect();
                        for (pos, &from) in reference(&lane, descending).iter().enumerate() {
                            let [r, c] = at(pos);
                            let i = r * 3 + c;
                            let case = format!("{:?} {shape:?} {layout:?} axis {axis} desc={descending} at {i}", T::DT);
                            assert_eq!(a[i], from as i64, "{case}");
                            let (got, want) = (s[i].f(), lane[from]);
                            let same = if want.is_nan() {
                                got.is_nan()
                            } else {
                                got.to_bits() == want.to_bits()
                            };
                            assert!(same, "{case}: {got:?} where {want:?} belongs");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn long_lanes_of_every_dtype_with_extremes_zeros_nans_and_repeats() {
    check_long_lanes(&[false, true, true]);
    check_long_lanes(&[i8::MIN, i8::MAX, 0, -1, 1, 5, -5]);
    check_long_lanes(&[i16::MIN, i16::MAX, 0, -1, 1, 300, -300]);
    check_long_lanes(&[i32::MIN, i32::MAX, 0, -1, 1, 1 << 20, -(1 << 20)]);
    // 64-bit values that f64 (the reference's type) tells apart.
    check_long_lanes(&[i64::MIN, i64::MAX, 0, -1, 1, 1 << 40, -(1 << 40)]);
    check_long_lanes(&[0u8, u8::MAX, 1, 7, 128]);
    check_long_lanes(&[0u16, u16::MAX, 1, 7, 1 << 15]);
    check_long_lanes(&[0u32, u32::MAX, 1, 7, 1 << 31]);
    check_long_lanes(&[0u64, u64::MAX, 1, 7, 1 << 40]);
    macro_rules! floats {
        ($t:ty, $of:expr) => {{
            let of = $of;
            check_long_lanes::<$t>(&[
                <$t>::NAN,
                -<$t>::NAN,
                <$t>::NEG_INFINITY,
                <$t>::INFINITY,
                of(-0.0),
                of(0.0),
                <$t>::MIN,
                <$t>::MAX,
                <$t>::MIN_POSITIVE,
                of(-1.5),
                of(1.5),
                of(2.0),
            ]);
        }};
    }
    floats!(f32, |v: f64| v as f32);
    floats!(f64, |v: f64| v);
    floats!(half::f16, half::f16::from_f64);
    floats!(half::bf16, half::bf16::from_f64);
}

#[test]
fn searchsorted_left_and_right_with_nan() {
    let sorted = Arr::with_layout(&[1.0f32, 2.0, 2.0, 3.0, f32::NAN], &[5], Layout::Reversed);
    let values = Arr::new(vec![0.0f32, 1.0, 2.0, 2.5, 3.0, 9.0, f32::NAN], &[7]);
    for (right, want) in [(false, [0i64, 0, 1, 3, 3, 4, 4]), (true, [0, 1, 3, 3, 4, 4, 5])] {
        let mut out = Arr::<i64>::zeros(&[7]);
        run(Op::SearchSorted {
            sorted: sorted.view(),
            values: values.view(),
            right,
            out: out.view_mut(),
        })
        .unwrap();
        assert_eq!(out.values(), want, "right={right}");
    }
    let two_d = Arr::new(vec![1i32; 4], &[2, 2]);
    let v = Arr::new(vec![1i32], &[1]);
    let mut out = Arr::<i64>::zeros(&[1]);
    let r = run(Op::SearchSorted {
        sorted: two_d.view(),
        values: v.view(),
        right: false,
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
}

#[test]
fn take_along_every_axis_with_negative_and_repeated_indices() {
    let shape = [3usize, 4, 5];
    let vals: Vec<u32> = (0..60).collect();
    let raw = [2i64, -1, 0, 2];
    for layout in LAYOUTS {
        let x = Arr::with_layout(&vals, &shape, layout);
        for axis in 0..3 {
            let len = shape[axis] as i64;
            let idx = Arr::with_layout(&raw, &[4], Layout::Reversed);
            let mut oshape = shape.to_vec();
            oshape[axis] = 4;
            let mut out = Arr::with_layout(&vec![0u32; numel(&oshape)], &oshape, layout);
            run(Op::Take {
                x: x.view(),
                indices: idx.view(),
                axis,
                out: out.view_mut(),
            })
            .unwrap();
            let got = out.values();
            let logical: Vec<i64> = idx.values();
            for (i, &g) in got.iter().enumerate() {
                let mut oi = unravel(i, &oshape);
                let k = logical[oi[axis]];
                oi[axis] = if k < 0 { (k + len) as usize } else { k as usize };
                assert_eq!(g, x.get(&oi));
            }
        }
    }
    let x = Arr::new(vec![1.0f64, 2.0], &[2]);
    let bad = Arr::new(vec![2i64], &[1]);
    let mut out = Arr::<f64>::zeros(&[1]);
    let r = run(Op::Take {
        x: x.view(),
        indices: bad.view(),
        axis: 0,
        out: out.view_mut(),
    });
    assert!(
        matches!(r, Err(KernelError::Invalid(_))),
        "out-of-range index is refused"
    );
    let none = Arr::<i64>::new(vec![], &[0]);
    let mut empty = Arr::<f64>::zeros(&[0]);
    run(Op::Take {
        x: x.view(),
        indices: none.view(),
        axis: 0,
        out: empty.view_mut(),
    })
    .unwrap();
}

/// `take` of 1-D `x` by `raw` indices.
fn take_1d(x: &Arr<f32>, raw: &[i64]) -> Result<Vec<f32>, KernelError> {
    let idx = Arr::new(raw.to_vec(), &[raw.len()]);
    let mut out = Arr::<f32>::zeros(&[raw.len()]);
    run(Op::Take {
        x: x.view(),
        indices: idx.view(),
        axis: 0,
        out: out.view_mut(),
    })?;
    Ok(out.values())
}

#[test]
fn take_checks_every_index_of_a_gather_split_across_tasks() {
    let x = Arr::new((0..1000).map(|v| v as f32).collect(), &[1000]);
    let raw: Vec<i64> = (0..100_000).map(|i| (i * 7919) % 2000 - 1000).collect();
    let got = take_1d(&x, &raw).unwrap();
    for (g, &k) in got.iter().zip(&raw) {
        assert_eq!(*g, (if k < 0 { k + 1000 } else { k }) as f32);
    }
    for bad in [1000, -1001, i64::MAX, i64::MIN] {
        let mut raw = raw.clone();
        raw[50_003] = bad;
        match take_1d(&x, &raw) {
            Err(KernelError::Invalid(message)) => assert!(message.contains(&bad.to_string()), "{message}"),
            other => panic!("index {bad}: {other:?}"),
        }
    }
    // Nothing to gather from a [3, 0] array, but the index is still checked.
    let flat = Arr::<f32>::zeros(&[3, 0]);
    let idx = Arr::new(vec![3i64], &[1]);
    let mut out = Arr::<f32>::zeros(&[1, 0]);
    let r = run(Op::Take {
        x: flat.view(),
        indices: idx.view(),
        axis: 0,
        out: out.view_mut(),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))), "{r:?}");
}

#[test]
fn nonzero_lists_row_major_coordinates() {
    let vals = [0.0f32, 1.0, 0.0, f32::NAN, -0.0, 2.0];
    let x = Arr::with_layout(&vals, &[2, 3], Layout::F);
    let mut out = Arr::<i64>::zeros(&[3, 2]);
    run(Op::Nonzero {
        x: x.view(),
        out: out.view_mut(),
    })
    .unwrap();
    assert_eq!(out.values(), [0, 1, 1, 0, 1, 2]);
    let mut small = Arr::<i64>::zeros(&[2, 2]);
    assert!(matches!(
        run(Op::Nonzero {
            x: x.view(),
            out: small.view_mut()
        }),
        Err(KernelError::Invalid(_))
    ));
    let mut big = Arr::<i64>::zeros(&[4, 2]);
    assert!(matches!(
        run(Op::Nonzero {
            x: x.view(),
            out: big.view_mut()
        }),
        Err(KernelError::Invalid(_))
    ));
    let s = Arr::new(vec![5u8], &[]);
    let mut o = Arr::<i64>::zeros(&[1, 0]);
    run(Op::Nonzero {
        x: s.view(),
        out: o.view_mut(),
    })
    .unwrap();
    let b = Arr::new(vec![false, true, true], &[3]);
    let mut ob = Arr::<i64>::zeros(&[2, 1]);
    run(Op::Nonzero {
        x: b.view(),
        out: ob.view_mut(),
    })
    .unwrap();
    assert_eq!(ob.values(), [1, 2]);
}
