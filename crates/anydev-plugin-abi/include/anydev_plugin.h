/*
 * anydev_plugin.h — the stable C ABI between anydev and device plugins.
 *
 * A plugin is a shared library exporting one symbol:
 *
 *     const AnydevPluginApi *anydev_plugin_get_api(void);
 *
 * It returns a pointer to a function table that stays valid and unchanged
 * until the library is unloaded (normally a static const object).
 *
 * Compatibility rules
 *   - The table starts with struct_size and {major, minor}. The host
 *     requires the same major version; a newer or older minor works. The
 *     table's version is the one that counts: a manifest's "abi_version"
 *     only lets the host refuse another major before opening the library.
 *   - A function pointer that is NULL, or that lies beyond the table's
 *     struct_size, means "unimplemented". The host never reads past
 *     struct_size. The REQUIRED calls (marked below) must be present: a
 *     table without one is refused at load, naming every missing call.
 *     Two groups of optional calls go together: the eight stream and event
 *     calls (stream_create to event_destroy) and the five collective calls
 *     (ABI 1.6). A table with part of a group is refused at load too,
 *     naming the calls of the group it lacks.
 *   - struct_size rules. Structs that may grow start with struct_size, set
 *     by whoever allocated them to sizeof as it was compiled
 *     (ANYDEV_STRUCT_INIT does it); a reader uses a field only when
 *     ANYDEV_HAS_FIELD says the writer's struct_size covers it, and
 *     fields beyond it read as zero/NULL. Fields are only ever appended.
 *     AnydevVersion, AnydevAttribute, AnydevTensor, AnydevScalar and
 *     AnydevOperand have no struct_size and never change within major 1;
 *     a later minor version that needs more adds a new struct instead.
 *
 * Lifecycle
 *   initialize -> device_count/get_device -> any calls -> shutdown. The
 *   host calls shutdown at most once per context, in one of two ways:
 *   - when the runtime that loaded the plugin is dropped, after it has
 *     freed every buffer and destroyed every event and every stream it
 *     created (including the one default stream per device it creates at
 *     initialisation);
 *   - at process exit, when the program shuts the process-wide runtime
 *     down (anydev::shutdown(); Python's anydev does it at interpreter
 *     exit, the anydev command before it exits): after device_synchronize
 *     of every device, with buffers, streams and events possibly still
 *     live. The plugin releases them itself; the host makes no call of any
 *     kind afterwards, not even free or the destroy calls.
 *   A process that never shuts down (a Rust program that does not call
 *   anydev::shutdown, a crash) never calls it: do not rely on shutdown
 *   alone to persist anything. Libraries are never unloaded.
 *
 * Threading
 *   - Every call may come from any thread, and calls may overlap, on the
 *     same or different devices, streams and buffers, except that the host
 *     never overlaps a call with the destruction (free, stream_destroy,
 *     event_destroy, shutdown) of a handle that call uses.
 *   - The stream argument is never NULL when the plugin has stream_create;
 *     a plugin without stream calls (stream_create NULL) receives NULL and
 *     runs such work in its own order, completed before the call returns
 *     or before the next device_synchronize.
 *   - copy_device_to_device between two devices of the plugin is enqueued
 *     on a stream of the SOURCE buffer's device; the host orders later
 *     work on the destination's streams after it with an event.
 *
 * ABI minor versions (same major 1; each only appends)
 *   1.0  the table up to execute.
 *   1.1  buffer_host_pointer, buffer_import (unified memory).
 *   1.2  op_supported_signature and AnydevOpSignature (full-signature
 *        support query); ANYDEV_STRUCT_INIT / ANYDEV_HAS_FIELD; the
 *        contract below written down (no behaviour of 1.0/1.1 changed).
 *   1.3  the complex dtypes C64 and C128 and the ops CONJ, REAL and IMAG
 *        (codes appended; a plugin that does not declare them never
 *        receives them).
 *   1.4  named extension ops: extension_ops, extension_supported and
 *        extension_execute, AnydevExtensionOpList, AnydevExtensionCall, and
 *        the attribute kinds ANYDEV_ATTR_DTYPE and ANYDEV_ATTR_SHAPE (used
 *        only in extension calls).
 *   1.5  memory and timing control: empty_cache, memory_reset_peak and
 *        event_elapsed; AnydevMemoryStats gains reserved, free and total
 *        (read only from 1.5 tables); the capability event_timing.
 *   1.6  collectives among processes: comm_id, comm_init, comm_abort,
 *        comm_destroy and collective, AnydevCommId, AnydevCommInitArgs,
 *        AnydevCollectiveCall, the ANYDEV_COLLECTIVE_* and ANYDEV_REDUCE_*
 *        codes, and the AnydevComm handle.
 *   - Every call (except the error_* accessors) returns an AnydevStatus:
 *     NULL on success, otherwise an error object that the HOST owns and
 *     frees with error_destroy. Out-parameters are written only on success.
 *   - Pointer arguments are borrowed for the duration of the call unless a
 *     call says otherwise; the plugin copies what it keeps.
 *   - Calls may come from any thread, concurrently.
 *   - Calls taking a stream enqueue work in stream order and may return
 *     before it completes, unless the call says it blocks.
 *   - Nothing may unwind across the boundary: a C++ exception or Rust panic
 *     escaping a call aborts the host process.
 *   - Numeric dtype and op codes are those of the anydev op set; a code,
 *     once published, never changes meaning.
 *
 * This header mirrors the Rust crate anydev-plugin-abi; a test compiles a C
 * plugin against it and compares the size of every struct, and the offsets
 * of a selection of fields, with the Rust types.
 */
#ifndef ANYDEV_PLUGIN_H
#define ANYDEV_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ANYDEV_ABI_VERSION_MAJOR 1
#define ANYDEV_ABI_VERSION_MINOR 6
#define ANYDEV_ENTRY_SYMBOL "anydev_plugin_get_api"

/* ---- dtype codes (anydev_ops::DType::code) ------------------------------ */
#define ANYDEV_DTYPE_BOOL  1u
#define ANYDEV_DTYPE_I8    2u
#define ANYDEV_DTYPE_I16   3u
#define ANYDEV_DTYPE_I32   4u
#define ANYDEV_DTYPE_I64   5u
#define ANYDEV_DTYPE_U8    6u
#define ANYDEV_DTYPE_U16   7u
#define ANYDEV_DTYPE_U32   8u
#define ANYDEV_DTYPE_U64   9u
#define ANYDEV_DTYPE_F16  10u
#define ANYDEV_DTYPE_BF16 11u
#define ANYDEV_DTYPE_F32  12u
#define ANYDEV_DTYPE_F64  13u
/* ABI 1.3: two floats each, real part first (C99 float/double _Complex). */
#define ANYDEV_DTYPE_C64  14u
#define ANYDEV_DTYPE_C128 15u

/* ---- op codes (anydev_ops::OpCode::code) -------------------------------- */
#define ANYDEV_OP_ABS                      0x0101u
#define ANYDEV_OP_ACOS                     0x0102u
#define ANYDEV_OP_ACOSH                    0x0103u
#define ANYDEV_OP_ASIN                     0x0104u
#define ANYDEV_OP_ASINH                    0x0105u
#define ANYDEV_OP_ATAN                     0x0106u
#define ANYDEV_OP_ATANH                    0x0107u
#define ANYDEV_OP_BITWISE_INVERT           0x0108u
#define ANYDEV_OP_CEIL                     0x0109u
#define ANYDEV_OP_COS                      0x010au
#define ANYDEV_OP_COSH                     0x010bu
#define ANYDEV_OP_EXP                      0x010cu
#define ANYDEV_OP_EXPM1                    0x010du
#define ANYDEV_OP_FLOOR                    0x010eu
#define ANYDEV_OP_ISFINITE                 0x010fu
#define ANYDEV_OP_ISINF                    0x0110u
#define ANYDEV_OP_ISNAN                    0x0111u
#define ANYDEV_OP_LOG                      0x0112u
#define ANYDEV_OP_LOG1P                    0x0113u
#define ANYDEV_OP_LOG2                     0x0114u
#define ANYDEV_OP_LOG10                    0x0115u
#define ANYDEV_OP_LOGICAL_NOT              0x0116u
#define ANYDEV_OP_NEGATIVE                 0x0117u
#define ANYDEV_OP_RECIPROCAL               0x0118u
#define ANYDEV_OP_ROUND                    0x0119u
#define ANYDEV_OP_SIGN                     0x011au
#define ANYDEV_OP_SIGNBIT                  0x011bu
#define ANYDEV_OP_SIN                      0x011cu
#define ANYDEV_OP_SINH                     0x011du
#define ANYDEV_OP_SQUARE                   0x011eu
#define ANYDEV_OP_SQRT                     0x011fu
#define ANYDEV_OP_TAN                      0x0120u
#define ANYDEV_OP_TANH                     0x0121u
#define ANYDEV_OP_TRUNC                    0x0122u
/* ABI 1.3, complex input only; abs, real and imag of c64 output f32, of
 * c128 f64. */
#define ANYDEV_OP_CONJ                     0x0123u
#define ANYDEV_OP_REAL                     0x0124u
#define ANYDEV_OP_IMAG                     0x0125u
#define ANYDEV_OP_ADD                      0x0201u
#define ANYDEV_OP_ATAN2                    0x0202u
#define ANYDEV_OP_BITWISE_AND              0x0203u
#define ANYDEV_OP_BITWISE_LEFT_SHIFT       0x0204u
#define ANYDEV_OP_BITWISE_OR               0x0205u
#define ANYDEV_OP_BITWISE_RIGHT_SHIFT      0x0206u
#define ANYDEV_OP_BITWISE_XOR              0x0207u
#define ANYDEV_OP_COPYSIGN                 0x0208u
#define ANYDEV_OP_DIVIDE                   0x0209u
#define ANYDEV_OP_EQUAL                    0x020au
#define ANYDEV_OP_FLOOR_DIVIDE             0x020bu
#define ANYDEV_OP_GREATER                  0x020cu
#define ANYDEV_OP_GREATER_EQUAL            0x020du
#define ANYDEV_OP_HYPOT                    0x020eu
#define ANYDEV_OP_LESS                     0x020fu
#define ANYDEV_OP_LESS_EQUAL               0x0210u
#define ANYDEV_OP_LOGADDEXP                0x0211u
#define ANYDEV_OP_LOGICAL_AND              0x0212u
#define ANYDEV_OP_LOGICAL_OR               0x0213u
#define ANYDEV_OP_LOGICAL_XOR              0x0214u
#define ANYDEV_OP_MAXIMUM                  0x0215u
#define ANYDEV_OP_MINIMUM                  0x0216u
#define ANYDEV_OP_MULTIPLY                 0x0217u
#define ANYDEV_OP_NEXTAFTER                0x0218u
#define ANYDEV_OP_NOT_EQUAL                0x0219u
#define ANYDEV_OP_POW                      0x021au
#define ANYDEV_OP_REMAINDER                0x021bu
#define ANYDEV_OP_SUBTRACT                 0x021cu
#define ANYDEV_OP_SUM                      0x0301u
#define ANYDEV_OP_PROD                     0x0302u
#define ANYDEV_OP_MIN                      0x0303u
#define ANYDEV_OP_MAX                      0x0304u
#define ANYDEV_OP_ARGMIN                   0x0305u
#define ANYDEV_OP_ARGMAX                   0x0306u
#define ANYDEV_OP_ALL                      0x0307u
#define ANYDEV_OP_ANY                      0x0308u
#define ANYDEV_OP_CUMULATIVE_SUM           0x0401u
#define ANYDEV_OP_CUMULATIVE_PROD          0x0402u
#define ANYDEV_OP_ASTYPE                   0x0501u
#define ANYDEV_OP_WHERE                    0x0502u
#define ANYDEV_OP_COPY                     0x0503u
#define ANYDEV_OP_FILL                     0x0504u
#define ANYDEV_OP_ARANGE                   0x0505u
#define ANYDEV_OP_RANDOM                   0x0506u
#define ANYDEV_OP_TAKE                     0x0507u
#define ANYDEV_OP_MATMUL                   0x0601u
#define ANYDEV_OP_SORT                     0x0701u
#define ANYDEV_OP_ARGSORT                  0x0702u
#define ANYDEV_OP_SEARCHSORTED             0x0703u
#define ANYDEV_OP_NONZERO                  0x0704u

/* ---- error codes ---------------------------------------------------------- */
#define ANYDEV_ERROR_UNIMPLEMENTED    1  /* call or op/dtype pair not implemented */
#define ANYDEV_ERROR_INVALID_ARGUMENT 2  /* malformed argument */
#define ANYDEV_ERROR_OUT_OF_MEMORY    3  /* memory or the device's limit exhausted */
#define ANYDEV_ERROR_INTERNAL         4  /* something broke inside the plugin */
#define ANYDEV_ERROR_UNAVAILABLE      5  /* from initialize: hardware/driver absent */

/* ---- memory kinds (allocate; memory_kinds reports 1 << kind) -------------- */
#define ANYDEV_MEMORY_DEVICE      1u
#define ANYDEV_MEMORY_HOST_PINNED 2u
#define ANYDEV_MEMORY_MANAGED     3u
#define ANYDEV_MEMORY_SYSTEM      4u

/* ---- attribute kinds ------------------------------------------------------ */
#define ANYDEV_ATTR_BOOL     1u /* int_value is 0 or 1 */
#define ANYDEV_ATTR_I64      2u /* int_value */
#define ANYDEV_ATTR_F64      3u /* float_value */
#define ANYDEV_ATTR_STRING   4u /* string_value */
#define ANYDEV_ATTR_I64_LIST 5u /* list, list_len; "dtypes" holds dtype codes,
                                   "peer_devices" device indices of this plugin */
/* ABI 1.4, extension-call attributes only (never in capabilities). */
#define ANYDEV_ATTR_DTYPE    6u /* int_value is a dtype code (ANYDEV_DTYPE_*) */
#define ANYDEV_ATTR_SHAPE    7u /* list, list_len: the dimensions */

/* ---- operand kinds, op flags, distributions ------------------------------- */
#define ANYDEV_OPERAND_TENSOR 1u
#define ANYDEV_OPERAND_SCALAR 2u
#define ANYDEV_OP_FLAG_DESCENDING (1u << 0) /* sort, argsort */
#define ANYDEV_OP_FLAG_RIGHT      (1u << 1) /* searchsorted */
#define ANYDEV_DISTRIBUTION_UNIFORM 1u /* params_f64 = {low, high} */
#define ANYDEV_DISTRIBUTION_NORMAL  2u /* params_f64 = {mean, std} */
#define ANYDEV_NO_LIMIT UINT64_MAX
/* A byte count the plugin does not know (AnydevMemoryStats, ABI 1.5). */
#define ANYDEV_UNKNOWN_BYTES UINT64_MAX

/* ---- opaque handles ------------------------------------------------------- */
/* One plugin instance; owned by the host from initialize until shutdown. */
typedef struct AnydevContext AnydevContext;
/* One device; owned by the context, valid until shutdown. */
typedef struct AnydevDevice AnydevDevice;
/* One allocation; owned by the host from allocate until free. */
typedef struct AnydevBuffer AnydevBuffer;
/* An in-order queue on one device; owned by the host until stream_destroy. */
typedef struct AnydevStream AnydevStream;
/* A marker on a stream; owned by the host until event_destroy. */
typedef struct AnydevEvent AnydevEvent;
/* An error returned by a call; owned by the host until error_destroy. */
typedef struct AnydevError AnydevError;
/* One rank's membership of a communicator (ABI 1.6); owned by the host from
 * comm_init until comm_destroy. */
typedef struct AnydevComm AnydevComm;

/* NULL on success, otherwise an error the host frees with error_destroy. */
typedef AnydevError *AnydevStatus;

typedef struct AnydevVersion {
  uint16_t major;
  uint16_t minor;
} AnydevVersion;

/* A versioned struct T, zeroed, with struct_size = sizeof(T) as compiled:
 *   AnydevMemoryStats s = ANYDEV_STRUCT_INIT(AnydevMemoryStats);
 * A C99 compound literal in C; C++ has none, so there it is a
 * value-initialised T returned from a lambda (C++11). */
#ifdef __cplusplus
#define ANYDEV_STRUCT_INIT(T)                 \
  ([] {                                       \
    T anydev_init_value_{};                   \
    anydev_init_value_.struct_size = sizeof(T); \
    return anydev_init_value_;                \
  }())
#else
#define ANYDEV_STRUCT_INIT(T) ((T){.struct_size = sizeof(T)})
#endif
/* Whether the versioned struct at ptr (of type T) was written with `field`:
 * its struct_size covers the whole field. Read a field only when true. */
#define ANYDEV_HAS_FIELD(ptr, T, field) \
  ((ptr)->struct_size >= offsetof(T, field) + sizeof(((T *)0)->field))

/* ---- argument structs ----------------------------------------------------- */

/* Arguments of initialize; allocated by the host, valid during the call. */
typedef struct AnydevInitArgs {
  size_t struct_size;
  AnydevVersion host_version;
  uint32_t reserved;
  const char *plugin_name;  /* the registered name (device kind), UTF-8 */
  const char *options_json; /* manifest "options" as JSON text; "{}" when there
                               are none (never NULL) */
} AnydevInitArgs;

/* Filled by device_properties; allocated by the host (struct_size set).
 * Strings are owned by the plugin and valid until shutdown; NULL = empty. */
typedef struct AnydevDeviceProperties {
  size_t struct_size;
  const char *name;
  const char *vendor;
  const char *driver;
  const char *version;
  uint64_t memory_bytes;
} AnydevDeviceProperties;

/* One typed capability; owned by the plugin. No struct_size: fixed forever.
 *
 * Standard names (anything else should be "vendor.key"). Left out, the
 * host uses the default:
 *   name                        kind      default            meaning
 *   dtypes                      I64_LIST  those copy supports dtype codes the device holds and computes with
 *   compute_units               I64       1                  cores, SMs, execution units
 *   max_allocation_bytes        I64       memory_bytes       largest single allocate
 *   async_execution             BOOL      0                  work runs after the enqueuing call returns
 *   peer_devices                I64_LIST  none               indices of this plugin's devices whose
 *                                                            buffers this device reads/writes directly
 *   pageable_memory_access      BOOL      0                  reaches plain host memory (needs buffer_import)
 *   managed_memory              BOOL      0                  allocates ANYDEV_MEMORY_MANAGED
 *   concurrent_managed_access   BOOL      0                  host and device may use managed memory at once
 *   host_accessible_memory      BOOL      0                  the host may dereference DEVICE memory
 *   software                    BOOL      0                  emulated on the host's cores (a simulator);
 *                                                            a plugin whose devices all are ranks below
 *                                                            the CPU unless its manifest sets priority
 *   event_timing                BOOL      0                  event_elapsed measures the time between two
 *                                                            events (ABI 1.5)
 *   stream_ordered_free         BOOL      0                  free may be called while queued work still
 *                                                            uses the buffer: the device keeps the memory
 *                                                            (and counts it in memory_stats) until that
 *                                                            work is done, so the host frees at once
 *                                                            instead of waiting for events first
 *   managed_prefetch            BOOL      0                  prefetch and advice on managed memory take
 *                                                            effect (host-side backends only, for now:
 *                                                            a plugin reports 0)
 *   conformance.expected_failures STRING  none               JSON list of known conformance failures
 * f64, f16 and bf16 are derived from dtypes; "plugin.*" names are the host's. */
typedef struct AnydevAttribute {
  const char *name; /* "f64", "max_allocation_bytes", "vendor.key" */
  uint32_t kind;    /* ANYDEV_ATTR_* */
  uint32_t reserved;
  int64_t int_value;        /* BOOL, I64 */
  double float_value;       /* F64 */
  const char *string_value; /* STRING */
  const int64_t *list;      /* I64_LIST */
  size_t list_len;
} AnydevAttribute;

/* Filled by device_capabilities; allocated by the host (struct_size set).
 * The array is owned by the plugin and valid until shutdown. */
typedef struct AnydevAttributeList {
  size_t struct_size;
  const AnydevAttribute *attributes;
  size_t count;
} AnydevAttributeList;

/* Filled by memory_stats for one device; allocated by the host (struct_size
 * set). Counts cover buffers from allocate and buffer_import that are not
 * yet freed, as of the call (enqueued work does not change them). */
typedef struct AnydevMemoryStats {
  size_t struct_size;
  uint64_t in_use;      /* bytes of live buffers */
  uint64_t peak;        /* largest in_use since initialize or memory_reset_peak */
  uint64_t allocations; /* number of LIVE buffers (not all-time) */
  uint64_t limit;       /* bytes allocate may reach, or ANYDEV_NO_LIMIT */
  /* ABI 1.5; the host reads them only from a table of 1.5 or later, which
   * must fill them (ANYDEV_UNKNOWN_BYTES where it does not know). */
  uint64_t reserved;    /* in_use plus bytes cached for reuse */
  uint64_t free;        /* free bytes on the device */
  uint64_t total;       /* the device's memory size */
} AnydevMemoryStats;

/* A strided view of a buffer: shape and strides in elements (strides may be
 * zero or negative). The arrays are borrowed for the call only. No
 * struct_size: fixed forever. Element idx lies at byte
 * byte_offset + sum(idx[d] * strides[d]) * dtype_size; the host has checked
 * that every element lies inside the buffer. ndim may be 0 (one element). */
typedef struct AnydevTensor {
  AnydevBuffer *buffer;
  uint64_t byte_offset;
  uint32_t dtype; /* ANYDEV_DTYPE_* */
  uint32_t ndim;
  const uint64_t *shape;
  const int64_t *strides;
} AnydevTensor;

/* A scalar: little-endian value bytes zero-extended to 64 bits (bool is 0/1,
 * f16/bf16 their 16 bits, f32 its 32 bits, c64 the real part's bits in the
 * low 32 and the imaginary part's in the high 32). Its dtype is always the
 * dtype of the tensor operands of the same op (for fill: the output's).
 * A c128 value does not fit: the host never passes a c128 scalar, it
 * passes a tensor instead (one element, broadcast with zero strides; for
 * fill, a copy from such a tensor). */
typedef struct AnydevScalar {
  uint32_t dtype;
  uint32_t reserved;
  uint64_t bits;
} AnydevScalar;

/* One input of an op: kind says which member is meaningful. Fixed forever. */
typedef struct AnydevOperand {
  uint32_t kind; /* ANYDEV_OPERAND_* */
  uint32_t reserved;
  AnydevTensor tensor;
  AnydevScalar scalar;
} AnydevOperand;

/* One op call; allocated by the host and borrowed for the call only.
 *
 * What execute receives. The host has validated everything: dtypes agree,
 * axes are sorted, unique and in range, every element is inside its
 * buffer, and the output overlaps no input (except an elementwise op
 * whose input has exactly the output's layout). Elementwise ops (unary,
 * binary, astype, where, copy) get every tensor input with the OUTPUT's
 * ndim and shape: broadcasting is already expressed as zero strides. The
 * same holds for matmul's batch dimensions.
 *   unary       out dtype = x's, or bool for isfinite/isinf/isnan/signbit
 *               and logical_not.
 *   binary      lhs and rhs share one dtype, each a tensor or a scalar; out
 *               has it, or bool for comparisons and logical_*.
 *   astype      out = x converted: float->int truncates toward zero and
 *               saturates, NaN -> 0; int->int wraps; anything->bool is != 0;
 *               to float rounds to nearest even.
 *   where       cond bool; x, y (tensor or scalar) and out share a dtype.
 *   reductions  out has x's ndim with each reduced axis of length 1 (keepdims
 *               form); the host drops the axes itself. sum/prod: out has x's
 *               dtype (the host casts first where it widens); argmin/argmax:
 *               exactly one axis, out i64, first occurrence wins; all/any:
 *               out bool. An empty reduced axis gives the identity (0, 1,
 *               true, false); empty min/max/arg* never reach the plugin.
 *   scans       inclusive, along axes[0]; out has x's shape and dtype.
 *   fill        every element of out = inputs[0].scalar.
 *   arange      out[i] = start + i * step in f64, converted as astype; i in
 *               row-major order of out.
 *   random      out (f16/bf16/f32/f64) element i (row-major) from
 *               Philox4x32-10 with key seed = params_u64[0] and 128-bit
 *               counter {c & 0xffffffff, c >> 32, 0, 0}, c = params_u64[1] + i
 *               (wrapping); words w0..w3; u(a, b) = ((a << 21) | (b >> 11)) * 2^-53.
 *               Uniform: low + (high - low) * u(w0, w1), and a result that
 *               rounds to >= high (high > low) becomes the next value toward low. Normal:
 *               mean + std * sqrt(-2 ln(1 - u(w0, w1))) * cos(2 pi u(w2, w3)),
 *               with log, sqrt and cos at least as accurate as f32's
 *               (conformance compares normal values with f32 tolerance).
 *               The result must not depend on how the device splits work.
 *   take        x, indices (1-D i64, already in [0, x.shape[axis])).
 *   matmul      a [..., m, k], b [..., k, n], out [..., m, n].
 *   sort        stable; NaNs last ascending, first descending. argsort: out i64.
 *   searchsorted sorted is 1-D ascending; out i64 of values' shape.
 *   nonzero     out i64 [count, x.ndim], count already computed by the host.
 * Numerics: integer add/subtract/multiply wrap (two's complement); integer
 * division by zero gives 0 (floor_divide and remainder), as does pow with a
 * negative integer exponent; floats follow
 * IEEE 754 with NaN propagating; conformance states the accepted error per
 * function and dtype (docs/accuracy.md).
 *
 *   op                          inputs (argument order)    axes    flags/params
 *   unary, astype, copy, nonzero x
 *   binary                       lhs, rhs (tensor|scalar)
 *   where                        cond, x, y (x,y tensor|scalar)
 *   reductions                   x                          sorted axes
 *   scans                        x                          {axis}
 *   fill                         value (scalar)
 *   arange                                                          params_f64={start,step}
 *   random                                                          distribution, params_f64,
 *                                                                   params_u64={seed,counter}
 *   take                         x, indices                 {axis}
 *   matmul                       a, b
 *   sort, argsort                x                          {axis}  FLAG_DESCENDING
 *   searchsorted                 sorted, values                     FLAG_RIGHT          */
typedef struct AnydevOpCall {
  size_t struct_size;
  uint32_t op_code; /* ANYDEV_OP_* */
  uint32_t flags;   /* ANYDEV_OP_FLAG_* */
  AnydevTensor output;
  const AnydevOperand *inputs;
  size_t num_inputs;
  const uint64_t *axes;
  size_t num_axes;
  uint32_t distribution; /* ANYDEV_DISTRIBUTION_* for random */
  uint32_t reserved;
  double params_f64[2];
  uint64_t params_u64[2];
} AnydevOpCall;

/* The full signature of an op call (ABI 1.2), for op_supported_signature:
 * allocated by the host, borrowed for the call. input_dtypes holds one
 * dtype per input in argument order, tensor or scalar, exactly as the
 * AnydevOpCall's inputs[i] will carry it; output_dtype is output.dtype. */
typedef struct AnydevOpSignature {
  size_t struct_size;
  uint32_t op_code;
  uint32_t output_dtype;
  const uint32_t *input_dtypes;
  size_t num_inputs;
} AnydevOpSignature;

/* The extension ops a device implements (ABI 1.4), filled by extension_ops:
 * allocated by the host (struct_size set). names points at count
 * NUL-terminated UTF-8 names ("namespace::name", e.g. "quant::dequantize_4bit");
 * the array and the strings are owned by the plugin, valid until shutdown. */
typedef struct AnydevExtensionOpList {
  size_t struct_size;
  const char *const *names;
  size_t count;
} AnydevExtensionOpList;

/* One call of a named extension op (ABI 1.4); allocated by the host and
 * borrowed, with everything it points at, for the call only.
 *
 * An extension op is defined on the host side (by the library that owns
 * it, not by anydev or the plugin): a name, a number of array inputs,
 * typed attributes, and a shape rule giving the outputs' dtypes and
 * shapes. Before a call reaches the plugin the host has:
 *   - checked the inputs' count, that all lie on this device, and that
 *     every declared attribute is present with its type and no other;
 *   - run the op's shape rule and allocated the outputs on this device;
 *   - made every tensor contiguous row-major: strides are the row-major
 *     strides of shape (given anyway), byte_offset is 0, and every element
 *     lies inside the buffer; ndim may be 0 (one element); a shape with a
 *     zero extent has no elements (its strides count that extent as 1)
 *     and nothing of it is read or written;
 *   - made the outputs fresh buffers, distinct from every input and from
 *     each other; the plugin writes every element of every output.
 *   op_name     the name as the device listed it in extension_ops
 *   inputs      the call's arrays, in the op's argument order
 *   outputs     the shape rule's outputs, in its order
 *   attributes  one per declared attribute, in the caller's order, name
 *               set; kind I64, F64, BOOL (int_value 0/1), STRING,
 *               DTYPE (int_value = ANYDEV_DTYPE_*) or SHAPE (list/list_len,
 *               each dimension >= 0).
 * For extension_supported the call is the one extension_execute would
 * receive, except that every tensor's buffer is NULL. */
typedef struct AnydevExtensionCall {
  size_t struct_size;
  const char *op_name;
  const AnydevTensor *inputs;
  size_t num_inputs;
  const AnydevTensor *outputs;
  size_t num_outputs;
  const AnydevAttribute *attributes;
  size_t num_attributes;
} AnydevExtensionCall;

/* ---- collectives (ABI 1.6) ------------------------------------------------
 * Collectives among processes, one device per rank, shaped after NCCL's API
 * (which vendor collective libraries copy), so a plugin can forward to its
 * vendor's library. anydev-dist drives them; its MPI job is the bootstrap:
 *   1. one rank calls comm_id and the host sends the id to every other rank
 *      over its own channel (MPI);
 *   2. every rank calls comm_init with the id, the number of ranks, its own
 *      rank and its device;
 *   3. collective enqueues work on a stream of that device, like execute:
 *      every rank of the communicator makes the same collective calls in
 *      the same order (send and recv pair up in order, per pair of ranks);
 *   4. comm_destroy once the work completed, or comm_abort first when a
 *      peer is gone (the host bounds every wait by polling an event
 *      recorded after the call, and aborts when its timeout passes).
 * Errors of enqueued collectives surface like those of execute: from the
 * stream's or event's synchronize. */
#define ANYDEV_COMM_ID_BYTES 128

/* An opaque communicator id, made by comm_id; the host copies its bytes
 * between processes unchanged. Fixed forever. */
typedef struct AnydevCommId {
  uint8_t bytes[ANYDEV_COMM_ID_BYTES];
} AnydevCommId;

/* Arguments of comm_init; allocated by the host, borrowed for the call. */
typedef struct AnydevCommInitArgs {
  size_t struct_size;
  AnydevCommId id;
  uint32_t nranks;     /* >= 1 */
  uint32_t rank;       /* < nranks, each rank exactly once */
  uint64_t timeout_ms; /* give up joining after this long, naming who is missing */
} AnydevCommInitArgs;

/* AnydevCollectiveCall kind */
#define ANYDEV_COLLECTIVE_ALL_REDUCE     1u
#define ANYDEV_COLLECTIVE_BROADCAST      2u
#define ANYDEV_COLLECTIVE_ALL_GATHER     3u
#define ANYDEV_COLLECTIVE_REDUCE_SCATTER 4u
#define ANYDEV_COLLECTIVE_ALL_TO_ALL     5u
#define ANYDEV_COLLECTIVE_SEND           6u
#define ANYDEV_COLLECTIVE_RECV           7u

/* AnydevCollectiveCall reduce_op. On bool, SUM and MAX are logical or, PROD
 * and MIN logical and. Integers wrap. f16 and bf16 accumulate in f32 and
 * round once. MIN and MAX propagate NaN and are not defined for complex
 * dtypes (the host never asks). Ranks combine in rank order, so every rank
 * gets the same bits. */
#define ANYDEV_REDUCE_SUM  1u
#define ANYDEV_REDUCE_PROD 2u
#define ANYDEV_REDUCE_MIN  3u
#define ANYDEV_REDUCE_MAX  4u

/* One collective; allocated by the host and borrowed for the call only.
 * Buffers hold dense elements of dtype from their offset. With n ranks and
 * this rank r, count means:
 *   kind            send                      recv
 *   ALL_REDUCE      count                     count
 *   BROADCAST       count, read on the root   count, written on every rank
 *                   only (NULL elsewhere)     (the root's too)
 *   ALL_GATHER      count                     n * count; block i from rank i
 *   REDUCE_SCATTER  n * count                 count: block r of the reduction
 *   ALL_TO_ALL      n * count; block i to     n * count; block i from rank i
 *                   rank i
 *   SEND            count, to rank peer       NULL
 *   RECV            NULL                      count, from rank peer
 * The host has checked that every range lies inside its buffer, that the
 * send and recv ranges do not overlap, that both buffers belong to the
 * communicator's device, and that dtype is one the device holds. */
typedef struct AnydevCollectiveCall {
  size_t struct_size;
  uint32_t kind;      /* ANYDEV_COLLECTIVE_* */
  uint32_t dtype;     /* ANYDEV_DTYPE_* */
  uint32_t reduce_op; /* ANYDEV_REDUCE_* for ALL_REDUCE and REDUCE_SCATTER, else 0 */
  uint32_t peer;      /* BROADCAST: the root; SEND, RECV: the other rank; else 0 */
  AnydevBuffer *send;
  uint64_t send_offset; /* bytes */
  AnydevBuffer *recv;
  uint64_t recv_offset; /* bytes */
  uint64_t count;       /* elements, see above */
} AnydevCollectiveCall;

/* ---- the function table ----------------------------------------------------
 * REQUIRED marks the calls a table must have (non-NULL, inside struct_size);
 * every other call may be NULL, with the meaning its comment gives. */
typedef struct AnydevPluginApi {
  size_t struct_size;    /* sizeof(AnydevPluginApi) as the plugin compiled it */
  AnydevVersion version; /* the ABI version the plugin was built against */
  uint32_t reserved;

  /* REQUIRED. The error's ANYDEV_ERROR_* code; error stays owned by the caller. */
  int32_t (*error_code)(const AnydevError *error);
  /* REQUIRED. The error's message (UTF-8), owned by the error, valid until error_destroy. */
  const char *(*error_message)(const AnydevError *error);
  /* REQUIRED. Frees an error returned by any call; called exactly once per error. */
  void (*error_destroy)(AnydevError *error);

  /* REQUIRED. Creates the plugin instance; args borrowed. *out_context is owned by the
   * host until shutdown. ANYDEV_ERROR_UNAVAILABLE = hardware simply absent. */
  AnydevStatus (*initialize)(const AnydevInitArgs *args, AnydevContext **out_context);
  /* REQUIRED. Destroys the context, at most once, in one of the two ways Lifecycle
   * (at the top) describes: after the host freed every buffer and destroyed every
   * stream and event, or at process exit with some of them still live, which the
   * plugin then releases itself (the host makes no call afterwards). Device handles,
   * strings and attribute lists die with it. */
  AnydevStatus (*shutdown)(AnydevContext *context);

  /* REQUIRED. Number of devices; constant for the context's lifetime. 0 makes
   * the plugin "unavailable" (reported with its name, library and manifest). */
  AnydevStatus (*device_count)(AnydevContext *context, uint32_t *out_count);
  /* REQUIRED. Device handle for index; owned by the context, valid until shutdown. */
  AnydevStatus (*get_device)(AnydevContext *context, uint32_t index, AnydevDevice **out_device);
  /* REQUIRED. Fills *out (host-allocated, struct_size set); strings plugin-owned until shutdown. */
  AnydevStatus (*device_properties)(AnydevContext *context, AnydevDevice *device,
                                    AnydevDeviceProperties *out);
  /* REQUIRED. Fills *out (host-allocated, struct_size set); attributes plugin-owned until shutdown. */
  AnydevStatus (*device_capabilities)(AnydevContext *context, AnydevDevice *device,
                                      AnydevAttributeList *out);
  /* REQUIRED. *out_supported = 1 when op_code is implemented for dtype_code (the op's
   * support dtype: first input, x for WHERE, output for fill/arange/random). The answer for a
   * device, op and dtype must not change while the context lives: the host asks once
   * and remembers it (a failed call is asked again). */
  AnydevStatus (*op_supported)(AnydevContext *context, AnydevDevice *device, uint32_t op_code,
                               uint32_t dtype_code, uint8_t *out_supported);
  /* Bitmask of 1 << ANYDEV_MEMORY_* that allocate accepts (NULL: device only). */
  AnydevStatus (*memory_kinds)(AnydevContext *context, AnydevDevice *device, uint32_t *out_mask);
  /* REQUIRED. Blocks until all work on every stream of the device completes. */
  AnydevStatus (*device_synchronize)(AnydevContext *context, AnydevDevice *device);

  /* REQUIRED. Allocates size bytes (256-byte aligned, 0 allowed); *out_buffer owned by
   * the host until free. ANYDEV_ERROR_OUT_OF_MEMORY when it does not fit. */
  AnydevStatus (*allocate)(AnydevContext *context, AnydevDevice *device, uint64_t size,
                           uint32_t memory_kind, AnydevBuffer **out_buffer);
  /* REQUIRED. Frees a buffer (takes ownership). On a device that declares
   * async_execution, the host calls it once no enqueued work uses the buffer, or at
   * once when the device also declares stream_ordered_free, which then keeps the
   * memory until that work is done. Without async_execution all work has completed
   * when its call returned, and the host frees a buffer at once after its last use. */
  AnydevStatus (*free)(AnydevContext *context, AnydevBuffer *buffer);
  /* REQUIRED. Fills *out (host-allocated, struct_size set). */
  AnydevStatus (*memory_stats)(AnydevContext *context, AnydevDevice *device, AnydevMemoryStats *out);

  /* Creates a stream; *out_stream owned by the host until stream_destroy.
   * NULL, with all the other stream and event calls (a table with only some of
   * them is refused): calls taking a stream get NULL, and the plugin orders that
   * work itself (see Threading). The host then keeps its events itself: to record
   * one it calls device_synchronize, after which the event has completed;
   * synchronizing a stream is device_synchronize of its device; waiting for an
   * event calls nothing; event_elapsed is never asked. */
  AnydevStatus (*stream_create)(AnydevContext *context, AnydevDevice *device, AnydevStream **out_stream);
  /* Destroys a stream after its work completes; takes ownership. */
  AnydevStatus (*stream_destroy)(AnydevContext *context, AnydevStream *stream);
  /* Blocks until all work enqueued on the stream completes. */
  AnydevStatus (*stream_synchronize)(AnydevContext *context, AnydevStream *stream);
  /* Records an event after the work enqueued so far; *out_event owned by the
   * host until event_destroy. */
  AnydevStatus (*event_record)(AnydevContext *context, AnydevStream *stream, AnydevEvent **out_event);
  /* Later work on stream waits for event; both stay owned by the host. */
  AnydevStatus (*event_wait)(AnydevContext *context, AnydevStream *stream, AnydevEvent *event);
  /* *out_done = 1 when the event has completed; never blocks. */
  AnydevStatus (*event_query)(AnydevContext *context, AnydevEvent *event, uint8_t *out_done);
  /* Blocks until the event completes. */
  AnydevStatus (*event_synchronize)(AnydevContext *context, AnydevEvent *event);
  /* Destroys an event; takes ownership. */
  AnydevStatus (*event_destroy)(AnydevContext *context, AnydevEvent *event);

  /* REQUIRED. Copies size host bytes from src into dst at dst_offset. src is borrowed
   * until return (read or staged by then); the device write may be in flight. */
  AnydevStatus (*copy_host_to_device)(AnydevContext *context, AnydevStream *stream, const uint8_t *src,
                                      AnydevBuffer *dst, uint64_t dst_offset, uint64_t size);
  /* REQUIRED. Copies size bytes from src at src_offset to host dst. Blocks: dst holds
   * the data on return. */
  AnydevStatus (*copy_device_to_host)(AnydevContext *context, AnydevStream *stream, AnydevBuffer *src,
                                      uint64_t src_offset, uint8_t *dst, uint64_t size);
  /* Copies between two buffers of this plugin (maybe different devices). NULL: the
   * host copies through host memory, copy_device_to_host from the source (on the
   * source device's stream), then copy_host_to_device into the destination: on
   * the same stream when both buffers are on one device, else on a stream of the
   * destination's device, which the host then synchronizes. */
  AnydevStatus (*copy_device_to_device)(AnydevContext *context, AnydevStream *stream, AnydevBuffer *src,
                                        uint64_t src_offset, AnydevBuffer *dst, uint64_t dst_offset,
                                        uint64_t size);
  /* Fills size bytes from offset with repetitions of pattern (borrowed). */
  AnydevStatus (*fill)(AnydevContext *context, AnydevStream *stream, AnydevBuffer *dst, uint64_t offset,
                       uint64_t size, const uint8_t *pattern, uint64_t pattern_size);

  /* Enqueues one op; call and everything it points at borrowed for the call.
   * The host has bounds-checked every operand and checked that the output
   * overlaps no input (see AnydevOpCall for what each op receives). It
   * calls execute only after op_supported (and op_supported_signature, if
   * present) said yes. Unimplemented op/dtype: ANYDEV_ERROR_UNIMPLEMENTED.
   * NULL: the device runs no op. */
  AnydevStatus (*execute)(AnydevContext *context, AnydevStream *stream, const AnydevOpCall *call);

  /* ---- unified memory (ABI 1.1) ---- */
  /* *out_ptr = host address of the buffer's first byte when the host may
   * dereference it (pinned, managed, system or host-accessible memory), else NULL. */
  AnydevStatus (*buffer_host_pointer)(AnydevContext *context, AnydevBuffer *buffer, uint8_t **out_ptr);
  /* Wraps size bytes at host address ptr (memory of memory_kind owned by
   * another allocator) as a buffer of device, without copying. Called only
   * when the device's capabilities say it reaches that kind; the host keeps
   * the memory alive until it frees the buffer, and free releases only the
   * handle. ptr is the memory's own address, with no alignment guaranteed
   * (memory lent to anydev, such as a NumPy array's, is often only 16-byte
   * aligned). A plugin whose device cannot use the memory refuses it with
   * ANYDEV_ERROR_INVALID_ARGUMENT: the host then copies the data instead
   * where a copy will do, and reports the error where sharing was asked
   * for. Any other error fails the transfer. */
  AnydevStatus (*buffer_import)(AnydevContext *context, AnydevDevice *device, uint8_t *ptr, uint64_t size,
                                uint32_t memory_kind, AnydevBuffer **out_buffer);

  /* ---- full signatures (ABI 1.2) ---- */
  /* *out_supported = 1 when the device runs signature->op_code with exactly
   * these input and output dtypes (a cast to i8, a sum of i8 into i64, a
   * comparison into bool), else 0. When present, the host asks it before
   * every execute, after op_supported said yes for the op's support dtype,
   * and never sends a call it answered 0 for. NULL: op_supported alone
   * decides, and execute returns ANYDEV_ERROR_UNIMPLEMENTED for a signature
   * it cannot run. */
  AnydevStatus (*op_supported_signature)(AnydevContext *context, AnydevDevice *device,
                                         const AnydevOpSignature *signature, uint8_t *out_supported);

  /* ---- extension ops (ABI 1.4) ----
   * A device may implement named extension ops that libraries define on
   * the host side; the host runs one of them here when the device's kind
   * has no kernel registered in-process for it, the device lists it, and
   * extension_supported (if present) accepts the call. */
  /* Fills *out (host-allocated, struct_size set) with the names of the
   * extension ops the device implements; names and array plugin-owned until
   * shutdown. Asked once per device right after initialize (and the list
   * kept): an error fails the plugin's load. NULL: the device implements
   * none, and extension_supported and extension_execute are never called. */
  AnydevStatus (*extension_ops)(AnydevContext *context, AnydevDevice *device, AnydevExtensionOpList *out);
  /* *out_supported = 1 when the device runs call (an op it listed, with
   * these dtypes, shapes and attributes; every tensor's buffer NULL), else
   * 0. Asked before every extension_execute; a call answered 0 is never
   * sent (the user gets an error naming the op, the device and the
   * signature, or the host fallback if they opted in). NULL: every listed
   * op accepts whatever its shape rule accepted, and extension_execute
   * returns ANYDEV_ERROR_UNIMPLEMENTED for a call it cannot run. */
  AnydevStatus (*extension_supported)(AnydevContext *context, AnydevDevice *device,
                                      const AnydevExtensionCall *call, uint8_t *out_supported);
  /* Enqueues one extension op call in stream order, like execute (may
   * return before it completes); call borrowed for the call only (copy what
   * a later launch needs). Called only for a listed op, after
   * extension_supported said yes. An error's message reaches the user as
   * the plugin wrote it: say what was wrong with the call. */
  AnydevStatus (*extension_execute)(AnydevContext *context, AnydevStream *stream,
                                    const AnydevExtensionCall *call);

  /* ---- memory and timing control (ABI 1.5) ---- */
  /* Gives memory the device caches for reuse back to the system (what
   * memory_stats counts in reserved but not in_use); memory in use is
   * untouched. NULL: the plugin caches nothing, and the call is a no-op. */
  AnydevStatus (*empty_cache)(AnydevContext *context, AnydevDevice *device);
  /* Starts the device's peak again from its in_use now. NULL, or
   * ANYDEV_ERROR_UNIMPLEMENTED: the user is told the peak cannot be reset. */
  AnydevStatus (*memory_reset_peak)(AnydevContext *context, AnydevDevice *device);
  /* *out_ms = device time in milliseconds from start to end, two events of
   * one device that have both completed (the host synchronizes them first).
   * Asked only of devices whose event_timing capability is true. */
  AnydevStatus (*event_elapsed)(AnydevContext *context, AnydevEvent *start, AnydevEvent *end, double *out_ms);

  /* ---- collectives (ABI 1.6; see AnydevCollectiveCall) ----
   * All five, or none (NULL): the host then moves the device's arrays
   * between processes itself, through host memory. */
  /* Fills *out_id with the id of a new communicator. */
  AnydevStatus (*comm_id)(AnydevContext *context, AnydevCommId *out_id);
  /* Joins rank args->rank of the communicator args->id names, on device.
   * Blocks until all args->nranks ranks have joined (they may be in other
   * processes, or in this one on other threads), or fails after
   * args->timeout_ms. *out_comm is owned by the host until comm_destroy. */
  AnydevStatus (*comm_init)(AnydevContext *context, AnydevDevice *device, const AnydevCommInitArgs *args,
                            AnydevComm **out_comm);
  /* Makes the communicator's pending and later collectives fail soon, without
   * waiting for the peers (ncclCommAbort); called from another thread while
   * collectives may be blocked. The host then destroys it. */
  AnydevStatus (*comm_abort)(AnydevContext *context, AnydevComm *comm);
  /* Destroys the communicator once no enqueued work uses it (or after
   * comm_abort); takes ownership. */
  AnydevStatus (*comm_destroy)(AnydevContext *context, AnydevComm *comm);
  /* Enqueues one collective on stream (a stream of the communicator's
   * device) in stream order; call borrowed for the call only. */
  AnydevStatus (*collective)(AnydevContext *context, AnydevComm *comm, AnydevStream *stream,
                             const AnydevCollectiveCall *call);
} AnydevPluginApi;

typedef const AnydevPluginApi *(*AnydevGetApiFn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ANYDEV_PLUGIN_H */
