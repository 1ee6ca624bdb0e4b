//! 256-byte aligned host allocations with byte accounting.
//!
//! This is one of the few modules with `unsafe`: it owns raw host memory
//! and is the only place that reads or writes it outside the kernels.

use anydev_core::memory::{Allocation, MemoryCounter};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::any::Any;
use std::ptr::NonNull;
use std::sync::Arc;

/// Alignment of every host allocation (design section 4: memory a device
/// kernel may read is 256-byte aligned, host allocations included).
pub const ALIGN: usize = 256;

/// One block of host memory, freed (and released from the accounting)
/// when dropped.
pub struct HostAllocation {
    ptr: NonNull<u8>,
    len: usize,
    counter: Arc<MemoryCounter>,
}

// SAFETY: the allocation is plain memory owned by this value; all access
// goes through raw pointers whose ordering the runtime guarantees (a buffer
// is written by one op at a time and read only after that op has run).
unsafe impl Send for HostAllocation {}
// SAFETY: as for `Send`; `&HostAllocation` exposes no interior references.
unsafe impl Sync for HostAllocation {}

impl HostAllocation {
    /// Allocates `len` zeroed bytes, or `None` when the system refuses.
    /// The caller has reserved `len` bytes in `counter` already.
    pub fn new(len: usize, counter: Arc<MemoryCounter>) -> Option<HostAllocation> {
        let ptr = if len == 0 {
            // A dangling but aligned address: never dereferenced, never freed.
            NonNull::new(ALIGN as *mut u8)?
        } else {
            let layout = Layout::from_size_align(len, ALIGN).ok()?;
            // SAFETY: `layout` has a non-zero size.
            NonNull::new(unsafe { alloc_zeroed(layout) })?
        };
        Some(HostAllocation { ptr, len, counter })
    }

    /// The address `offset` bytes in, when `offset <= len`.
    pub fn ptr_at(&self, offset: usize) -> Option<*mut u8> {
        // SAFETY: `offset <= len` keeps the result inside (or one past) the block.
        (offset <= self.len).then(|| unsafe { self.ptr.as_ptr().add(offset) })
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
    pub fn copy(src: &HostAllocation, src_offset: usize, dst: &HostAllocation, dst_offset: usize, len: usize) {
        assert!(src_offset + len <= src.len && dst_offset + len <= dst.len);
        // SAFETY: both ranges are inside their blocks (asserted); `copy`
        // tolerates overlap.
        unsafe { std::ptr::copy(src.ptr.as_ptr().add(src_offset), dst.ptr.as_ptr().add(dst_offset), len) }
    }

    /// Fills `len` bytes from `offset` with repetitions of `pattern`.
    pub fn fill(&self, offset: usize, len: usize, pattern: &[u8]) {
        assert!(offset + len <= self.len && !pattern.is_empty() && len % pattern.len() == 0);
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
        Some(self.ptr.as_ptr())
    }
}

impl Drop for HostAllocation {
    fn drop(&mut self) {
        if self.len > 0 {
            let layout = Layout::from_size_align(self.len, ALIGN).expect("layout was valid at allocation");
            // SAFETY: `ptr` came from `alloc_zeroed` with this same layout and
            // is freed exactly once, here.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
        }
        self.counter.release(self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_zeroed_and_accounted() {
        let counter = Arc::new(MemoryCounter::new(None));
        for len in [0usize, 1, 255, 4096] {
            counter.reserve(len).unwrap();
            let a = HostAllocation::new(len, Arc::clone(&counter)).unwrap();
            assert_eq!(a.ptr_at(0).unwrap() as usize % ALIGN, 0);
            let mut back = vec![1u8; len];
            a.read(0, &mut back);
            assert!(back.iter().all(|&b| b == 0));
            assert!(a.ptr_at(len + 1).is_none());
        }
        assert_eq!(counter.stats().in_use, 0);
        assert_eq!(counter.stats().peak, 4096);
    }
}
