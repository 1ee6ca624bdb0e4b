//! The devices the tests run on, and the conformance module's helpers
//! (its independent scalar reference included) in panicking form.

#![allow(dead_code)] // each test file uses its own part

use anydev::plugin::PluginConfig;
use anydev::{DType, Device, Runtime, RuntimeConfig};
use std::sync::OnceLock;

/// The built-in devices plus two simulators, loaded through manifests as
/// the device-generic suite loads plugins: `sim`, which implements the ops
/// through the C ABI's extension calls, and `simbare`, the same library
/// told to list none of them (a plugin without the library's ops).
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let dir =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("anydev-quant-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the manifest directory");
        let library = anydev_testing::locate::sim_library();
        let refuse: Vec<&str> = anydev_quant::op::ALL.to_vec();
        for (name, options) in [
            ("sim", r#"{"devices": 1}"#.to_owned()),
            ("simbare", format!(r#"{{"devices": 1, "refuse_ops": {refuse:?}}}"#)),
        ] {
            let manifest = format!(
                r#"{{"file_format_version": "1.0.0", "name": "{name}", "library_path": {library:?}, "options": {options}}}"#
            );
            std::fs::write(dir.join(format!("{name}.json")), manifest).expect("write a sim manifest");
        }
        let config = RuntimeConfig {
            plugins: PluginConfig {
                search_dirs: vec![dir],
                direct: None,
            },
            ..RuntimeConfig::default()
        };
        Runtime::with_plugins(anydev::backends::builtin_providers(), config)
    })
}

/// The devices `ANYDEV_TEST_DEVICES` selects (every device by default).
pub fn devices() -> Vec<Device> {
    anydev_testing::select::from_env(runtime()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `f` on every selected device, with the test runtime installed.
pub fn on_each_device(mut f: impl FnMut(Device)) {
    anydev::with_runtime(runtime(), || {
        for device in devices() {
            f(device)
        }
    })
}

pub fn supports(device: Device, dtype: DType) -> bool {
    runtime().capabilities(device).is_ok_and(|c| c.supports_dtype(dtype))
}

/// Whether `device` runs the ops: a kernel registered for its kind, or
/// its plugin's own implementation (else its calls are `NoKernel`).
pub fn has_kernels(device: Device) -> bool {
    anydev_quant::register().expect("register the quant ops");
    let ops = anydev::extension::device_ops_in(runtime(), device).expect("a device of the runtime");
    ops.iter().any(|op| op == anydev_quant::op::QUANTIZE_4BIT)
}

/// An array of `values` (exactly representable in `dtype`) on `device`.
pub fn array(values: &[f32], shape: &[usize], dtype: DType, device: Device) -> anydev::Array {
    anydev_quant::conformance::array(values, shape, dtype, device)
        .unwrap_or_else(|e| panic!("{dtype} array on {device}: {e}"))
}

/// A float array's values as f32 bits.
pub fn bits(a: &anydev::Array) -> Vec<u32> {
    anydev_quant::conformance::bits(a).unwrap_or_else(|e| panic!("read {a:?}: {e}"))
}
