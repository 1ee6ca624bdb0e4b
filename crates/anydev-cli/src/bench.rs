//! `anydev bench`: a quick, device-generic benchmark.
//!
//! The same fixed set of f32 ops ([`cases::Op`]) runs at several sizes on
//! every available device (or those named with `--devices`), through the
//! public array API exactly as user code calls it. Each device first
//! measures its own copy bandwidth ([`baseline`]), and every bandwidth-bound
//! op is reported as a fraction of it, so the table reads the same on a
//! laptop CPU, the simulator and a GPU. Sizes a device cannot allocate in
//! one buffer are skipped with a note rather than failing the run.

mod baseline;
mod cases;
mod measure;
mod report;

use crate::output::outln;
use anydev::capability::keys;
use anydev::{Device, Result, Runtime};
use anydev_core::Backend;
use cases::{Inputs, Op};
use measure::{Budget, Timing};
use report::{DeviceSummary, Report, Row};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Options of `anydev bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON (every row, machine-readable) instead of a table.
    #[arg(long)]
    json: bool,
    /// Devices to benchmark, comma-separated (default: every available device).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<String>,
    /// Fewer sizes and a shorter time per case: seconds instead of a minute.
    #[arg(long)]
    quick: bool,
}

/// What to run, and how long to spend on each case.
struct Plan {
    /// Elements per input of the elementwise ops, sum and transfers.
    sizes: &'static [usize],
    /// `n` of the square matmuls.
    matmul: &'static [usize],
    /// Elements of the memcpy baseline's buffers (clipped to what the
    /// device can allocate): 40 MB, far beyond any cache, the size of the
    /// largest add's inputs.
    copy_elements: usize,
    budget: Budget,
    /// Longest predicted time per call of a case worth running: a size
    /// whose call would take longer (judged from the op's previous size on
    /// the same device) is skipped with a note, so a slow device (software
    /// Vulkan) does not stretch the run to minutes.
    max_call: Duration,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                sizes: &[100, 10_000, 1_000_000],
                matmul: &[64, 256],
                copy_elements: 10_000_000,
                budget: Budget {
                    target: Duration::from_millis(30),
                    samples: 3,
                },
                max_call: Duration::from_millis(250),
            }
        } else {
            Plan {
                sizes: &[100, 10_000, 100_000, 1_000_000, 10_000_000],
                matmul: &[64, 256, 512, 1024],
                copy_elements: 10_000_000,
                budget: Budget {
                    target: Duration::from_millis(200),
                    samples: 7,
                },
                max_call: Duration::from_secs(2),
            }
        }
    }
}

/// Runs the command; the exit status is a failure when a named device is
/// unknown or a case failed (as opposed to being skipped for its size).
pub fn main(args: Args) -> ExitCode {
    let runtime = anydev::runtime();
    let devices = match select(runtime, &args.devices) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("anydev bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let plan = Plan::new(args.quick);
    let mut report = Report {
        version: env!("CARGO_PKG_VERSION"),
        quick: args.quick,
        host_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        ..Report::default()
    };
    let print = |row: &Row| {
        if !args.json {
            outln!("{}", row.to_line());
        }
    };
    if !args.json {
        outln!("{}", Row::header());
    }
    let mut failed = false;
    for device in devices {
        let mut bench = DeviceBench::new(runtime, device, &plan);
        let summary = bench.run(&mut |row| {
            print(&row);
            report.rows.push(row);
        });
        failed |= bench.failures > 0;
        report.devices.push(summary);
    }
    if args.json {
        outln!("{}", report.to_json());
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The devices named on the command line, or every available one.
pub(crate) fn select(runtime: &Runtime, names: &[String]) -> Result<Vec<Device>> {
    if names.is_empty() {
        return Ok(runtime.devices());
    }
    names
        .iter()
        .map(|name| {
            let device: Device = name.trim().parse()?;
            runtime.backend(device)?;
            Ok(device)
        })
        .collect()
}

/// The cases of one device.
struct DeviceBench<'p> {
    device: Device,
    plan: &'p Plan,
    /// `cpu:0`, source and target of transfers; `None` when benchmarking it.
    host: Option<Device>,
    max_allocation: Option<usize>,
    backend: Option<Arc<dyn Backend>>,
    memcpy_gb_per_s: Option<f64>,
    /// Cases that failed (not those skipped for their size).
    failures: usize,
    /// The last timed size of each op and its seconds per call.
    last: Vec<(Op, usize, f64)>,
}

impl<'p> DeviceBench<'p> {
    fn new(runtime: &Runtime, device: Device, plan: &'p Plan) -> DeviceBench<'p> {
        let host: Option<Device> = "cpu:0"
            .parse()
            .ok()
            .filter(|h| *h != device && runtime.backend(*h).is_ok());
        let max_allocation = runtime
            .capabilities(device)
            .ok()
            .and_then(|c| c.int(keys::MAX_ALLOCATION_BYTES))
            .and_then(|b| usize::try_from(b).ok());
        DeviceBench {
            device,
            plan,
            host,
            max_allocation,
            backend: runtime.backend(device).ok().cloned(),
            memcpy_gb_per_s: None,
            failures: 0,
            last: Vec::new(),
        }
    }

    /// Measures the baseline, then every op at every size, handing each row
    /// to `emit` as soon as it is measured.
    fn run(&mut self, emit: &mut dyn FnMut(Row)) -> DeviceSummary {
        let name = anydev::runtime()
            .properties(self.device)
            .map_or_else(|e| format!("({e})"), |p| p.name);
        let (device, copy) = (self.device, self.plan.copy_elements);
        // Two f32 buffers of at most half the largest allocation each: a
        // device whose whole memory is one allocation still holds both.
        let copy = copy.min(self.max_allocation.unwrap_or(usize::MAX) / 8);
        emit(self.case(Op::Memcpy, copy, || {
            let b = baseline::Baseline::new(device, copy)?;
            Ok(Box::new(move || b.call()))
        }));
        let transfers: &[Op] = if self.host.is_some() { &Op::TRANSFERS } else { &[] };
        let ops: Vec<Op> = Op::ELEMENTWISE.iter().chain(transfers).copied().collect();
        for &size in self.plan.sizes {
            self.sized(&ops, &[size], size, emit);
        }
        for &n in self.plan.matmul {
            self.sized(&[Op::Matmul], &[n, n], n, emit);
        }
        DeviceSummary {
            device: self.device.to_string(),
            name,
            memcpy_gb_per_s: self.memcpy_gb_per_s,
        }
    }

    /// `ops` on one pair of inputs of `shape` (created once for all of them).
    fn sized(&mut self, ops: &[Op], shape: &[usize], size: usize, emit: &mut dyn FnMut(Row)) {
        let (device, host) = (self.device, self.host.unwrap_or(self.device));
        let mut inputs: Option<Rc<Inputs>> = None;
        for &op in ops {
            emit(self.case(op, size, || {
                let inputs = match &inputs {
                    Some(i) => Rc::clone(i),
                    None => Rc::clone(inputs.insert(Rc::new(Inputs::new(device, shape, host)?))),
                };
                Ok(Box::new(move || inputs.call(op)))
            }));
        }
    }

    /// Times one case, or says why it was skipped. `setup` builds the call
    /// (allocating its inputs) only when the sizes fit the device.
    fn case<'s>(&mut self, op: Op, size: usize, setup: impl FnOnce() -> Result<Call<'s>>) -> Row {
        let device = self.device.to_string();
        let bytes = op.largest_buffer(size).saturating_mul(4);
        if let Some(max) = self.max_allocation.filter(|&max| bytes > max) {
            return Row::skipped(
                device,
                op.name(),
                size,
                format!("needs a {bytes}-byte buffer, the device allocates at most {max}"),
            );
        }
        if let Some(predicted) = self.predict(op, size).filter(|&p| p > self.plan.max_call.as_secs_f64()) {
            return Row::skipped(
                device,
                op.name(),
                size,
                format!("would take about {predicted:.1} s per call on this device"),
            );
        }
        let timed = setup().and_then(|mut call| {
            let sync = || match &self.backend {
                Some(b) => b.synchronize(self.device.index()),
                None => Ok(()),
            };
            measure::time(self.plan.budget, &mut call, &sync)
        });
        match timed {
            Ok(t) => self.row(op, size, t),
            Err(e) => {
                self.failures += 1;
                Row::skipped(device, op.name(), size, format!("failed: {e}"))
            }
        }
    }

    /// Seconds per call of `op` at `size`, scaled by work from its last
    /// timed size on this device.
    fn predict(&self, op: Op, size: usize) -> Option<f64> {
        let &(_, prev, seconds) = self.last.iter().find(|(o, ..)| *o == op)?;
        Some(seconds * op.work(size) / op.work(prev))
    }

    fn row(&mut self, op: Op, size: usize, t: Timing) -> Row {
        self.last.retain(|(o, ..)| *o != op);
        self.last.push((op, size, t.seconds));
        let gb_per_s = op.bytes(size).map(|b| b / t.seconds / 1e9);
        if op == Op::Memcpy {
            self.memcpy_gb_per_s = gb_per_s;
        }
        Row {
            device: self.device.to_string(),
            op: op.name(),
            size,
            seconds: Some(t.seconds),
            calls: t.calls,
            gb_per_s,
            gflop_per_s: op.flops(size).map(|f| f / t.seconds / 1e9),
            memcpy_fraction: gb_per_s.zip(self.memcpy_gb_per_s).map(|(g, m)| g / m),
            note: None,
        }
    }
}

/// One prepared call of a case.
type Call<'s> = Box<dyn FnMut() -> Result<()> + 's>;
