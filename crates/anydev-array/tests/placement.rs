//! Every placement rule of design section 3, against a runtime with three
//! backends (`cpu`, `fake` with two devices, `lite` with two devices that
//! lack f64/f16 and `sin`).

mod common;

use anydev_array::{self as ad, s, Array, DType, Device, Error, Side, Spec};
use anydev_core::{with_device, DeviceGuard};
use common::{dev, use_test_runtime};

fn on(device: &str) -> Array {
    Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], dev(device)).unwrap()
}

fn assert_mismatch(result: ad::Result<impl std::fmt::Debug>, op: &str, a: &str, b: &str) {
    match result {
        Err(e @ Error::DeviceMismatch { .. }) => {
            let text = e.to_string();
            for needle in [op, a, b, "to_device"] {
                assert!(text.contains(needle), "{op}: {text:?} lacks {needle:?}");
            }
            let Error::DeviceMismatch { op: got, devices } = e else {
                unreachable!()
            };
            assert_eq!(got, op);
            assert!(devices.contains(&dev(a)) && devices.contains(&dev(b)), "{devices:?}");
        }
        other => panic!("{op}: expected DeviceMismatch, got {other:?}"),
    }
}

#[test]
fn creation_uses_explicit_then_scope_then_default() {
    let _rt = use_test_runtime();
    type Make = fn(Spec) -> ad::Result<Array>;
    let makers: [(&str, Make); 11] = [
        ("zeros", |s| ad::zeros(&[2], s)),
        ("ones", |s| ad::ones(&[2], s)),
        ("full", |s| ad::full(&[2], 3.0, s)),
        ("empty", |s| ad::empty(&[2], s)),
        ("arange", |s| ad::arange(0, 5, 1, s)),
        ("linspace", |s| ad::linspace(0.0, 1.0, 5, true, s)),
        ("eye", |s| ad::eye(3, None, 0, s)),
        ("from_slice", |s| Array::from_slice(&[1i32, 2], &[2], s)),
        ("scalar", |s| Array::scalar(1u8, s)),
        ("random_uniform", |s| ad::random_uniform(&[3], 0.0, 1.0, s)),
        ("random_normal", |s| ad::random_normal(&[3], 0.0, 1.0, s)),
    ];
    for (name, make) in makers {
        // Default: fake:0 has the highest priority in the test runtime.
        assert_eq!(make(Spec::default()).unwrap().device(), dev("fake:0"), "{name}");
        with_device(dev("fake:1"), || {
            assert_eq!(
                make(Spec::default()).unwrap().device(),
                dev("fake:1"),
                "{name} in scope"
            );
            // Explicit beats the scope.
            let explicit = make(Spec::new(None, Some(dev("fake:0")))).unwrap();
            assert_eq!(explicit.device(), dev("fake:0"), "{name} explicit");
            // The innermost scope wins, and leaving it restores the outer one.
            with_device(dev("cpu:0"), || {
                assert_eq!(make(Spec::default()).unwrap().device(), dev("cpu:0"), "{name} nested");
            });
            assert_eq!(
                make(Spec::default()).unwrap().device(),
                dev("fake:1"),
                "{name} restored"
            );
        });
        let guard = DeviceGuard::new(dev("cpu:0"));
        assert_eq!(make(Spec::default()).unwrap().device(), dev("cpu:0"), "{name} guard");
        drop(guard);
        assert_eq!(
            make(Spec::default()).unwrap().device(),
            dev("fake:0"),
            "{name} after guard"
        );
    }
}

#[test]
fn outputs_stay_on_the_input_device_whatever_the_scope() {
    let _rt = use_test_runtime();
    let x = on("fake:1");
    let i = Array::from_slice(&[1i64, 0], &[2], dev("fake:1")).unwrap();
    with_device(dev("cpu:0"), || {
        let results: Vec<(&str, Array)> = vec![
            ("add scalar", x.add(1.0).unwrap()),
            ("add", x.add(&x).unwrap()),
            ("exp", x.exp().unwrap()),
            ("where", ad::where_(&x.greater(2.0).unwrap(), &x, 0.0).unwrap()),
            ("astype", x.astype(DType::I32).unwrap()),
            (
                "matrix_transpose copy",
                x.matrix_transpose().unwrap().flatten().unwrap(),
            ),
            ("as_contiguous", x.matrix_transpose().unwrap().as_contiguous().unwrap()),
            ("concat", ad::concat(&[&x, &x], Some(0)).unwrap()),
            ("take", x.take(&i, Some(0)).unwrap()),
            ("clip", x.clip(1.5, 2.5).unwrap()),
            ("flip", x.flip(ad::ALL).unwrap()),
            ("zeros_like", ad::zeros_like(&x, ()).unwrap()),
            ("tril", ad::tril(&x, 0).unwrap()),
        ];
        for (name, r) in results {
            assert_eq!(r.device(), dev("fake:1"), "{name}");
        }
    });
}

#[test]
fn mixed_devices_are_an_error_for_every_multi_array_op() {
    let _rt = use_test_runtime();
    let a = on("fake:0");
    let b = on("fake:1");
    let c = on("cpu:0");
    let cond = a.greater(1.0).unwrap();
    let idx = Array::from_slice(&[0i64], &[1], dev("fake:1")).unwrap();
    let sorted = Array::from_slice(&[1.0f32, 2.0], &[2], dev("fake:1")).unwrap();
    let reps = Array::from_slice(&[1i64, 2], &[2], dev("fake:1")).unwrap();
    assert_mismatch(ad::add(&a, &b), "add", "fake:0", "fake:1");
    assert_mismatch(a.subtract(&c), "subtract", "fake:0", "cpu:0");
    assert_mismatch(ad::equal(&a, &c), "equal", "fake:0", "cpu:0");
    assert_mismatch(ad::logical_and(&cond, &c), "logical_and", "fake:0", "cpu:0");
    assert_mismatch(ad::where_(&cond, &b, 0.0), "where", "fake:0", "fake:1");
    assert_mismatch(ad::where_(&cond, &a, &b), "where", "fake:0", "fake:1");
    assert_mismatch(b.select(&a, &a), "where", "fake:1", "fake:0");
    assert_mismatch(ad::concat(&[&a, &b], Some(0)), "concat", "fake:0", "fake:1");
    assert_mismatch(ad::stack(&[&a, &c], 0), "stack", "fake:0", "cpu:0");
    assert_mismatch(ad::take(&a, &idx, Some(0)), "take", "fake:0", "fake:1");
    assert_mismatch(ad::matmul(&a, &b), "matmul", "fake:0", "fake:1");
    assert_mismatch(ad::tensordot(&a, &b, 1), "tensordot", "fake:0", "fake:1");
    assert_mismatch(ad::vecdot(&a, &c, -1), "vecdot", "fake:0", "cpu:0");
    assert_mismatch(
        ad::searchsorted(&sorted, &a, Side::Left),
        "searchsorted",
        "fake:1",
        "fake:0",
    );
    assert_mismatch(ad::clip(&a, &b, ()), "clip", "fake:0", "fake:1");
    assert_mismatch(ad::clip(&a, 0.0, &c), "clip", "fake:0", "cpu:0");
    assert_mismatch(
        ad::meshgrid(
            &[&sorted, &idx.astype(DType::F32).unwrap(), &a.flatten().unwrap()],
            ad::Indexing::Xy,
        ),
        "meshgrid",
        "fake:1",
        "fake:0",
    );
    assert_mismatch(ad::broadcast_arrays(&[&a, &b]), "broadcast_arrays", "fake:0", "fake:1");
    assert_mismatch(
        ad::repeat(&a.flatten().unwrap().slice(&s![..2]).unwrap(), &reps, Some(0)),
        "repeat",
        "fake:0",
        "fake:1",
    );
    // Same kind, same index, different backend is still a mismatch.
    assert_mismatch(ad::add(&on("lite:0"), &a), "add", "lite:0", "fake:0");
}

#[test]
fn scalars_take_the_array_device() {
    let _rt = use_test_runtime();
    let x = on("fake:1");
    with_device(dev("fake:0"), || {
        for r in [
            x.add(2).unwrap(),
            ad::subtract(10.0, &x).unwrap(),
            ad::where_(&x.less(2.0).unwrap(), 0, 1).unwrap(),
        ] {
            assert_eq!(r.device(), dev("fake:1"));
        }
    });
    // Scalars alone have no device to run on.
    assert!(matches!(ad::add(1, 2), Err(Error::InvalidArgument { .. })));
}

#[test]
fn like_astype_and_triangles_inherit_the_device_unless_given_one() {
    let _rt = use_test_runtime();
    let x = on("fake:1");
    with_device(dev("cpu:0"), || {
        for r in [
            ad::zeros_like(&x, ()).unwrap(),
            ad::ones_like(&x, DType::I8).unwrap(),
            ad::full_like(&x, 7, ()).unwrap(),
            ad::empty_like(&x, ()).unwrap(),
            x.astype(DType::F64).unwrap(),
            ad::tril(&x, -1).unwrap(),
            ad::triu(&x, 1).unwrap(),
        ] {
            assert_eq!(r.device(), dev("fake:1"));
        }
        let moved = ad::zeros_like(&x, (DType::U8, dev("fake:0"))).unwrap();
        assert_eq!(
            (moved.device(), moved.dtype(), moved.shape()),
            (dev("fake:0"), DType::U8, &[2usize, 2][..])
        );
        let moved = x.astype_on(DType::I64, dev("cpu:0")).unwrap();
        assert_eq!(moved.device(), dev("cpu:0"));
        assert_eq!(moved.to_vec::<i64>().unwrap(), vec![1, 2, 3, 4]);
    });
    assert_eq!(ad::ones_like(&x, ()).unwrap().dtype(), DType::F32);
    assert_eq!(
        ad::tril(&x, 0).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 0.0, 3.0, 4.0]
    );
}

#[test]
fn to_device_is_a_no_op_to_the_same_device_and_copies_otherwise() {
    let _rt = use_test_runtime();
    let x = on("fake:0");
    let same = x.to_device(dev("fake:0")).unwrap();
    assert!(same.shares_buffer(&x));
    assert_eq!(same.shape(), x.shape());

    // Same backend, other device: the backend's peer copy.
    let before = common::COPIES_BETWEEN.load(std::sync::atomic::Ordering::SeqCst);
    let peer = x.to_device(dev("fake:1")).unwrap();
    assert!(common::COPIES_BETWEEN.load(std::sync::atomic::Ordering::SeqCst) > before);
    assert!(!peer.shares_buffer(&x));
    assert_eq!(peer.device(), dev("fake:1"));
    assert_eq!(peer.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);

    // Another backend: staged through the host; views move only their elements.
    let view = x.matrix_transpose().unwrap().flip(0).unwrap();
    let staged = view.to_device(dev("cpu:0")).unwrap();
    assert_eq!(staged.device(), dev("cpu:0"));
    assert_eq!(staged.to_vec::<f32>().unwrap(), view.to_vec::<f32>().unwrap());
    assert_eq!(staged.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 1.0, 3.0]);

    // Empty arrays move too.
    let empty = ad::zeros(&[0, 3], dev("fake:0"))
        .unwrap()
        .to_device(dev("lite:1"))
        .unwrap_err();
    assert!(
        matches!(empty, Error::UnsupportedDType { dtype: DType::F64, .. }),
        "{empty:?}"
    );
    let empty = ad::zeros(&[0, 3], (DType::F32, dev("fake:0")))
        .unwrap()
        .to_device(dev("lite:1"))
        .unwrap();
    assert_eq!((empty.shape(), empty.device()), (&[0usize, 3][..], dev("lite:1")));
}

#[test]
fn unavailable_devices_are_errors_not_fallbacks() {
    let _rt = use_test_runtime();
    let bad: Device = dev("fake:7");
    let err = ad::zeros(&[2], bad).unwrap_err();
    assert!(matches!(err, Error::DeviceUnavailable { .. }), "{err:?}");
    assert!(err.to_string().contains("fake:7"));
    assert!(matches!(
        on("fake:0").to_device(dev("nosuch:0")),
        Err(Error::DeviceUnavailable { .. })
    ));
    let scoped = with_device(dev("cuda:3"), || ad::ones(&[1], ()));
    assert!(matches!(scoped, Err(Error::DeviceUnavailable { .. })), "{scoped:?}");
}

#[test]
fn dtypes_a_device_lacks_are_errors_naming_both() {
    let _rt = use_test_runtime();
    let check = |r: ad::Result<Array>, dtype: DType| match r {
        Err(e @ Error::UnsupportedDType { .. }) => {
            let text = e.to_string();
            assert!(text.contains(dtype.name()) && text.contains("lite:0"), "{text}");
        }
        other => panic!("expected UnsupportedDType, got {other:?}"),
    };
    check(ad::zeros(&[2], (DType::F64, dev("lite:0"))), DType::F64);
    // Without a dtype, the device's default float: f32 where f64 is missing.
    assert_eq!(ad::zeros(&[2], dev("lite:0")).unwrap().dtype(), DType::F32);
    let x = on("lite:0");
    check(x.astype(DType::F16), DType::F16);
    check(ad::zeros_like(&x, DType::F64), DType::F64);
    // Integers compute float functions in the device's floats: f32 for
    // i32 on lite:0, which lacks f64 (design section 14).
    assert_eq!(x.astype(DType::I32).unwrap().sqrt().unwrap().dtype(), DType::F32);
    // A dtype the device holds is fine.
    assert_eq!(x.astype(DType::BF16).unwrap().device(), dev("lite:0"));
}

#[test]
fn ops_a_device_does_not_declare_are_unsupported_and_never_run_elsewhere() {
    let _rt = use_test_runtime();
    let x = on("lite:0");
    match x.sin() {
        Err(Error::Unsupported { op, dtype, device }) => {
            assert_eq!((op.as_str(), dtype, device), ("sin", DType::F32, dev("lite:0")));
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // The same op is fine on a device that declares it.
    assert_eq!(
        x.to_device(dev("fake:0")).unwrap().sin().unwrap().device(),
        dev("fake:0")
    );
    // And `cos` is declared on lite.
    assert_eq!(x.cos().unwrap().device(), dev("lite:0"));
}

#[test]
fn a_program_without_backends_is_told_how_to_get_one() {
    // No test runtime installed and no backend registered in this test
    // binary: the process-wide runtime has no device, and says why.
    assert!(anydev_core::builtin_providers().is_empty());
    match ad::arange(0, 4, 1, ()) {
        Err(Error::DeviceUnavailable { device, reason, .. }) => {
            assert_eq!(device, "default");
            assert!(reason.contains("`anydev` crate"), "{reason}");
            assert!(reason.contains("builtin_backend!"), "{reason}");
        }
        other => panic!("expected DeviceUnavailable, got {other:?}"),
    }
    let inside = ad::with_runtime(common::runtime(), || ad::zeros(&[1], ()).unwrap().device());
    assert_eq!(inside, dev("fake:0"));
}
