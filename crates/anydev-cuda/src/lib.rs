//! The CUDA backend: NVIDIA GPUs as devices `cuda:0`, `cuda:1`, ...
//!
//! - Nothing CUDA is linked: the driver, NVRTC and cuBLAS are opened at run
//!   time through cudarc's dynamic loading, after [`loader`] has checked
//!   that each library opens (cudarc panics on a missing one). No driver or
//!   no GPU is `InitError::Unavailable` with the reason; initialisation
//!   runs inside `catch_unwind` as well.
//! - Each device uses its primary context, made current at the start of
//!   every backend call for the device that call names (or its stream's
//!   or buffer's), so an op always runs on its operands' device whatever
//!   device is current on the thread.
//! - Each device has its own default stream, a real non-blocking stream
//!   (never the legacy NULL stream). Device memory comes from the device's
//!   stream-ordered memory pool in that stream's order ([`memory`]). Work
//!   on other streams is ordered after the default stream before it runs
//!   and the default stream after it, so memory freed in the default
//!   stream's order is never reused under a running kernel.
//! - Kernels are CUDA C generated per op family and dtype ([`codegen`]),
//!   compiled with NVRTC for the device's architecture and cached in
//!   memory and on disk ([`compile`]). Without NVRTC the devices still
//!   serve memory, copies and transfers, and every op reports
//!   `Unsupported` (the `cuda.kernels` capability says why).
//! - Matmul goes through cuBLAS for f16/bf16/f32/f64 when it is present,
//!   through a generated kernel otherwise ([`blas`]).

mod blas;
pub mod codegen;
pub mod compile;
mod device;
mod driver;
mod exec;
pub mod layout;
pub mod loader;
mod memory;
mod nccl;
mod stream;

use anydev_core::backend::{device_at, Backend, Checked, DeviceProperties, TensorRef};
use anydev_core::capability::Capabilities;
use anydev_core::extension::{Attrs, KernelBody};
use anydev_core::memory::{Allocation, Buffer, MemoryAdvice, MemoryKind, MemoryStats};
use anydev_core::ops::{Op, OpCode, Operand};
use anydev_core::stream::{Event, Stream};
use anydev_core::{BackendProvider, DType, Device, DeviceKind, Error, InitError, Result};
use cudarc::driver::sys::{self, CUresult};
use device::{CudaDevice, KernelTarget, Kernels};
use driver::{bind, check, order_after, NAME as BACKEND};
use memory::CudaAllocation;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use stream::{CudaEvent, CudaStream};

/// Backend name and device kind.
pub const NAME: &str = BACKEND;

/// Default-device priority: above wgpu (50) and the CPU (0).
pub const PRIORITY: i32 = 100;

/// The host, where the driver's managed-memory calls take a device.
const CU_DEVICE_CPU: sys::CUdevice = -1;

/// The provider the runtime registers. Initialisation happens when the
/// runtime asks, never at load time.
pub fn provider() -> BackendProvider {
    BackendProvider::new(NAME, PRIORITY, init)
}

/// Initialises the backend: `Unavailable` without a driver or a GPU,
/// `Failed` when the driver is present but unusable.
pub fn init() -> std::result::Result<Arc<dyn Backend>, InitError> {
    loader::available(loader::Lib::Driver)
        .map_err(|reason| InitError::Unavailable(format!("no CUDA driver: {reason}")))?;
    match catch_unwind(AssertUnwindSafe(CudaBackend::new)) {
        Ok(result) => result.map(|b| Arc::new(b) as Arc<dyn Backend>),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(InitError::Failed(format!("initialising CUDA panicked: {message}")))
        }
    }
}

/// The CUDA backend: one device per GPU the driver reports.
pub struct CudaBackend {
    devices: Vec<CudaDevice>,
    default_streams: Vec<Stream>,
    kind: DeviceKind,
}

fn describe(r: CUresult) -> String {
    driver::describe(r)
}

/// How kernels are made, for every device of compute capability `arch`.
fn kernel_targets() -> impl Fn(u32) -> Kernels {
    let nvrtc = compile::nvrtc_version().and_then(|v| Ok((v, compile::supported_archs()?)));
    move |arch| {
        let (version, archs) = nvrtc.clone()?;
        let target = compile::target_for(arch, &archs).ok_or_else(|| {
            format!(
                "NVRTC {}.{} cannot generate code for compute capability {}.{} (it knows {:?})",
                version.0,
                version.1,
                arch / 10,
                arch % 10,
                archs
            )
        })?;
        Ok(KernelTarget { target, nvrtc: version })
    }
}

impl CudaBackend {
    fn new() -> std::result::Result<CudaBackend, InitError> {
        let missing = driver::missing_symbols();
        if !missing.is_empty() {
            return Err(InitError::Failed(format!(
                "the CUDA driver is too old for anydev (it lacks {}); install an NVIDIA driver for CUDA 12 or newer",
                missing.join(", ")
            )));
        }
        // SAFETY: cuInit takes flags 0.
        let r = unsafe { sys::cuInit(0) };
        if r == CUresult::CUDA_ERROR_NO_DEVICE {
            return Err(InitError::Unavailable(
                "the CUDA driver is installed but reports no CUDA-capable device".into(),
            ));
        }
        if r != CUresult::CUDA_SUCCESS {
            return Err(InitError::Failed(format!("cuInit failed: {}", describe(r))));
        }
        let mut version = 0;
        // SAFETY: valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut version) };
        let mut count = 0;
        // SAFETY: valid out-pointer.
        let r = unsafe { sys::cuDeviceGetCount(&mut count) };
        if r != CUresult::CUDA_SUCCESS {
            return Err(InitError::Failed(format!("cuDeviceGetCount failed: {}", describe(r))));
        }
        if count <= 0 {
            return Err(InitError::Unavailable("the CUDA driver reports no devices".into()));
        }
        let kind = DeviceKind::new(NAME);
        let kernels = kernel_targets();
        let mut devices = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            let dev = CudaDevice::open(Device::new(kind, i), i, version, &kernels)
                .map_err(|e| InitError::Failed(format!("opening cuda:{i}: {e}")))?;
            devices.push(dev);
        }
        enable_peers(&mut devices);
        let default_streams = devices
            .iter()
            .map(|d| Stream::new(d.id, Arc::new(CudaStream::default_of(&d.core))))
            .collect();
        Ok(CudaBackend {
            devices,
            default_streams,
            kind,
        })
    }

    fn device(&self, index: usize) -> Result<&CudaDevice> {
        device_at(&self.devices, self.kind, index)
    }

    /// The stream's handle and device, with the device's context bound.
    fn stream<'s>(&self, stream: &'s Stream) -> Result<(&CudaDevice, &'s CudaStream)> {
        let s = stream
            .downcast::<CudaStream>()
            .ok_or_else(|| Error::backend(NAME, format!("{stream:?} is not a cuda stream")))?;
        let dev = self.device(s.device())?;
        dev.bind()?;
        Ok((dev, s))
    }

    fn event<'e>(&self, event: &'e Event) -> Result<(&CudaDevice, &'e CudaEvent)> {
        let e = event
            .downcast::<CudaEvent>()
            .ok_or_else(|| Error::backend(NAME, format!("{event:?} is not a cuda event")))?;
        let dev = self.device(e.device())?;
        dev.bind()?;
        Ok((dev, e))
    }

    /// The driver's name for `to` in managed-memory calls about memory of
    /// device `from`: a CUDA device of this backend, or the host
    /// (`CU_DEVICE_CPU`) for a `cpu` device.
    fn managed_target(&self, op: &str, from: Device, to: Device) -> Result<sys::CUdevice> {
        if to.kind().as_str() == "cpu" {
            return Ok(CU_DEVICE_CPU);
        }
        match self.device(to.index()) {
            Ok(dev) if dev.id == to => Ok(dev.cu),
            _ => Err(Error::FeatureUnsupported {
                feature: format!("{op} to {to}"),
                device: from,
                reason: "CUDA managed memory moves only to a CUDA device or to the host (cpu)".into(),
            }),
        }
    }

    /// Records an event on `stream`, with timing when `timed`.
    fn record(&self, stream: &Stream, timed: bool) -> Result<Event> {
        let (dev, s) = self.stream(stream)?;
        let e = driver::new_event(timed)?;
        let handle = CudaEvent {
            core: Arc::clone(&dev.core),
            raw: driver::Raw(e),
            timed,
        };
        // SAFETY: live event and stream of the bound context.
        check(unsafe { sys::cuEventRecord(e, s.raw.0) }, "cuEventRecord")?;
        Ok(Event::new(dev.id, Arc::new(handle)))
    }

    fn alloc<'b>(&self, op: &str, buffer: &'b Buffer) -> Result<&'b CudaAllocation> {
        buffer
            .downcast::<CudaAllocation>()
            .ok_or_else(|| memory::foreign(op, buffer))
    }

    /// Runs `f` on `stream` with its device, ordered with the device's
    /// default stream ([`stream::ordered`]).
    fn on_stream<T>(&self, stream: &Stream, f: impl FnOnce(&CudaDevice, sys::CUstream) -> Result<T>) -> Result<T> {
        let (dev, s) = self.stream(stream)?;
        stream::ordered(s, |raw| f(dev, raw))
    }
}

/// Enables peer access between every pair of devices that supports it.
fn enable_peers(devices: &mut [CudaDevice]) {
    let n = devices.len();
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let mut can = 0;
            // SAFETY: valid out-pointer and device handles.
            let r = unsafe { sys::cuDeviceCanAccessPeer(&mut can, devices[i].cu, devices[j].cu) };
            if r != CUresult::CUDA_SUCCESS || can == 0 || bind(devices[i].ctx()).is_err() {
                continue;
            }
            // SAFETY: both are live primary contexts; flags must be 0.
            let r = unsafe { sys::cuCtxEnablePeerAccess(devices[j].ctx(), 0) };
            if r == CUresult::CUDA_SUCCESS || r == CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                devices[i].peers.push(j);
            }
        }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &str {
        NAME
    }

    fn device_count(&self) -> usize {
        self.devices.len()
    }

    fn properties(&self, index: usize) -> Result<DeviceProperties> {
        Ok(self.device(index)?.properties())
    }

    fn capabilities(&self, index: usize) -> Result<Capabilities> {
        Ok(self.device(index)?.capabilities(self.kind))
    }

    fn collectives(&self) -> Option<String> {
        nccl::describe_availability().ok().map(|_| "nccl".into())
    }

    fn comm_id(&self) -> Result<Vec<u8>> {
        nccl::new_id()
    }

    fn comm_init(
        &self,
        index: usize,
        init: &anydev_core::collective::CommInit<'_>,
    ) -> Result<Box<dyn anydev_core::collective::DeviceComm>> {
        Ok(Box::new(nccl::join(self.device(index)?, init)?))
    }

    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        self.devices
            .get(index)
            .is_some_and(|d| d.kernels.is_ok() && exec::supports(op, dtype))
    }

    fn memory_kinds(&self, index: usize) -> Vec<MemoryKind> {
        self.devices.get(index).map(|d| d.memory_kinds()).unwrap_or_default()
    }

    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>> {
        let dev = self.device(index)?;
        dev.bind()?;
        Ok(Box::new(memory::allocate(dev, bytes, kind)?))
    }

    fn memory_stats(&self, index: usize) -> Result<MemoryStats> {
        Ok(self.device(index)?.core.counter.stats())
    }

    fn reset_peak(&self, index: usize) -> Result<()> {
        self.device(index)?.core.counter.reset_peak();
        Ok(())
    }

    fn prefetch(&self, stream: &Stream, buffer: &Buffer, offset: usize, len: usize, to: Device) -> Result<()> {
        let (dev, s) = self.stream(stream)?;
        if !dev.concurrent_managed_access {
            return Ok(());
        }
        let a = self.alloc("prefetch", buffer)?;
        let target = self.managed_target("prefetch", dev.id, to)?;
        // SAFETY: the range lies in a live managed allocation (the caller
        // checked it); the stream is live in the bound context.
        check(
            unsafe { sys::cuMemPrefetchAsync(a.ptr + offset as u64, len, target, s.raw.0) },
            "cuMemPrefetchAsync",
        )
    }

    fn advise(&self, buffer: &Buffer, offset: usize, len: usize, advice: MemoryAdvice) -> Result<()> {
        let a = self.alloc("advise", buffer)?;
        let dev = self.device(a.device())?;
        if !dev.concurrent_managed_access {
            return Ok(());
        }
        dev.bind()?;
        use sys::CUmem_advise_enum as A;
        let (code, target) = match advice {
            // The device argument is ignored for read-mostly.
            MemoryAdvice::ReadMostly => (A::CU_MEM_ADVISE_SET_READ_MOSTLY, dev.cu),
            MemoryAdvice::PreferredLocation(to) => (
                A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                self.managed_target("advise", dev.id, to)?,
            ),
            MemoryAdvice::AccessedBy(to) => (
                A::CU_MEM_ADVISE_SET_ACCESSED_BY,
                self.managed_target("advise", dev.id, to)?,
            ),
        };
        // SAFETY: the range lies in a live managed allocation; a context is bound.
        check(
            unsafe { sys::cuMemAdvise(a.ptr + offset as u64, len, code, target) },
            "cuMemAdvise",
        )
    }

    fn map_buffer(&self, index: usize, source: &Buffer) -> Result<Box<dyn Allocation>> {
        let dev = self.device(index)?;
        if let Some(a) = source.downcast::<CudaAllocation>() {
            // Memory of another CUDA device: host-reachable kinds are
            // addressable from every device (unified addressing), device
            // memory from peers.
            if a.kind != MemoryKind::Device || dev.peers.contains(&a.device()) {
                return Ok(Box::new(memory::mapping(dev, a.ptr, source.host_ptr(), a.kind)));
            }
        } else if source.kind() == MemoryKind::System && dev.pageable_memory_access {
            // Plain host memory (the CPU backend's): reachable through HMM/ATS.
            if let Some(p) = source.host_ptr() {
                return Ok(Box::new(memory::mapping(dev, p as u64, Some(p), MemoryKind::System)));
            }
        }
        Err(Error::backend(
            NAME,
            format!("{} cannot use {source:?} without copying", dev.id),
        ))
    }

    fn adopt_device_memory(
        &self,
        index: usize,
        memory: anydev_core::ForeignDevice,
    ) -> Result<(Box<dyn Allocation>, MemoryKind)> {
        let (allocation, kind) = memory::adopt(self.device(index)?, memory)?;
        Ok((Box::new(allocation), kind))
    }

    fn follow_platform_stream(&self, index: usize) -> Result<bool> {
        let dev = self.device(index)?;
        // CU_STREAM_LEGACY: the context's legacy default stream, whatever
        // the calling thread's default-stream mode.
        let legacy = 0x1 as sys::CUstream;
        order_after(dev.stream(), dev.ctx(), legacy, dev.ctx())?;
        Ok(true)
    }

    /// Every use of a device's streams is joined into its default stream as
    /// it is enqueued ([`stream::ordered`]), and memory is freed in that
    /// stream's order (or after synchronising it), so a free already follows
    /// whatever the device's own streams queued: no event is needed for
    /// them. A peer device's stream is not joined there and keeps its event.
    fn frees_in_stream_order(&self, index: usize, stream: &Stream) -> bool {
        stream.downcast::<CudaStream>().is_some_and(|s| s.device() == index)
    }

    fn release(&self, allocation: Box<dyn Allocation>, pending: Vec<Event>) {
        // Stream-ordered: the owning device's default stream waits for the
        // pending work, then the memory is freed in that stream's order, so
        // this returns at once. Anything unexpected waits on the host.
        let ordered = allocation
            .as_any()
            .downcast_ref::<CudaAllocation>()
            .and_then(|a| self.devices.get(a.device()))
            .is_some_and(|dev| {
                dev.bind().is_ok()
                    && pending.iter().all(|event| match event.downcast::<CudaEvent>() {
                        Some(e) => {
                            // SAFETY: a live event and the device's live default stream.
                            let r = unsafe { sys::cuStreamWaitEvent(dev.stream(), e.raw.0, 0) };
                            r == CUresult::CUDA_SUCCESS
                        }
                        None => false,
                    })
            });
        if ordered || pending.iter().all(|event| self.synchronize_event(event).is_ok()) {
            drop(allocation);
        } else {
            std::mem::forget(allocation);
        }
    }

    fn default_stream(&self, index: usize) -> Result<Stream> {
        self.device(index)?;
        Ok(self.default_streams[index].clone())
    }

    fn create_stream(&self, index: usize) -> Result<Stream> {
        let dev = self.device(index)?;
        dev.bind()?;
        let mut raw: sys::CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the device's context is current.
        check(
            unsafe { sys::cuStreamCreate(&mut raw, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) },
            "cuStreamCreate",
        )?;
        Ok(Stream::new(dev.id, Arc::new(CudaStream::owned(&dev.core, raw))))
    }

    fn record_event(&self, stream: &Stream) -> Result<Event> {
        self.record(stream, false)
    }

    fn record_timed_event(&self, stream: &Stream) -> Result<Event> {
        self.record(stream, true)
    }

    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<std::time::Duration> {
        let (_, first) = self.event(start)?;
        let (_, last) = self.event(end)?;
        if first.device() != last.device() {
            return Err(Error::DeviceMismatch {
                op: "event_elapsed".into(),
                devices: vec![start.device(), end.device()],
            });
        }
        if !(first.timed && last.timed) {
            return Err(Error::backend(
                NAME,
                "an event recorded without timing cannot be timed: record it with record_timed_event",
            ));
        }
        let mut millis = 0f32;
        // SAFETY: two live, timed events of the bound context; a valid out-pointer.
        check(
            unsafe { sys::cuEventElapsedTime(&mut millis, first.raw.0, last.raw.0) },
            "cuEventElapsedTime",
        )?;
        // The driver's resolution is about half a microsecond.
        Ok(std::time::Duration::from_secs_f64(f64::from(millis.max(0.0)) / 1e3))
    }

    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()> {
        let e = event
            .downcast::<CudaEvent>()
            .ok_or_else(|| Error::backend(NAME, format!("{event:?} is not a cuda event")))?;
        let (_, s) = self.stream(stream)?;
        // SAFETY: live stream and event; events of other devices are allowed.
        check(
            unsafe { sys::cuStreamWaitEvent(s.raw.0, e.raw.0, 0) },
            "cuStreamWaitEvent",
        )
    }

    fn query_event(&self, event: &Event) -> Result<bool> {
        let (_, e) = self.event(event)?;
        // SAFETY: a live event.
        match unsafe { sys::cuEventQuery(e.raw.0) } {
            CUresult::CUDA_SUCCESS => Ok(true),
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            r => check(r, "cuEventQuery").map(|_| false),
        }
    }

    fn synchronize_event(&self, event: &Event) -> Result<()> {
        let (_, e) = self.event(event)?;
        // SAFETY: a live event.
        check(unsafe { sys::cuEventSynchronize(e.raw.0) }, "cuEventSynchronize")
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let (_, s) = self.stream(stream)?;
        // SAFETY: a live stream.
        check(unsafe { sys::cuStreamSynchronize(s.raw.0) }, "cuStreamSynchronize")
    }

    fn synchronize(&self, index: usize) -> Result<()> {
        let dev = self.device(index)?;
        dev.bind()?;
        // SAFETY: the device's context is current.
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
    }

    fn copy_from_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()> {
        let to = self.alloc("copy_from_host", dst)?.ptr + dst_offset as u64;
        if src.is_empty() {
            return Ok(());
        }
        self.on_stream(stream, |dev, raw| {
            if src.len() <= memory::STAGING_MAX {
                // Through page-locked memory: the copy is truly asynchronous
                // and `src` is free as soon as it has been read here.
                let mut staging = memory::take_staging(dev, src.len())?;
                staging.as_mut_slice(src.len()).copy_from_slice(src);
                // SAFETY: both ranges are valid (checked / just filled).
                let r = unsafe { sys::cuMemcpyAsync(to, staging.ptr() as u64, src.len(), raw) };
                let marked = staging.mark_busy(raw);
                memory::put_staging(dev, staging);
                check(r, "cuMemcpyAsync (host to device)")?;
                marked
            } else {
                // Pageable source: the driver copies it into its own staging
                // memory before returning, so `src` may be reused at once.
                // SAFETY: both ranges are valid.
                check(
                    unsafe { sys::cuMemcpyAsync(to, src.as_ptr() as u64, src.len(), raw) },
                    "cuMemcpyAsync (host to device)",
                )
            }
        })
    }

    fn copy_to_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let from = self.alloc("copy_to_host", src)?.ptr + src_offset as u64;
        if dst.is_empty() {
            return Ok(());
        }
        self.on_stream(stream, |dev, raw| {
            if dst.len() <= memory::STAGING_MAX {
                let mut staging = memory::take_staging(dev, dst.len())?;
                // SAFETY: both ranges are valid; the stream is waited on
                // before the staging buffer is read.
                let r = unsafe { sys::cuMemcpyAsync(staging.ptr() as u64, from, dst.len(), raw) };
                // SAFETY: a live stream.
                let s = if r == CUresult::CUDA_SUCCESS {
                    unsafe { sys::cuStreamSynchronize(raw) }
                } else {
                    r
                };
                if s == CUresult::CUDA_SUCCESS {
                    let len = dst.len();
                    dst.copy_from_slice(staging.as_mut_slice(len));
                }
                memory::put_staging(dev, staging);
                check(r, "cuMemcpyAsync (device to host)")?;
                check(s, "cuStreamSynchronize")
            } else {
                // SAFETY: both ranges are valid; `dst` is not touched until
                // the stream has finished.
                check(
                    unsafe { sys::cuMemcpyAsync(dst.as_mut_ptr() as u64, from, dst.len(), raw) },
                    "cuMemcpyAsync (device to host)",
                )?;
                // SAFETY: a live stream.
                check(unsafe { sys::cuStreamSynchronize(raw) }, "cuStreamSynchronize")
            }
        })
    }

    fn copy_between_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        let (sa, da) = (self.alloc("copy_between", src)?, self.alloc("copy_between", dst)?);
        if len == 0 {
            return Ok(());
        }
        let (from, to) = (sa.ptr + src_offset as u64, da.ptr + dst_offset as u64);
        self.on_stream(stream, |dev, raw| {
            // The buffer of another device: order the copy after that
            // device's default stream (its allocation, earlier writes) and
            // that stream after the copy (its later frees).
            let other = [sa.device(), da.device()]
                .into_iter()
                .find(|&d| d != dev.core.index)
                .map(|d| self.device(d))
                .transpose()?;
            if let Some(o) = other {
                order_after(raw, dev.ctx(), o.stream(), o.ctx())?;
            }
            let r = match other {
                Some(_) if sa.kind == MemoryKind::Device && da.kind == MemoryKind::Device => {
                    let (sd, dd) = (self.device(sa.device())?, self.device(da.device())?);
                    // Direct over NVLink/PCIe with peer access, staged through
                    // the host by the driver without it.
                    // SAFETY: valid ranges in the two devices' contexts.
                    unsafe { sys::cuMemcpyPeerAsync(to, dd.ctx(), from, sd.ctx(), len, raw) }
                }
                // SAFETY: valid ranges; unified addressing resolves both.
                _ => unsafe { sys::cuMemcpyAsync(to, from, len, raw) },
            };
            if let Some(o) = other {
                order_after(o.stream(), o.ctx(), raw, dev.ctx())?;
            }
            check(r, "copying between buffers")
        })
    }

    fn fill_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        dst: &Buffer,
        offset: usize,
        len: usize,
        pattern: &[u8],
    ) -> Result<()> {
        let to = self.alloc("fill", dst)?.ptr + offset as u64;
        if len == 0 {
            return Ok(());
        }
        let uniform = pattern.iter().all(|&b| b == pattern[0]);
        let r = self.on_stream(stream, |dev, raw| {
            // SAFETY (each memset): the range was checked; alignment of the
            // 16/32-bit forms is checked first.
            let r = if uniform {
                unsafe { sys::cuMemsetD8Async(to, pattern[0], len, raw) }
            } else if pattern.len() == 2 && to.is_multiple_of(2) {
                let v = u16::from_le_bytes([pattern[0], pattern[1]]);
                unsafe { sys::cuMemsetD16Async(to, v, len / 2, raw) }
            } else if pattern.len() == 4 && to.is_multiple_of(4) {
                let v = u32::from_le_bytes([pattern[0], pattern[1], pattern[2], pattern[3]]);
                unsafe { sys::cuMemsetD32Async(to, v, len / 4, raw) }
            } else if pattern.len() == 8 && to.is_multiple_of(8) && dev.kernels.is_ok() {
                let mut bits = [0u8; 8];
                bits.copy_from_slice(pattern);
                let t = TensorRef {
                    buffer: dst,
                    offset,
                    dtype: DType::U64,
                    shape: &[len / 8],
                    strides: &[1],
                };
                let x = exec::Exec {
                    dev,
                    stream: raw,
                    name: "fill",
                };
                let value = anydev_core::Scalar::U64(u64::from_le_bytes(bits));
                return x
                    .elementwise(
                        codegen::ModuleKey::Bytes(8),
                        "fill",
                        &[Operand::Scalar(value)],
                        &t,
                        &[8, 8],
                    )
                    .map(|_| None);
            } else {
                return Ok(Some(pattern.repeat(len / pattern.len())));
            };
            check(r, "cuMemset").map(|_| None)
        })?;
        match r {
            // Any other pattern: build it on the host and upload it.
            Some(bytes) => self.copy_from_host(stream, &bytes, dst, offset),
            None => Ok(()),
        }
    }

    fn run_kernel(
        &self,
        stream: &Stream,
        body: &KernelBody<'_>,
        inputs: &[TensorRef<'_>],
        outputs: &[TensorRef<'_>],
        _attrs: &Attrs,
    ) -> Result<()> {
        let KernelBody::Cuda {
            key,
            kernel,
            grid,
            block,
            params,
        } = body
        else {
            return Err(Error::backend(NAME, format!("runs no {} kernels", body.form())));
        };
        self.on_stream(stream, |dev, raw| {
            // Extension operands are whole fresh or contiguous buffers of
            // this device, from their first element.
            let address = |t: &TensorRef<'_>| match t.buffer.downcast::<CudaAllocation>() {
                Some(a) if a.device() == dev.core.index && t.offset == 0 => Ok(a.ptr),
                _ => Err(Error::backend(
                    NAME,
                    format!("{key}: an operand that is not at the start of a buffer of {}", dev.id),
                )),
            };
            let mut pointers: Vec<sys::CUdeviceptr> =
                inputs.iter().chain(outputs).map(address).collect::<Result<_>>()?;
            let mut words = params.to_vec();
            let mut args: Vec<*mut std::ffi::c_void> = pointers
                .iter_mut()
                .map(|p| p as *mut sys::CUdeviceptr as *mut std::ffi::c_void)
                .chain(words.iter_mut().map(|w| w as *mut u32 as *mut std::ffi::c_void))
                .collect();
            let f = dev.extension_function(key, &kernel.source, &kernel.name)?;
            // SAFETY: `f` was compiled from the kernel's source, whose
            // documented parameters are one pointer per operand and one
            // unsigned int per params word, exactly the values behind
            // `args`, which outlive the call; every pointer is the start of
            // a live allocation of this device.
            let r = unsafe {
                sys::cuLaunchKernel(
                    f,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    0,
                    raw,
                    args.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            check(r, &format!("launching {key}"))
        })
    }

    fn execute_unchecked(&self, _: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let name = op.code().name();
        self.on_stream(stream, |dev, raw| {
            if dev.kernels.is_err() {
                return Err(Error::Unsupported {
                    op: name.to_owned(),
                    dtype: op.support_dtype(),
                    device: dev.id,
                });
            }
            exec::Exec { dev, stream: raw, name }.execute(op)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a machine without the NVIDIA driver (CI, this project's
    /// development machines), initialisation reports the backend
    /// unavailable, naming the missing library; it never panics.
    #[test]
    fn init_without_a_driver_is_unavailable_with_the_reason() {
        match init() {
            Err(InitError::Unavailable(reason)) => {
                println!("cuda unavailable: {reason}");
                assert!(!reason.is_empty());
                if loader::check(loader::Lib::Driver).is_err() {
                    assert!(reason.contains("libcuda") || reason.contains("nvcuda"), "{reason}");
                }
            }
            Err(InitError::Failed(reason)) => println!("cuda failed to initialise: {reason}"),
            Ok(b) => println!("cuda available with {} device(s)", b.device_count()),
        }
    }

    #[test]
    fn supports_mirrors_the_host_kernels() {
        for op in OpCode::all() {
            for dtype in DType::ALL {
                let want = anydev_kernels::supports(op, dtype);
                assert_eq!(exec::supports(op, dtype), want, "{op} for {dtype}");
            }
        }
    }

    #[test]
    fn the_provider_is_named_cuda_and_outranks_wgpu() {
        let p = provider();
        assert_eq!(p.name, "cuda");
        assert!(p.priority > 50);
    }
}
