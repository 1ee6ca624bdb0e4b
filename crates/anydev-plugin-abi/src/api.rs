//! The function table a plugin exports.
//!
//! Conventions for every call below:
//!
//! * Every function pointer may be NULL: the call is unimplemented, and
//!   the host reports that cleanly. A field beyond `struct_size` is
//!   treated the same way.
//! * Every call except the `error_*` accessors returns an
//!   [`AnydevStatus`]: NULL on success, else an error the host frees with
//!   `error_destroy`. Out-parameters are written only on success.
//! * Pointer arguments are borrowed for the duration of the call unless
//!   stated otherwise; the plugin copies what it keeps.
//! * Every call may come from any thread, concurrently; a plugin
//!   synchronises internally. Calls that take a stream enqueue work in
//!   stream order and may return before it completes, except where the
//!   call says it blocks.
//! * Plugins never let a panic or C++ exception escape a call: that aborts
//!   the host process (the Rust helper crate catches panics for you).

use crate::{
    AnydevAttributeList, AnydevBuffer, AnydevComm, AnydevContext, AnydevDevice, AnydevDeviceProperties, AnydevError,
    AnydevEvent, AnydevInitArgs, AnydevMemoryStats, AnydevOpCall, AnydevStatus, AnydevStream, AnydevVersion,
};
use core::ffi::c_char;

/// The entry symbol's type: returns the plugin's table, which must stay
/// valid and unchanged until the library is unloaded. May return NULL when
/// the plugin cannot run at all.
pub type AnydevGetApiFn = unsafe extern "C" fn() -> *const AnydevPluginApi;

/// The plugin's function table. Fields are only ever appended; existing
/// ones never change meaning within a major version.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevPluginApi {
    /// `sizeof(AnydevPluginApi)` as the plugin was compiled.
    pub struct_size: usize,
    /// The ABI version the plugin was built against.
    pub version: AnydevVersion,
    pub reserved: u32,

    // --- errors -----------------------------------------------------------
    /// The error's `ANYDEV_ERROR_*` code. `error` stays owned by the caller.
    pub error_code: Option<unsafe extern "C" fn(error: *const AnydevError) -> i32>,
    /// The error's message, NUL-terminated UTF-8, owned by the error and
    /// valid until `error_destroy`.
    pub error_message: Option<unsafe extern "C" fn(error: *const AnydevError) -> *const c_char>,
    /// Frees an error returned by any call. Called exactly once per error.
    pub error_destroy: Option<unsafe extern "C" fn(error: *mut AnydevError)>,

    // --- lifecycle --------------------------------------------------------
    /// Creates the plugin instance. `args` is borrowed for the call. On
    /// success `*out_context` receives a context owned by the host until it
    /// passes it to `shutdown`. Errors with `ANYDEV_ERROR_UNAVAILABLE` when
    /// the hardware is simply absent, any other code when broken.
    pub initialize:
        Option<unsafe extern "C" fn(args: *const AnydevInitArgs, out_context: *mut *mut AnydevContext) -> AnydevStatus>,
    /// Destroys the context, at most once: after the host has freed every
    /// buffer and destroyed every stream and event it holds, or at process
    /// exit with some of them still live, which the plugin then releases
    /// itself (the host makes no call afterwards). Device handles, property
    /// strings and attribute lists die with it.
    pub shutdown: Option<unsafe extern "C" fn(context: *mut AnydevContext) -> AnydevStatus>,

    // --- devices ----------------------------------------------------------
    /// Writes the number of devices to `*out_count`. Constant for the
    /// context's lifetime.
    pub device_count: Option<unsafe extern "C" fn(context: *mut AnydevContext, out_count: *mut u32) -> AnydevStatus>,
    /// Writes the handle of device `index` (below the device count) to
    /// `*out_device`. The handle is owned by the context, valid until
    /// `shutdown`, and the same for every call with this index.
    pub get_device: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            index: u32,
            out_device: *mut *mut AnydevDevice,
        ) -> AnydevStatus,
    >,
    /// Fills `*out` (allocated by the host, `struct_size` set). Strings are
    /// owned by the plugin and valid until `shutdown`.
    pub device_properties: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            out: *mut AnydevDeviceProperties,
        ) -> AnydevStatus,
    >,
    /// Fills `*out` (allocated by the host, `struct_size` set) with the
    /// device's typed capabilities. The attribute array and everything it
    /// points at are owned by the plugin and valid until `shutdown`.
    pub device_capabilities: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            out: *mut AnydevAttributeList,
        ) -> AnydevStatus,
    >,
    /// Writes 1 to `*out_supported` when the device implements op
    /// `op_code` for dtype `dtype_code` (the op's support dtype, see
    /// `anydev_ops::Op::support_dtype`), else 0. Unknown codes are 0.
    pub op_supported: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            op_code: u32,
            dtype_code: u32,
            out_supported: *mut u8,
        ) -> AnydevStatus,
    >,
    /// Writes the memory kinds `allocate` accepts as a bitmask of
    /// `1 << ANYDEV_MEMORY_*`. NULL means device memory only.
    pub memory_kinds: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            out_mask: *mut u32,
        ) -> AnydevStatus,
    >,
    /// Blocks until all work on every stream of the device completes.
    pub device_synchronize:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, device: *mut AnydevDevice) -> AnydevStatus>,

    // --- memory -----------------------------------------------------------
    /// Allocates `size` bytes of `memory_kind`, aligned to at least 256
    /// bytes (zero bytes is valid). On success `*out_buffer` is owned by
    /// the host until `free`. Fails with `ANYDEV_ERROR_OUT_OF_MEMORY` when
    /// the memory or the device's limit is exhausted.
    pub allocate: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            size: u64,
            memory_kind: u32,
            out_buffer: *mut *mut AnydevBuffer,
        ) -> AnydevStatus,
    >,
    /// Frees a buffer. Takes ownership of `buffer`. On a device that
    /// declares `async_execution`, the host calls it only once no enqueued
    /// work uses the buffer any more, or at once when the device also
    /// declares `stream_ordered_free` (it then keeps the memory until that
    /// work is done).
    pub free: Option<unsafe extern "C" fn(context: *mut AnydevContext, buffer: *mut AnydevBuffer) -> AnydevStatus>,
    /// Fills `*out` (allocated by the host, `struct_size` set).
    pub memory_stats: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            out: *mut AnydevMemoryStats,
        ) -> AnydevStatus,
    >,

    // --- streams and events -----------------------------------------------
    /// Creates a stream on `device`; `*out_stream` is owned by the host
    /// until `stream_destroy`. The eight stream and event calls are all
    /// present or all NULL; without them calls taking a stream get NULL,
    /// and the host's events are complete once recorded (it calls
    /// `device_synchronize` to record one).
    pub stream_create: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            out_stream: *mut *mut AnydevStream,
        ) -> AnydevStatus,
    >,
    /// Destroys a stream after its enqueued work completes. Takes ownership.
    pub stream_destroy:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, stream: *mut AnydevStream) -> AnydevStatus>,
    /// Blocks until all work enqueued on `stream` completes.
    pub stream_synchronize:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, stream: *mut AnydevStream) -> AnydevStatus>,
    /// Records an event after the work enqueued so far on `stream`;
    /// `*out_event` is owned by the host until `event_destroy`.
    pub event_record: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            out_event: *mut *mut AnydevEvent,
        ) -> AnydevStatus,
    >,
    /// Makes later work on `stream` wait for `event` (which may come from
    /// another stream or device of this plugin). Both stay owned by the host.
    pub event_wait: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            event: *mut AnydevEvent,
        ) -> AnydevStatus,
    >,
    /// Writes 1 to `*out_done` when the event has completed, else 0;
    /// never blocks.
    pub event_query: Option<
        unsafe extern "C" fn(context: *mut AnydevContext, event: *mut AnydevEvent, out_done: *mut u8) -> AnydevStatus,
    >,
    /// Blocks until the event completes.
    pub event_synchronize:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, event: *mut AnydevEvent) -> AnydevStatus>,
    /// Destroys an event. Takes ownership.
    pub event_destroy:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, event: *mut AnydevEvent) -> AnydevStatus>,

    // --- data movement ----------------------------------------------------
    /// Copies `size` host bytes from `src` into `dst` at `dst_offset`.
    /// `src` is borrowed only until the call returns: the plugin has read
    /// (or staged) it by then, the device-side write may still be in flight.
    pub copy_host_to_device: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            src: *const u8,
            dst: *mut AnydevBuffer,
            dst_offset: u64,
            size: u64,
        ) -> AnydevStatus,
    >,
    /// Copies `size` bytes from `src` at `src_offset` to host memory `dst`.
    /// Blocks: `dst` holds the data when the call returns.
    pub copy_device_to_host: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            src: *mut AnydevBuffer,
            src_offset: u64,
            dst: *mut u8,
            size: u64,
        ) -> AnydevStatus,
    >,
    /// Copies `size` bytes between two buffers of this plugin, possibly on
    /// different devices (a peer copy), in `stream`'s order. NULL: the host
    /// copies through host memory with the two host copies.
    pub copy_device_to_device: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            src: *mut AnydevBuffer,
            src_offset: u64,
            dst: *mut AnydevBuffer,
            dst_offset: u64,
            size: u64,
        ) -> AnydevStatus,
    >,
    /// Fills `size` bytes of `dst` from `offset` with repetitions of the
    /// `pattern_size`-byte `pattern` (`size` is a multiple of it). `pattern`
    /// is borrowed only for the call.
    pub fill: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            dst: *mut AnydevBuffer,
            offset: u64,
            size: u64,
            pattern: *const u8,
            pattern_size: u64,
        ) -> AnydevStatus,
    >,

    // --- compute ----------------------------------------------------------
    /// Enqueues one primitive op. `call` and everything it points at are
    /// borrowed for the call only. The host has checked that every operand
    /// lies inside its buffer and that the output overlaps no input. An
    /// op/dtype pair the plugin does not implement is
    /// `ANYDEV_ERROR_UNIMPLEMENTED`.
    pub execute: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            call: *const AnydevOpCall,
        ) -> AnydevStatus,
    >,

    // --- unified memory (ABI 1.1) -----------------------------------------
    /// Writes to `*out_ptr` the host address of the buffer's first byte when
    /// the host may dereference it directly (host-pinned, managed or system
    /// memory, or device memory the device reports as host-accessible),
    /// else NULL. Constant for the buffer's lifetime.
    pub buffer_host_pointer: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            buffer: *mut AnydevBuffer,
            out_ptr: *mut *mut u8,
        ) -> AnydevStatus,
    >,
    /// Makes `size` bytes at host address `ptr`, memory of kind
    /// `memory_kind` that another allocator owns (plain host memory, or a
    /// host-reachable allocation of another device), usable as a buffer of
    /// `device` without copying. The host calls it only when the device's
    /// capabilities say it reaches that kind, keeps the memory alive until
    /// it has freed the buffer, and frees the buffer only once no enqueued
    /// work uses it. `free` releases the handle, never the memory. `ptr`
    /// is the memory's own address, with no alignment guaranteed: memory
    /// lent to anydev (`Array::from_foreign_host`, such as a NumPy array's,
    /// often only 16-byte aligned) is passed as its owner laid it out. A
    /// plugin whose device cannot use the memory (the simulator takes only
    /// 256-byte aligned memory) refuses it with
    /// `ANYDEV_ERROR_INVALID_ARGUMENT`: the host then copies the data
    /// instead where a copy will do (`to_device` with unified memory on),
    /// and reports the error where sharing was asked for (`share_to`).
    /// Any other error fails the transfer.
    pub buffer_import: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            ptr: *mut u8,
            size: u64,
            memory_kind: u32,
            out_buffer: *mut *mut AnydevBuffer,
        ) -> AnydevStatus,
    >,

    // --- full signatures (ABI 1.2) ----------------------------------------
    /// Writes 1 to `*out_supported` when the device runs `signature.op_code`
    /// with exactly these input and output dtypes, else 0. When present,
    /// the host asks it before every `execute` (after `op_supported` said
    /// yes for the support dtype) and never sends a call it answered 0 for.
    /// NULL: `op_supported` alone decides, and `execute` returns
    /// `ANYDEV_ERROR_UNIMPLEMENTED` for signatures it cannot run.
    pub op_supported_signature: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            signature: *const crate::AnydevOpSignature,
            out_supported: *mut u8,
        ) -> AnydevStatus,
    >,

    // --- extension ops (ABI 1.4) ------------------------------------------
    /// Fills `*out` (allocated by the host, `struct_size` set) with the
    /// names of the extension ops (`namespace::name`) the device
    /// implements; names and array are owned by the plugin and valid until
    /// `shutdown`. The host asks once per device, right after
    /// `initialize`, and keeps the list; an error fails the plugin's load.
    /// NULL: the device implements none, and the other two calls are never
    /// made.
    pub extension_ops: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            out: *mut crate::AnydevExtensionOpList,
        ) -> AnydevStatus,
    >,
    /// Writes 1 to `*out_supported` when the device runs `call` (an op it
    /// listed, with these dtypes, shapes and attributes; every tensor's
    /// `buffer` NULL), else 0. The host asks before every
    /// `extension_execute` and never sends a call answered 0. NULL: every
    /// listed op accepts whatever its shape rule accepted, and
    /// `extension_execute` returns `ANYDEV_ERROR_UNIMPLEMENTED` for what it
    /// cannot run.
    pub extension_supported: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            call: *const crate::AnydevExtensionCall,
            out_supported: *mut u8,
        ) -> AnydevStatus,
    >,
    /// Enqueues one extension op call in `stream`'s order, like `execute`;
    /// `call` and everything it points at are borrowed for the call only.
    /// Called only for an op the device listed, after
    /// `extension_supported` (if present) said yes.
    pub extension_execute: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            stream: *mut AnydevStream,
            call: *const crate::AnydevExtensionCall,
        ) -> AnydevStatus,
    >,

    // --- memory and timing control (ABI 1.5) --------------------------------
    /// Gives memory the device caches for reuse back to the system; memory
    /// in use is untouched. NULL: the plugin caches nothing.
    pub empty_cache:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, device: *mut AnydevDevice) -> AnydevStatus>,
    /// Starts the device's `peak` again from its bytes in use now. NULL
    /// (or `ANYDEV_ERROR_UNIMPLEMENTED`): the peak cannot be reset.
    pub memory_reset_peak:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, device: *mut AnydevDevice) -> AnydevStatus>,
    /// Writes to `*out_ms` the device time in milliseconds from `start` to
    /// `end`, two completed events of one device (the host synchronizes
    /// both first). Asked only of devices whose `event_timing` capability
    /// is true.
    pub event_elapsed: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            start: *mut AnydevEvent,
            end: *mut AnydevEvent,
            out_ms: *mut f64,
        ) -> AnydevStatus,
    >,

    // --- collectives (ABI 1.6) ------------------------------------------------
    // All five or none: without them the host moves the device's arrays
    // between processes itself, through host memory. The header describes
    // the bootstrap (one rank's `comm_id` sent to the others over MPI) and
    // what each collective reads and writes.
    /// Fills `*out_id` with the id of a new communicator.
    pub comm_id:
        Option<unsafe extern "C" fn(context: *mut AnydevContext, out_id: *mut crate::AnydevCommId) -> AnydevStatus>,
    /// Joins rank `args.rank` of the communicator `args.id` names, on
    /// `device`; blocks until all `args.nranks` ranks joined (from other
    /// processes, or other threads of this one), or fails after
    /// `args.timeout_ms`.
    pub comm_init: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            device: *mut AnydevDevice,
            args: *const crate::AnydevCommInitArgs,
            out_comm: *mut *mut AnydevComm,
        ) -> AnydevStatus,
    >,
    /// Makes pending and later collectives on `comm` fail soon, without
    /// waiting for peers; may be called while another thread is blocked in
    /// one. The host destroys the communicator afterwards.
    pub comm_abort: Option<unsafe extern "C" fn(context: *mut AnydevContext, comm: *mut AnydevComm) -> AnydevStatus>,
    /// Destroys `comm` once no enqueued work uses it (or after
    /// `comm_abort`); takes ownership.
    pub comm_destroy: Option<unsafe extern "C" fn(context: *mut AnydevContext, comm: *mut AnydevComm) -> AnydevStatus>,
    /// Enqueues one collective on `stream`, a stream of the communicator's
    /// device, in stream order; `call` is borrowed for the call only.
    pub collective: Option<
        unsafe extern "C" fn(
            context: *mut AnydevContext,
            comm: *mut AnydevComm,
            stream: *mut AnydevStream,
            call: *const crate::AnydevCollectiveCall,
        ) -> AnydevStatus,
    >,
}
