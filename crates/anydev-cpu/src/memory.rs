//! 256-byte aligned host allocations with byte accounting.
//!
//! This is one of the few modules with `unsafe`: it owns raw host memory
//! and is the only place that reads or writes it outside the kernels.

use anydev_core::memory::{Allocation, Buffer, ForeignHost, MemoryCounter, MemoryStats};
use anydev_kernels::blocks::{Block, BlockPool};
use std::any::Any;
use std::ptr::NonNull;
use std::sync::Arc;

/// The host's memory: byte accounting plus the caches of freed blocks
/// ([`BlockPool`]). Cached blocks are not "in use": the accounting counts
/// live buffers only, and `reserved` adds the cache.
#[derive(Debug, Default)]
pub struct HostMemory {
    counter: MemoryCounter,
    pool: BlockPool,
}

impl HostMemory {
    pub fn counter(&self) -> &MemoryCounter {
        &self.counter
    }

    /// Returns every cached block to the system.
    pub fn release_cache(&self) {
        self.pool.release_cache();
    }

    /// The accounting, with the cached blocks counted as reserved.
    pub fn stats(&self) -> MemoryStats {
        let mut stats = self.counter.stats();
        stats.reserved = stats.in_use + self.pool.cached_bytes();
        stats
    }
}

/// One block of host memory, returned to its [`HostMemory`]'s caches (and
/// released from the accounting) when dropped.
pub struct HostAllocation {
    /// Taken only by `drop`.
    block: Option<Block>,
    memory: Arc<HostMemory>,
}

impl HostAllocation {
    /// Allocates `len` bytes (zeroed, or reused from the cache), or `None`
    /// when the system refuses. The caller has reserved `len` bytes in the
    /// memory's counter already.
    pub fn new(len: usize, memory: Arc<HostMemory>) -> Option<HostAllocation> {
        Some(HostAllocation {
            block: Some(memory.pool.allocate(len)?),
            memory,
        })
    }

    fn block(&self) -> &Block {
        self.block.as_ref().expect("a live allocation holds its block")
    }

    /// The block as the host sees it.
    pub fn view(&self) -> HostView {
        HostView {
            ptr: self.block().ptr(),
            len: self.block().len(),
        }
    }
}

/// Host memory another device owns, mapped for the host's use without a
/// copy (unified memory). It frees nothing: the buffer that holds it keeps
/// the owner's memory alive.
pub struct MappedHost {
    view: HostView,
}

impl MappedHost {
    /// The host's view of `source`, when its allocator gives it a host
    /// address.
    pub fn of(source: &Buffer) -> Option<MappedHost> {
        let ptr = NonNull::new(source.host_ptr()?)?;
        // The allocator vouches that `len` bytes at the host address are
        // host-accessible, and the mapping `Buffer` that will hold this
        // value keeps `source` alive for as long as it lives.
        Some(MappedHost {
            view: HostView { ptr, len: source.len() },
        })
    }

    pub fn view(&self) -> HostView {
        self.view
    }
}

impl Allocation for MappedHost {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        Some(self.view.ptr.as_ptr())
    }
}

/// `len` bytes of host memory at `ptr` that the host kernels and copies
/// may use: an allocation of this backend or a mapping of another's.
#[derive(Clone, Copy, Debug)]
pub struct HostView {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a view is an address and a length; which thread uses the bytes,
// and when, is ordered by the runtime (see `HostAllocation`).
unsafe impl Send for HostView {}
// SAFETY: as for `Send`.
unsafe impl Sync for HostView {}

impl HostView {
    /// The view of host memory lent by another allocator.
    pub fn lent(memory: &ForeignHost) -> HostView {
        HostView {
            ptr: memory.ptr(),
            len: memory.len(),
        }
    }

    /// The address `offset` bytes in, when `offset <= len`.
    pub fn ptr_at(&self, offset: usize) -> Option<*mut u8> {
        // SAFETY: `offset <= len` keeps the result inside (or one past) the block.
        (offset <= self.len).then(|| unsafe { self.ptr.as_ptr().add(offset) })
    }

    /// The `len` bytes from `offset`, or `None` when they are not all
    /// inside the block.
    ///
    /// # Safety
    /// Nothing may write these bytes while the slice lives.
    pub unsafe fn bytes(&self, offset: usize, len: usize) -> Option<&[u8]> {
        let inside = offset.checked_add(len).is_some_and(|end| end <= self.len);
        // SAFETY: the range is inside the block (checked); the caller
        // promises that no write to it happens while the slice lives.
        inside.then(|| unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(offset), len) })
    }

    /// The `len` bytes from `offset`, writable, or `None` when they are not
    /// all inside the block.
    ///
    /// # Safety
    /// Nothing else may read or write these bytes while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn bytes_mut(&self, offset: usize, len: usize) -> Option<&mut [u8]> {
        let inside = offset.checked_add(len).is_some_and(|end| end <= self.len);
        // SAFETY: the range is inside the block (checked); the caller
        // promises exclusive access while the slice lives.
        inside.then(|| unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(offset), len) })
    }

    /// Copies `src` in at `offset`; the caller has checked the range.
    pub fn write(&self, offset: usize, src: &[u8]) {
        assert!(offset + src.len() <= self.len);
        // SAFETY: the range is inside the block (asserted), and `src` is a
        // separate host slice, so the regions do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(offset), src.len()) }
    }

    /// Copies bytes from `offset` out to `dst`; the caller has checked the range.
    pub fn read(&self, offset: usize, dst: &mut [u8]) {
        assert!(offset + dst.len() <= self.len);
        // SAFETY: the range is inside the block (asserted), and `dst` is an
        // exclusive host slice, so the regions do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(offset), dst.as_mut_ptr(), dst.len()) }
    }

    /// Copies `len` bytes between two allocations (possibly the same one,
    /// possibly overlapping); the caller has checked both ranges.
    pub fn copy(src: HostView, src_offset: usize, dst: HostView, dst_offset: usize, len: usize) {
        assert!(src_offset + len <= src.len && dst_offset + len <= dst.len);
        // SAFETY: both ranges are inside their blocks (asserted); `copy`
        // tolerates overlap.
        unsafe { std::ptr::copy(src.ptr.as_ptr().add(src_offset), dst.ptr.as_ptr().add(dst_offset), len) }
    }

    /// Fills `len` bytes from `offset` with repetitions of `pattern`.
    pub fn fill(&self, offset: usize, len: usize, pattern: &[u8]) {
        assert!(offset + len <= self.len && !pattern.is_empty() && len.is_multiple_of(pattern.len()));
        // SAFETY: the range is inside the block (asserted) and no other
        // reference to these bytes exists during the call.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(offset), len) };
        for chunk in bytes.chunks_exact_mut(pattern.len()) {
            chunk.copy_from_slice(pattern);
        }
    }
}

impl Allocation for HostAllocation {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        Some(self.block().ptr().as_ptr())
    }
}

impl Drop for HostAllocation {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            self.memory.counter.release(block.len());
            self.memory.pool.recycle(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anydev_kernels::blocks::ALIGN;

    fn allocate(memory: &Arc<HostMemory>, len: usize) -> HostAllocation {
        memory.counter().reserve(len).unwrap().commit();
        HostAllocation::new(len, Arc::clone(memory)).unwrap()
    }

    #[test]
    fn allocations_are_aligned_zeroed_and_accounted() {
        let memory = Arc::new(HostMemory::default());
        for len in [0usize, 1, 255, 4096] {
            let block = allocate(&memory, len);
            let a = block.view();
            assert_eq!(a.ptr_at(0).unwrap() as usize % ALIGN, 0);
            let mut back = vec![1u8; len];
            a.read(0, &mut back);
            assert!(back.iter().all(|&b| b == 0));
            assert!(a.ptr_at(len + 1).is_none());
        }
        let stats = memory.stats();
        assert_eq!((stats.in_use, stats.peak), (0, 4096));
        // Freed blocks are cached, reserved but not in use: 1 and 255
        // bytes share the 256-byte class, 4096 has its own.
        assert_eq!(stats.reserved, 256 + 4096);
        let block = allocate(&memory, 3000);
        assert_eq!(memory.stats().reserved, 3000 + 256, "the 4096-byte block is reused");
        drop(block);
        memory.release_cache();
        assert_eq!(memory.stats().reserved, 0);
    }
}
