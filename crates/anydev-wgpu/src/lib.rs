//! The portable GPU backend: every adapter wgpu reaches (Vulkan, Metal,
//! DX12) as devices `wgpu:0`, `wgpu:1`, ..., best first (discrete, then
//! integrated, virtual, and software adapters such as llvmpipe last).
//!
//! - Initialisation is lazy (in the provider's initialiser) and never
//!   panics or hangs: no adapter is `InitError::Unavailable` with the
//!   reason. `ANYDEV_WGPU_BACKENDS=none` forces that (see [`adapter`]).
//! - Memory is wgpu storage buffers; host transfers stage and wait inside
//!   the backend, so callers see the same ordered, synchronous semantics
//!   as on every other device ([`memory`]).
//! - Each device has one queue; streams share its submission order and
//!   events are submission indices, stamped with the GPU clock where the
//!   device has timestamp queries ([`stream`]).
//! - Kernels are WGSL generated per op and dtype from one table
//!   ([`shader`]), compiled once per device ([`pipeline_cache`]).
//! - The `linalg` factorizations are the devices' own implementation of
//!   those extension ops, with a workspace per call ([`linalg`]).
//!
//! Supported dtypes: bool, i8, i16, i32, u8, u16, u32, f16, bf16 and f32
//! everywhere (1- and 2-byte types packed into 32-bit words, f16/bf16
//! computing in f32); i64 and u64 with `SHADER_INT64`; f64 with
//! `SHADER_F64` and `SHADER_INT64`; WGSL has no f64 transcendental
//! functions, so the backend writes its own (`shader::math_f64`) and every
//! float op runs in f64 too. c64 everywhere, as `vec2<f32>` (arithmetic,
//! pow, exp/log, the trigonometric and hyperbolic functions and their
//! inverses, sqrt, abs, sign, casts, reductions, scans, matmul); c128
//! nowhere yet: its kernels (the c64 library written over f64) are not
//! generated.

pub mod adapter;
mod buffer_cache;
mod device;
mod dispatch;
mod exec;
mod linalg;
mod memory;
mod pipeline_cache;
pub mod shader;
mod stream;

pub use adapter::{InitOptions, BACKENDS_ENV};

use anydev_core::backend::{device_at, Backend, Checked, DeviceProperties, TensorRef, SOFTWARE_PRIORITY};
use anydev_core::capability::Capabilities;
use anydev_core::extension::{Attrs, KernelBody, TensorMeta};
use anydev_core::memory::{Allocation, Buffer, MemoryKind, MemoryStats};
use anydev_core::ops::{Op, OpCode};
use anydev_core::stream::{Event, Stream};
use anydev_core::{BackendProvider, DType, Device, DeviceKind, Error, InitError, Result};
use device::GpuDevice;
use memory::GpuAllocation;
use std::sync::Arc;
use stream::{GpuEvent, GpuStream};

/// Backend name and device kind.
pub const NAME: &str = "wgpu";

/// Priority when the runtime picks the default device: above the CPU,
/// below vendor-native backends such as CUDA.
pub const PRIORITY: i32 = 50;

/// The provider the runtime registers; options come from the environment
/// when the runtime initialises it, not before.
pub fn provider() -> BackendProvider {
    BackendProvider::new(NAME, PRIORITY, || {
        let options = InitOptions::from_env().map_err(InitError::Failed)?;
        init(&options)
    })
}

/// Initialises the backend with explicit options.
pub fn init(options: &InitOptions) -> std::result::Result<Arc<dyn Backend>, InitError> {
    Ok(Arc::new(WgpuBackend::new(options)?))
}

/// The wgpu backend: one device per adapter.
pub struct WgpuBackend {
    devices: Vec<GpuDevice>,
    kind: DeviceKind,
}

impl WgpuBackend {
    pub fn new(options: &InitOptions) -> std::result::Result<WgpuBackend, InitError> {
        Ok(WgpuBackend {
            devices: adapter::open_devices(options)?,
            kind: DeviceKind::new(NAME),
        })
    }

    fn id(&self, index: usize) -> Device {
        Device::new(self.kind, index)
    }

    fn device(&self, index: usize) -> Result<&GpuDevice> {
        device_at(&self.devices, self.kind, index)
    }

    fn stream_device(&self, stream: &Stream) -> Result<(usize, &GpuDevice)> {
        let handle = stream
            .downcast::<GpuStream>()
            .ok_or_else(|| Error::backend(NAME, format!("{stream:?} is not a wgpu stream")))?;
        Ok((handle.device, self.device(handle.device)?))
    }

    fn event<'e>(&self, event: &'e Event) -> Result<(&'e GpuEvent, &GpuDevice)> {
        let handle = event
            .downcast::<GpuEvent>()
            .ok_or_else(|| Error::backend(NAME, format!("{event:?} is not a wgpu event")))?;
        Ok((handle, self.device(handle.device)?))
    }

    /// The wgpu buffer behind `buffer` and the index of its device.
    fn gpu<'b>(&self, buffer: &'b Buffer) -> Result<(&'b wgpu::Buffer, usize)> {
        let alloc = buffer
            .downcast::<GpuAllocation>()
            .ok_or_else(|| Error::backend(NAME, format!("{buffer:?} was not allocated by the wgpu backend")))?;
        Ok((&alloc.buffer, alloc.device))
    }

    /// The buffer, checked to belong to the stream's device.
    fn on_stream<'b>(&self, op: &str, buffer: &'b Buffer, index: usize) -> Result<&'b wgpu::Buffer> {
        let (b, owner) = self.gpu(buffer)?;
        if owner != index {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "{buffer:?} is on {} but the stream is on {}",
                    self.id(owner),
                    self.id(index)
                ),
            ));
        }
        Ok(b)
    }

    fn poll(&self, dev: &GpuDevice, wait: wgpu::PollType) -> Result<()> {
        dev.device
            .poll(wait)
            .map(|_| ())
            .map_err(|e| Error::backend(NAME, format!("waiting for {}: {e}", dev.info.name)))
    }
}

impl Backend for WgpuBackend {
    fn name(&self) -> &str {
        NAME
    }

    fn priority(&self) -> Option<i32> {
        let all_software = self.devices.iter().all(|d| d.info.device_type == wgpu::DeviceType::Cpu);
        all_software.then_some(SOFTWARE_PRIORITY)
    }

    fn device_count(&self) -> usize {
        self.devices.len()
    }

    fn properties(&self, index: usize) -> Result<DeviceProperties> {
        Ok(self.device(index)?.properties())
    }

    fn capabilities(&self, index: usize) -> Result<Capabilities> {
        Ok(self.device(index)?.capabilities())
    }

    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        self.devices
            .get(index)
            .is_some_and(|d| shader::supports(d.features, op, dtype))
    }

    fn memory_kinds(&self, _index: usize) -> Vec<MemoryKind> {
        vec![MemoryKind::Device]
    }

    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>> {
        let dev = self.device(index)?;
        if kind != MemoryKind::Device {
            return Err(Error::invalid_argument(
                "allocate",
                format!("the wgpu backend allocates only device memory, not {kind}"),
            ));
        }
        Ok(Box::new(memory::allocate(dev, self.id(index), index, bytes)?))
    }

    fn memory_stats(&self, index: usize) -> Result<MemoryStats> {
        let dev = self.device(index)?;
        let mut stats = dev.counter.stats();
        stats.reserved = stats.in_use + dev.buffers.bytes() as usize;
        Ok(stats)
    }

    fn empty_cache(&self, index: usize) -> Result<()> {
        self.device(index)?.buffers.clear();
        Ok(())
    }

    fn reset_peak(&self, index: usize) -> Result<()> {
        self.device(index)?.counter.reset_peak();
        Ok(())
    }

    /// wgpu keeps a buffer's memory until the submissions that use it have
    /// completed, so the free need not wait for them here.
    fn release(&self, allocation: Box<dyn Allocation>, _pending: Vec<Event>) {
        drop(allocation);
    }

    fn default_stream(&self, index: usize) -> Result<Stream> {
        self.create_stream(index)
    }

    fn create_stream(&self, index: usize) -> Result<Stream> {
        self.device(index)?;
        Ok(Stream::new(self.id(index), Arc::new(GpuStream { device: index })))
    }

    fn record_event(&self, stream: &Stream) -> Result<Event> {
        let (index, dev) = self.stream_device(stream)?;
        Ok(Event::new(
            self.id(index),
            Arc::new(GpuEvent::record(index, &dev.device, &dev.queue, false)),
        ))
    }

    fn record_timed_event(&self, stream: &Stream) -> Result<Event> {
        let (index, dev) = self.stream_device(stream)?;
        Ok(Event::new(
            self.id(index),
            Arc::new(GpuEvent::record(index, &dev.device, &dev.queue, dev.timestamps)),
        ))
    }

    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()> {
        let (index, _) = self.stream_device(stream)?;
        let (handle, dev) = self.event(event)?;
        if handle.device == index {
            // One queue per device: later submissions already run after it.
            Ok(())
        } else {
            self.poll(
                dev,
                wgpu::PollType::Wait {
                    submission_index: Some(handle.index.clone()),
                    timeout: None,
                },
            )
        }
    }

    fn query_event(&self, event: &Event) -> Result<bool> {
        let (handle, dev) = self.event(event)?;
        if !handle.is_done() {
            self.poll(dev, wgpu::PollType::Poll)?;
        }
        Ok(handle.is_done())
    }

    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<std::time::Duration> {
        let (first, dev) = self.event(start)?;
        let (last, _) = self.event(end)?;
        if first.device != last.device {
            return Err(Error::DeviceMismatch {
                op: "event_elapsed".into(),
                devices: vec![start.device(), end.device()],
            });
        }
        let ticks = |event: &GpuEvent| match event.ticks(&dev.device) {
            Ok(Some(ticks)) => Ok(ticks),
            Ok(None) if dev.timestamps => Err(Error::backend(
                NAME,
                "an event recorded without a timestamp cannot be timed: record it with record_timed_event",
            )),
            Ok(None) => Err(anydev_core::backend::no_event_timing(start.device())),
            Err(e) => Err(Error::backend(NAME, e)),
        };
        let (first, last) = (ticks(first)?, ticks(last)?);
        // The clock may count in units other than nanoseconds.
        let nanos = last.saturating_sub(first) as f64 * f64::from(dev.queue.get_timestamp_period());
        Ok(std::time::Duration::from_nanos(nanos as u64))
    }

    fn synchronize_event(&self, event: &Event) -> Result<()> {
        let (handle, dev) = self.event(event)?;
        self.poll(
            dev,
            wgpu::PollType::Wait {
                submission_index: Some(handle.index.clone()),
                timeout: None,
            },
        )
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let (_, dev) = self.stream_device(stream)?;
        self.poll(dev, wgpu::PollType::wait_indefinitely())
    }

    fn synchronize(&self, index: usize) -> Result<()> {
        self.poll(self.device(index)?, wgpu::PollType::wait_indefinitely())
    }

    fn copy_from_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()> {
        let (index, dev) = self.stream_device(stream)?;
        memory::write(dev, self.on_stream("copy_from_host", dst, index)?, dst_offset, src)
    }

    fn copy_to_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let (index, dev) = self.stream_device(stream)?;
        memory::read(dev, self.on_stream("copy_to_host", src, index)?, src_offset, dst)
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
        self.stream_device(stream)?;
        let ((s, si), (d, di)) = (self.gpu(src)?, self.gpu(dst)?);
        if si == di {
            return memory::copy(self.device(si)?, s, src_offset, d, dst_offset, len);
        }
        // Two wgpu devices share no memory: stage through the host.
        let mut staged = vec![0u8; len];
        memory::read(self.device(si)?, s, src_offset, &mut staged)?;
        memory::write(self.device(di)?, d, dst_offset, &staged)
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
        let (index, dev) = self.stream_device(stream)?;
        memory::fill(dev, self.on_stream("fill", dst, index)?, offset, len, pattern)
    }

    fn run_kernel(
        &self,
        stream: &Stream,
        body: &KernelBody<'_>,
        inputs: &[TensorRef<'_>],
        outputs: &[TensorRef<'_>],
        attrs: &Attrs,
    ) -> Result<()> {
        let (index, dev) = self.stream_device(stream)?;
        let (key, kernel, grid, params) = match body {
            KernelBody::Wgsl {
                key,
                kernel,
                grid,
                params,
            } => (key, kernel, grid, params),
            KernelBody::Device { op } => return linalg::run(dev, self.id(index), index, op, inputs, outputs, attrs),
            _ => return Err(Error::backend(NAME, format!("runs no {} kernels", body.form()))),
        };
        let ins = memory::whole_buffers(inputs, index, self.id(index), key)?;
        let outs = memory::whole_buffers(outputs, index, self.id(index), key)?;
        let pipeline = dev.pipelines.extension(dev, key, &kernel.source, &kernel.entry_point)?;
        let words: Vec<u8> = params.iter().flat_map(|w| w.to_le_bytes()).collect();
        dispatch::submit(dev, &pipeline, &words, &ins, &outs, *grid)
            .map_err(|e| Error::backend(NAME, format!("{key}: launching the WGSL kernel: {e}")))
    }

    /// The `linalg` factorizations ([`linalg`]), which need a workspace.
    fn extension_ops(&self, index: usize) -> Vec<String> {
        if index < self.devices.len() {
            linalg::ops()
        } else {
            Vec::new()
        }
    }

    fn extension_supported(
        &self,
        index: usize,
        op: &str,
        inputs: &[TensorMeta],
        _outputs: &[TensorMeta],
        _attrs: &Attrs,
    ) -> Result<bool> {
        Ok(linalg::supported(self.device(index)?.features, op, inputs))
    }

    fn execute_unchecked(&self, _: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let (index, dev) = self.stream_device(stream)?;
        let exec = exec::Exec {
            dev,
            id: self.id(index),
            index,
            name: op.code().name(),
        };
        exec.execute(op)
    }
}
