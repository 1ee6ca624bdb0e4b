/*
 * A small device plugin written in C against include/anydev_plugin.h.
 *
 * One device ("ctest:0") with host-memory buffers and three ops for f32:
 * fill, copy and add (array + array or array + scalar). Everything else is
 * left unimplemented. The tests compile this file several times with the
 * macros below to make the broken plugins of the bad-plugin matrix:
 *
 *   TEST_MAJOR / TEST_MINOR   version written into the table
 *   TEST_TABLE_SIZE           a truncated table (an "older plugin"): the
 *                             table is copied to the end of a page followed
 *                             by an inaccessible page, so a host that read
 *                             past struct_size would crash
 *   TEST_NO_ENTRY             do not export the entry symbol
 *   TEST_INIT_FAILS           initialize returns an error
 *   TEST_INIT_CRASHES         initialize dies of SIGSEGV
 *   TEST_INIT_EXITS           initialize ends the process with exit(0)
 *   TEST_ADD_CRASHES          execute of add dies of SIGSEGV
 *   TEST_UNRESOLVED           initialize calls a function no library defines
 *                             (a load failure under immediate binding)
 *   TEST_DEPENDENCY           initialize calls anydev_test_dependency(),
 *                             defined in a library the test links and
 *                             then removes
 *   TEST_DEVICES              the number of devices (default 1), each
 *                             with its own 1 MiB
 *   TEST_NULL_DEVICE          get_device returns success but no device
 *   TEST_NO_CAPABILITIES      leave the required device_capabilities NULL
 *   TEST_REPORT_SHUTDOWN      shutdown writes the live streams and buffers
 *                             to the file $ANYDEV_TEST_SHUTDOWN_FILE
 *   TEST_SIGNATURE_NO_ADD     op_supported_signature (ABI 1.2) refuses add,
 *                             which op_supported accepts; execute of add
 *                             then fails loudly, as the host must not call it
 *   TEST_NO_EXTENSIONS        leave the extension-op calls (ABI 1.4) NULL
 *   TEST_EXTENSION_OPS_FAILS  extension_ops returns an error
 *   TEST_ASYNC                declare async_execution (the work still runs
 *                             at once)
 *   TEST_NO_STREAMS           leave every stream and event call NULL
 *   TEST_NO_EVENTS            leave the event calls NULL but keep the
 *                             stream calls (a table the host refuses)
 *   TEST_NULL_STREAM          stream_create returns success but no stream
 *   TEST_NULL_EVENT           event_record returns success but no event
 *   TEST_NO_D2D               leave copy_device_to_device NULL
 *   TEST_NO_EXECUTE           leave execute NULL (op_supported still says
 *                             yes to fill, copy and add)
 *   TEST_NO_MESSAGE           error_message returns NULL
 *
 * Unless TEST_NO_EXTENSIONS, the device implements one named extension op
 * (ABI 1.4), "ctest::axpy": out = a * x + y for f32 arrays x, y and out of
 * one 1-D shape and the float attribute a. extension_supported refuses
 * every other signature (2-D operands included); a NaN a is an
 * INVALID_ARGUMENT error from extension_execute.
 *
 * It also exports anydev_test_layout, the sizes and offsets of the ABI
 * types as this C compiler sees them, for the test to compare with Rust.
 */
#define _DEFAULT_SOURCE
#include "anydev_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef TEST_MAJOR
#define TEST_MAJOR ANYDEV_ABI_VERSION_MAJOR
#endif
#ifndef TEST_MINOR
#define TEST_MINOR ANYDEV_ABI_VERSION_MINOR
#endif
#ifndef TEST_DEVICES
#define TEST_DEVICES 1
#endif
#ifdef TEST_ASYNC
#define ASYNC_EXECUTION 1
#else
#define ASYNC_EXECUTION 0
#endif

#if defined(TEST_INIT_CRASHES) || defined(TEST_ADD_CRASHES)
/* A real invalid write, not raise(SIGSEGV): a host may handle a raised
 * signal and carry on (Rust's stack-overflow handler does). */
static int *volatile nowhere = NULL;
#define CRASH() (*nowhere = 1)
#endif

#ifdef TEST_UNRESOLVED
void anydev_test_no_library_defines_this(void);
#endif
#ifdef TEST_DEPENDENCY
void anydev_test_dependency(void);
#endif

struct AnydevError {
  int32_t code;
  char message[256];
};

struct AnydevDevice {
  uint32_t index;
  uint64_t in_use, peak, allocations;
};

struct AnydevContext {
  AnydevDevice devices[TEST_DEVICES > 0 ? TEST_DEVICES : 1];
  uint64_t streams; /* live streams */
};

struct AnydevBuffer {
  unsigned char *data;
  uint64_t size;
  AnydevDevice *device;
};

struct AnydevStream {
  int unused;
};

struct AnydevEvent {
  int unused;
};

static AnydevStatus fail(int32_t code, const char *message) {
  AnydevError *e = calloc(1, sizeof *e);
  if (!e) return NULL; /* cannot report; the host sees success */
  e->code = code;
  snprintf(e->message, sizeof e->message, "%s", message);
  return e;
}

static int32_t error_code(const AnydevError *e) { return e->code; }
static const char *error_message(const AnydevError *e) {
#ifdef TEST_NO_MESSAGE
  (void)e;
  return NULL;
#else
  return e->message;
#endif
}
static void error_destroy(AnydevError *e) { free(e); }

static AnydevStatus initialize(const AnydevInitArgs *args, AnydevContext **out) {
#ifdef TEST_INIT_FAILS
  (void)args;
  (void)out;
  return fail(ANYDEV_ERROR_INTERNAL, "simulated driver failure: firmware not loaded");
#else
#ifdef TEST_INIT_CRASHES
  CRASH();
#endif
#ifdef TEST_INIT_EXITS
  exit(0);
#endif
#ifdef TEST_UNRESOLVED
  anydev_test_no_library_defines_this();
#endif
#ifdef TEST_DEPENDENCY
  anydev_test_dependency();
#endif
  if (!args || args->host_version.major != ANYDEV_ABI_VERSION_MAJOR)
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "host speaks another major ABI version");
  AnydevContext *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, "no memory for the context");
  *out = ctx;
  return NULL;
#endif
}

static AnydevStatus shutdown_ctx(AnydevContext *ctx) {
#ifdef TEST_REPORT_SHUTDOWN
  const char *path = getenv("ANYDEV_TEST_SHUTDOWN_FILE");
  FILE *f = path ? fopen(path, "w") : NULL;
  if (f) {
    uint64_t buffers = 0;
    for (size_t i = 0; i < sizeof ctx->devices / sizeof ctx->devices[0]; i++) buffers += ctx->devices[i].allocations;
    fprintf(f, "shutdown with %llu streams and %llu buffers live\n", (unsigned long long)ctx->streams,
            (unsigned long long)buffers);
    fclose(f);
  }
#endif
  free(ctx);
  return NULL;
}

static AnydevStatus device_count(AnydevContext *ctx, uint32_t *out) {
  (void)ctx;
  *out = TEST_DEVICES;
  return NULL;
}

static AnydevStatus get_device(AnydevContext *ctx, uint32_t index, AnydevDevice **out) {
  if (index + 1ull > TEST_DEVICES) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "no such device");
  ctx->devices[index].index = index;
#ifdef TEST_NULL_DEVICE
  *out = NULL;
#else
  *out = &ctx->devices[index];
#endif
  return NULL;
}

static AnydevStatus device_properties(AnydevContext *ctx, AnydevDevice *dev, AnydevDeviceProperties *out) {
  (void)ctx;
  (void)dev;
  /* Write only what both sides know: the fields of ABI 1.0. */
  if (out->struct_size < sizeof *out) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "properties struct too small");
  out->name = "C test device";
  out->vendor = "anydev tests";
  out->driver = "none";
  out->version = "1.0";
  out->memory_bytes = 1 << 20;
  return NULL;
}

static const int64_t dtypes[] = {ANYDEV_DTYPE_F32};
static const AnydevAttribute attributes[] = {
    {"dtypes", ANYDEV_ATTR_I64_LIST, 0, 0, 0.0, NULL, dtypes, 1},
    {"async_execution", ANYDEV_ATTR_BOOL, 0, ASYNC_EXECUTION, 0.0, NULL, NULL, 0},
    {"compute_units", ANYDEV_ATTR_I64, 0, 1, 0.0, NULL, NULL, 0},
    {"ctest.clock_ghz", ANYDEV_ATTR_F64, 0, 0, 1.5, NULL, NULL, 0},
    {"ctest.language", ANYDEV_ATTR_STRING, 0, 0, 0.0, "C99", NULL, 0},
};

/* Unused under TEST_NO_CAPABILITIES. */
__attribute__((unused)) static AnydevStatus device_capabilities(AnydevContext *ctx, AnydevDevice *dev,
                                                               AnydevAttributeList *out) {
  (void)ctx;
  (void)dev;
  out->attributes = attributes;
  out->count = sizeof attributes / sizeof attributes[0];
  return NULL;
}

static AnydevStatus op_supported(AnydevContext *ctx, AnydevDevice *dev, uint32_t op, uint32_t dtype,
                                 uint8_t *out) {
  (void)ctx;
  (void)dev;
  *out = dtype == ANYDEV_DTYPE_F32 && (op == ANYDEV_OP_FILL || op == ANYDEV_OP_COPY || op == ANYDEV_OP_ADD);
  return NULL;
}

#ifdef TEST_SIGNATURE_NO_ADD
static AnydevStatus op_supported_signature(AnydevContext *ctx, AnydevDevice *dev, const AnydevOpSignature *sig,
                                           uint8_t *out) {
  (void)ctx;
  (void)dev;
  *out = sig->op_code != ANYDEV_OP_ADD;
  return NULL;
}
#endif

static AnydevStatus device_synchronize(AnydevContext *ctx, AnydevDevice *dev) {
  (void)ctx;
  (void)dev;
  return NULL;
}

static AnydevStatus allocate(AnydevContext *ctx, AnydevDevice *dev, uint64_t size, uint32_t kind,
                             AnydevBuffer **out) {
  (void)ctx;
  if (kind != ANYDEV_MEMORY_DEVICE) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "only device memory");
  if (size > (1 << 20) - dev->in_use) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, "the 1 MiB device is full");
  AnydevBuffer *b = calloc(1, sizeof *b);
  void *data = NULL;
  if (!b || posix_memalign(&data, 256, size ? size : 1) != 0) {
    free(b);
    return fail(ANYDEV_ERROR_OUT_OF_MEMORY, "host allocation failed");
  }
  memset(data, 0, size);
  b->data = data;
  b->size = size;
  b->device = dev;
  dev->in_use += size;
  dev->allocations += 1;
  if (dev->in_use > dev->peak) dev->peak = dev->in_use;
  *out = b;
  return NULL;
}

static AnydevStatus free_buffer(AnydevContext *ctx, AnydevBuffer *b) {
  (void)ctx;
  b->device->in_use -= b->size;
  b->device->allocations -= 1;
  free(b->data);
  free(b);
  return NULL;
}

static AnydevStatus memory_stats(AnydevContext *ctx, AnydevDevice *dev, AnydevMemoryStats *out) {
  (void)ctx;
  out->in_use = dev->in_use;
  out->peak = dev->peak;
  out->allocations = dev->allocations;
  out->limit = 1 << 20;
  out->reserved = dev->in_use; /* nothing cached */
  out->free = ANYDEV_UNKNOWN_BYTES;
  out->total = ANYDEV_UNKNOWN_BYTES;
  return NULL;
}

#ifndef TEST_NO_STREAMS
static AnydevStatus stream_create(AnydevContext *ctx, AnydevDevice *dev, AnydevStream **out) {
  (void)dev;
#ifdef TEST_NULL_STREAM
  (void)ctx;
  *out = NULL;
  return NULL;
#endif
  *out = calloc(1, sizeof **out);
  if (!*out) return fail(ANYDEV_ERROR_OUT_OF_MEMORY, "no memory for a stream");
  ctx->streams += 1;
  return NULL;
}

static AnydevStatus stream_destroy(AnydevContext *ctx, AnydevStream *s) {
  ctx->streams -= 1;
  free(s);
  return NULL;
}

static AnydevStatus stream_synchronize(AnydevContext *ctx, AnydevStream *s) {
  (void)ctx;
  (void)s;
  return NULL;
}

#ifndef TEST_NO_EVENTS
static AnydevStatus event_record(AnydevContext *ctx, AnydevStream *s, AnydevEvent **out) {
  (void)ctx;
  (void)s;
#ifdef TEST_NULL_EVENT
  *out = NULL;
  return NULL;
#endif
  *out = calloc(1, sizeof **out);
  return *out ? NULL : fail(ANYDEV_ERROR_OUT_OF_MEMORY, "no memory for an event");
}

static AnydevStatus event_wait(AnydevContext *ctx, AnydevStream *s, AnydevEvent *e) {
  (void)ctx;
  (void)s;
  (void)e;
  return NULL;
}

static AnydevStatus event_query(AnydevContext *ctx, AnydevEvent *e, uint8_t *out) {
  (void)ctx;
  (void)e;
  *out = 1;
  return NULL;
}

static AnydevStatus event_synchronize(AnydevContext *ctx, AnydevEvent *e) {
  (void)ctx;
  (void)e;
  return NULL;
}

static AnydevStatus event_destroy(AnydevContext *ctx, AnydevEvent *e) {
  (void)ctx;
  free(e);
  return NULL;
}
#endif /* TEST_NO_EVENTS */
#endif /* TEST_NO_STREAMS */

static int in_range(const AnydevBuffer *b, uint64_t offset, uint64_t size) {
  return offset <= b->size && size <= b->size - offset;
}

static AnydevStatus copy_h2d(AnydevContext *ctx, AnydevStream *s, const uint8_t *src, AnydevBuffer *dst,
                             uint64_t off, uint64_t size) {
  (void)ctx;
  (void)s;
  if (!in_range(dst, off, size)) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "range outside the buffer");
  memcpy(dst->data + off, src, size);
  return NULL;
}

static AnydevStatus copy_d2h(AnydevContext *ctx, AnydevStream *s, AnydevBuffer *src, uint64_t off,
                             uint8_t *dst, uint64_t size) {
  (void)ctx;
  (void)s;
  if (!in_range(src, off, size)) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "range outside the buffer");
  memcpy(dst, src->data + off, size);
  return NULL;
}

#ifndef TEST_NO_D2D
static AnydevStatus copy_d2d(AnydevContext *ctx, AnydevStream *s, AnydevBuffer *src, uint64_t soff,
                             AnydevBuffer *dst, uint64_t doff, uint64_t size) {
  (void)ctx;
  (void)s;
  if (!in_range(src, soff, size) || !in_range(dst, doff, size))
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "range outside the buffer");
  memmove(dst->data + doff, src->data + soff, size);
  return NULL;
}
#endif

static AnydevStatus fill_bytes(AnydevContext *ctx, AnydevStream *s, AnydevBuffer *dst, uint64_t off,
                               uint64_t size, const uint8_t *pattern, uint64_t plen) {
  (void)ctx;
  (void)s;
  if (!plen || size % plen || !in_range(dst, off, size))
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "bad fill range or pattern");
  for (uint64_t i = 0; i < size; i += plen) memcpy(dst->data + off + i, pattern, plen);
  return NULL;
}

/* Address of element `linear` (row-major over `shape`) of a strided f32 view. */
static float *element(const AnydevTensor *t, const uint64_t *shape, uint32_t ndim, uint64_t linear) {
  int64_t offset = 0;
  for (uint32_t d = ndim; d-- > 0;) {
    offset += (int64_t)(linear % shape[d]) * t->strides[d];
    linear /= shape[d];
  }
  return (float *)(t->buffer->data + t->byte_offset) + offset;
}

static float operand_value(const AnydevOperand *o, const AnydevTensor *out, uint64_t i) {
  if (o->kind == ANYDEV_OPERAND_SCALAR) {
    uint32_t bits = (uint32_t)o->scalar.bits;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
  }
  return *element(&o->tensor, out->shape, out->ndim, i);
}

static AnydevStatus execute(AnydevContext *ctx, AnydevStream *s, const AnydevOpCall *call) {
  (void)ctx;
  (void)s;
  const AnydevTensor *out = &call->output;
  if (out->dtype != ANYDEV_DTYPE_F32) return fail(ANYDEV_ERROR_UNIMPLEMENTED, "the C test device computes only f32");
  uint64_t n = 1;
  for (uint32_t d = 0; d < out->ndim; d++) n *= out->shape[d];
  switch (call->op_code) {
    case ANYDEV_OP_FILL:
      for (uint64_t i = 0; i < n; i++) *element(out, out->shape, out->ndim, i) = operand_value(&call->inputs[0], out, i);
      return NULL;
    case ANYDEV_OP_COPY:
      for (uint64_t i = 0; i < n; i++) *element(out, out->shape, out->ndim, i) = operand_value(&call->inputs[0], out, i);
      return NULL;
    case ANYDEV_OP_ADD:
#ifdef TEST_SIGNATURE_NO_ADD
      return fail(ANYDEV_ERROR_INTERNAL, "execute of add despite op_supported_signature saying no");
#endif
#ifdef TEST_ADD_CRASHES
      CRASH();
#endif
      for (uint64_t i = 0; i < n; i++)
        *element(out, out->shape, out->ndim, i) =
            operand_value(&call->inputs[0], out, i) + operand_value(&call->inputs[1], out, i);
      return NULL;
    default:
      return fail(ANYDEV_ERROR_UNIMPLEMENTED, "the C test device implements only fill, copy and add");
  }
}

#ifndef TEST_NO_EXTENSIONS
static const char *const extension_names[] = {"ctest::axpy"};

static AnydevStatus extension_ops(AnydevContext *ctx, AnydevDevice *dev, AnydevExtensionOpList *out) {
  (void)ctx;
  (void)dev;
#ifdef TEST_EXTENSION_OPS_FAILS
  return fail(ANYDEV_ERROR_INTERNAL, "simulated extension registry failure");
#endif
  if (!ANYDEV_HAS_FIELD(out, AnydevExtensionOpList, count))
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "extension op list struct too small");
  out->names = extension_names;
  out->count = sizeof extension_names / sizeof extension_names[0];
  return NULL;
}

/* Whether call is ctest::axpy on 1-D f32 arrays of one shape. */
static int axpy_signature(const AnydevExtensionCall *call) {
  if (strcmp(call->op_name, "ctest::axpy") != 0 || call->num_inputs != 2 || call->num_outputs != 1) return 0;
  const AnydevTensor *t[3] = {&call->inputs[0], &call->inputs[1], &call->outputs[0]};
  for (int i = 0; i < 3; i++)
    if (t[i]->dtype != ANYDEV_DTYPE_F32 || t[i]->ndim != 1 || t[i]->shape[0] != t[2]->shape[0]) return 0;
  return 1;
}

static AnydevStatus extension_supported(AnydevContext *ctx, AnydevDevice *dev, const AnydevExtensionCall *call,
                                        uint8_t *out) {
  (void)ctx;
  (void)dev;
  *out = (uint8_t)axpy_signature(call);
  return NULL;
}

static AnydevStatus extension_execute(AnydevContext *ctx, AnydevStream *s, const AnydevExtensionCall *call) {
  (void)ctx;
  (void)s;
  if (!axpy_signature(call)) return fail(ANYDEV_ERROR_UNIMPLEMENTED, "the C test device runs only ctest::axpy on 1-D f32");
  const AnydevAttribute *a = NULL;
  for (size_t i = 0; i < call->num_attributes; i++)
    if (strcmp(call->attributes[i].name, "a") == 0 && call->attributes[i].kind == ANYDEV_ATTR_F64) a = &call->attributes[i];
  if (!a) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "ctest::axpy needs the float attribute a");
  if (a->float_value != a->float_value) return fail(ANYDEV_ERROR_INVALID_ARGUMENT, "ctest::axpy: a is NaN, which the C test device refuses");
  /* Contiguous from byte_offset: the host guarantees it. */
  const float *x = (const float *)(call->inputs[0].buffer->data + call->inputs[0].byte_offset);
  const float *y = (const float *)(call->inputs[1].buffer->data + call->inputs[1].byte_offset);
  float *out = (float *)(call->outputs[0].buffer->data + call->outputs[0].byte_offset);
  for (uint64_t i = 0; i < call->outputs[0].shape[0]; i++) out[i] = (float)a->float_value * x[i] + y[i];
  return NULL;
}
#endif

static const AnydevPluginApi api = {
    .struct_size = sizeof(AnydevPluginApi),
    .version = {TEST_MAJOR, TEST_MINOR},
    .error_code = error_code,
    .error_message = error_message,
    .error_destroy = error_destroy,
    .initialize = initialize,
    .shutdown = shutdown_ctx,
    .device_count = device_count,
    .get_device = get_device,
    .device_properties = device_properties,
#ifdef TEST_NO_CAPABILITIES
    .device_capabilities = NULL,
#else
    .device_capabilities = device_capabilities,
#endif
    .op_supported = op_supported,
    .memory_kinds = NULL, /* device memory only */
    .device_synchronize = device_synchronize,
    .allocate = allocate,
    .free = free_buffer,
    .memory_stats = memory_stats,
#ifndef TEST_NO_STREAMS
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
#ifndef TEST_NO_EVENTS
    .event_record = event_record,
    .event_wait = event_wait,
    .event_query = event_query,
    .event_synchronize = event_synchronize,
    .event_destroy = event_destroy,
#endif
#endif
    .copy_host_to_device = copy_h2d,
    .copy_device_to_host = copy_d2h,
#ifndef TEST_NO_D2D
    .copy_device_to_device = copy_d2d,
#endif
    .fill = fill_bytes,
#ifdef TEST_NO_EXECUTE
    .execute = 0 ? execute : NULL, /* NULL, with execute still used */
#else
    .execute = execute,
#endif
#ifdef TEST_SIGNATURE_NO_ADD
    .op_supported_signature = op_supported_signature,
#endif
#ifndef TEST_NO_EXTENSIONS
    .extension_ops = extension_ops,
    .extension_supported = extension_supported,
    .extension_execute = extension_execute,
#endif
};

#ifdef TEST_TABLE_SIZE
/* The first TEST_TABLE_SIZE bytes of the table, ending exactly where an
 * inaccessible page begins. */
static const AnydevPluginApi *truncated_table(void) {
  static const AnydevPluginApi *table = NULL;
  if (table) return table;
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *pages = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) return NULL;
  unsigned char *start = pages + page - TEST_TABLE_SIZE;
  memcpy(start, &api, TEST_TABLE_SIZE);
  ((AnydevPluginApi *)start)->struct_size = TEST_TABLE_SIZE;
  mprotect(pages + page, (size_t)page, PROT_NONE);
  table = (const AnydevPluginApi *)start;
  return table;
}
#endif

#ifdef TEST_NO_ENTRY
__attribute__((visibility("default"))) const AnydevPluginApi *not_the_entry_symbol(void) { return &api; }
#else
__attribute__((visibility("default"))) const AnydevPluginApi *anydev_plugin_get_api(void) {
#ifdef TEST_TABLE_SIZE
  return truncated_table();
#else
  return &api;
#endif
}
#endif

/* ---- layout as this compiler sees it ---------------------------------------- */
typedef struct AnydevTestLayout {
  const char *name;
  size_t value;
} AnydevTestLayout;

#define SIZE(T) {"size " #T, sizeof(T)}
#define OFFSET(T, f) {#T "." #f, offsetof(T, f)}

__attribute__((visibility("default"))) const AnydevTestLayout anydev_test_layout[] = {
    SIZE(AnydevVersion),
    SIZE(AnydevPluginApi),
    OFFSET(AnydevPluginApi, version),
    OFFSET(AnydevPluginApi, error_code),
    OFFSET(AnydevPluginApi, initialize),
    OFFSET(AnydevPluginApi, device_count),
    OFFSET(AnydevPluginApi, op_supported),
    OFFSET(AnydevPluginApi, allocate),
    OFFSET(AnydevPluginApi, memory_stats),
    OFFSET(AnydevPluginApi, stream_create),
    OFFSET(AnydevPluginApi, event_destroy),
    OFFSET(AnydevPluginApi, copy_host_to_device),
    OFFSET(AnydevPluginApi, fill),
    OFFSET(AnydevPluginApi, execute),
    OFFSET(AnydevPluginApi, buffer_host_pointer),
    OFFSET(AnydevPluginApi, buffer_import),
    OFFSET(AnydevPluginApi, op_supported_signature),
    OFFSET(AnydevPluginApi, extension_ops),
    OFFSET(AnydevPluginApi, extension_supported),
    OFFSET(AnydevPluginApi, extension_execute),
    OFFSET(AnydevPluginApi, empty_cache),
    OFFSET(AnydevPluginApi, memory_reset_peak),
    OFFSET(AnydevPluginApi, event_elapsed),
    OFFSET(AnydevPluginApi, comm_id),
    OFFSET(AnydevPluginApi, comm_init),
    OFFSET(AnydevPluginApi, comm_abort),
    OFFSET(AnydevPluginApi, comm_destroy),
    OFFSET(AnydevPluginApi, collective),
    SIZE(AnydevCommId),
    SIZE(AnydevCommInitArgs),
    OFFSET(AnydevCommInitArgs, id),
    OFFSET(AnydevCommInitArgs, nranks),
    OFFSET(AnydevCommInitArgs, rank),
    OFFSET(AnydevCommInitArgs, timeout_ms),
    SIZE(AnydevCollectiveCall),
    OFFSET(AnydevCollectiveCall, kind),
    OFFSET(AnydevCollectiveCall, dtype),
    OFFSET(AnydevCollectiveCall, reduce_op),
    OFFSET(AnydevCollectiveCall, peer),
    OFFSET(AnydevCollectiveCall, send),
    OFFSET(AnydevCollectiveCall, send_offset),
    OFFSET(AnydevCollectiveCall, recv),
    OFFSET(AnydevCollectiveCall, recv_offset),
    OFFSET(AnydevCollectiveCall, count),
    SIZE(AnydevExtensionOpList),
    OFFSET(AnydevExtensionOpList, names),
    OFFSET(AnydevExtensionOpList, count),
    SIZE(AnydevExtensionCall),
    OFFSET(AnydevExtensionCall, op_name),
    OFFSET(AnydevExtensionCall, inputs),
    OFFSET(AnydevExtensionCall, num_inputs),
    OFFSET(AnydevExtensionCall, outputs),
    OFFSET(AnydevExtensionCall, num_outputs),
    OFFSET(AnydevExtensionCall, attributes),
    OFFSET(AnydevExtensionCall, num_attributes),
    SIZE(AnydevOpSignature),
    OFFSET(AnydevOpSignature, op_code),
    OFFSET(AnydevOpSignature, output_dtype),
    OFFSET(AnydevOpSignature, input_dtypes),
    OFFSET(AnydevOpSignature, num_inputs),
    SIZE(AnydevInitArgs),
    OFFSET(AnydevInitArgs, plugin_name),
    OFFSET(AnydevInitArgs, options_json),
    SIZE(AnydevDeviceProperties),
    OFFSET(AnydevDeviceProperties, memory_bytes),
    SIZE(AnydevAttribute),
    OFFSET(AnydevAttribute, kind),
    OFFSET(AnydevAttribute, int_value),
    OFFSET(AnydevAttribute, float_value),
    OFFSET(AnydevAttribute, string_value),
    OFFSET(AnydevAttribute, list),
    OFFSET(AnydevAttribute, list_len),
    SIZE(AnydevAttributeList),
    OFFSET(AnydevAttributeList, count),
    SIZE(AnydevMemoryStats),
    OFFSET(AnydevMemoryStats, limit),
    OFFSET(AnydevMemoryStats, reserved),
    OFFSET(AnydevMemoryStats, total),
    SIZE(AnydevTensor),
    OFFSET(AnydevTensor, byte_offset),
    OFFSET(AnydevTensor, dtype),
    OFFSET(AnydevTensor, ndim),
    OFFSET(AnydevTensor, shape),
    OFFSET(AnydevTensor, strides),
    SIZE(AnydevScalar),
    OFFSET(AnydevScalar, bits),
    SIZE(AnydevOperand),
    OFFSET(AnydevOperand, tensor),
    OFFSET(AnydevOperand, scalar),
    SIZE(AnydevOpCall),
    OFFSET(AnydevOpCall, op_code),
    OFFSET(AnydevOpCall, flags),
    OFFSET(AnydevOpCall, output),
    OFFSET(AnydevOpCall, inputs),
    OFFSET(AnydevOpCall, num_inputs),
    OFFSET(AnydevOpCall, axes),
    OFFSET(AnydevOpCall, num_axes),
    OFFSET(AnydevOpCall, distribution),
    OFFSET(AnydevOpCall, params_f64),
    OFFSET(AnydevOpCall, params_u64),
    {NULL, 0},
};
