//! The `anydev` command.

mod accuracy;
mod bench;
mod conformance;
mod info;
mod output;
mod probe;

use clap::{Parser, Subcommand};
use output::{out, outln};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "anydev",
    version,
    about = "One array API, every accelerator: inspect what this machine offers."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List backends with their status, devices with their properties and
    /// capabilities, and the default device with why it was chosen.
    Info {
        /// Print JSON (schema in the README) instead of text.
        #[arg(long)]
        json: bool,
        /// Instead of the report, load each plugin in a process of its own
        /// and say which ones crash (for when `anydev info` itself dies).
        #[arg(long, conflicts_with = "json")]
        probe_plugins: bool,
        /// Probe this one plugin in this process (what --probe-plugins runs).
        #[arg(long, hide = true)]
        probe_plugin: Option<String>,
    },
    /// Time add, multiply, divide, exp, sum, matmul and to_device at several
    /// sizes on every device, against each device's own memcpy bandwidth.
    Bench(bench::Args),
    /// Certify a plugin: run the device-generic cases and ABI checks on each
    /// of its devices; prints a table and `N passed, N failed, N skipped`.
    Conformance(conformance::Args),
    /// Sweep every float function on every device and float dtype: the
    /// largest error in ulps against the bound its backend promises.
    Accuracy(accuracy::Args),
}

fn main() -> ExitCode {
    quiet_vulkan_device_select();
    let cli = Cli::parse();
    let code = run(cli);
    // The plugins the command used hear that the process exits.
    if let Err(e) = anydev::shutdown() {
        eprintln!("warning: shutting down: {e}");
    }
    code
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Accuracy(args) => accuracy::main(args),
        Command::Bench(args) => bench::main(args),
        Command::Conformance(args) => conformance::main(args),
        Command::Info {
            probe_plugins: true, ..
        } => probe::probe_all(),
        Command::Info {
            probe_plugin: Some(name),
            ..
        } => probe::probe_one(&name),
        Command::Info { json, .. } => {
            let report = info::Report::collect(anydev::runtime());
            if json {
                outln!("{}", report.to_json());
            } else {
                out!("{}", report.to_text());
            }
            // A default device that cannot be used is an error for scripts;
            // a failed optional backend is not.
            if report.default_device_error.is_some() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}

/// Mesa's Vulkan device-select layer asks the Wayland display which GPU is
/// the default, and without a session (no `XDG_RUNTIME_DIR`: servers, CI,
/// containers) libwayland prints "error: XDG_RUNTIME_DIR is invalid or not
/// set" on stderr, which reads like anydev failing. With no display there
/// is no default to find, so the layer is turned off (its documented
/// `NODEVICE_SELECT` switch); wgpu still sees every adapter. This runs
/// first in `main`, before any thread exists, as setting the environment
/// requires.
fn quiet_vulkan_device_select() {
    let session = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| std::path::Path::new(&dir).is_dir());
    if !session && std::env::var_os("NODEVICE_SELECT").is_none() {
        std::env::set_var("NODEVICE_SELECT", "1");
    }
}
