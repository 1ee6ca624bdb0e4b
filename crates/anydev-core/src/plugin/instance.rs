//! An initialised plugin: its table, its context and device handles, and
//! one safe method per ABI call.
//!
//! This module and `library.rs` are the only places that call into plugin
//! code. Every call goes through [`Instance::call`], which treats a NULL
//! function pointer (or one beyond the plugin's table) as unimplemented,
//! turns an error object into a [`CallError`] and frees it, and catches
//! panics raised on our side of the call. A panic inside a plugin cannot
//! be caught here: unwinding out of an `extern "C"` function aborts the
//! process, which is why the Rust helper crate catches panics inside the
//! plugin and returns them as `INTERNAL` errors.

use super::library::Table;
use anydev_plugin_abi::*;
use anydev_plugin_codec::ErrorCode;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{PoisonError, RwLock};

/// A failed call: which one, the plugin's error code, and its message.
#[derive(Clone, Debug, PartialEq)]
pub struct CallError {
    pub call: &'static str,
    pub code: ErrorCode,
    pub message: String,
}

/// An initialised plugin instance; shut down when dropped (after every
/// buffer, stream and event, which hold it through an `Arc`), or earlier
/// by [`Instance::close`] at process exit.
pub struct Instance {
    table: Table,
    context: *mut AnydevContext,
    devices: Vec<*mut AnydevDevice>,
    /// Whether `shutdown` has run. Every call holds the read side, so
    /// `close` (the write side) never overlaps one.
    closed: RwLock<bool>,
}

// SAFETY: the ABI requires plugins to accept every call from any thread,
// concurrently; the raw pointers are handles owned by this instance.
unsafe impl Send for Instance {}
// SAFETY: as above.
unsafe impl Sync for Instance {}

/// What an error says when the plugin's `error_message` gave no text, so
/// that the reason a user reads never ends in a bare colon.
const NO_MESSAGE: &str = "(the plugin gave no message)";

/// Reads a plugin-owned string; NULL reads as empty.
fn plugin_str(s: *const c_char) -> String {
    if s.is_null() {
        return String::new();
    }
    // SAFETY: non-NULL strings the plugin returns are NUL-terminated and
    // valid until the error is destroyed or the context shut down, which
    // happens after this copy.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

impl Instance {
    /// Calls `initialize` and fetches the device handles. `Err` carries
    /// the error and whether the plugin said it is merely unavailable.
    pub fn initialize(table: Table, name: &str, options_json: &str) -> Result<Instance, CallError> {
        let mut instance = Instance {
            table,
            context: ptr::null_mut(),
            devices: Vec::new(),
            closed: RwLock::new(false),
        };
        let name = CString::new(name).unwrap_or_default();
        let options = CString::new(options_json).unwrap_or_else(|_| c"{}".to_owned());
        let mut args = AnydevInitArgs::new_sized();
        args.host_version = ABI_VERSION;
        args.plugin_name = name.as_ptr();
        args.options_json = options.as_ptr();
        let mut context = ptr::null_mut();
        instance.call("initialize", table.api.initialize, |f| {
            // SAFETY: `args` and its strings live across the call; the
            // out-pointer is a local.
            unsafe { f(&args, &mut context) }
        })?;
        instance.context = instance.present("initialize", context, "context")?;
        let mut count = 0u32;
        instance.call("device_count", table.api.device_count, |f| {
            // SAFETY: live context; the out-pointer is a local.
            unsafe { f(context, &mut count) }
        })?;
        for index in 0..count {
            let mut device = ptr::null_mut();
            instance.call("get_device", table.api.get_device, |f| {
                // SAFETY: live context, index below the device count; the
                // out-pointer is a local.
                unsafe { f(context, index, &mut device) }
            })?;
            instance.devices.push(instance.present("get_device", device, "device")?);
        }
        Ok(instance)
    }

    pub fn version(&self) -> AnydevVersion {
        self.table.version
    }

    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    fn error(&self, call: &'static str, code: ErrorCode, message: String) -> CallError {
        CallError { call, code, message }
    }

    /// `handle`, which `call` returned with success, unless it is NULL: a
    /// plugin that says it made a `what` but gave none would have the host
    /// pass NULL where the plugin expects its own object.
    fn present<T>(&self, call: &'static str, handle: *mut T, what: &str) -> Result<*mut T, CallError> {
        if handle.is_null() {
            return Err(self.error(call, ErrorCode::Internal, format!("returned success but no {what}")));
        }
        Ok(handle)
    }

    /// Runs one call through `f` (NULL: unimplemented), converting its
    /// status.
    fn call<F: Copy>(
        &self,
        call: &'static str,
        f: Option<F>,
        invoke: impl FnOnce(F) -> AnydevStatus,
    ) -> Result<(), CallError> {
        self.call_op(call, None, f, invoke)
    }

    /// As [`Instance::call`], for a call that runs the op of ABI code
    /// `op_code`; the call watcher (if any) hears of it first. After
    /// [`Instance::close`] nothing reaches the plugin: the call fails.
    fn call_op<F: Copy>(
        &self,
        call: &'static str,
        op_code: Option<u32>,
        f: Option<F>,
        invoke: impl FnOnce(F) -> AnydevStatus,
    ) -> Result<(), CallError> {
        let closed = self.closed.read().unwrap_or_else(PoisonError::into_inner);
        if *closed {
            return Err(self.error(
                call,
                ErrorCode::InvalidArgument,
                "the plugin has been shut down (anydev::shutdown)".into(),
            ));
        }
        self.invoke(call, op_code, f, invoke)
    }

    /// Makes one call, converting its status; callers see that the
    /// instance is open.
    fn invoke<F: Copy>(
        &self,
        call: &'static str,
        op_code: Option<u32>,
        f: Option<F>,
        invoke: impl FnOnce(F) -> AnydevStatus,
    ) -> Result<(), CallError> {
        super::watch::entering(call, op_code);
        let Some(f) = f else {
            return Err(self.error(
                call,
                ErrorCode::Unimplemented,
                format!(
                    "the plugin does not implement {call} (its ABI {}.{} table is {} bytes)",
                    self.table.version.major, self.table.version.minor, self.table.declared_size
                ),
            ));
        };
        let status = catch_unwind(AssertUnwindSafe(|| invoke(f))).map_err(|panic| {
            self.error(
                call,
                ErrorCode::Internal,
                format!("panicked: {}", crate::runtime::panic_message(panic.as_ref())),
            )
        })?;
        if status.is_null() {
            return Ok(());
        }
        let api = &self.table.api;
        // SAFETY: `status` is a live error object of this plugin; the
        // accessors borrow it, and `error_destroy` frees it exactly once.
        let (code, message) = unsafe {
            let code = api.error_code.map_or(ANYDEV_ERROR_INTERNAL, |f| f(status));
            let message = api.error_message.map_or_else(String::new, |f| plugin_str(f(status)));
            let message = if message.is_empty() {
                NO_MESSAGE.to_owned()
            } else {
                message
            };
            if let Some(destroy) = api.error_destroy {
                destroy(status);
            }
            (code, message)
        };
        Err(self.error(call, ErrorCode::from_code(code), message))
    }

    fn device(&self, index: usize) -> *mut AnydevDevice {
        self.devices[index]
    }

    pub fn properties(&self, index: usize) -> Result<AnydevDeviceProperties, CallError> {
        let mut out = AnydevDeviceProperties::new_sized();
        self.call("device_properties", self.table.api.device_properties, |f| {
            // SAFETY: live context and device; `out` is a sized local.
            unsafe { f(self.context, self.device(index), &mut out) }
        })?;
        Ok(out)
    }

    /// The property strings as owned text (name, vendor, driver, version).
    pub fn property_strings(p: &AnydevDeviceProperties) -> [String; 4] {
        [p.name, p.vendor, p.driver, p.version].map(plugin_str)
    }

    /// The device's attributes, decoded while the plugin-owned list is valid.
    pub fn capabilities<T>(
        &self,
        index: usize,
        mut decode: impl FnMut(&str, &AnydevAttribute, &[i64], String) -> T,
    ) -> Result<Vec<T>, CallError> {
        let mut out = AnydevAttributeList::new_sized();
        self.call("device_capabilities", self.table.api.device_capabilities, |f| {
            // SAFETY: live context and device; `out` is a sized local.
            unsafe { f(self.context, self.device(index), &mut out) }
        })?;
        if out.count == 0 || out.attributes.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: the plugin returned `count` attributes, valid until shutdown.
        let attrs = unsafe { std::slice::from_raw_parts(out.attributes, out.count) };
        Ok(attrs
            .iter()
            .map(|a| {
                let list: &[i64] = if a.kind == ANYDEV_ATTR_I64_LIST && !a.list.is_null() {
                    // SAFETY: the plugin's list of `list_len` values, valid until shutdown.
                    unsafe { std::slice::from_raw_parts(a.list, a.list_len) }
                } else {
                    &[]
                };
                decode(&plugin_str(a.name), a, list, plugin_str(a.string_value))
            })
            .collect())
    }

    pub fn op_supported(&self, index: usize, op: u32, dtype: u32) -> Result<bool, CallError> {
        // Without `execute` the device runs no op, whatever it answers.
        if self.table.api.execute.is_none() {
            return Ok(false);
        }
        let mut out = 0u8;
        self.call("op_supported", self.table.api.op_supported, |f| {
            // SAFETY: live context and device; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), op, dtype, &mut out) }
        })?;
        Ok(out != 0)
    }

    /// Whether the device runs `call`'s exact signature (its output dtype
    /// and every input's), asked through `op_supported_signature` (ABI
    /// 1.2); `true` when the plugin leaves that call out, so that
    /// `op_supported` alone decides.
    pub fn signature_supported(&self, index: usize, call: &AnydevOpCall) -> Result<bool, CallError> {
        if self.table.api.op_supported_signature.is_none() {
            return Ok(true);
        }
        let inputs: &[AnydevOperand] = if call.num_inputs == 0 || call.inputs.is_null() {
            &[]
        } else {
            // SAFETY: the codec built `call` with `num_inputs` operands at
            // `inputs`, alive for the whole execute (this call included).
            unsafe { std::slice::from_raw_parts(call.inputs, call.num_inputs) }
        };
        let dtypes: Vec<u32> = inputs
            .iter()
            .map(|o| match o.kind {
                ANYDEV_OPERAND_SCALAR => o.scalar.dtype,
                _ => o.tensor.dtype,
            })
            .collect();
        let mut signature = AnydevOpSignature::new_sized();
        signature.op_code = call.op_code;
        signature.output_dtype = call.output.dtype;
        signature.input_dtypes = dtypes.as_ptr();
        signature.num_inputs = dtypes.len();
        let mut out = 0u8;
        self.call("op_supported_signature", self.table.api.op_supported_signature, |f| {
            // SAFETY: live context and device; `signature` and the dtypes it
            // points at live across the call; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), &signature, &mut out) }
        })?;
        Ok(out != 0)
    }

    /// The names of the extension ops device `index` implements (ABI 1.4);
    /// none when the plugin leaves `extension_ops` out.
    pub fn extension_ops(&self, index: usize) -> Result<Vec<String>, CallError> {
        if self.table.api.extension_ops.is_none() {
            return Ok(Vec::new());
        }
        let mut out = AnydevExtensionOpList::new_sized();
        self.call("extension_ops", self.table.api.extension_ops, |f| {
            // SAFETY: live context and device; `out` is a sized local.
            unsafe { f(self.context, self.device(index), &mut out) }
        })?;
        if out.count == 0 {
            return Ok(Vec::new());
        }
        if out.names.is_null() {
            return Err(self.error(
                "extension_ops",
                ErrorCode::Internal,
                format!("listed {} names but gave no array", out.count),
            ));
        }
        // SAFETY: the plugin returned `count` names, valid until shutdown.
        let names = unsafe { std::slice::from_raw_parts(out.names, out.count) };
        names
            .iter()
            .map(|&name| match name.is_null() {
                true => Err(self.error("extension_ops", ErrorCode::Internal, "listed a NULL name".into())),
                false => Ok(plugin_str(name)),
            })
            .collect()
    }

    /// Whether device `index` runs the extension call (asked with every
    /// buffer NULL, as the ABI specifies); `true` when the plugin leaves
    /// `extension_supported` out.
    pub fn extension_supported(&self, index: usize, call: &AnydevExtensionCall) -> Result<bool, CallError> {
        if self.table.api.extension_supported.is_none() {
            return Ok(true);
        }
        let without_memory = |tensors: *const AnydevTensor, len: usize| -> Vec<AnydevTensor> {
            if len == 0 || tensors.is_null() {
                return Vec::new();
            }
            // SAFETY: the codec built `call` with `len` tensors here, alive
            // for the whole extension call (this query included).
            let tensors = unsafe { std::slice::from_raw_parts(tensors, len) };
            tensors
                .iter()
                .map(|t| AnydevTensor {
                    buffer: ptr::null_mut(),
                    ..*t
                })
                .collect()
        };
        let inputs = without_memory(call.inputs, call.num_inputs);
        let outputs = without_memory(call.outputs, call.num_outputs);
        let query = AnydevExtensionCall {
            inputs: inputs.as_ptr(),
            outputs: outputs.as_ptr(),
            ..*call
        };
        let mut out = 0u8;
        self.call("extension_supported", self.table.api.extension_supported, |f| {
            // SAFETY: live context and device; `query` and everything it
            // points at live across the call; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), &query, &mut out) }
        })?;
        Ok(out != 0)
    }

    pub fn extension_execute(&self, stream: *mut AnydevStream, call: &AnydevExtensionCall) -> Result<(), CallError> {
        self.call("extension_execute", self.table.api.extension_execute, |f| {
            // SAFETY: live context and stream; `call` and the arrays it
            // points at live across the call (built by the codec's
            // `encode_extension`).
            unsafe { f(self.context, stream, call) }
        })
    }

    pub fn memory_kinds(&self, index: usize) -> Result<u32, CallError> {
        let mut out = 0u32;
        self.call("memory_kinds", self.table.api.memory_kinds, |f| {
            // SAFETY: live context and device; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), &mut out) }
        })?;
        Ok(out)
    }

    pub fn device_synchronize(&self, index: usize) -> Result<(), CallError> {
        self.call("device_synchronize", self.table.api.device_synchronize, |f| {
            // SAFETY: live context and device.
            unsafe { f(self.context, self.device(index)) }
        })
    }

    pub fn allocate(&self, index: usize, bytes: usize, kind: u32) -> Result<*mut AnydevBuffer, CallError> {
        let mut out = ptr::null_mut();
        self.call("allocate", self.table.api.allocate, |f| {
            // SAFETY: live context and device; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), bytes as u64, kind, &mut out) }
        })?;
        Ok(out)
    }

    pub fn free(&self, buffer: *mut AnydevBuffer) -> Result<(), CallError> {
        self.call("free", self.table.api.free, |f| {
            // SAFETY: a live buffer of this context, given up here.
            unsafe { f(self.context, buffer) }
        })
    }

    /// The buffer's host address, or NULL (also when the plugin predates
    /// ABI 1.1 and cannot say).
    pub fn buffer_host_pointer(&self, buffer: *mut AnydevBuffer) -> *mut u8 {
        let mut out = ptr::null_mut();
        let found = self.call("buffer_host_pointer", self.table.api.buffer_host_pointer, |f| {
            // SAFETY: a live buffer of this context; the out-pointer is a local.
            unsafe { f(self.context, buffer, &mut out) }
        });
        if found.is_ok() {
            out
        } else {
            ptr::null_mut()
        }
    }

    /// Whether the plugin can wrap memory it did not allocate.
    pub fn can_import(&self) -> bool {
        self.table.api.buffer_import.is_some()
    }

    /// Wraps `bytes` at `ptr`, memory of kind `kind` that the caller keeps
    /// alive until it frees the returned buffer, as a buffer of `index`.
    pub fn buffer_import(
        &self,
        index: usize,
        ptr: *mut u8,
        bytes: usize,
        kind: u32,
    ) -> Result<*mut AnydevBuffer, CallError> {
        let mut out = ptr::null_mut();
        self.call("buffer_import", self.table.api.buffer_import, |f| {
            // SAFETY: live context and device; `ptr` is valid for `bytes`
            // for as long as the caller keeps the buffer (its contract).
            unsafe { f(self.context, self.device(index), ptr, bytes as u64, kind, &mut out) }
        })?;
        Ok(out)
    }

    pub fn memory_stats(&self, index: usize) -> Result<AnydevMemoryStats, CallError> {
        let mut out = AnydevMemoryStats::new_sized();
        self.call("memory_stats", self.table.api.memory_stats, |f| {
            // SAFETY: live context and device; `out` is a sized local.
            unsafe { f(self.context, self.device(index), &mut out) }
        })?;
        Ok(out)
    }

    /// Whether the plugin has the stream and event calls (the loader has
    /// checked that a table has all of them or none).
    pub fn has_streams(&self) -> bool {
        self.table.api.stream_create.is_some()
    }

    /// Creates a stream, or returns NULL ("the plugin's implicit stream")
    /// when the plugin has no stream calls.
    pub fn stream_create(&self, index: usize) -> Result<*mut AnydevStream, CallError> {
        if !self.has_streams() {
            return Ok(ptr::null_mut());
        }
        let mut out = ptr::null_mut();
        self.call("stream_create", self.table.api.stream_create, |f| {
            // SAFETY: live context and device; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), &mut out) }
        })?;
        self.present("stream_create", out, "stream")
    }

    pub fn stream_destroy(&self, stream: *mut AnydevStream) -> Result<(), CallError> {
        self.call("stream_destroy", self.table.api.stream_destroy, |f| {
            // SAFETY: a live stream of this context, given up here.
            unsafe { f(self.context, stream) }
        })
    }

    pub fn stream_synchronize(&self, stream: *mut AnydevStream) -> Result<(), CallError> {
        self.call("stream_synchronize", self.table.api.stream_synchronize, |f| {
            // SAFETY: live context and stream.
            unsafe { f(self.context, stream) }
        })
    }

    pub fn event_record(&self, stream: *mut AnydevStream) -> Result<*mut AnydevEvent, CallError> {
        let mut out = ptr::null_mut();
        self.call("event_record", self.table.api.event_record, |f| {
            // SAFETY: live context and stream; the out-pointer is a local.
            unsafe { f(self.context, stream, &mut out) }
        })?;
        self.present("event_record", out, "event")
    }

    pub fn event_wait(&self, stream: *mut AnydevStream, event: *mut AnydevEvent) -> Result<(), CallError> {
        self.call("event_wait", self.table.api.event_wait, |f| {
            // SAFETY: live context, stream and event.
            unsafe { f(self.context, stream, event) }
        })
    }

    pub fn event_query(&self, event: *mut AnydevEvent) -> Result<bool, CallError> {
        let mut out = 0u8;
        self.call("event_query", self.table.api.event_query, |f| {
            // SAFETY: live context and event; the out-pointer is a local.
            unsafe { f(self.context, event, &mut out) }
        })?;
        Ok(out != 0)
    }

    pub fn event_synchronize(&self, event: *mut AnydevEvent) -> Result<(), CallError> {
        self.call("event_synchronize", self.table.api.event_synchronize, |f| {
            // SAFETY: live context and event.
            unsafe { f(self.context, event) }
        })
    }

    /// Milliseconds of device time between two completed events.
    pub fn event_elapsed(&self, start: *mut AnydevEvent, end: *mut AnydevEvent) -> Result<f64, CallError> {
        let mut ms = 0.0;
        self.call("event_elapsed", self.table.api.event_elapsed, |f| {
            // SAFETY: live context and events; the out-pointer is a local.
            unsafe { f(self.context, start, end, &mut ms) }
        })?;
        Ok(ms)
    }

    /// Gives the device's cached memory back; a plugin without the call
    /// caches nothing, so that is success.
    pub fn empty_cache(&self, index: usize) -> Result<(), CallError> {
        if self.table.api.empty_cache.is_none() {
            return Ok(());
        }
        self.call("empty_cache", self.table.api.empty_cache, |f| {
            // SAFETY: live context and device.
            unsafe { f(self.context, self.device(index)) }
        })
    }

    pub fn memory_reset_peak(&self, index: usize) -> Result<(), CallError> {
        self.call("memory_reset_peak", self.table.api.memory_reset_peak, |f| {
            // SAFETY: live context and device.
            unsafe { f(self.context, self.device(index)) }
        })
    }

    pub fn event_destroy(&self, event: *mut AnydevEvent) -> Result<(), CallError> {
        self.call("event_destroy", self.table.api.event_destroy, |f| {
            // SAFETY: a live event of this context, given up here.
            unsafe { f(self.context, event) }
        })
    }

    pub fn copy_host_to_device(
        &self,
        stream: *mut AnydevStream,
        src: &[u8],
        dst: *mut AnydevBuffer,
        dst_offset: usize,
    ) -> Result<(), CallError> {
        self.call("copy_host_to_device", self.table.api.copy_host_to_device, |f| {
            // SAFETY: live handles; `src` is readable for its length during the call.
            unsafe {
                f(
                    self.context,
                    stream,
                    src.as_ptr(),
                    dst,
                    dst_offset as u64,
                    src.len() as u64,
                )
            }
        })
    }

    pub fn copy_device_to_host(
        &self,
        stream: *mut AnydevStream,
        src: *mut AnydevBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), CallError> {
        self.call("copy_device_to_host", self.table.api.copy_device_to_host, |f| {
            // SAFETY: live handles; `dst` is exclusively writable for its length during the call.
            unsafe {
                f(
                    self.context,
                    stream,
                    src,
                    src_offset as u64,
                    dst.as_mut_ptr(),
                    dst.len() as u64,
                )
            }
        })
    }

    /// Whether the plugin copies between its own buffers itself.
    pub fn can_copy_between(&self) -> bool {
        self.table.api.copy_device_to_device.is_some()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn copy_device_to_device(
        &self,
        stream: *mut AnydevStream,
        src: *mut AnydevBuffer,
        src_offset: usize,
        dst: *mut AnydevBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), CallError> {
        self.call("copy_device_to_device", self.table.api.copy_device_to_device, |f| {
            // SAFETY: live handles of this context.
            unsafe {
                f(
                    self.context,
                    stream,
                    src,
                    src_offset as u64,
                    dst,
                    dst_offset as u64,
                    len as u64,
                )
            }
        })
    }

    pub fn fill(
        &self,
        stream: *mut AnydevStream,
        dst: *mut AnydevBuffer,
        offset: usize,
        len: usize,
        pattern: &[u8],
    ) -> Result<(), CallError> {
        self.call("fill", self.table.api.fill, |f| {
            // SAFETY: live handles; `pattern` is readable for its length during the call.
            unsafe {
                f(
                    self.context,
                    stream,
                    dst,
                    offset as u64,
                    len as u64,
                    pattern.as_ptr(),
                    pattern.len() as u64,
                )
            }
        })
    }

    pub fn execute(&self, stream: *mut AnydevStream, call: &AnydevOpCall) -> Result<(), CallError> {
        self.call_op("execute", Some(call.op_code), self.table.api.execute, |f| {
            // SAFETY: live context and stream; `call` and the arrays it
            // points at live across the call (built by the codec's `encode`).
            unsafe { f(self.context, stream, call) }
        })
    }
}

/// The collective calls (ABI 1.6); the loader has checked that a table has
/// all five or none.
impl Instance {
    pub fn has_collectives(&self) -> bool {
        self.table.api.collective.is_some()
    }

    pub fn comm_id(&self) -> Result<AnydevCommId, CallError> {
        let mut id = AnydevCommId::default();
        self.call("comm_id", self.table.api.comm_id, |f| {
            // SAFETY: live context; the out-pointer is a local.
            unsafe { f(self.context, &mut id) }
        })?;
        Ok(id)
    }

    /// Blocks until every rank joined or the plugin's join timeout passed.
    pub fn comm_init(&self, index: usize, args: &AnydevCommInitArgs) -> Result<*mut AnydevComm, CallError> {
        let mut comm = ptr::null_mut();
        self.call("comm_init", self.table.api.comm_init, |f| {
            // SAFETY: live context and device; `args` is a sized local that
            // lives across the call; the out-pointer is a local.
            unsafe { f(self.context, self.device(index), args, &mut comm) }
        })?;
        self.present("comm_init", comm, "communicator")
    }

    pub fn comm_abort(&self, comm: *mut AnydevComm) -> Result<(), CallError> {
        self.call("comm_abort", self.table.api.comm_abort, |f| {
            // SAFETY: live context and communicator.
            unsafe { f(self.context, comm) }
        })
    }

    pub fn comm_destroy(&self, comm: *mut AnydevComm) -> Result<(), CallError> {
        self.call("comm_destroy", self.table.api.comm_destroy, |f| {
            // SAFETY: a live communicator of this context, given up here.
            unsafe { f(self.context, comm) }
        })
    }

    pub fn collective(
        &self,
        comm: *mut AnydevComm,
        stream: *mut AnydevStream,
        call: &AnydevCollectiveCall,
    ) -> Result<(), CallError> {
        self.call("collective", self.table.api.collective, |f| {
            // SAFETY: live context, communicator and stream; `call` and the
            // buffers it names live across the call.
            unsafe { f(self.context, comm, stream, call) }
        })
    }
}

impl Instance {
    /// Shuts the plugin down now, while buffers, streams and events may
    /// still be live: the process is exiting (`anydev::shutdown`). Waits
    /// for calls in flight; afterwards every call fails without reaching
    /// the plugin, so the handles' drops only let go of them. Once only.
    pub fn is_closed(&self) -> bool {
        *self.closed.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn close(&self) -> Result<(), CallError> {
        let mut closed = self.closed.write().unwrap_or_else(PoisonError::into_inner);
        if *closed || self.context.is_null() {
            return Ok(());
        }
        *closed = true;
        self.invoke("shutdown", None, self.table.api.shutdown, |f| {
            // SAFETY: the live context, given up here; the write lock
            // keeps every other call out, now and after.
            unsafe { f(self.context) }
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let closed = *self.closed.get_mut().unwrap_or_else(PoisonError::into_inner);
        if !self.context.is_null() && !closed {
            // A failed shutdown has nobody to report to; the context is gone either way.
            let _ = self.invoke("shutdown", None, self.table.api.shutdown, |f| {
                // SAFETY: the live context, given up here after every handle
                // that used it (they hold this instance alive).
                unsafe { f(self.context) }
            });
        }
    }
}
