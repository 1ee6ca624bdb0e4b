//! The CPU backend: the host as device `cpu:0`.
//!
//! Memory is plain host memory (`System` kind, 256-byte aligned so the
//! same buffers can be handed to devices that reach host memory), ops run
//! on the calling thread through the shared host kernels (which use rayon
//! above their own size thresholds), and every stream and event completes
//! as soon as work is enqueued.

mod memory;
mod properties;

use anydev_core::backend::{Backend, Checked, DeviceProperties, TensorRef};
use anydev_core::capability::Capabilities;
use anydev_core::extension::{Attrs, HostTensor as ExtTensor, HostTensorMut as ExtTensorMut, KernelBody};
use anydev_core::memory::{Allocation, Buffer, ForeignHost, MemoryKind, MemoryStats};
use anydev_core::ops::{Op, OpCode};
use anydev_core::stream::{Event, Stream};
use anydev_core::{BackendProvider, DType, Device, Error, Result};
use anydev_kernels::{HostTensor, KernelError};
use memory::{HostAllocation, HostMemory, HostView, MappedHost};
use std::sync::Arc;

/// Backend name and device kind.
pub const NAME: &str = "cpu";

/// Priority of the CPU when the runtime picks a default device: below
/// every accelerator.
pub const PRIORITY: i32 = 0;

/// The provider the runtime registers for the CPU.
pub fn provider() -> BackendProvider {
    BackendProvider::new(NAME, PRIORITY, || Ok(Arc::new(CpuBackend::new()) as Arc<dyn Backend>))
}

/// The CPU backend (one device).
pub struct CpuBackend {
    device: Device,
    memory: Arc<HostMemory>,
    properties: DeviceProperties,
    capabilities: Capabilities,
    stream: Stream,
}

/// The CPU's only stream: work runs when it is enqueued.
struct ImmediateStream;

/// The CPU's events: complete when recorded, since every op has finished
/// when its call returns; the time of recording is the time of completion.
struct CompletedEvent(std::time::Instant);

impl CpuBackend {
    pub fn new() -> CpuBackend {
        let device = Device::cpu();
        let properties = properties::host_properties();
        let capabilities = properties::host_capabilities(&properties);
        CpuBackend {
            device,
            memory: Arc::new(HostMemory::default()),
            properties,
            capabilities,
            stream: Stream::new(device, Arc::new(ImmediateStream)),
        }
    }

    fn check_index(&self, index: usize) -> Result<()> {
        if index == 0 {
            Ok(())
        } else {
            Err(Error::DeviceUnavailable {
                device: format!("{NAME}:{index}"),
                reason: "the cpu backend has exactly one device".into(),
                available: vec![self.device],
            })
        }
    }

    fn check_stream(&self, stream: &Stream) -> Result<()> {
        if stream.downcast::<ImmediateStream>().is_some() {
            Ok(())
        } else {
            Err(Error::backend(NAME, format!("{stream:?} is not a cpu stream")))
        }
    }

    /// The host view of a buffer this backend allocated or mapped.
    #[inline]
    fn host(&self, buffer: &Buffer) -> Result<HostView> {
        let allocation = buffer.allocation().as_any();
        if let Some(own) = allocation.downcast_ref::<HostAllocation>() {
            return Ok(own.view());
        }
        if let Some(mapped) = allocation.downcast_ref::<MappedHost>() {
            return Ok(mapped.view());
        }
        match allocation.downcast_ref::<ForeignHost>() {
            Some(lent) => Ok(HostView::lent(lent)),
            None => Err(not_host_memory(buffer)),
        }
    }

    fn host_tensor<'a>(&self, t: &TensorRef<'a>) -> Result<HostTensor<'a>> {
        let alloc = self.host(t.buffer)?;
        let ptr = alloc.ptr_at(t.offset).ok_or_else(|| {
            Error::backend(
                NAME,
                format!("offset {} is outside a buffer of {} bytes", t.offset, t.buffer.len()),
            )
        })?;
        Ok(HostTensor {
            data: ptr,
            dtype: t.dtype,
            shape: t.shape,
            strides: t.strides,
        })
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        CpuBackend::new()
    }
}

/// The error for a buffer the host kernels cannot reach; kept out of line
/// so the per-operand lookup stays small.
#[cold]
fn not_host_memory(buffer: &Buffer) -> Error {
    Error::backend(
        NAME,
        format!("{buffer:?} was neither allocated, mapped nor lent to the cpu backend"),
    )
}

impl Backend for CpuBackend {
    fn name(&self) -> &str {
        NAME
    }

    fn device_count(&self) -> usize {
        1
    }

    fn properties(&self, index: usize) -> Result<DeviceProperties> {
        self.check_index(index)?;
        Ok(self.properties.clone())
    }

    fn capabilities(&self, index: usize) -> Result<Capabilities> {
        self.check_index(index)?;
        Ok(self.capabilities.clone())
    }

    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        index == 0 && anydev_kernels::supports(op, dtype)
    }

    fn memory_kinds(&self, _index: usize) -> Vec<MemoryKind> {
        vec![MemoryKind::System]
    }

    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>> {
        self.check_index(index)?;
        if kind != MemoryKind::System {
            return Err(Error::invalid_argument(
                "allocate",
                format!("the cpu backend allocates only system memory, not {kind}"),
            ));
        }
        let counter = self.memory.counter();
        let out_of_memory = |in_use| Error::OutOfMemory {
            device: self.device,
            requested: bytes,
            in_use,
            limit: counter.limit(),
        };
        let reservation = counter.reserve(bytes).map_err(out_of_memory)?;
        let Some(alloc) = HostAllocation::new(bytes, Arc::clone(&self.memory)) else {
            // Given back first, so the error reports the bytes in use without it.
            drop(reservation);
            return Err(out_of_memory(counter.stats().in_use));
        };
        reservation.commit();
        Ok(Box::new(alloc))
    }

    /// The host uses any memory with a host address in place: pinned,
    /// managed and host-accessible device memory of other devices.
    fn map_buffer(&self, index: usize, source: &Buffer) -> Result<Box<dyn Allocation>> {
        self.check_index(index)?;
        let mapped = MappedHost::of(source).ok_or_else(|| {
            Error::backend(
                NAME,
                format!("{source:?} has no host address, so the host cannot use it in place"),
            )
        })?;
        Ok(Box::new(mapped))
    }

    fn memory_stats(&self, index: usize) -> Result<MemoryStats> {
        self.check_index(index)?;
        Ok(self.memory.stats())
    }

    fn reset_peak(&self, index: usize) -> Result<()> {
        self.check_index(index)?;
        self.memory.counter().reset_peak();
        Ok(())
    }

    fn empty_cache(&self, index: usize) -> Result<()> {
        self.check_index(index)?;
        self.memory.release_cache();
        Ok(())
    }

    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<std::time::Duration> {
        let time = |event: &Event| match event.downcast::<CompletedEvent>() {
            Some(CompletedEvent(at)) => Ok(*at),
            None => Err(Error::backend(NAME, format!("{event:?} is not a cpu event"))),
        };
        Ok(time(end)?.saturating_duration_since(time(start)?))
    }

    fn default_stream(&self, index: usize) -> Result<Stream> {
        self.check_index(index)?;
        Ok(self.stream.clone())
    }

    fn create_stream(&self, index: usize) -> Result<Stream> {
        self.check_index(index)?;
        Ok(Stream::new(self.device, Arc::new(ImmediateStream)))
    }

    fn record_event(&self, stream: &Stream) -> Result<Event> {
        self.check_stream(stream)?;
        Ok(Event::new(
            self.device,
            Arc::new(CompletedEvent(std::time::Instant::now())),
        ))
    }

    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()> {
        self.check_stream(stream)?;
        self.query_event(event).map(|_| ())
    }

    fn query_event(&self, event: &Event) -> Result<bool> {
        match event.downcast::<CompletedEvent>() {
            Some(_) => Ok(true),
            None => Err(Error::backend(NAME, format!("{event:?} is not a cpu event"))),
        }
    }

    fn synchronize_event(&self, event: &Event) -> Result<()> {
        self.query_event(event).map(|_| ())
    }

    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        self.check_stream(stream)
    }

    fn synchronize(&self, index: usize) -> Result<()> {
        self.check_index(index)
    }

    fn copy_from_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()> {
        self.check_stream(stream)?;
        self.host(dst)?.write(dst_offset, src);
        Ok(())
    }

    fn copy_to_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        self.check_stream(stream)?;
        self.host(src)?.read(src_offset, dst);
        Ok(())
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
        self.check_stream(stream)?;
        HostView::copy(self.host(src)?, src_offset, self.host(dst)?, dst_offset, len);
        Ok(())
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
        self.check_stream(stream)?;
        self.host(dst)?.fill(offset, len, pattern);
        Ok(())
    }

    fn run_kernel(
        &self,
        stream: &Stream,
        body: &KernelBody<'_>,
        inputs: &[TensorRef<'_>],
        outputs: &[TensorRef<'_>],
        attrs: &Attrs,
    ) -> Result<()> {
        self.check_stream(stream)?;
        let KernelBody::Host(kernel) = body else {
            return Err(Error::backend(NAME, format!("runs no {} kernels", body.form())));
        };
        // Outputs are written through exclusive slices: none may share a
        // buffer with any other operand (the array layer allocates them
        // fresh; this keeps a misbehaving caller from aliasing them).
        for (i, out) in outputs.iter().enumerate() {
            let shared = inputs
                .iter()
                .chain(&outputs[..i])
                .any(|t| std::ptr::eq(t.buffer, out.buffer));
            if shared {
                return Err(Error::backend(
                    NAME,
                    "an extension kernel's output shares a buffer with another operand",
                ));
            }
        }
        let span = |t: &TensorRef<'_>| -> Result<(HostView, usize, usize)> {
            let len = t.shape.iter().product::<usize>() * t.dtype.size();
            Ok((self.host(t.buffer)?, t.offset, len))
        };
        let outside = || Error::backend(NAME, "an extension kernel's operand lies outside its buffer");
        let ins: Vec<_> = inputs.iter().map(span).collect::<Result<_>>()?;
        let outs: Vec<_> = outputs.iter().map(span).collect::<Result<_>>()?;
        let mut host_inputs = Vec::with_capacity(ins.len());
        for (t, (view, offset, len)) in inputs.iter().zip(&ins) {
            // SAFETY: inputs are only read during the call, and no output
            // shares their buffers (checked above).
            let bytes = unsafe { view.bytes(*offset, *len) }.ok_or_else(outside)?;
            host_inputs.push(ExtTensor {
                dtype: t.dtype,
                shape: t.shape,
                bytes,
            });
        }
        let mut host_outputs = Vec::with_capacity(outs.len());
        for (t, (view, offset, len)) in outputs.iter().zip(&outs) {
            // SAFETY: each output is a buffer of its own (checked above),
            // so this is the only reference to its bytes during the call.
            let bytes = unsafe { view.bytes_mut(*offset, *len) }.ok_or_else(outside)?;
            host_outputs.push(ExtTensorMut {
                dtype: t.dtype,
                shape: t.shape,
                bytes,
            });
        }
        kernel(&host_inputs, &mut host_outputs, attrs)
    }

    fn execute_unchecked(&self, _: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        self.check_stream(stream)?;
        let host_op = op.try_map(|t| self.host_tensor(t))?;
        // SAFETY: every operand points into a live allocation of this backend
        // (the buffers are borrowed for the whole call), and `Backend::execute`
        // (whose `Checked` proof this call holds) has verified that each
        // operand's shape and strides stay inside its buffer and that the
        // output overlaps no input.
        let result = unsafe { anydev_kernels::execute(&host_op) };
        result.map_err(|e| match e {
            KernelError::Unsupported { op, dtype } => Error::Unsupported {
                op: op.name().to_owned(),
                dtype,
                device: self.device,
            },
            other => Error::backend(NAME, other.to_string()),
        })
    }
}
