//! Building the C test plugin variants and wiring runtimes to them.

#![allow(dead_code)] // each test file uses its own part

use anydev_core::plugin::PluginConfig;
use anydev_core::{BackendStatus, Runtime, RuntimeConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The target triple `cc` should compile for (the host: tests run here).
fn triple() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "macos" => format!("{arch}-apple-darwin"),
        _ => format!("{arch}-unknown-linux-gnu"),
    }
}

/// A scratch directory unique to this test process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("anydev-plugin-abi-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// `libctest_<variant>.so` compiled from `tests/c_plugin/test_plugin.c`
/// with `defines`, built once per process.
pub fn c_plugin(variant: &str, defines: &[(&str, &str)]) -> PathBuf {
    c_plugin_with(variant, defines, &[])
}

/// As [`c_plugin`], with `extra` arguments after the source file (libraries
/// to link).
pub fn c_plugin_with(variant: &str, defines: &[(&str, &str)], extra: &[&std::ffi::OsStr]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(path) = built.get(variant) {
        return path.clone();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch(&format!("c-{variant}"));
    let out = dir.join(format!(
        "{}ctest_{variant}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let mut cmd = shared_library_compiler();
    for (name, value) in defines {
        cmd.arg(format!("-D{name}={value}"));
    }
    cmd.arg("-I").arg(root.join("include"));
    cmd.arg(root.join("tests/c_plugin/test_plugin.c"))
        .args(extra)
        .arg("-o")
        .arg(&out);
    run_compiler(cmd, variant);
    built.insert(variant.to_owned(), out.clone());
    out
}

/// The C compiler, set up to build a shared library from C99 without warnings.
fn shared_library_compiler() -> std::process::Command {
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .target(&triple())
        .host(&triple())
        .opt_level(0)
        .debug(false)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-fPIC"]);
    cmd.arg(if cfg!(target_os = "macos") {
        "-dynamiclib"
    } else {
        "-shared"
    });
    cmd
}

fn run_compiler(mut cmd: std::process::Command, what: &str) {
    let result = cmd.output().expect("run the C compiler");
    assert!(
        result.status.success(),
        "compiling {what} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// `dir/lib<name>.so` built from the C `source` text.
pub fn c_library(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).expect("write C source");
    let out = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let mut cmd = shared_library_compiler();
    cmd.arg(&src).arg("-o").arg(&out);
    run_compiler(cmd, name);
    out
}

/// The good C plugin.
pub fn good_plugin() -> PathBuf {
    c_plugin("good", &[])
}

/// Writes `<dir>/<file>` as a manifest for `name` with `library_path`,
/// plus `extra` JSON members (e.g. `"priority": 3`).
pub fn manifest(dir: &Path, file: &str, name: &str, library_path: &Path, extra: &str) -> PathBuf {
    let path = dir.join(file);
    let lib = library_path.to_str().expect("UTF-8 path").replace('\\', "\\\\");
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(",\n  {extra}")
    };
    std::fs::write(
        &path,
        format!("{{\n  \"file_format_version\": \"1.0.0\",\n  \"name\": \"{name}\",\n  \"library_path\": \"{lib}\"{extra}\n}}\n"),
    )
    .expect("write manifest");
    path
}

/// A runtime with no built-in backends that searches `dirs` for manifests
/// and loads `direct` (`ANYDEV_PLUGINS` syntax).
pub fn runtime(dirs: &[&Path], direct: Option<&str>) -> Runtime {
    let config = RuntimeConfig {
        plugins: PluginConfig {
            search_dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
            direct: direct.map(str::to_owned),
        },
        ..RuntimeConfig::default()
    };
    Runtime::with_plugins(Vec::new(), config)
}

/// The status of backend `name`.
pub fn status(runtime: &Runtime, name: &str) -> BackendStatus {
    runtime
        .record(name)
        .unwrap_or_else(|| panic!("no backend {name}; problems: {:?}", runtime.problems()))
        .status()
        .clone()
}

/// The failure reason of backend `name`, failing the test if it is available.
pub fn failure(runtime: &Runtime, name: &str) -> String {
    match status(runtime, name) {
        BackendStatus::Failed { reason } => reason,
        other => panic!("expected {name} to have failed, got {other:?}"),
    }
}

/// Uploads `values` to a fresh device buffer of `device`.
pub fn upload(runtime: &Runtime, device: anydev_core::Device, values: &[f32]) -> anydev_core::Buffer {
    let backend = runtime.backend(device).expect("backend");
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let buffer = anydev_core::backend::allocate(backend, device, bytes.len(), anydev_core::MemoryKind::Device)
        .expect("allocate");
    let stream = backend.default_stream(device.index()).expect("stream");
    backend.copy_from_host(&stream, &bytes, &buffer, 0).expect("upload");
    buffer
}

/// Reads a buffer of f32 back to the host.
pub fn download(buffer: &anydev_core::Buffer) -> Vec<f32> {
    let backend = buffer.backend();
    let stream = backend.default_stream(buffer.device().index()).expect("stream");
    let mut bytes = vec![0u8; buffer.len()];
    backend.copy_to_host(&stream, buffer, 0, &mut bytes).expect("download");
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A contiguous 1-D f32 operand over all of `buffer`.
pub fn vector<'a>(buffer: &'a anydev_core::Buffer, shape: &'a [usize]) -> anydev_core::TensorRef<'a> {
    anydev_core::TensorRef {
        buffer,
        offset: 0,
        dtype: anydev_core::DType::F32,
        shape,
        strides: &[1],
    }
}
