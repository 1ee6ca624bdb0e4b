//! astype, copy, fill and arange against plain references.

mod common;

use anydev_kernels::KernelError;
use anydev_ops::{Op, Scalar};
use common::*;
use half::{bf16, f16};

fn cast<S: Dt, D: Dt>(x: &Arr<S>) -> Vec<D> {
    let mut out = Arr::<D>::zeros(&x.shape);
    run(Op::Cast {
        x: x.view(),
        out: out.view_mut(),
    })
    .unwrap();
    out.values()
}

#[test]
fn float_to_int_truncates_saturates_and_maps_nan_to_zero() {
    let x = Arr::new(
        vec![
            2.9f64,
            -2.9,
            300.0,
            -300.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.5,
            1e20,
        ],
        &[9],
    );
    assert_eq!(cast::<f64, i8>(&x), [2, -2, 127, -128, 0, 127, -128, 0, 127]);
    assert_eq!(cast::<f64, u8>(&x), [2, 0, 255, 0, 0, 255, 0, 0, 255]);
    assert_eq!(cast::<f64, i64>(&x)[8], 100_000_000_000_000_000_000f64 as i64);
    assert_eq!(cast::<f64, u64>(&x)[5], u64::MAX);
    let h = Arr::new(vec![f16::from_f32(65504.0), f16::NAN, f16::from_f32(-1.5)], &[3]);
    assert_eq!(cast::<f16, i16>(&h), [i16::MAX, 0, -1]);
    assert_eq!(cast::<f16, u32>(&h), [65504, 0, 0]);
}

#[test]
fn int_to_int_wraps_and_anything_to_bool_is_nonzero() {
    let x = Arr::new(vec![-1i32, 256, 257, i32::MIN, 127, 128], &[6]);
    assert_eq!(cast::<i32, u8>(&x), [255, 0, 1, 0, 127, 128]);
    assert_eq!(cast::<i32, i8>(&x), [-1, 0, 1, 0, 127, -128]);
    assert_eq!(cast::<i32, u64>(&x)[0], u64::MAX);
    assert_eq!(cast::<i32, bool>(&x), [true, true, true, true, true, true]);
    let f = Arr::new(vec![0.0f32, -0.0, f32::NAN, 1e-40, 2.0], &[5]);
    assert_eq!(cast::<f32, bool>(&f), [false, false, true, true, true]);
    let b = Arr::new(vec![true, false], &[2]);
    assert_eq!(cast::<bool, f16>(&b), [f16::ONE, f16::ZERO]);
    assert_eq!(cast::<bool, i64>(&b), [1, 0]);
    let u = Arr::new(vec![u64::MAX, 1 << 63], &[2]);
    assert_eq!(cast::<u64, i64>(&u), [-1, i64::MIN]);
    assert_eq!(cast::<u64, f64>(&u), [u64::MAX as f64, 2f64.powi(63)]);
}

#[test]
fn float_to_float_rounds_once_to_nearest_even() {
    // 1 + 2^-11 is halfway between two f16 values: ties to even (1.0).
    let tie = 1.0 + 2f64.powi(-11);
    // Just above the tie must round up; via f32 first it would not matter
    // here, but 1 + 2^-11 + 2^-40 would be lost by an f64->f32->f16 chain.
    let above = tie + 2f64.powi(-40);
    let x = Arr::new(vec![tie, above, 1e6, -1e-9, f64::NAN], &[5]);
    let h = cast::<f64, f16>(&x);
    assert_eq!(h[0], f16::ONE);
    assert_eq!(h[1], f16::from_bits(f16::ONE.to_bits() + 1));
    assert!(h[2].is_infinite());
    assert_eq!(h[3].to_bits(), 0x8000, "-1e-9 underflows to -0");
    assert!(h[4].is_nan());
    let b = cast::<f64, bf16>(&x);
    assert_eq!(b[2], bf16::from_f64(1e6));
    let i = Arr::new(vec![16_777_217i64, -16_777_219, i64::MAX], &[3]);
    assert_eq!(cast::<i64, f32>(&i), [16_777_216.0, -16_777_220.0, 9.223372e18]);
    assert_eq!(
        cast::<i64, f16>(&Arr::new(vec![70000i64, 2049], &[2])),
        [f16::INFINITY, f16::from_f32(2048.0)]
    );
}

/// Every (source, target) pair agrees with a reference through f64 for
/// values that f64 holds exactly.
#[test]
fn all_dtype_pairs_on_small_values_in_every_layout() {
    let vals = [0.0f64, 1.0, 2.0, 5.0, 100.0, 127.0];
    macro_rules! targets {
        ($S:ty, $x:expr, $($D:ty),*) => {$(
            let got = cast::<$S, $D>(&$x);
            let want: Vec<f64> = vals.iter().map(|&v| <$D as Dt>::f(from_f64::<$D>(<$S as Dt>::f(from_f64::<$S>(v))))).collect();
            assert_eq!(got.iter().map(|v| v.f()).collect::<Vec<_>>(), want, "{:?} -> {:?}", <$S as Dt>::DT, <$D as Dt>::DT);
        )*};
    }
    macro_rules! sources {
        ($($S:ty),*) => {$(
            for layout in LAYOUTS {
                let src: Vec<$S> = vals.iter().map(|&v| from_f64::<$S>(v)).collect();
                let x = Arr::with_layout(&src, &[2, 3], layout);
                targets!($S, x, bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64);
            }
        )*};
    }
    sources!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64);
}

/// Test-side conversion of small exact values.
fn from_f64<T: Dt>(v: f64) -> T {
    let t = T::DT;
    let any: Box<dyn std::any::Any> = match t {
        anydev_ops::DType::Bool => Box::new(v != 0.0),
        anydev_ops::DType::I8 => Box::new(v as i8),
        anydev_ops::DType::I16 => Box::new(v as i16),
        anydev_ops::DType::I32 => Box::new(v as i32),
        anydev_ops::DType::I64 => Box::new(v as i64),
        anydev_ops::DType::U8 => Box::new(v as u8),
        anydev_ops::DType::U16 => Box::new(v as u16),
        anydev_ops::DType::U32 => Box::new(v as u32),
        anydev_ops::DType::U64 => Box::new(v as u64),
        anydev_ops::DType::F16 => Box::new(f16::from_f64(v)),
        anydev_ops::DType::BF16 => Box::new(bf16::from_f64(v)),
        anydev_ops::DType::F32 => Box::new(v as f32),
        anydev_ops::DType::F64 => Box::new(v),
        complex => panic!("{complex} has no test element type here"),
    };
    *any.downcast::<T>().unwrap()
}

#[test]
fn copy_between_layouts_and_fill_strided_views() {
    for from in LAYOUTS {
        for to in LAYOUTS {
            let vals: Vec<i16> = (0..60).map(|i| i * 3 - 50).collect();
            let x = Arr::with_layout(&vals, &[3, 4, 5], from);
            let mut out = Arr::with_layout(&[0i16; 60], &[3, 4, 5], to);
            run(Op::Copy {
                x: x.view(),
                out: out.view_mut(),
            })
            .unwrap();
            assert_eq!(out.values(), vals);
        }
    }
    // Fill every other element: the gaps stay untouched.
    let mut out = Arr::with_layout(&[0f64; 6], &[2, 3], Layout::Gapped);
    run(Op::Fill {
        out: out.view_mut(),
        value: Scalar::F64(-2.5),
    })
    .unwrap();
    assert_eq!(out.values(), [-2.5; 6]);
    assert_eq!(out.data.iter().filter(|&&v| v == 0.0).count(), 6);
    let mut b = Arr::<bool>::zeros(&[4]);
    run(Op::Fill {
        out: b.view_mut(),
        value: Scalar::Bool(true),
    })
    .unwrap();
    assert_eq!(b.values(), [true; 4]);
    let mut h = Arr::<bf16>::zeros(&[]);
    run(Op::Fill {
        out: h.view_mut(),
        value: Scalar::BF16(bf16::from_f32(3.5)),
    })
    .unwrap();
    assert_eq!(h.values(), [bf16::from_f32(3.5)]);
    let r = run(Op::Fill {
        out: h.view_mut(),
        value: Scalar::F32(1.0),
    });
    assert!(matches!(r, Err(KernelError::Invalid(_))));
    let x = Arr::<i32>::zeros(&[2]);
    let mut y = Arr::<u32>::zeros(&[2]);
    assert!(matches!(
        run(Op::Copy {
            x: x.view(),
            out: y.view_mut()
        }),
        Err(KernelError::Invalid(_))
    ));
}

#[test]
fn arange_is_row_major_in_f64_then_converted() {
    let mut out = Arr::with_layout(&[0f32; 12], &[3, 4], Layout::F);
    run(Op::Arange {
        out: out.view_mut(),
        start: 1.0,
        step: 0.5,
    })
    .unwrap();
    assert_eq!(out.values(), (0..12).map(|i| 1.0 + i as f32 * 0.5).collect::<Vec<_>>());
    let mut i = Arr::<i8>::zeros(&[5]);
    run(Op::Arange {
        out: i.view_mut(),
        start: 120.0,
        step: 3.7,
    })
    .unwrap();
    assert_eq!(
        i.values(),
        [120, 123, 127, 127, 127],
        "f64 values truncate and saturate"
    );
    let mut big = Arr::<i64>::zeros(&[200_000]);
    run(Op::Arange {
        out: big.view_mut(),
        start: -5.0,
        step: 1.0,
    })
    .unwrap();
    assert!(big.values().iter().enumerate().all(|(k, &v)| v == k as i64 - 5));
    let mut b = Arr::<bool>::zeros(&[2]);
    let r = run(Op::Arange {
        out: b.view_mut(),
        start: 0.0,
        step: 1.0,
    });
    assert!(matches!(r, Err(KernelError::Unsupported { .. })));
}
