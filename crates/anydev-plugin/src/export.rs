//! The C function table of a Rust plugin: one generic `extern "C"` function
//! per ABI call, each decoding its handles, calling the [`Plugin`] method
//! inside `catch_unwind`, and encoding the result.
//!
//! Soundness of the handle conversions rests on the ABI contract: the host
//! passes back only handles this plugin gave out and has not destroyed,
//! and out-pointers that are valid for writing. Handles carry a tag, so a
//! buffer passed where a stream is expected is an `InvalidArgument` error
//! rather than undefined behaviour.

use crate::codec::{decode, decode_extension, decode_extension_spec, RawAttributes, RawTensor, RawValue};
use crate::collective::{CollectiveCall, CollectiveKind, Collectives, Comm, CommInit, ReduceOp};
use crate::error::{error_code, error_destroy, error_message, into_status};
use crate::plugin::{AttrValue, ForeignMemory, InitArgs, MemoryKind, Plugin, PluginTensor};
use crate::{PluginError, Result};
use anydev_ops::{DType, OpCode};
use anydev_plugin_abi::*;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::OnceLock;

/// Runs one call body, turning errors and panics into a status.
fn guard(body: impl FnOnce() -> Result<()>) -> AnydevStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(e)) => into_status(e),
        Err(payload) => {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".into());
            into_status(PluginError::internal(format!("the plugin panicked: {text}")))
        }
    }
}

/// Writes an out-parameter.
fn put<T>(out: *mut T, value: T) -> Result<()> {
    if out.is_null() {
        return Err(PluginError::invalid_argument("NULL out-parameter"));
    }
    // SAFETY: non-NULL; the ABI contract makes out-parameters writable.
    unsafe { out.write(value) };
    Ok(())
}

/// Reads a NUL-terminated UTF-8 argument; NULL reads as `default`.
fn text(s: *const c_char, default: &str) -> Result<&str> {
    if s.is_null() {
        return Ok(default);
    }
    // SAFETY: non-NULL; the ABI contract makes string arguments valid
    // NUL-terminated strings for the duration of the call.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| PluginError::invalid_argument("a string argument is not UTF-8"))
}

const BUFFER_TAG: u64 = u64::from_le_bytes(*b"anydBUF1");
const STREAM_TAG: u64 = u64::from_le_bytes(*b"anydSTR1");
const EVENT_TAG: u64 = u64::from_le_bytes(*b"anydEVT1");
const COMM_TAG: u64 = u64::from_le_bytes(*b"anydCOM1");

/// What a buffer, stream or event handle points at.
struct Tagged<T> {
    tag: u64,
    value: T,
}

fn into_handle<T, H>(tag: u64, value: T) -> *mut H {
    Box::into_raw(Box::new(Tagged { tag, value })).cast()
}

fn handle_ref<'a, T, H>(handle: *mut H, tag: u64, what: &str) -> Result<&'a T> {
    // SAFETY: by the ABI contract a non-NULL handle is one `into_handle`
    // made for this plugin and not yet destroyed; the tag check rejects a
    // handle of another kind.
    match unsafe { handle.cast::<Tagged<T>>().as_ref() } {
        Some(t) if t.tag == tag => Ok(&t.value),
        Some(_) => Err(PluginError::invalid_argument(format!(
            "the handle passed as a {what} is not a {what}"
        ))),
        None => Err(PluginError::invalid_argument(format!("NULL {what} handle"))),
    }
}

fn take_handle<T, H>(handle: *mut H, tag: u64, what: &str) -> Result<()> {
    handle_ref::<T, H>(handle, tag, what)?;
    // SAFETY: checked above to be a live handle of this kind, made by
    // `Box::into_raw`; the host gives up ownership with this call.
    let mut boxed = unsafe { Box::from_raw(handle.cast::<Tagged<T>>()) };
    boxed.tag = 0;
    drop(boxed);
    Ok(())
}

/// Properties of one device in the form the ABI hands out.
struct CachedProperties {
    _strings: [CString; 4],
    raw: AnydevDeviceProperties,
}

// SAFETY: the raw pointers inside point only into the heap data owned by
// the same value, which is never mutated after construction.
unsafe impl Send for CachedProperties {}
// SAFETY: as above.
unsafe impl Sync for CachedProperties {}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

/// Capabilities of one device in the form the ABI hands out.
fn capability_attributes(attrs: Vec<(String, AttrValue)>) -> RawAttributes {
    let mut raw = RawAttributes::default();
    for (name, value) in attrs {
        let value = match value {
            AttrValue::Bool(v) => RawValue::Int(ANYDEV_ATTR_BOOL, i64::from(v)),
            AttrValue::I64(v) => RawValue::Int(ANYDEV_ATTR_I64, v),
            AttrValue::F64(v) => RawValue::Float(v),
            AttrValue::Str(s) => RawValue::Text(c_string(&s)),
            AttrValue::I64List(list) => RawValue::List(ANYDEV_ATTR_I64_LIST, list),
        };
        raw.push(c_string(&name), value);
    }
    raw
}

/// One device's extension op names in the form the ABI hands out.
struct CachedOpNames {
    _names: Vec<CString>,
    raw: Vec<*const c_char>,
}

// SAFETY: the raw pointers point only into the heap data owned by the same
// value, which is never mutated after construction.
unsafe impl Send for CachedOpNames {}
// SAFETY: as above.
unsafe impl Sync for CachedOpNames {}

impl CachedOpNames {
    fn new(names: Vec<String>) -> CachedOpNames {
        let names: Vec<CString> = names.iter().map(|n| c_string(n)).collect();
        let raw = names.iter().map(|n| n.as_ptr()).collect();
        CachedOpNames { _names: names, raw }
    }
}

/// One device's slot; device handles point at these.
struct DeviceSlot {
    properties: OnceLock<CachedProperties>,
    capabilities: OnceLock<RawAttributes>,
    extension_ops: OnceLock<CachedOpNames>,
}

/// What an `AnydevContext` handle of a Rust plugin points at.
struct Context<P> {
    plugin: P,
    devices: Box<[DeviceSlot]>,
}

impl<P: Plugin> Context<P> {
    fn from_handle<'a>(handle: *mut AnydevContext) -> Result<&'a Context<P>> {
        // SAFETY: by the ABI contract a non-NULL context is one `initialize`
        // returned and `shutdown` has not consumed.
        unsafe { handle.cast::<Context<P>>().as_ref() }.ok_or_else(|| PluginError::invalid_argument("NULL context"))
    }

    /// The index of a device handle, checked to be one of ours.
    fn device(&self, handle: *mut AnydevDevice) -> Result<usize> {
        let base = self.devices.as_ptr() as usize;
        let size = std::mem::size_of::<DeviceSlot>();
        let offset = (handle as usize).wrapping_sub(base);
        if offset.is_multiple_of(size) && offset / size < self.devices.len() {
            Ok(offset / size)
        } else {
            Err(PluginError::invalid_argument(
                "the device handle is not a device of this plugin",
            ))
        }
    }

    fn buffer<'a>(&self, handle: *mut AnydevBuffer) -> Result<&'a P::Buffer> {
        handle_ref(handle, BUFFER_TAG, "buffer")
    }

    fn stream<'a>(&self, handle: *mut AnydevStream) -> Result<&'a P::Stream> {
        handle_ref(handle, STREAM_TAG, "stream")
    }

    fn event<'a>(&self, handle: *mut AnydevEvent) -> Result<&'a P::Event> {
        handle_ref(handle, EVENT_TAG, "event")
    }

    fn comm<'a>(&self, handle: *mut AnydevComm) -> Result<&'a PluginComm<P>> {
        handle_ref(handle, COMM_TAG, "communicator")
    }

    fn collectives(&self) -> Result<&dyn Collectives<P::Buffer, P::Stream>> {
        self.plugin
            .collectives()
            .ok_or_else(|| PluginError::unimplemented("this plugin offers no collectives"))
    }

    fn tensor<'a>(&self, raw: &RawTensor<'a>) -> Result<PluginTensor<'a, P::Buffer>> {
        Ok(PluginTensor {
            buffer: self.buffer(raw.buffer)?,
            byte_offset: raw.byte_offset,
            dtype: raw.dtype,
            shape: raw.shape,
            strides: raw.strides,
        })
    }
}

fn host_bytes<'a>(ptr: *const u8, len: u64) -> Result<&'a [u8]> {
    let len = usize::try_from(len).map_err(|_| PluginError::invalid_argument("size does not fit in memory"))?;
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(PluginError::invalid_argument("NULL host pointer"));
    }
    // SAFETY: non-NULL; the ABI contract makes `ptr` valid for `len` bytes
    // for the duration of the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

fn host_bytes_mut<'a>(ptr: *mut u8, len: u64) -> Result<&'a mut [u8]> {
    let len = usize::try_from(len).map_err(|_| PluginError::invalid_argument("size does not fit in memory"))?;
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(PluginError::invalid_argument("NULL host pointer"));
    }
    // SAFETY: non-NULL; the ABI contract makes `ptr` valid and exclusively
    // ours for `len` bytes for the duration of the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

fn size(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| PluginError::invalid_argument(format!("{v} does not fit in memory")))
}

/// The memory kind an ABI code names.
fn memory_kind(code: u32) -> Result<MemoryKind> {
    MemoryKind::from_code(code).ok_or_else(|| PluginError::invalid_argument(format!("unknown memory kind code {code}")))
}

unsafe extern "C" fn initialize<P: Plugin>(args: *const AnydevInitArgs, out: *mut *mut AnydevContext) -> AnydevStatus {
    guard(|| {
        // SAFETY: by the ABI contract `args` is NULL or a valid versioned struct.
        let args = unsafe { read_versioned(args) }.ok_or_else(|| PluginError::invalid_argument("NULL init args"))?;
        let init = InitArgs {
            name: text(args.plugin_name, "")?,
            options_json: text(args.options_json, "{}")?,
            host_version: args.host_version,
        };
        let plugin = P::initialize(&init)?;
        let devices = (0..plugin.device_count())
            .map(|_| DeviceSlot {
                properties: OnceLock::new(),
                capabilities: OnceLock::new(),
                extension_ops: OnceLock::new(),
            })
            .collect();
        put(out, Box::into_raw(Box::new(Context { plugin, devices })).cast())
    })
}

unsafe extern "C" fn shutdown<P: Plugin>(ctx: *mut AnydevContext) -> AnydevStatus {
    guard(|| {
        Context::<P>::from_handle(ctx)?;
        // SAFETY: a live context made by `Box::into_raw` in `initialize`;
        // the host gives it up with this call.
        drop(unsafe { Box::from_raw(ctx.cast::<Context<P>>()) });
        Ok(())
    })
}

unsafe extern "C" fn device_count<P: Plugin>(ctx: *mut AnydevContext, out: *mut u32) -> AnydevStatus {
    guard(|| put(out, Context::<P>::from_handle(ctx)?.devices.len() as u32))
}

unsafe extern "C" fn get_device<P: Plugin>(
    ctx: *mut AnydevContext,
    index: u32,
    out: *mut *mut AnydevDevice,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let slot = c.devices.get(index as usize).ok_or_else(|| {
            PluginError::invalid_argument(format!("device index {index} is not below {}", c.devices.len()))
        })?;
        put(out, (slot as *const DeviceSlot).cast_mut().cast())
    })
}

unsafe extern "C" fn device_properties<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    out: *mut AnydevDeviceProperties,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let index = c.device(dev)?;
        let slot = &c.devices[index];
        let cached = match slot.properties.get() {
            Some(cached) => cached,
            None => {
                let p = c.plugin.properties(index)?;
                let strings = [
                    c_string(&p.name),
                    c_string(&p.vendor),
                    c_string(&p.driver),
                    c_string(&p.version),
                ];
                let mut raw = AnydevDeviceProperties::new_sized();
                raw.name = strings[0].as_ptr();
                raw.vendor = strings[1].as_ptr();
                raw.driver = strings[2].as_ptr();
                raw.version = strings[3].as_ptr();
                raw.memory_bytes = p.memory_bytes;
                slot.properties
                    .get_or_init(|| CachedProperties { _strings: strings, raw })
            }
        };
        // SAFETY: by the ABI contract `out` is a host-allocated versioned struct.
        unsafe { write_out(out, &cached.raw, "properties") }
    })
}

unsafe extern "C" fn device_capabilities<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    out: *mut AnydevAttributeList,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let index = c.device(dev)?;
        let slot = &c.devices[index];
        let cached = match slot.capabilities.get() {
            Some(cached) => cached,
            None => {
                let attrs = capability_attributes(c.plugin.capabilities(index)?);
                slot.capabilities.get_or_init(|| attrs)
            }
        };
        let mut list = AnydevAttributeList::new_sized();
        list.attributes = cached.as_slice().as_ptr();
        list.count = cached.as_slice().len();
        // SAFETY: by the ABI contract `out` is a host-allocated versioned struct.
        unsafe { write_out(out, &list, "capabilities") }
    })
}

/// Writes a versioned out-struct, or says which one the host got wrong.
///
/// # Safety
/// `out` is NULL or points to a host-allocated struct whose `struct_size`
/// is set, as the ABI requires for every out-struct.
unsafe fn write_out<T: Versioned>(out: *mut T, value: &T, what: &str) -> Result<()> {
    // SAFETY: forwarded from this function's contract.
    match unsafe { write_versioned(out, value) } {
        true => Ok(()),
        false => Err(PluginError::invalid_argument(format!(
            "{what} out-struct is NULL or too small"
        ))),
    }
}

unsafe extern "C" fn op_supported<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    op: u32,
    dtype: u32,
    out: *mut u8,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let index = c.device(dev)?;
        let supported = match (OpCode::from_code(op), DType::from_code(dtype)) {
            (Some(op), Some(dtype)) => c.plugin.supports(index, op, dtype),
            _ => false,
        };
        put(out, u8::from(supported))
    })
}

unsafe extern "C" fn memory_kinds<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    out: *mut u32,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let mask = c
            .plugin
            .memory_kinds(c.device(dev)?)
            .iter()
            .fold(0u32, |m, k| m | 1 << k.code());
        put(out, mask)
    })
}

unsafe extern "C" fn device_synchronize<P: Plugin>(ctx: *mut AnydevContext, dev: *mut AnydevDevice) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.synchronize(c.device(dev)?)
    })
}

unsafe extern "C" fn allocate<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    bytes: u64,
    kind: u32,
    out: *mut *mut AnydevBuffer,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let kind = memory_kind(kind)?;
        let buffer = c.plugin.allocate(c.device(dev)?, size(bytes)?, kind)?;
        put(out, into_handle(BUFFER_TAG, buffer))
    })
}

unsafe extern "C" fn free<P: Plugin>(ctx: *mut AnydevContext, buffer: *mut AnydevBuffer) -> AnydevStatus {
    guard(|| {
        Context::<P>::from_handle(ctx)?;
        take_handle::<P::Buffer, _>(buffer, BUFFER_TAG, "buffer")
    })
}

unsafe extern "C" fn buffer_host_pointer<P: Plugin>(
    ctx: *mut AnydevContext,
    buffer: *mut AnydevBuffer,
    out: *mut *mut u8,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let ptr = c.plugin.host_pointer(c.buffer(buffer)?);
        put(out, ptr.map_or(std::ptr::null_mut(), |p| p.as_ptr()))
    })
}

unsafe extern "C" fn buffer_import<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    ptr: *mut u8,
    bytes: u64,
    kind: u32,
    out: *mut *mut AnydevBuffer,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let kind = memory_kind(kind)?;
        let ptr = std::ptr::NonNull::new(ptr).ok_or_else(|| PluginError::invalid_argument("NULL memory to import"))?;
        // SAFETY: by the `buffer_import` contract the host keeps `size` bytes
        // at `ptr` valid until it frees the buffer made from them.
        let memory = unsafe { ForeignMemory::new(ptr, size(bytes)?) };
        let buffer = c.plugin.import(c.device(dev)?, memory, kind)?;
        put(out, into_handle(BUFFER_TAG, buffer))
    })
}

unsafe extern "C" fn memory_stats<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    out: *mut AnydevMemoryStats,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let s = c.plugin.memory_stats(c.device(dev)?)?;
        let mut raw = AnydevMemoryStats::new_sized();
        raw.in_use = s.in_use;
        raw.peak = s.peak;
        raw.allocations = s.allocations;
        raw.limit = s.limit.unwrap_or(ANYDEV_NO_LIMIT);
        raw.reserved = s.reserved.unwrap_or(ANYDEV_UNKNOWN_BYTES);
        raw.free = s.free.unwrap_or(ANYDEV_UNKNOWN_BYTES);
        raw.total = s.total.unwrap_or(ANYDEV_UNKNOWN_BYTES);
        // SAFETY: by the ABI contract `out` is a host-allocated versioned struct.
        unsafe { write_out(out, &raw, "memory stats") }
    })
}

unsafe extern "C" fn stream_create<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    out: *mut *mut AnydevStream,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let stream = c.plugin.create_stream(c.device(dev)?)?;
        put(out, into_handle(STREAM_TAG, stream))
    })
}

unsafe extern "C" fn stream_destroy<P: Plugin>(ctx: *mut AnydevContext, stream: *mut AnydevStream) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        // The stream goes even when its last work failed: the host never
        // calls destroy twice, so an early return would leak it.
        let finished = c.plugin.synchronize_stream(c.stream(stream)?);
        take_handle::<P::Stream, _>(stream, STREAM_TAG, "stream")?;
        finished
    })
}

unsafe extern "C" fn stream_synchronize<P: Plugin>(ctx: *mut AnydevContext, stream: *mut AnydevStream) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.synchronize_stream(c.stream(stream)?)
    })
}

unsafe extern "C" fn event_record<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    out: *mut *mut AnydevEvent,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let event = c.plugin.record_event(c.stream(stream)?)?;
        put(out, into_handle(EVENT_TAG, event))
    })
}

unsafe extern "C" fn event_wait<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    event: *mut AnydevEvent,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.wait_event(c.stream(stream)?, c.event(event)?)
    })
}

unsafe extern "C" fn event_query<P: Plugin>(
    ctx: *mut AnydevContext,
    event: *mut AnydevEvent,
    out: *mut u8,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        put(out, u8::from(c.plugin.query_event(c.event(event)?)?))
    })
}

unsafe extern "C" fn event_synchronize<P: Plugin>(ctx: *mut AnydevContext, event: *mut AnydevEvent) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.synchronize_event(c.event(event)?)
    })
}

unsafe extern "C" fn event_elapsed<P: Plugin>(
    ctx: *mut AnydevContext,
    start: *mut AnydevEvent,
    end: *mut AnydevEvent,
    out_ms: *mut f64,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let ms = c.plugin.event_elapsed(c.event(start)?, c.event(end)?)?;
        put(out_ms, ms)
    })
}

unsafe extern "C" fn empty_cache<P: Plugin>(ctx: *mut AnydevContext, dev: *mut AnydevDevice) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.empty_cache(c.device(dev)?)
    })
}

unsafe extern "C" fn memory_reset_peak<P: Plugin>(ctx: *mut AnydevContext, dev: *mut AnydevDevice) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.reset_peak(c.device(dev)?)
    })
}

unsafe extern "C" fn event_destroy<P: Plugin>(ctx: *mut AnydevContext, event: *mut AnydevEvent) -> AnydevStatus {
    guard(|| {
        Context::<P>::from_handle(ctx)?;
        take_handle::<P::Event, _>(event, EVENT_TAG, "event")
    })
}

unsafe extern "C" fn copy_host_to_device<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    src: *const u8,
    dst: *mut AnydevBuffer,
    dst_offset: u64,
    len: u64,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.copy_from_host(
            c.stream(stream)?,
            host_bytes(src, len)?,
            c.buffer(dst)?,
            size(dst_offset)?,
        )
    })
}

unsafe extern "C" fn copy_device_to_host<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    src: *mut AnydevBuffer,
    src_offset: u64,
    dst: *mut u8,
    len: u64,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.copy_to_host(
            c.stream(stream)?,
            c.buffer(src)?,
            size(src_offset)?,
            host_bytes_mut(dst, len)?,
        )
    })
}

unsafe extern "C" fn copy_device_to_device<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    src: *mut AnydevBuffer,
    src_offset: u64,
    dst: *mut AnydevBuffer,
    dst_offset: u64,
    len: u64,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.plugin.copy_between(
            c.stream(stream)?,
            c.buffer(src)?,
            size(src_offset)?,
            c.buffer(dst)?,
            size(dst_offset)?,
            size(len)?,
        )
    })
}

unsafe extern "C" fn fill<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    dst: *mut AnydevBuffer,
    offset: u64,
    len: u64,
    pattern: *const u8,
    pattern_len: u64,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let pattern = host_bytes(pattern, pattern_len)?;
        c.plugin
            .fill(c.stream(stream)?, c.buffer(dst)?, size(offset)?, size(len)?, pattern)
    })
}

unsafe extern "C" fn execute<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    call: *const AnydevOpCall,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        // SAFETY: by the ABI contract `call` is NULL or a valid versioned struct.
        let call = unsafe { read_versioned(call) }.ok_or_else(|| PluginError::invalid_argument("NULL op call"))?;
        // SAFETY: the arrays the call points at are valid for this call,
        // which the decoded op does not outlive.
        let op = unsafe { decode(&call) }?;
        let op = op.try_map(|t| c.tensor(t))?;
        c.plugin.execute(c.stream(stream)?, &op)
    })
}

unsafe extern "C" fn extension_ops<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    out: *mut AnydevExtensionOpList,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let index = c.device(dev)?;
        let slot = &c.devices[index];
        let cached = match slot.extension_ops.get() {
            Some(cached) => cached,
            None => {
                let names = CachedOpNames::new(c.plugin.extension_ops(index));
                slot.extension_ops.get_or_init(|| names)
            }
        };
        let mut list = AnydevExtensionOpList::new_sized();
        list.names = cached.raw.as_ptr();
        list.count = cached.raw.len();
        // SAFETY: by the ABI contract `out` is a host-allocated versioned struct.
        unsafe { write_out(out, &list, "extension op list") }
    })
}

unsafe extern "C" fn extension_supported<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    call: *const AnydevExtensionCall,
    out: *mut u8,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let index = c.device(dev)?;
        // SAFETY: by the ABI contract `call` is NULL or a valid versioned struct.
        let call =
            unsafe { read_versioned(call) }.ok_or_else(|| PluginError::invalid_argument("NULL extension call"))?;
        // SAFETY: the arrays the call points at are valid for this call,
        // which the decoded call does not outlive.
        let call = unsafe { decode_extension_spec(&call) }?;
        put(out, u8::from(c.plugin.extension_supported(index, &call)))
    })
}

unsafe extern "C" fn extension_execute<P: Plugin>(
    ctx: *mut AnydevContext,
    stream: *mut AnydevStream,
    call: *const AnydevExtensionCall,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        // SAFETY: by the ABI contract `call` is NULL or a valid versioned struct.
        let call =
            unsafe { read_versioned(call) }.ok_or_else(|| PluginError::invalid_argument("NULL extension call"))?;
        // SAFETY: the arrays the call points at are valid for this call,
        // which the decoded call does not outlive.
        let call = unsafe { decode_extension(&call) }?;
        let call = call.try_map(|t| c.tensor(&t))?;
        c.plugin.execute_extension(c.stream(stream)?, &call)
    })
}

/// What a communicator handle points at.
type PluginComm<P> = Box<dyn Comm<<P as Plugin>::Buffer, <P as Plugin>::Stream>>;

unsafe extern "C" fn comm_id<P: Plugin>(ctx: *mut AnydevContext, out: *mut AnydevCommId) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let bytes = c.collectives()?.comm_id()?;
        put(out, AnydevCommId { bytes })
    })
}

unsafe extern "C" fn comm_init<P: Plugin>(
    ctx: *mut AnydevContext,
    dev: *mut AnydevDevice,
    args: *const AnydevCommInitArgs,
    out: *mut *mut AnydevComm,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        let index = c.device(dev)?;
        // SAFETY: by the ABI contract `args` is NULL or a valid versioned struct.
        let args =
            unsafe { read_versioned(args) }.ok_or_else(|| PluginError::invalid_argument("NULL communicator args"))?;
        if args.nranks == 0 || args.rank >= args.nranks {
            return Err(PluginError::invalid_argument(format!(
                "rank {} of a communicator of {} ranks",
                args.rank, args.nranks
            )));
        }
        let init = CommInit {
            id: args.id.bytes,
            nranks: args.nranks as usize,
            rank: args.rank as usize,
            timeout: std::time::Duration::from_millis(args.timeout_ms),
        };
        if out.is_null() {
            return Err(PluginError::invalid_argument("NULL out-parameter"));
        }
        let comm: PluginComm<P> = c.collectives()?.comm_init(index, &init)?;
        put(out, into_handle(COMM_TAG, comm))
    })
}

unsafe extern "C" fn comm_abort<P: Plugin>(ctx: *mut AnydevContext, comm: *mut AnydevComm) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        c.comm(comm)?.abort()
    })
}

unsafe extern "C" fn comm_destroy<P: Plugin>(ctx: *mut AnydevContext, comm: *mut AnydevComm) -> AnydevStatus {
    guard(|| {
        Context::<P>::from_handle(ctx)?;
        take_handle::<PluginComm<P>, _>(comm, COMM_TAG, "communicator")
    })
}

/// A reduction an ABI code names.
fn reduce_op(code: u32) -> Result<ReduceOp> {
    match code {
        ANYDEV_REDUCE_SUM => Ok(ReduceOp::Sum),
        ANYDEV_REDUCE_PROD => Ok(ReduceOp::Prod),
        ANYDEV_REDUCE_MIN => Ok(ReduceOp::Min),
        ANYDEV_REDUCE_MAX => Ok(ReduceOp::Max),
        other => Err(PluginError::invalid_argument(format!("unknown reduction code {other}"))),
    }
}

/// The collective an ABI call describes.
fn collective_kind(call: &AnydevCollectiveCall) -> Result<CollectiveKind> {
    let peer = call.peer as usize;
    Ok(match call.kind {
        ANYDEV_COLLECTIVE_ALL_REDUCE => CollectiveKind::AllReduce(reduce_op(call.reduce_op)?),
        ANYDEV_COLLECTIVE_BROADCAST => CollectiveKind::Broadcast { root: peer },
        ANYDEV_COLLECTIVE_ALL_GATHER => CollectiveKind::AllGather,
        ANYDEV_COLLECTIVE_REDUCE_SCATTER => CollectiveKind::ReduceScatter(reduce_op(call.reduce_op)?),
        ANYDEV_COLLECTIVE_ALL_TO_ALL => CollectiveKind::AllToAll,
        ANYDEV_COLLECTIVE_SEND => CollectiveKind::Send { peer },
        ANYDEV_COLLECTIVE_RECV => CollectiveKind::Recv { peer },
        other => {
            return Err(PluginError::invalid_argument(format!(
                "unknown collective code {other}"
            )))
        }
    })
}

unsafe extern "C" fn collective<P: Plugin>(
    ctx: *mut AnydevContext,
    comm: *mut AnydevComm,
    stream: *mut AnydevStream,
    call: *const AnydevCollectiveCall,
) -> AnydevStatus {
    guard(|| {
        let c = Context::<P>::from_handle(ctx)?;
        // SAFETY: by the ABI contract `call` is NULL or a valid versioned struct.
        let call = unsafe { read_versioned(call) }.ok_or_else(|| PluginError::invalid_argument("NULL collective"))?;
        let dtype = DType::from_code(call.dtype)
            .ok_or_else(|| PluginError::invalid_argument(format!("unknown dtype code {}", call.dtype)))?;
        let side = |buffer: *mut AnydevBuffer, offset: u64| -> Result<Option<(&P::Buffer, usize)>> {
            if buffer.is_null() {
                return Ok(None);
            }
            Ok(Some((c.buffer(buffer)?, size(offset)?)))
        };
        let decoded = CollectiveCall {
            kind: collective_kind(&call)?,
            dtype,
            send: side(call.send, call.send_offset)?,
            recv: side(call.recv, call.recv_offset)?,
            count: size(call.count)?,
        };
        c.comm(comm)?.enqueue(c.stream(stream)?, &decoded)
    })
}

/// The function table for plugin type `P`. [`crate::export_plugin!`] puts
/// it in a static behind the entry symbol; a host that links a plugin
/// statically can hand the same table to the loader directly.
pub const fn api_table<P: Plugin>() -> AnydevPluginApi {
    AnydevPluginApi {
        struct_size: std::mem::size_of::<AnydevPluginApi>(),
        version: ABI_VERSION,
        reserved: 0,
        error_code: Some(error_code),
        error_message: Some(error_message),
        error_destroy: Some(error_destroy),
        initialize: Some(initialize::<P>),
        shutdown: Some(shutdown::<P>),
        device_count: Some(device_count::<P>),
        get_device: Some(get_device::<P>),
        device_properties: Some(device_properties::<P>),
        device_capabilities: Some(device_capabilities::<P>),
        op_supported: Some(op_supported::<P>),
        memory_kinds: Some(memory_kinds::<P>),
        device_synchronize: Some(device_synchronize::<P>),
        allocate: Some(allocate::<P>),
        free: Some(free::<P>),
        memory_stats: Some(memory_stats::<P>),
        stream_create: Some(stream_create::<P>),
        stream_destroy: Some(stream_destroy::<P>),
        stream_synchronize: Some(stream_synchronize::<P>),
        event_record: Some(event_record::<P>),
        event_wait: Some(event_wait::<P>),
        event_query: Some(event_query::<P>),
        event_synchronize: Some(event_synchronize::<P>),
        event_destroy: Some(event_destroy::<P>),
        copy_host_to_device: Some(copy_host_to_device::<P>),
        copy_device_to_host: Some(copy_device_to_host::<P>),
        copy_device_to_device: Some(copy_device_to_device::<P>),
        fill: Some(fill::<P>),
        execute: Some(execute::<P>),
        buffer_host_pointer: Some(buffer_host_pointer::<P>),
        buffer_import: Some(buffer_import::<P>),
        // `Plugin::supports` answers by support dtype only.
        op_supported_signature: None,
        extension_ops: Some(extension_ops::<P>),
        extension_supported: Some(extension_supported::<P>),
        extension_execute: Some(extension_execute::<P>),
        empty_cache: Some(empty_cache::<P>),
        memory_reset_peak: Some(memory_reset_peak::<P>),
        event_elapsed: Some(event_elapsed::<P>),
        comm_id: if P::COLLECTIVES { Some(comm_id::<P>) } else { None },
        comm_init: if P::COLLECTIVES { Some(comm_init::<P>) } else { None },
        comm_abort: if P::COLLECTIVES { Some(comm_abort::<P>) } else { None },
        comm_destroy: if P::COLLECTIVES { Some(comm_destroy::<P>) } else { None },
        collective: if P::COLLECTIVES { Some(collective::<P>) } else { None },
    }
}
