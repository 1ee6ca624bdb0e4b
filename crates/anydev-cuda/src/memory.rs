//! Allocations of every memory kind, and the page-locked staging buffers
//! of small host transfers.
//!
//! - `Device`: stream-ordered allocation from the device's default memory
//!   pool (`cuMemAllocAsync` on the device's default stream), whose release
//!   threshold keeps freed memory cached, so small ops never pay for a real
//!   allocation; `cuMemAlloc` where the device has no pools.
//! - `HostPinned`: `cuMemHostAlloc` (portable, device-mapped).
//! - `Managed`: `cuMemAllocManaged`.
//! - `System`: plain host memory, 256-byte aligned; offered only where the
//!   device reports pageable memory access (HMM or ATS).
//!
//! Device and managed memory that another library allocated (a PyTorch or
//! CuPy tensor, through DLPack) is adopted, not allocated: [`adopt`].

use crate::device::{Core, CudaDevice};
use crate::driver::{bind, check, describe, CUdeviceptr, CUevent, Raw, NAME};
use anydev_core::memory::{Allocation, ForeignDevice, MemoryKind};
use anydev_core::{Device, Error, Result};
use cudarc::driver::sys::{self, CUresult};
use std::alloc::Layout;
use std::any::Any;
use std::sync::Arc;

/// Alignment of every allocation (the design's device-read alignment).
pub const ALIGN: usize = 256;

/// How an allocation was made (and so how it is freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Empty,
    Pool,
    Plain,
    Pinned,
    Managed,
    System,
    /// Another library's memory, lent with an owner that gives it back.
    Foreign,
}

/// One allocation of the CUDA backend.
pub struct CudaAllocation {
    core: Arc<Core>,
    /// The address kernels use (unified addressing: host-reachable kinds
    /// have the same address on host and device).
    pub ptr: CUdeviceptr,
    host: Option<Raw<*mut u8>>,
    bytes: usize,
    /// Bytes reserved in the device's counter (`None` for a mapping of
    /// memory another allocation owns).
    reserved: Option<usize>,
    pub kind: MemoryKind,
    origin: Origin,
    /// What keeps foreign memory alive; dropped (after `drop`'s wait) with
    /// the allocation.
    _lender: Option<Box<dyn Any + Send + Sync>>,
}

impl CudaAllocation {
    /// The index of the device that made it.
    pub fn device(&self) -> usize {
        self.core.index
    }
}

impl Allocation for CudaAllocation {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        self.host.map(|h| h.0)
    }

    fn device_address(&self) -> Option<u64> {
        Some(self.ptr)
    }
}

impl Drop for CudaAllocation {
    fn drop(&mut self) {
        if self.origin != Origin::Empty && bind(self.core.ctx.0).is_ok() {
            // SAFETY (every arm): the pointer came from the matching
            // allocation call and is freed exactly once. Pool memory is
            // freed in the default stream's order, after all work enqueued
            // on it (work on other streams is joined into it, see `lib.rs`).
            unsafe {
                match self.origin {
                    Origin::Pool => {
                        sys::cuMemFreeAsync(self.ptr, self.core.stream.0);
                    }
                    Origin::Plain | Origin::Managed => {
                        sys::cuStreamSynchronize(self.core.stream.0);
                        sys::cuMemFree_v2(self.ptr);
                    }
                    Origin::Pinned => {
                        sys::cuStreamSynchronize(self.core.stream.0);
                        sys::cuMemFreeHost(self.ptr as *mut std::ffi::c_void);
                    }
                    Origin::System => {
                        // Kernels may still read it: wait for the device first.
                        sys::cuStreamSynchronize(self.core.stream.0);
                        if let Ok(layout) = Layout::from_size_align(self.bytes, ALIGN) {
                            std::alloc::dealloc(self.ptr as *mut u8, layout);
                        }
                    }
                    Origin::Foreign => {
                        // The owner may reuse the memory as soon as it has
                        // it back, on streams that know nothing of ours.
                        sys::cuStreamSynchronize(self.core.stream.0);
                    }
                    Origin::Empty => {}
                }
            }
        }
        if let Some(bytes) = self.reserved {
            self.core.counter.release(bytes);
        }
    }
}

/// A view of memory that another allocation owns (a buffer of another
/// device this one reaches, or host memory the device reaches through
/// HMM/ATS), for ops on `dev`. It frees nothing and counts nothing.
pub fn mapping(dev: &CudaDevice, ptr: CUdeviceptr, host: Option<*mut u8>, kind: MemoryKind) -> CudaAllocation {
    CudaAllocation {
        core: Arc::clone(&dev.core),
        ptr,
        host: host.map(Raw),
        bytes: 0,
        reserved: None,
        kind,
        origin: Origin::Empty,
        _lender: None,
    }
}

/// Takes device or managed memory that another library allocated on this
/// platform as an allocation of `dev`, after checking with the driver that
/// the address is CUDA memory `dev` may use (its own device memory, or
/// managed memory) and that the whole range lies in one allocation. It
/// frees nothing and counts nothing; its owner is dropped once the
/// device's queued work is done.
pub fn adopt(dev: &CudaDevice, memory: ForeignDevice) -> Result<(CudaAllocation, MemoryKind)> {
    let (address, len) = (memory.address(), memory.len());
    let refuse = |why: String| {
        Error::invalid_argument(
            "adopt_device_memory",
            format!("{} cannot use {len} bytes at {address:#x}: {why}", dev.id),
        )
    };
    dev.bind()?;
    let PointerFacts {
        memory_type,
        managed,
        ordinal,
        start,
        size,
    } = pointer_facts(address).map_err(|r| refuse(describe(r)))?;
    let kind = match (managed != 0, memory_type) {
        (true, _) => MemoryKind::Managed,
        (false, t) if t == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 => MemoryKind::Device,
        (false, 0) => return Err(refuse("the driver knows no CUDA memory at that address".into())),
        _ => {
            return Err(refuse(
                "it is host memory, which anydev takes on cpu:0 (DLPack's kDLCPU and kDLCUDAHost)".into(),
            ))
        }
    };
    if kind == MemoryKind::Device && usize::try_from(ordinal).ok() != Some(dev.core.index) {
        return Err(refuse(format!("it is memory of cuda:{ordinal}; take it there")));
    }
    let inside = address
        .checked_sub(start)
        .and_then(|from| from.checked_add(len as u64))
        .is_some_and(|end| end <= size as u64);
    if !inside {
        return Err(refuse(format!(
            "its allocation holds {size} bytes from {start:#x}, so the range runs past its end"
        )));
    }
    let allocation = CudaAllocation {
        core: Arc::clone(&dev.core),
        ptr: address,
        host: (kind == MemoryKind::Managed).then_some(Raw(address as *mut u8)),
        bytes: len,
        reserved: None,
        kind,
        origin: Origin::Foreign,
        _lender: Some(memory.into_owner()),
    };
    Ok((allocation, kind))
}

/// What the driver says of a device address; all zero for an address it
/// does not know.
#[derive(Default)]
struct PointerFacts {
    memory_type: u32,
    managed: u32,
    ordinal: i32,
    start: u64,
    size: usize,
}

/// Asks the driver about `address` in one call (an import pays for it on
/// every tensor).
fn pointer_facts(address: u64) -> Result<PointerFacts, CUresult> {
    use sys::CUpointer_attribute as A;
    let mut facts = PointerFacts::default();
    let mut attributes = [
        A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        A::CU_POINTER_ATTRIBUTE_IS_MANAGED,
        A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut std::ffi::c_void; 5] = [
        &mut facts.memory_type as *mut u32 as *mut _,
        &mut facts.managed as *mut u32 as *mut _,
        &mut facts.ordinal as *mut i32 as *mut _,
        &mut facts.start as *mut u64 as *mut _,
        &mut facts.size as *mut usize as *mut _,
    ];
    // SAFETY: each out-pointer is the C type the driver documents for the
    // attribute beside it (CUmemorytype and the flag as 32-bit, the ordinal
    // an int, the range's start a CUdeviceptr, its size a size_t); both
    // arrays hold five entries. Any address may be asked about: one the
    // driver does not know leaves the zeros.
    let r = unsafe { sys::cuPointerGetAttributes(5, attributes.as_mut_ptr(), data.as_mut_ptr(), address) };
    if r == CUresult::CUDA_SUCCESS {
        Ok(facts)
    } else {
        Err(r)
    }
}

/// Rounds `bytes` up to the allocation granule.
pub fn rounded(bytes: usize) -> Option<usize> {
    bytes.checked_add(ALIGN - 1).map(|b| b / ALIGN * ALIGN)
}

fn out_of_memory(id: Device, core: &Core, requested: usize) -> Error {
    Error::OutOfMemory {
        device: id,
        requested,
        in_use: core.counter.stats().in_use,
        limit: core.counter.limit(),
    }
}

/// Allocates `bytes` of `kind` on `dev` (its context is bound by the caller).
pub fn allocate(dev: &CudaDevice, bytes: usize, kind: MemoryKind) -> Result<CudaAllocation> {
    if !dev.memory_kinds().contains(&kind) {
        return Err(Error::invalid_argument(
            "allocate",
            format!(
                "{} does not offer {kind} memory (it offers {})",
                dev.id,
                dev.memory_kinds()
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let core = Arc::clone(&dev.core);
    let size = rounded(bytes).ok_or_else(|| out_of_memory(dev.id, &core, bytes))?;
    let reservation = core
        .counter
        .reserve(size)
        .map_err(|_| out_of_memory(dev.id, &core, bytes))?;
    let (ptr, host, origin) = raw_allocate(dev, size, kind)?;
    reservation.commit();
    Ok(CudaAllocation {
        core,
        ptr,
        host: host.map(Raw),
        bytes: size,
        reserved: Some(size),
        kind,
        origin,
        _lender: None,
    })
}

type Made = (CUdeviceptr, Option<*mut u8>, Origin);

fn raw_allocate(dev: &CudaDevice, size: usize, kind: MemoryKind) -> Result<Made> {
    if size == 0 {
        return Ok((0, None, Origin::Empty));
    }
    let oom = |r: CUresult| r == CUresult::CUDA_ERROR_OUT_OF_MEMORY;
    match kind {
        MemoryKind::Device => {
            if dev.memory_pools {
                let mut ptr: CUdeviceptr = 0;
                // SAFETY: valid out-pointer; the default stream is live.
                let mut r = unsafe { sys::cuMemAllocAsync(&mut ptr, size, dev.stream()) };
                if oom(r) {
                    // Frees still queued on the stream may make room.
                    // SAFETY: the default stream is live.
                    unsafe { sys::cuStreamSynchronize(dev.stream()) };
                    // SAFETY: as above.
                    r = unsafe { sys::cuMemAllocAsync(&mut ptr, size, dev.stream()) };
                }
                if r == CUresult::CUDA_SUCCESS && (ptr as usize).is_multiple_of(ALIGN) {
                    return Ok((ptr, None, Origin::Pool));
                }
                if r == CUresult::CUDA_SUCCESS {
                    // Not aligned as the design requires: give it back and
                    // use a plain allocation (always 256-byte aligned).
                    // SAFETY: just allocated on this stream.
                    unsafe { sys::cuMemFreeAsync(ptr, dev.stream()) };
                } else if oom(r) {
                    return Err(out_of_memory(dev.id, &dev.core, size));
                } else {
                    check(r, "cuMemAllocAsync")?;
                }
            }
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: valid out-pointer.
            let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, size) };
            if oom(r) {
                return Err(out_of_memory(dev.id, &dev.core, size));
            }
            check(r, "cuMemAlloc")?;
            Ok((ptr, None, Origin::Plain))
        }
        MemoryKind::HostPinned => {
            let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
            // PORTABLE: usable from every context; DEVICEMAP: kernels may
            // read it directly.
            let flags = 0x01 | 0x02;
            // SAFETY: valid out-pointer.
            let r = unsafe { sys::cuMemHostAlloc(&mut p, size, flags) };
            if oom(r) {
                return Err(out_of_memory(dev.id, &dev.core, size));
            }
            check(r, "cuMemHostAlloc")?;
            let mut dptr: CUdeviceptr = 0;
            // SAFETY: `p` is mapped pinned memory.
            let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dptr, p, 0) };
            if r != CUresult::CUDA_SUCCESS {
                // SAFETY: allocated above.
                unsafe { sys::cuMemFreeHost(p) };
                check(r, "cuMemHostGetDevicePointer")?;
            }
            Ok((dptr, Some(p as *mut u8), Origin::Pinned))
        }
        MemoryKind::Managed => {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: valid out-pointer; CU_MEM_ATTACH_GLOBAL.
            let r = unsafe { sys::cuMemAllocManaged(&mut ptr, size, 0x1) };
            if oom(r) {
                return Err(out_of_memory(dev.id, &dev.core, size));
            }
            check(r, "cuMemAllocManaged")?;
            Ok((ptr, Some(ptr as *mut u8), Origin::Managed))
        }
        MemoryKind::System => {
            let layout = Layout::from_size_align(size, ALIGN).map_err(|_| out_of_memory(dev.id, &dev.core, size))?;
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                return Err(out_of_memory(dev.id, &dev.core, size));
            }
            Ok((p as CUdeviceptr, Some(p), Origin::System))
        }
    }
}

/// Largest host transfer that goes through a staging buffer; larger ones
/// use the driver's own pipelined path for pageable memory.
pub const STAGING_MAX: usize = 4 << 20;
/// Staging buffers kept per device.
const STAGING_KEEP: usize = 8;

/// A page-locked buffer and the event after its last transfer.
pub struct Staging {
    ptr: Raw<*mut u8>,
    len: usize,
    busy: Option<Raw<CUevent>>,
}

impl Staging {
    /// Whether its last transfer has completed (the context is bound).
    fn idle(&mut self) -> bool {
        match self.busy {
            None => true,
            Some(e) => {
                // SAFETY: a live event of this device.
                let done = unsafe { sys::cuEventQuery(e.0) } != CUresult::CUDA_ERROR_NOT_READY;
                if done {
                    // SAFETY: destroyed once.
                    unsafe { sys::cuEventDestroy_v2(e.0) };
                    self.busy = None;
                }
                done
            }
        }
    }

    pub fn as_mut_slice(&mut self, len: usize) -> &mut [u8] {
        // SAFETY: the buffer holds `self.len >= len` bytes and is idle.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.0, len) }
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr.0
    }

    /// Marks the buffer busy until the work enqueued so far on `stream`
    /// completes.
    pub fn mark_busy(&mut self, stream: sys::CUstream) -> Result<()> {
        let e = crate::driver::new_event(false)?;
        // SAFETY: live event and stream of the bound context.
        let r = unsafe { sys::cuEventRecord(e, stream) };
        if r != CUresult::CUDA_SUCCESS {
            // SAFETY: destroyed once.
            unsafe { sys::cuEventDestroy_v2(e) };
            // Fall back to waiting: the buffer must not be reused early.
            // SAFETY: a live stream.
            unsafe { sys::cuStreamSynchronize(stream) };
            return check(r, "cuEventRecord");
        }
        self.busy = Some(Raw(e));
        Ok(())
    }
}

/// Takes an idle staging buffer of at least `len` bytes from `dev`'s
/// pool, or makes one (the context is bound). Give it back with [`put_staging`].
pub fn take_staging(dev: &CudaDevice, len: usize) -> Result<Staging> {
    if let Ok(mut pool) = dev.staging.lock() {
        if let Some(i) = pool.iter_mut().position(|s| s.len >= len && s.idle()) {
            return Ok(pool.swap_remove(i));
        }
    }
    let size = len.next_power_of_two().max(64 << 10);
    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer; portable pinned memory.
    check(
        unsafe { sys::cuMemHostAlloc(&mut p, size, 0x01) },
        "cuMemHostAlloc (staging)",
    )?;
    Ok(Staging {
        ptr: Raw(p as *mut u8),
        len: size,
        busy: None,
    })
}

/// Returns a staging buffer to the pool (or frees it when the pool is full).
pub fn put_staging(dev: &CudaDevice, s: Staging) {
    if let Ok(mut pool) = dev.staging.lock() {
        if pool.len() < STAGING_KEEP {
            pool.push(s);
            return;
        }
    }
    free_staging(s);
}

fn free_staging(mut s: Staging) {
    if let Some(e) = s.busy.take() {
        // SAFETY: a live event; wait so the DMA is done before freeing.
        unsafe {
            sys::cuEventSynchronize(e.0);
            sys::cuEventDestroy_v2(e.0);
        }
    }
    // SAFETY: allocated with cuMemHostAlloc, freed once.
    unsafe { sys::cuMemFreeHost(s.ptr.0 as *mut std::ffi::c_void) };
}

/// A temporary device buffer in `stream`'s order (reductions' partials,
/// sort buffers), freed in the same order when dropped.
pub struct Scratch {
    pub ptr: CUdeviceptr,
    stream: Raw<sys::CUstream>,
    pooled: bool,
}

impl Scratch {
    pub fn new(dev: &CudaDevice, stream: sys::CUstream, bytes: usize) -> Result<Scratch> {
        let size = rounded(bytes.max(1)).ok_or_else(|| out_of_memory(dev.id, &dev.core, bytes))?;
        let mut ptr: CUdeviceptr = 0;
        if dev.memory_pools {
            // SAFETY: valid out-pointer; live stream of the bound context.
            let r = unsafe { sys::cuMemAllocAsync(&mut ptr, size, stream) };
            if r == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                return Err(out_of_memory(dev.id, &dev.core, size));
            }
            check(r, "cuMemAllocAsync (scratch)")?;
            return Ok(Scratch {
                ptr,
                stream: Raw(stream),
                pooled: true,
            });
        }
        // SAFETY: valid out-pointer.
        let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, size) };
        if r == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            return Err(out_of_memory(dev.id, &dev.core, size));
        }
        check(r, "cuMemAlloc (scratch)")?;
        Ok(Scratch {
            ptr,
            stream: Raw(stream),
            pooled: false,
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: allocated above; the context that made it is still bound
        // (scratch buffers live inside one backend call).
        unsafe {
            if self.pooled {
                sys::cuMemFreeAsync(self.ptr, self.stream.0);
            } else {
                sys::cuStreamSynchronize(self.stream.0);
                sys::cuMemFree_v2(self.ptr);
            }
        }
    }
}

/// Describes an allocation error for a buffer of another backend.
pub fn foreign(op: &str, what: &dyn std::fmt::Debug) -> Error {
    Error::invalid_argument(op, format!("{what:?} was not allocated by the {NAME} backend"))
}
