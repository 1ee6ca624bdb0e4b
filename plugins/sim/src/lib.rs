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
//! would be.
//!
//! Work is asynchronous, as on a real accelerator: every stream is an
//! in-order queue served by its own worker thread (`src/stream.rs`), ops are
//! checked when they are enqueued and run later on memory they hold alive,
//! and `op_delay_us` slows every job down so that a missing wait shows up
//! as wrong numbers. In unified mode (`unified`) the devices reach host
//! memory and each other's managed memory, like a Grace Hopper with ATS.
//!
//! Collectives (ABI 1.6) run among processes of one machine, or threads of
//! one process, over POSIX shared memory (`src/collective.rs`).
//!
//! Settings: see [`config`].

mod collective;
pub mod config;
mod exec;
mod extension;
mod memory;
mod reduce;
mod shm;
mod stream;

use anydev_ops::{DType, Op, OpCode};
use anydev_plugin::codec::{ExtensionCall, TensorSpec};
use anydev_plugin::{
    AttrValue, Collectives, ForeignMemory, InitArgs, MemoryKind, MemoryStats, Plugin, PluginError, PluginTensor,
    Properties, Result,
};
pub use collective::{comm_path, CHUNK_BYTES, MAX_RANKS};
pub use config::SimConfig;
use memory::DeviceMemory;
pub use memory::SimBuffer;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
pub use stream::SimEvent;
use stream::StreamState;

/// The simulator: one instance per plugin context.
pub struct Sim {
    config: SimConfig,
    memories: Vec<Arc<DeviceMemory>>,
    /// Each device's streams, so that `synchronize(device)` can wait for
    /// all of them and shutdown can stop any the host did not destroy.
    streams: Vec<Mutex<Vec<Weak<StreamState>>>>,
    next_stream: AtomicU64,
}

/// A stream of one simulated device: an in-order queue served by its own
/// worker thread. Dropping it finishes the queued work and joins the worker.
pub struct SimStream {
    state: Arc<StreamState>,
}

impl SimStream {
    pub fn device(&self) -> usize {
        self.state.device()
    }
}

impl Drop for SimStream {
    fn drop(&mut self) {
        self.state.close();
    }
}

/// The memory kinds a device in unified mode allocates, its native kind first.
const UNIFIED_KINDS: [MemoryKind; 3] = [MemoryKind::Device, MemoryKind::Managed, MemoryKind::HostPinned];

/// Copies from the host of at least this many bytes are not staged: the
/// host waits for the stream and copies once (see `copy_from_host`).
const DIRECT_COPY_BYTES: usize = 64 * 1024;

impl Sim {
    pub fn new(config: SimConfig) -> Sim {
        let memories = (0..config.devices)
            .map(|d| Arc::new(DeviceMemory::new(d, config.memory_limit)))
            .collect();
        let streams = (0..config.devices).map(|_| Mutex::new(Vec::new())).collect();
        Sim {
            config,
            memories,
            streams,
            next_stream: AtomicU64::new(0),
        }
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    fn reach(&self, device: usize) -> exec::Reach {
        exec::Reach {
            device,
            peer_access: self.config.peer_access,
        }
    }

    /// The live streams of `device`; forgets the dead ones.
    fn live_streams(&self, device: usize) -> Vec<Arc<StreamState>> {
        let mut streams = self.streams[device].lock().unwrap_or_else(PoisonError::into_inner);
        streams.retain(|s| s.strong_count() > 0);
        streams.iter().filter_map(Weak::upgrade).collect()
    }
}

impl Drop for Sim {
    /// Streams the host never destroyed finish their work and stop here,
    /// so no worker thread outlives the plugin.
    fn drop(&mut self) {
        for device in 0..self.streams.len() {
            for stream in self.live_streams(device) {
                stream.close();
            }
        }
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
        let unified = self.config.unified;
        let attrs = [
            ("dtypes", AttrValue::dtypes(&dtypes)),
            ("f64", has(DType::F64)),
            ("f16", has(DType::F16)),
            ("bf16", has(DType::BF16)),
            ("max_allocation_bytes", AttrValue::I64(max_allocation as i64)),
            ("compute_units", AttrValue::I64(cores as i64)),
            ("pageable_memory_access", AttrValue::Bool(unified)),
            ("managed_memory", AttrValue::Bool(unified)),
            ("concurrent_managed_access", AttrValue::Bool(unified)),
            // Device memory stays device-only in both modes.
            ("host_accessible_memory", AttrValue::Bool(false)),
            ("peer_devices", AttrValue::I64List(peers)),
            ("async_execution", AttrValue::Bool(true)),
            // A model of a device on the host's cores: never the default
            // over the CPU unless asked for.
            ("software", AttrValue::Bool(true)),
            ("event_timing", AttrValue::Bool(true)),
            // A job holds the blocks it uses, so a buffer freed while queued
            // work still uses it lives until that work is done.
            ("stream_ordered_free", AttrValue::Bool(true)),
            ("sim.peer_access", AttrValue::Bool(self.config.peer_access)),
            ("sim.device_count", AttrValue::I64(self.memories.len() as i64)),
            ("sim.unified", AttrValue::Bool(unified)),
        ];
        Ok(attrs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    }

    fn supports(&self, _device: usize, op: OpCode, dtype: DType) -> bool {
        !self.config.refused.contains(&dtype)
            && !self.config.refused_ops.contains(&op)
            && anydev_kernels::supports(op, dtype)
    }

    fn memory_kinds(&self, _device: usize) -> Vec<MemoryKind> {
        match self.config.unified {
            true => UNIFIED_KINDS.to_vec(),
            false => vec![MemoryKind::Device],
        }
    }

    fn allocate(&self, device: usize, bytes: usize, kind: MemoryKind) -> Result<SimBuffer> {
        if !self.memory_kinds(device).contains(&kind) {
            let why = match self.config.unified {
                false => "it is in discrete mode and allocates only Device memory (set ANYDEV_SIM_UNIFIED=1)",
                true => "it allocates Device, Managed and HostPinned memory; System memory is imported",
            };
            return Err(PluginError::invalid_argument(format!(
                "sim:{device} cannot allocate {kind:?} memory: {why}"
            )));
        }
        SimBuffer::new(bytes, &self.memories[device], kind)
    }

    fn memory_stats(&self, device: usize) -> Result<MemoryStats> {
        Ok(self.memories[device].stats())
    }

    fn reset_peak(&self, device: usize) -> Result<()> {
        self.memories[device].reset_peak();
        Ok(())
    }

    fn empty_cache(&self, device: usize) -> Result<()> {
        self.memories[device].empty_cache();
        Ok(())
    }

    fn host_pointer(&self, buffer: &SimBuffer) -> Option<NonNull<u8>> {
        (buffer.kind() != MemoryKind::Device).then(|| buffer.address())
    }

    fn import(&self, device: usize, memory: ForeignMemory, kind: MemoryKind) -> Result<SimBuffer> {
        if !self.config.unified {
            return Err(PluginError::unimplemented(format!(
                "sim:{device} is in discrete mode and cannot use {kind:?} memory it did not allocate \
                 (set ANYDEV_SIM_UNIFIED=1)"
            )));
        }
        if kind == MemoryKind::Device {
            return Err(PluginError::unimplemented(format!(
                "sim:{device} cannot use another allocator's Device memory; it imports System, Managed and \
                 HostPinned memory"
            )));
        }
        SimBuffer::import(device, memory, kind)
    }

    fn create_stream(&self, device: usize) -> Result<SimStream> {
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed);
        let delay = Duration::from_micros(self.config.op_delay_us);
        let state = StreamState::start(device, id, delay)?;
        let mut streams = self.streams[device].lock().unwrap_or_else(PoisonError::into_inner);
        streams.retain(|s| s.strong_count() > 0);
        streams.push(Arc::downgrade(&state));
        Ok(SimStream { state })
    }

    fn synchronize_stream(&self, stream: &SimStream) -> Result<()> {
        stream.state.synchronize()
    }

    fn synchronize(&self, device: usize) -> Result<()> {
        // Wait for every stream, then report what failed on any of them.
        let failures: Vec<PluginError> = self
            .live_streams(device)
            .iter()
            .filter_map(|s| s.synchronize().err())
            .collect();
        match failures.split_first() {
            None => Ok(()),
            Some((first, [])) => Err(first.clone()),
            Some((first, _)) => Err(PluginError::new(
                first.code,
                failures
                    .iter()
                    .map(|e| e.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            )),
        }
    }

    fn record_event(&self, stream: &SimStream) -> Result<SimEvent> {
        SimEvent::record(&stream.state)
    }

    fn wait_event(&self, stream: &SimStream, event: &SimEvent) -> Result<()> {
        event.wait_on(&stream.state)
    }

    fn query_event(&self, event: &SimEvent) -> Result<bool> {
        Ok(event.is_complete())
    }

    fn synchronize_event(&self, event: &SimEvent) -> Result<()> {
        event.synchronize()
    }

    fn event_elapsed(&self, start: &SimEvent, end: &SimEvent) -> Result<f64> {
        match (start.completed_at(), end.completed_at()) {
            (Some(start), Some(end)) => Ok(end.saturating_duration_since(start).as_secs_f64() * 1e3),
            _ => Err(PluginError::invalid_argument(
                "event_elapsed needs two completed events; synchronize them first",
            )),
        }
    }

    fn copy_from_host(&self, stream: &SimStream, src: &[u8], dst: &SimBuffer, dst_offset: usize) -> Result<()> {
        dst.check("copy_host_to_device", dst_offset, src.len())?;
        // `src` may be reused as soon as this returns. Like a driver copying
        // from pageable memory, a small copy is staged and the host goes on;
        // a large one waits for the stream and copies once, straight in.
        if src.len() >= DIRECT_COPY_BYTES {
            return stream.state.in_order(|| dst.write(dst_offset, src));
        }
        let staging = src.to_vec();
        let dst = dst.clone();
        stream
            .state
            .submit("copy_host_to_device", move || dst.write(dst_offset, &staging))
    }

    fn copy_to_host(&self, stream: &SimStream, src: &SimBuffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        src.check("copy_device_to_host", src_offset, dst.len())?;
        stream.state.in_order(|| src.read(src_offset, dst))
    }

    fn copy_between(
        &self,
        stream: &SimStream,
        src: &SimBuffer,
        src_offset: usize,
        dst: &SimBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        src.check("copy_device_to_device", src_offset, len)?;
        dst.check("copy_device_to_device", dst_offset, len)?;
        // Across devices without peer access the bytes are staged through
        // host memory, as a driver would.
        let staged = src.device() != dst.device() && !self.config.peer_access;
        let (src, dst) = (src.clone(), dst.clone());
        stream.state.submit("copy_device_to_device", move || {
            if staged {
                let mut staging = vec![0u8; len];
                src.read(src_offset, &mut staging)?;
                dst.write(dst_offset, &staging)
            } else {
                SimBuffer::copy(&src, src_offset, &dst, dst_offset, len)
            }
        })
    }

    fn fill(&self, stream: &SimStream, dst: &SimBuffer, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        dst.check_fill(offset, len, pattern)?;
        let (dst, pattern) = (dst.clone(), pattern.to_vec());
        stream.state.submit("fill", move || dst.fill(offset, len, &pattern))
    }

    fn execute(&self, stream: &SimStream, op: &Op<'_, PluginTensor<'_, SimBuffer>>) -> Result<()> {
        let job = exec::prepare(&self.reach(stream.device()), &self.config.refused, op)?;
        stream.state.submit("execute", move || job.run())
    }

    fn extension_ops(&self, _device: usize) -> Vec<String> {
        extension::ops(&self.config)
    }

    fn extension_supported(&self, _device: usize, call: &ExtensionCall<'_, TensorSpec<'_>>) -> bool {
        extension::supported(&self.config, call)
    }

    fn execute_extension(
        &self,
        stream: &SimStream,
        call: &ExtensionCall<'_, PluginTensor<'_, SimBuffer>>,
    ) -> Result<()> {
        let job = extension::prepare(&self.reach(stream.device()), &self.config, call)?;
        let wait = extension::fails_on_data(job.op());
        stream.state.submit("extension", move || job.run())?;
        if wait {
            stream.state.synchronize()?;
        }
        Ok(())
    }

    const COLLECTIVES: bool = true;

    fn collectives(&self) -> Option<&dyn Collectives<SimBuffer, SimStream>> {
        Some(self)
    }
}

/// What a device reports as its memory when no limit is set.
fn host_memory() -> u64 {
    // 16 GiB: the simulator allocates from host memory, whose size it does
    // not query (that would need a system-information dependency).
    16 << 30
}

anydev_plugin::export_plugin!(Sim);
