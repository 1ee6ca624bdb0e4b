//! The [`Array`] type: a strided view of a shared device buffer.

use crate::context::DeviceCtx;
use crate::shape::{self, Dims, Strides};
use anydev_core::memory::BufferOwner;
use anydev_core::{Buffer, DType, Device, TensorRef};
use std::sync::Arc;

/// A device buffer together with the context of the device that owns it,
/// so that ops on arrays never look devices up.
pub(crate) struct Storage {
    pub buffer: Buffer,
    pub ctx: Arc<DeviceCtx>,
}

/// Zero-copy mappings of an array's memory keep its storage alive.
impl BufferOwner for Storage {
    fn buffer(&self) -> &Buffer {
        &self.buffer
    }
}

/// An n-dimensional array on one device.
///
/// An array is a dtype, a shape and strides (in elements, possibly zero or
/// negative) at an element offset into a reference-counted buffer. Every
/// op returns a new array, and views (reshape when the layout allows,
/// `permute_dims`, slicing, `expand_dims`, `squeeze`, `broadcast_to`,
/// `flip`) share the buffer; only the write methods (`assign`,
/// `assign_slice`, `assign_mask`) change elements in place, and every view
/// of the buffer sees the change. Cloning is cheap and shares the buffer.
#[derive(Clone)]
pub struct Array {
    pub(crate) storage: Arc<Storage>,
    pub(crate) dtype: DType,
    pub(crate) shape: Dims,
    pub(crate) strides: Strides,
    pub(crate) offset: usize,
    /// Made from a broadcast view, whose repeated elements are one memory
    /// location: the write methods refuse it and every view made from it,
    /// even one (a single element, say) that no longer repeats anything.
    pub(crate) read_only: bool,
}

impl Array {
    /// The device the array lives on.
    pub fn device(&self) -> Device {
        self.storage.ctx.device
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements, per axis.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Element offset of the view's first element (all indices 0) in its buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (1 for a 0-d array).
    pub fn size(&self) -> usize {
        shape::size(&self.shape)
    }

    /// The buffer the array views.
    pub fn buffer(&self) -> &Buffer {
        &self.storage.buffer
    }

    /// Whether two arrays view the same buffer (a view, or `to_device` to
    /// the array's own device).
    pub fn shares_buffer(&self, other: &Array) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// Whether the elements lie in row-major order without gaps.
    pub fn is_contiguous(&self) -> bool {
        shape::is_contiguous(&self.shape, &self.strides)
    }

    pub(crate) fn ctx(&self) -> &Arc<DeviceCtx> {
        &self.storage.ctx
    }

    /// The operand description backends receive.
    pub(crate) fn tensor_ref(&self) -> TensorRef<'_> {
        TensorRef {
            buffer: &self.storage.buffer,
            offset: self.offset * self.dtype.size(),
            dtype: self.dtype,
            shape: &self.shape,
            strides: &self.strides,
        }
    }

    /// Whether the write methods refuse the array: it is a broadcast view,
    /// or a view of one, where several elements share a memory location.
    /// Exports (DLPack) carry this so that consumers refuse writes too.
    pub fn is_read_only(&self) -> bool {
        self.read_only || self.repeats_elements()
    }

    /// Whether two of the array's elements are one memory location (a
    /// zero stride along an axis longer than 1).
    pub(crate) fn repeats_elements(&self) -> bool {
        self.shape.iter().zip(&self.strides).any(|(&n, &s)| n > 1 && s == 0)
    }

    /// Another view of the same buffer. The caller has checked the layout.
    /// An empty view points at the buffer's start, so that no offset computed
    /// for elements that do not exist can reach past the buffer.
    pub(crate) fn view(&self, shape: Dims, strides: Strides, offset: usize) -> Array {
        let offset = if shape.contains(&0) { 0 } else { offset };
        Array {
            storage: Arc::clone(&self.storage),
            dtype: self.dtype,
            shape,
            strides,
            offset,
            read_only: self.read_only,
        }
    }
}
