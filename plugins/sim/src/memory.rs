//! Each simulated device's memory: separate 256-byte aligned host blocks
//! with per-device accounting, an optional limit and a cache of freed
//! blocks (the CPU backend's [`BlockPool`], one per device, as a GPU's
//! caching allocator keeps freed device memory), plus memory imported from
//! other allocators in unified mode.
//!
//! This is the simulator's only module with raw memory. A [`SimBuffer`] is
//! a cheap handle to an [`Arc`]'d block: the host's handle is one
//! reference, and every job enqueued on a stream holds another, so a block
//! (and its accounting) goes only when the last job that touches it has
//! finished, whenever the host frees it. The kernels get pointers only
//! through [`View`]s, which are bounds-checked when they are made and keep
//! their block alive.

use anydev_kernels::blocks::{Block as PoolBlock, BlockPool, ALIGN};
use anydev_kernels::{HostTensor, KernelError};
use anydev_ops::{DType, Op};
use anydev_plugin::{ForeignMemory, MemoryKind, MemoryStats, PluginError, PluginTensor, Result};
use smallvec::SmallVec;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One device's byte accounting, and its freed blocks kept for reuse.
/// The cache counts against the limit, as a GPU's does against its
/// memory: `reserved` is the live bytes plus the cache, and never more
/// than the limit (a freed block that would not fit beside the rest goes
/// back to the system; an allocation that needs the room gives the cache
/// back).
#[derive(Debug)]
pub struct DeviceMemory {
    pub device: usize,
    limit: Option<u64>,
    in_use: AtomicU64,
    peak: AtomicU64,
    allocations: AtomicU64,
    pool: BlockPool,
}

impl DeviceMemory {
    pub fn new(device: usize, limit: Option<u64>) -> DeviceMemory {
        DeviceMemory {
            device,
            limit,
            in_use: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            pool: BlockPool::default(),
        }
    }

    /// Reserves `bytes` against the limit and returns the bytes in use with
    /// them, or explains why not. The cache does not count here: a cached
    /// block may be the one the allocation reuses, and the rest gives way
    /// ([`DeviceMemory::fit_cache`]). The peak is left to
    /// [`DeviceMemory::record_peak`], once the block is there.
    fn reserve(&self, bytes: u64) -> Result<u64> {
        let update = self
            .in_use
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |current| {
                current
                    .checked_add(bytes)
                    .filter(|&next| self.limit.is_none_or(|limit| next <= limit))
            });
        match update {
            Ok(previous) => {
                self.allocations.fetch_add(1, Ordering::AcqRel);
                Ok(previous + bytes)
            }
            Err(current) => Err(PluginError::out_of_memory(format!(
                "sim:{} cannot allocate {bytes} bytes: {current} of its {} bytes are in use",
                self.device,
                self.limit.map_or_else(|| "unlimited".to_owned(), |l| l.to_string())
            ))),
        }
    }

    /// Raises the peak to `in_use`, what [`DeviceMemory::reserve`] returned
    /// for an allocation that got its block.
    fn record_peak(&self, in_use: u64) {
        self.peak.fetch_max(in_use, Ordering::AcqRel);
    }

    /// Gives the cache back when it no longer fits under the limit beside
    /// the bytes in use, so that `reserved` stays within the limit.
    fn fit_cache(&self) {
        if self.limit.is_some_and(|limit| self.reserved() > limit) {
            self.pool.release_cache();
        }
    }

    /// Takes a freed block back: into the cache while it fits under the
    /// limit beside the rest of `reserved`, else to the system.
    fn recycle(&self, block: PoolBlock) {
        let room = self
            .limit
            .is_none_or(|limit| self.reserved().saturating_add(block.capacity() as u64) <= limit);
        if room {
            self.pool.recycle(block);
        }
    }

    fn release(&self, bytes: u64) {
        self.in_use.fetch_sub(bytes, Ordering::AcqRel);
        self.allocations.fetch_sub(1, Ordering::AcqRel);
    }

    /// The bytes in use plus the cache.
    fn reserved(&self) -> u64 {
        self.in_use.load(Ordering::Acquire) + self.pool.cached_bytes() as u64
    }

    /// The accounting; a device with a limit has that much memory.
    pub fn stats(&self) -> MemoryStats {
        let in_use = self.in_use.load(Ordering::Acquire);
        let reserved = in_use + self.pool.cached_bytes() as u64;
        MemoryStats {
            in_use,
            peak: self.peak.load(Ordering::Acquire),
            allocations: self.allocations.load(Ordering::Acquire),
            limit: self.limit,
            reserved: Some(reserved),
            free: self.limit.map(|limit| limit.saturating_sub(reserved)),
            total: self.limit,
        }
    }

    /// Gives the cached blocks back to the system.
    pub fn empty_cache(&self) {
        self.pool.release_cache();
    }

    /// Starts the peak again from the bytes in use now; an allocation that
    /// races with it raises the peak again through its own `fetch_max`.
    pub fn reset_peak(&self) {
        self.peak.store(self.in_use.load(Ordering::Acquire), Ordering::Release);
        self.peak
            .fetch_max(self.in_use.load(Ordering::Acquire), Ordering::AcqRel);
    }
}

/// Who frees a block.
enum Owner {
    /// Allocated here and accounted on that device; back to its cache with
    /// the block (taken only then).
    Allocated(Arc<DeviceMemory>, Option<PoolBlock>),
    /// Another allocator's memory (an import): never freed here, not counted.
    Foreign,
}

/// One block of memory; freed (or, for an import, let go) when the last
/// handle to it drops.
struct Block {
    ptr: NonNull<u8>,
    len: usize,
    device: usize,
    kind: MemoryKind,
    owner: Owner,
}

// SAFETY: the block is plain bytes (allocated here, or foreign memory that
// the `buffer_import` contract keeps valid while the block lives); the
// pointer has no thread affinity. Concurrent access to the bytes is
// ordered by streams and events, as for device memory.
unsafe impl Send for Block {}
// SAFETY: as above; `&Block` hands out only checked raw addresses.
unsafe impl Sync for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        if let Owner::Allocated(memory, block) = &mut self.owner {
            memory.release(self.len as u64);
            if let Some(block) = block.take() {
                memory.recycle(block);
            }
        }
    }
}

/// A buffer of the simulator: a cheap, cloneable handle to one block.
#[derive(Clone)]
pub struct SimBuffer {
    block: Arc<Block>,
}

impl SimBuffer {
    /// Allocates `len` bytes of `kind` on `memory`'s device: zeroed, or a
    /// freed block of the device's with stale but initialised bytes.
    pub fn new(len: usize, memory: &Arc<DeviceMemory>, kind: MemoryKind) -> Result<SimBuffer> {
        let in_use = memory.reserve(len as u64)?;
        let Some(block) = memory.pool.allocate(len) else {
            memory.release(len as u64);
            return Err(PluginError::out_of_memory(format!(
                "sim:{}: the host refused {len} bytes",
                memory.device
            )));
        };
        memory.fit_cache();
        memory.record_peak(in_use);
        Ok(SimBuffer {
            block: Arc::new(Block {
                ptr: block.ptr(),
                len,
                device: memory.device,
                kind,
                owner: Owner::Allocated(Arc::clone(memory), Some(block)),
            }),
        })
    }

    /// Wraps another allocator's memory as a buffer of `device`, owning
    /// nothing and counted nowhere.
    pub fn import(device: usize, memory: ForeignMemory, kind: MemoryKind) -> Result<SimBuffer> {
        if !memory.is_empty() && !(memory.ptr().as_ptr() as usize).is_multiple_of(ALIGN) {
            return Err(PluginError::invalid_argument(format!(
                "sim:{device}: imported memory at {:p} is not {ALIGN}-byte aligned",
                memory.ptr()
            )));
        }
        Ok(SimBuffer {
            block: Arc::new(Block {
                ptr: memory.ptr(),
                len: memory.len(),
                device,
                kind,
                owner: Owner::Foreign,
            }),
        })
    }

    pub fn len(&self) -> usize {
        self.block.len
    }

    pub fn is_empty(&self) -> bool {
        self.block.len == 0
    }

    /// The device the buffer was allocated on (or imported for).
    pub fn device(&self) -> usize {
        self.block.device
    }

    pub fn kind(&self) -> MemoryKind {
        self.block.kind
    }

    /// Whether another allocator owns the memory.
    pub fn is_imported(&self) -> bool {
        matches!(self.block.owner, Owner::Foreign)
    }

    /// The address of the first byte, for the host to dereference when the
    /// kind allows it (the caller decides; nothing is read here).
    pub fn address(&self) -> NonNull<u8> {
        self.block.ptr
    }

    /// Fails unless `[offset, offset + len)` lies inside the block.
    pub fn check(&self, what: &str, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len() => Ok(()),
            _ => Err(PluginError::invalid_argument(format!(
                "{what}: bytes {offset}..+{len} are outside a {}-byte buffer on sim:{}",
                self.len(),
                self.device()
            ))),
        }
    }

    /// Fails unless a fill of `len` bytes at `offset` with `pattern` is valid.
    pub fn check_fill(&self, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        self.check("fill", offset, len)?;
        if pattern.is_empty() || !len.is_multiple_of(pattern.len()) {
            return Err(PluginError::invalid_argument(format!(
                "fill: {len} bytes is not a whole number of {}-byte patterns",
                pattern.len()
            )));
        }
        Ok(())
    }

    /// The address `offset` bytes in; `offset <= len` (checked).
    fn at(&self, offset: usize) -> *mut u8 {
        assert!(offset <= self.len(), "offset checked by the caller");
        // SAFETY: `offset <= len` keeps the address inside or one past the block.
        unsafe { self.block.ptr.as_ptr().add(offset) }
    }

    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.check("copy_host_to_device", offset, src.len())?;
        // SAFETY: checked to lie inside the live block; `src` is a Rust
        // slice, which the block cannot overlap mutably (`copy` tolerates
        // overlap anyway, as imported memory could be the slice's).
        unsafe { std::ptr::copy(src.as_ptr(), self.at(offset), src.len()) };
        Ok(())
    }

    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check("copy_device_to_host", offset, dst.len())?;
        // SAFETY: checked to lie inside the live block; `dst` is exclusive
        // host memory.
        unsafe { std::ptr::copy(self.at(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies between blocks (possibly one block, possibly overlapping).
    pub fn copy(src: &SimBuffer, src_offset: usize, dst: &SimBuffer, dst_offset: usize, len: usize) -> Result<()> {
        src.check("copy_device_to_device", src_offset, len)?;
        dst.check("copy_device_to_device", dst_offset, len)?;
        // SAFETY: both ranges checked to lie inside their live blocks;
        // `copy` allows overlap.
        unsafe { std::ptr::copy(src.at(src_offset), dst.at(dst_offset), len) };
        Ok(())
    }

    pub fn fill(&self, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        self.check_fill(offset, len, pattern)?;
        for start in (0..len).step_by(pattern.len()) {
            // SAFETY: `start + pattern.len() <= len`, inside the checked range.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), self.at(offset + start), pattern.len()) };
        }
        Ok(())
    }
}

/// A strided operand that owns what it describes: a handle to its block
/// (kept alive as long as the view), shape and strides. Checked when made
/// to lie inside the block.
pub struct View {
    buffer: SimBuffer,
    byte_offset: usize,
    dtype: DType,
    shape: SmallVec<[usize; INLINE_DIMS]>,
    strides: SmallVec<[isize; INLINE_DIMS]>,
}

/// Dimensions a [`View`] holds without a heap block: every op makes a view
/// per operand, and two allocations each were a tenth of a small op's
/// host time.
const INLINE_DIMS: usize = 6;

impl View {
    /// An owned copy of `t` after checking that every byte it can touch
    /// lies inside its buffer.
    pub fn new(t: &PluginTensor<'_, SimBuffer>) -> Result<View> {
        let (start, end) = t.byte_span().ok_or_else(|| {
            PluginError::invalid_argument(format!("operand of shape {:?} has a malformed layout", t.shape))
        })?;
        t.buffer.check("execute", start, end - start)?;
        t.buffer.check("execute", t.byte_offset, 0)?;
        Ok(View {
            buffer: t.buffer.clone(),
            byte_offset: t.byte_offset,
            dtype: t.dtype,
            shape: SmallVec::from_slice(t.shape),
            strides: SmallVec::from_slice(t.strides),
        })
    }

    fn host(&self) -> HostTensor<'_> {
        HostTensor::new(self.buffer.at(self.byte_offset), self.dtype, &self.shape, &self.strides)
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The block's bytes `[start, end)` the view covers, when it is
    /// contiguous row-major (as every operand of an extension call is).
    fn contiguous_span(&self) -> Result<(usize, usize)> {
        if self.shape.contains(&0) {
            // No elements: any strides describe the same empty span.
            return Ok((self.byte_offset, self.byte_offset));
        }
        let mut expected = 1isize;
        for (&n, &stride) in self.shape.iter().zip(&self.strides).rev() {
            if n > 1 && stride != expected {
                return Err(PluginError::invalid_argument(format!(
                    "an extension operand of shape {:?} has strides {:?}, not row-major",
                    self.shape, self.strides
                )));
            }
            expected = expected.saturating_mul(n as isize);
        }
        let len = self.shape.iter().product::<usize>() * self.dtype.size();
        Ok((self.byte_offset, self.byte_offset + len))
    }
}

/// Runs `f` on the bytes of contiguous views: `inputs` to read, `outputs`
/// to write. An output that overlaps another operand is refused, so the
/// slices never alias a mutable one.
pub fn with_bytes<R>(inputs: &[View], outputs: &[View], f: impl FnOnce(&[&[u8]], &mut [&mut [u8]]) -> R) -> Result<R> {
    let span = |v: &View| -> Result<(usize, usize, usize)> {
        let (start, end) = v.contiguous_span()?;
        let base = v.buffer.address().as_ptr() as usize;
        Ok((base + start, base + end, start))
    };
    let ins: Vec<_> = inputs.iter().map(span).collect::<Result<_>>()?;
    let outs: Vec<_> = outputs.iter().map(span).collect::<Result<_>>()?;
    for (i, &(start, end, _)) in outs.iter().enumerate() {
        let others = ins.iter().chain(outs.iter().take(i));
        if start < end && others.into_iter().any(|&(s, e, _)| s < end && start < e) {
            return Err(PluginError::invalid_argument(format!(
                "extension output {i} overlaps another operand"
            )));
        }
    }
    // SAFETY: every view was checked when made to lie inside its block,
    // which it keeps alive; the spans are the views' own bytes; no output
    // overlaps another operand (checked above), so the only aliasing is
    // between shared input slices. The host orders other streams' use of
    // the memory with events.
    let in_bytes: Vec<&[u8]> = inputs
        .iter()
        .zip(&ins)
        .map(|(v, &(start, end, offset))| unsafe { std::slice::from_raw_parts(v.buffer.at(offset), end - start) })
        .collect();
    // SAFETY: as above; each output slice is disjoint from every other slice.
    let mut out_bytes: Vec<&mut [u8]> = outputs
        .iter()
        .zip(&outs)
        .map(|(v, &(start, end, offset))| unsafe { std::slice::from_raw_parts_mut(v.buffer.at(offset), end - start) })
        .collect();
    Ok(f(&in_bytes, &mut out_bytes))
}

/// Runs `op`, whose operands are indices into `views`, on the host kernels.
pub fn execute(op: &Op<'_, usize>, views: &[View]) -> std::result::Result<(), KernelError> {
    let host = op.try_map(|&i| {
        views
            .get(i)
            .map(View::host)
            .ok_or_else(|| KernelError::Invalid(format!("operand {i} of {} is missing", views.len())))
    })?;
    // SAFETY: every view was checked when it was made to lie inside its
    // block, and holds that block alive for this call; the host checked
    // that the output overlaps no input (the ABI's `execute` contract) and
    // orders other streams' use of the same memory with events.
    unsafe { anydev_kernels::execute(&host) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_accounted_and_limited() {
        let memory = Arc::new(DeviceMemory::new(0, Some(1000)));
        let a = SimBuffer::new(600, &memory, MemoryKind::Device).unwrap();
        assert_eq!(a.address().as_ptr() as usize % ALIGN, 0);
        let err = SimBuffer::new(500, &memory, MemoryKind::Device).err().unwrap();
        assert!(err.message.contains("600 of its 1000"), "{err}");
        let b = SimBuffer::new(400, &memory, MemoryKind::Managed).unwrap();
        assert_eq!(memory.stats().in_use, 1000);
        drop((a, b));
        let s = memory.stats();
        assert_eq!((s.in_use, s.peak, s.allocations), (0, 1000, 0));
    }

    #[test]
    fn freed_blocks_are_cached_and_the_cache_yields_to_the_limit() {
        let memory = Arc::new(DeviceMemory::new(0, Some(1 << 20)));
        let a = SimBuffer::new(1000, &memory, MemoryKind::Device).unwrap();
        let mut ends = [1u8; 16];
        a.read(0, &mut ends[..8]).unwrap();
        a.read(992, &mut ends[8..]).unwrap();
        assert_eq!(ends, [0; 16], "a fresh block starts zeroed");
        a.write(0, &[9; 8]).unwrap();
        let address = a.address();
        drop(a);
        let s = memory.stats();
        assert_eq!((s.in_use, s.reserved, s.free), (0, Some(1024), Some((1 << 20) - 1024)));
        // The same size class comes back, with what was written.
        let b = SimBuffer::new(600, &memory, MemoryKind::Device).unwrap();
        assert_eq!(b.address(), address);
        b.read(0, &mut ends[..8]).unwrap();
        assert_eq!(ends[..8], [9; 8]);
        drop(b);
        // The whole limit is there for the taking: the cache goes first.
        let all = SimBuffer::new(1 << 20, &memory, MemoryKind::Device).unwrap();
        assert_eq!(memory.stats().reserved, Some(1 << 20));
        drop(all);
        memory.empty_cache();
        assert_eq!(memory.stats().reserved, Some(0));
    }

    #[test]
    fn an_allocation_the_host_refuses_leaves_the_peak() {
        let memory = Arc::new(DeviceMemory::new(0, None));
        let live = SimBuffer::new(100, &memory, MemoryKind::Device).unwrap();
        // More than any layout may hold: the host refuses it every time.
        let err = SimBuffer::new(1 << 63, &memory, MemoryKind::Device).err().unwrap();
        assert!(err.message.contains("the host refused"), "{err}");
        let s = memory.stats();
        assert_eq!((s.in_use, s.peak, s.allocations), (100, 100, 1));
        drop(live);
    }

    #[test]
    fn reserved_stays_within_the_limit() {
        let memory = Arc::new(DeviceMemory::new(0, Some(1024)));
        let a = SimBuffer::new(600, &memory, MemoryKind::Device).unwrap();
        let b = SimBuffer::new(400, &memory, MemoryKind::Device).unwrap();
        // 600 bytes take a 1024-byte block, which has no room in the cache
        // beside the 400 bytes in use.
        drop(a);
        let s = memory.stats();
        assert_eq!((s.in_use, s.reserved, s.free), (400, Some(400), Some(624)));
        let c = SimBuffer::new(24, &memory, MemoryKind::Device).unwrap();
        // The 512-byte block of 400 bytes has room beside 24 bytes.
        drop(b);
        let s = memory.stats();
        assert_eq!(
            (s.in_use, s.reserved, s.free),
            (24, Some(24 + 512), Some(1024 - 24 - 512))
        );
        drop(c);
    }

    #[test]
    fn a_cached_block_is_reused_at_the_limit() {
        let memory = Arc::new(DeviceMemory::new(0, Some(1024)));
        let a = SimBuffer::new(1000, &memory, MemoryKind::Device).unwrap();
        a.write(0, &[9; 8]).unwrap();
        drop(a);
        assert_eq!(memory.stats().reserved, Some(1024), "the cache fills the limit");
        let b = SimBuffer::new(600, &memory, MemoryKind::Device).unwrap();
        let mut start = [0; 8];
        b.read(0, &mut start).unwrap();
        assert_eq!(start, [9; 8], "the cached block, not a fresh zeroed one");
        let s = memory.stats();
        assert_eq!((s.in_use, s.reserved), (600, Some(600)));
    }

    #[test]
    fn a_block_is_released_with_its_last_handle() {
        let memory = Arc::new(DeviceMemory::new(0, None));
        let a = SimBuffer::new(64, &memory, MemoryKind::Device).unwrap();
        let held = a.clone();
        drop(a);
        assert_eq!(memory.stats().in_use, 64, "a clone keeps the block");
        held.fill(0, 64, &[7]).unwrap();
        drop(held);
        assert_eq!((memory.stats().in_use, memory.stats().allocations), (0, 0));
    }

    #[test]
    fn out_of_range_access_is_an_error() {
        let memory = Arc::new(DeviceMemory::new(1, None));
        let a = SimBuffer::new(8, &memory, MemoryKind::Device).unwrap();
        assert!(a.write(4, &[0; 8]).is_err());
        assert!(a.fill(0, 6, &[1, 2, 3, 4]).is_err());
        assert!(a.check_fill(0, 8, &[]).is_err());
        a.fill(0, 8, &[1, 2]).unwrap();
        let mut back = [0; 8];
        a.read(0, &mut back).unwrap();
        assert_eq!(back, [1, 2, 1, 2, 1, 2, 1, 2]);
    }
}
