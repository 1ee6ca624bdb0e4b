//! Buffers, memory kinds and byte accounting (design section 4).

use crate::backend::Backend;
use crate::ordering::{Access, Usage};
use crate::stream::Stream;
use crate::Device;
use serde::Serialize;
use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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

/// A hint about how managed memory will be used, for backends that place
/// its pages by it (`cuMemAdvise`); [`crate::Backend::advise`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryAdvice {
    /// Read far more than written: devices may keep read-only copies.
    ReadMostly,
    /// Keep the pages on this device (a `cpu` device means host memory).
    PreferredLocation(crate::Device),
    /// This device will access the memory: map it there, so its accesses
    /// do not fault.
    AccessedBy(crate::Device),
}

impl std::str::FromStr for MemoryKind {
    type Err = crate::Error;

    /// The names [`MemoryKind`] displays as: `device`, `host_pinned`,
    /// `managed`, `system`.
    fn from_str(text: &str) -> crate::Result<MemoryKind> {
        match text {
            "device" => Ok(MemoryKind::Device),
            "host_pinned" => Ok(MemoryKind::HostPinned),
            "managed" => Ok(MemoryKind::Managed),
            "system" => Ok(MemoryKind::System),
            _ => Err(crate::Error::invalid_argument(
                "memory kind",
                format!("{text:?} is not one of device, host_pinned, managed, system"),
            )),
        }
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

    /// The address of the first byte in the device's own address space,
    /// where the backend can hand its memory to other libraries of the
    /// same platform (a DLPack consumer such as PyTorch or CuPy on a CUDA
    /// device); `None` where it has no such address (wgpu buffers, plugins).
    fn device_address(&self) -> Option<u64> {
        None
    }
}

/// Host memory that another allocator owns (a NumPy array, a memory-mapped
/// file, a buffer from C), lent to anydev without a copy. It lives as long
/// as its `owner`, which is dropped when anydev no longer needs the memory:
/// an owner holding a reference count or a deleter gives it back then.
/// The `cpu` backend holds it; other devices that reach host memory use
/// it through a mapping of that buffer (`Array::share_to`).
pub struct ForeignHost {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    _owner: Box<dyn Any + Send + Sync>,
}

// SAFETY: the memory is plain host memory whose users the runtime orders
// (one op writes a buffer at a time, reads follow the write); `new`'s
// contract makes it valid from any thread for as long as the owner lives.
unsafe impl Send for ForeignHost {}
// SAFETY: as for `Send`; `&ForeignHost` hands out only the address.
unsafe impl Sync for ForeignHost {}

impl ForeignHost {
    /// Lends `len` bytes at `ptr` to anydev until `owner` is dropped.
    ///
    /// # Safety
    ///
    /// For as long as `owner` lives, the `len` bytes from `ptr` must be
    /// valid for reads and writes from any thread and must not be freed or
    /// moved; whoever else uses them must not write them while anydev
    /// does (as with two views of one NumPy array).
    pub unsafe fn new(ptr: std::ptr::NonNull<u8>, len: usize, owner: Box<dyn Any + Send + Sync>) -> ForeignHost {
        ForeignHost {
            ptr,
            len,
            _owner: owner,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte.
    pub fn ptr(&self) -> std::ptr::NonNull<u8> {
        self.ptr
    }
}

impl Allocation for ForeignHost {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn host_ptr(&self) -> Option<*mut u8> {
        Some(self.ptr.as_ptr())
    }
}

/// Device memory that another library of the same platform owns (a
/// PyTorch or CuPy tensor on a CUDA GPU, handed over through DLPack), lent
/// to anydev without a copy. Like [`ForeignHost`], it lives as long as its
/// `owner`; unlike it, only the backend of that platform can use it
/// ([`crate::Backend::adopt_device_memory`]), and it checks the address
/// before it does.
pub struct ForeignDevice {
    address: u64,
    len: usize,
    owner: Box<dyn Any + Send + Sync>,
}

impl ForeignDevice {
    /// Lends `len` bytes at device address `address` to anydev until
    /// `owner` is dropped.
    ///
    /// # Safety
    ///
    /// For as long as `owner` lives, the `len` bytes from `address` must
    /// stay allocated, and whoever else uses them must order their writes
    /// with anydev's (DLPack's stream handshake does that for a producer's
    /// pending work); the backend waits for its own work on them before it
    /// drops `owner`.
    pub unsafe fn new(address: u64, len: usize, owner: Box<dyn Any + Send + Sync>) -> ForeignDevice {
        ForeignDevice { address, len, owner }
    }

    /// The device address of the first byte.
    pub fn address(&self) -> u64 {
        self.address
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What keeps the memory alive, for the backend's allocation to hold.
    pub fn into_owner(self) -> Box<dyn Any + Send + Sync> {
        self.owner
    }
}

/// Handle to a piece of memory as one device uses it: the bytes, where they
/// live, which device owns them, which backend made them, and the ordering
/// record of their pending uses. Arrays share buffers through `Arc`.
///
/// A buffer is either an allocation of its own device, or a zero-copy
/// *mapping* of another device's memory (see [`crate::reach`]): then
/// [`Buffer::device`] is the device whose ops use the handle, while
/// [`Buffer::owner`] and [`Buffer::allocator`] name where the memory came
/// from, and the mapping keeps that memory alive.
pub struct Buffer {
    device: Device,
    len: usize,
    kind: MemoryKind,
    backend: Arc<dyn Backend>,
    // Dropped before `memory`: a mapping releases its handle before the
    // memory it maps can go.
    allocation: Option<Box<dyn Allocation>>,
    memory: Memory,
}

/// Whose memory a buffer is.
enum Memory {
    /// Its own allocation, with the ordering record of its uses (inline, so
    /// a buffer costs no heap block beyond its allocation).
    Own(Usage),
    /// Another buffer's memory: the owner of that buffer, kept alive, whose
    /// ordering record the mapping shares.
    Mapped(Arc<dyn BufferOwner>),
}

/// Something that owns a [`Buffer`] (the array layer's storage), held by
/// every zero-copy mapping of that buffer to keep its memory alive.
pub trait BufferOwner: Any + Send + Sync {
    fn buffer(&self) -> &Buffer;
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
            allocation: Some(allocation),
            memory: Memory::Own(Usage::default()),
        }
    }

    /// A handle through which `device` (served by `backend`) uses the
    /// memory of the buffer `source` owns, without copying. `allocation` is
    /// what the backend's [`Backend::map_buffer`] returned; the mapping
    /// keeps `source` alive.
    pub fn mapping(
        device: Device,
        backend: Arc<dyn Backend>,
        allocation: Box<dyn Allocation>,
        source: Arc<dyn BufferOwner>,
    ) -> Buffer {
        let mapped = source.buffer();
        Buffer {
            device,
            len: mapped.len,
            kind: mapped.kind,
            backend,
            allocation: Some(allocation),
            memory: Memory::Mapped(source),
        }
    }

    /// The device whose ops use this handle.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The device that owns the memory: [`Buffer::device`] unless this is
    /// a mapping of another device's memory.
    pub fn owner(&self) -> Device {
        self.mapped().map_or(self.device, Buffer::owner)
    }

    /// For a mapping, what it keeps alive: the owner of the mapped buffer
    /// (the array layer's storage of the source array).
    pub fn mapped_from(&self) -> Option<&Arc<dyn BufferOwner>> {
        match &self.memory {
            Memory::Own(_) => None,
            Memory::Mapped(source) => Some(source),
        }
    }

    /// For a mapping, the buffer it maps.
    #[inline]
    fn mapped(&self) -> Option<&Buffer> {
        match &self.memory {
            Memory::Own(_) => None,
            Memory::Mapped(source) => Some(source.buffer()),
        }
    }

    /// Whether this handle maps memory another device owns.
    pub fn is_mapping(&self) -> bool {
        matches!(self.memory, Memory::Mapped(_))
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

    /// The backend that runs ops on this handle (for a mapping, the
    /// mapping device's backend, not the allocator).
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    fn allocator_backend(&self) -> &Arc<dyn Backend> {
        self.mapped().map_or(&self.backend, Buffer::allocator_backend)
    }

    /// The name of the allocator (the backend) that made the memory.
    pub fn allocator(&self) -> &str {
        self.allocator_backend().name()
    }

    #[inline]
    pub fn allocation(&self) -> &dyn Allocation {
        self.allocation.as_deref().expect("a live buffer holds its allocation")
    }

    /// The allocation as the backend's concrete type, if it is one.
    pub fn downcast<T: Allocation>(&self) -> Option<&T> {
        self.allocation().as_any().downcast_ref::<T>()
    }

    /// The host address of the first byte when the host can dereference it.
    pub fn host_ptr(&self) -> Option<*mut u8> {
        self.allocation().host_ptr()
    }

    /// Runs `read` on the `len` bytes from `offset`, in place, once every
    /// write pending on the memory has completed; `Ok(None)` when the host
    /// cannot address the memory (device memory: copy it out instead).
    /// This is how a copy between backends skips a staging buffer when one
    /// side is host memory. A range outside the buffer is an error.
    pub fn read_on_host<R>(
        &self,
        offset: usize,
        len: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> crate::Result<Option<R>> {
        let Some(ptr) = self.host_range("read_on_host", offset, len)? else {
            return Ok(None);
        };
        self.usage().host_wait(Access::Read)?;
        // SAFETY: the range lies inside the allocation (`host_range`), which
        // `self` keeps alive for the call, and the host may dereference it
        // (`host_ptr`). No device work writes it any more (`host_wait`);
        // a host thread writing it now (`Array::assign` on another view)
        // would race with this read as with any CPU kernel's, which the
        // array layer's ordering rules leave to the program, as NumPy does.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        Ok(Some(read(bytes)))
    }

    /// Runs `write` on the `len` bytes from `offset`, in place, once every
    /// use pending on the memory has completed; `Ok(None)` when the host
    /// cannot address the memory. For memory nothing else reaches yet (a
    /// fresh output), so that a backend's read-back lands in it directly.
    pub fn write_on_host<R>(
        &self,
        offset: usize,
        len: usize,
        write: impl FnOnce(&mut [u8]) -> R,
    ) -> crate::Result<Option<R>> {
        let Some(ptr) = self.host_range("write_on_host", offset, len)? else {
            return Ok(None);
        };
        self.usage().host_wait(Access::Write)?;
        // SAFETY: as in `read_on_host`, with every pending use complete:
        // the range is live host memory that no device work touches.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        Ok(Some(write(bytes)))
    }

    /// The host address of byte `offset` when the host can address the
    /// memory and `len` bytes from there lie inside the buffer.
    fn host_range(&self, op: &str, offset: usize, len: usize) -> crate::Result<Option<*mut u8>> {
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(crate::Error::invalid_argument(
                op,
                format!("bytes {offset}..+{len} are outside a buffer of {} bytes", self.len),
            ));
        }
        // SAFETY: `offset <= len` of the allocation (checked above), so the
        // result stays inside it or one past its end.
        Ok(self.host_ptr().map(|p| unsafe { p.add(offset) }))
    }

    /// The device address of the first byte, where the backend shares one
    /// ([`Allocation::device_address`]).
    pub fn device_address(&self) -> Option<u64> {
        self.allocation().device_address()
    }

    /// The ordering record of the memory, shared with every mapping of it.
    #[inline]
    pub fn usage(&self) -> &Usage {
        match &self.memory {
            Memory::Own(usage) => usage,
            Memory::Mapped(source) => source.buffer().usage(),
        }
    }
}

impl Drop for Buffer {
    /// Frees only after every pending use: uses by the backend that owns the
    /// handle are handed to [`Backend::release`] (which may defer the free
    /// to the backend's own stream order), or need nothing at all on a
    /// device that frees in stream order; uses by other backends, and all
    /// uses of a mapping, are waited for here, since the memory they touch
    /// may be gone the moment this returns.
    fn drop(&mut self) {
        let Some(allocation) = self.allocation.take() else {
            return;
        };
        let mut own = Vec::new();
        let mut failed = false;
        let mapping = self.is_mapping();
        let frees_after = |stream: &Stream| !mapping && self.backend.frees_in_stream_order(self.device.index(), stream);
        for (backend, event) in self.usage().drain(&self.backend, frees_after) {
            let same = std::ptr::addr_eq(Arc::as_ptr(&backend), Arc::as_ptr(&self.backend));
            match event {
                Ok(event) if same && !mapping => own.push(event),
                Ok(event) => failed |= backend.synchronize_event(&event).is_err(),
                Err(_) => failed = true,
            }
        }
        if failed {
            // A device that cannot say whether it still uses the memory
            // must not see it freed under it: leak rather than corrupt.
            std::mem::forget(allocation);
            return;
        }
        self.backend.release(allocation, own);
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("device", &self.device)
            .field("len", &self.len)
            .field("kind", &self.kind)
            .field("owner", &self.owner())
            .field("allocator", &self.allocator())
            .finish()
    }
}

/// A snapshot of one device's memory accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryStats {
    /// Bytes currently allocated.
    pub in_use: usize,
    /// Largest `in_use` seen since the backend started or the last
    /// [`crate::Backend::reset_peak`].
    pub peak: usize,
    /// Number of live allocations.
    pub allocations: usize,
    /// Allocation limit in bytes, where the backend enforces one.
    pub limit: Option<usize>,
    /// Bytes the backend holds from the system: `in_use` plus what it
    /// caches for reuse, which [`crate::Backend::empty_cache`] gives back.
    pub reserved: usize,
    /// Free bytes on the device as its driver reports them, where it does.
    pub free: Option<usize>,
    /// The device's memory size, where it is known.
    pub total: Option<usize>,
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

    /// Reserves `bytes` for an allocation about to be made, or returns the
    /// bytes in use when the limit would be exceeded (nothing is reserved
    /// then). The peak rises only when the [`Reservation`] is committed,
    /// once the memory is there, so that an allocation the system refuses
    /// leaves no peak it never reached.
    pub fn reserve(&self, bytes: usize) -> Result<Reservation<'_>, usize> {
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
                    self.allocations.fetch_add(1, Ordering::AcqRel);
                    return Ok(Reservation {
                        counter: self,
                        bytes,
                        in_use: next,
                    });
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

    /// The counts, with nothing cached (`reserved` is `in_use`) and no
    /// free or total size; backends that know more fill them in.
    pub fn stats(&self) -> MemoryStats {
        let in_use = self.in_use.load(Ordering::Acquire);
        MemoryStats {
            in_use,
            peak: self.peak.load(Ordering::Acquire),
            allocations: self.allocations.load(Ordering::Acquire),
            limit: self.limit,
            reserved: in_use,
            free: None,
            total: None,
        }
    }

    /// Starts the peak again from the bytes in use now.
    pub fn reset_peak(&self) {
        // An allocation racing with the reset raises the peak again through
        // its own `fetch_max`, so the peak never falls below `in_use`.
        self.peak.store(self.in_use.load(Ordering::Acquire), Ordering::Release);
        self.peak
            .fetch_max(self.in_use.load(Ordering::Acquire), Ordering::AcqRel);
    }

    pub fn limit(&self) -> Option<usize> {
        self.limit
    }
}

/// Bytes reserved in a [`MemoryCounter`] for an allocation being made.
/// Dropped without [`Reservation::commit`] (the allocation failed), it
/// gives the bytes back and leaves the peak as it was.
#[must_use = "an uncommitted reservation gives its bytes back when dropped"]
#[derive(Debug)]
pub struct Reservation<'a> {
    counter: &'a MemoryCounter,
    bytes: usize,
    /// The bytes in use once these were reserved: the peak to record.
    in_use: usize,
}

impl Reservation<'_> {
    /// Keeps the bytes for the allocation just made, which its drop
    /// releases with [`MemoryCounter::release`], and raises the peak to
    /// what was in use with them.
    pub fn commit(self) {
        self.counter.peak.fetch_max(self.in_use, Ordering::AcqRel);
        std::mem::forget(self);
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.counter.release(self.bytes);
    }
}

/// What `to_device` did between devices, counted per runtime so that a
/// test or a user can see that a move shared memory instead of copying.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TransferStats {
    /// Moves that shared the source's memory (no allocation, no bytes).
    pub shared: u64,
    /// Moves that copied.
    pub copies: u64,
    /// Bytes those copies moved.
    pub bytes_copied: u64,
}

/// Lock-free counters behind [`TransferStats`].
#[derive(Debug, Default)]
pub struct TransferCounter {
    shared: AtomicU64,
    copies: AtomicU64,
    bytes_copied: AtomicU64,
}

impl TransferCounter {
    pub fn record_shared(&self) {
        self.shared.fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_copy(&self, bytes: usize) {
        self.copies.fetch_add(1, Ordering::Relaxed);
        self.bytes_copied.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub fn stats(&self) -> TransferStats {
        TransferStats {
            shared: self.shared.load(Ordering::Relaxed),
            copies: self.copies.load(Ordering::Relaxed),
            bytes_copied: self.bytes_copied.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_tracks_peak_and_enforces_the_limit() {
        let c = MemoryCounter::new(Some(100));
        c.reserve(60).unwrap().commit();
        assert_eq!(c.reserve(50).err(), Some(60));
        c.reserve(40).unwrap().commit();
        c.release(60);
        c.release(40);
        let s = c.stats();
        assert_eq!((s.in_use, s.peak, s.allocations), (0, 100, 0));
    }

    #[test]
    fn an_uncommitted_reservation_leaves_no_trace() {
        let c = MemoryCounter::new(None);
        c.reserve(10).unwrap().commit();
        drop(c.reserve(1 << 40).unwrap());
        let s = c.stats();
        assert_eq!((s.in_use, s.peak, s.allocations), (10, 10, 1));
    }
}
