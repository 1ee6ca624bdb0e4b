//! The shared op-call checks refuse each malformed call with the error a
//! caller can act on, and return the facts a backend launches with.

use anydev_core::backend::{allocate, check_fill, device_at, Backend, TensorRef};
use anydev_core::memory::{Buffer, MemoryKind};
use anydev_core::ops::{BinaryOp, Distribution, Operand, ReduceOp, UnaryOp};
use anydev_core::validate::{Check, MatmulDims, Reduction};
use anydev_core::{DType, Device, DeviceKind, Error};
use std::sync::Arc;

/// Host memory for operands to name; the checks never read it.
fn buffer() -> Buffer {
    let backend: Arc<dyn Backend> = Arc::new(anydev_cpu::CpuBackend::new());
    allocate(&backend, Device::cpu(), 1024, MemoryKind::System).unwrap()
}

/// A contiguous operand; the strides are leaked so that it can borrow them.
fn t<'a>(buffer: &'a Buffer, dtype: DType, shape: &'a [usize]) -> TensorRef<'a> {
    let mut strides = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as isize;
    }
    TensorRef {
        buffer,
        offset: 0,
        dtype,
        shape,
        strides: Box::leak(strides.into_boxed_slice()),
    }
}

fn check() -> Check {
    Check::new("op", Device::cpu())
}

#[test]
fn reduce_returns_the_kept_and_reduced_extents() {
    let b = buffer();
    let x = t(&b, DType::F32, &[2, 3, 4]);
    let out = t(&b, DType::F32, &[2, 1, 1]);
    let r = check().reduce(ReduceOp::Sum, &x, &[1, 2], &out).unwrap();
    assert_eq!(
        r,
        Reduction {
            dtype: DType::F32,
            shape: vec![2, 1, 1],
            reduced: vec![3, 4],
            n_out: 2,
            n_red: 12,
        }
    );
    let arg_out = t(&b, DType::I64, &[2, 1, 4]);
    assert_eq!(
        check().reduce(ReduceOp::ArgMax, &x, &[1], &arg_out).unwrap().dtype,
        DType::I64
    );
}

#[test]
fn reduce_refuses_bad_axes_outputs_and_empty_min() {
    let b = buffer();
    let x = t(&b, DType::F32, &[2, 3]);
    let out = t(&b, DType::F32, &[1, 1]);
    let c = check();
    assert!(matches!(
        c.reduce(ReduceOp::Sum, &x, &[2], &out),
        Err(Error::InvalidAxis { axis: 2, ndim: 2, .. })
    ));
    assert!(matches!(
        c.reduce(ReduceOp::Sum, &x, &[1, 0], &out),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        c.reduce(ReduceOp::ArgMin, &x, &[0, 1], &out),
        Err(Error::InvalidArgument { .. })
    ));
    let wrong_shape = t(&b, DType::F32, &[2, 3]);
    assert!(matches!(
        c.reduce(ReduceOp::Sum, &x, &[0, 1], &wrong_shape),
        Err(Error::ShapeMismatch { .. })
    ));
    // `all` outputs bool, not the input's dtype.
    assert!(matches!(
        c.reduce(ReduceOp::All, &x, &[0, 1], &out),
        Err(Error::InvalidArgument { .. })
    ));
    let empty = t(&b, DType::F32, &[2, 0]);
    let kept = t(&b, DType::F32, &[2, 1]);
    assert!(matches!(
        c.reduce(ReduceOp::Max, &empty, &[1], &kept),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(c.reduce(ReduceOp::Sum, &empty, &[1], &kept).unwrap().n_red, 0);
}

#[test]
fn matmul_returns_batch_and_dims_and_refuses_disagreeing_shapes() {
    let b = buffer();
    let (x, y, out) = (
        t(&b, DType::F32, &[3, 2, 4]),
        t(&b, DType::F32, &[3, 4, 5]),
        t(&b, DType::F32, &[3, 2, 5]),
    );
    assert_eq!(
        check().matmul(&x, &y, &out).unwrap(),
        MatmulDims {
            batch: 3,
            m: 2,
            k: 4,
            n: 5
        }
    );
    let bad_k = t(&b, DType::F32, &[3, 5, 5]);
    assert!(matches!(
        check().matmul(&x, &bad_k, &out),
        Err(Error::ShapeMismatch { .. })
    ));
    let vector = t(&b, DType::F32, &[4]);
    assert!(matches!(
        check().matmul(&vector, &vector, &out),
        Err(Error::InvalidArgument { .. })
    ));
    let f64_out = t(&b, DType::F64, &[3, 2, 5]);
    assert!(matches!(
        check().matmul(&x, &y, &f64_out),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn take_returns_the_output_shape() {
    let b = buffer();
    let (x, idx) = (t(&b, DType::F32, &[4, 3]), t(&b, DType::I64, &[5]));
    let out = t(&b, DType::F32, &[4, 5]);
    assert_eq!(check().take(&x, &idx, 1, &out).unwrap(), vec![4, 5]);
    let f32_idx = t(&b, DType::F32, &[5]);
    assert!(matches!(
        check().take(&x, &f32_idx, 1, &out),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        check().take(&x, &idx, 0, &out),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn elementwise_output_dtypes_follow_the_op() {
    let b = buffer();
    let (x, i) = (t(&b, DType::F32, &[2]), t(&b, DType::I32, &[2]));
    let (bools, floats) = (t(&b, DType::Bool, &[2]), t(&b, DType::F32, &[2]));
    let c = check();
    assert!(c.unary(UnaryOp::IsNan, &x, &bools).is_ok());
    assert!(c.unary(UnaryOp::Exp, &x, &bools).is_err());
    let (lhs, rhs) = (Operand::Tensor(x), Operand::Tensor(i));
    assert!(matches!(
        c.binary(BinaryOp::Add, &lhs, &rhs, &floats),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(c.binary(BinaryOp::Less, &lhs, &lhs, &bools).unwrap(), DType::F32);
    assert!(c.binary(BinaryOp::Less, &lhs, &lhs, &floats).is_err());
}

#[test]
fn random_parameters_must_be_finite_and_ordered() {
    let c = check();
    let u = c.random(&Distribution::Uniform { low: -1.0, high: 2.0 }).unwrap();
    assert_eq!((u.p, u.q, u.normal), (-1.0, 2.0, false));
    assert!(c.random(&Distribution::Uniform { low: 2.0, high: 1.0 }).is_err());
    assert!(c.random(&Distribution::Normal { mean: 0.0, std: -1.0 }).is_err());
    assert!(c
        .random(&Distribution::Normal {
            mean: f64::NAN,
            std: 1.0
        })
        .is_err());
}

#[test]
fn misaligned_offsets_and_partial_fill_patterns_are_refused() {
    let b = buffer();
    let mut x = t(&b, DType::F32, &[2]);
    x.offset = 8;
    assert_eq!(check().element_offset(&x).unwrap(), 2);
    x.offset = 6;
    assert!(matches!(check().element_offset(&x), Err(Error::InvalidArgument { .. })));
    assert!(check_fill(12, &[0; 4]).is_ok());
    assert!(check_fill(10, &[0; 4]).is_err());
    assert!(check_fill(0, &[]).is_err());
}

#[test]
fn device_at_names_the_devices_a_backend_has() {
    let kind = DeviceKind::new("fake");
    let devices = ["first", "second"];
    assert_eq!(device_at(&devices, kind, 1).unwrap(), &"second");
    match device_at(&devices, kind, 2) {
        Err(Error::DeviceUnavailable { device, available, .. }) => {
            assert_eq!(device, "fake:2");
            assert_eq!(available, vec![Device::new(kind, 0), Device::new(kind, 1)]);
        }
        other => panic!("expected DeviceUnavailable, got {other:?}"),
    }
}
