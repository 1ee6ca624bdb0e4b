/*
 * A starting point for a device plugin in C, against anydev_plugin.h alone.
 *
 * One device ("template:0") whose memory is host memory and whose work
 * runs at once, in the calling thread: every stream call is trivially
 * ordered, and every event has completed when recorded. It computes four
 * ops for f32 (fill, copy, add, multiply) and declares exactly those, so
 * `anydev conformance` passes it and reports everything else as skipped.
 *
 * To make it yours: rename the manifest's "name", replace the buffer
 * functions with your driver's allocator and copies, and grow
 * op_supported/execute op by op, running conformance after each step.
 * docs/plugins.md walks through it.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign, pthreads */
#include "anydev_plugin.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors: the host reads code and message, then destroys ---------------- */
struct AnydevError {
  int32_t code;
  char message[200];
};

static AnydevStatus error(int32_t code, const char *message) {
  AnydevError *e = malloc(sizeof *e);
  if (e == NULL) return NULL; /* nothing left to report with */
  e->code = code;
  snprintf(e->message, sizeof e->message, "template: %s", message);
  return e;
}

static int32_t error_code(const AnydevError *e) { return e->code; }
static const char *error_message(const AnydevError *e) { return e->message; }
static void error_destroy(AnydevError *e) { free(e); }

/* ---- handles ------------------------------------------------------------------ */
#define MEMORY_BYTES ((uint64_t)256 << 20)

struct AnydevDevice {
  int unused;
};
/* Calls may overlap (see the header's Threading), so the memory counters
 * change under the lock. */
struct AnydevContext {
  AnydevDevice device;
  pthread_mutex_t lock;
  uint64_t in_use, peak, live; /* memory_stats: live buffers only */
};
struct AnydevBuffer {
  unsigned char *bytes;
  uint64_t size;
};
struct AnydevStream {
  int unused;
};
struct AnydevEvent {
  int unused;
};

/* ---- lifecycle ------------------------------------------------------------------ */
static AnydevStatus initialize(const AnydevInitArgs *args, AnydevContext **out) {
  AnydevContext *ctx;
  if (args->host_version.major != ANYDEV_ABI_VERSION_MAJOR)
    return error(ANYDEV_ERROR_INVALID_ARGUMENT, "built for another major ABI version");
  ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return error(ANYDEV_ERROR_OUT_OF_MEMORY, "no memory for the context");
  if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
    free(ctx);
    return error(ANYDEV_ERROR_INTERNAL, "cannot create the context's lock");
  }
  *out = ctx;
  return NULL;
}

static AnydevStatus shutdown_context(AnydevContext *ctx) {
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
  return NULL;
}

/* ---- devices ------------------------------------------------------------------ */
static AnydevStatus device_count(AnydevContext *ctx, uint32_t *out) {
  (void)ctx;
  *out = 1;
  return NULL;
}

static AnydevStatus get_device(AnydevContext *ctx, uint32_t index, AnydevDevice **out) {
  if (index != 0) return error(ANYDEV_ERROR_INVALID_ARGUMENT, "there is one device");
  *out = &ctx->device;
  return NULL;
}

static AnydevStatus device_properties(AnydevContext *ctx, AnydevDevice *dev, AnydevDeviceProperties *out) {
  (void)ctx;
  (void)dev;
  /* Write only fields the host's struct has. */
  if (!ANYDEV_HAS_FIELD(out, AnydevDeviceProperties, memory_bytes))
    return error(ANYDEV_ERROR_INVALID_ARGUMENT, "properties struct too small");
  out->name = "Template device";
  out->vendor = "Your company";
  out->driver = "none";
  out->version = "0.1.0";
  out->memory_bytes = MEMORY_BYTES;
  return NULL;
}

static const int64_t dtype_codes[] = {ANYDEV_DTYPE_F32};
static const AnydevAttribute attributes[] = {
    {"dtypes", ANYDEV_ATTR_I64_LIST, 0, 0, 0.0, NULL, dtype_codes, 1},
    {"compute_units", ANYDEV_ATTR_I64, 0, 1, 0.0, NULL, NULL, 0},
    {"async_execution", ANYDEV_ATTR_BOOL, 0, 0, 0.0, NULL, NULL, 0},
};

static AnydevStatus device_capabilities(AnydevContext *ctx, AnydevDevice *dev, AnydevAttributeList *out) {
  (void)ctx;
  (void)dev;
  out->attributes = attributes;
  out->count = sizeof attributes / sizeof attributes[0];
  return NULL;
}

static int implements(uint32_t op) {
  return op == ANYDEV_OP_FILL || op == ANYDEV_OP_COPY || op == ANYDEV_OP_ADD || op == ANYDEV_OP_MULTIPLY;
}

static AnydevStatus op_supported(AnydevContext *ctx, AnydevDevice *dev, uint32_t op, uint32_t dtype, uint8_t *out) {
  (void)ctx;
  (void)dev;
  *out = dtype == ANYDEV_DTYPE_F32 && implements(op);
  return NULL;
}

/* ABI 1.2: every operand, and the output, must be f32. */
static AnydevStatus op_supported_signature(AnydevContext *ctx, AnydevDevice *dev, const AnydevOpSignature *sig,
                                           uint8_t *out) {
  size_t i;
  (void)ctx;
  (void)dev;
  *out = implements(sig->op_code) && sig->output_dtype == ANYDEV_DTYPE_F32;
  for (i = 0; i < sig->num_inputs; i++) *out = *out && sig->input_dtypes[i] == ANYDEV_DTYPE_F32;
  return NULL;
}

static AnydevStatus device_synchronize(AnydevContext *ctx, AnydevDevice *dev) {
  (void)ctx;
  (void)dev;
  return NULL; /* all work is done when its call returns */
}

/* ---- memory ------------------------------------------------------------------ */
static AnydevStatus allocate(AnydevContext *ctx, AnydevDevice *dev, uint64_t size, uint32_t kind,
                             AnydevBuffer **out) {
  AnydevBuffer *b;
  void *bytes = NULL;
  int fits;
  (void)dev;
  if (kind != ANYDEV_MEMORY_DEVICE) return error(ANYDEV_ERROR_INVALID_ARGUMENT, "only device memory");
  b = malloc(sizeof *b);
  if (b == NULL || posix_memalign(&bytes, 256, size ? size : 1) != 0) {
    free(b);
    return error(ANYDEV_ERROR_OUT_OF_MEMORY, "host allocation failed");
  }
  /* Check and count under one lock, so that overlapping calls cannot both fit. */
  pthread_mutex_lock(&ctx->lock);
  fits = size <= MEMORY_BYTES - ctx->in_use;
  if (fits) {
    ctx->in_use += size;
    ctx->live += 1;
    if (ctx->in_use > ctx->peak) ctx->peak = ctx->in_use;
  }
  pthread_mutex_unlock(&ctx->lock);
  if (!fits) {
    free(bytes);
    free(b);
    return error(ANYDEV_ERROR_OUT_OF_MEMORY, "the 256 MiB device is full");
  }
  b->bytes = bytes;
  b->size = size;
  *out = b;
  return NULL;
}

static AnydevStatus free_buffer(AnydevContext *ctx, AnydevBuffer *b) {
  pthread_mutex_lock(&ctx->lock);
  ctx->in_use -= b->size;
  ctx->live -= 1;
  pthread_mutex_unlock(&ctx->lock);
  free(b->bytes);
  free(b);
  return NULL;
}

static AnydevStatus memory_stats(AnydevContext *ctx, AnydevDevice *dev, AnydevMemoryStats *out) {
  uint64_t in_use;
  (void)dev;
  pthread_mutex_lock(&ctx->lock);
  in_use = ctx->in_use;
  out->in_use = in_use;
  out->peak = ctx->peak;
  out->allocations = ctx->live;
  pthread_mutex_unlock(&ctx->lock);
  out->limit = MEMORY_BYTES;
  /* ABI 1.5: this device caches nothing and its size is its limit. A host
   * older than 1.5 passes a struct without these fields: write only what
   * its struct_size covers. */
  if (ANYDEV_HAS_FIELD(out, AnydevMemoryStats, reserved)) out->reserved = in_use;
  if (ANYDEV_HAS_FIELD(out, AnydevMemoryStats, free)) out->free = MEMORY_BYTES - in_use;
  if (ANYDEV_HAS_FIELD(out, AnydevMemoryStats, total)) out->total = MEMORY_BYTES;
  return NULL;
}

static AnydevStatus memory_reset_peak(AnydevContext *ctx, AnydevDevice *dev) {
  (void)dev;
  pthread_mutex_lock(&ctx->lock);
  ctx->peak = ctx->in_use;
  pthread_mutex_unlock(&ctx->lock);
  return NULL;
}

/* ---- streams and events: work is complete when its call returns ------------ */
static AnydevStatus stream_create(AnydevContext *ctx, AnydevDevice *dev, AnydevStream **out) {
  (void)ctx;
  (void)dev;
  *out = malloc(sizeof **out);
  return *out ? NULL : error(ANYDEV_ERROR_OUT_OF_MEMORY, "no memory for a stream");
}

static AnydevStatus stream_destroy(AnydevContext *ctx, AnydevStream *s) {
  (void)ctx;
  free(s);
  return NULL;
}

static AnydevStatus stream_synchronize(AnydevContext *ctx, AnydevStream *s) {
  (void)ctx;
  (void)s;
  return NULL;
}

static AnydevStatus event_record(AnydevContext *ctx, AnydevStream *s, AnydevEvent **out) {
  (void)ctx;
  (void)s;
  *out = malloc(sizeof **out);
  return *out ? NULL : error(ANYDEV_ERROR_OUT_OF_MEMORY, "no memory for an event");
}

static AnydevStatus event_wait(AnydevContext *ctx, AnydevStream *s, AnydevEvent *e) {
  (void)ctx;
  (void)s;
  (void)e;
  return NULL;
}

static AnydevStatus event_query(AnydevContext *ctx, AnydevEvent *e, uint8_t *done) {
  (void)ctx;
  (void)e;
  *done = 1;
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

/* ---- copies: the host has checked every range; memmove tolerates overlap -- */
static AnydevStatus copy_in(AnydevContext *ctx, AnydevStream *s, const uint8_t *src, AnydevBuffer *dst,
                            uint64_t offset, uint64_t size) {
  (void)ctx;
  (void)s;
  memcpy(dst->bytes + offset, src, size);
  return NULL;
}

static AnydevStatus copy_out(AnydevContext *ctx, AnydevStream *s, AnydevBuffer *src, uint64_t offset, uint8_t *dst,
                             uint64_t size) {
  (void)ctx;
  (void)s;
  memcpy(dst, src->bytes + offset, size);
  return NULL;
}

static AnydevStatus copy_between(AnydevContext *ctx, AnydevStream *s, AnydevBuffer *src, uint64_t src_offset,
                                 AnydevBuffer *dst, uint64_t dst_offset, uint64_t size) {
  (void)ctx;
  (void)s;
  memmove(dst->bytes + dst_offset, src->bytes + src_offset, size);
  return NULL;
}

static AnydevStatus fill_pattern(AnydevContext *ctx, AnydevStream *s, AnydevBuffer *dst, uint64_t offset,
                                 uint64_t size, const uint8_t *pattern, uint64_t pattern_size) {
  uint64_t i;
  (void)ctx;
  (void)s;
  for (i = 0; i < size; i += pattern_size) memcpy(dst->bytes + offset + i, pattern, pattern_size);
  return NULL;
}

/* ---- ops ---------------------------------------------------------------------- */
/* Element `linear` (row-major over the output's shape) of operand `t`, which
 * the host gives the output's shape, broadcasting with zero strides. */
static float *at(const AnydevTensor *t, const AnydevTensor *out, uint64_t linear) {
  int64_t offset = 0;
  uint32_t d = out->ndim;
  while (d-- > 0) {
    offset += (int64_t)(linear % out->shape[d]) * t->strides[d];
    linear /= out->shape[d];
  }
  return (float *)(t->buffer->bytes + t->byte_offset) + offset;
}

static float input(const AnydevOpCall *call, size_t i, uint64_t linear) {
  const AnydevOperand *o = &call->inputs[i];
  float value;
  uint32_t bits;
  if (o->kind == ANYDEV_OPERAND_TENSOR) return *at(&o->tensor, &call->output, linear);
  bits = (uint32_t)o->scalar.bits; /* f32 scalars: the low 32 bits */
  memcpy(&value, &bits, sizeof value);
  return value;
}

static AnydevStatus execute(AnydevContext *ctx, AnydevStream *s, const AnydevOpCall *call) {
  const AnydevTensor *out = &call->output;
  uint64_t n = 1, i;
  uint32_t d;
  (void)ctx;
  (void)s;
  if (out->dtype != ANYDEV_DTYPE_F32 || !implements(call->op_code))
    return error(ANYDEV_ERROR_UNIMPLEMENTED, "only f32 fill, copy, add and multiply");
  for (d = 0; d < out->ndim; d++) n *= out->shape[d];
  for (i = 0; i < n; i++) {
    float v = input(call, 0, i);
    if (call->op_code == ANYDEV_OP_ADD) v += input(call, 1, i);
    if (call->op_code == ANYDEV_OP_MULTIPLY) v *= input(call, 1, i);
    *at(out, out, i) = v;
  }
  return NULL;
}

/* ---- the table ------------------------------------------------------------------ */
/* Designated initialisers: calls left out are NULL (unimplemented). */
static const AnydevPluginApi api = {
    .struct_size = sizeof(AnydevPluginApi),
    .version = {ANYDEV_ABI_VERSION_MAJOR, ANYDEV_ABI_VERSION_MINOR},
    .error_code = error_code,
    .error_message = error_message,
    .error_destroy = error_destroy,
    .initialize = initialize,
    .shutdown = shutdown_context,
    .device_count = device_count,
    .get_device = get_device,
    .device_properties = device_properties,
    .device_capabilities = device_capabilities,
    .op_supported = op_supported,
    .device_synchronize = device_synchronize,
    .allocate = allocate,
    .free = free_buffer,
    .memory_stats = memory_stats,
    .memory_reset_peak = memory_reset_peak,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
    .event_record = event_record,
    .event_wait = event_wait,
    .event_query = event_query,
    .event_synchronize = event_synchronize,
    .event_destroy = event_destroy,
    .copy_host_to_device = copy_in,
    .copy_device_to_host = copy_out,
    .copy_device_to_device = copy_between,
    .fill = fill_pattern,
    .execute = execute,
    .op_supported_signature = op_supported_signature,
    /* The ABI 1.6 collectives (comm_id, comm_init, comm_abort, comm_destroy,
     * collective) stay NULL: anydev-dist then moves this device's arrays
     * between processes through host memory. A device with a collective
     * library (most copy NCCL's API) sets all five; see the header. */
};

const AnydevPluginApi *anydev_plugin_get_api(void) { return &api; }
