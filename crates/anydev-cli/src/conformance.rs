//! `anydev conformance PATH`: certify a plugin against the device-generic
//! cases and the ABI checks of `anydev-testing`, as a table or JSON. The
//! exit status is 0 only when the plugin loaded and nothing failed.
//!
//! The plugin runs in a child process, this program run again with the
//! hidden `--worker` flag, so that a plugin that crashes fails the case it
//! crashed in and the run goes on (see `anydev_testing::isolated`).

use crate::output::{out, outln};
use anydev_testing::conformance::Selection;
use anydev_testing::isolated;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

#[derive(clap::Args)]
pub struct Args {
    /// The plugin library (`libfoo.so`, device kind `foo`) or its manifest
    /// (`foo.json`, whose `expected_failures` then apply).
    pub path: PathBuf,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Run only the cases whose full name (`case::device::dtype`) contains
    /// this text, or matches it when it has `*` wildcards.
    #[arg(long)]
    pub filter: Option<String>,
    /// Run the cases in this process and report to a supervising `anydev
    /// conformance` on standard output.
    #[arg(long, hide = true)]
    pub worker: bool,
    /// With `--worker`: skip every case up to and including this instance.
    #[arg(long, hide = true, requires = "worker")]
    pub resume_after: Option<String>,
}

pub fn main(args: Args) -> ExitCode {
    // The extension libraries this program links certify their ops too:
    // a plugin that lists them runs their cases, any other skips them.
    if let Err(e) = anydev_quant::conformance::register() {
        eprintln!("error: registering the quantization library's cases: {e}");
        return ExitCode::FAILURE;
    }
    if args.worker {
        let selection = Selection {
            filter: args.filter.as_deref(),
            resume_after: args.resume_after.as_deref(),
        };
        isolated::worker(&args.path, selection);
        return ExitCode::SUCCESS;
    }
    let report = isolated::supervise(&args.path, &|resume_after| worker_command(&args, resume_after));
    if args.json {
        outln!("{}", report.to_json());
    } else {
        out!("{}", report.to_text());
    }
    if report.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// This program, as a worker over the same plugin and filter.
fn worker_command(args: &Args, resume_after: Option<&str>) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("anydev"));
    let mut command = Command::new(exe);
    command.arg("conformance").arg(&args.path).arg("--worker");
    if let Some(filter) = &args.filter {
        command.arg("--filter").arg(filter);
    }
    if let Some(name) = resume_after {
        command.arg("--resume-after").arg(name);
    }
    command
}
