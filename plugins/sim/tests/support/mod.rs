//! Finding (or building) the simulator's shared library, and runtimes that
//! discover it through a manifest the way users' machines do.

#![allow(dead_code)] // each test file uses its own part

use anydev_core::plugin::PluginConfig;
use anydev_core::{BackendProvider, Device, Runtime, RuntimeConfig};
use std::path::{Path, PathBuf};

/// The simulator library, found (or built) by the shared locator.
pub use anydev_testing::locate::sim_library;

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

/// Runs the device-generic cases whose names start with `prefix` on the
/// simulated devices of `runtime`, failing on any failure, and checks that
/// each case ran on some device; returns how many runs passed.
pub fn run_sim_cases(runtime: &'static Runtime, prefix: &str) -> usize {
    use anydev_testing::runner::{Outcome, Plan};
    let devices: Vec<Device> = runtime
        .devices()
        .into_iter()
        .filter(|d| d.kind().as_str() == "sim")
        .collect();
    assert!(!devices.is_empty());
    let plan = Plan {
        runtime,
        devices: devices.clone(),
        under_test: devices,
        extra_known: Default::default(),
    };
    let cases: Vec<_> = anydev_testing::cases::all()
        .into_iter()
        .filter(|case| case.name.starts_with(prefix))
        .collect();
    let mut ran = 0;
    for trial in plan.trials(&cases).unwrap() {
        match plan.run(&trial) {
            Outcome::Pass => ran += 1,
            Outcome::Skip(_) => {}
            other => panic!("{}: {}", trial.name, other.reason()),
        }
    }
    assert!(ran >= cases.len(), "every case ran on some device ({ran} runs)");
    ran
}
