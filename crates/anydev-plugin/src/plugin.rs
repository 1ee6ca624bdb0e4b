//! The safe trait a Rust plugin implements, and the plain data it returns.

use crate::codec::{ExtensionCall, TensorSpec};
use crate::Result;
use anydev_ops::{DType, Op, OpCode, TensorDType};
use anydev_plugin_abi::{
    AnydevVersion, ANYDEV_MEMORY_DEVICE, ANYDEV_MEMORY_HOST_PINNED, ANYDEV_MEMORY_MANAGED, ANYDEV_MEMORY_SYSTEM,
};

/// What `initialize` receives.
#[derive(Clone, Copy, Debug)]
pub struct InitArgs<'a> {
    /// The name the host registered the plugin under (its device kind).
    pub name: &'a str,
    /// The manifest's `options` as JSON text (`"{}"` when there are none).
    pub options_json: &'a str,
    /// The host's ABI version (same major as the plugin's).
    pub host_version: AnydevVersion,
}

/// Where an allocation lives (the ABI's `ANYDEV_MEMORY_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    Device,
    HostPinned,
    Managed,
    System,
}

impl MemoryKind {
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::Device,
        MemoryKind::HostPinned,
        MemoryKind::Managed,
        MemoryKind::System,
    ];

    pub const fn code(self) -> u32 {
        match self {
            MemoryKind::Device => ANYDEV_MEMORY_DEVICE,
            MemoryKind::HostPinned => ANYDEV_MEMORY_HOST_PINNED,
            MemoryKind::Managed => ANYDEV_MEMORY_MANAGED,
            MemoryKind::System => ANYDEV_MEMORY_SYSTEM,
        }
    }

    pub fn from_code(code: u32) -> Option<MemoryKind> {
        MemoryKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// Memory that another allocator owns, handed to [`Plugin::import`]: the
/// host guarantees that `len` bytes at `ptr` stay valid until the buffer
/// made from it is dropped, and drops that buffer only once no enqueued
/// work uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForeignMemory {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the memory is plain bytes that the host shares with the plugin's
// worker threads under the ABI's ordering rules; the pointer carries no
// thread affinity.
unsafe impl Send for ForeignMemory {}
// SAFETY: as for `Send`; shared access is ordered by streams and events.
unsafe impl Sync for ForeignMemory {}

impl ForeignMemory {
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes for as long
    /// as any buffer made from the value lives (the `buffer_import`
    /// contract).
    pub unsafe fn new(ptr: std::ptr::NonNull<u8>, len: usize) -> ForeignMemory {
        ForeignMemory { ptr, len }
    }

    pub fn ptr(&self) -> std::ptr::NonNull<u8> {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Descriptive properties of one device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Properties {
    pub name: String,
    pub vendor: String,
    pub driver: String,
    pub version: String,
    pub memory_bytes: u64,
}

/// A typed capability value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Bool(bool),
    I64(i64),
    F64(f64),
    Str(String),
    /// For the standard key `dtypes`, dtype codes ([`AttrValue::dtypes`]);
    /// for `peer_devices`, device indices of this plugin.
    I64List(Vec<i64>),
}

impl AttrValue {
    /// The value of the standard `dtypes` key.
    pub fn dtypes(dtypes: &[DType]) -> AttrValue {
        AttrValue::I64List(dtypes.iter().map(|d| i64::from(d.code())).collect())
    }
}

/// Memory accounting of one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    pub in_use: u64,
    /// Largest `in_use` since start-up or [`Plugin::reset_peak`].
    pub peak: u64,
    pub allocations: u64,
    pub limit: Option<u64>,
    /// `in_use` plus bytes cached for reuse; `None` reports unknown.
    pub reserved: Option<u64>,
    /// Free bytes on the device, where known.
    pub free: Option<u64>,
    /// The device's memory size, where known.
    pub total: Option<u64>,
}

/// A strided operand of an op call on this plugin's memory: a view of
/// `buffer` starting `byte_offset` bytes in, shape and strides in elements.
#[derive(Clone, Copy, Debug)]
pub struct PluginTensor<'a, B> {
    pub buffer: &'a B,
    pub byte_offset: usize,
    pub dtype: DType,
    pub shape: &'a [usize],
    pub strides: &'a [isize],
}

impl<B> TensorDType for PluginTensor<'_, B> {
    fn dtype(&self) -> DType {
        self.dtype
    }
}

impl<B> PluginTensor<'_, B> {
    /// The bytes `[start, end)` of the buffer the view can touch, or `None`
    /// when the layout is malformed or its arithmetic overflows. An empty
    /// view touches nothing (`start == end`).
    pub fn byte_span(&self) -> Option<(usize, usize)> {
        if self.shape.len() != self.strides.len() {
            return None;
        }
        if self.shape.contains(&0) {
            return Some((self.byte_offset, self.byte_offset));
        }
        let size = self.dtype.size() as i128;
        let mut below = 0i128;
        let mut above = 0i128;
        for (&n, &stride) in self.shape.iter().zip(self.strides) {
            let reach = (n as i128 - 1) * stride as i128 * size;
            if reach < 0 {
                below += reach;
            } else {
                above += reach;
            }
        }
        let first = self.byte_offset as i128 + below;
        let last = self.byte_offset as i128 + above + size;
        Some((usize::try_from(first).ok()?, usize::try_from(last).ok()?))
    }
}

/// A device plugin in Rust terms. Implement it, then export it with
/// [`crate::export_plugin!`]; the macro builds the C function table, turns
/// every `Err` into an ABI error object and every panic into an
/// `Internal` error carrying the panic message.
///
/// Devices are named by index (below [`Plugin::device_count`], checked by
/// the helper before any method sees it). Buffers, streams and events are
/// the plugin's own types: the helper boxes them into opaque handles and
/// drops them when the host frees, destroys or shuts down. Methods that
/// take a stream may return before the work completes, except
/// `copy_to_host`, which returns once the bytes are in `dst`.
pub trait Plugin: Sized + Send + Sync + 'static {
    type Buffer: Send + Sync + 'static;
    type Stream: Send + Sync + 'static;
    type Event: Send + Sync + 'static;

    /// Creates the plugin instance. Return an `Unavailable` error when the
    /// hardware is simply absent.
    fn initialize(args: &InitArgs<'_>) -> Result<Self>;

    /// Number of devices; must not change afterwards.
    fn device_count(&self) -> usize;

    /// Queried once per device and cached until shutdown.
    fn properties(&self, device: usize) -> Result<Properties>;

    /// Queried once per device and cached until shutdown.
    fn capabilities(&self, device: usize) -> Result<Vec<(String, AttrValue)>>;

    /// Whether `op` is implemented for `dtype` (see `Op::support_dtype`).
    fn supports(&self, device: usize, op: OpCode, dtype: DType) -> bool;

    /// The memory kinds `allocate` accepts.
    fn memory_kinds(&self, _device: usize) -> Vec<MemoryKind> {
        vec![MemoryKind::Device]
    }

    /// At least 256-byte aligned; an `OutOfMemory` error when it does not fit.
    fn allocate(&self, device: usize, bytes: usize, kind: MemoryKind) -> Result<Self::Buffer>;

    fn memory_stats(&self, device: usize) -> Result<MemoryStats>;

    /// The host address of the buffer's first byte when the host may
    /// dereference it directly (pinned, managed, system or host-accessible
    /// device memory). `None`, the default, keeps the host away from it.
    fn host_pointer(&self, _buffer: &Self::Buffer) -> Option<std::ptr::NonNull<u8>> {
        None
    }

    /// Wraps memory another allocator owns, of `kind`, as a buffer of
    /// `device` without copying; dropping the buffer must not free the
    /// memory. The host calls it only when the device's capabilities say
    /// it reaches `kind` (`pageable_memory_access` for system memory).
    /// The default refuses, and the host then copies instead of sharing.
    fn import(&self, _device: usize, _memory: ForeignMemory, kind: MemoryKind) -> Result<Self::Buffer> {
        Err(crate::PluginError::unimplemented(format!(
            "this plugin cannot use {kind:?} memory it did not allocate"
        )))
    }

    fn create_stream(&self, device: usize) -> Result<Self::Stream>;

    fn synchronize_stream(&self, stream: &Self::Stream) -> Result<()>;

    /// Waits for every stream of the device.
    fn synchronize(&self, device: usize) -> Result<()>;

    fn record_event(&self, stream: &Self::Stream) -> Result<Self::Event>;

    fn wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<()>;

    fn query_event(&self, event: &Self::Event) -> Result<bool>;

    fn synchronize_event(&self, event: &Self::Event) -> Result<()>;

    /// The device time in milliseconds from `start` to `end`, both
    /// completed. Implement it together with the `event_timing`
    /// capability; the default says it is unimplemented.
    fn event_elapsed(&self, _start: &Self::Event, _end: &Self::Event) -> Result<f64> {
        Err(crate::PluginError::unimplemented("this plugin does not time events"))
    }

    /// Gives memory `device` caches for reuse back to the system. The
    /// default caches nothing and does nothing.
    fn empty_cache(&self, _device: usize) -> Result<()> {
        Ok(())
    }

    /// Starts `device`'s peak again from its bytes in use now; the default
    /// says it is unimplemented.
    fn reset_peak(&self, _device: usize) -> Result<()> {
        Err(crate::PluginError::unimplemented(
            "this plugin cannot reset its memory peak",
        ))
    }

    fn copy_from_host(&self, stream: &Self::Stream, src: &[u8], dst: &Self::Buffer, dst_offset: usize) -> Result<()>;

    fn copy_to_host(&self, stream: &Self::Stream, src: &Self::Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()>;

    fn copy_between(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()>;

    fn fill(&self, stream: &Self::Stream, dst: &Self::Buffer, offset: usize, len: usize, pattern: &[u8]) -> Result<()>;

    /// Runs one op. Operands are views of buffers of this plugin (possibly
    /// of several of its devices; refusing those is up to the plugin).
    fn execute(&self, stream: &Self::Stream, op: &Op<'_, PluginTensor<'_, Self::Buffer>>) -> Result<()>;

    /// The named extension ops (`namespace::name`) the device implements,
    /// for libraries that define them on the host side (ABI 1.4). Asked
    /// once per device at load; the default is none, and then no extension
    /// call ever arrives.
    fn extension_ops(&self, _device: usize) -> Vec<String> {
        Vec::new()
    }

    /// Whether the device runs `call` (a listed op, with these operand
    /// dtypes and shapes and these attributes). The host asks before every
    /// [`Plugin::execute_extension`] and reports a refusal to the user as
    /// an error naming the op and the signature. The default accepts
    /// every call of a listed op.
    fn extension_supported(&self, _device: usize, _call: &ExtensionCall<'_, TensorSpec<'_>>) -> bool {
        true
    }

    /// Runs one extension op call, in `stream` order. The host has run the
    /// op's shape rule: the operands are contiguous row-major views from
    /// the first element, the outputs fresh and distinct; write every
    /// element of every output. An error's message reaches the user as
    /// written. The default says the op is unimplemented.
    fn execute_extension(
        &self,
        _stream: &Self::Stream,
        call: &ExtensionCall<'_, PluginTensor<'_, Self::Buffer>>,
    ) -> Result<()> {
        Err(crate::PluginError::unimplemented(format!(
            "this plugin does not implement the extension op {}",
            call.op
        )))
    }

    /// Whether the plugin moves its devices' memory between processes
    /// itself (ABI 1.6): `true` fills the table's collective calls, which
    /// then use [`Plugin::collectives`]. Keep the two in step.
    const COLLECTIVES: bool = false;

    /// The plugin's collectives, when [`Plugin::COLLECTIVES`] is true.
    fn collectives(&self) -> Option<&dyn crate::Collectives<Self::Buffer, Self::Stream>> {
        None
    }
}
