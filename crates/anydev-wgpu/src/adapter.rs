//! Finding adapters: which wgpu backends to ask, in which order the
//! adapters become devices, and what "no adapter" looks like.
//!
//! Everything here runs inside the provider's initialiser, never at load
//! time. With no backend enabled (`ANYDEV_WGPU_BACKENDS=none`) nothing is
//! even instantiated, so the answer "unavailable" comes in microseconds.

use crate::device::GpuDevice;
use anydev_core::InitError;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Environment variable naming the wgpu backends to use: a comma list of
/// `vulkan`/`vk`, `metal`/`mtl`, `dx12`/`d3d12`, or `none` to force "no
/// adapter" (tests do this). When unset, wgpu's own `WGPU_BACKEND` is
/// honoured, and when that is unset too, every compiled-in backend is tried.
pub const BACKENDS_ENV: &str = "ANYDEV_WGPU_BACKENDS";

/// How to initialise the backend; [`InitOptions::from_env`] is what the
/// provider uses, tests build one explicitly instead of mutating the env.
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// The wgpu backends to enumerate; empty means "no adapter".
    pub backends: wgpu::Backends,
    /// Where `backends` came from, quoted in the reason when nothing is found.
    pub source: String,
}

impl InitOptions {
    /// All compiled-in backends.
    pub fn all() -> InitOptions {
        InitOptions {
            backends: wgpu::Backends::all(),
            source: "all wgpu backends".into(),
        }
    }

    /// No backend at all: initialisation reports `Unavailable` at once.
    pub fn none() -> InitOptions {
        InitOptions {
            backends: wgpu::Backends::empty(),
            source: format!("{BACKENDS_ENV}=none"),
        }
    }

    /// Reads [`BACKENDS_ENV`], then `WGPU_BACKEND`.
    pub fn from_env() -> Result<InitOptions, String> {
        for name in [BACKENDS_ENV, "WGPU_BACKEND"] {
            if let Some(value) = std::env::var(name).ok().filter(|v| !v.trim().is_empty()) {
                let backends = parse_backends(&value).map_err(|e| format!("{name}={value}: {e}"))?;
                return Ok(InitOptions {
                    backends,
                    source: format!("{name}={value}"),
                });
            }
        }
        Ok(InitOptions::all())
    }
}

/// Parses a comma list of backend names; `none` (or `off`) is the empty set.
pub fn parse_backends(list: &str) -> Result<wgpu::Backends, String> {
    let mut backends = wgpu::Backends::empty();
    for name in list.split(',').map(|s| s.trim().to_ascii_lowercase()) {
        backends |= match name.as_str() {
            "none" | "off" => wgpu::Backends::empty(),
            "vulkan" | "vk" => wgpu::Backends::VULKAN,
            "metal" | "mtl" => wgpu::Backends::METAL,
            "dx12" | "d3d12" => wgpu::Backends::DX12,
            other => {
                return Err(format!(
                    "unknown wgpu backend {other:?}; expected a comma list of vulkan, metal, dx12, or none"
                ))
            }
        };
    }
    Ok(backends)
}

/// Rank of an adapter type: discrete GPUs first, software adapters last.
fn rank(device_type: wgpu::DeviceType) -> u8 {
    match device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Enumerates adapters and opens one device on each, best first.
pub fn open_devices(options: &InitOptions) -> Result<Vec<GpuDevice>, InitError> {
    if options.backends.is_empty() {
        return Err(InitError::Unavailable(format!(
            "no wgpu backend is enabled ({}); unset it or name vulkan, metal or dx12",
            options.source
        )));
    }
    let backends = options.backends;
    // wgpu panics when no backend is compiled in for this platform; that
    // is an "unavailable", not a crash.
    let adapters = catch_unwind(AssertUnwindSafe(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        // Debug builds would otherwise write source-line debug info into
        // every SPIR-V module, which makes shader compilation several times
        // slower for kernels nobody steps through; `WGPU_DEBUG=1` turns it
        // back on. Validation (debug builds, or `WGPU_VALIDATION=1`) stays.
        desc.flags = (wgpu::InstanceFlags::from_build_config() - wgpu::InstanceFlags::DEBUG).with_env();
        let instance = wgpu::Instance::new(desc);
        pollster::block_on(instance.enumerate_adapters(backends))
    }))
    .map_err(|_| InitError::Unavailable("wgpu has no backend for this platform compiled in".into()))?;
    let mut adapters: Vec<wgpu::Adapter> = adapters;
    if adapters.is_empty() {
        return Err(InitError::Unavailable(format!(
            "wgpu found no adapter ({}); install a Vulkan driver (on Debian: apt-get install mesa-vulkan-drivers) or use another device",
            options.source
        )));
    }
    adapters.sort_by_key(|a| rank(a.get_info().device_type));
    let mut devices = Vec::new();
    let mut problems = Vec::new();
    for adapter in adapters {
        match GpuDevice::open(adapter) {
            Ok(device) => devices.push(device),
            Err(problem) => problems.push(problem),
        }
    }
    if devices.is_empty() {
        return Err(InitError::Failed(format!(
            "no wgpu adapter could open a device: {}",
            problems.join("; ")
        )));
    }
    Ok(devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_lists_parse_and_none_is_empty() {
        assert_eq!(parse_backends("none").unwrap(), wgpu::Backends::empty());
        assert_eq!(
            parse_backends(" VK , metal").unwrap(),
            wgpu::Backends::VULKAN | wgpu::Backends::METAL
        );
        assert!(parse_backends("opengl").unwrap_err().contains("opengl"));
    }

    #[test]
    fn discrete_gpus_come_before_software_adapters() {
        assert!(rank(wgpu::DeviceType::DiscreteGpu) < rank(wgpu::DeviceType::IntegratedGpu));
        assert!(rank(wgpu::DeviceType::VirtualGpu) < rank(wgpu::DeviceType::Cpu));
    }
}
