//! Moving data: host uploads and downloads, contiguous copies on a device,
//! and `to_device`, the only way data moves between devices (placement
//! rule 5).

use crate::array::Array;
use crate::context::DeviceCtx;
use crate::creation::Spec;
use crate::dispatch::{alloc, execute};
use crate::element::{self, Element};
use crate::shape;
use anydev_core::ops::Op;
use anydev_core::{DType, Device, Error, Result, Scalar};
use std::sync::Arc;

impl Array {
    /// An array of `shape` holding `data` (row-major), on the device of
    /// `spec` (explicit > scope > default) and of its dtype if it names one
    /// (converted on the device), else of `T`'s dtype.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
        let spec = spec.into();
        let ctx = crate::context::creation_ctx(spec.device)?;
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
    /// integers beyond 2^53).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        Ok(self.to_scalars()?.into_iter().map(Scalar::to_f64).collect())
    }

    /// The array's elements as little-endian bytes on the host, row-major.
    pub fn host_bytes(&self) -> Result<Vec<u8>> {
        let c = self.as_contiguous()?;
        let mut out = vec![0u8; c.size() * c.dtype.size()];
        if !out.is_empty() {
            let ctx = c.ctx();
            ctx.backend
                .copy_to_host(&ctx.stream, c.buffer(), c.offset * c.dtype.size(), &mut out)?;
        }
        Ok(out)
    }

    /// The array itself when its elements are contiguous, else a contiguous
    /// copy on the same device.
    pub fn as_contiguous(&self) -> Result<Array> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        let out = alloc(self.ctx(), self.dtype, &self.shape)?;
        execute(
            self.ctx(),
            &Op::Copy {
                x: self.tensor_ref(),
                out: out.tensor_ref(),
            },
        )?;
        Ok(out)
    }

    /// The array on `device`. To its own device this is a no-op returning a
    /// view of the same buffer; between devices of one backend it is a
    /// backend copy; between backends it is staged through host memory.
    pub fn to_device(&self, device: Device) -> Result<Array> {
        if device == self.device() {
            return Ok(self.clone());
        }
        let target = self.ctx().sibling(device)?;
        let src = self.as_contiguous()?;
        let bytes = src.size() * src.dtype.size();
        let out = alloc(&target, src.dtype, &src.shape)?;
        if bytes == 0 {
            return Ok(out);
        }
        let source = src.ctx();
        if Arc::ptr_eq(&source.backend, &target.backend) {
            source.backend.copy_between(
                &source.stream,
                src.buffer(),
                src.offset * src.dtype.size(),
                out.buffer(),
                0,
                bytes,
            )?;
            // Later work on the target's stream must see the copy.
            let done = source.backend.record_event(&source.stream)?;
            target.backend.wait_event(&target.stream, &done)?;
        } else {
            let host = src.host_bytes()?;
            target.backend.copy_from_host(&target.stream, &host, out.buffer(), 0)?;
        }
        Ok(out)
    }
}

/// A new array on `ctx`'s device holding `bytes` (little-endian elements of
/// `dtype`, row-major, exactly `shape`'s size).
pub(crate) fn upload(ctx: &Arc<DeviceCtx>, dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Array> {
    let out = alloc(ctx, dtype, shape)?;
    if !bytes.is_empty() {
        ctx.backend.copy_from_host(&ctx.stream, bytes, out.buffer(), 0)?;
    }
    Ok(out)
}
