//! Aligned host blocks with caches of freed ones: the memory of the
//! backends whose arrays live in host memory (the CPU backend and the
//! simulator).
//!
//! A fresh block is zeroed by the system (large ones are anonymous
//! mappings, whose pages the kernel zeroes when first touched); a cached
//! one holds stale but
//! initialised bytes (blocks start zeroed and are only ever written whole
//! values), which is what `empty` promises. Reuse is what makes the cache
//! worth having:
//! - a fresh large block costs a page fault per 4 KiB on first touch,
//!   which for an elementwise op on 10^7 elements, or a copy onto the
//!   simulator, costs more than the work itself;
//! - for a small op, getting a 256-byte aligned, zeroed block from the
//!   system allocator and freeing it again cost more than the op
//!   (`posix_memalign`, `memset`, `free` and its consolidation were a sixth
//!   of a 100-element add).
//!
//! This is the crate's one module that allocates raw memory.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Alignment of every block (design section 4: memory a device kernel may
/// read is 256-byte aligned, host memory included).
pub const ALIGN: usize = 256;

/// Blocks above the small classes are cached by exact capacity. Up to
/// 1 MiB they used not to be, on the grounds that the system allocator
/// hands them out cheaply; but it hands them out zeroed, and a 10^5-element
/// f32 add took 20.6 µs with a fresh 400 KB output and 12.2 µs with a
/// cached one.
const LARGE_MIN_BYTES: usize = SMALL_MAX_BYTES + 1;

/// Large blocks are rounded up to this granule so that arrays of nearly the
/// same size reuse each other's blocks.
const LARGE_GRANULE: usize = 1 << 16;

/// Blocks from this size are anonymous mappings of their own. The
/// allocator's `alloc_zeroed` with [`ALIGN`] alignment cannot use `calloc`,
/// so it wrote every byte: `empty` of 1 GiB took 0.97 s where NumPy's took
/// 90 µs. A mapping's pages are zero until first touched, and only the
/// touched ones cost anything.
const MAPPED_MIN_BYTES: usize = 4 << 20;

/// Freed large blocks kept for reuse, at most this many bytes in all.
const LARGE_LIMIT_BYTES: usize = 1 << 30;

/// Blocks up to this size come in power-of-two size classes (from
/// [`ALIGN`] up).
const SMALL_MAX_BYTES: usize = 64 << 10;

/// The small size classes: `ALIGN << i` bytes for class `i`.
const SMALL_CLASSES: usize = (SMALL_MAX_BYTES / ALIGN).ilog2() as usize + 1;

/// Freed blocks kept per small class: at most 4 MiB in all.
const SMALL_PER_CLASS: usize = 32;

/// One block of host memory, [`ALIGN`]-aligned, with room for at least its
/// length. Dropped, it goes back to the system; [`BlockPool::recycle`]
/// keeps it for reuse instead.
#[derive(Debug)]
pub struct Block {
    ptr: NonNull<u8>,
    len: usize,
    capacity: usize,
    /// The mapping of a block of [`MAPPED_MIN_BYTES`] or more, unmapped
    /// when dropped; `None` for blocks from the allocator.
    mapping: Option<memmap2::MmapMut>,
}

// SAFETY: a block is plain memory owned by this value; which thread uses
// its bytes, and when, is ordered by its owner (a buffer is written by one
// op at a time and read only after that op has run).
unsafe impl Send for Block {}
// SAFETY: as for `Send`; `&Block` hands out only the address.
unsafe impl Sync for Block {}

impl Block {
    /// The address of the first byte.
    pub fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// The bytes asked for.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes allocated (the length rounded up to its size class).
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // A mapping unmaps itself when the field drops.
        if self.capacity > 0 && self.mapping.is_none() {
            let layout = Layout::from_size_align(self.capacity, ALIGN).expect("layout was valid at allocation");
            // SAFETY: `ptr` came from `alloc_zeroed` with this layout (a
            // block of capacity 0 was never allocated), and a block is
            // dropped once.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// Blocks for one memory: caches of freed blocks, large ones by exact
/// capacity and small ones by size class.
///
/// Each cache is behind a mutex: the large one's is taken only for blocks
/// above the small classes, where the op that fills the block costs far
/// more than the lock; each small class has its own, held for a push or a
/// pop.
#[derive(Debug, Default)]
pub struct BlockPool {
    large: Mutex<LargeCache>,
    small: [Mutex<Vec<Block>>; SMALL_CLASSES],
    /// Bytes held in all the caches, read without a lock.
    cached: AtomicUsize,
}

/// The large blocks, and their bytes (bounded by [`LARGE_LIMIT_BYTES`]).
#[derive(Debug, Default)]
struct LargeCache {
    blocks: Vec<Block>,
    bytes: usize,
}

impl BlockPool {
    /// A block of `len` bytes: a cached one of the same capacity, else a
    /// fresh zeroed one (after giving the caches back to the system, if
    /// the first attempt fails). `None` when the system refuses.
    pub fn allocate(&self, len: usize) -> Option<Block> {
        let capacity = capacity_for(len)?;
        if capacity == 0 {
            return Some(Block {
                // Aligned, never dereferenced, never freed.
                ptr: NonNull::new(std::ptr::without_provenance_mut(ALIGN))?,
                len,
                capacity,
                mapping: None,
            });
        }
        if let Some(mut block) = self.take_cached(capacity) {
            block.len = len;
            return Some(block);
        }
        let mut fresh = fresh_block(capacity).or_else(|| {
            self.release_cache();
            fresh_block(capacity)
        })?;
        fresh.len = len;
        Some(fresh)
    }

    fn take_cached(&self, capacity: usize) -> Option<Block> {
        let block = if let Some(mut free) = self.small_class(capacity) {
            free.pop()
        } else if capacity >= LARGE_MIN_BYTES {
            let mut large = lock(&self.large);
            let i = large.blocks.iter().position(|b| b.capacity == capacity)?;
            large.bytes -= capacity;
            Some(large.blocks.swap_remove(i))
        } else {
            None
        }?;
        self.cached.fetch_sub(capacity, Ordering::AcqRel);
        Some(block)
    }

    /// Takes a block back: into its cache when there is room, else back
    /// to the system.
    pub fn recycle(&self, block: Block) {
        let capacity = block.capacity;
        if let Some(mut free) = self.small_class(capacity) {
            if free.len() < SMALL_PER_CLASS {
                free.push(block);
                self.cached.fetch_add(capacity, Ordering::AcqRel);
            }
            return;
        }
        if capacity >= LARGE_MIN_BYTES {
            let mut large = lock(&self.large);
            if large.bytes + capacity <= LARGE_LIMIT_BYTES {
                large.blocks.push(block);
                large.bytes += capacity;
                self.cached.fetch_add(capacity, Ordering::AcqRel);
            }
        }
    }

    /// Gives every cached block back to the system.
    pub fn release_cache(&self) {
        let large = std::mem::take(&mut *lock(&self.large));
        self.cached.fetch_sub(large.bytes, Ordering::AcqRel);
        for free in &self.small {
            let blocks = std::mem::take(&mut *lock(free));
            self.cached
                .fetch_sub(blocks.iter().map(|b| b.capacity).sum(), Ordering::AcqRel);
        }
    }

    /// Bytes held in the caches of freed blocks.
    pub fn cached_bytes(&self) -> usize {
        self.cached.load(Ordering::Acquire)
    }

    /// The free list of small blocks of `capacity`, when that is a small
    /// size class.
    fn small_class(&self, capacity: usize) -> Option<MutexGuard<'_, Vec<Block>>> {
        small_class_of(capacity).map(|class| lock(&self.small[class]))
    }
}

/// A zeroed block of `capacity` (non-zero) bytes from the system, `None`
/// when it refuses.
fn fresh_block(capacity: usize) -> Option<Block> {
    if capacity >= MAPPED_MIN_BYTES {
        let mut mapping = memmap2::MmapMut::map_anon(capacity).ok()?;
        // Fewer faults where the kernel has huge pages; only a hint (and
        // not one Miri can follow).
        #[cfg(all(target_os = "linux", not(miri)))]
        let _ = mapping.advise(memmap2::Advice::HugePage);
        return Some(Block {
            // Page-aligned, so ALIGN-aligned.
            ptr: NonNull::new(mapping.as_mut_ptr())?,
            len: capacity,
            capacity,
            mapping: Some(mapping),
        });
    }
    let layout = Layout::from_size_align(capacity, ALIGN).ok()?;
    // SAFETY: `layout` has a non-zero size.
    let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
    Some(Block {
        ptr,
        len: capacity,
        capacity,
        mapping: None,
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The small size class of blocks of `capacity` bytes, if it is one.
fn small_class_of(capacity: usize) -> Option<usize> {
    let class = (capacity / ALIGN).checked_ilog2()? as usize;
    (capacity == ALIGN << class && class < SMALL_CLASSES).then_some(class)
}

/// The capacity allocated for a request of `len` bytes: a small size
/// class, or a whole number of large granules.
fn capacity_for(len: usize) -> Option<usize> {
    if len >= LARGE_MIN_BYTES {
        len.checked_next_multiple_of(LARGE_GRANULE)
    } else if len > 0 {
        Some(len.next_power_of_two().max(ALIGN))
    } else {
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(block: &mut Block) -> &mut [u8] {
        // SAFETY: the test owns the block, which holds `len` bytes.
        unsafe { std::slice::from_raw_parts_mut(block.ptr().as_ptr(), block.len()) }
    }

    #[test]
    fn fresh_blocks_are_aligned_and_zeroed() {
        let pool = BlockPool::default();
        for len in [0usize, 1, 255, 4096, LARGE_MIN_BYTES + 3, MAPPED_MIN_BYTES + 5] {
            let mut block = pool.allocate(len).unwrap();
            assert_eq!(block.ptr().as_ptr() as usize % ALIGN, 0);
            assert!(block.capacity() >= len);
            assert!(bytes(&mut block).iter().all(|&b| b == 0));
            pool.recycle(block);
        }
        // 1 and 255 bytes share the 256-byte class; 0 bytes cache nothing.
        let large = capacity_for(LARGE_MIN_BYTES + 3).unwrap() + capacity_for(MAPPED_MIN_BYTES + 5).unwrap();
        assert_eq!(pool.cached_bytes(), 256 + 4096 + large);
        pool.release_cache();
        assert_eq!(pool.cached_bytes(), 0);
    }

    #[test]
    fn small_blocks_are_reused_by_size_class_up_to_a_limit() {
        let pool = BlockPool::default();
        let mut first = pool.allocate(100).unwrap();
        bytes(&mut first).fill(7);
        let address = first.ptr();
        pool.recycle(first);
        let mut same_class = pool.allocate(200).unwrap();
        assert_eq!(same_class.ptr(), address);
        assert_eq!(same_class.len(), 200);
        assert!(
            bytes(&mut same_class)[..100].iter().all(|&b| b == 7),
            "stale, not zeroed"
        );
        let next_class = pool.allocate(300).unwrap();
        assert_ne!(next_class.ptr(), address);
        assert_eq!(capacity_for(SMALL_MAX_BYTES), Some(SMALL_MAX_BYTES));
        assert_eq!(capacity_for(SMALL_MAX_BYTES + 1), Some(SMALL_MAX_BYTES + LARGE_GRANULE));
        pool.recycle(same_class);
        pool.recycle(next_class);
        pool.release_cache();
        let many: Vec<Block> = (0..SMALL_PER_CLASS + 3).map(|_| pool.allocate(100).unwrap()).collect();
        many.into_iter().for_each(|b| pool.recycle(b));
        assert_eq!(pool.cached_bytes(), SMALL_PER_CLASS * ALIGN);
    }

    #[test]
    fn large_blocks_are_reused_by_capacity_up_to_a_limit() {
        let pool = BlockPool::default();
        let len = 3 * LARGE_MIN_BYTES + 5;
        let first = pool.allocate(len).unwrap();
        let address = first.ptr();
        pool.recycle(first);
        assert_eq!(pool.cached_bytes(), capacity_for(len).unwrap());
        // A request that rounds to the same capacity gets the same block back.
        let second = pool.allocate(len + 1).unwrap();
        assert_eq!(second.ptr(), address);
        assert_eq!(pool.cached_bytes(), 0);
        // A different capacity does not.
        let third = pool.allocate(len + LARGE_GRANULE).unwrap();
        assert_ne!(third.ptr(), address);
        pool.recycle(second);
        pool.recycle(third);
        pool.release_cache();
        // Past the limit, freed blocks go back to the system.
        let half = LARGE_LIMIT_BYTES / 2;
        let blocks: Vec<Block> = (0..3).map(|_| pool.allocate(half).unwrap()).collect();
        blocks.into_iter().for_each(|b| pool.recycle(b));
        assert_eq!(pool.cached_bytes(), LARGE_LIMIT_BYTES);
        pool.release_cache();
        assert_eq!(pool.cached_bytes(), 0);
    }
}
