//! `anydev-diff`: the device side of the differential test suite
//! (`scripts/diff_numpy.py`, documented in `docs/testing.md`).
//!
//! Reads one case per line on stdin and writes one result per line on
//! stdout, in the same order, flushed per line so that a crash points at
//! its case. A case names an op, its input arrays (dtype, shape and
//! little-endian bytes in hex), keyword arguments and a device; the result
//! is an array in the same encoding, the anydev [`Error`] kind and message,
//! or the message of a panic. Everything runs through the public API of the
//! `anydev` crate, so the suite judges what users get.
//!
//! `anydev-diff --devices` prints the devices the runtime found, one per
//! line (set `ANYDEV_PLUGINS` to include plugins such as the simulator).

mod case;
mod hex;
mod ops;

use case::{Case, Outcome};
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};

fn main() -> io::Result<()> {
    let mut out = io::stdout().lock();
    if std::env::args().nth(1).as_deref() == Some("--devices") {
        for device in anydev::runtime().devices() {
            writeln!(out, "{device}")?;
        }
        return Ok(());
    }
    // Panics are results here: report them on stdout, not on stderr.
    panic::set_hook(Box::new(|_| {}));
    for line in io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let outcome = match serde_json::from_str::<Case>(&line) {
            Ok(case) => run(&case),
            Err(e) => Outcome::driver(None, format!("unreadable case: {e}")),
        };
        serde_json::to_writer(&mut out, &outcome)?;
        writeln!(out)?;
        out.flush()?;
    }
    Ok(())
}

/// One case, with a panic turned into an outcome of its own.
fn run(case: &Case) -> Outcome {
    match panic::catch_unwind(AssertUnwindSafe(|| ops::run(case))) {
        Ok(Ok(result)) => Outcome::from_result(case.id, result),
        Ok(Err(message)) => Outcome::driver(Some(case.id), message),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".into());
            Outcome::panic(case.id, message)
        }
    }
}
