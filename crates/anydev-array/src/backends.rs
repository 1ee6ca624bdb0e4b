//! The backends compiled into this build. Plugins are not listed here: the
//! core discovers and appends them inside `Runtime::global`.

use anydev_core::BackendProvider;

/// Providers of the built-in backends: the CPU always; CUDA and wgpu join
/// behind their cargo features.
pub fn builtin_providers() -> Vec<BackendProvider> {
    let mut providers = vec![anydev_cpu::provider()];
    #[cfg(feature = "wgpu")]
    providers.push(anydev_wgpu::provider());
    providers
}
