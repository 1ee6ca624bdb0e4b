//! `anydev info --probe-plugins`: load each discovered plugin in a process
//! of its own and say which ones die.
//!
//! A plugin that crashes (a segfault in its initialiser, an abort) takes
//! the process that loaded it down, and in-process nothing can catch that.
//! When `anydev info` itself dies, this finds the culprit: each plugin is
//! initialised and asked for its devices' properties and capabilities by
//! this program run again with the hidden `--probe-plugin NAME`.

use crate::output::outln;
use anydev_core::plugin::{self, Entry, PluginConfig};
use anydev_core::{Runtime, RuntimeConfig};
use std::process::{Command, ExitCode};

/// The plugins the environment names, as discovery finds them.
fn discovered() -> Vec<Entry> {
    let reserved: Vec<String> = anydev::backends::builtin_providers()
        .into_iter()
        .map(|p| p.name)
        .collect();
    plugin::discover(&PluginConfig::from_env(), &reserved).entries
}

fn name_of(entry: &Entry) -> &str {
    match entry {
        Entry::Plugin(spec) => &spec.name,
        Entry::Broken { name, .. } => name,
    }
}

/// Probes every discovered plugin in a child process and prints one line
/// each. Fails when a plugin killed its process.
pub fn probe_all() -> ExitCode {
    let exe = std::env::current_exe().unwrap_or_else(|_| "anydev".into());
    let mut died = false;
    for entry in discovered() {
        let Entry::Plugin(spec) = &entry else {
            outln!("{:<12} not loaded  (see anydev info)", name_of(&entry));
            continue;
        };
        let output = Command::new(&exe).args(["info", "--probe-plugin", &spec.name]).output();
        let line = match output {
            // The child always prints its status line when it finishes; a
            // plugin that calls `exit(0)` ends it before that.
            Ok(out) if out.status.success() && !out.stdout.trim_ascii().is_empty() => {
                String::from_utf8_lossy(&out.stdout).trim().to_owned()
            }
            Ok(out) => {
                died = true;
                format!(
                    "DIED        {}",
                    spec.describe(format!(
                        "{} while loading or describing its devices",
                        anydev_testing::isolated::describe_exit(out.status)
                    ))
                )
            }
            Err(e) => format!("unprobed    cannot run {}: {e}", exe.display()),
        };
        outln!("{:<12} {line}", spec.name);
    }
    if died {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// In the child: initialises plugin `name` alone, describes its devices,
/// and prints its status. A crash here is what the parent reports.
pub fn probe_one(name: &str) -> ExitCode {
    let Some(entry) = discovered().into_iter().find(|e| name_of(e) == name) else {
        outln!("unknown     no plugin named {name} is discovered");
        return ExitCode::SUCCESS;
    };
    let runtime = Runtime::new(vec![plugin::provider(entry)], RuntimeConfig::default());
    for device in runtime.devices() {
        // Only surviving matters here; errors show in `anydev info`.
        let _ = runtime.properties(device);
        let _ = runtime.capabilities(device);
    }
    let status = runtime.backends()[0].status();
    match status.reason() {
        Some(reason) => outln!("{:<11} {reason}", status.label()),
        None => outln!("{:<11} {} device(s)", status.label(), runtime.devices().len()),
    }
    ExitCode::SUCCESS
}
