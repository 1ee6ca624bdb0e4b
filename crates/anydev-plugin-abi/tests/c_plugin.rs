//! A plugin written in C against the header, loaded the normal way (a
//! manifest with a relative `library_path`), works as an ordinary backend;
//! what it leaves unimplemented is a clean `Unsupported` error.

mod support;

use anydev_core::capability::{keys, CapValue};
use anydev_core::ops::{BinaryOp, Op, OpCode, Operand, UnaryOp};
use anydev_core::{BackendStatus, DType, Device, Error, Runtime, Scalar};
use anydev_plugin_abi::{ABI_VERSION_MAJOR, ABI_VERSION_MINOR};
use std::path::Path;
use support::*;

/// A manifest next to a copy of the good plugin, in a subdirectory named
/// relative to the manifest.
fn runtime_with_c_plugin(test: &str) -> Runtime {
    let dir = scratch(test);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::copy(good_plugin(), dir.join("lib/libctest.so")).unwrap();
    manifest(
        &dir,
        "ctest.json",
        "ctest",
        Path::new("lib/libctest.so"),
        r#""abi_version": "1.0", "priority": 5"#,
    );
    runtime(&[&dir], None)
}

fn ctest() -> Device {
    "ctest:0".parse().unwrap()
}

#[test]
fn a_relative_library_path_resolves_and_the_device_is_listed() {
    let rt = runtime_with_c_plugin("relative");
    assert_eq!(status(&rt, "ctest"), BackendStatus::Available { devices: 1 });
    assert_eq!(rt.devices(), [ctest()]);
    assert_eq!(rt.default_device().unwrap(), ctest());
    let props = rt.properties(ctest()).unwrap();
    assert_eq!((props.name.as_str(), props.memory_bytes), ("C test device", 1 << 20));
}

#[test]
fn typed_capabilities_cross_the_boundary() {
    let rt = runtime_with_c_plugin("caps");
    let caps = rt.capabilities(ctest()).unwrap();
    assert_eq!(caps.strings(keys::DTYPES), ["f32"]);
    assert!(!caps.flag(keys::F64));
    assert_eq!(caps.int(keys::COMPUTE_UNITS), Some(1));
    assert_eq!(caps.get("ctest.clock_ghz"), Some(&CapValue::F64(1.5)));
    assert_eq!(caps.get("ctest.language"), Some(&CapValue::Str("C99".into())));
    let built_for = format!("{ABI_VERSION_MAJOR}.{ABI_VERSION_MINOR}");
    assert_eq!(caps.get("plugin.abi_version"), Some(&CapValue::Str(built_for)));
    // Standard keys the plugin leaves out read as conservative defaults.
    assert_eq!(caps.get(keys::MANAGED_MEMORY), Some(&CapValue::Bool(false)));
}

#[test]
fn fill_copy_and_add_compute_on_the_c_device() {
    let rt = runtime_with_c_plugin("ops");
    let backend = rt.backend(ctest()).unwrap();
    let stream = backend.default_stream(0).unwrap();
    let shape = [4usize];
    let a = upload(&rt, ctest(), &[1.0, 2.0, 3.0, 4.0]);
    let b = upload(&rt, ctest(), &[10.0, 20.0, 30.0, 40.0]);
    let out = upload(&rt, ctest(), &[0.0; 4]);
    let (ta, tb, tout) = (vector(&a, &shape), vector(&b, &shape), vector(&out, &shape));

    let add = Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(ta),
        rhs: Operand::Tensor(tb),
        out: tout,
    };
    backend.execute(&stream, &add).unwrap();
    assert_eq!(download(&out), [11.0, 22.0, 33.0, 44.0]);

    let add_scalar = Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(ta),
        rhs: Operand::Scalar(Scalar::F32(0.5)),
        out: tout,
    };
    backend.execute(&stream, &add_scalar).unwrap();
    assert_eq!(download(&out), [1.5, 2.5, 3.5, 4.5]);

    // A reversed view (negative stride, offset at the last element).
    let reversed = anydev_core::TensorRef {
        offset: 12,
        strides: &[-1],
        ..tb
    };
    backend.execute(&stream, &Op::Copy { x: reversed, out: tout }).unwrap();
    assert_eq!(download(&out), [40.0, 30.0, 20.0, 10.0]);

    backend
        .execute(
            &stream,
            &Op::Fill {
                out: tout,
                value: Scalar::F32(-2.0),
            },
        )
        .unwrap();
    assert_eq!(download(&out), [-2.0; 4]);

    let stats = backend.memory_stats(0).unwrap();
    assert_eq!((stats.in_use, stats.allocations, stats.limit), (48, 3, Some(1 << 20)));
    drop((a, b, out));
    assert_eq!(
        backend.memory_stats(0).unwrap().in_use,
        0,
        "dropping buffers frees them in the plugin"
    );
}

#[test]
fn ops_the_plugin_leaves_out_are_unsupported_errors() {
    let rt = runtime_with_c_plugin("unsupported");
    let backend = rt.backend(ctest()).unwrap();
    assert!(backend.supports(0, OpCode::Binary(BinaryOp::Add), DType::F32));
    assert!(!backend.supports(0, OpCode::Binary(BinaryOp::Add), DType::F64));
    assert!(!backend.supports(0, OpCode::Unary(UnaryOp::Exp), DType::F32));
    let stream = backend.default_stream(0).unwrap();
    let shape = [2usize];
    let x = upload(&rt, ctest(), &[1.0, 2.0]);
    let out = upload(&rt, ctest(), &[0.0, 0.0]);
    let exp = Op::Unary {
        op: UnaryOp::Exp,
        x: vector(&x, &shape),
        out: vector(&out, &shape),
    };
    match backend.execute(&stream, &exp) {
        Err(Error::Unsupported { op, dtype, device }) => {
            assert_eq!((op.as_str(), dtype, device), ("exp", DType::F32, ctest()));
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn out_of_range_operands_are_rejected_before_the_plugin_sees_them() {
    let rt = runtime_with_c_plugin("bounds");
    let backend = rt.backend(ctest()).unwrap();
    let stream = backend.default_stream(0).unwrap();
    let x = upload(&rt, ctest(), &[1.0, 2.0]);
    let out = upload(&rt, ctest(), &[0.0, 0.0]);
    let too_long = [3usize];
    let copy = Op::Copy {
        x: vector(&x, &too_long),
        out: vector(&out, &too_long),
    };
    assert!(matches!(
        backend.execute(&stream, &copy),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn events_and_streams_round_trip() {
    let rt = runtime_with_c_plugin("events");
    let backend = rt.backend(ctest()).unwrap();
    let stream = backend.create_stream(0).unwrap();
    let event = backend.record_event(&stream).unwrap();
    backend.wait_event(&backend.default_stream(0).unwrap(), &event).unwrap();
    assert!(backend.query_event(&event).unwrap());
    backend.synchronize_event(&event).unwrap();
    backend.synchronize_stream(&stream).unwrap();
    backend.synchronize(0).unwrap();
}
