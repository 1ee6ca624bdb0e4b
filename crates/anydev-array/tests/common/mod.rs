//! A test runtime with the CPU and a second backend, `fake`, whose two
//! devices are the host under another name. It gives the placement tests
//! devices that are really distinct to the array layer (different device
//! ids, and a different backend from `cpu`), and it can be restricted in
//! the dtypes and ops it declares.

#![allow(dead_code)]

use anydev_array::{DType, Device, Runtime, RuntimeGuard};
use anydev_core::backend::{Backend, Checked, DeviceProperties, TensorRef};
use anydev_core::capability::Capabilities;
use anydev_core::memory::{Allocation, Buffer, MemoryKind, MemoryStats};
use anydev_core::ops::{Op, OpCode, UnaryOp};
use anydev_core::stream::{Event, Stream};
use anydev_core::{BackendProvider, RuntimeConfig};
use anydev_cpu::CpuBackend;
use std::sync::{Arc, OnceLock};

/// Host memory and kernels behind another device kind.
pub struct FakeBackend {
    name: &'static str,
    inner: CpuBackend,
    devices: usize,
    dtypes: Vec<DType>,
    unsupported: Vec<OpCode>,
}

impl FakeBackend {
    fn check(&self, index: usize) -> anydev_core::Result<()> {
        if index < self.devices {
            Ok(())
        } else {
            Err(anydev_core::Error::backend(self.name, format!("no device {index}")))
        }
    }
}

impl Backend for FakeBackend {
    fn name(&self) -> &str {
        self.name
    }
    fn device_count(&self) -> usize {
        self.devices
    }
    fn properties(&self, index: usize) -> anydev_core::Result<DeviceProperties> {
        self.check(index)?;
        self.inner.properties(0)
    }
    fn capabilities(&self, index: usize) -> anydev_core::Result<Capabilities> {
        self.check(index)?;
        let mut caps = self.inner.capabilities(0)?;
        caps.set_dtypes(&self.dtypes);
        Ok(caps)
    }
    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        index < self.devices && !self.unsupported.contains(&op) && self.inner.supports(0, op, dtype)
    }
    fn memory_kinds(&self, _index: usize) -> Vec<MemoryKind> {
        vec![MemoryKind::System]
    }
    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> anydev_core::Result<Box<dyn Allocation>> {
        self.check(index)?;
        self.inner.allocate(0, bytes, kind)
    }
    fn memory_stats(&self, _index: usize) -> anydev_core::Result<MemoryStats> {
        self.inner.memory_stats(0)
    }
    fn default_stream(&self, index: usize) -> anydev_core::Result<Stream> {
        self.check(index)?;
        self.inner.default_stream(0)
    }
    fn create_stream(&self, index: usize) -> anydev_core::Result<Stream> {
        self.check(index)?;
        self.inner.create_stream(0)
    }
    fn record_event(&self, stream: &Stream) -> anydev_core::Result<Event> {
        self.inner.record_event(stream)
    }
    fn wait_event(&self, stream: &Stream, event: &Event) -> anydev_core::Result<()> {
        self.inner.wait_event(stream, event)
    }
    fn query_event(&self, event: &Event) -> anydev_core::Result<bool> {
        self.inner.query_event(event)
    }
    fn synchronize_event(&self, event: &Event) -> anydev_core::Result<()> {
        self.inner.synchronize_event(event)
    }
    fn synchronize_stream(&self, stream: &Stream) -> anydev_core::Result<()> {
        self.inner.synchronize_stream(stream)
    }
    fn synchronize(&self, _index: usize) -> anydev_core::Result<()> {
        self.inner.synchronize(0)
    }
    fn copy_from_host_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> anydev_core::Result<()> {
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
    ) -> anydev_core::Result<()> {
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
    ) -> anydev_core::Result<()> {
        COPIES_BETWEEN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
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
    ) -> anydev_core::Result<()> {
        self.inner.fill_unchecked(checked, stream, dst, offset, len, pattern)
    }
    fn execute_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        op: &Op<'_, TensorRef<'_>>,
    ) -> anydev_core::Result<()> {
        self.inner.execute_unchecked(checked, stream, op)
    }
}

/// How many same-backend copies the fake backend has made (to tell a peer
/// copy from staging through the host).
pub static COPIES_BETWEEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn fake_provider(name: &'static str, priority: i32, dtypes: Vec<DType>, unsupported: Vec<OpCode>) -> BackendProvider {
    BackendProvider::new(name, priority, move || {
        Ok(Arc::new(FakeBackend {
            name,
            inner: CpuBackend::new(),
            devices: 2,
            dtypes: dtypes.clone(),
            unsupported: unsupported.clone(),
        }) as Arc<dyn Backend>)
    })
}

/// `cpu:0`; `fake:0` and `fake:1` (every dtype, every op; the default
/// device, having the higher priority); `lite:0` and `lite:1` (no f64 or
/// f16, and no `sin`).
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let lite_dtypes: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| !matches!(d, DType::F64 | DType::F16))
            .collect();
        Runtime::new(
            vec![
                anydev_cpu::provider(),
                fake_provider("fake", 10, DType::ALL.to_vec(), Vec::new()),
                fake_provider("lite", 5, lite_dtypes, vec![OpCode::Unary(UnaryOp::Sin)]),
            ],
            RuntimeConfig::default(),
        )
    })
}

/// Installs the test runtime on this thread.
pub fn use_test_runtime() -> RuntimeGuard {
    RuntimeGuard::new(runtime())
}

pub fn dev(text: &str) -> Device {
    text.parse().unwrap()
}
