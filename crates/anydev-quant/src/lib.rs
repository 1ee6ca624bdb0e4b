//! Blockwise quantization as bitsandbytes defines it, added to anydev as
//! extension ops (design section 11) without changing anydev: the model
//! for third-party libraries with their own kernels.
//!
//! - [`formats`]: the 8-bit dynamic map, NF4 and FP4, and how a value
//!   picks its code: one definition every kernel takes its tables from.
//! - [`host`]: the kernels on plain slices, parallel over blocks.
//! - [`call`]: the ops by name ([`op`]) on host memory, as the `cpu`
//!   kernels and a host-computing device plugin run them.
//! - With the default feature `runtime`: the ops `quant::*`,
//!   their kernels for `cpu` (the host kernels), `wgpu` (WGSL) and `cuda`
//!   (CUDA C++ through NVRTC), and a typed API over them
//!   ([`quantize_4bit`], [`dequantize_4bit`], [`gemv_4bit`],
//!   [`quantize_blockwise`], [`dequantize_blockwise`], [`dynamic_map`]),
//!   and, with the feature `conformance`, the cases that certify a
//!   device's implementation of the ops (module `conformance`).
//!
//! Without `runtime` (`default-features = false`) only [`formats`],
//! [`host`] and [`call`] are built, so a device plugin can link the same kernels
//! without linking the runtime.
//!
//! docs/quantization.md describes the formats, ops and guarantees.

pub mod call;
pub mod formats;
pub mod host;

#[cfg(feature = "runtime")]
mod api;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "runtime")]
pub mod cuda;
#[cfg(feature = "runtime")]
mod launch;
#[cfg(feature = "runtime")]
mod ops;
#[cfg(feature = "runtime")]
mod wgsl;

#[cfg(feature = "runtime")]
pub use api::{
    dequantize_4bit, dequantize_blockwise, dynamic_map, gemv_4bit, quantize_4bit, quantize_blockwise, Quantized4bit,
    QuantizedBlockwise,
};
pub use call::op;
pub use formats::QuantType;
#[cfg(feature = "runtime")]
pub use ops::{register, register_ops};
