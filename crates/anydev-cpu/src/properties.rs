//! What the host reports about itself.

use anydev_core::backend::DeviceProperties;
use anydev_core::capability::{keys, CapValue, Capabilities};
use anydev_core::DType;

/// Name, vendor and memory of the host, read from the operating system.
pub fn host_properties() -> DeviceProperties {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    system.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    let (name, vendor) = system
        .cpus()
        .first()
        .map(|cpu| (cpu.brand().trim().to_owned(), cpu.vendor_id().trim().to_owned()))
        .filter(|(name, _)| !name.is_empty())
        .unwrap_or_else(|| (std::env::consts::ARCH.to_owned(), "unknown".to_owned()));
    DeviceProperties {
        name,
        vendor,
        memory_bytes: system.total_memory(),
        driver: format!(
            "{} {}",
            sysinfo::System::name().unwrap_or_else(|| std::env::consts::OS.to_owned()),
            sysinfo::System::kernel_version().unwrap_or_default()
        )
        .trim()
        .to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The host holds every dtype, reaches its own memory, and runs ops
/// synchronously on the calling thread.
pub fn host_capabilities(properties: &DeviceProperties) -> Capabilities {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut caps = Capabilities::new();
    caps.set_dtypes(&DType::ALL)
        .set(keys::COMPUTE_UNITS, CapValue::I64(cores as i64))
        .set(
            keys::MAX_ALLOCATION_BYTES,
            CapValue::I64(properties.memory_bytes.min(isize::MAX as u64) as i64),
        )
        .set(keys::PAGEABLE_MEMORY_ACCESS, CapValue::Bool(true))
        .set(keys::MANAGED_MEMORY, CapValue::Bool(false))
        .set(keys::CONCURRENT_MANAGED_ACCESS, CapValue::Bool(false))
        .set(keys::HOST_ACCESSIBLE_MEMORY, CapValue::Bool(true))
        .set(keys::PEER_DEVICES, CapValue::StrList(Vec::new()))
        .set(keys::ASYNC_EXECUTION, CapValue::Bool(false))
        .set("cpu.arch", CapValue::Str(std::env::consts::ARCH.to_owned()));
    caps
}
