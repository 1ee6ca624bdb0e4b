//! Views share the buffer and read back the right elements; reshape copies
//! only when the layout requires it; host round trips for every dtype.

// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, s, Array, DType, Error, SliceArg};
use half::{bf16, f16};

fn grid() -> Array {
    ad::arange(0, 24, 1, DType::I32).unwrap().reshape(&[2, 3, 4]).unwrap()
}

#[test]
fn slicing_with_steps_and_negative_steps_matches_numpy() {
    let x = grid();
    let v = x.slice(&s![1, ..;-1, 1..;2]).unwrap();
    assert!(v.shares_buffer(&x));
    assert_eq!(v.shape(), &[3, 2]);
    // NumPy: np.arange(24).reshape(2,3,4)[1, ::-1, 1::2]
    assert_eq!(v.to_vec::<i32>().unwrap(), vec![21, 23, 17, 19, 13, 15]);
    let e = x.slice(&[SliceArg::Ellipsis, SliceArg::from(-1)]).unwrap();
    assert_eq!(e.to_vec::<i32>().unwrap(), vec![3, 7, 11, 15, 19, 23]);
    let n = x
        .slice(&[SliceArg::from(0), SliceArg::NewAxis, SliceArg::from(..2)])
        .unwrap();
    assert_eq!(n.shape(), &[1, 2, 4]);
    let empty = x
        .slice(&[
            SliceArg::FULL,
            SliceArg::Slice {
                start: Some(2),
                stop: Some(1),
                step: 1,
            },
        ])
        .unwrap();
    assert_eq!(empty.shape(), &[2, 0, 4]);
    assert!(empty.to_vec::<i32>().unwrap().is_empty());
    assert!(matches!(
        x.slice(&s![2]),
        Err(Error::IndexOutOfBounds { index: 2, len: 2, .. })
    ));
    assert!(x.slice(&s![.., ..;0]).is_err());
    assert!(x.slice(&s![0, 0, 0, 0]).is_err());
    assert!(x.slice(&[SliceArg::Ellipsis, SliceArg::Ellipsis]).is_err());
}

#[test]
fn reshape_views_when_possible_and_copies_otherwise() {
    let x = grid();
    let r = x.reshape(&[6, -1]).unwrap();
    assert!(r.shares_buffer(&x));
    assert_eq!(r.shape(), &[6, 4]);
    let t = x.permute_dims(&[2, 0, 1]).unwrap();
    assert!(t.shares_buffer(&x));
    assert_eq!(t.shape(), &[4, 2, 3]);
    let flat = t.flatten().unwrap();
    assert!(!flat.shares_buffer(&x), "a transposed layout cannot flatten in place");
    let want: Vec<i32> = (0..4)
        .flat_map(|k| (0..2).flat_map(move |i| (0..3).map(move |j| i * 12 + j * 4 + k)))
        .collect();
    assert_eq!(flat.to_vec::<i32>().unwrap(), want);
    assert!(matches!(x.reshape(&[5, -1]), Err(Error::ShapeMismatch { .. })));
    assert!(x.reshape(&[7]).unwrap_err().to_string().contains("24"));
    assert!(x.permute_dims(&[0, 0, 1]).is_err());
    assert!(x.permute_dims(&[0, 1]).is_err());
}

#[test]
fn dims_views() {
    let x = grid();
    assert_eq!(x.expand_dims(-1).unwrap().shape(), &[2, 3, 4, 1]);
    assert_eq!(x.expand_dims(0).unwrap().squeeze(0).unwrap().shape(), &[2, 3, 4]);
    assert!(x.expand_dims(4).is_err());
    // Several axes name positions in the result, here of rank 5.
    let several = x.expand_dims(vec![3, 0]).unwrap();
    assert_eq!(several.shape(), &[1, 2, 3, 1, 4]);
    assert!(several.shares_buffer(&x));
    assert_eq!(several.to_vec::<i32>().unwrap(), x.to_vec::<i32>().unwrap());
    assert_eq!(x.expand_dims(vec![-1, 1]).unwrap().shape(), &[2, 1, 3, 4, 1]);
    assert_eq!(x.expand_dims(Vec::new()).unwrap().shape(), &[2, 3, 4]);
    assert!(x.expand_dims(vec![0, -5]).unwrap_err().to_string().contains("repeated"));
    assert!(matches!(
        x.expand_dims(vec![0, 5]),
        Err(Error::InvalidAxis { axis: 5, ndim: 5, .. })
    ));
    assert!(x.expand_dims(ad::ALL).is_err());
    assert!(x.squeeze(0).is_err());
    let b = x.slice(&s![.., 0..1, ..]).unwrap().broadcast_to(&[5, 2, 3, 4]).unwrap();
    assert!(b.shares_buffer(&x));
    assert_eq!(b.strides()[0], 0);
    assert_eq!(b.to_vec::<i32>().unwrap()[..4], [0, 1, 2, 3]);
    assert!(matches!(x.broadcast_to(&[2, 3, 5]), Err(Error::ShapeMismatch { .. })));
    let m = x.matrix_transpose().unwrap();
    assert_eq!(m.shape(), &[2, 4, 3]);
    assert_eq!(m.slice(&s![0, 1]).unwrap().to_vec::<i32>().unwrap(), vec![1, 5, 9]);
    assert_eq!(x.moveaxis(&[0], &[-1]).unwrap().shape(), &[3, 4, 2]);
    let f = x.flip([0, 2]).unwrap();
    assert_eq!(
        f.slice(&s![0, 0]).unwrap().to_vec::<i32>().unwrap(),
        vec![15, 14, 13, 12]
    );
    assert!(Array::scalar(1.0f32, ()).unwrap().matrix_transpose().is_err());
}

#[test]
fn host_round_trips_for_every_dtype() {
    fn check<T: ad::Element>(values: &[T]) {
        let a = Array::from_slice(values, &[values.len()], ()).unwrap();
        assert_eq!(a.dtype(), T::DTYPE);
        assert_eq!(a.to_vec::<T>().unwrap(), values);
        assert_eq!(
            a.flip(ad::ALL).unwrap().flip(ad::ALL).unwrap().to_vec::<T>().unwrap(),
            values
        );
    }
    check(&[true, false]);
    check(&[i8::MIN, i8::MAX]);
    check(&[i16::MIN, 0]);
    check(&[i32::MIN, 1]);
    check(&[i64::MIN, i64::MAX]);
    check(&[u8::MAX]);
    check(&[u16::MAX]);
    check(&[u32::MAX]);
    check(&[u64::MAX]);
    check(&[f16::from_f32(0.5), f16::INFINITY]);
    check(&[bf16::from_f32(-3.0)]);
    check(&[f32::MIN_POSITIVE]);
    check(&[f64::MAX]);
}

#[test]
fn reading_back_checks_dtype_and_size() {
    let a = Array::from_slice(&[1.0f32, 2.0], &[2], ()).unwrap();
    assert!(matches!(a.to_vec::<f64>(), Err(Error::InvalidDType { .. })));
    assert!(a.to_scalar::<f32>().is_err());
    assert_eq!(a.slice(&s![1..]).unwrap().to_scalar::<f32>().unwrap(), 2.0);
    assert!(matches!(
        Array::scalar(1u8, ()).unwrap().to_scalar::<i8>(),
        Err(Error::InvalidDType { .. })
    ));
    assert_eq!(Array::scalar(7u8, ()).unwrap().item().unwrap(), ad::Scalar::U8(7));
    assert!(matches!(
        Array::from_slice(&[1, 2, 3], &[2, 2], ()),
        Err(Error::ShapeMismatch { .. })
    ));
    let converted = Array::from_slice(&[1i32, 2], &[2], DType::F32).unwrap();
    assert_eq!(converted.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
}

/// `str()` of the same arrays in NumPy 2.4.
#[test]
fn floats_print_as_numpy_does() {
    let f64s = |v: &[f64]| Array::from_slice(v, &[v.len()], ()).unwrap().to_string();
    assert_eq!(f64s(&[1e-10, 1.5e-10]), "[1.0e-10 1.5e-10]");
    assert_eq!(f64s(&[1e-10, 1e100]), "[1.e-010 1.e+100]");
    assert_eq!(f64s(&[1.0 / 3.0, 2.0]), "[0.33333333 2.        ]");
    assert_eq!(f64s(&[0.0]), "[0.]");
    assert_eq!(f64s(&[f64::NAN, f64::INFINITY]), "[nan inf]");
    assert_eq!(f64s(&[f64::NEG_INFINITY, 1.5]), "[-inf  1.5]");
    assert_eq!(f64s(&[1e20]), "[1.e+20]");
    assert_eq!(f64s(&[1e-5, 1.0]), "[1.e-05 1.e+00]");
    assert_eq!(f64s(&[123456789.0]), "[1.23456789e+08]");
    assert_eq!(f64s(&[1.0, -0.0]), "[ 1. -0.]");
    assert_eq!(f64s(&[1.123456789e-7]), "[1.12345679e-07]");
    assert_eq!(f64s(&[0.0, 1e-9]), "[0.e+00 1.e-09]");
    assert_eq!(f64s(&[1e-10, f64::NAN]), "[1.e-10    nan]");
    assert_eq!(f64s(&[1234.5, 0.25]), "[1.2345e+03 2.5000e-01]");
    assert_eq!(Array::scalar(1.5f64, ()).unwrap().to_string(), "1.5");
    assert_eq!(Array::scalar(f64::NAN, ()).unwrap().to_string(), "nan");
    let f32s = Array::from_slice(&[0.1f32, 1e7], &[2], ()).unwrap();
    assert_eq!(f32s.to_string(), "[1.e-01 1.e+07]");
    // The style switches at 1e6 for float32 and 1e3 for float16.
    let f32s = Array::from_slice(&[1e6f32, 1.0], &[2], ()).unwrap();
    assert_eq!(f32s.to_string(), "[1.e+06 1.e+00]");
    assert_eq!(f64s(&[1e6, 1.0]), "[1.e+06 1.e+00]");
    assert_eq!(f64s(&[1e7]), "[10000000.]");
    let half = Array::from_slice(&[f16::from_f32(1000.0)], &[1], ()).unwrap();
    assert_eq!(half.to_string(), "[1.e+03]");
    let half = Array::from_slice(&[f16::from_f32(0.1), f16::from_f32(-2.0)], &[2], ()).unwrap();
    assert_eq!(half.to_string(), "[ 0.1 -2. ]");
    let brain = Array::from_slice(&[bf16::from_f32(0.1)], &[1], ()).unwrap();
    assert_eq!(brain.to_string(), "[0.1]");
}

#[test]
fn complex_prints_as_numpy_does() {
    use num_complex::{Complex32, Complex64};
    let c = Array::from_slice(
        &[
            Complex64::new(1.0, 2.0),
            Complex64::new(f64::NAN, 1.0),
            Complex64::new(1.0, f64::NEG_INFINITY),
        ],
        &[3],
        (),
    )
    .unwrap();
    assert_eq!(c.to_string(), "[ 1. +2.j nan +1.j  1.-infj]");
    let c = Array::from_slice(&[Complex32::new(1.0, 1.0)], &[1], ()).unwrap();
    assert_eq!(c.to_string(), "[1.+1.j]");
    let c = Array::from_slice(&[Complex64::new(1.0, 2.0), Complex64::new(-0.0, -0.5)], &[2], ()).unwrap();
    assert_eq!(c.to_string(), "[ 1.+2.j  -0.-0.5j]");
}

#[test]
fn printing_is_numpy_like() {
    let a = Array::from_slice(&[1.0f32, 2.5, -3.0, f32::NAN], &[2, 2], ()).unwrap();
    assert_eq!(a.to_string(), "[[ 1.   2.5]\n [-3.   nan]]");
    assert_eq!(
        format!("{a:?}"),
        "array([[ 1. ,  2.5],\n       [-3. ,  nan]], dtype=f32, device=cpu:0)"
    );
    assert_eq!(Array::scalar(5i64, ()).unwrap().to_string(), "5");
    assert_eq!(
        Array::from_slice(&[true, false], &[2], ()).unwrap().to_string(),
        "[ True False]"
    );
    assert_eq!(ad::zeros(&[0], ()).unwrap().to_string(), "[]");
    let big = ad::arange(0, 2000, 1, ()).unwrap().to_string();
    assert_eq!(big, "[   0    1    2 ... 1997 1998 1999]");
    let cube = ad::arange(0, 8, 1, ()).unwrap().reshape(&[2, 2, 2]).unwrap();
    assert_eq!(cube.to_string(), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

/// `Debug` places its keywords as NumPy 2.4's `repr` places `shape=` and
/// `dtype=` (whose output each case follows, with our dtype names and the
/// device added): the shape where the values do not show it, and a new
/// line when the keywords would pass 75 characters.
#[test]
fn debug_places_keywords_as_numpy_repr_does() {
    let f32s = |n: i64| ad::arange(0, n, 1, DType::F32).unwrap();
    assert_eq!(format!("{:?}", f32s(3)), "array([0., 1., 2.], dtype=f32, device=cpu:0)");
    let thousands = ad::multiply(&f32s(8), 1000.0f32).unwrap();
    assert_eq!(
        format!("{thousands:?}"),
        "array([   0., 1000., 2000., 3000., 4000., 5000., 6000., 7000.],\n      dtype=f32, device=cpu:0)"
    );
    let long = ad::arange(0, 2000, 1, DType::I32).unwrap();
    assert_eq!(
        format!("{long:?}"),
        "array([   0,    1,    2, ..., 1997, 1998, 1999],\n      shape=(2000,), dtype=i32, device=cpu:0)"
    );
    let empty = ad::zeros(&[2, 0], DType::F32).unwrap();
    assert_eq!(format!("{empty:?}"), "array([], shape=(2, 0), dtype=f32, device=cpu:0)");
    let flat = ad::zeros(&[0], DType::F32).unwrap();
    assert_eq!(format!("{flat:?}"), "array([], dtype=f32, device=cpu:0)");
}

/// A summarised printout reads back only the elements it shows: a
/// broadcast view of 10^12 elements (8 TB were it materialised) prints as
/// NumPy 2.4 prints `np.broadcast_to(np.arange(10**6), (10**6, 10**6))`.
#[test]
fn printing_reads_back_only_what_it_shows() {
    let n = 1_000_000usize;
    let huge = ad::arange(0, n as i64, 1, DType::I64)
        .unwrap()
        .broadcast_to(&[n, n])
        .unwrap();
    let row = "[     0      1      2 ... 999997 999998 999999]";
    let expected = format!("[{row}\n {row}\n {row}\n ...\n {row}\n {row}\n {row}]");
    assert_eq!(huge.to_string(), expected);
}
