//! Argument and result structs. Every struct that may grow starts with
//! `struct_size`; see the crate docs for how readers treat it.

use crate::{AnydevBuffer, AnydevVersion, ANYDEV_COMM_ID_BYTES};
use core::ffi::c_char;
use core::ptr;

/// Arguments of `initialize`. Allocated by the host; valid only during
/// the call (the plugin copies what it keeps).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevInitArgs {
    pub struct_size: usize,
    /// The ABI version of the host.
    pub host_version: AnydevVersion,
    pub reserved: u32,
    /// The name the plugin is registered under (its device kind),
    /// NUL-terminated UTF-8.
    pub plugin_name: *const c_char,
    /// The manifest's `options` as JSON text (`{}` when absent),
    /// NUL-terminated UTF-8; never NULL.
    pub options_json: *const c_char,
}

/// Descriptive properties of one device, filled by `device_properties`.
/// The host allocates it and sets `struct_size`; the plugin writes the
/// fields inside both sizes. Strings are NUL-terminated UTF-8 owned by the
/// plugin, valid until `shutdown`; NULL reads as empty.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevDeviceProperties {
    pub struct_size: usize,
    pub name: *const c_char,
    pub vendor: *const c_char,
    pub driver: *const c_char,
    pub version: *const c_char,
    /// Memory the device can allocate from, in bytes.
    pub memory_bytes: u64,
}

/// One typed capability. Which value field is meaningful depends on `kind`
/// (`ANYDEV_ATTR_*`). Strings and lists are owned by the plugin.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevAttribute {
    /// The key (`"f64"`, `"vendor.key"`), NUL-terminated UTF-8.
    pub name: *const c_char,
    pub kind: u32,
    pub reserved: u32,
    /// `ANYDEV_ATTR_BOOL` (0 or 1) and `ANYDEV_ATTR_I64`.
    pub int_value: i64,
    /// `ANYDEV_ATTR_F64`.
    pub float_value: f64,
    /// `ANYDEV_ATTR_STRING`, NUL-terminated UTF-8.
    pub string_value: *const c_char,
    /// `ANYDEV_ATTR_I64_LIST`: `list_len` values.
    pub list: *const i64,
    pub list_len: usize,
}

/// The capabilities of one device, filled by `device_capabilities`. The
/// host allocates it and sets `struct_size`; the array it points at is
/// owned by the plugin and valid until `shutdown`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevAttributeList {
    pub struct_size: usize,
    pub attributes: *const AnydevAttribute,
    pub count: usize,
}

/// Memory accounting of one device, filled by `memory_stats`. The host
/// allocates it and sets `struct_size`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevMemoryStats {
    pub struct_size: usize,
    /// Bytes currently allocated.
    pub in_use: u64,
    /// Largest `in_use` since `initialize` or `memory_reset_peak`.
    pub peak: u64,
    /// Live allocations.
    pub allocations: u64,
    /// Allocation limit in bytes, or `ANYDEV_NO_LIMIT`.
    pub limit: u64,
    /// ABI 1.5: bytes held from the system, `in_use` plus what the plugin
    /// caches for reuse, or `ANYDEV_UNKNOWN_BYTES`. The host reads the 1.5
    /// fields only from plugins whose table is 1.5 or later.
    pub reserved: u64,
    /// ABI 1.5: free bytes on the device, or `ANYDEV_UNKNOWN_BYTES`.
    pub free: u64,
    /// ABI 1.5: the device's memory size, or `ANYDEV_UNKNOWN_BYTES`.
    pub total: u64,
}

/// A strided array operand: a view of `buffer` starting `byte_offset`
/// bytes in, `ndim` dims, shape and strides counted in elements (strides
/// may be zero, for broadcasting, or negative). The arrays are owned by
/// the host and valid only during the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevTensor {
    pub buffer: *mut AnydevBuffer,
    pub byte_offset: u64,
    /// A dtype code.
    pub dtype: u32,
    pub ndim: u32,
    pub shape: *const u64,
    pub strides: *const i64,
}

/// A scalar operand: a dtype code and the value's little-endian bytes
/// zero-extended to 64 bits (`anydev_ops::Scalar::to_bits`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevScalar {
    pub dtype: u32,
    pub reserved: u32,
    pub bits: u64,
}

/// One input of an op: an array or a scalar, told apart by `kind`
/// (`ANYDEV_OPERAND_*`); the other member is ignored.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevOperand {
    pub kind: u32,
    pub reserved: u32,
    pub tensor: AnydevTensor,
    pub scalar: AnydevScalar,
}

/// One primitive op call, passed to `execute`. Allocated by the host,
/// valid only during the call: a plugin that runs the op later copies the
/// call (shapes, strides and axes included) before returning.
///
/// How each op code fills it (inputs in argument order):
///
/// | op | inputs | axes | flags / params |
/// |----|--------|------|----------------|
/// | unary ops, `astype`, `copy`, `nonzero` | x | | |
/// | binary ops | lhs, rhs (each tensor or scalar) | | |
/// | `where` | cond, x, y (x and y tensor or scalar) | | |
/// | reductions | x | the reduced axes, sorted | |
/// | scans | x | [axis] | |
/// | `fill` | value (scalar) | | |
/// | `arange` | | | `params_f64` = [start, step] |
/// | `random` | | | `distribution`, `params_f64`, `params_u64` = [seed, counter] |
/// | `take` | x, indices | [axis] | |
/// | `matmul` | a, b | | |
/// | `sort`, `argsort` | x | [axis] | `ANYDEV_OP_FLAG_DESCENDING` |
/// | `searchsorted` | sorted, values | | `ANYDEV_OP_FLAG_RIGHT` |
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevOpCall {
    pub struct_size: usize,
    /// An op code (`anydev_ops::OpCode::code`).
    pub op_code: u32,
    /// `ANYDEV_OP_FLAG_*` bits.
    pub flags: u32,
    /// The one output every op writes.
    pub output: AnydevTensor,
    pub inputs: *const AnydevOperand,
    pub num_inputs: usize,
    pub axes: *const u64,
    pub num_axes: usize,
    /// `ANYDEV_DISTRIBUTION_*` for `random`, else 0.
    pub distribution: u32,
    pub reserved: u32,
    pub params_f64: [f64; 2],
    pub params_u64: [u64; 2],
}

/// The full signature of an op call, for `op_supported_signature` (ABI
/// 1.2): the op, the output's dtype and each input's dtype in argument
/// order, exactly as the call's `output.dtype` and `inputs[i]` (tensor or
/// scalar) would carry them. Allocated by the host, borrowed for the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevOpSignature {
    pub struct_size: usize,
    pub op_code: u32,
    pub output_dtype: u32,
    pub input_dtypes: *const u32,
    pub num_inputs: usize,
}

/// The extension ops a device implements, filled by `extension_ops` (ABI
/// 1.4). The host allocates it and sets `struct_size`; the array of names
/// and the names (NUL-terminated UTF-8, `namespace::name`) are owned by
/// the plugin and valid until `shutdown`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevExtensionOpList {
    pub struct_size: usize,
    pub names: *const *const c_char,
    pub count: usize,
}

/// One call of a named extension op (ABI 1.4), for `extension_supported`
/// and `extension_execute`. Allocated by the host, borrowed for the call.
///
/// The host has checked the call against the op's definition and run its
/// shape rule: `inputs` are the call's arrays in argument order, `outputs`
/// the arrays the shape rule asked for, every one contiguous row-major
/// from `byte_offset` (strides given all the same), the outputs fresh and
/// distinct from the inputs and each other. `attributes` are the op's
/// typed attributes, one per declared name: `I64`, `F64`, `BOOL`,
/// `STRING`, `DTYPE` (a dtype code in `int_value`) or `SHAPE` (`list`).
/// For `extension_supported` every tensor's `buffer` is NULL.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevExtensionCall {
    pub struct_size: usize,
    /// The op's name, NUL-terminated UTF-8, as the device listed it.
    pub op_name: *const c_char,
    pub inputs: *const AnydevTensor,
    pub num_inputs: usize,
    pub outputs: *const AnydevTensor,
    pub num_outputs: usize,
    pub attributes: *const AnydevAttribute,
    pub num_attributes: usize,
}

/// Values every field of which is zero (NULL pointers, no function, zero
/// numbers): the starting point readers copy a versioned struct's known
/// prefix over, and writers fill in.
pub trait Zeroed: Sized {
    fn zeroed() -> Self;
}

macro_rules! zeroed {
    ($($t:ty),*) => {$(
        impl Zeroed for $t {
            fn zeroed() -> Self {
                // SAFETY: every field of this #[repr(C)] struct is an
                // integer, a float, a raw pointer, an `Option` of a function
                // pointer or a struct of those: all valid as all-zero bits.
                unsafe { core::mem::zeroed() }
            }
        }
    )*};
}

zeroed!(
    AnydevInitArgs,
    AnydevDeviceProperties,
    AnydevAttribute,
    AnydevAttributeList,
    AnydevMemoryStats,
    AnydevTensor,
    AnydevScalar,
    AnydevOperand,
    AnydevOpCall,
    AnydevOpSignature,
    AnydevExtensionOpList,
    AnydevExtensionCall,
    AnydevCommInitArgs,
    AnydevCollectiveCall,
    crate::AnydevPluginApi
);

/// A struct whose first field is `struct_size`.
pub trait Versioned: Zeroed {
    /// A zeroed value with `struct_size` set to this version's size.
    fn new_sized() -> Self;
}

macro_rules! versioned {
    ($($t:ty),*) => {$(
        impl Versioned for $t {
            fn new_sized() -> Self {
                let mut v = <$t as Zeroed>::zeroed();
                v.struct_size = core::mem::size_of::<$t>();
                v
            }
        }
    )*};
}

versioned!(
    AnydevInitArgs,
    AnydevDeviceProperties,
    AnydevAttributeList,
    AnydevMemoryStats,
    AnydevOpCall,
    AnydevOpSignature,
    AnydevExtensionOpList,
    AnydevExtensionCall,
    AnydevCommInitArgs,
    AnydevCollectiveCall,
    crate::AnydevPluginApi
);

/// Reads a versioned struct written by the other side: copies the first
/// `min(src.struct_size, size_of::<T>())` bytes, rounded down to `T`'s
/// alignment, over a zeroed `T`, so fields the writer did not know read as
/// zero (NULL, "unimplemented") and nothing past the writer's struct is
/// read. Every real `sizeof` is a multiple of the alignment; a size that is
/// not would otherwise copy part of a pointer, which then looks present.
///
/// Returns `None` when `src` is NULL or its `struct_size` is smaller than
/// the `struct_size` field itself.
///
/// # Safety
///
/// `src` is NULL or points at readable memory whose first `usize` is its
/// own size in bytes, all of which is readable.
pub unsafe fn read_versioned<T: Versioned>(src: *const T) -> Option<T> {
    if src.is_null() {
        return None;
    }
    // SAFETY: the caller guarantees `src` starts with a readable `usize`.
    let declared = unsafe { ptr::read_unaligned(src.cast::<usize>()) };
    if declared < core::mem::size_of::<usize>() {
        return None;
    }
    let align = core::mem::align_of::<T>();
    let len = declared.min(core::mem::size_of::<T>()) / align * align;
    let mut out = T::zeroed();
    // SAFETY: `len` bytes are readable at `src` (they lie inside the
    // declared size) and writable at `out` (at most `size_of::<T>()`); the
    // two do not overlap. Every prefix of zeroed-or-copied fields is a
    // valid `T` because each field type accepts any bit pattern the other
    // side may write at that offset (integers, pointers, function
    // pointers that are either NULL or valid).
    unsafe { ptr::copy_nonoverlapping(src.cast::<u8>(), (&mut out as *mut T).cast::<u8>(), len) };
    Some(out)
}

/// Writes `value` to a versioned struct allocated by the other side: only
/// the first `min(dst.struct_size, size_of::<T>())` bytes are written, and
/// `dst.struct_size` keeps the other side's value.
///
/// Returns `false` (writing nothing) when `dst` is NULL or declares a size
/// smaller than its `struct_size` field.
///
/// # Safety
///
/// `dst` is NULL or points at writable memory whose first `usize` is its
/// own size in bytes, all of which is writable.
pub unsafe fn write_versioned<T: Versioned>(dst: *mut T, value: &T) -> bool {
    if dst.is_null() {
        return false;
    }
    // SAFETY: the caller guarantees `dst` starts with a readable `usize`.
    let declared = unsafe { ptr::read_unaligned(dst.cast::<usize>()) };
    let word = core::mem::size_of::<usize>();
    if declared < word {
        return false;
    }
    let align = core::mem::align_of::<T>();
    let len = declared.min(core::mem::size_of::<T>()) / align * align;
    // SAFETY: bytes `word..len` lie inside both `value` and the memory the
    // caller guarantees writable at `dst`; `value` is a separate object.
    unsafe {
        ptr::copy_nonoverlapping(
            (value as *const T).cast::<u8>().add(word),
            dst.cast::<u8>().add(word),
            len - word,
        )
    };
    true
}

/// An opaque communicator id (ABI 1.6), made by `comm_id` on one rank and
/// copied unchanged to the others by the host. Fixed forever.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnydevCommId {
    pub bytes: [u8; ANYDEV_COMM_ID_BYTES],
}

impl Default for AnydevCommId {
    fn default() -> AnydevCommId {
        AnydevCommId {
            bytes: [0; ANYDEV_COMM_ID_BYTES],
        }
    }
}

/// Arguments of `comm_init` (ABI 1.6); allocated by the host, borrowed for
/// the call.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevCommInitArgs {
    pub struct_size: usize,
    pub id: AnydevCommId,
    /// The number of ranks, at least 1.
    pub nranks: u32,
    /// This rank, below `nranks`; each rank joins exactly once.
    pub rank: u32,
    /// How long to wait for the other ranks to join before failing.
    pub timeout_ms: u64,
}

/// One collective (ABI 1.6); allocated by the host and borrowed for the
/// call. Buffers hold dense elements of `dtype` from their byte offsets;
/// `count` is per rank as the header's table says (`n * count` elements
/// on the gathered or scattered side). The host has checked every range,
/// that send and recv do not overlap, and that both buffers belong to the
/// communicator's device.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AnydevCollectiveCall {
    pub struct_size: usize,
    /// `ANYDEV_COLLECTIVE_*`.
    pub kind: u32,
    /// `ANYDEV_DTYPE_*`.
    pub dtype: u32,
    /// `ANYDEV_REDUCE_*` for all-reduce and reduce-scatter, else 0.
    pub reduce_op: u32,
    /// Broadcast: the root; send and recv: the other rank; else 0.
    pub peer: u32,
    /// NULL for recv, and for broadcast on every rank but the root.
    pub send: *mut AnydevBuffer,
    pub send_offset: u64,
    /// NULL for send.
    pub recv: *mut AnydevBuffer,
    pub recv_offset: u64,
    pub count: u64,
}
