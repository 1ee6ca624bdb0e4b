//! The anydev simulator plugin: `ANYDEV_SIM_DEVICES` (default 2) devices
//! of kind `sim`, each with its own memory space (separate 256-byte aligned
//! host blocks) and accounting, an optional per-device memory limit,
//! dtypes it can be told to refuse, and peer access that can be switched
//! off. Ops run on the shared host kernels, so results are real.
//!
//! It exists so that library authors can test multi-device code (placement
//! errors, transfers, out-of-memory handling, missing dtypes) on a machine
//! with no accelerator. It is built only against the plugin ABI, the
//! plugin helper and the kernels, exactly as an out-of-tree vendor plugin
//! would be. Streams complete work when it is enqueued; the calls have the
//! asynchronous shape, so a worker-thread implementation can replace them
//! without changing the interface.
//!
//! Settings: see [`config`].

pub mod config;
mod exec;
mod memory;

use anydev_ops::{DType, Op, OpCode};
use anydev_plugin::{
    AttrValue, InitArgs, MemoryKind, MemoryStats, Plugin, PluginError, PluginTensor, Properties, Result,
};
pub use config::SimConfig;
use memory::{DeviceMemory, SimBuffer};
use std::sync::Arc;

/// The simulator: one instance per plugin context.
pub struct Sim {
    config: SimConfig,
    memories: Vec<Arc<DeviceMemory>>,
}

/// A stream of one simulated device; work completes when enqueued.
pub struct SimStream {
    device: usize,
}

/// An event; complete when recorded, since streams complete immediately.
pub struct SimEvent;

impl Sim {
    pub fn new(config: SimConfig) -> Sim {
        let memories = (0..config.devices)
            .map(|d| Arc::new(DeviceMemory::new(d, config.memory_limit)))
            .collect();
        Sim { config, memories }
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Copies between two buffers; across devices without peer access the
    /// bytes are staged through host memory, as a driver would.
    fn transfer(
        &self,
        src: &SimBuffer,
        src_offset: usize,
        dst: &SimBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        if src.device() == dst.device() || self.config.peer_access {
            return SimBuffer::copy(src, src_offset, dst, dst_offset, len);
        }
        let mut staging = vec![0u8; len];
        src.read(src_offset, &mut staging)?;
        dst.write(dst_offset, &staging)
    }
}

impl Plugin for Sim {
    type Buffer = SimBuffer;
    type Stream = SimStream;
    type Event = SimEvent;

    fn initialize(args: &InitArgs<'_>) -> Result<Sim> {
        let config = SimConfig::from_sources(args.options_json, |name| std::env::var(name).ok())?;
        Ok(Sim::new(config))
    }

    fn device_count(&self) -> usize {
        self.memories.len()
    }

    fn properties(&self, device: usize) -> Result<Properties> {
        let memory = self.config.memory_limit.unwrap_or(host_memory());
        Ok(Properties {
            name: format!("anydev simulated device {device}"),
            vendor: "anydev".into(),
            driver: "host memory and host kernels".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            memory_bytes: memory,
        })
    }

    fn capabilities(&self, device: usize) -> Result<Vec<(String, AttrValue)>> {
        let dtypes = self.config.dtypes();
        let has = |d: DType| AttrValue::Bool(dtypes.contains(&d));
        let peers: Vec<i64> = match self.config.peer_access {
            true => (0..self.memories.len())
                .filter(|&d| d != device)
                .map(|d| d as i64)
                .collect(),
            false => Vec::new(),
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let max_allocation = self.config.memory_limit.unwrap_or(host_memory()).min(i64::MAX as u64);
        let attrs = [
            ("dtypes", AttrValue::dtypes(&dtypes)),
            ("f64", has(DType::F64)),
            ("f16", has(DType::F16)),
            ("bf16", has(DType::BF16)),
            ("max_allocation_bytes", AttrValue::I64(max_allocation as i64)),
            ("compute_units", AttrValue::I64(cores as i64)),
            ("pageable_memory_access", AttrValue::Bool(false)),
            ("managed_memory", AttrValue::Bool(false)),
            ("concurrent_managed_access", AttrValue::Bool(false)),
            ("host_accessible_memory", AttrValue::Bool(false)),
            ("peer_devices", AttrValue::I64List(peers)),
            ("async_execution", AttrValue::Bool(false)),
            ("sim.peer_access", AttrValue::Bool(self.config.peer_access)),
            ("sim.device_count", AttrValue::I64(self.memories.len() as i64)),
        ];
        Ok(attrs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    fn supports(&self, _device: usize, op: OpCode, dtype: DType) -> bool {
        !self.config.refused.contains(&dtype) && anydev_kernels::supports(op, dtype)
    }

    fn memory_kinds(&self, _device: usize) -> Vec<MemoryKind> {
        vec![MemoryKind::Device]
    }

    fn allocate(&self, device: usize, bytes: usize, kind: MemoryKind) -> Result<SimBuffer> {
        if kind != MemoryKind::Device {
            return Err(PluginError::invalid_argument(format!(
                "sim devices allocate only device memory, not {kind:?}"
            )));
        }
        SimBuffer::new(bytes, &self.memories[device])
    }

    fn memory_stats(&self, device: usize) -> Result<MemoryStats> {
        Ok(self.memories[device].stats())
    }

    fn create_stream(&self, device: usize) -> Result<SimStream> {
        Ok(SimStream { device })
    }

    fn synchronize_stream(&self, _stream: &SimStream) -> Result<()> {
        Ok(())
    }

    fn synchronize(&self, _device: usize) -> Result<()> {
        Ok(())
    }

    fn record_event(&self, _stream: &SimStream) -> Result<SimEvent> {
        Ok(SimEvent)
    }

    fn wait_event(&self, _stream: &SimStream, _event: &SimEvent) -> Result<()> {
        Ok(())
    }

    fn query_event(&self, _event: &SimEvent) -> Result<bool> {
        Ok(true)
    }

    fn synchronize_event(&self, _event: &SimEvent) -> Result<()> {
        Ok(())
    }

    fn copy_from_host(&self, _stream: &SimStream, src: &[u8], dst: &SimBuffer, dst_offset: usize) -> Result<()> {
        dst.write(dst_offset, src)
    }

    fn copy_to_host(&self, _stream: &SimStream, src: &SimBuffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        src.read(src_offset, dst)
    }

    fn copy_between(
        &self,
        _stream: &SimStream,
        src: &SimBuffer,
        src_offset: usize,
        dst: &SimBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        self.transfer(src, src_offset, dst, dst_offset, len)
    }

    fn fill(&self, _stream: &SimStream, dst: &SimBuffer, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        dst.fill(offset, len, pattern)
    }

    fn execute(&self, stream: &SimStream, op: &Op<'_, PluginTensor<'_, SimBuffer>>) -> Result<()> {
        let reach = exec::Reach {
            device: stream.device,
            peer_access: self.config.peer_access,
        };
        exec::run(&reach, &self.config.refused, op)
    }
}

/// What a device reports as its memory when no limit is set.
fn host_memory() -> u64 {
    // 16 GiB: the simulator allocates from host memory, whose size it does
    // not query (that would need a system-information dependency).
    16 << 30
}

anydev_plugin::export_plugin!(Sim);
