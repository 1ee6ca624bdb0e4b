//! Freed device buffers kept for reuse, by exact size, as the CPU
//! backend keeps freed host blocks (`anydev_kernels::blocks`).
//!
//! A new wgpu buffer costs more than creating it: wgpu clears every buffer
//! before its first use, so an op's fresh output was written twice, once
//! with zeros. On llvmpipe that was a fifth of an `add` of 1e6 f32. A
//! reused buffer holds stale but initialised bytes, which is all an
//! allocation promises. Sizes are not rounded beyond the allocation
//! granule: a kernel that binds a whole buffer sees the same
//! `arrayLength` whether its buffer is new or reused.
//!
//! Reuse needs no waiting: work submitted later on the device's one queue
//! runs after the work that used the buffer before, and wgpu orders the
//! two uses of the buffer as it orders any others.

use crate::device::lock;
use std::collections::HashMap;
use std::sync::Mutex;

/// Freed buffers kept, at most this many bytes in all.
const LIMIT_BYTES: u64 = 1 << 30;

#[derive(Default)]
pub struct BufferCache {
    cached: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    by_size: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

impl BufferCache {
    /// A cached buffer of exactly `size` bytes, if there is one.
    pub fn take(&self, size: u64) -> Option<wgpu::Buffer> {
        let mut cached = lock(&self.cached);
        let buffer = cached.by_size.get_mut(&size)?.pop()?;
        cached.bytes -= size;
        Some(buffer)
    }

    /// Keeps a freed buffer for reuse, or drops it when the cache is full.
    pub fn give(&self, buffer: wgpu::Buffer) {
        let size = buffer.size();
        let mut cached = lock(&self.cached);
        if cached.bytes + size <= LIMIT_BYTES {
            cached.bytes += size;
            cached.by_size.entry(size).or_default().push(buffer);
        }
    }

    /// Drops every cached buffer.
    pub fn clear(&self) {
        let mut cached = lock(&self.cached);
        cached.by_size.clear();
        cached.bytes = 0;
    }

    /// Bytes of the buffers cached now.
    pub fn bytes(&self) -> u64 {
        lock(&self.cached).bytes
    }
}
