//! 256-byte aligned host allocations with byte accounting.
//!
//! This is one of the few modules with `unsafe`: it owns raw host memory
//! and is the only place that reads or writes it outside the kernels.

use anydev_core::memory::{Allocation, Buffer, ForeignHost, MemoryCounter, MemoryStats};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::any::Any;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

/// Alignment of every host allocation (design section 4: memory a device
/// kernel may read is 256-byte aligned, host allocations included).
pub const ALIGN: usize = 256;

/// Blocks at least this large are kept for reuse when freed. A fresh large
/// block costs a page fault per 4 KiB on first touch (the system hands out
/// new zeroed pages for every big allocation), which for an elementwise op
/// on 10^7 elements costs more than the op itself; small blocks are cheap
/// to get from the system allocator and are not cached.
const CACHE_MIN_BYTES: usize = 1 << 20;

/// Large blocks are rounded up to this granule so that arrays of nearly the
/// same size reuse each other's blocks.
const CACHE_GRANULE: usize = 1 << 16;

/// Freed blocks kept for reuse, at most this many bytes in all.
const CACHE_LIMIT_BYTES: usize = 1 << 30;

/// Blocks up to this size come in power-of-two size classes (from
/// [`ALIGN`] up) and are kept for reuse too: for a small op, getting a
/// 256-byte aligned, zeroed block from the system allocator and freeing
/// it again cost more than the op (`posix_memalign`, `memset`, `free`
/// and its consolidation were a sixth of a 100-element add).
const SMALL_MAX_BYTES: usize = 64 << 10;

/// The small size classes: `ALIGN << i` bytes for class `i`.
const SMALL_CLASSES: usize = (SMALL_MAX_BYTES / ALIGN).ilog2() as usize + 1;

/// Freed blocks kept per small class: at most 4 MiB in all.
const SMALL_PER_CLASS: usize = 32;

/// The host's memory: byte accounting plus caches of freed blocks, large
/// ones by exact capacity and small ones by size class.
///
/// Each cache is behind a mutex: the large one's is taken only for blocks
/// of a mebibyte or more, where the op that fills the block costs far more
/// than the lock; each small class has its own, held for a push or a pop.
/// Cached blocks are not "in use": the accounting counts live buffers only.
#[derive(Debug, Default)]
pub struct HostMemory {
    counter: MemoryCounter,
    cache: Mutex<BlockCache>,
    small: [Mutex<Vec<Block>>; SMALL_CLASSES],
}

#[derive(Debug, Default)]
struct BlockCache {
    blocks: Vec<Block>,
    bytes: usize,
}

#[derive(Debug)]
struct Block {
    ptr: NonNull<u8>,
    capacity: usize,
}

// SAFETY: a cached block is plain memory owned by the cache alone; nothing
// else holds its address until the cache hands it out again.
unsafe impl Send for Block {}

impl HostMemory {
    pub fn counter(&self) -> &MemoryCounter {
        &self.counter
    }

    fn cache(&self) -> MutexGuard<'_, BlockCache> {
        lock(&self.cache)
    }

    /// The free list of small blocks of `capacity`, when that is a small
    /// size class.
    fn small_class(&self, capacity: usize) -> Option<MutexGuard<'_, Vec<Block>>> {
        small_class_of(capacity).map(|class| lock(&self.small[class]))
    }

    /// A block of at least `capacity` bytes: a cached one of that capacity,
    /// else a fresh zeroed one. Cached blocks hold stale but initialised
    /// bytes (every block starts zeroed and is only ever written whole
    /// values), which is what `empty` promises.
    fn obtain(&self, capacity: usize) -> Option<NonNull<u8>> {
        if let Some(block) = self.small_class(capacity).and_then(|mut free| free.pop()) {
            return Some(block.ptr);
        }
        if capacity >= CACHE_MIN_BYTES {
            let mut cache = self.cache();
            if let Some(i) = cache.blocks.iter().position(|b| b.capacity == capacity) {
                let block = cache.blocks.swap_remove(i);
                cache.bytes -= capacity;
                return Some(block.ptr);
            }
        }
        let layout = Layout::from_size_align(capacity, ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size (callers handle zero).
        let fresh = NonNull::new(unsafe { alloc_zeroed(layout) });
        fresh.or_else(|| {
            // Out of memory: give the cached blocks back and try once more.
            self.release_cache();
            // SAFETY: as above.
            NonNull::new(unsafe { alloc_zeroed(layout) })
        })
    }

    /// Takes a freed block back: into the cache when it is large and there
    /// is room, else back to the system.
    fn recycle(&self, ptr: NonNull<u8>, capacity: usize) {
        if let Some(mut free) = self.small_class(capacity) {
            if free.len() < SMALL_PER_CLASS {
                free.push(Block { ptr, capacity });
                return;
            }
        }
        if capacity >= CACHE_MIN_BYTES {
            let mut cache = self.cache();
            if cache.bytes + capacity <= CACHE_LIMIT_BYTES {
                cache.bytes += capacity;
                cache.blocks.push(Block { ptr, capacity });
                return;
            }
        }
        free_block(ptr, capacity);
    }

    /// Returns every cached block to the system.
    pub fn release_cache(&self) {
        let blocks = std::mem::take(&mut *self.cache());
        for block in blocks.blocks {
            free_block(block.ptr, block.capacity);
        }
        for free in &self.small {
            for block in std::mem::take(&mut *lock(free)) {
                free_block(block.ptr, block.capacity);
            }
        }
    }

    /// Bytes held in the caches of freed blocks.
    pub fn cached_bytes(&self) -> usize {
        let small: usize = self
            .small
            .iter()
            .map(|free| lock(free).iter().map(|b| b.capacity).sum::<usize>())
            .sum();
        self.cache().bytes + small
    }

    /// The accounting, with the cached blocks counted as reserved.
    pub fn stats(&self) -> MemoryStats {
        let mut stats = self.counter.stats();
        stats.reserved = stats.in_use + self.cached_bytes();
        stats
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        self.release_cache();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The small size class of blocks of `capacity` bytes, if it is one.
fn small_class_of(capacity: usize) -> Option<usize> {
    let class = (capacity / ALIGN).checked_ilog2()? as usize;
    (capacity == ALIGN << class && class < SMALL_CLASSES).then_some(class)
}

fn free_block(ptr: NonNull<u8>, capacity: usize) {
    let layout = Layout::from_size_align(capacity, ALIGN).expect("layout was valid at allocation");
    // SAFETY: `ptr` came from `alloc_zeroed` with this same layout, and its
    // owner (a live allocation or the cache) gives it up exactly once, here.
    unsafe { dealloc(ptr.as_ptr(), layout) };
}

/// The capacity actually allocated for a request of `len` bytes.
fn capacity_for(len: usize) -> Option<usize> {
    if len >= CACHE_MIN_BYTES {
        len.checked_next_multiple_of(CACHE_GRANULE)
    } else if len > 0 && len <= SMALL_MAX_BYTES {
        Some(len.next_power_of_two().max(ALIGN))
    } else {
        Some(len)
    }
}

/// One block of host memory, returned to its [`HostMemory`] (and released
/// from the accounting) when dropped.
pub struct HostAllocation {
    ptr: NonNull<u8>,
    len: usize,
    capacity: usize,
    memory: Arc<HostMemory>,
}

// SAFETY: the allocation is plain memory owned by this value; all access
// goes through raw pointers whose ordering the runtime guarantees (a buffer
// is written by one op at a time and read only after that op has run).
unsafe impl Send for HostAllocation {}
// SAFETY: as for `Send`; `&HostAllocation` exposes no interior references.
unsafe impl Sync for HostAllocation {}

impl HostAllocation {
    /// Allocates `len` bytes (zeroed, or reused from the cache), or `None`
    /// when the system refuses. The caller has reserved `len` bytes in the
    /// memory's counter already.
    pub fn new(len: usize, memory: Arc<HostMemory>) -> Option<HostAllocation> {
        let capacity = capacity_for(len)?;
        let ptr = if capacity == 0 {
            // A dangling but aligned address: never dereferenced, never freed.
            NonNull::new(std::ptr::without_provenance_mut(ALIGN))?
        } else {
            memory.obtain(capacity)?
        };
        Some(HostAllocation {
            ptr,
            len,
            capacity,
            memory,
        })
    }
    /// The block as the host sees it.
    pub fn view(&self) -> HostView {
        HostView {
            ptr: self.ptr,
            len: self.len,
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
        Some(self.ptr.as_ptr())
    }
}

impl Drop for HostAllocation {
    fn drop(&mut self) {
        if self.capacity > 0 {
            self.memory.recycle(self.ptr, self.capacity);
        }
        self.memory.counter.release(self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allocate(memory: &Arc<HostMemory>, len: usize) -> HostAllocation {
        memory.counter().reserve(len).unwrap();
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
        assert_eq!(memory.counter().stats().in_use, 0);
        assert_eq!(memory.counter().stats().peak, 4096);
        // 1 and 255 bytes share the 256-byte class, 4096 has its own.
        assert_eq!(memory.cached_bytes(), 256 + 4096);
        memory.release_cache();
        assert_eq!(memory.cached_bytes(), 0);
    }

    #[test]
    fn small_blocks_are_reused_by_size_class_up_to_a_limit() {
        let memory = Arc::new(HostMemory::default());
        let first = allocate(&memory, 100);
        let address = first.view().ptr_at(0).unwrap();
        drop(first);
        let same_class = allocate(&memory, 200);
        assert_eq!(same_class.view().ptr_at(0).unwrap(), address);
        let next_class = allocate(&memory, 300);
        assert_ne!(next_class.view().ptr_at(0).unwrap(), address);
        assert_eq!(capacity_for(SMALL_MAX_BYTES), Some(SMALL_MAX_BYTES));
        assert_eq!(capacity_for(SMALL_MAX_BYTES + 1), Some(SMALL_MAX_BYTES + 1));
        drop((same_class, next_class));
        memory.release_cache();
        let many: Vec<HostAllocation> = (0..SMALL_PER_CLASS + 3).map(|_| allocate(&memory, 100)).collect();
        drop(many);
        assert_eq!(memory.cached_bytes(), SMALL_PER_CLASS * ALIGN);
        assert_eq!(memory.stats().reserved, SMALL_PER_CLASS * ALIGN);
        assert_eq!(memory.stats().in_use, 0);
    }

    #[test]
    fn large_blocks_are_reused_and_the_cache_is_not_counted_as_in_use() {
        let memory = Arc::new(HostMemory::default());
        let len = 3 * CACHE_MIN_BYTES + 5;
        let first = allocate(&memory, len);
        first.view().fill(0, len - 5, &[7]);
        let address = first.view().ptr_at(0).unwrap();
        drop(first);
        assert_eq!(memory.counter().stats().in_use, 0);
        assert_eq!(memory.cached_bytes(), capacity_for(len).unwrap());

        // A request that rounds to the same capacity gets the same block back.
        let second = allocate(&memory, len + 1);
        assert_eq!(second.view().ptr_at(0).unwrap(), address);
        assert_eq!(memory.cached_bytes(), 0);
        // A different capacity does not.
        let third = allocate(&memory, len + CACHE_GRANULE);
        assert_ne!(third.view().ptr_at(0).unwrap(), address);
        drop((second, third));
        memory.release_cache();
        assert_eq!(memory.cached_bytes(), 0);
    }
}
