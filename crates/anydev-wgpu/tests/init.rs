//! Initialisation, properties and capabilities, with and without adapters.

mod common;

use anydev_core::capability::keys;
use anydev_core::{DType, InitError};
use anydev_wgpu::{InitOptions, BACKENDS_ENV};

#[test]
fn no_backend_is_unavailable_with_the_reason() {
    match anydev_wgpu::init(&InitOptions::none()) {
        Err(InitError::Unavailable(reason)) => assert!(reason.contains("ANYDEV_WGPU_BACKENDS=none"), "{reason}"),
        Err(other) => panic!("expected Unavailable, got {other:?}"),
        Ok(_) => panic!("expected Unavailable, got a backend"),
    }
}

/// The provider reads the environment when the runtime initialises it:
/// run in a child process with `ANYDEV_WGPU_BACKENDS=none`.
#[test]
fn the_provider_honours_the_environment_setting() {
    if std::env::var("ANYDEV_WGPU_TEST_CHILD").is_ok() {
        let provider = anydev_wgpu::provider();
        assert_eq!(
            (provider.name.as_str(), provider.priority),
            ("wgpu", anydev_wgpu::PRIORITY)
        );
        let runtime = anydev_core::Runtime::new(vec![provider], Default::default());
        let status = runtime.backends()[0].status();
        assert_eq!(status.label(), "unavailable", "{status:?}");
        assert!(status.reason().unwrap().contains("none"), "{status:?}");
        return;
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "the_provider_honours_the_environment_setting", "--nocapture"])
        .env("ANYDEV_WGPU_TEST_CHILD", "1")
        .env(BACKENDS_ENV, "none")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&child.stderr)
    );
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
fn a_bad_backend_name_is_a_failure_that_names_it() {
    let err = anydev_wgpu::adapter::parse_backends("vulkan,glide").unwrap_err();
    assert!(err.contains("glide"), "{err}");
}

/// Without any adapter (no Vulkan driver), initialisation must say so
/// rather than let the other tests pass silently; with one, the device
/// describes itself.
#[test]
fn devices_describe_themselves_or_the_backend_says_why_not() {
    let result = anydev_wgpu::init(&InitOptions::from_env().unwrap());
    let backend = match result {
        Ok(b) => b,
        Err(InitError::Unavailable(reason)) => {
            assert!(!reason.is_empty());
            eprintln!("SKIPPED: wgpu is unavailable here: {reason}");
            return;
        }
        Err(InitError::Failed(reason)) => panic!("wgpu failed to initialise: {reason}"),
    };
    assert!(backend.device_count() >= 1);
    assert_eq!(backend.name(), "wgpu");
    for i in 0..backend.device_count() {
        let p = backend.properties(i).unwrap();
        let caps = backend.capabilities(i).unwrap();
        eprintln!("wgpu:{i}: {} / {} / {}", p.name, p.vendor, p.driver);
        assert!(!p.name.is_empty() && !p.driver.is_empty() && !p.vendor.is_empty());
        for key in keys::ALL {
            assert!(caps.get(key).is_some(), "standard key {key} missing");
        }
        for d in [
            DType::Bool,
            DType::I8,
            DType::U16,
            DType::I32,
            DType::U32,
            DType::F16,
            DType::BF16,
            DType::F32,
        ] {
            assert!(caps.supports_dtype(d), "{d} must be supported everywhere");
        }
        assert_eq!(caps.flag(keys::F64), caps.supports_dtype(DType::F64));
        assert!(caps.int(keys::MAX_ALLOCATION_BYTES).unwrap() > 0);
        assert!(caps.get("wgpu.max_workgroup_size").is_some());
        assert!(caps.flag(keys::ASYNC_EXECUTION));
        // Unsupported pairs are refused up front.
        assert!(!backend.supports(
            i,
            anydev_core::ops::OpCode::Unary(anydev_core::ops::UnaryOp::Exp),
            DType::I32
        ));
        assert!(backend.supports(i, anydev_core::ops::OpCode::Matmul, DType::F32));
    }
    assert!(backend.properties(backend.device_count()).is_err());
}

#[test]
fn f64_transcendentals_are_declared_where_f64_is_held() {
    let g = match common::gpu() {
        Some(g) => g,
        None => return,
    };
    use anydev_core::ops::{BinaryOp, OpCode, UnaryOp};
    if g.holds(DType::F64) {
        for op in [
            UnaryOp::Sqrt,
            UnaryOp::Exp,
            UnaryOp::Log10,
            UnaryOp::Sin,
            UnaryOp::Atanh,
        ] {
            assert!(g.backend.supports(0, OpCode::Unary(op), DType::F64), "{op}");
        }
        for op in [BinaryOp::Pow, BinaryOp::Atan2, BinaryOp::LogAddExp] {
            assert!(g.backend.supports(0, OpCode::Binary(op), DType::F64), "{op}");
        }
    }
}
