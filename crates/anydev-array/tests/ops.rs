//! Creation, tensordot/vecdot, take and random numbers, each against values
//! written out or computed by plain loops. (Matmul, manipulation and sorting
//! run on every device as cases of `anydev-testing`.)

// The process-wide runtime these tests use: the CPU backend only.
anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);

use anydev_array::{self as ad, s, Array, DType, Error, Indexing, Order, Side};

fn f64s(a: &Array) -> Vec<f64> {
    a.to_f64_vec().unwrap()
}

fn matrix(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f64) -> (Array, Vec<f64>) {
    let v: Vec<f64> = (0..rows * cols).map(|k| f(k / cols, k % cols)).collect();
    (Array::from_slice(&v, &[rows, cols], ()).unwrap(), v)
}

#[test]
fn creation_functions() {
    assert_eq!(
        ad::arange(0, 10, 3, ()).unwrap().to_vec::<i64>().unwrap(),
        vec![0, 3, 6, 9]
    );
    assert_eq!(
        ad::arange(5, 0, -2, ()).unwrap().to_vec::<i64>().unwrap(),
        vec![5, 3, 1]
    );
    assert_eq!(
        ad::arange(0.0, 1.0, 0.25, ()).unwrap().to_vec::<f64>().unwrap(),
        vec![0.0, 0.25, 0.5, 0.75]
    );
    assert_eq!(ad::arange(3, 3, 1, ()).unwrap().shape(), &[0]);
    assert!(ad::arange(0, 3, 0, ()).is_err());
    let l = ad::linspace(0.0, 1.0, 4, true, DType::F32)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(l, vec![0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0]);
    assert_eq!(
        ad::linspace(0.0, 1.0, 4, false, ()).unwrap().to_vec::<f64>().unwrap(),
        vec![0.0, 0.25, 0.5, 0.75]
    );
    let l = ad::linspace(0.1, 0.7, 7, true, ()).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(l[6], 0.7, "the endpoint is exact");
    assert_eq!(
        f64s(&ad::eye(2, Some(3), 1, DType::U8).unwrap()),
        vec![0., 1., 0., 0., 0., 1.]
    );
    assert_eq!(ad::eye(3, None, 0, ()).unwrap().dtype(), DType::F64);
    assert_eq!(ad::full(&[2], 7, ()).unwrap().to_vec::<i64>().unwrap(), vec![7, 7]);
    assert_eq!(ad::full(&[1], true, ()).unwrap().dtype(), DType::Bool);
    assert_eq!(
        ad::full(&[1], 2.9, DType::I32).unwrap().to_vec::<i32>().unwrap(),
        vec![2]
    );
    assert!(matches!(
        ad::full(&[1], 300, DType::U8),
        Err(Error::InvalidDType { .. })
    ));
    // Floats truncate toward zero; one with no integer in range is refused
    // like 300 above, never saturated or turned into 0.
    assert_eq!(
        ad::full(&[1], -0.9, DType::U8).unwrap().to_vec::<u8>().unwrap(),
        vec![0]
    );
    assert_eq!(
        ad::full(&[1], -128.7, DType::I8).unwrap().to_vec::<i8>().unwrap(),
        vec![-128]
    );
    for (value, dtype) in [
        (f64::NAN, DType::I32),
        (f64::INFINITY, DType::I64),
        (1e20, DType::I32),
        (256.0, DType::U8),
        (-1.0, DType::U8),
    ] {
        let refused = ad::full(&[1], value, dtype);
        assert!(
            matches!(refused, Err(Error::InvalidDType { .. })),
            "{value} as {dtype}: {refused:?}"
        );
    }
    assert_eq!(ad::zeros(&[2, 0], ()).unwrap().size(), 0);
    assert_eq!(ad::ones(&[], DType::I8).unwrap().to_scalar::<i8>().unwrap(), 1);
    let x = ad::arange(1, 10, 1, ()).unwrap().reshape(&[3, 3]).unwrap();
    assert_eq!(
        f64s(&ad::triu(&x, 0).unwrap()),
        vec![1., 2., 3., 0., 5., 6., 0., 0., 9.]
    );
    assert_eq!(
        f64s(&ad::tril(&x, -1).unwrap()),
        vec![0., 0., 0., 4., 0., 0., 7., 8., 0.]
    );
    assert!(ad::tril(&ad::ones(&[3], ()).unwrap(), 0).is_err());
    let a = Array::from_slice(&[1i32, 2, 3], &[3], ()).unwrap();
    let b = Array::from_slice(&[4.0f32, 5.0], &[2], ()).unwrap();
    let xy = ad::meshgrid(&[&a, &b], Indexing::Xy).unwrap();
    assert_eq!(xy[0].shape(), &[2, 3]);
    assert_eq!(xy[0].dtype(), DType::F64);
    assert_eq!(f64s(&xy[0]), vec![1., 2., 3., 1., 2., 3.]);
    assert_eq!(f64s(&xy[1]), vec![4., 4., 4., 5., 5., 5.]);
    let ij = ad::meshgrid(&[&a, &b], Indexing::Ij).unwrap();
    assert_eq!(ij[1].shape(), &[3, 2]);
    assert_eq!(f64s(&ij[1]), vec![4., 5., 4., 5., 4., 5.]);
}

#[test]
fn matmul_matches_loops_with_batches_broadcasting_and_1d_rules() {
    let (a, va) = matrix(3, 4, |i, j| (i * 4 + j) as f64 - 5.0);
    let (b, vb) = matrix(4, 2, |i, j| (i as f64) * 0.5 - j as f64);
    let c = ad::matmul(&a, &b).unwrap();
    assert_eq!(c.shape(), &[3, 2]);
    let got = f64s(&c);
    for i in 0..3 {
        for j in 0..2 {
            let want: f64 = (0..4).map(|k| va[i * 4 + k] * vb[k * 2 + j]).sum();
            assert!((got[i * 2 + j] - want).abs() < 1e-12);
        }
    }
    // Transposed (strided) operands.
    let ct = ad::matmul(&b.matrix_transpose().unwrap(), &a.matrix_transpose().unwrap()).unwrap();
    assert_eq!(f64s(&ct), f64s(&c.matrix_transpose().unwrap()));
    // Batch broadcasting: [2,1,3,4] @ [5,4,2] -> [2,5,3,2].
    let batch = a.broadcast_to(&[2, 1, 3, 4]).unwrap();
    let bb = b.expand_dims(0).unwrap().broadcast_to(&[5, 4, 2]).unwrap();
    let r = ad::matmul(&batch, &bb).unwrap();
    assert_eq!(r.shape(), &[2, 5, 3, 2]);
    assert_eq!(f64s(&r.slice(&s![1, 4]).unwrap()), got);
    // 1-D rules.
    let v = Array::from_slice(&[1.0f64, 0.0, -1.0, 2.0], &[4], ()).unwrap();
    assert_eq!(ad::matmul(&a, &v).unwrap().shape(), &[3]);
    assert_eq!(ad::matmul(&v, &b).unwrap().shape(), &[2]);
    let dot = ad::matmul(&v, &v).unwrap();
    assert_eq!((dot.ndim(), dot.to_scalar::<f64>().unwrap()), (0, 6.0));
    // Integers and mixed dtypes promote.
    let i = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2], ()).unwrap();
    let r = ad::matmul(&i, &i.astype(DType::I8).unwrap()).unwrap();
    assert_eq!(
        (r.dtype(), r.to_vec::<i32>().unwrap()),
        (DType::I32, vec![7, 10, 15, 22])
    );
    // Empty contraction gives zeros.
    let z = ad::matmul(&ad::ones(&[2, 0], ()).unwrap(), &ad::ones(&[0, 3], ()).unwrap()).unwrap();
    assert_eq!(f64s(&z), vec![0.0; 6]);
    // Errors.
    assert!(matches!(ad::matmul(&a, &a), Err(Error::ShapeMismatch { .. })));
    assert!(ad::matmul(&Array::scalar(1.0, ()).unwrap(), &a).is_err());
    let bools = ad::ones(&[2, 2], DType::Bool).unwrap();
    assert!(matches!(ad::matmul(&bools, &bools), Err(Error::InvalidDType { .. })));
}

#[test]
fn tensordot_and_vecdot() {
    let (a, va) = matrix(2, 3, |i, j| (i * 3 + j) as f64);
    let (b, vb) = matrix(3, 2, |i, j| (i + 2 * j) as f64);
    assert_eq!(
        f64s(&ad::tensordot(&a, &b, 1).unwrap()),
        f64s(&ad::matmul(&a, &b).unwrap())
    );
    let full = ad::tensordot(&a, &b.matrix_transpose().unwrap(), (vec![0, 1], vec![0, 1])).unwrap();
    let want: f64 = (0..6).map(|k| va[k] * vb[(k % 3) * 2 + k / 3]).sum();
    assert_eq!((full.ndim(), full.to_scalar::<f64>().unwrap()), (0, want));
    let outer = ad::tensordot(&a, &b, 0).unwrap();
    assert_eq!(outer.shape(), &[2, 3, 3, 2]);
    assert!(ad::tensordot(&a, &b, (vec![0], vec![0])).is_err());
    let v = ad::vecdot(&a, &Array::from_slice(&[1.0f64, 1.0, 1.0], &[3], ()).unwrap(), -1).unwrap();
    assert_eq!(f64s(&v), vec![3.0, 12.0]);
    let vi = ad::vecdot(&a.astype(DType::I16).unwrap(), &a.astype(DType::I16).unwrap(), 0).unwrap();
    assert_eq!((vi.dtype(), f64s(&vi)), (DType::I16, vec![9.0, 17.0, 29.0]));
    assert!(ad::vecdot(&a, &b, -1).is_err());
}

#[test]
fn manipulation() {
    let x = ad::arange(0, 6, 1, ()).unwrap().reshape(&[2, 3]).unwrap();
    let y = Array::from_slice(&[6.5f32, 7.5, 8.5], &[1, 3], ()).unwrap();
    let c = ad::concat(&[&x, &y], Some(0)).unwrap();
    assert_eq!((c.shape(), c.dtype()), (&[3usize, 3][..], DType::F64));
    assert_eq!(f64s(&c), vec![0., 1., 2., 3., 4., 5., 6.5, 7.5, 8.5]);
    assert_eq!(ad::concat(&[&x, &y], None).unwrap().shape(), &[9]);
    assert!(matches!(
        ad::concat(&[&x, &y], Some(1)),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(ad::concat(&[], Some(0)).is_err());
    let st = ad::stack(&[&x, &x], -1).unwrap();
    assert_eq!(st.shape(), &[2, 3, 2]);
    assert_eq!(f64s(&st.slice(&s![1, 2]).unwrap()), vec![5., 5.]);
    assert!(ad::stack(&[&x, &x.reshape(&[3, 2]).unwrap()], 0).is_err());
    assert_eq!(
        f64s(&ad::roll(&x, &[1], ad::ALL).unwrap()),
        vec![5., 0., 1., 2., 3., 4.]
    );
    assert_eq!(
        f64s(&ad::roll(&x, &[-1, 4], [0, 1]).unwrap()),
        vec![5., 3., 4., 2., 0., 1.]
    );
    assert_eq!(
        f64s(&ad::tile(&x, &[1, 2]).unwrap()),
        vec![0., 1., 2., 0., 1., 2., 3., 4., 5., 3., 4., 5.]
    );
    assert_eq!(ad::tile(&x, &[2, 1, 1]).unwrap().shape(), &[2, 2, 3]);
    assert_eq!(
        f64s(&ad::repeat(&x, 2usize, Some(0)).unwrap()),
        vec![0., 1., 2., 0., 1., 2., 3., 4., 5., 3., 4., 5.]
    );
    assert_eq!(
        f64s(&ad::repeat(&x, &[0usize, 1, 2][..], Some(1)).unwrap()),
        vec![1., 2., 2., 4., 5., 5.]
    );
    let counts = Array::from_slice(&[1i64, 0, 0, 0, 0, 2], &[6], ()).unwrap();
    assert_eq!(f64s(&ad::repeat(&x, &counts, None).unwrap()), vec![0., 5., 5.]);
    assert!(ad::repeat(&x, &[1usize][..], Some(1)).is_err());
    let parts = ad::broadcast_arrays(&[&x, &y]).unwrap();
    assert_eq!(parts[1].shape(), &[2, 3]);
    assert_eq!(f64s(&ad::flip(&x, 1).unwrap()), vec![2., 1., 0., 5., 4., 3.]);
}

#[test]
fn sorting_and_searching() {
    let x = Array::from_slice(&[3.0f32, f32::NAN, 1.0, 3.0, -2.0], &[5], ()).unwrap();
    let sorted = f64s(&x.sort(0, Order::Ascending).unwrap());
    assert_eq!(&sorted[..4], &[-2.0, 1.0, 3.0, 3.0]);
    assert!(sorted[4].is_nan());
    assert_eq!(
        x.argsort(0, Order::Ascending).unwrap().to_vec::<i64>().unwrap(),
        vec![4, 2, 0, 3, 1]
    );
    assert_eq!(
        x.argsort(-1, Order::Descending).unwrap().to_vec::<i64>().unwrap()[1..],
        [0, 3, 2, 4]
    );
    let m = Array::from_slice(&[3, 1, 2, 9, 8, 7], &[2, 3], ()).unwrap();
    assert_eq!(
        m.sort(0, Order::Ascending).unwrap().to_vec::<i32>().unwrap(),
        vec![3, 1, 2, 9, 8, 7]
    );
    assert_eq!(
        m.sort(1, Order::Ascending).unwrap().to_vec::<i32>().unwrap(),
        vec![1, 2, 3, 7, 8, 9]
    );
    let edges = Array::from_slice(&[1.0f64, 2.0, 2.0, 3.0], &[4], ()).unwrap();
    let v = Array::from_slice(&[2i32, 0, 5], &[3], ()).unwrap();
    assert_eq!(
        ad::searchsorted(&edges, &v, Side::Left)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1, 0, 4]
    );
    assert_eq!(
        ad::searchsorted(&edges, &v, Side::Right)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![3, 0, 4]
    );
    assert!(ad::searchsorted(&m, &v, Side::Left).is_err());
    let nz = ad::nonzero(&Array::from_slice(&[0, 1, 2, 0], &[2, 2], ()).unwrap()).unwrap();
    assert_eq!(nz.len(), 2);
    assert_eq!(nz[0].to_vec::<i64>().unwrap(), vec![0, 1]);
    assert_eq!(nz[1].to_vec::<i64>().unwrap(), vec![1, 0]);
    assert!(ad::nonzero(&Array::scalar(1, ()).unwrap()).is_err());
    assert_eq!(ad::nonzero(&ad::zeros(&[3], ()).unwrap()).unwrap()[0].shape(), &[0]);
    let u = ad::unique_values(&Array::from_slice(&[3, 1, 3, 2, 1], &[5], ()).unwrap()).unwrap();
    assert_eq!(u.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
    let un = ad::unique_values(&Array::from_slice(&[f64::NAN, 1.0, f64::NAN], &[3], ()).unwrap()).unwrap();
    assert_eq!(un.size(), 3, "every NaN is distinct");
    assert_eq!(ad::unique_values(&ad::zeros(&[0], ()).unwrap()).unwrap().size(), 0);
}

#[test]
fn take_checks_indices_on_the_host() {
    let x = ad::arange(0, 6, 1, ()).unwrap().reshape(&[2, 3]).unwrap();
    let i = Array::from_slice(&[2i32, -1, 0], &[3], ()).unwrap();
    assert_eq!(
        x.take(&i, Some(1)).unwrap().to_vec::<i64>().unwrap(),
        vec![2, 2, 0, 5, 5, 3]
    );
    for bad in [3i64, -4] {
        let idx = Array::from_slice(&[0, bad], &[2], ()).unwrap();
        let err = x.take(&idx, Some(1)).unwrap_err();
        assert!(
            matches!(err, Error::IndexOutOfBounds { index, len: 3, .. } if index == i128::from(bad)),
            "{err:?}"
        );
    }
    assert!(x.take(&i, None).is_err());
    assert!(matches!(
        x.take(&i.astype(DType::F32).unwrap(), Some(1)),
        Err(Error::InvalidDType { .. })
    ));
    assert!(x.take(&i.reshape(&[3, 1]).unwrap(), Some(0)).is_err());
    assert!(x.take(&Array::from_slice(&[0i64], &[1], ()).unwrap(), Some(2)).is_err());
}

#[test]
fn random_numbers_are_reproducible_and_in_range() {
    ad::manual_seed(42);
    let a = ad::random_uniform(&[1000], -1.0, 2.0, DType::F32).unwrap();
    ad::manual_seed(42);
    let b = ad::random_uniform(&[1000], -1.0, 2.0, DType::F32).unwrap();
    let c = ad::random_uniform(&[1000], -1.0, 2.0, DType::F32).unwrap();
    let (va, vb, vc) = (f64s(&a), f64s(&b), f64s(&c));
    assert_eq!(va, vb);
    assert_ne!(vb, vc, "later draws continue the sequence");
    assert!(va.iter().all(|&v| (-1.0..2.0).contains(&v)));
    let mean = va.iter().sum::<f64>() / 1000.0;
    assert!((mean - 0.5).abs() < 0.1, "{mean}");
    let n = f64s(&ad::random_normal(&[4000], 3.0, 2.0, ()).unwrap());
    let m = n.iter().sum::<f64>() / 4000.0;
    let sd = (n.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 4000.0).sqrt();
    assert!((m - 3.0).abs() < 0.15 && (sd - 2.0).abs() < 0.15, "{m} {sd}");
    assert!(matches!(
        ad::random_uniform(&[2], 0.0, 1.0, DType::I32),
        Err(Error::InvalidDType { .. })
    ));
    assert!(ad::random_uniform(&[2], 1.0, 1.0, ()).is_err());
    assert!(ad::random_normal(&[2], 0.0, -1.0, ()).is_err());
}

#[test]
fn generators_of_devices_the_runtime_lacks_are_refused() {
    for device in ["cpu:1", "nokind:0"] {
        let device: ad::Device = device.parse().unwrap();
        let refused = |result: Result<(), Error>| matches!(result, Err(Error::DeviceUnavailable { .. }));
        assert!(refused(ad::manual_seed_device(device, 3)), "{device}");
        assert!(refused(ad::rng_state(device).map(drop)), "{device}");
        let state = ad::rng_state(ad::Device::cpu()).unwrap();
        assert!(refused(ad::set_rng_state(device, state)), "{device}");
    }
}
