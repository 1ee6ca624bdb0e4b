//! Named extension ops implemented by a plugin written in C (ABI 1.4): the
//! C test device lists `ctest::axpy`, and calls reach it through the array
//! layer as users make them; a plugin without the calls keeps the
//! behaviour of kinds without a kernel.

mod support;

use anydev_array::extension::{self as ext, AttrKind, AttrValue, Attrs, CallOptions, HostFn, Kernel, OpDef};
use anydev_array::{from_slice, Array, Device, Error, Runtime, RuntimeGuard};
use anydev_core::extension::{KernelBody, TensorMeta};
use anydev_core::plugin::PluginConfig;
use anydev_core::RuntimeConfig;
use std::sync::{Arc, Once, OnceLock};
use support::*;

/// Defines `ctest::axpy` (out = a * x + y, x and y of one shape) with a
/// `cpu` kernel, once per process.
fn define_axpy() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ext::define_op(OpDef {
            name: "ctest::axpy".into(),
            inputs: 2,
            attrs: vec![("a".into(), AttrKind::Float)],
            shape_rule: Arc::new(|ins, _| match ins[0] == ins[1] {
                true => Ok(vec![ins[0].clone()]),
                false => Err(Error::invalid_argument("ctest::axpy", "x and y differ")),
            }),
        })
        .unwrap();
        let host: Arc<HostFn> = Arc::new(|ins, outs, attrs| {
            let a = attrs.float("a")? as f32;
            let (x, y) = (ins[0].as_slice::<f32>()?, ins[1].as_slice::<f32>()?);
            for ((o, x), y) in outs[0].as_mut_slice::<f32>()?.iter_mut().zip(x).zip(y) {
                *o = a * x + y;
            }
            Ok(())
        });
        ext::register_kernel("ctest::axpy", "cpu", Kernel::Host(host)).unwrap();
    });
}

/// The CPU, the C test plugin as `ctest`, and the same plugin built
/// without the extension-op calls as `oldext`, shared by the tests.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    define_axpy();
    RUNTIME.get_or_init(|| {
        let old = c_plugin("no_extensions", &[("TEST_NO_EXTENSIONS", "1")]);
        let config = RuntimeConfig {
            plugins: PluginConfig {
                search_dirs: Vec::new(),
                direct: Some(format!("ctest:{},oldext:{}", good_plugin().display(), old.display())),
            },
            ..RuntimeConfig::default()
        };
        Runtime::with_plugins(anydev::backends::builtin_providers(), config)
    })
}

fn dev(text: &str) -> Device {
    text.parse().unwrap()
}

fn axpy_attrs(a: f64) -> Attrs {
    Attrs::new().with("a", AttrValue::Float(a))
}

/// The inputs of the tests, on `device`.
fn operands(device: Device, shape: &[usize]) -> (Array, Array, Vec<f32>, Vec<f32>) {
    let n: usize = shape.iter().product();
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 2.0).collect();
    let y: Vec<f32> = (0..n).map(|i| 100.0 - i as f32 * 0.25).collect();
    let xa = from_slice(&x, shape, device).unwrap();
    let ya = from_slice(&y, shape, device).unwrap();
    (xa, ya, x, y)
}

/// a * x + y computed here in f64, independently of every kernel.
fn reference(a: f64, x: &[f32], y: &[f32]) -> Vec<f64> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| a * f64::from(x) + f64::from(y))
        .collect()
}

fn assert_close(got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (f64::from(*g) - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn the_device_lists_the_op_and_runs_it_matching_a_reference() {
    let _guard = RuntimeGuard::new(runtime());
    let ctest = dev("ctest:0");
    assert_eq!(runtime().backend(ctest).unwrap().extension_ops(0), ["ctest::axpy"]);
    assert!(ext::device_ops(ctest).unwrap().contains(&"ctest::axpy".to_owned()));
    assert!(!ext::device_ops(dev("oldext:0"))
        .unwrap()
        .contains(&"ctest::axpy".to_owned()));
    let (x, y, xs, ys) = operands(ctest, &[5]);
    let before = ext::host_fallbacks();
    let out = ext::call("ctest::axpy", &[&x, &y], &axpy_attrs(-0.75)).unwrap();
    assert_eq!((out.len(), out[0].device()), (1, ctest));
    assert_close(&out[0].to_vec::<f32>().unwrap(), &reference(-0.75, &xs, &ys));
    assert_eq!(ext::host_fallbacks(), before, "the device ran it, not the host");
}

#[test]
fn a_signature_the_device_refuses_is_a_clear_error() {
    let _guard = RuntimeGuard::new(runtime());
    let ctest = dev("ctest:0");
    let (x, y, xs, ys) = operands(ctest, &[2, 2]);
    match ext::call("ctest::axpy", &[&x, &y], &axpy_attrs(2.0)) {
        Err(e @ Error::Unsupported { .. }) => {
            let text = e.to_string();
            for needle in ["ctest::axpy", "f32[2, 2]", "ctest:0"] {
                assert!(text.contains(needle), "{needle:?} missing from: {text}");
            }
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    // Opting in to the host fallback serves the refused call on the CPU.
    let before = ext::host_fallbacks();
    let options = CallOptions { host_fallback: true };
    let out = ext::call_with("ctest::axpy", &[&x, &y], &axpy_attrs(2.0), options).unwrap();
    assert_eq!(out[0].device(), ctest);
    assert_close(&out[0].to_vec::<f32>().unwrap(), &reference(2.0, &xs, &ys));
    assert!(ext::host_fallbacks() > before);
}

#[test]
fn errors_from_extension_execute_carry_the_plugins_message() {
    let _guard = RuntimeGuard::new(runtime());
    let (x, y, _, _) = operands(dev("ctest:0"), &[3]);
    let err = ext::call("ctest::axpy", &[&x, &y], &axpy_attrs(f64::NAN)).unwrap_err();
    assert!(
        err.to_string().contains("a is NaN, which the C test device refuses"),
        "{err}"
    );
}

#[test]
fn a_plugin_without_the_calls_has_no_kernel_unless_the_host_fallback_is_chosen() {
    let _guard = RuntimeGuard::new(runtime());
    let old = dev("oldext:0");
    assert!(runtime().backend(old).unwrap().extension_ops(0).is_empty());
    let (x, y, xs, ys) = operands(old, &[4]);
    match ext::call("ctest::axpy", &[&x, &y], &axpy_attrs(3.0)) {
        Err(Error::NoKernel { device, available, .. }) => {
            assert_eq!(device, old);
            // The plugin kind whose device lists the op is named beside cpu.
            assert_eq!(available, ["cpu", "ctest"]);
        }
        other => panic!("expected NoKernel, got {other:?}"),
    }
    let before = ext::host_fallbacks();
    let options = CallOptions { host_fallback: true };
    let out = ext::call_with("ctest::axpy", &[&x, &y], &axpy_attrs(3.0), options).unwrap();
    assert_eq!(out[0].device(), old);
    assert_close(&out[0].to_vec::<f32>().unwrap(), &reference(3.0, &xs, &ys));
    assert!(ext::host_fallbacks() > before);
}

#[test]
fn the_backend_refuses_malformed_extension_calls_before_the_plugin_sees_them() {
    let rt = runtime();
    let ctest = dev("ctest:0");
    let backend = rt.backend(ctest).unwrap();
    let stream = backend.default_stream(0).unwrap();
    let x = upload(rt, ctest, &[1.0, 2.0, 3.0, 4.0]);
    let out = upload(rt, ctest, &[0.0; 2]);
    let attrs = axpy_attrs(1.0);
    let shape = [2usize];
    let every_other = anydev_core::TensorRef {
        strides: &[2],
        ..vector(&x, &shape)
    };
    let body = KernelBody::Device { op: "ctest::axpy" };
    let err = backend
        .run_kernel(
            &stream,
            &body,
            &[every_other, every_other],
            &[vector(&out, &shape)],
            &attrs,
        )
        .unwrap_err();
    assert!(err.to_string().contains("contiguous"), "{err}");
    let err = backend
        .run_kernel(
            &stream,
            &body,
            &[vector(&x, &shape), vector(&out, &shape)],
            &[vector(&out, &shape)],
            &attrs,
        )
        .unwrap_err();
    assert!(err.to_string().contains("fresh"), "{err}");
    let unlisted = KernelBody::Device { op: "ctest::other" };
    let err = backend
        .run_kernel(
            &stream,
            &unlisted,
            &[vector(&x, &shape)],
            &[vector(&out, &shape)],
            &attrs,
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("does not implement the extension op ctest::other"),
        "{err}"
    );
    // The support query speaks for the signature without touching memory.
    let meta = TensorMeta::new(anydev_core::DType::F32, &[3]);
    let three = [meta.clone(), meta.clone()];
    assert!(backend
        .extension_supported(0, "ctest::axpy", &three, &[meta], &attrs)
        .unwrap());
    let flat = TensorMeta::new(anydev_core::DType::F32, &[2, 2]);
    let square = [flat.clone(), flat.clone()];
    assert!(!backend
        .extension_supported(0, "ctest::axpy", &square, &[flat], &attrs)
        .unwrap());
}
