//! Device buffers and host transfers.
//!
//! Every allocation is one wgpu storage buffer, its size rounded up to a
//! multiple of 16 bytes (wgpu copies move whole 4-byte words; f64 and i64
//! bindings need whole 8-byte elements), taken from the device's cache of
//! freed buffers of that size where it has one (`buffer_cache`). Host reads go through a mapped
//! staging buffer and wait inside the backend, so callers see synchronous
//! reads; host writes use `queue.write_buffer`, which copies the bytes at
//! once and orders the upload before later submissions. Transfers that
//! are not 4-byte aligned widen to the enclosing words (a read-modify-write
//! for writes).

use crate::buffer_cache::BufferCache;
use crate::device::{GpuDevice, ScopeError};
use anydev_core::backend::TensorRef;
use anydev_core::memory::{Allocation, MemoryCounter};
use anydev_core::{Device, Error, Result};
use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

/// Granule of every allocation's physical size.
const GRANULE: u64 = 16;

/// One device buffer; dropping it gives the buffer to the device's cache
/// (or frees it, once in-flight work that uses it is done, which wgpu
/// tracks) and releases its accounting.
pub struct GpuAllocation {
    pub buffer: wgpu::Buffer,
    pub device: usize,
    len: usize,
    counter: Arc<MemoryCounter>,
    cache: Arc<BufferCache>,
}

impl Allocation for GpuAllocation {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl GpuAllocation {
    /// The bytes allocated (the buffer may hold up to 15 more).
    pub fn bytes(&self) -> usize {
        self.len
    }
}

impl Drop for GpuAllocation {
    fn drop(&mut self) {
        self.counter.release(self.len);
        // A handle of the same buffer: this one drops with the allocation.
        self.cache.give(self.buffer.clone());
    }
}

/// Allocates `bytes` on `dev`. Sizes beyond what one binding can hold, and
/// wgpu's own out-of-memory, are [`Error::OutOfMemory`].
pub fn allocate(dev: &GpuDevice, id: Device, index: usize, bytes: usize) -> Result<GpuAllocation> {
    let max = dev.max_allocation();
    let out_of_memory = |in_use| Error::OutOfMemory {
        device: id,
        requested: bytes,
        in_use,
        limit: Some(max as usize),
    };
    let size = (bytes as u64).div_ceil(GRANULE).max(1) * GRANULE;
    if bytes as u64 > max || size > dev.limits.max_buffer_size {
        return Err(out_of_memory(dev.counter.stats().in_use));
    }
    let reservation = dev.counter.reserve(bytes).map_err(out_of_memory)?;
    let buffer = match dev.buffers.take(size).map_or_else(|| create_buffer(dev, size), Ok) {
        Ok(buffer) => buffer,
        Err(e) => {
            // Given back first, so the error reports the bytes in use without it.
            drop(reservation);
            return Err(match e {
                ScopeError::OutOfMemory(_) => out_of_memory(dev.counter.stats().in_use),
                ScopeError::Other(m) => Error::backend(crate::NAME, format!("creating a buffer of {bytes} bytes: {m}")),
            });
        }
    };
    reservation.commit();
    Ok(GpuAllocation {
        buffer,
        device: index,
        len: bytes,
        counter: Arc::clone(&dev.counter),
        cache: Arc::clone(&dev.buffers),
    })
}

/// A new buffer of `size` bytes on `dev`; where the device is out of
/// memory, the cached buffers go back first and it is tried once more.
fn create_buffer(dev: &GpuDevice, size: u64) -> std::result::Result<wgpu::Buffer, ScopeError> {
    let create = || {
        dev.checked(|| {
            dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    };
    let created = create();
    if matches!(created, Err(ScopeError::OutOfMemory(_))) && dev.buffers.bytes() > 0 {
        // Cached buffers of other sizes may be what fills the device.
        dev.buffers.clear();
        return create();
    }
    created
}

/// The wgpu buffers of kernel operands, each of which must be a whole
/// buffer of device `index` (`id`): kernels bind whole buffers from
/// element 0. `what` names the call in the error.
pub fn whole_buffers<'t>(
    tensors: &[TensorRef<'t>],
    index: usize,
    id: Device,
    what: &str,
) -> Result<Vec<&'t wgpu::Buffer>> {
    tensors
        .iter()
        .map(|t| {
            t.buffer
                .downcast::<GpuAllocation>()
                .filter(|a| a.device == index && t.offset == 0)
                .map(|a| &a.buffer)
                .ok_or_else(|| {
                    Error::backend(
                        crate::NAME,
                        format!("{what}: an operand that is not at the start of a buffer of {id}"),
                    )
                })
        })
        .collect()
}

/// The 4-byte aligned range enclosing `offset..offset + len`.
fn widen(offset: usize, len: usize) -> Range<u64> {
    let start = offset as u64 & !3;
    let end = (offset + len) as u64;
    start..end.div_ceil(4) * 4
}

fn backend_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::backend(crate::NAME, format!("{what}: {e}"))
}

/// Copies `dst.len()` bytes from `src` at `offset` to the host, after all
/// work submitted before.
pub fn read(dev: &GpuDevice, src: &wgpu::Buffer, offset: usize, dst: &mut [u8]) -> Result<()> {
    if dst.is_empty() {
        return Ok(());
    }
    let range = widen(offset, dst.len());
    let size = range.end - range.start;
    let staging = dev
        .checked(|| {
            let staging = dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("anydev staging read"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = dev.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(src, range.start, &staging, 0, size);
            let index = dev.queue.submit([encoder.finish()]);
            (staging, index)
        })
        .map_err(|e| backend_error("copy to host", e))?;
    let (staging, index) = staging;
    let slice = staging.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    dev.device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
        .map_err(|e| backend_error("waiting for a copy to host", e))?;
    rx.recv()
        .map_err(|e| backend_error("mapping a staging buffer", e))?
        .map_err(|e| backend_error("mapping a staging buffer", e))?;
    {
        let view = slice
            .get_mapped_range()
            .map_err(|e| backend_error("reading a staging buffer", e))?;
        let skip = offset - range.start as usize;
        dst.copy_from_slice(&view[skip..skip + dst.len()]);
    }
    staging.unmap();
    Ok(())
}

/// Copies host bytes into `dst` at `offset`, ordered after all work
/// submitted before and before all work submitted after.
pub fn write(dev: &GpuDevice, dst: &wgpu::Buffer, offset: usize, src: &[u8]) -> Result<()> {
    if src.is_empty() {
        return Ok(());
    }
    let range = widen(offset, src.len());
    let aligned = range.start == offset as u64 && range.end == (offset + src.len()) as u64;
    let merged;
    let bytes = if aligned {
        src
    } else {
        let mut words = vec![0u8; (range.end - range.start) as usize];
        read(dev, dst, range.start as usize, &mut words)?;
        let skip = offset - range.start as usize;
        words[skip..skip + src.len()].copy_from_slice(src);
        merged = words;
        &merged
    };
    dev.checked(|| dev.queue.write_buffer(dst, range.start, bytes))
        .map_err(|e| backend_error("copy from host", e))
}

/// Copies `len` bytes between buffers of one device. Aligned copies
/// between distinct buffers run on the device; the rest stage through the
/// host.
pub fn copy(
    dev: &GpuDevice,
    src: &wgpu::Buffer,
    src_offset: usize,
    dst: &wgpu::Buffer,
    dst_offset: usize,
    len: usize,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let aligned = (src_offset | dst_offset | len).is_multiple_of(4);
    if aligned && src != dst {
        return dev
            .checked(|| {
                let mut encoder = dev.device.create_command_encoder(&Default::default());
                encoder.copy_buffer_to_buffer(src, src_offset as u64, dst, dst_offset as u64, len as u64);
                dev.queue.submit([encoder.finish()]);
            })
            .map_err(|e| backend_error("copy between buffers", e));
    }
    let mut staged = vec![0u8; len];
    read(dev, src, src_offset, &mut staged)?;
    write(dev, dst, dst_offset, &staged)
}

/// Fills `len` bytes from `offset` with repetitions of `pattern`.
pub fn fill(dev: &GpuDevice, dst: &wgpu::Buffer, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    if pattern.iter().all(|&b| b == 0) && (offset | len).is_multiple_of(4) {
        return dev
            .checked(|| {
                let mut encoder = dev.device.create_command_encoder(&Default::default());
                encoder.clear_buffer(dst, offset as u64, Some(len as u64));
                dev.queue.submit([encoder.finish()]);
            })
            .map_err(|e| backend_error("fill", e));
    }
    // Upload in chunks that are whole patterns, so host memory stays bounded.
    const CHUNK: usize = 1 << 22;
    let per_chunk = (CHUNK / pattern.len()).max(1) * pattern.len();
    let block: Vec<u8> = pattern.iter().copied().cycle().take(per_chunk.min(len)).collect();
    let mut done = 0;
    while done < len {
        let n = block.len().min(len - done);
        write(dev, dst, offset + done, &block[..n])?;
        done += n;
    }
    Ok(())
}
