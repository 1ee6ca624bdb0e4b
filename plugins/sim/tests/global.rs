//! The process-wide runtime picks plugins up from the environment: here
//! `ANYDEV_PLUGINS`, with the XDG directories pointed at an empty place.
//! (Its own test binary: the global runtime reads the environment once.)

mod support;

use anydev_core::{Device, Runtime};

#[test]
fn the_global_runtime_appends_plugins_from_the_environment_after_the_builtins() {
    let empty = support::scratch("global-xdg");
    // This binary has a single test, so no other thread reads the
    // environment while it changes.
    std::env::set_var("ANYDEV_PLUGINS", format!("sim:{}", support::sim_library().display()));
    std::env::set_var("ANYDEV_PLUGIN_PATH", "");
    std::env::set_var("XDG_DATA_HOME", &empty);
    std::env::set_var("XDG_DATA_DIRS", &empty);
    std::env::remove_var("ANYDEV_DEVICE");
    std::env::remove_var("ANYDEV_BACKENDS");
    let rt = Runtime::global(|| vec![anydev_cpu::provider()]);
    let names: Vec<&str> = rt.backends().iter().map(|b| b.name()).collect();
    assert_eq!(names, ["cpu", "sim"]);
    let devices: Vec<Device> = ["cpu:0", "sim:0", "sim:1"].iter().map(|d| d.parse().unwrap()).collect();
    assert_eq!(rt.devices(), devices, "problems: {:?}", rt.problems());
}
