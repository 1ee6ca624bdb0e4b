//! A loaded plugin as an ordinary [`Backend`].
//!
//! Buffers, streams and events wrap the plugin's handles and give them
//! back through the table when dropped; each holds the [`Instance`], so the
//! plugin is shut down only after the last of them. Errors from the plugin
//! become the core's [`Error`]s: unimplemented ops are `Unsupported`, out
//! of memory is `OutOfMemory` with the device's accounting, the rest
//! `Plugin` errors naming the plugin and its library.

use super::instance::{CallError, Instance};
use super::support::SupportCache;
use crate::backend::{byte_extent, Backend, Checked, DeviceProperties, TensorRef, SOFTWARE_PRIORITY};
use crate::capability::{keys, CapValue, Capabilities};
use crate::extension::{Attrs, KernelBody, TensorMeta};
use crate::memory::{Allocation, Buffer, MemoryKind, MemoryStats};
use crate::stream::{Event, Stream};
use crate::{DType, Device, DeviceKind, Error, Result};
use anydev_ops::{Op, OpCode, TensorDType};
use anydev_plugin_abi::*;
use anydev_plugin_codec::{self as codec, ErrorCode, ExtensionCall, PluginError};
use std::any::Any;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Who the plugin is, for error messages.
#[derive(Clone, Debug)]
pub struct Identity {
    pub name: String,
    pub library: PathBuf,
    /// Whether a manifest chose the plugin's default-device priority.
    pub priority_set: bool,
}

/// What the backend and every handle it gave out share.
pub(super) struct Shared {
    pub(super) instance: Instance,
    pub(super) identity: Identity,
}

/// One allocation of a plugin device, or its handle to memory it imported.
struct PluginBuffer {
    handle: *mut AnydevBuffer,
    /// Where the host may dereference the memory, when it may.
    host_ptr: *mut u8,
    shared: Arc<Shared>,
}

/// A plugin stream (NULL when the plugin has no stream calls).
pub(super) struct PluginStream {
    pub(super) handle: *mut AnydevStream,
    shared: Arc<Shared>,
}

/// A plugin event, or (NULL) an event of a plugin without stream and
/// event calls, which the host makes complete when it is recorded.
struct PluginEvent {
    handle: *mut AnydevEvent,
    shared: Arc<Shared>,
}

// SAFETY: the handles are plugin objects that the ABI lets any thread use;
// the values only carry them.
unsafe impl Send for PluginBuffer {}
// SAFETY: as above.
unsafe impl Sync for PluginBuffer {}
// SAFETY: as above.
unsafe impl Send for PluginStream {}
// SAFETY: as above.
unsafe impl Sync for PluginStream {}
// SAFETY: as above.
unsafe impl Send for PluginEvent {}
// SAFETY: as above.
unsafe impl Sync for PluginEvent {}

impl Allocation for PluginBuffer {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        (!self.host_ptr.is_null()).then_some(self.host_ptr)
    }
}

// Destruction failures have nobody to report to; the handles are gone either way.
impl Drop for PluginBuffer {
    fn drop(&mut self) {
        let _ = self.shared.instance.free(self.handle);
    }
}

impl Drop for PluginStream {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            let _ = self.shared.instance.stream_destroy(self.handle);
        }
    }
}

impl Drop for PluginEvent {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            let _ = self.shared.instance.event_destroy(self.handle);
        }
    }
}

impl Shared {
    /// A plugin failure as an error naming the plugin and its library.
    fn plugin_error(&self, e: CallError) -> Error {
        let id = &self.identity;
        let message = match e.code {
            ErrorCode::Unimplemented => e.message,
            code => format!("{} failed ({}): {}", e.call, code.name(), e.message),
        };
        Error::Plugin {
            name: id.name.clone(),
            path: id.library.display().to_string(),
            message,
        }
    }

    /// Translates a call error that is not about a particular op.
    pub(super) fn error(&self, e: CallError) -> Error {
        match e.code {
            ErrorCode::InvalidArgument => Error::invalid_argument(e.call, e.message),
            _ => self.plugin_error(e),
        }
    }

    /// The plugin handle behind a stream of this backend.
    pub(super) fn stream<'a>(self: &Arc<Shared>, stream: &'a Stream) -> Result<&'a PluginStream> {
        stream
            .downcast::<PluginStream>()
            .filter(|s| Arc::ptr_eq(&s.shared, self))
            .ok_or_else(|| {
                Error::backend(
                    &self.identity.name,
                    format!("{stream:?} is not a stream of this plugin"),
                )
            })
    }

    fn event<'a>(self: &Arc<Shared>, event: &'a Event) -> Result<&'a PluginEvent> {
        event
            .downcast::<PluginEvent>()
            .filter(|e| Arc::ptr_eq(&e.shared, self))
            .ok_or_else(|| Error::backend(&self.identity.name, format!("{event:?} is not an event of this plugin")))
    }

    pub(super) fn buffer(self: &Arc<Shared>, buffer: &Buffer) -> Result<*mut AnydevBuffer> {
        buffer
            .downcast::<PluginBuffer>()
            .filter(|b| Arc::ptr_eq(&b.shared, self))
            .map(|b| b.handle)
            .ok_or_else(|| {
                Error::backend(
                    &self.identity.name,
                    format!("{buffer:?} was not allocated by this plugin"),
                )
            })
    }
}

/// A free waiting for the plugin's streams: the buffer goes back once every
/// event recorded after its last use has completed.
struct DeferredFree {
    _allocation: Box<dyn Allocation>,
    pending: Vec<Event>,
}

/// The backend over one initialised plugin.
pub struct PluginBackend {
    shared: Arc<Shared>,
    kind: DeviceKind,
    default_streams: Vec<Stream>,
    /// Per device, the extension ops it implements (ABI 1.4), read at load.
    extension_ops: Vec<Vec<String>>,
    /// Per device, its `op_supported` answers.
    support: Vec<SupportCache>,
    /// Per device, whether it frees in stream order (read at load).
    stream_ordered: Vec<bool>,
    deferred: Mutex<Vec<DeferredFree>>,
}

fn memory_kind_code(kind: MemoryKind) -> u32 {
    match kind {
        MemoryKind::Device => ANYDEV_MEMORY_DEVICE,
        MemoryKind::HostPinned => ANYDEV_MEMORY_HOST_PINNED,
        MemoryKind::Managed => ANYDEV_MEMORY_MANAGED,
        MemoryKind::System => ANYDEV_MEMORY_SYSTEM,
    }
}

const MEMORY_KINDS: [MemoryKind; 4] = [
    MemoryKind::Device,
    MemoryKind::HostPinned,
    MemoryKind::Managed,
    MemoryKind::System,
];

impl PluginBackend {
    /// Wraps an initialised instance; creates one default stream per device.
    pub fn new(instance: Instance, identity: Identity) -> Result<PluginBackend> {
        let kind = DeviceKind::parse(&identity.name)?;
        let shared = Arc::new(Shared { instance, identity });
        let mut backend = PluginBackend {
            shared,
            kind,
            default_streams: Vec::new(),
            extension_ops: Vec::new(),
            support: Vec::new(),
            stream_ordered: Vec::new(),
            deferred: Mutex::new(Vec::new()),
        };
        for index in 0..backend.device_count() {
            backend.support.push(SupportCache::new());
            let caps = backend.plugin_capabilities(index)?;
            backend.stream_ordered.push(caps.flag(keys::STREAM_ORDERED_FREE));
            let stream = backend.new_stream(index)?;
            backend.default_streams.push(stream);
            let ops = backend.instance().extension_ops(index).map_err(|e| backend.error(e))?;
            backend.extension_ops.push(ops);
        }
        Ok(backend)
    }

    pub(super) fn device(&self, index: usize) -> Device {
        Device::new(self.kind, index)
    }

    pub(super) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(super) fn instance(&self) -> &Instance {
        &self.shared.instance
    }

    fn plugin_error(&self, e: CallError) -> Error {
        self.shared.plugin_error(e)
    }

    pub(super) fn error(&self, e: CallError) -> Error {
        self.shared.error(e)
    }

    fn check_index(&self, index: usize) -> Result<()> {
        if index < self.device_count() {
            Ok(())
        } else {
            Err(Error::DeviceUnavailable {
                device: self.device(index).to_string(),
                reason: format!(
                    "plugin {} has {} device(s)",
                    self.shared.identity.name,
                    self.device_count()
                ),
                available: (0..self.device_count()).map(|i| self.device(i)).collect(),
            })
        }
    }

    fn device_synchronize(&self, index: usize) -> Result<()> {
        self.instance().device_synchronize(index).map_err(|e| self.error(e))
    }

    /// A copy between two buffers of the plugin for a plugin without
    /// `copy_device_to_device`: read into host memory in `stream`'s order
    /// (the read blocks, so all work ordered before the copy is done),
    /// then written on a stream of the destination's device. Another
    /// device's stream is not ordered with `stream`, so the host waits for
    /// the write there; on the same device, `stream`'s order covers it.
    fn copy_through_host(
        &self,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        let (src_handle, dst_handle) = (self.buffer(src)?, self.buffer(dst)?);
        let mut staging = vec![0u8; len];
        let read = self.stream(stream)?;
        self.instance()
            .copy_device_to_host(read.handle, src_handle, src_offset, &mut staging)
            .map_err(|e| self.error(e))?;
        let same_device = stream.device() == dst.device();
        let target = match same_device {
            true => stream.clone(),
            false => self.default_stream(dst.device().index())?,
        };
        let write = self.stream(&target)?;
        self.instance()
            .copy_host_to_device(write.handle, &staging, dst_handle, dst_offset)
            .map_err(|e| self.error(e))?;
        if !same_device {
            self.synchronize_stream(&target)?;
        }
        Ok(())
    }

    fn new_stream(&self, index: usize) -> Result<Stream> {
        self.check_index(index)?;
        let handle = self.instance().stream_create(index).map_err(|e| self.error(e))?;
        let stream = PluginStream {
            handle,
            shared: Arc::clone(&self.shared),
        };
        Ok(Stream::new(self.device(index), Arc::new(stream)))
    }

    fn stream<'a>(&self, stream: &'a Stream) -> Result<&'a PluginStream> {
        self.shared.stream(stream)
    }

    fn event<'a>(&self, event: &'a Event) -> Result<&'a PluginEvent> {
        self.shared.event(event)
    }

    fn buffer(&self, buffer: &Buffer) -> Result<*mut AnydevBuffer> {
        self.shared.buffer(buffer)
    }

    /// Frees the deferred buffers whose uses have completed, oldest first,
    /// up to the first still in use; with `wait`, waits for all of them.
    ///
    /// Stopping there keeps each call to a query or two: work on a stream
    /// completes in order, so a free deferred behind a pending one is
    /// almost always pending too, and asking every entry on every
    /// allocation made the host's cost grow with the device's backlog.
    fn collect_deferred(&self, wait: bool) {
        let mut deferred = self.deferred.lock().unwrap_or_else(|p| p.into_inner());
        if wait {
            deferred.retain(|free| !free.pending.iter().all(|e| self.synchronize_event(e).is_ok()));
            return;
        }
        let completed = deferred
            .iter()
            .take_while(|free| free.pending.iter().all(|e| self.query_event(e).unwrap_or(false)))
            .count();
        deferred.drain(..completed);
    }

    /// Whether device `index` declares the capability `stream_ordered_free`
    /// (for every stream of the plugin).
    fn declares_stream_ordered_free(&self, index: usize) -> bool {
        self.stream_ordered.get(index).copied().unwrap_or(false)
    }

    /// Lets every free made so far happen: waits for the deferred ones and,
    /// on a device that frees in stream order, for every device of the
    /// plugin, since the work still using freed memory of this device may
    /// be queued on another (a peer copy). A queued op that failed is
    /// reported here, as by any call that waits for it.
    fn settle_frees(&self, index: usize) -> Result<()> {
        self.collect_deferred(true);
        if self.declares_stream_ordered_free(index) {
            for device in 0..self.device_count() {
                self.instance().device_synchronize(device).map_err(|e| self.error(e))?;
            }
        }
        Ok(())
    }

    fn wrap_buffer(&self, handle: *mut AnydevBuffer, host_ptr: *mut u8) -> Box<dyn Allocation> {
        Box::new(PluginBuffer {
            handle,
            host_ptr,
            shared: Arc::clone(&self.shared),
        })
    }

    fn out_of_memory(&self, index: usize, requested: usize) -> Error {
        let stats = self.memory_stats(index).unwrap_or_default();
        Error::OutOfMemory {
            device: self.device(index),
            requested,
            in_use: stats.in_use,
            limit: stats.limit,
        }
    }

    /// Capabilities as the plugin reports them, with `dtypes` and
    /// `peer_devices` turned from codes into names.
    fn plugin_capabilities(&self, index: usize) -> Result<Capabilities> {
        let mut caps = Capabilities::new();
        let kind = self.kind;
        let attrs = self
            .instance()
            .capabilities(index, |name, a, list, text| {
                let value = match a.kind {
                    ANYDEV_ATTR_BOOL => Some(CapValue::Bool(a.int_value != 0)),
                    ANYDEV_ATTR_I64 => Some(CapValue::I64(a.int_value)),
                    ANYDEV_ATTR_F64 => Some(CapValue::F64(a.float_value)),
                    ANYDEV_ATTR_STRING => Some(CapValue::Str(text)),
                    ANYDEV_ATTR_I64_LIST if name == keys::PEER_DEVICES => Some(CapValue::StrList(
                        list.iter()
                            .map(|&i| Device::new(kind, i as usize).to_string())
                            .collect(),
                    )),
                    ANYDEV_ATTR_I64_LIST => Some(CapValue::IntList(list.to_vec())),
                    _ => None, // a kind from a newer minor version
                };
                (name.to_owned(), value)
            })
            .map_err(|e| self.error(e))?;
        for (name, value) in attrs {
            match value {
                Some(CapValue::IntList(codes)) if name == keys::DTYPES => {
                    let dtypes: Vec<DType> = codes.iter().filter_map(|&c| DType::from_code(c as u32)).collect();
                    caps.set_dtypes(&dtypes);
                }
                Some(value) => {
                    caps.set(name, value);
                }
                None => {}
            }
        }
        Ok(caps)
    }
}

/// Row-major strides of `shape`, in elements: the layout every operand of
/// an extension call has (the ABI passes them even so).
fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut next = 1isize;
    for (stride, &n) in strides.iter_mut().zip(shape).rev() {
        *stride = next;
        next = next.saturating_mul(n.max(1) as isize);
    }
    strides
}

/// One operand of an extension call as the codec encodes it: the plugin's
/// buffer (NULL when only the signature is asked about), dtype and shape,
/// contiguous from byte 0.
struct ExtOperand<'a> {
    buffer: *mut AnydevBuffer,
    dtype: DType,
    shape: &'a [usize],
    strides: Vec<isize>,
}

impl<'a> ExtOperand<'a> {
    fn meta(meta: &'a TensorMeta) -> ExtOperand<'a> {
        ExtOperand {
            buffer: std::ptr::null_mut(),
            dtype: meta.dtype,
            shape: &meta.shape,
            strides: row_major(&meta.shape),
        }
    }
}

/// An extension call of `op` over `inputs` and `outputs`, with `attrs`.
fn extension_call<'a, T>(op: &'a str, inputs: Vec<T>, outputs: Vec<T>, attrs: &'a Attrs) -> ExtensionCall<'a, T> {
    ExtensionCall {
        op,
        inputs,
        outputs,
        attrs: attrs.iter().map(|(n, v)| (n, v.clone())).collect(),
    }
}

impl PluginBackend {
    /// Whether device `index` listed extension op `op`.
    fn lists(&self, index: usize, op: &str) -> bool {
        self.extension_ops
            .get(index)
            .is_some_and(|ops| ops.iter().any(|o| o == op))
    }

    /// Encodes an extension call and runs `run` on it; a call the codec
    /// cannot encode (a NUL in a name or string) is `InvalidArgument`.
    fn with_extension_call<R>(
        &self,
        call: &ExtensionCall<'_, ExtOperand<'_>>,
        run: impl FnOnce(&AnydevExtensionCall) -> std::result::Result<R, CallError>,
    ) -> Result<R> {
        let encoded = codec::encode_extension(call, |t| codec::tensor(t.buffer, 0, t.dtype, t.shape, &t.strides), run);
        match encoded {
            Ok(result) => result.map_err(|e| self.error(e)),
            Err(PluginError { message, .. }) => Err(Error::invalid_argument(call.op, message)),
        }
    }

    /// The plugin's own implementation of `op` on operands the array layer
    /// prepared; each is checked to be what the ABI promises (contiguous
    /// from byte 0, inside its buffer, outputs fresh) before the plugin
    /// sees it.
    fn run_extension<'a>(
        &self,
        stream: &Stream,
        op: &'a str,
        inputs: &[TensorRef<'a>],
        outputs: &[TensorRef<'a>],
        attrs: &'a Attrs,
    ) -> Result<()> {
        let s = self.stream(stream)?;
        let index = stream.device().index();
        if !self.lists(index, op) {
            return Err(Error::backend(
                self.name(),
                format!("{} does not implement the extension op {op}", stream.device()),
            ));
        }
        let operand = |t: &TensorRef<'a>| -> Result<ExtOperand<'a>> {
            byte_extent(op, t)?;
            let strides = row_major(t.shape);
            // An operand without elements has nothing to lay out.
            let contiguous = t.shape.contains(&0)
                || (t.offset == 0
                    && t.shape
                        .iter()
                        .zip(t.strides.iter().zip(&strides))
                        .all(|(&n, (s, r))| n == 1 || s == r));
            if !contiguous {
                return Err(Error::invalid_argument(
                    op,
                    format!(
                        "an extension operand must be contiguous from its buffer's start, not shape {:?}, strides {:?} at byte {}",
                        t.shape, t.strides, t.offset
                    ),
                ));
            }
            Ok(ExtOperand {
                buffer: self.buffer(t.buffer)?,
                dtype: t.dtype,
                shape: t.shape,
                strides,
            })
        };
        let ins: Vec<ExtOperand<'a>> = inputs.iter().map(operand).collect::<Result<_>>()?;
        let outs: Vec<ExtOperand<'a>> = outputs.iter().map(operand).collect::<Result<_>>()?;
        for (i, out) in outs.iter().enumerate() {
            let shared = ins.iter().chain(&outs[..i]).any(|other| other.buffer == out.buffer);
            if shared {
                return Err(Error::invalid_argument(
                    op,
                    "an extension op's outputs must be fresh buffers, distinct from the inputs and each other",
                ));
            }
        }
        let call = extension_call(op, ins, outs, attrs);
        let refused = self.with_extension_call(&call, |raw| {
            if !self.instance().extension_supported(index, raw)? {
                return Ok(true);
            }
            self.instance().extension_execute(s.handle, raw).map(|()| false)
        })?;
        if refused {
            return Err(self.refusal(index, op, inputs.iter().chain(outputs).map(|t| (t.dtype, t.shape))));
        }
        Ok(())
    }

    /// The error for an extension call the device refused, naming the op,
    /// the device and the signature.
    fn refusal<'a>(&self, index: usize, op: &str, operands: impl Iterator<Item = (DType, &'a [usize])>) -> Error {
        let signature: Vec<String> = operands.map(|(d, shape)| format!("{d}{shape:?}")).collect();
        Error::backend(
            self.name(),
            format!(
                "{} implements the extension op {op} but not for the operands {} (extension_supported said no)",
                self.device(index),
                signature.join(", ")
            ),
        )
    }

    fn deferred_is_empty(&self) -> bool {
        self.deferred.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }
}

impl Drop for PluginBackend {
    /// Deferred frees go back before the plugin can be shut down.
    fn drop(&mut self) {
        self.collect_deferred(true);
    }
}

impl Backend for PluginBackend {
    fn name(&self) -> &str {
        &self.shared.identity.name
    }

    /// Waits for every device's work, returns the deferred frees, then
    /// calls the plugin's `shutdown`; buffers still live are the plugin's
    /// to release, and their drops no longer reach it. Once only.
    fn shutdown(&self) -> Result<()> {
        if self.instance().is_closed() {
            return Ok(());
        }
        let waited: Result<()> = (0..self.device_count()).try_for_each(|index| self.synchronize(index));
        self.collect_deferred(true);
        let closed = self.instance().close().map_err(|e| self.error(e));
        waited.and(closed)
    }

    /// A plugin whose devices are all emulated in software (a simulator)
    /// ranks below the CPU, unless its manifest chose a priority.
    fn priority(&self) -> Option<i32> {
        if self.shared.identity.priority_set {
            return None;
        }
        let software = (0..self.device_count()).all(|index| {
            self.plugin_capabilities(index)
                .is_ok_and(|caps| caps.get(keys::SOFTWARE) == Some(&CapValue::Bool(true)))
        });
        software.then_some(SOFTWARE_PRIORITY)
    }

    fn device_count(&self) -> usize {
        self.instance().device_count()
    }

    fn properties(&self, index: usize) -> Result<DeviceProperties> {
        self.check_index(index)?;
        let raw = self.instance().properties(index).map_err(|e| self.error(e))?;
        let [name, vendor, driver, version] = Instance::property_strings(&raw);
        Ok(DeviceProperties {
            name,
            vendor,
            memory_bytes: raw.memory_bytes,
            driver,
            version,
        })
    }

    fn capabilities(&self, index: usize) -> Result<Capabilities> {
        self.check_index(index)?;
        let mut caps = self.plugin_capabilities(index)?;
        // Standard keys the plugin left out get their conservative value.
        if caps.get(keys::DTYPES).is_none() {
            let dtypes: Vec<DType> = DType::ALL
                .into_iter()
                .filter(|&d| self.supports(index, OpCode::Copy, d))
                .collect();
            caps.set_dtypes(&dtypes);
        }
        for key in [
            keys::PAGEABLE_MEMORY_ACCESS,
            keys::MANAGED_MEMORY,
            keys::CONCURRENT_MANAGED_ACCESS,
            keys::HOST_ACCESSIBLE_MEMORY,
            keys::ASYNC_EXECUTION,
            keys::SOFTWARE,
            keys::EVENT_TIMING,
            keys::STREAM_ORDERED_FREE,
        ] {
            if caps.get(key).is_none() {
                caps.set(key, CapValue::Bool(false));
            }
        }
        // The ABI has no prefetch or advice call yet, so hints never reach
        // a plugin, whatever it reports.
        caps.set(keys::MANAGED_PREFETCH, CapValue::Bool(false));
        if !self.instance().can_import() {
            // Memory the plugin cannot wrap is memory it cannot reach, so
            // the runtime must copy rather than share.
            caps.set(keys::PAGEABLE_MEMORY_ACCESS, CapValue::Bool(false));
        }
        if caps.get(keys::PEER_DEVICES).is_none() {
            caps.set(keys::PEER_DEVICES, CapValue::StrList(Vec::new()));
        }
        if caps.get(keys::COMPUTE_UNITS).is_none() {
            caps.set(keys::COMPUTE_UNITS, CapValue::I64(1));
        }
        if caps.get(keys::MAX_ALLOCATION_BYTES).is_none() {
            let memory = self.properties(index).map_or(0, |p| p.memory_bytes);
            caps.set(
                keys::MAX_ALLOCATION_BYTES,
                CapValue::I64(memory.min(i64::MAX as u64) as i64),
            );
        }
        let version = self.instance().version();
        caps.set(
            "plugin.abi_version",
            CapValue::Str(format!("{}.{}", version.major, version.minor)),
        );
        caps.set(
            "plugin.library",
            CapValue::Str(self.shared.identity.library.display().to_string()),
        );
        Ok(caps)
    }

    fn supports(&self, index: usize, op: OpCode, dtype: DType) -> bool {
        self.support.get(index).is_some_and(|cache| {
            cache.get(op, dtype, || {
                self.instance().op_supported(index, op.code(), dtype.code()).ok()
            })
        })
    }

    fn frees_in_stream_order(&self, index: usize, _stream: &Stream) -> bool {
        self.declares_stream_ordered_free(index)
    }

    fn memory_kinds(&self, index: usize) -> Vec<MemoryKind> {
        if index >= self.device_count() {
            return Vec::new();
        }
        match self.instance().memory_kinds(index) {
            Ok(mask) => MEMORY_KINDS
                .into_iter()
                .filter(|&k| mask & (1 << memory_kind_code(k)) != 0)
                .collect(),
            Err(_) => vec![MemoryKind::Device],
        }
    }

    fn allocate(&self, index: usize, bytes: usize, kind: MemoryKind) -> Result<Box<dyn Allocation>> {
        self.check_index(index)?;
        self.collect_deferred(false);
        let mut result = self.instance().allocate(index, bytes, memory_kind_code(kind));
        if matches!(&result, Err(e) if e.code == ErrorCode::OutOfMemory)
            && (!self.deferred_is_empty() || self.declares_stream_ordered_free(index))
        {
            // Frees still waiting for streams may be all that is missing.
            self.settle_frees(index)?;
            result = self.instance().allocate(index, bytes, memory_kind_code(kind));
        }
        match result {
            Ok(handle) if !handle.is_null() => {
                let host_ptr = match kind {
                    MemoryKind::Device => std::ptr::null_mut(),
                    _ => self.instance().buffer_host_pointer(handle),
                };
                Ok(self.wrap_buffer(handle, host_ptr))
            }
            Ok(_) => Err(self.plugin_error(CallError {
                call: "allocate",
                code: ErrorCode::Internal,
                message: "returned success but no buffer".into(),
            })),
            Err(e) if e.code == ErrorCode::OutOfMemory => Err(self.out_of_memory(index, bytes)),
            Err(e) => Err(self.error(e)),
        }
    }

    fn memory_stats(&self, index: usize) -> Result<MemoryStats> {
        self.check_index(index)?;
        // Report memory as it is once pending frees have happened, so the
        // numbers do not depend on how far the streams have got.
        self.settle_frees(index)?;
        let raw = self.instance().memory_stats(index).map_err(|e| self.error(e))?;
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        let known = |v: u64| (v != ANYDEV_UNKNOWN_BYTES).then(|| size(v));
        // Tables before 1.5 never wrote the fields after `limit`.
        let filled_1_5 = self.instance().version().minor >= 5;
        let in_use = size(raw.in_use);
        Ok(MemoryStats {
            in_use,
            peak: size(raw.peak),
            allocations: size(raw.allocations),
            limit: (raw.limit != ANYDEV_NO_LIMIT).then(|| size(raw.limit)),
            reserved: filled_1_5.then(|| known(raw.reserved)).flatten().unwrap_or(in_use),
            free: filled_1_5.then(|| known(raw.free)).flatten(),
            total: filled_1_5.then(|| known(raw.total)).flatten(),
        })
    }

    fn reset_peak(&self, index: usize) -> Result<()> {
        self.check_index(index)?;
        // The peak restarts from memory as it is once pending frees have
        // happened, as `memory_stats` reports it.
        self.settle_frees(index)?;
        match self.instance().memory_reset_peak(index) {
            Err(e) if e.code == ErrorCode::Unimplemented => Err(Error::FeatureUnsupported {
                feature: "resetting the memory peak".into(),
                device: self.device(index),
                reason: e.message,
            }),
            result => result.map_err(|e| self.error(e)),
        }
    }

    fn empty_cache(&self, index: usize) -> Result<()> {
        self.check_index(index)?;
        // Lets pending frees happen first, so that what the plugin caches
        // includes them.
        self.settle_frees(index)?;
        self.instance().empty_cache(index).map_err(|e| self.error(e))
    }

    fn map_buffer(&self, index: usize, source: &Buffer) -> Result<Box<dyn Allocation>> {
        self.check_index(index)?;
        let refuse = |why: &str| {
            Error::backend(
                &self.shared.identity.name,
                format!("{} cannot use {source:?} without copying: {why}", self.device(index)),
            )
        };
        let Some(ptr) = source.host_ptr() else {
            return Err(refuse("the memory has no host address"));
        };
        if !self.instance().can_import() {
            return Err(refuse("the plugin has no buffer_import (ABI 1.1)"));
        }
        let handle = self
            .instance()
            .buffer_import(index, ptr, source.len(), memory_kind_code(source.kind()))
            .map_err(|e| self.error(e))?;
        if handle.is_null() {
            return Err(refuse("buffer_import returned success but no buffer"));
        }
        Ok(self.wrap_buffer(handle, ptr))
    }

    fn release(&self, allocation: Box<dyn Allocation>, pending: Vec<Event>) {
        if pending.is_empty() {
            return drop(allocation);
        }
        // The plugin may free a buffer only once no enqueued work uses it
        // (the `free` contract); waiting here would serialise the host with
        // every stream, so the free waits in a list instead, which the next
        // allocation or synchronisation goes through (the work this buffer
        // was just used for has rarely finished yet).
        self.deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(DeferredFree {
                _allocation: allocation,
                pending,
            });
    }

    fn default_stream(&self, index: usize) -> Result<Stream> {
        self.check_index(index)?;
        Ok(self.default_streams[index].clone())
    }

    fn create_stream(&self, index: usize) -> Result<Stream> {
        self.new_stream(index)
    }

    /// A plugin without streams finishes its work by the next
    /// `device_synchronize` (the header's promise for a NULL stream), so
    /// its event is that synchronization, complete once recorded.
    fn record_event(&self, stream: &Stream) -> Result<Event> {
        let s = self.stream(stream)?;
        let handle = if s.handle.is_null() {
            self.device_synchronize(stream.device().index())?;
            std::ptr::null_mut()
        } else {
            self.instance().event_record(s.handle).map_err(|e| self.error(e))?
        };
        let event = PluginEvent {
            handle,
            shared: Arc::clone(&self.shared),
        };
        Ok(Event::new(stream.device(), Arc::new(event)))
    }

    fn wait_event(&self, stream: &Stream, event: &Event) -> Result<()> {
        let (s, e) = (self.stream(stream)?, self.event(event)?);
        if e.handle.is_null() {
            // Complete when recorded: nothing to wait for.
            return Ok(());
        }
        self.instance()
            .event_wait(s.handle, e.handle)
            .map_err(|e| self.error(e))
    }

    fn query_event(&self, event: &Event) -> Result<bool> {
        let e = self.event(event)?;
        if e.handle.is_null() {
            return Ok(true);
        }
        self.instance().event_query(e.handle).map_err(|e| self.error(e))
    }

    fn synchronize_event(&self, event: &Event) -> Result<()> {
        let e = self.event(event)?;
        if e.handle.is_null() {
            return Ok(());
        }
        self.instance().event_synchronize(e.handle).map_err(|e| self.error(e))
    }

    /// Asked of the plugin only for devices that report `event_timing`,
    /// as the ABI promises; others are refused here.
    fn event_elapsed(&self, start: &Event, end: &Event) -> Result<Duration> {
        let index = start.device().index();
        if !self.plugin_capabilities(index)?.flag(keys::EVENT_TIMING) {
            return Err(crate::backend::no_event_timing(start.device()));
        }
        let (s, e) = (self.event(start)?, self.event(end)?);
        if s.handle.is_null() || e.handle.is_null() {
            return Err(Error::FeatureUnsupported {
                feature: "event timing".into(),
                device: start.device(),
                reason: "the plugin has no stream and event calls, so its events carry no time".into(),
            });
        }
        let ms = self
            .instance()
            .event_elapsed(s.handle, e.handle)
            .map_err(|e| self.error(e))?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(self.error(CallError {
                call: "event_elapsed",
                code: ErrorCode::Internal,
                message: format!("returned {ms} ms, which is not a duration"),
            }));
        }
        Ok(Duration::from_secs_f64(ms / 1e3))
    }

    fn collectives(&self) -> Option<String> {
        self.instance()
            .has_collectives()
            .then(|| format!("{} (plugin)", self.shared.identity.name))
    }

    fn comm_id(&self) -> Result<Vec<u8>> {
        if !self.instance().has_collectives() {
            return Err(crate::collective::no_collectives(self.name()));
        }
        let id = self.instance().comm_id().map_err(|e| self.error(e))?;
        Ok(id.bytes.to_vec())
    }

    fn comm_init(
        &self,
        index: usize,
        init: &crate::collective::CommInit<'_>,
    ) -> Result<Box<dyn crate::collective::DeviceComm>> {
        self.check_index(index)?;
        if !self.instance().has_collectives() {
            return Err(crate::collective::no_collectives(self.name()));
        }
        Ok(Box::new(self.join(index, init)?))
    }

    /// A plugin without streams has one implicit order per device, which
    /// `device_synchronize` waits for.
    fn synchronize_stream(&self, stream: &Stream) -> Result<()> {
        let s = self.stream(stream)?;
        if s.handle.is_null() {
            return self.device_synchronize(stream.device().index());
        }
        self.instance().stream_synchronize(s.handle).map_err(|e| self.error(e))
    }

    fn synchronize(&self, index: usize) -> Result<()> {
        self.check_index(index)?;
        self.instance().device_synchronize(index).map_err(|e| self.error(e))?;
        self.collect_deferred(false);
        Ok(())
    }

    fn copy_from_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<()> {
        let s = self.stream(stream)?;
        let dst = self.buffer(dst)?;
        self.instance()
            .copy_host_to_device(s.handle, src, dst, dst_offset)
            .map_err(|e| self.error(e))
    }

    fn copy_to_host_unchecked(
        &self,
        _: Checked<'_>,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let s = self.stream(stream)?;
        let src = self.buffer(src)?;
        self.instance()
            .copy_device_to_host(s.handle, src, src_offset, dst)
            .map_err(|e| self.error(e))
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
        if !self.instance().can_copy_between() {
            return self.copy_through_host(stream, src, src_offset, dst, dst_offset, len);
        }
        let s = self.stream(stream)?;
        let (src, dst) = (self.buffer(src)?, self.buffer(dst)?);
        self.instance()
            .copy_device_to_device(s.handle, src, src_offset, dst, dst_offset, len)
            .map_err(|e| self.error(e))
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
        let s = self.stream(stream)?;
        let dst = self.buffer(dst)?;
        self.instance()
            .fill(s.handle, dst, offset, len, pattern)
            .map_err(|e| self.error(e))
    }

    fn execute_unchecked(&self, _: Checked<'_>, stream: &Stream, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        let s = self.stream(stream)?;
        let unsupported = || Error::Unsupported {
            op: op.code().name().to_owned(),
            dtype: op.support_dtype(),
            device: stream.device(),
        };
        if !self.supports(stream.device().index(), op.code(), op.support_dtype()) {
            return Err(unsupported());
        }
        let handles = op.try_map(|t| self.buffer(t.buffer).map(|h| (h, *t)))?;
        let result = codec::encode(
            &handles,
            |(h, t)| codec::tensor(*h, t.offset, t.dtype(), t.shape, t.strides),
            |call| match self.instance().signature_supported(stream.device().index(), call) {
                Ok(true) => self.instance().execute(s.handle, call).map(|()| true),
                other => other,
            },
        );
        match result {
            Ok(true) => Ok(()),
            Ok(false) => Err(unsupported()),
            Err(e) if e.code == ErrorCode::Unimplemented => Err(unsupported()),
            Err(e) => Err(self.error(e)),
        }
    }

    fn run_kernel(
        &self,
        stream: &Stream,
        body: &KernelBody<'_>,
        inputs: &[TensorRef<'_>],
        outputs: &[TensorRef<'_>],
        attrs: &Attrs,
    ) -> Result<()> {
        match body {
            KernelBody::Device { op } => self.run_extension(stream, op, inputs, outputs, attrs),
            other => Err(Error::backend(self.name(), format!("runs no {} kernels", other.form()))),
        }
    }

    fn extension_ops(&self, index: usize) -> Vec<String> {
        self.extension_ops.get(index).cloned().unwrap_or_default()
    }

    fn extension_supported(
        &self,
        index: usize,
        op: &str,
        inputs: &[TensorMeta],
        outputs: &[TensorMeta],
        attrs: &Attrs,
    ) -> Result<bool> {
        if !self.lists(index, op) {
            return Ok(false);
        }
        let call = extension_call(
            op,
            inputs.iter().map(ExtOperand::meta).collect(),
            outputs.iter().map(ExtOperand::meta).collect(),
            attrs,
        );
        self.with_extension_call(&call, |raw| self.instance().extension_supported(index, raw))
    }
}
