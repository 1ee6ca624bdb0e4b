//! Moving data: host uploads and downloads, contiguous copies on a device,
//! and `to_device`, the only way data moves between devices (placement
//! rule 5).

use crate::array::{Array, Storage};
use crate::context::{DeviceCtx, MemoryGuard};
use crate::creation::Spec;
use crate::dispatch::alloc;
use crate::element::{self, Element};
use crate::shape;
use anydev_core::ordering::Access;
use anydev_core::{Buffer, DType, Device, Error, MemoryAdvice, MemoryKind, Result, Scalar};
use std::any::Any;
use std::sync::Arc;

impl Array {
    /// An array of `shape` holding `data` (row-major), on the device of
    /// `spec` (explicit > scope > default) and of its dtype if it names one
    /// (converted on the device), else of `T`'s dtype.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
        let spec = spec.into();
        let (ctx, _memory) = crate::context::creation_placement("from_slice", &spec)?;
        if shape::checked_size("from_slice", shape)? != data.len() {
            return Err(Error::ShapeMismatch {
                op: "from_slice".into(),
                shapes: vec![vec![data.len()], shape.to_vec()],
                reason: format!("{} values cannot fill shape {shape:?}", data.len()),
            });
        }
        let array = upload(&ctx, T::DTYPE, shape, &element::to_bytes(data))?;
        match spec.dtype {
            Some(dtype) => array.astype(dtype),
            None => Ok(array),
        }
    }

    /// [`Array::from_slice`] taking ownership of a vector.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
        Array::from_slice(&data, shape, spec)
    }

    /// A 0-d array holding `value`.
    pub fn scalar<T: Element>(value: T, spec: impl Into<Spec>) -> Result<Array> {
        Array::from_slice(&[value], &[], spec)
    }

    /// The elements in row-major order, read back to the host (after the
    /// work that produces them has finished). `T` must be the array's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            return Err(Error::InvalidDType {
                op: "to_vec".into(),
                dtype: self.dtype,
                reason: format!(
                    "the array holds {} but {} was requested; convert with astype first",
                    self.dtype,
                    T::DTYPE
                ),
            });
        }
        Ok(element::from_bytes(&self.host_bytes()?))
    }

    /// The single element of a 0-d or size-1 array, as `T` (the array's dtype).
    pub fn to_scalar<T: Element>(&self) -> Result<T> {
        self.check_single("to_scalar")?;
        Ok(self.to_vec::<T>()?[0])
    }

    /// The single element of a 0-d or size-1 array, of whatever dtype.
    pub fn item(&self) -> Result<Scalar> {
        self.check_single("item")?;
        Ok(element::scalar_from_bytes(self.dtype, &self.host_bytes()?))
    }

    fn check_single(&self, op: &str) -> Result<()> {
        if self.size() == 1 {
            Ok(())
        } else {
            Err(Error::invalid_argument(
                op,
                format!("needs an array of exactly one element, got shape {:?}", self.shape),
            ))
        }
    }

    /// Every element as a [`Scalar`], row-major (for printing and tests).
    pub fn to_scalars(&self) -> Result<Vec<Scalar>> {
        let bytes = self.host_bytes()?;
        Ok(bytes
            .chunks_exact(self.dtype.size())
            .map(|c| element::scalar_from_bytes(self.dtype, c))
            .collect())
    }

    /// Every element converted to `f64`, row-major (exact except for 64-bit
    /// integers beyond 2^53). Complex arrays are an error (the imaginary
    /// part would be lost): use [`Array::to_c128_vec`].
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        if self.dtype.is_complex() {
            return Err(Error::InvalidDType {
                op: "to_f64_vec".into(),
                dtype: self.dtype,
                reason: "a complex array has no f64 values; use to_c128_vec".into(),
            });
        }
        Ok(self.to_scalars()?.into_iter().map(Scalar::to_f64).collect())
    }

    /// Every element as a complex number of `f64`s, row-major (real
    /// dtypes get an imaginary part of 0).
    pub fn to_c128_vec(&self) -> Result<Vec<num_complex::Complex64>> {
        Ok(self.to_scalars()?.into_iter().map(Scalar::to_c128).collect())
    }

    /// The array's elements as little-endian bytes on the host, row-major.
    pub fn host_bytes(&self) -> Result<Vec<u8>> {
        let c = self.as_contiguous()?;
        let len = c.size() * c.dtype.size();
        let offset = c.offset * c.dtype.size();
        if let Some(bytes) = c.buffer().read_on_host(offset, len, <[u8]>::to_vec)? {
            return Ok(bytes);
        }
        let mut out = vec![0u8; len];
        if !out.is_empty() {
            c.read_back(offset, &mut out)?;
        }
        Ok(out)
    }

    /// Copies the bytes of the buffer from `offset` into `dst` through the
    /// backend, in the order of the array's stream.
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        let ctx = self.ctx();
        let stream = ctx.stream();
        self.buffer().usage().before(&ctx.backend, &stream, Access::Read)?;
        ctx.backend.copy_to_host(&stream, self.buffer(), offset, dst)
    }

    /// The array itself when its elements are contiguous, else a contiguous
    /// copy on the same device.
    pub fn as_contiguous(&self) -> Result<Array> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        self.copy()
    }

    /// The array on `device`.
    ///
    /// - To its own device: the array itself (a view of the same buffer).
    /// - With unified memory on, when `device` reaches the array's memory
    ///   (the table in [`anydev_core::reach`]): a view of the same memory,
    ///   with the same layout; nothing is allocated or copied. Moving it
    ///   back to the device that owns the memory returns the original.
    /// - Otherwise a contiguous copy: a backend copy between devices of one
    ///   backend (a peer copy where the devices allow), else staged
    ///   through host memory.
    ///
    /// The runtime's [`anydev_core::Runtime::transfers`] counts which it was.
    pub fn to_device(&self, device: Device) -> Result<Array> {
        if device == self.device() {
            return Ok(self.clone());
        }
        let target = self.ctx().sibling(device)?;
        if let Some(shared) = self.share_with(&target)? {
            target.runtime.transfers().record_shared();
            return Ok(shared);
        }
        self.copy_to(&target)
    }

    /// The kind of memory the array's buffer is (`Device`, `Managed`, ...).
    pub fn memory_kind(&self) -> MemoryKind {
        self.buffer().kind()
    }

    /// The array on `device` in memory of `kind` (managed memory for
    /// oversubscription, pinned host memory for fast transfers): itself
    /// when it is there already, else a contiguous copy. A kind `device`
    /// does not allocate is an error naming the kinds it does.
    pub fn to_device_in(&self, device: Device, kind: MemoryKind) -> Result<Array> {
        if device == self.device() && kind == self.memory_kind() {
            return Ok(self.clone());
        }
        let target = self.ctx().sibling(device)?;
        let _memory = MemoryGuard::new("to_device_in", &target, Some(kind))?;
        self.copy_to(&target)
    }

    /// Starts moving the array's managed memory to `device` (a `cpu`
    /// device: to the host) in stream order, so work there does not fault
    /// its pages in (`cudaMemPrefetchAsync`). A hint: it does nothing for
    /// memory of other kinds, and on devices whose `managed_prefetch`
    /// capability is false.
    pub fn prefetch(&self, device: Device) -> Result<()> {
        self.with_managed_range("prefetch", |ctx, offset, len| {
            ctx.runtime.backend(device)?;
            let stream = ctx.stream();
            ctx.backend.prefetch(&stream, self.buffer(), offset, len, device)
        })
    }

    /// Tells the backend how the array's managed memory will be used
    /// (`cudaMemAdvise`). A hint, like [`Array::prefetch`].
    pub fn advise(&self, advice: MemoryAdvice) -> Result<()> {
        self.with_managed_range("advise", |ctx, offset, len| {
            if let MemoryAdvice::PreferredLocation(d) | MemoryAdvice::AccessedBy(d) = advice {
                ctx.runtime.backend(d)?;
            }
            ctx.backend.advise(self.buffer(), offset, len, advice)
        })
    }

    /// Runs `hint` with the array's context and the byte range its view
    /// spans when its memory is managed; other memory takes no hints.
    fn with_managed_range(&self, op: &str, hint: impl FnOnce(&DeviceCtx, usize, usize) -> Result<()>) -> Result<()> {
        if self.memory_kind() != MemoryKind::Managed || self.size() == 0 {
            return Ok(());
        }
        let (start, end) = anydev_core::backend::byte_extent(op, &self.tensor_ref())?;
        hint(self.ctx(), start, end - start)
    }

    /// A contiguous copy of the array on `target`'s device.
    fn copy_to(&self, target: &Arc<DeviceCtx>) -> Result<Array> {
        let transfers = target.runtime.transfers();
        let src = self.as_contiguous()?;
        let bytes = src.size() * src.dtype.size();
        let out = alloc(target, src.dtype, &src.shape)?;
        if bytes == 0 {
            return Ok(out);
        }
        let source = src.ctx();
        if Arc::ptr_eq(&source.backend, &target.backend) {
            let stream = source.stream();
            src.buffer().usage().before(&source.backend, &stream, Access::Read)?;
            source.backend.copy_between(
                &stream,
                src.buffer(),
                src.offset * src.dtype.size(),
                out.buffer(),
                0,
                bytes,
            )?;
            // Later work on the target's stream waits for the copy through
            // the output's last-write record.
            if source.asynchronous {
                src.buffer().usage().after(&source.backend, &stream, Access::Read);
                out.buffer().usage().after(&source.backend, &stream, Access::Write);
            }
        } else {
            src.copy_across(target, &out)?;
        }
        transfers.record_copy(bytes);
        Ok(out)
    }

    /// Copies this contiguous array into `out`, a fresh array of the same
    /// size on another backend. Where the host can address either side (any
    /// `cpu:0` array) the other backend copies straight into or out of it;
    /// only between two devices' memories are the bytes staged on the host.
    fn copy_across(&self, target: &DeviceCtx, out: &Array) -> Result<()> {
        let len = self.size() * self.dtype.size();
        let offset = self.offset * self.dtype.size();
        // An asynchronous target may still be using recycled memory behind
        // the fresh buffer, which the host cannot wait for.
        if !target.asynchronous {
            if let Some(done) = out.buffer().write_on_host(0, len, |dst| self.read_back(offset, dst))? {
                return done;
            }
        }
        if let Some(done) = self
            .buffer()
            .read_on_host(offset, len, |src| write_host(target, src, out))?
        {
            return done;
        }
        write_host(target, &self.host_bytes()?, out)
    }

    /// The array as a view on `device` of the same memory, never a copy,
    /// whatever the unified-memory setting: the explicit form of what
    /// [`Array::to_device`] does by itself with unified memory on. It is
    /// how memory lent with [`Array::from_foreign_host`] reaches a device
    /// other than `cpu:0` in place. Writes through either array are seen
    /// by the other, in the order of the devices' work.
    ///
    /// To its own device it is the array itself. Memory `device` cannot
    /// use in place (the table in [`anydev_core::reach`]: a discrete GPU
    /// and plain host memory, say) is [`Error::FeatureUnsupported`]; copy
    /// it with [`Array::to_device`] instead.
    pub fn share_to(&self, device: Device) -> Result<Array> {
        if device == self.device() {
            return Ok(self.clone());
        }
        let target = self.ctx().sibling(device)?;
        let shared = self.map_onto(&target)?.ok_or_else(|| Error::FeatureUnsupported {
            feature: format!("using {} memory of {} in place", self.memory_kind(), self.device()),
            device,
            reason: "it cannot reach that memory (its capabilities pageable_memory_access, managed_memory \
                     and host_accessible_memory say what it reaches); copy the array with to_device"
                .into(),
        })?;
        target.runtime.transfers().record_shared();
        Ok(shared)
    }

    /// The array as a view on `target` of the same memory, when unified
    /// memory is on and `target` reaches it; `None` when it must be copied.
    fn share_with(&self, target: &Arc<DeviceCtx>) -> Result<Option<Array>> {
        if !target.runtime.unified_memory()? {
            return Ok(None);
        }
        match self.map_onto(target) {
            // A device may still refuse this memory in particular (a plugin
            // that imports only aligned blocks): it is copied then, as it
            // would be without unified memory.
            Err(Error::InvalidArgument { .. } | Error::FeatureUnsupported { .. }) => Ok(None),
            shared => shared,
        }
    }

    /// The array as a view on `target` of the same memory when `target`
    /// reaches it, else `None`.
    fn map_onto(&self, target: &Arc<DeviceCtx>) -> Result<Option<Array>> {
        let buffer = self.buffer();
        // A mapping going back to the device that owns its memory: the
        // array it was made from holds that memory already.
        if buffer.owner() == target.device {
            if let Some(storage) = buffer.mapped_from().and_then(|s| {
                let owner: Arc<dyn Any + Send + Sync> = Arc::clone(s) as _;
                owner.downcast::<Storage>().ok()
            }) {
                return Ok(Some(self.with_storage(storage)));
            }
        }
        let owner = match buffer.is_mapping() {
            true => self.ctx().sibling(buffer.owner())?,
            false => Arc::clone(self.ctx()),
        };
        let same_backend = Arc::ptr_eq(&owner.backend, &target.backend);
        let reachable = target.reach.can_use(buffer.kind(), same_backend, &owner.reach)
            && (same_backend || buffer.host_ptr().is_some());
        if !reachable {
            return Ok(None);
        }
        let allocation = target.backend.map_buffer(target.device.index(), buffer)?;
        let mapping = Buffer::mapping(
            target.device,
            Arc::clone(&target.backend),
            allocation,
            Arc::clone(&self.storage) as _,
        );
        let storage = Arc::new(Storage {
            buffer: mapping,
            ctx: Arc::clone(target),
        });
        Ok(Some(self.with_storage(storage)))
    }

    /// The same view (dtype, shape, strides, offset) of other storage.
    fn with_storage(&self, storage: Arc<Storage>) -> Array {
        Array {
            storage,
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
            read_only: self.read_only,
        }
    }
}

/// Writes `bytes` into the fresh array `out` on `ctx`'s device.
fn write_host(ctx: &DeviceCtx, bytes: &[u8], out: &Array) -> Result<()> {
    let stream = ctx.stream();
    ctx.backend.copy_from_host(&stream, bytes, out.buffer(), 0)?;
    if ctx.asynchronous {
        out.buffer().usage().after(&ctx.backend, &stream, Access::Write);
    }
    Ok(())
}

/// A new array on `ctx`'s device holding `bytes` (little-endian elements of
/// `dtype`, row-major, exactly `shape`'s size).
pub(crate) fn upload(ctx: &Arc<DeviceCtx>, dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Array> {
    let out = alloc(ctx, dtype, shape)?;
    if !bytes.is_empty() {
        write_host(ctx, bytes, &out)?;
    }
    Ok(out)
}
