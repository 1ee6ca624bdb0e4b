//! `anydev conformance PATH`: certify a plugin against the device-generic
//! cases and the ABI checks of `anydev-testing`, as a table or JSON. The
//! exit status is 0 only when the plugin loaded and nothing failed.

use std::path::PathBuf;
use std::process::ExitCode;

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
}

pub fn main(args: Args) -> ExitCode {
    let report = anydev_testing::conformance::run(&args.path, args.filter.as_deref());
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    if report.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
