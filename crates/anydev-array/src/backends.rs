//! The backends compiled into this build. Plugins are not listed here: the
//! core discovers and appends them inside `Runtime::global`.

use anydev_core::BackendProvider;

/// Providers of the built-in backends: the CPU always; CUDA and wgpu join
/// behind their cargo features.
pub fn builtin_providers() -> Vec<BackendProvider> {
    let providers = vec![anydev_cpu::provider()];
    // Without the features nothing is appended, so no `mut` binding lingers.
    #[cfg(feature = "cuda")]
    let providers = {
        let mut providers = providers;
        providers.push(anydev_cuda::provider());
        providers
    };
    #[cfg(feature = "wgpu")]
    let providers = {
        let mut providers = providers;
        providers.push(anydev_wgpu::provider());
        providers
    };
    providers
}
