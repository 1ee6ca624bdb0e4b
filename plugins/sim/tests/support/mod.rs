//! Finding (or building) the simulator's shared library, and runtimes that
//! discover it through a manifest the way users' machines do.

#![allow(dead_code)] // each test file uses its own part

use anydev_core::plugin::PluginConfig;
use anydev_core::{BackendProvider, Runtime, RuntimeConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `libanydev_sim.so` (or the platform's spelling).
fn file_name() -> String {
    format!(
        "{}anydev_sim{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The simulator library: `ANYDEV_SIM_LIBRARY` if set; else the one cargo
/// built next to this test executable (`target/<profile>/deps/..`); else
/// built now with `cargo build -p anydev-sim` into the same target dir.
pub fn sim_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = std::env::var_os("ANYDEV_SIM_LIBRARY") {
            return PathBuf::from(path);
        }
        let exe = std::env::current_exe().expect("test executable path");
        let deps = exe.parent().expect("deps dir");
        let profile_dir = deps.parent().expect("profile dir");
        for candidate in [profile_dir.join(file_name()), deps.join(file_name())] {
            if candidate.is_file() {
                return candidate;
            }
        }
        build(profile_dir);
        let built = profile_dir.join(file_name());
        assert!(
            built.is_file(),
            "cargo build -p anydev-sim did not produce {}",
            built.display()
        );
        built
    })
    .clone()
}

fn build(profile_dir: &Path) {
    let target_dir = profile_dir.parent().expect("target dir");
    let profile = profile_dir.file_name().and_then(|p| p.to_str()).unwrap_or("debug");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "anydev-sim", "--lib"])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile != "debug" {
        cmd.args(["--profile", if profile == "release" { "release" } else { profile }]);
    }
    let status = cmd.status().expect("run cargo build -p anydev-sim");
    assert!(status.success(), "cargo build -p anydev-sim failed");
}

/// A scratch directory unique to this process and `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("anydev-sim-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Writes a manifest for the simulator with `options` (a JSON object) into
/// a fresh directory and returns the directory.
pub fn manifest_dir(test: &str, options: &str) -> PathBuf {
    let dir = scratch(test);
    let manifest = format!(
        r#"{{
  "file_format_version": "1.0.0",
  "name": "sim",
  "library_path": {:?},
  "abi_version": "1.0",
  "priority": 10,
  "options": {options}
}}
"#,
        sim_library().to_str().expect("UTF-8 path")
    );
    std::fs::write(dir.join("sim.json"), manifest).expect("write manifest");
    dir
}

/// A runtime with `builtins` plus whatever the manifest directory holds.
pub fn runtime_with(test: &str, options: &str, builtins: Vec<BackendProvider>) -> Runtime {
    let config = RuntimeConfig {
        plugins: PluginConfig {
            search_dirs: vec![manifest_dir(test, options)],
            direct: None,
        },
        ..RuntimeConfig::default()
    };
    Runtime::with_plugins(builtins, config)
}

/// A runtime with only the simulator, discovered through its manifest.
pub fn sim_runtime(test: &str, options: &str) -> Runtime {
    runtime_with(test, options, Vec::new())
}
