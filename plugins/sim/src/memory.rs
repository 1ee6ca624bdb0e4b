//! Each simulated device's memory: separate 256-byte aligned host blocks
//! with per-device accounting and an optional limit.
//!
//! This is the simulator's only module with raw memory; the kernels get
//! pointers into these blocks after the operands have been bounds-checked.

use anydev_plugin::{MemoryStats, PluginError, Result};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Alignment of every block (design section 4).
pub const ALIGN: usize = 256;

/// One device's byte accounting.
#[derive(Debug)]
pub struct DeviceMemory {
    pub device: usize,
    limit: Option<u64>,
    in_use: AtomicU64,
    peak: AtomicU64,
    allocations: AtomicU64,
}

impl DeviceMemory {
    pub fn new(device: usize, limit: Option<u64>) -> DeviceMemory {
        DeviceMemory {
            device,
            limit,
            in_use: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
        }
    }

    /// Reserves `bytes` against the limit, or explains why not.
    fn reserve(&self, bytes: u64) -> Result<()> {
        let update = self
            .in_use
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |current| {
                current
                    .checked_add(bytes)
                    .filter(|&next| self.limit.is_none_or(|limit| next <= limit))
            });
        match update {
            Ok(previous) => {
                self.peak.fetch_max(previous + bytes, Ordering::AcqRel);
                self.allocations.fetch_add(1, Ordering::AcqRel);
                Ok(())
            }
            Err(current) => Err(PluginError::out_of_memory(format!(
                "sim:{} cannot allocate {bytes} bytes: {current} of its {} bytes are in use",
                self.device,
                self.limit.map_or_else(|| "unlimited".to_owned(), |l| l.to_string())
            ))),
        }
    }

    fn release(&self, bytes: u64) {
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
}

/// One allocation on one simulated device, freed when dropped.
pub struct SimBuffer {
    ptr: NonNull<u8>,
    len: usize,
    memory: Arc<DeviceMemory>,
}

// SAFETY: the block is plain memory owned by this value. Concurrent access
// is ordered by the host runtime (one writer per buffer at a time), as for
// device memory.
unsafe impl Send for SimBuffer {}
// SAFETY: as above; `&SimBuffer` hands out only raw addresses.
unsafe impl Sync for SimBuffer {}

impl SimBuffer {
    /// Allocates `len` zeroed bytes on `memory`'s device.
    pub fn new(len: usize, memory: &Arc<DeviceMemory>) -> Result<SimBuffer> {
        memory.reserve(len as u64)?;
        let ptr = if len == 0 {
            // Aligned, never dereferenced, never freed.
            NonNull::new(ALIGN as *mut u8)
        } else {
            Layout::from_size_align(len, ALIGN).ok().and_then(|layout| {
                // SAFETY: the layout has a non-zero size.
                NonNull::new(unsafe { alloc_zeroed(layout) })
            })
        };
        match ptr {
            Some(ptr) => Ok(SimBuffer {
                ptr,
                len,
                memory: Arc::clone(memory),
            }),
            None => {
                memory.release(len as u64);
                Err(PluginError::out_of_memory(format!(
                    "sim:{}: the host refused {len} bytes",
                    memory.device
                )))
            }
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn device(&self) -> usize {
        self.memory.device
    }

    /// Fails unless `[offset, offset + len)` lies inside the block.
    pub fn check(&self, what: &str, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(PluginError::invalid_argument(format!(
                "{what}: bytes {offset}..+{len} are outside a {}-byte buffer on sim:{}",
                self.len,
                self.device()
            ))),
        }
    }

    /// The address `offset` bytes in; the caller has checked the range.
    pub fn at(&self, offset: usize) -> *mut u8 {
        assert!(offset <= self.len, "offset checked by the caller");
        // SAFETY: `offset <= len` keeps the address inside or one past the block.
        unsafe { self.ptr.as_ptr().add(offset) }
    }

    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.check("copy_host_to_device", offset, src.len())?;
        // SAFETY: checked to lie inside the block; `src` is host memory
        // outside every block.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.at(offset), src.len()) };
        Ok(())
    }

    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check("copy_device_to_host", offset, dst.len())?;
        // SAFETY: checked to lie inside the block; `dst` is exclusive host memory.
        unsafe { std::ptr::copy_nonoverlapping(self.at(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies between blocks (possibly one block, possibly overlapping).
    pub fn copy(src: &SimBuffer, src_offset: usize, dst: &SimBuffer, dst_offset: usize, len: usize) -> Result<()> {
        src.check("copy_device_to_device", src_offset, len)?;
        dst.check("copy_device_to_device", dst_offset, len)?;
        // SAFETY: both ranges checked to lie inside their blocks; `copy`
        // allows overlap.
        unsafe { std::ptr::copy(src.at(src_offset), dst.at(dst_offset), len) };
        Ok(())
    }

    pub fn fill(&self, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        self.check("fill", offset, len)?;
        if pattern.is_empty() || !len.is_multiple_of(pattern.len()) {
            return Err(PluginError::invalid_argument(format!(
                "fill: {len} bytes is not a whole number of {}-byte patterns",
                pattern.len()
            )));
        }
        for start in (0..len).step_by(pattern.len()) {
            // SAFETY: `start + pattern.len() <= len`, inside the checked range.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), self.at(offset + start), pattern.len()) };
        }
        Ok(())
    }
}

impl Drop for SimBuffer {
    fn drop(&mut self) {
        if self.len > 0 {
            let layout = Layout::from_size_align(self.len, ALIGN).expect("valid at allocation");
            // SAFETY: allocated by `alloc_zeroed` with this layout, freed once.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
        }
        self.memory.release(self.len as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_accounted_and_limited() {
        let memory = Arc::new(DeviceMemory::new(0, Some(1000)));
        let a = SimBuffer::new(600, &memory).unwrap();
        assert_eq!(a.at(0) as usize % ALIGN, 0);
        let err = SimBuffer::new(500, &memory).err().unwrap();
        assert!(err.message.contains("600 of its 1000"), "{err}");
        let b = SimBuffer::new(400, &memory).unwrap();
        assert_eq!(memory.stats().in_use, 1000);
        drop((a, b));
        let s = memory.stats();
        assert_eq!((s.in_use, s.peak, s.allocations), (0, 1000, 0));
    }

    #[test]
    fn out_of_range_access_is_an_error() {
        let memory = Arc::new(DeviceMemory::new(1, None));
        let a = SimBuffer::new(8, &memory).unwrap();
        assert!(a.write(4, &[0; 8]).is_err());
        assert!(a.fill(0, 6, &[1, 2, 3, 4]).is_err());
        a.fill(0, 8, &[1, 2]).unwrap();
        let mut back = [0; 8];
        a.read(0, &mut back).unwrap();
        assert_eq!(back, [1, 2, 1, 2, 1, 2, 1, 2]);
    }
}
