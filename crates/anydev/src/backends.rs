//! The backends compiled into this build: the CPU always; CUDA and wgpu
//! behind this crate's cargo features. Registering them here, in the one
//! crate that chooses them, keeps the array layer and the core free of
//! concrete backends. Plugins are not listed: the runtime discovers them.

anydev_core::builtin_backend!(CPU, 0, anydev_cpu::provider);
#[cfg(feature = "cuda")]
anydev_core::builtin_backend!(CUDA, 1, anydev_cuda::provider);
#[cfg(feature = "wgpu")]
anydev_core::builtin_backend!(WGPU, 2, anydev_wgpu::provider);

pub use anydev_core::builtin_providers;
