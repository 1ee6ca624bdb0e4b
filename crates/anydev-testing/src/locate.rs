//! Finding the simulator plugin's shared library for tests, the way the
//! simulator's own tests and the device harness both need it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `libanydev_sim.so` (or the platform's spelling).
pub fn sim_file_name() -> String {
    format!(
        "{}anydev_sim{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The simulator library: `ANYDEV_SIM_LIBRARY` if set; else the newer of
/// the ones cargo built next to the running test executable
/// (`target/<profile>/` and its `deps/`); else built now with
/// `cargo build -p anydev-sim` into the same target dir.
pub fn sim_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = std::env::var_os("ANYDEV_SIM_LIBRARY") {
            return PathBuf::from(path);
        }
        let exe = std::env::current_exe().expect("test executable path");
        let deps = exe.parent().expect("deps dir");
        let profile_dir = deps.parent().expect("profile dir");
        // Cargo writes the library into `deps/` and copies it up only when
        // the build asks for it as an artifact, so either copy can be left
        // over from an older build: take the newer.
        let newest = [profile_dir.join(sim_file_name()), deps.join(sim_file_name())]
            .into_iter()
            .filter_map(|path| Some((path.metadata().ok()?.modified().ok()?, path)))
            .max();
        if let Some((_, path)) = newest {
            return path;
        }
        build(profile_dir);
        let built = profile_dir.join(sim_file_name());
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
