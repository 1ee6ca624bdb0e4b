//! Buffers, memory kinds and byte accounting (design section 4).

use crate::backend::Backend;
use crate::Device;
use serde::Serialize;
use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Where a buffer's bytes live, which decides who can touch them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// Device-only memory.
    Device,
    /// Page-locked host memory the device can reach by DMA.
    HostPinned,
    /// Memory that migrates between host and device on demand.
    Managed,
    /// Plain pageable host memory; devices reach it only with HMM or ATS.
    System,
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryKind::Device => "device",
            MemoryKind::HostPinned => "host_pinned",
            MemoryKind::Managed => "managed",
            MemoryKind::System => "system",
        })
    }
}

/// A backend's own record of one allocation. The backend downcasts it back
/// through [`Allocation::as_any`] when the buffer is used; dropping it
/// frees the memory and updates the backend's accounting.
pub trait Allocation: Any + Send + Sync {
    fn as_any(&self) -> &dyn Any;

    /// The address of the first byte when the host may dereference it
    /// directly (host, pinned, managed and system memory), else `None`.
    fn host_ptr(&self) -> Option<*mut u8> {
        None
    }
}

/// A device allocation: its bytes, where they live, which device owns them
/// and which backend made them. Arrays share buffers through `Arc`.
pub struct Buffer {
    device: Device,
    len: usize,
    kind: MemoryKind,
    backend: Arc<dyn Backend>,
    allocation: Box<dyn Allocation>,
}

impl Buffer {
    /// Wraps a backend's allocation. Called by backends from `allocate`.
    pub fn new(
        device: Device,
        len: usize,
        kind: MemoryKind,
        backend: Arc<dyn Backend>,
        allocation: Box<dyn Allocation>,
    ) -> Buffer {
        Buffer {
            device,
            len,
            kind,
            backend,
            allocation,
        }
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// The backend that allocated this buffer and runs ops on it.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// The name of the allocator (the backend) that made this buffer.
    pub fn allocator(&self) -> &str {
        self.backend.name()
    }

    pub fn allocation(&self) -> &dyn Allocation {
        self.allocation.as_ref()
    }

    /// The allocation as the backend's concrete type, if it is one.
    pub fn downcast<T: Allocation>(&self) -> Option<&T> {
        self.allocation.as_any().downcast_ref::<T>()
    }

    /// The host address of the first byte when the host can dereference it.
    pub fn host_ptr(&self) -> Option<*mut u8> {
        self.allocation.host_ptr()
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("device", &self.device)
            .field("len", &self.len)
            .field("kind", &self.kind)
            .field("allocator", &self.allocator())
            .finish()
    }
}

/// A snapshot of one device's memory accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryStats {
    /// Bytes currently allocated.
    pub in_use: usize,
    /// Largest `in_use` seen since the backend started.
    pub peak: usize,
    /// Number of live allocations.
    pub allocations: usize,
    /// Allocation limit in bytes, where the backend enforces one.
    pub limit: Option<usize>,
}

/// Lock-free byte accounting that backends share between a device and its
/// allocations (each allocation holds an `Arc` and releases on drop).
#[derive(Debug, Default)]
pub struct MemoryCounter {
    in_use: AtomicUsize,
    peak: AtomicUsize,
    allocations: AtomicUsize,
    limit: Option<usize>,
}

impl MemoryCounter {
    pub fn new(limit: Option<usize>) -> MemoryCounter {
        MemoryCounter {
            limit,
            ..MemoryCounter::default()
        }
    }

    /// Reserves `bytes`, or returns the bytes in use when the limit would be
    /// exceeded (nothing is reserved then).
    pub fn reserve(&self, bytes: usize) -> Result<(), usize> {
        let mut current = self.in_use.load(Ordering::Relaxed);
        loop {
            let next = current.checked_add(bytes).ok_or(current)?;
            if self.limit.is_some_and(|limit| next > limit) {
                return Err(current);
            }
            match self
                .in_use
                .compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::AcqRel);
                    self.allocations.fetch_add(1, Ordering::AcqRel);
                    return Ok(());
                }
                Err(actual) => current = actual,
            }
        }
    }

    /// Returns bytes reserved earlier.
    pub fn release(&self, bytes: usize) {
        self.in_use.fetch_sub(bytes, Ordering::AcqRel);
        self.allocations.fetch_sub(1, Ordering::AcqRel);
    }

    pub fn stats(&self) -> MemoryStats {
        MemoryStats {
            in_use: self.in_use.load(Ordering::Acquire),
            peak: self.peak.load(Ordering::Acquire),
            allocations: self.allocations.load(Ordering::Acquire),
            limit: self.limit,
        }
    }

    pub fn limit(&self) -> Option<usize> {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_tracks_peak_and_enforces_the_limit() {
        let c = MemoryCounter::new(Some(100));
        c.reserve(60).unwrap();
        assert_eq!(c.reserve(50), Err(60));
        c.reserve(40).unwrap();
        c.release(60);
        c.release(40);
        let s = c.stats();
        assert_eq!((s.in_use, s.peak, s.allocations), (0, 100, 0));
    }
}
