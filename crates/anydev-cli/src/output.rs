//! Standard output that tolerates a reader going away.
//!
//! `println!` panics when stdout is a pipe whose reader has exited
//! (`anydev conformance --json | head`). A closed pipe means nobody wants
//! the rest, so the command ends there, quietly and successfully, as
//! ripgrep and coreutils do; the plugins it used still hear of the exit.

use std::fmt;
use std::io::{self, Write};

/// Writes `args` to stdout; see the module documentation.
pub fn write(args: fmt::Arguments) {
    let mut stdout = io::stdout().lock();
    let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) else {
        return;
    };
    drop(stdout);
    let code = if e.kind() == io::ErrorKind::BrokenPipe {
        0
    } else {
        eprintln!("anydev: writing the output: {e}");
        1
    };
    if let Err(e) = anydev::shutdown() {
        eprintln!("warning: shutting down: {e}");
    }
    std::process::exit(code);
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};
