//! What the host reports about itself.

use anydev_core::backend::DeviceProperties;
use anydev_core::capability::{keys, CapValue, Capabilities};

/// Name, vendor and memory of the host, read from the operating system.
/// Whatever the OS will not tell is reported as unknown rather than failing
/// the backend: the CPU is always available.
pub fn host_properties() -> DeviceProperties {
    let (name, vendor, memory_bytes) = match sysinfo::System::new() {
        Ok(mut system) => {
            system.refresh_memory();
            system.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
            let cpu = system.cpus().first();
            (
                cpu.map(|c| c.brand().trim().to_owned()).unwrap_or_default(),
                cpu.map(|c| c.vendor_id().trim().to_owned()).unwrap_or_default(),
                system.total_memory(),
            )
        }
        Err(_) => Default::default(),
    };
    let or_unknown = |s: String| if s.is_empty() { "unknown".to_owned() } else { s };
    let os = sysinfo::System::name().unwrap_or_else(|_| std::env::consts::OS.to_owned());
    let kernel = sysinfo::System::kernel_version().unwrap_or_default();
    DeviceProperties {
        name: if name.is_empty() {
            std::env::consts::ARCH.to_owned()
        } else {
            name
        },
        vendor: or_unknown(vendor),
        memory_bytes,
        driver: format!("{os} {kernel}").trim().to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The host holds every dtype its kernels compute with, reaches its own memory, and runs ops
/// synchronously on the calling thread.
pub fn host_capabilities(properties: &DeviceProperties) -> Capabilities {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut caps = Capabilities::new();
    caps.set_dtypes(&anydev_kernels::dtypes())
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
        .set(keys::SOFTWARE, CapValue::Bool(false))
        .set(keys::EVENT_TIMING, CapValue::Bool(true))
        // Work is done when the call returns: nothing is queued to free after.
        .set(keys::STREAM_ORDERED_FREE, CapValue::Bool(false))
        // Host memory has no pages to move.
        .set(keys::MANAGED_PREFETCH, CapValue::Bool(false))
        .set("cpu.arch", CapValue::Str(std::env::consts::ARCH.to_owned()));
    caps
}
