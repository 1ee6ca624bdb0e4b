//! Compile-time checks that the layout is the one the header documents.
//! A change here is an ABI break: it needs a new major version.

use crate::*;
use core::mem::{offset_of, size_of};

// The ABI is defined for 64-bit targets (pointers, `size_t` and `uint64_t`
// have the same width, so shapes can be passed without conversion).
const _: () = assert!(
    size_of::<usize>() == 8,
    "the anydev plugin ABI is defined for 64-bit targets"
);

const _: () = {
    assert!(size_of::<AnydevVersion>() == 4);
    assert!(offset_of!(AnydevPluginApi, struct_size) == 0);
    assert!(offset_of!(AnydevPluginApi, version) == 8);
    assert!(offset_of!(AnydevPluginApi, error_code) == 16);
    assert!(offset_of!(AnydevPluginApi, initialize) == 40);
    assert!(offset_of!(AnydevPluginApi, device_count) == 56);
    assert!(offset_of!(AnydevPluginApi, allocate) == 112);
    assert!(offset_of!(AnydevPluginApi, stream_create) == 136);
    assert!(offset_of!(AnydevPluginApi, copy_host_to_device) == 200);
    assert!(offset_of!(AnydevPluginApi, execute) == 232);
    // ABI 1.1 appended the unified-memory calls; 1.0 tables end at 240.
    assert!(offset_of!(AnydevPluginApi, buffer_host_pointer) == 240);
    assert!(offset_of!(AnydevPluginApi, buffer_import) == 248);
    // ABI 1.2 appended the full-signature support query; 1.1 tables end at 256.
    assert!(offset_of!(AnydevPluginApi, op_supported_signature) == 256);
    // ABI 1.4 appended the extension-op calls; 1.2 and 1.3 tables end at 264.
    assert!(offset_of!(AnydevPluginApi, extension_ops) == 264);
    assert!(offset_of!(AnydevPluginApi, extension_supported) == 272);
    assert!(offset_of!(AnydevPluginApi, extension_execute) == 280);
    // ABI 1.5 appended memory and timing control; 1.4 tables end at 288.
    assert!(offset_of!(AnydevPluginApi, empty_cache) == 288);
    assert!(offset_of!(AnydevPluginApi, memory_reset_peak) == 296);
    assert!(offset_of!(AnydevPluginApi, event_elapsed) == 304);
    // ABI 1.6 appended the collectives; 1.5 tables end at 312.
    assert!(offset_of!(AnydevPluginApi, comm_id) == 312);
    assert!(offset_of!(AnydevPluginApi, collective) == 344);
    assert!(size_of::<AnydevPluginApi>() == 352);
    assert!(size_of::<AnydevCommId>() == 128);
    assert!(size_of::<AnydevCommInitArgs>() == 152);
    assert!(offset_of!(AnydevCommInitArgs, nranks) == 136);
    assert!(offset_of!(AnydevCommInitArgs, timeout_ms) == 144);
    assert!(size_of::<AnydevCollectiveCall>() == 64);
    assert!(offset_of!(AnydevCollectiveCall, send) == 24);
    assert!(offset_of!(AnydevCollectiveCall, count) == 56);
    assert!(size_of::<AnydevExtensionOpList>() == 24);
    assert!(size_of::<AnydevExtensionCall>() == 64);
    assert!(offset_of!(AnydevExtensionCall, attributes) == 48);
    assert!(size_of::<AnydevOpSignature>() == 32);
    assert!(offset_of!(AnydevOpSignature, input_dtypes) == 16);

    assert!(size_of::<AnydevInitArgs>() == 32);
    assert!(offset_of!(AnydevInitArgs, options_json) == 24);
    assert!(size_of::<AnydevDeviceProperties>() == 48);
    assert!(size_of::<AnydevAttribute>() == 56);
    assert!(offset_of!(AnydevAttribute, list_len) == 48);
    assert!(size_of::<AnydevAttributeList>() == 24);
    // ABI 1.5 appended reserved, free and total; 1.4 stats end at 40.
    assert!(offset_of!(AnydevMemoryStats, reserved) == 40);
    assert!(size_of::<AnydevMemoryStats>() == 64);

    assert!(size_of::<AnydevTensor>() == 40);
    assert!(offset_of!(AnydevTensor, dtype) == 16);
    assert!(offset_of!(AnydevTensor, strides) == 32);
    assert!(size_of::<AnydevScalar>() == 16);
    assert!(size_of::<AnydevOperand>() == 64);
    assert!(offset_of!(AnydevOperand, scalar) == 48);
    assert!(offset_of!(AnydevOpCall, output) == 16);
    assert!(offset_of!(AnydevOpCall, inputs) == 56);
    assert!(offset_of!(AnydevOpCall, distribution) == 88);
    assert!(offset_of!(AnydevOpCall, params_f64) == 96);
    assert!(size_of::<AnydevOpCall>() == 128);
};
