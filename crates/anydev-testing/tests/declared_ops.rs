//! Every case declares every op and dtype it dispatches on the device under
//! test and on its partners of the same kind, checked by running it: host
//! memory and kernels behind a wrapper that records the op code, support
//! dtype and operand dtypes of every op it executes.
//! An undeclared op would make a plugin without it fail the case instead
//! of skipping it. Under `anydev conformance` the partners of the same
//! kind are the plugin's own devices, so ops there need declaring too; a
//! case's needs are checked against the device under test only, which
//! stands for its siblings.
//! Ops on devices of other kinds are exempt: those devices are not the
//! plugin's (the reference CPU, other backends), and a need cannot name
//! them. The runtime here has two `cpu` devices, recorded, and one device
//! of another kind, `host`, not recorded, so multi-device cases run and
//! cross-kind paths are exercised without being held to the declarations.

use anydev_core::extension::{Attrs, KernelBody};
use anydev_core::memory::Allocation;
use anydev_core::ops::{Op, OpCode};
use anydev_core::{
    Backend, BackendProvider, Buffer, Capabilities, Checked, DType, Device, DeviceProperties, Error, Event, MemoryKind,
    MemoryStats, Result, Runtime, RuntimeConfig, Stream, TensorRef,
};
use anydev_cpu::CpuBackend;
use anydev_testing::case::{Case, Need};
use anydev_testing::known::KnownFailures;
use anydev_testing::runner::{Outcome, Plan};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// What a case ran: (op, support dtype) pairs and every dtype an op read
/// or wrote.
#[derive(Default)]
struct Used {
    ops: BTreeSet<(OpCode, DType)>,
    dtypes: BTreeSet<DType>,
}

type Log = Arc<Mutex<Used>>;

/// Host memory and kernels as `devices` devices of `kind`, each with its
/// own memory accounting (so cases that check devices keep separate memory
/// pass), recording every op and support dtype executed on any of them
/// into `log` when there is one.
struct Recording {
    kind: &'static str,
    devices: Vec<CpuBackend>,
    log: Option<Log>,
}

impl Recording {
    fn new(kind: &'static str, devices: usize, log: Option<Log>) -> Recording {
        Recording {
            kind,
            devices: (0..devices).map(|_| CpuBackend::new()).collect(),
            log,
        }
    }

    /// The CPU behind device `index` (its device 0).
    fn device(&self, index: usize) -> Result<&CpuBackend> {
        self.devices
            .get(index)
            .ok_or_else(|| Error::backend(self.kind, format!("no device {index}")))
    }

    /// The kernels, streams and events every device shares: any CPU's
    /// accept any other's (streams and events name `cpu:0` whichever device
    /// asked, which only the device under test's own cases look at).
    fn host(&self) -> &CpuBackend {
        &self.devices[0]
    }

    fn record(&self, op: Option<(OpCode, DType)>, dtypes: impl IntoIterator<Item = DType>) {
        if let Some(log) = &self.log {
            let mut used = log.lock().unwrap();
            used.ops.extend(op);
            used.dtypes.extend(dtypes);
        }
    }
}

impl Backend for Recording {
    fn name(&self) -> &str {
        self.kind
    }
    fn device_count(&self) -> usize {
        self.devices.len()
    }
    fn properties(&self, index: usize) -> Result<DeviceProperties> {
        self.device(index)?.properties(0)
    }
    fn capabilities(&self, index: usize) -> Result<Capabilities> {
        self.device(index)?.capabilities(0)
    }
    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        index < self.devices.len() && self.host().supports(0, op, dtype)
    }
    fn memory_kinds(&self, _index: usize) -> Vec<MemoryKind> {
        self.host().memory_kinds(0)
    }
    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>> {
        self.device(index)?.allocate(0, bytes, kind)
    }
    fn memory_stats(&self, index: usize) -> Result<MemoryStats> {
        self.device(index)?.memory_stats(0)
    }
    fn map_buffer(&self, index: usize, source: &Buffer) -> Result<Box<dyn Allocation>> {
        self.device(index)?.map_buffer(0, source)
    }
    fn release(&self, allocation: Box<dyn Allocation>, pending: Vec<Event>) {
        self.host().release(allocation, pending)
    }
    fn default_stream(&self, index: usize) -> Result<Stream> {
        self.device(index)?.default_stream(0)
    }
    fn create_stream(&self, index: usize) -> Result<Stream> {
        self.device(index)?.create_stream(0)
    }
    fn record_event(&self, stream: &Stream) -> Result<Event> {
        self.host().record_event(stream)
    }
    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()> {
        self.host().wait_event(stream, event)
    }
    fn query_event(&self, event: &Event) -> Result<bool> {
        self.host().query_event(event)
    }
    fn synchronize_event(&self, event: &Event) -> Result<()> {
        self.host().synchronize_event(event)
    }
    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        self.host().synchronize_stream(stream)
    }
    fn synchronize(&self, index: usize) -> Result<()> {
        self.device(index)?.synchronize(0)
    }
    fn reset_peak(&self, index: usize) -> Result<()> {
        self.device(index)?.reset_peak(0)
    }
    fn empty_cache(&self, index: usize) -> Result<()> {
        self.device(index)?.empty_cache(0)
    }
    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<std::time::Duration> {
        self.host().event_elapsed(start, end)
    }
    fn prefetch(&self, stream: &Stream, buffer: &Buffer, offset: usize, len: usize, to: Device) -> Result<()> {
        self.host().prefetch(stream, buffer, offset, len, to)
    }
    fn advise(&self, buffer: &Buffer, offset: usize, len: usize, advice: anydev_core::MemoryAdvice) -> Result<()> {
        self.host().advise(buffer, offset, len, advice)
    }
    fn copy_from_host_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()> {
        self.host()
            .copy_from_host_unchecked(checked, stream, src, dst, dst_offset)
    }
    fn copy_to_host_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        self.host()
            .copy_to_host_unchecked(checked, stream, src, src_offset, dst)
    }
    fn copy_between_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        self.host()
            .copy_between_unchecked(checked, stream, src, src_offset, dst, dst_offset, len)
    }
    fn fill_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        dst: &Buffer,
        offset: usize,
        len: usize,
        pattern: &[u8],
    ) -> Result<()> {
        self.host().fill_unchecked(checked, stream, dst, offset, len, pattern)
    }
    fn execute_unchecked(&self, checked: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let dtypes = op.inputs().map(|t| t.dtype).chain([op.output().dtype]);
        self.record(Some((op.code(), op.support_dtype())), dtypes);
        self.host().execute_unchecked(checked, stream, op)
    }
    /// Extension kernels are no primitive ops: they need no declaration,
    /// only the dtypes of their operands do.
    fn run_kernel(
        &self,
        stream: &Stream,
        body: &KernelBody<'_>,
        inputs: &[TensorRef<'_>],
        outputs: &[TensorRef<'_>],
        attrs: &Attrs,
    ) -> Result<()> {
        self.record(None, inputs.iter().chain(outputs).map(|t| t.dtype));
        self.host().run_kernel(stream, body, inputs, outputs, attrs)
    }
}

/// Whether `case` (instantiated for `dtype`) declares `op` for `used`.
fn declares(case: &Case, dtype: Option<DType>, op: OpCode, used: DType) -> bool {
    case.needs.iter().any(|need| match *need {
        Need::Op(declared, d) => declared == op && d.or(dtype).unwrap_or(DType::F32) == used,
        _ => false,
    })
}

/// The dtypes a case (instantiated for `dtype`) makes the device hold:
/// its own, those it needs, and those of the ops it needs.
fn declared_dtypes(case: &Case, dtype: Option<DType>) -> BTreeSet<DType> {
    let needed = case.needs.iter().filter_map(|need| match *need {
        Need::DType(d) => Some(d),
        Need::Op(_, d) => Some(d.or(dtype).unwrap_or(DType::F32)),
        _ => None,
    });
    dtype.into_iter().chain(needed).collect()
}

#[test]
fn every_case_declares_the_ops_and_dtypes_it_dispatches() {
    let log: Log = Arc::default();
    let recorder = Arc::clone(&log);
    let recorded = BackendProvider::new("cpu", 0, move || {
        Ok(Arc::new(Recording::new("cpu", 2, Some(Arc::clone(&recorder)))) as Arc<dyn Backend>)
    });
    // Below the CPU's priority, so `cpu:0` stays the default device.
    let other = BackendProvider::new("host", -1, || {
        Ok(Arc::new(Recording::new("host", 1, None)) as Arc<dyn Backend>)
    });
    let runtime: &'static Runtime = Box::leak(Box::new(Runtime::new(vec![recorded, other], RuntimeConfig::default())));
    let plan = Plan {
        runtime,
        devices: runtime.devices(),
        under_test: vec![Device::cpu()],
        extra_known: KnownFailures::default(),
    };
    let cases = anydev_testing::cases::all();
    let mut undeclared = Vec::new();
    for trial in plan.trials(&cases).unwrap() {
        if trial.skip.is_some() || trial.case.asks_support {
            continue;
        }
        *log.lock().unwrap() = Used::default();
        let outcome = plan.run(&trial);
        assert!(
            !matches!(outcome, Outcome::Fail(_)),
            "{} fails on the CPU: {outcome:?}",
            trial.name
        );
        let used = log.lock().unwrap();
        for &(op, dtype) in &used.ops {
            if !declares(trial.case, trial.dtype, op, dtype) {
                undeclared.push(format!("{}: {} for {dtype}", trial.name, op.name()));
            }
        }
        let held = declared_dtypes(trial.case, trial.dtype);
        for dtype in used.dtypes.difference(&held) {
            undeclared.push(format!("{}: dtype {dtype}", trial.name));
        }
    }
    assert!(
        undeclared.is_empty(),
        "cases dispatch ops they do not declare:\n{}",
        undeclared.join("\n")
    );
}
