//! Benchmark results as plain data, rendered as a text table (one line per
//! case, printed as it is measured) or as JSON for scripts such as
//! `scripts/bench_numpy.py`.

use serde::Serialize;

/// Everything `anydev bench --json` prints.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub version: &'static str,
    /// Whether `--quick` chose the smaller plan.
    pub quick: bool,
    /// Threads the host offers (CPU kernels use all of them above a size threshold).
    pub host_threads: usize,
    pub devices: Vec<DeviceSummary>,
    pub rows: Vec<Row>,
}

/// One benchmarked device.
#[derive(Debug, Serialize)]
pub struct DeviceSummary {
    pub device: String,
    /// The device's name as its backend reports it (the adapter for wgpu).
    pub name: String,
    /// The copy bandwidth ops are compared with (read plus written bytes per second / 1e9).
    pub memcpy_gb_per_s: Option<f64>,
}

/// One (device, op, size) case.
#[derive(Debug, Serialize)]
pub struct Row {
    pub device: String,
    pub op: &'static str,
    /// Elements per input, or `n` of an `n x n x n` matmul.
    pub size: usize,
    /// Median seconds per call; absent when the case was skipped.
    pub seconds: Option<f64>,
    /// Calls timed (after warm-up).
    pub calls: usize,
    pub gb_per_s: Option<f64>,
    pub gflop_per_s: Option<f64>,
    /// `gb_per_s` over the device's memcpy bandwidth.
    pub memcpy_fraction: Option<f64>,
    /// Why a case was skipped or failed.
    pub note: Option<String>,
}

impl Row {
    /// A case that did not run, with the reason.
    pub fn skipped(device: String, op: &'static str, size: usize, note: String) -> Row {
        Row {
            device,
            op,
            size,
            seconds: None,
            calls: 0,
            gb_per_s: None,
            gflop_per_s: None,
            memcpy_fraction: None,
            note: Some(note),
        }
    }

    /// The header of the text table.
    pub fn header() -> String {
        format!(
            "{:<8} {:<19} {:>9} {:>11} {:>9} {:>9} {:>9}",
            "device", "op", "size", "time/call", "GB/s", "GFLOP/s", "x memcpy"
        )
    }

    /// One line of the text table.
    pub fn to_line(&self) -> String {
        let Some(seconds) = self.seconds else {
            let note = self.note.as_deref().unwrap_or("skipped");
            return format!("{:<8} {:<19} {:>9}  skipped: {note}", self.device, self.op, self.size);
        };
        format!(
            "{:<8} {:<19} {:>9} {:>11} {:>9} {:>9} {:>9}",
            self.device,
            self.op,
            self.size,
            duration(seconds),
            number(self.gb_per_s),
            number(self.gflop_per_s),
            number(self.memcpy_fraction),
        )
    }
}

impl Report {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report is plain data")
    }
}

/// Seconds with a unit that keeps the number short.
fn duration(s: f64) -> String {
    let (value, unit) = match s {
        s if s < 1e-6 => (s * 1e9, "ns"),
        s if s < 1e-3 => (s * 1e6, "us"),
        s if s < 1.0 => (s * 1e3, "ms"),
        s => (s, "s"),
    };
    format!("{value:.1} {unit}")
}

fn number(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(2.5e-7), "250.0 ns");
        assert_eq!(duration(1.5e-5), "15.0 us");
        assert_eq!(duration(0.25), "250.0 ms");
        assert_eq!(duration(2.0), "2.0 s");
    }

    #[test]
    fn skipped_rows_say_why() {
        let row = Row::skipped("wgpu:0".into(), "add", 10, "too large".into());
        assert!(row.to_line().contains("skipped: too large"));
        assert_eq!(number(None), "-");
    }
}
