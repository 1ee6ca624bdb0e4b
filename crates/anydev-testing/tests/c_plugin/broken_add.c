/*
 * The C test plugin of anydev-plugin-abi with one deliberately wrong op:
 * `add` writes 1 too much into the first element of its output. It exists
 * to prove that conformance catches a broken kernel and says which case,
 * which device, what was expected and what came back. Built with
 * -I crates/anydev-plugin-abi/include -I crates/anydev-plugin-abi/tests/c_plugin.
 */
#define anydev_plugin_get_api anydev_good_plugin_get_api
#include "test_plugin.c"
#undef anydev_plugin_get_api

static AnydevPluginApi broken_api;

static AnydevStatus broken_execute(AnydevContext *ctx, AnydevStream *s, const AnydevOpCall *call) {
  AnydevStatus status = execute(ctx, s, call);
  const AnydevTensor *out = &call->output;
  uint64_t n = 1;
  for (uint32_t d = 0; d < out->ndim; d++) n *= out->shape[d];
  if (!status && call->op_code == ANYDEV_OP_ADD && n > 0) *element(out, out->shape, out->ndim, 0) += 1.0f;
  return status;
}

__attribute__((visibility("default"))) const AnydevPluginApi *anydev_plugin_get_api(void) {
  broken_api = *anydev_good_plugin_get_api();
  broken_api.execute = broken_execute;
  return &broken_api;
}
