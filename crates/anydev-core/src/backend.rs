//! The interface every backend implements: the built-in CPU, CUDA and wgpu
//! backends, and the adapter that puts a plugin library behind it.
//!
//! Backends know no arrays. They see devices by index, raw allocations,
//! streams, events, and primitive op calls ([`anydev_ops::Op`]) whose
//! operands are [`TensorRef`]s that the array layer has already validated.

use crate::capability::Capabilities;
use crate::extension::{Attrs, KernelBody, TensorMeta};
use crate::memory::{Allocation, Buffer, ForeignDevice, MemoryKind, MemoryStats};
use crate::stream::{Event, Stream};
use crate::{DType, Device, DeviceKind, Error, Result};
use anydev_ops::{Op, OpCode, TensorDType};
use serde::Serialize;
use std::marker::PhantomData;
use std::sync::Arc;

/// Descriptive properties of one device, for people and for `anydev info`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceProperties {
    /// Marketing or model name (`"AMD EPYC 7B13"`, `"NVIDIA H100"`).
    pub name: String,
    pub vendor: String,
    /// Memory the device can allocate from, in bytes.
    pub memory_bytes: u64,
    /// Driver or runtime identification (`"CUDA 12.4"`, `"llvmpipe"`).
    pub driver: String,
    /// Version of the backend or plugin serving the device.
    pub version: String,
}

/// A strided operand of an op call: a view of `buffer` starting `offset`
/// bytes in, with `shape` and `strides` counted in elements of `dtype`.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    pub buffer: &'a Buffer,
    pub offset: usize,
    pub dtype: DType,
    pub shape: &'a [usize],
    pub strides: &'a [isize],
}

impl TensorDType for TensorRef<'_> {
    fn dtype(&self) -> DType {
        self.dtype
    }
}

/// The default-device priority of a backend whose devices are all
/// emulated in software (capability `software`): below the CPU backend's
/// 0, since the host's cores run the same work faster without the
/// emulation. A plugin manifest's explicit `priority` still wins.
pub const SOFTWARE_PRIORITY: i32 = -10;

/// Proof, passed to the `_unchecked` hooks of [`Backend`], that the checked
/// method calling them has validated its arguments. Only this module makes
/// one, and a hook cannot keep it past its call, so an implementation may
/// rely on those checks for memory safety while the hooks stay safe fns.
pub struct Checked<'a>(PhantomData<&'a ()>);

/// One backend: a family of devices of one kind (`cpu`, `cuda`, `sim`).
///
/// Every method that names a device takes its index within this backend;
/// the runtime has checked that it is below [`Backend::device_count`].
/// Methods that enqueue work take a [`Stream`]; they may return before the
/// work completes, except where stated. Nothing here may panic on bad
/// input: return an [`Error`].
///
/// The copies, [`Backend::fill`] and [`Backend::execute`] are provided:
/// they validate their arguments once, the same way for every backend, and
/// then call a required `_unchecked` hook ([`Backend::copy_to_host_unchecked`]
/// and so on), whose documentation says what it may assume. Implement the
/// hooks and leave the checked methods as they are.
pub trait Backend: Send + Sync + 'static {
    /// The device kind this backend declares (`"cpu"`, `"sim"`).
    fn name(&self) -> &str;

    /// A default-device priority decided at initialisation, replacing the
    /// provider's. A backend returns one when what it found changes how it
    /// should rank: a GPU backend whose only adapters are software renderers
    /// should not outrank the host CPU. It can only lower the provider's
    /// (a higher value is capped), so the runtime can pick the default
    /// device without starting backends that could not win.
    fn priority(&self) -> Option<i32> {
        None
    }

    /// Number of devices. Never fails: a backend that could not find any
    /// devices is reported by its provider as unavailable instead.
    fn device_count(&self) -> usize;

    fn properties(&self, index: usize) -> Result<DeviceProperties>;

    /// The device's capabilities, with the standard keys of
    /// [`crate::capability::keys`] present.
    fn capabilities(&self, index: usize) -> Result<Capabilities>;

    /// Whether the device implements `op` for `dtype` (see
    /// [`Op::support_dtype`]). The array layer asks before every dispatch.
    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool;

    /// The memory kinds `allocate` accepts on this device.
    fn memory_kinds(&self, index: usize) -> Vec<MemoryKind>;

    /// Allocates `bytes` of memory of `kind`, aligned to at least 256 bytes.
    /// Out of memory is [`Error::OutOfMemory`], never an abort.
    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>>;

    fn memory_stats(&self, index: usize) -> Result<MemoryStats>;

    /// Starts device `index`'s peak again from the bytes in use now. The
    /// default refuses: a backend whose counts it cannot reset says so.
    fn reset_peak(&self, index: usize) -> Result<()> {
        Err(Error::FeatureUnsupported {
            feature: "resetting the memory peak".into(),
            device: Device::new(DeviceKind::parse(self.name())?, index),
            reason: "its backend keeps its peak since start-up".into(),
        })
    }

    /// Gives memory device `index` caches for reuse back to the system
    /// (PyTorch's `empty_cache`); memory in use is untouched. The default
    /// caches nothing, so has nothing to give.
    fn empty_cache(&self, index: usize) -> Result<()> {
        let _ = index;
        Ok(())
    }

    /// The device time from `start` to `end`, two events of one device
    /// recorded with [`Backend::record_timed_event`], both completed.
    /// Devices whose `event_timing` capability is true implement it; the
    /// default refuses.
    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<std::time::Duration> {
        let _ = end;
        Err(no_event_timing(start.device()))
    }

    /// Makes `source`, memory another device owns and that device `index`
    /// reaches (the table in [`crate::reach`]), usable by ops on device
    /// `index` without copying. The returned allocation must not free the
    /// memory: the [`Buffer`] mapping keeps `source` alive instead. The
    /// default refuses; the runtime asks only when the capabilities say
    /// the memory is reachable, so a refusal is an error, not a copy.
    fn map_buffer(&self, index: usize, source: &Buffer) -> Result<Box<dyn Allocation>> {
        Err(Error::backend(
            self.name(),
            format!(
                "device {index} of {} cannot use {:?} without copying",
                self.name(),
                source
            ),
        ))
    }

    /// Takes `memory`, device memory that another library of this
    /// backend's platform allocated (a CUDA tensor handed over by DLPack),
    /// as memory of device `index`, without copying, and says which kind it
    /// is. The backend checks the address: its platform's memory, usable
    /// by device `index`, the whole range inside one allocation. The
    /// allocation returned frees nothing; it drops `memory`'s owner once
    /// the device's work on it is done. The default refuses, for backends
    /// without device addresses to share.
    fn adopt_device_memory(&self, index: usize, memory: ForeignDevice) -> Result<(Box<dyn Allocation>, MemoryKind)> {
        drop(memory);
        Err(Error::FeatureUnsupported {
            feature: "device memory of another library".into(),
            device: Device::new(DeviceKind::parse(self.name())?, index),
            reason: "its backend has no device addresses to share".into(),
        })
    }

    /// Makes device `index`'s default stream wait for the work queued so
    /// far on its platform's default stream (CUDA's legacy stream), and
    /// says whether there is one. A DLPack consumer asks the producer to
    /// order its pending work before that stream (`stream=1`), then calls
    /// this, so the producer's writes come before anydev's work; every
    /// other stream of the device follows the default one. `Ok(false)`
    /// where the platform has no such stream.
    fn follow_platform_stream(&self, index: usize) -> Result<bool> {
        let _ = index;
        Ok(false)
    }

    /// Whether a free of memory of device `index` is ordered after the work
    /// this backend has already queued on `stream`: a buffer dropped while
    /// that work still uses it is then released at once, with no event
    /// recorded for the use. A plugin says so for all its streams with the
    /// capability [`keys::STREAM_ORDERED_FREE`].
    fn frees_in_stream_order(&self, _index: usize, _stream: &Stream) -> bool {
        false
    }

    /// Frees `allocation` once the `pending` events, recorded after the
    /// last work of this backend that uses it, have completed. The default
    /// waits for them here; a backend with a stream-ordered allocator
    /// overrides it to return at once. A wait that fails leaks the memory
    /// rather than free it under a device that may still use it.
    fn release(&self, allocation: Box<dyn Allocation>, pending: Vec<Event>) {
        if pending.iter().all(|event| self.synchronize_event(event).is_ok()) {
            drop(allocation);
        } else {
            std::mem::forget(allocation);
        }
    }

    /// The stream used when the caller names none.
    fn default_stream(&self, index: usize) -> Result<Stream>;

    fn create_stream(&self, index: usize) -> Result<Stream>;

    /// Records an event after all work enqueued so far on `stream`.
    fn record_event(&self, stream: &Stream) -> Result<Event>;

    /// Records an event, as [`Backend::record_event`], that
    /// [`Backend::event_elapsed`] can time. The ordering rules record many
    /// events and time none, so backends whose timed events cost more
    /// (CUDA's carry a timestamp, wgpu's a query) make them only here; the
    /// default records a plain event.
    fn record_timed_event(&self, stream: &Stream) -> Result<Event> {
        self.record_event(stream)
    }

    /// Makes later work on `stream` wait until `event` completes.
    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()>;

    /// Whether `event` has completed, without blocking.
    fn query_event(&self, event: &Event) -> Result<bool>;

    /// Blocks the host until `event` completes.
    fn synchronize_event(&self, event: &Event) -> Result<()>;

    /// Blocks the host until all work on `stream` completes.
    fn synchronize_stream(&self, stream: &Stream) -> Result<()>;

    /// Blocks the host until all work on the device completes.
    fn synchronize(&self, index: usize) -> Result<()>;

    /// Starts moving `len` bytes of managed memory at `offset` in `buffer`
    /// to device `to` (a `cpu` device: to the host), in `stream`'s order,
    /// so that work there does not fault its pages in. A hint: the default,
    /// for devices whose `managed_prefetch` capability is false, does
    /// nothing. Called only for `Managed` buffers of this backend.
    fn prefetch(&self, stream: &Stream, buffer: &Buffer, offset: usize, len: usize, to: Device) -> Result<()> {
        let _ = (stream, buffer, offset, len, to);
        Ok(())
    }

    /// Tells the backend how `len` bytes of managed memory at `offset` in
    /// `buffer` will be used. A hint, like [`Backend::prefetch`]; the
    /// default does nothing.
    fn advise(&self, buffer: &Buffer, offset: usize, len: usize, advice: crate::memory::MemoryAdvice) -> Result<()> {
        let _ = (buffer, offset, len, advice);
        Ok(())
    }

    /// Releases what the backend holds outside the process's memory (a
    /// plugin's context) because the process is exiting
    /// ([`crate::Runtime::shutdown`]); arrays may still be live, and later
    /// calls may fail. The default has nothing to release.
    fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    /// Copies host bytes into `dst` at `dst_offset`. Returns once `src` may
    /// be reused (the copy into device memory may still be in flight).
    ///
    /// Checks that the destination range lies inside `dst`, then calls
    /// [`Backend::copy_from_host_unchecked`].
    fn copy_from_host(&self, stream: &Stream, src: &[u8], dst: &Buffer, dst_offset: usize) -> Result<()> {
        check_range("copy_from_host", dst, dst_offset, src.len())?;
        self.copy_from_host_unchecked(Checked(PhantomData), stream, src, dst, dst_offset)
    }

    /// Copies `dst.len()` bytes from `src` at `src_offset` to the host.
    /// Returns once `dst` holds the data.
    ///
    /// Checks that the source range lies inside `src`, then calls
    /// [`Backend::copy_to_host_unchecked`].
    fn copy_to_host(&self, stream: &Stream, src: &Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        check_range("copy_to_host", src, src_offset, dst.len())?;
        self.copy_to_host_unchecked(Checked(PhantomData), stream, src, src_offset, dst)
    }

    /// Copies `len` bytes between two buffers of this backend, which may
    /// belong to different devices of it (a peer copy).
    ///
    /// Checks that both ranges lie inside their buffers, then calls
    /// [`Backend::copy_between_unchecked`].
    fn copy_between(
        &self,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        check_range("copy_between", src, src_offset, len)?;
        check_range("copy_between", dst, dst_offset, len)?;
        self.copy_between_unchecked(Checked(PhantomData), stream, src, src_offset, dst, dst_offset, len)
    }

    /// Fills `len` bytes of `dst` from `offset` with repetitions of
    /// `pattern`.
    ///
    /// Checks that `pattern` is non-empty, that `len` is a multiple of its
    /// length and that the range lies inside `dst`, then calls
    /// [`Backend::fill_unchecked`].
    fn fill(&self, stream: &Stream, dst: &Buffer, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        check_fill(len, pattern)?;
        check_range("fill", dst, offset, len)?;
        self.fill_unchecked(Checked(PhantomData), stream, dst, offset, len, pattern)
    }

    /// Enqueues one primitive op.
    ///
    /// Checks the operands with [`check_operands`] (each stays inside its
    /// buffer, the output overlaps no input), then calls
    /// [`Backend::execute_unchecked`].
    fn execute(&self, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        check_operands(op)?;
        self.execute_unchecked(Checked(PhantomData), stream, op)
    }

    /// [`Backend::copy_from_host`] once the range is known to be valid:
    /// `dst_offset + src.len()` is at most `dst.len()`. The stream and the
    /// buffer's owner are not checked yet.
    fn copy_from_host_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()>;

    /// [`Backend::copy_to_host`] once the range is known to be valid:
    /// `src_offset + dst.len()` is at most `src.len()`. The stream and the
    /// buffer's owner are not checked yet.
    fn copy_to_host_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<()>;

    /// [`Backend::copy_between`] once both ranges are known to be valid:
    /// `len` bytes from each offset lie inside its buffer. The stream and
    /// the buffers' owners are not checked yet.
    // `copy_between`'s arguments and the proof: bundling them would only
    // move the same fields into a struct every backend unpacks.
    #[allow(clippy::too_many_arguments)]
    fn copy_between_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()>;

    /// [`Backend::fill`] once the arguments are known to be valid: `pattern`
    /// is non-empty, `len` is a multiple of its length and the range lies
    /// inside `dst`. The stream and the buffer's owner are not checked yet.
    fn fill_unchecked(
        &self,
        checked: Checked<'_>,
        stream: &Stream,
        dst: &Buffer,
        offset: usize,
        len: usize,
        pattern: &[u8],
    ) -> Result<()>;

    /// [`Backend::execute`] once the operands are known to be valid: every
    /// operand's shape and strides stay inside its buffer and the output
    /// overlaps no input, so a backend may access them through raw
    /// pointers. Their buffers' owners and the stream are not checked yet.
    fn execute_unchecked(&self, checked: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()>;

    /// Enqueues one kernel of an extension op (design section 11). The
    /// array layer has validated the call: every operand is contiguous from
    /// element 0 of its buffer, and the outputs are fresh buffers distinct
    /// from each other and from every input. A backend runs the forms of
    /// code it knows (host functions on the CPU, WGSL on wgpu) and refuses
    /// the others, which is the default.
    fn run_kernel(
        &self,
        stream: &Stream,
        body: &KernelBody<'_>,
        inputs: &[TensorRef<'_>],
        outputs: &[TensorRef<'_>],
        attrs: &Attrs,
    ) -> Result<()> {
        let _ = (stream, inputs, outputs, attrs);
        Err(Error::backend(self.name(), format!("runs no {} kernels", body.form())))
    }

    /// The extension ops device `index` implements itself (a plugin's
    /// list, ABI 1.4; the wgpu backend's `linalg` factorizations, which
    /// need a workspace no registered kernel has), run through
    /// [`KernelBody::Device`] when its kind has no registered kernel. The
    /// default is none: most kernels are registered per kind instead.
    fn extension_ops(&self, index: usize) -> Vec<String> {
        let _ = index;
        Vec::new()
    }

    /// The collective library the backend's devices use between processes
    /// (`"nccl"`, a plugin's own), when it has one; `None`, the default,
    /// leaves moving its arrays between processes to the caller (MPI with
    /// host staging). See [`crate::collective`].
    fn collectives(&self) -> Option<String> {
        None
    }

    /// The id of a new communicator, to be carried to every rank's
    /// [`Backend::comm_init`]. The default refuses.
    fn comm_id(&self) -> Result<Vec<u8>> {
        Err(crate::collective::no_collectives(self.name()))
    }

    /// Joins a communicator on device `index`; returns once every rank
    /// has joined, or fails after `init.timeout`. The default refuses.
    fn comm_init(
        &self,
        index: usize,
        init: &crate::collective::CommInit<'_>,
    ) -> Result<Box<dyn crate::collective::DeviceComm>> {
        let _ = (index, init);
        Err(crate::collective::no_collectives(self.name()))
    }

    /// Whether device `index` runs its own implementation of `op` (one of
    /// [`Backend::extension_ops`]) for inputs and outputs of these dtypes
    /// and shapes and these attributes.
    fn extension_supported(
        &self,
        index: usize,
        op: &str,
        inputs: &[TensorMeta],
        outputs: &[TensorMeta],
        attrs: &Attrs,
    ) -> Result<bool> {
        let _ = (index, op, inputs, outputs, attrs);
        Ok(false)
    }
}

/// The error for timing events on `device`, which does not time them.
pub fn no_event_timing(device: Device) -> Error {
    Error::FeatureUnsupported {
        feature: "event timing".into(),
        device,
        reason: "its \"event_timing\" capability is false".into(),
    }
}

/// Device `index` of a backend of `kind` whose devices are `devices`, or
/// the `DeviceUnavailable` error that names the ones it has.
pub fn device_at<T>(devices: &[T], kind: DeviceKind, index: usize) -> Result<&T> {
    devices.get(index).ok_or_else(|| Error::DeviceUnavailable {
        device: Device::new(kind, index).to_string(),
        reason: format!("the {kind} backend has {} device(s)", devices.len()),
        available: (0..devices.len()).map(|i| Device::new(kind, i)).collect(),
    })
}

/// Allocates through `backend` and wraps the allocation as a [`Buffer`]
/// that remembers its device, kind and allocator.
pub fn allocate(backend: &Arc<dyn Backend>, device: Device, bytes: usize, kind: MemoryKind) -> Result<Buffer> {
    let allocation = backend.allocate(device.index(), bytes, kind)?;
    Ok(Buffer::new(device, bytes, kind, Arc::clone(backend), allocation))
}

/// Checks that `len` bytes from `offset` lie inside `buffer`, so a bad range
/// is an error, not corruption. The copy and fill methods of [`Backend`]
/// call it before their `_unchecked` hooks.
pub fn check_range(op: &str, buffer: &Buffer, offset: usize, len: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= buffer.len() => Ok(()),
        _ => Err(Error::invalid_argument(
            op,
            format!(
                "byte range {offset}..{} is outside a buffer of {} bytes on {}",
                offset as u128 + len as u128,
                buffer.len(),
                buffer.device()
            ),
        )),
    }
}

/// Fails unless `len` bytes are a whole number of repetitions of `pattern`
/// (a non-empty one), as [`Backend::fill`] requires: it checks this before
/// [`Backend::fill_unchecked`] writes, since a partial last repetition would
/// leave bytes of the range unwritten or write past it.
pub fn check_fill(len: usize, pattern: &[u8]) -> Result<()> {
    if pattern.is_empty() || !len.is_multiple_of(pattern.len()) {
        return Err(Error::invalid_argument(
            "fill",
            format!("{len} bytes is not a whole number of {}-byte patterns", pattern.len()),
        ));
    }
    Ok(())
}

/// The byte range `[start, end)` of `buffer` that a strided operand can
/// touch, or an error when its shape, strides or extent are invalid.
pub fn byte_extent(op: &str, t: &TensorRef<'_>) -> Result<(usize, usize)> {
    if t.shape.len() != t.strides.len() {
        return Err(Error::invalid_argument(
            op,
            format!("operand has {} dims but {} strides", t.shape.len(), t.strides.len()),
        ));
    }
    let size = t.dtype.size() as i128;
    let (mut low, mut high) = (0i128, 0i128);
    for (&n, &s) in t.shape.iter().zip(t.strides) {
        if n == 0 {
            return Ok((t.offset, t.offset));
        }
        let reach = (n as i128 - 1) * s as i128;
        if reach < 0 {
            low += reach;
        } else {
            high += reach;
        }
    }
    let start = t.offset as i128 + low * size;
    let end = t.offset as i128 + (high + 1) * size;
    if start < 0 || end > t.buffer.len() as i128 {
        return Err(Error::invalid_argument(
            op,
            format!(
                "operand of shape {:?} and strides {:?} at byte offset {} reaches outside its buffer of {} bytes",
                t.shape,
                t.strides,
                t.offset,
                t.buffer.len()
            ),
        ));
    }
    Ok((start as usize, end as usize))
}

/// Checks an op call before a backend touches memory: every operand stays
/// inside its buffer, and the output overlaps no input. [`Backend::execute`]
/// calls this before [`Backend::execute_unchecked`], so a backend that
/// accesses memory through raw pointers sees a malformed call as an error
/// rather than undefined behaviour.
pub fn check_operands(op: &Op<'_, TensorRef<'_>>) -> Result<()> {
    let name = op.code().name();
    let out = op.output();
    let (out_start, out_end) = byte_extent(name, out)?;
    for input in op.inputs() {
        let (start, end) = byte_extent(name, input)?;
        let same_buffer = std::ptr::eq(input.buffer, out.buffer);
        if same_buffer && start < out_end && out_start < end {
            return Err(Error::invalid_argument(
                name,
                "the output overlaps an input; write to a fresh array",
            ));
        }
    }
    Ok(())
}
