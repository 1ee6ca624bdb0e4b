//! Every device-generic case on every device the runtime sees: `cpu:0`,
//! the simulator's devices (loaded through the plugin loader from its
//! built library, two devices with a memory limit), and `wgpu:0` where a
//! Vulkan/Metal/DX12 adapter exists. One libtest line per case, device and
//! dtype; skips are ignored lines that name the unmet requirement.
//! `ANYDEV_TEST_DEVICES` narrows the devices (`cpu,sim`, `-wgpu`).

use anydev_core::plugin::PluginConfig;
use anydev_core::{Runtime, RuntimeConfig};
use anydev_testing::runner::{Outcome, Plan};
use anydev_testing::{cases, locate, select, KnownFailures};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::Arc;

/// The built-ins plus the simulator through a manifest (two devices, a
/// memory limit so the out-of-memory case runs on them), built explicitly
/// rather than from the process environment so the run covers the same
/// devices everywhere.
fn runtime() -> &'static Runtime {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("anydev-testing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the manifest directory");
    let manifest = serde_json::json!({
        "file_format_version": "1.0.0",
        "name": "sim",
        "library_path": locate::sim_library(),
        "options": {"devices": 2, "memory_limit": "256M"},
    });
    std::fs::write(dir.join("sim.json"), manifest.to_string()).expect("write the sim manifest");
    let config = RuntimeConfig {
        plugins: PluginConfig {
            search_dirs: vec![dir],
            direct: None,
        },
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::with_plugins(anydev::backends::builtin_providers(), config);
    Box::leak(Box::new(runtime))
}

fn main() {
    let args = Arguments::from_args();
    let runtime = runtime();
    let devices = select::from_env(runtime).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let plan = Arc::new(Plan {
        runtime,
        devices: devices.clone(),
        under_test: devices,
        extra_known: KnownFailures::default(),
    });
    let cases: &'static [anydev_testing::Case] = Box::leak(cases::all().into_boxed_slice());
    let trials = plan.trials(cases).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let trials: Vec<Trial> = trials
        .into_iter()
        .map(|trial| {
            let name = trial.name.clone();
            match &trial.skip {
                Some(reason) => Trial::test(name, || Ok(()))
                    .with_ignored_flag(true)
                    .with_kind(reason.clone()),
                None => {
                    let plan = Arc::clone(&plan);
                    Trial::test(name, move || match plan.run(&trial) {
                        Outcome::Pass | Outcome::ExpectedFail(_) => Ok(()),
                        other => Err(Failed::from(other.reason())),
                    })
                }
            }
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
