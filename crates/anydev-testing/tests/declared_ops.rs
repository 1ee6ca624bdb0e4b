//! Every case declares every op and dtype it dispatches on the device under
//! test, checked by running it: the CPU backend behind a wrapper that
//! records the op code, support dtype and operand dtypes of every op it
//! executes.
//! An undeclared op would make a plugin without it fail the case instead
//! of skipping it.

use anydev_core::extension::{Attrs, KernelBody};
use anydev_core::memory::Allocation;
use anydev_core::ops::{Op, OpCode};
use anydev_core::{
    Backend, BackendProvider, Buffer, Capabilities, Checked, DType, Device, DeviceProperties, Event, MemoryKind,
    MemoryStats, Result, Runtime, RuntimeConfig, Stream, TensorRef,
};
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

/// The CPU backend, recording every op and support dtype it executes.
struct Recording {
    inner: Arc<dyn Backend>,
    log: Log,
}

impl Backend for Recording {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn device_count(&self) -> usize {
        self.inner.device_count()
    }
    fn properties(&self, index: usize) -> Result<DeviceProperties> {
        self.inner.properties(index)
    }
    fn capabilities(&self, index: usize) -> Result<Capabilities> {
        self.inner.capabilities(index)
    }
    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        self.inner.supports(index, op, dtype)
    }
    fn memory_kinds(&self, index: usize) -> Vec<MemoryKind> {
        self.inner.memory_kinds(index)
    }
    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>> {
        self.inner.allocate(index, bytes, kind)
    }
    fn memory_stats(&self, index: usize) -> Result<MemoryStats> {
        self.inner.memory_stats(index)
    }
    fn map_buffer(&self, index: usize, source: &Buffer) -> Result<Box<dyn Allocation>> {
        self.inner.map_buffer(index, source)
    }
    fn release(&self, allocation: Box<dyn Allocation>, pending: Vec<Event>) {
        self.inner.release(allocation, pending)
    }
    fn default_stream(&self, index: usize) -> Result<Stream> {
        self.inner.default_stream(index)
    }
    fn create_stream(&self, index: usize) -> Result<Stream> {
        self.inner.create_stream(index)
    }
    fn record_event(&self, stream: &Stream) -> Result<Event> {
        self.inner.record_event(stream)
    }
    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()> {
        self.inner.wait_event(stream, event)
    }
    fn query_event(&self, event: &Event) -> Result<bool> {
        self.inner.query_event(event)
    }
    fn synchronize_event(&self, event: &Event) -> Result<()> {
        self.inner.synchronize_event(event)
    }
    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        self.inner.synchronize_stream(stream)
    }
    fn synchronize(&self, index: usize) -> Result<()> {
        self.inner.synchronize(index)
    }
    fn reset_peak(&self, index: usize) -> Result<()> {
        self.inner.reset_peak(index)
    }
    fn empty_cache(&self, index: usize) -> Result<()> {
        self.inner.empty_cache(index)
    }
    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<std::time::Duration> {
        self.inner.event_elapsed(start, end)
    }
    fn prefetch(&self, stream: &Stream, buffer: &Buffer, offset: usize, len: usize, to: Device) -> Result<()> {
        self.inner.prefetch(stream, buffer, offset, len, to)
    }
    fn advise(&self, buffer: &Buffer, offset: usize, len: usize, advice: anydev_core::MemoryAdvice) -> Result<()> {
        self.inner.advise(buffer, offset, len, advice)
    }
    fn copy_from_host_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()> {
        self.inner
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
        self.inner.copy_to_host_unchecked(checked, stream, src, src_offset, dst)
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
        self.inner
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
        self.inner.fill_unchecked(checked, stream, dst, offset, len, pattern)
    }
    fn execute_unchecked(&self, checked: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let mut used = self.log.lock().unwrap();
        used.ops.insert((op.code(), op.support_dtype()));
        used.dtypes.insert(op.output().dtype);
        used.dtypes.extend(op.inputs().map(|t| t.dtype));
        drop(used);
        self.inner.execute_unchecked(checked, stream, op)
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
        let mut used = self.log.lock().unwrap();
        used.dtypes.extend(inputs.iter().chain(outputs).map(|t| t.dtype));
        drop(used);
        self.inner.run_kernel(stream, body, inputs, outputs, attrs)
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
    let provider = BackendProvider::new("cpu", 0, move || {
        Ok(Arc::new(Recording {
            inner: Arc::new(anydev_cpu::CpuBackend::new()),
            log: Arc::clone(&recorder),
        }) as Arc<dyn Backend>)
    });
    let runtime: &'static Runtime = Box::leak(Box::new(Runtime::new(vec![provider], RuntimeConfig::default())));
    let cpu = Device::cpu();
    let plan = Plan {
        runtime,
        devices: vec![cpu],
        under_test: vec![cpu],
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
