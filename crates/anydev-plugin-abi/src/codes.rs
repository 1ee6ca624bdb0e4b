//! Numeric codes that cross the boundary. Dtype and op codes are those of
//! the op set (`anydev_ops::DType::code`, `anydev_ops::OpCode::code`) and
//! are listed for C in the header; the codes below belong to the ABI.

/// Error codes ([`crate::AnydevError`]'s `code`).
pub type AnydevErrorCode = i32;
/// The call (or the op/dtype pair) is not implemented by this plugin.
pub const ANYDEV_ERROR_UNIMPLEMENTED: AnydevErrorCode = 1;
/// An argument is malformed (bad handle kind, range outside a buffer, ...).
pub const ANYDEV_ERROR_INVALID_ARGUMENT: AnydevErrorCode = 2;
/// An allocation did not fit the device's memory or its limit.
pub const ANYDEV_ERROR_OUT_OF_MEMORY: AnydevErrorCode = 3;
/// Something broke inside the plugin (including a caught panic).
pub const ANYDEV_ERROR_INTERNAL: AnydevErrorCode = 4;
/// The hardware, driver or device is not there (from `initialize`: the
/// plugin is unavailable rather than broken).
pub const ANYDEV_ERROR_UNAVAILABLE: AnydevErrorCode = 5;

/// Memory kinds (`allocate`'s `memory_kind`; `memory_kinds` reports a
/// bitmask of `1 << kind`).
pub type AnydevMemoryKind = u32;
/// Device-only memory.
pub const ANYDEV_MEMORY_DEVICE: AnydevMemoryKind = 1;
/// Page-locked host memory the device reaches by DMA.
pub const ANYDEV_MEMORY_HOST_PINNED: AnydevMemoryKind = 2;
/// Memory that migrates between host and device on demand.
pub const ANYDEV_MEMORY_MANAGED: AnydevMemoryKind = 3;
/// Plain pageable host memory.
pub const ANYDEV_MEMORY_SYSTEM: AnydevMemoryKind = 4;

/// Attribute value kinds ([`crate::AnydevAttribute`]'s `kind`).
pub type AnydevAttributeKind = u32;
/// `int_value` is 0 or 1.
pub const ANYDEV_ATTR_BOOL: AnydevAttributeKind = 1;
/// `int_value`.
pub const ANYDEV_ATTR_I64: AnydevAttributeKind = 2;
/// `float_value`.
pub const ANYDEV_ATTR_F64: AnydevAttributeKind = 3;
/// `string_value` (UTF-8, NUL-terminated).
pub const ANYDEV_ATTR_STRING: AnydevAttributeKind = 4;
/// `list` of `list_len` values. The standard key `dtypes` is a list of
/// dtype codes; `peer_devices` a list of device indices of this plugin.
pub const ANYDEV_ATTR_I64_LIST: AnydevAttributeKind = 5;
/// `int_value` is a dtype code (ABI 1.4; extension-call attributes).
pub const ANYDEV_ATTR_DTYPE: AnydevAttributeKind = 6;
/// `list` of `list_len` dimensions (ABI 1.4; extension-call attributes).
pub const ANYDEV_ATTR_SHAPE: AnydevAttributeKind = 7;

/// Operand kinds ([`crate::AnydevOperand`]'s `kind`).
pub type AnydevOperandKind = u32;
/// The operand is the array `tensor`.
pub const ANYDEV_OPERAND_TENSOR: AnydevOperandKind = 1;
/// The operand is the value `scalar` (placement rule 4: scalars have no device).
pub const ANYDEV_OPERAND_SCALAR: AnydevOperandKind = 2;

/// [`crate::AnydevOpCall`] `flags`: sort or argsort in descending order.
pub const ANYDEV_OP_FLAG_DESCENDING: u32 = 1 << 0;
/// [`crate::AnydevOpCall`] `flags`: searchsorted returns the right side.
pub const ANYDEV_OP_FLAG_RIGHT: u32 = 1 << 1;

/// [`crate::AnydevOpCall`] `distribution` for `random`: uniform on
/// `[params_f64[0], params_f64[1])`.
pub const ANYDEV_DISTRIBUTION_UNIFORM: u32 = 1;
/// Normal with mean `params_f64[0]` and standard deviation `params_f64[1]`.
pub const ANYDEV_DISTRIBUTION_NORMAL: u32 = 2;

/// [`crate::AnydevMemoryStats`] `limit` when the device enforces none.
pub const ANYDEV_NO_LIMIT: u64 = u64::MAX;

/// A byte count the plugin does not know (the 1.5 memory-stats fields).
pub const ANYDEV_UNKNOWN_BYTES: u64 = u64::MAX;

/// [`crate::AnydevCollectiveCall`] `kind` (ABI 1.6).
pub type AnydevCollectiveKind = u32;
/// Every rank gets the reduction of every rank's `count` elements.
pub const ANYDEV_COLLECTIVE_ALL_REDUCE: AnydevCollectiveKind = 1;
/// Every rank gets the root's (`peer`'s) `count` elements.
pub const ANYDEV_COLLECTIVE_BROADCAST: AnydevCollectiveKind = 2;
/// Every rank gets every rank's `count` elements, in rank order.
pub const ANYDEV_COLLECTIVE_ALL_GATHER: AnydevCollectiveKind = 3;
/// Rank `r` gets block `r` (of `count` elements) of the reduction.
pub const ANYDEV_COLLECTIVE_REDUCE_SCATTER: AnydevCollectiveKind = 4;
/// Block `i` of rank `r`'s send goes to rank `i`, as its block `r`.
pub const ANYDEV_COLLECTIVE_ALL_TO_ALL: AnydevCollectiveKind = 5;
/// `count` elements to rank `peer`.
pub const ANYDEV_COLLECTIVE_SEND: AnydevCollectiveKind = 6;
/// `count` elements from rank `peer`.
pub const ANYDEV_COLLECTIVE_RECV: AnydevCollectiveKind = 7;

/// [`crate::AnydevCollectiveCall`] `reduce_op` (ABI 1.6). On bool, sum and
/// max are logical or, prod and min logical and; integers wrap; f16 and
/// bf16 accumulate in f32 and round once; min and max propagate NaN and
/// are not defined for complex dtypes. Ranks combine in rank order.
pub type AnydevReduceOp = u32;
pub const ANYDEV_REDUCE_SUM: AnydevReduceOp = 1;
pub const ANYDEV_REDUCE_PROD: AnydevReduceOp = 2;
pub const ANYDEV_REDUCE_MIN: AnydevReduceOp = 3;
pub const ANYDEV_REDUCE_MAX: AnydevReduceOp = 4;

/// Bytes in an [`crate::AnydevCommId`].
pub const ANYDEV_COMM_ID_BYTES: usize = 128;
