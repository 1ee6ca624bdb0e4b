//! `anydev accuracy`: the largest error in ulps of every float function on
//! every device and float dtype, next to the bound its backend promises.
//!
//! The sweep, the references and the bounds are those of the device-generic
//! case `accuracy::ulp_bounds` ([`anydev_testing::cases::accuracy`]), so the
//! table printed here (and kept in `docs/accuracy.md`) is what the tests
//! check. The exit status is a failure when a function exceeds its bound.

use crate::output::{out, outln};
use anydev::Device;
use anydev_testing::cases::accuracy::{self, Measured};
use serde::Serialize;
use std::process::ExitCode;

/// Options of `anydev accuracy`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Devices to sweep, comma-separated (default: every available device).
    #[arg(long, value_delimiter = ',')]
    device: Vec<String>,
    /// Print JSON (one row per device, dtype and function) instead of a table.
    #[arg(long)]
    json: bool,
    /// Print Markdown tables, one per dtype with a column per device (as in
    /// docs/accuracy.md), instead of a row per device and function.
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
}

/// One row of the table.
#[derive(Debug, Serialize)]
struct Row {
    device: String,
    dtype: String,
    op: &'static str,
    points: usize,
    /// Over the inputs whose NaN, infinity and zero sign match.
    max_ulps: u64,
    /// `null` where the backend promises nothing.
    bound: Option<u64>,
    within_bound: bool,
    worst: String,
    /// Inputs whose NaN, infinity or zero sign differs from the reference.
    mismatches: usize,
    first_mismatch: Option<String>,
}

impl Row {
    fn new(device: Device, m: &Measured) -> Row {
        Row {
            device: device.to_string(),
            dtype: m.dtype.to_string(),
            op: m.op.name(),
            points: m.points,
            max_ulps: m.max_ulps,
            bound: promised(m.bound),
            within_bound: m.within_bound(),
            worst: m.worst.to_string(),
            mismatches: m.mismatches,
            first_mismatch: m.first_mismatch.as_ref().map(ToString::to_string),
        }
    }
}

impl Row {
    /// The row as a line of the text table: the worst input where there is
    /// an error (`-` where every result is correctly rounded), then the
    /// first mismatched one.
    fn to_line(&self) -> String {
        let mut line = format!(
            "{:<8} {:<5} {:<11} {:>6} {:>10} {:>5} {:>10}  {}",
            self.device,
            self.dtype,
            self.op,
            self.points,
            self.max_ulps,
            show_bound(self.bound),
            self.mismatches,
            if self.max_ulps == 0 { "-" } else { &self.worst }
        );
        if let Some(p) = &self.first_mismatch {
            line += &format!("; mismatch {p}");
        }
        if !self.within_bound {
            line += "  OVER BOUND";
        }
        line
    }
}

pub fn main(args: Args) -> ExitCode {
    let runtime = anydev::runtime();
    let devices = match crate::bench::select(runtime, &args.device) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("anydev accuracy: {e}");
            return ExitCode::FAILURE;
        }
    };
    let text = !args.json && !args.markdown;
    if text {
        outln!(
            "{:<8} {:<5} {:<11} {:>6} {:>10} {:>5} {:>10}  worst input",
            "device",
            "dtype",
            "op",
            "points",
            "max ulps",
            "bound",
            "mismatches"
        );
    }
    let mut rows = Vec::new();
    let mut failed = false;
    for device in devices {
        let caps = match runtime.capabilities(device) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("anydev accuracy: {device}: {e}");
                failed = true;
                continue;
            }
        };
        for &dtype in accuracy::DTYPES.iter().filter(|&&d| caps.supports_dtype(d)) {
            match accuracy::sweep(runtime, device, dtype) {
                Ok(measured) => {
                    for m in &measured {
                        let row = Row::new(device, m);
                        failed |= !row.within_bound;
                        if text {
                            outln!("{}", row.to_line());
                        }
                        rows.push(row);
                    }
                }
                Err(e) => {
                    eprintln!("anydev accuracy: {device} {dtype}: {e}");
                    failed = true;
                }
            }
        }
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    } else if args.markdown {
        out!("{}", markdown(&rows));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The bound table, then one table per dtype: a line per function, a
/// column per device; each cell is `max ulps / bound`, with the count of
/// mismatched special values and a mark where the bound is exceeded.
fn markdown(rows: &[Row]) -> String {
    let mut out =
        "| function | aim | host | wgpu | cuda | wgpu on llvmpipe when set |\n|---|---|---|---|---|---|\n".to_owned();
    for b in accuracy::BOUNDS {
        out += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            b.op,
            b.aim,
            show_bound(promised(b.host)),
            show_bound(promised(b.wgpu)),
            show_bound(promised(b.cuda)),
            b.measured
        );
    }
    let mut devices: Vec<&str> = Vec::new();
    let mut ops: Vec<&str> = Vec::new();
    for row in rows {
        if !devices.contains(&row.device.as_str()) {
            devices.push(&row.device);
        }
        if !ops.contains(&row.op) {
            ops.push(row.op);
        }
    }
    for dtype in accuracy::DTYPES.iter().map(ToString::to_string) {
        if !rows.iter().any(|r| r.dtype == dtype) {
            continue;
        }
        out += &format!(
            "\n{dtype}:\n\n| function | {} |\n|---|{}\n",
            devices.join(" | "),
            "---|".repeat(devices.len())
        );
        for op in &ops {
            let cells: Vec<String> = devices
                .iter()
                .map(|device| {
                    rows.iter()
                        .find(|r| r.dtype == dtype && r.op == *op && r.device == *device)
                        .map_or("-".to_owned(), Row::cell)
                })
                .collect();
            out += &format!("| {op} | {} |\n", cells.join(" | "));
        }
    }
    out
}

impl Row {
    /// `max / bound`, `, N wrong` for mismatched special values, and `✗`
    /// when over the bound.
    fn cell(&self) -> String {
        let mut cell = format!(
            "{} / {}",
            self.max_ulps,
            self.bound.map_or("none".to_owned(), |b| b.to_string())
        );
        if self.mismatches > 0 {
            cell += &format!(", {} wrong", self.mismatches);
        }
        if !self.within_bound {
            cell += " ✗";
        }
        cell
    }
}

/// A bound, `None` for [`accuracy::UNBOUNDED`].
fn promised(bound: u64) -> Option<u64> {
    (bound != accuracy::UNBOUNDED).then_some(bound)
}

/// A bound as text, `none` where nothing is promised.
fn show_bound(bound: Option<u64>) -> String {
    bound.map_or("none".to_owned(), |b| b.to_string())
}
