//! One opened wgpu adapter: its device and queue, what it reports about
//! itself, its pipeline cache, and the error-scope discipline that turns
//! wgpu validation and out-of-memory errors into values instead of panics.

use crate::buffer_cache::BufferCache;
use crate::pipeline_cache::PipelineCache;
use crate::shader::dtype::ShaderFeatures;
use anydev_core::backend::DeviceProperties;
use anydev_core::capability::{keys, CapValue, Capabilities};
use anydev_core::memory::MemoryCounter;
use anydev_core::DType;
use std::sync::{Arc, Mutex};

/// One device of the backend (`wgpu:N`).
pub struct GpuDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    pub features: ShaderFeatures,
    /// Opened with `TIMESTAMP_QUERY`: events stamp the GPU clock.
    pub timestamps: bool,
    /// The host's cores, on which a software adapter runs its workgroups
    /// (asked once: `available_parallelism` reads cgroup files, 30 µs).
    pub host_cores: usize,
    pub counter: Arc<MemoryCounter>,
    /// Freed buffers for reuse; allocations give theirs back on drop.
    pub buffers: Arc<BufferCache>,
    pub pipelines: PipelineCache,
    /// Errors raised outside any error scope (wgpu's default handler would
    /// panic); the next checked call reports them.
    uncaptured: Arc<Mutex<Vec<String>>>,
}

impl GpuDevice {
    /// Whether the adapter runs on the host's cores (llvmpipe, WARP).
    pub fn software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Opens `adapter` with the optional features the kernels can use
    /// (f64, i64), timestamp queries for timing events, and the adapter's
    /// own limits, so the largest buffers the
    /// hardware allows are allowed here too.
    pub fn open(adapter: wgpu::Adapter) -> Result<GpuDevice, String> {
        let info = adapter.get_info();
        let wanted = wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64 | wgpu::Features::TIMESTAMP_QUERY;
        let required_features = adapter.features() & wanted;
        let desc = wgpu::DeviceDescriptor {
            label: Some("anydev"),
            required_features,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| format!("{} ({:?}): {e}", info.name, info.backend))?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            lock(&sink).push(error.to_string());
        }));
        let features = ShaderFeatures {
            f64: required_features.contains(wgpu::Features::SHADER_F64),
            int64: required_features.contains(wgpu::Features::SHADER_INT64),
        };
        Ok(GpuDevice {
            limits: device.limits(),
            device,
            queue,
            info,
            features,
            timestamps: required_features.contains(wgpu::Features::TIMESTAMP_QUERY),
            host_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            counter: Arc::new(MemoryCounter::new(None)),
            buffers: Arc::default(),
            pipelines: PipelineCache::default(),
            uncaptured,
        })
    }

    /// The largest buffer the kernels can use: a buffer must fit one
    /// storage binding, since every kernel binds whole buffers, and its
    /// element indices must fit the kernels' `i32` index arithmetic (a
    /// binding may hold up to 4 GiB of one-byte elements).
    pub fn max_allocation(&self) -> u64 {
        self.limits
            .max_buffer_size
            .min(self.limits.max_storage_buffer_binding_size)
            .min(i32::MAX as u64)
    }

    /// Runs `f` inside validation and out-of-memory error scopes and
    /// returns the first error wgpu raised, as text.
    pub fn checked<R>(&self, f: impl FnOnce() -> R) -> Result<R, ScopeError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let result = f();
        let validation = pollster::block_on(validation.pop());
        let oom = pollster::block_on(oom.pop());
        if let Some(e) = oom {
            return Err(ScopeError::OutOfMemory(e.to_string()));
        }
        if let Some(e) = validation {
            return Err(ScopeError::Other(e.to_string()));
        }
        let stray = std::mem::take(&mut *lock(&self.uncaptured));
        if !stray.is_empty() {
            return Err(ScopeError::Other(stray.join("; ")));
        }
        Ok(result)
    }

    pub fn properties(&self) -> DeviceProperties {
        let driver = [self.info.driver.as_str(), self.info.driver_info.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        DeviceProperties {
            name: self.info.name.clone(),
            vendor: vendor_name(self.info.vendor),
            // wgpu does not report the size of device memory.
            memory_bytes: 0,
            driver: format!("{driver} ({:?})", self.info.backend),
            version: format!("anydev-wgpu {} on wgpu 30", env!("CARGO_PKG_VERSION")),
        }
    }

    pub fn dtypes(&self) -> Vec<DType> {
        DType::ALL.into_iter().filter(|&d| self.features.holds(d)).collect()
    }

    pub fn capabilities(&self) -> Capabilities {
        let l = &self.limits;
        let mut caps = Capabilities::new();
        caps.set_dtypes(&self.dtypes())
            // wgpu does not report compute units; 0 means unknown.
            .set(keys::COMPUTE_UNITS, CapValue::I64(0))
            .set(keys::MAX_ALLOCATION_BYTES, CapValue::I64(self.max_allocation() as i64))
            .set(keys::PAGEABLE_MEMORY_ACCESS, CapValue::Bool(false))
            .set(keys::MANAGED_MEMORY, CapValue::Bool(false))
            .set(keys::CONCURRENT_MANAGED_ACCESS, CapValue::Bool(false))
            .set(keys::HOST_ACCESSIBLE_MEMORY, CapValue::Bool(false))
            .set(keys::PEER_DEVICES, CapValue::StrList(Vec::new()))
            .set(keys::ASYNC_EXECUTION, CapValue::Bool(true))
            .set(keys::EVENT_TIMING, CapValue::Bool(self.timestamps))
            .set(keys::STREAM_ORDERED_FREE, CapValue::Bool(false))
            .set(keys::MANAGED_PREFETCH, CapValue::Bool(false))
            .set(keys::SOFTWARE, CapValue::Bool(self.software()))
            .set(
                "wgpu.backend",
                CapValue::Str(format!("{:?}", self.info.backend).to_lowercase()),
            )
            .set(
                "wgpu.device_type",
                CapValue::Str(format!("{:?}", self.info.device_type)),
            )
            .set(
                "wgpu.max_workgroup_size",
                CapValue::IntList(vec![
                    l.max_compute_workgroup_size_x as i64,
                    l.max_compute_workgroup_size_y as i64,
                    l.max_compute_workgroup_size_z as i64,
                ]),
            )
            .set(
                "wgpu.max_invocations_per_workgroup",
                CapValue::I64(l.max_compute_invocations_per_workgroup as i64),
            )
            .set(
                "wgpu.max_workgroup_storage_bytes",
                CapValue::I64(l.max_compute_workgroup_storage_size as i64),
            )
            .set(
                "wgpu.max_workgroups_per_dimension",
                CapValue::I64(l.max_compute_workgroups_per_dimension as i64),
            )
            .set(
                "wgpu.max_buffer_size",
                CapValue::I64(l.max_buffer_size.min(i64::MAX as u64) as i64),
            )
            .set(
                "wgpu.max_storage_buffer_binding_size",
                CapValue::I64(l.max_storage_buffer_binding_size as i64),
            )
            .set("wgpu.shader_f64", CapValue::Bool(self.features.f64))
            .set("wgpu.shader_int64", CapValue::Bool(self.features.int64));
        caps
    }
}

/// An error captured by [`GpuDevice::checked`].
#[derive(Debug)]
pub enum ScopeError {
    OutOfMemory(String),
    Other(String),
}

impl std::fmt::Display for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScopeError::OutOfMemory(m) | ScopeError::Other(m) => f.write_str(m.trim()),
        }
    }
}

/// Locks a mutex, ignoring poisoning (the data are plain values).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The vendor behind a PCI (or Vulkan) vendor id.
fn vendor_name(id: u32) -> String {
    match id {
        0x10de => "NVIDIA".into(),
        0x1002 | 0x1022 => "AMD".into(),
        0x8086 => "Intel".into(),
        0x106b => "Apple".into(),
        0x13b5 => "ARM".into(),
        0x5143 => "Qualcomm".into(),
        0x1010 => "Imagination".into(),
        0x10005 => "Mesa".into(),
        other => format!("0x{other:04x}"),
    }
}
