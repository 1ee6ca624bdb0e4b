//! Arrays over host memory that another library owns (a NumPy array, a
//! DLPack producer's tensor, a memory-mapped file), used in place: the
//! zero-copy half of interchange. The memory stays the owner's; anydev
//! keeps the owner alive for as long as an array or view uses it.

use crate::array::{Array, Storage};
use crate::context::{runtime, DeviceCtx};
use crate::shape;
use anydev_core::{Buffer, DType, Device, Error, ForeignDevice, ForeignHost, MemoryKind, Result};
use std::sync::Arc;

const OP: &str = "from_foreign_host";

impl Array {
    /// An array on `cpu:0` whose elements are `memory`'s bytes, without a
    /// copy: element `idx` lies at element `offset + Σ idx[d]·strides[d]`
    /// of the memory (strides in elements, possibly zero or negative).
    /// Writes through the array are writes to the owner's memory, and the
    /// owner's writes show in the array, as between two NumPy views.
    /// [`Array::share_to`] puts it on another device that reaches host
    /// memory, still in place.
    ///
    /// Errors: a stride list whose length is not the shape's, an element
    /// outside the memory, or an address not aligned for `dtype` (the host
    /// kernels read elements in place) are `InvalidArgument`; a runtime
    /// without `cpu:0` is `DeviceUnavailable`.
    pub fn from_foreign_host(
        memory: ForeignHost,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Array> {
        let layout = Layout::checked(
            dtype,
            shape,
            strides,
            offset,
            memory.ptr().as_ptr() as u64,
            memory.len(),
        )?;
        let ctx = DeviceCtx::get(runtime(), Device::cpu())?;
        let len = memory.len();
        let buffer = Buffer::new(
            ctx.device,
            len,
            MemoryKind::System,
            Arc::clone(&ctx.backend),
            Box::new(memory),
        );
        Ok(layout.array(buffer, ctx))
    }

    /// An array on `device` whose elements are the bytes of `memory`,
    /// device memory another library of the device's platform owns (a
    /// PyTorch or CuPy tensor on a CUDA GPU), without a copy; the layout is
    /// as in [`Array::from_foreign_host`]. The backend checks the address
    /// first ([`anydev_core::Backend::adopt_device_memory`]) and keeps the
    /// owner until its own work on the memory is done. Order the owner's
    /// pending writes before anydev's work with [`follow_platform_stream`].
    ///
    /// Errors: the layout errors of [`Array::from_foreign_host`]; memory the
    /// backend cannot use (another device's, not the platform's, a range
    /// beyond its allocation) is `InvalidArgument`; a device whose backend
    /// has no device addresses (cpu, wgpu, the plugins) is
    /// `FeatureUnsupported`.
    pub fn from_foreign_device(
        device: Device,
        memory: ForeignDevice,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Array> {
        let layout = Layout::checked(dtype, shape, strides, offset, memory.address(), memory.len())?;
        let ctx = DeviceCtx::get(runtime(), device)?;
        ctx.check_dtype(dtype)?;
        let len = memory.len();
        let (allocation, kind) = ctx.backend.adopt_device_memory(device.index(), memory)?;
        let buffer = Buffer::new(ctx.device, len, kind, Arc::clone(&ctx.backend), allocation);
        Ok(layout.array(buffer, ctx))
    }
}

/// Orders `device`'s work after the work queued so far on its platform's
/// default stream (CUDA's legacy stream), and says whether it has one: a
/// DLPack consumer asks the producer to order its pending writes before
/// that stream (`stream=1`), then calls this. `false` for devices without
/// such a stream.
pub fn follow_platform_stream(device: Device) -> Result<bool> {
    runtime().backend(device)?.follow_platform_stream(device.index())
}

/// Where a foreign array's elements lie in the memory lent to it.
struct Layout<'a> {
    dtype: DType,
    shape: &'a [usize],
    strides: &'a [isize],
    offset: usize,
}

impl<'a> Layout<'a> {
    /// The layout, once every element is checked to lie inside the `len`
    /// bytes from address `base`, aligned for the dtype (kernels read
    /// elements in place).
    fn checked(
        dtype: DType,
        shape: &'a [usize],
        strides: &'a [isize],
        offset: usize,
        base: u64,
        len: usize,
    ) -> Result<Layout<'a>> {
        if strides.len() != shape.len() {
            return Err(Error::invalid_argument(
                OP,
                format!("{} strides for a shape of {} dimensions", strides.len(), shape.len()),
            ));
        }
        let size = shape::checked_size(OP, shape)?;
        let item = dtype.size();
        let first = base.wrapping_add((offset as u64).wrapping_mul(item as u64));
        if !first.is_multiple_of(alignment(dtype) as u64) {
            return Err(Error::invalid_argument(
                OP,
                format!("element 0 at address {first:#x} is not aligned for {dtype}"),
            ));
        }
        if size > 0 {
            let (low, high) =
                extent(shape, strides, offset).ok_or_else(|| Error::invalid_argument(OP, "the strides overflow"))?;
            let end = high.checked_add(1).and_then(|n| n.checked_mul(item as i128));
            if low < 0 || end.is_none_or(|end| end > len as i128) {
                return Err(Error::invalid_argument(
                    OP,
                    format!(
                        "shape {shape:?} with strides {strides:?} from element {offset} reaches elements \
                         {low}..={high} of {dtype}, outside the {len} bytes lent"
                    ),
                ));
            }
        }
        Ok(Layout {
            dtype,
            shape,
            strides,
            offset,
        })
    }

    fn array(&self, buffer: Buffer, ctx: Arc<DeviceCtx>) -> Array {
        Array {
            storage: Arc::new(Storage { buffer, ctx }),
            dtype: self.dtype,
            shape: self.shape.into(),
            strides: self.strides.into(),
            offset: self.offset,
            read_only: false,
        }
    }
}

/// The lowest and highest element index a strided layout touches (in
/// `i128`, so no real layout overflows); the shape has no zero extent.
fn extent(shape: &[usize], strides: &[isize], offset: usize) -> Option<(i128, i128)> {
    shape
        .iter()
        .zip(strides)
        .try_fold((offset as i128, offset as i128), |(low, high), (&n, &stride)| {
            let reach = (n as i128 - 1).checked_mul(stride as i128)?;
            Some(if reach < 0 {
                (low + reach, high)
            } else {
                (low, high + reach)
            })
        })
}

/// The alignment the host kernels need for an element of `dtype`: its
/// size, or its component's for complex dtypes.
fn alignment(dtype: DType) -> usize {
    dtype.real_dtype().size()
}
