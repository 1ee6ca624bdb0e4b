//! The strided host operand and the cheap checks every kernel runs on it.

use crate::error::{invalid, KernelError};
use anydev_ops::{DType, TensorDType};

/// A strided operand in host memory. `data` points at the element with all
/// indices 0 (strides, in elements, may be negative or zero); inputs are
/// only read.
#[derive(Clone, Copy, Debug)]
pub struct HostTensor<'a> {
    pub data: *mut u8,
    pub dtype: DType,
    pub shape: &'a [usize],
    pub strides: &'a [isize],
}

impl TensorDType for HostTensor<'_> {
    fn dtype(&self) -> DType {
        self.dtype
    }
}

impl<'a> HostTensor<'a> {
    pub fn new(data: *mut u8, dtype: DType, shape: &'a [usize], strides: &'a [isize]) -> Self {
        HostTensor {
            data,
            dtype,
            shape,
            strides,
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Checks that shape and strides agree, that the element count and
    /// every byte offset the layout reaches fit the address space (so the
    /// kernels' index arithmetic cannot overflow), and returns the element
    /// count.
    pub(crate) fn validate(&self, what: &str) -> Result<usize, KernelError> {
        if self.shape.len() != self.strides.len() {
            return invalid(format!(
                "{what}: shape has {} dims but strides have {}",
                self.shape.len(),
                self.strides.len()
            ));
        }
        let mut numel: usize = 1;
        for &n in self.shape {
            numel = match numel.checked_mul(n) {
                Some(v) => v,
                None => return invalid(format!("{what}: element count overflows")),
            };
        }
        if numel == 0 {
            return Ok(0);
        }
        if self.data.is_null() {
            return invalid(format!("{what}: null data pointer"));
        }
        if !(self.data as usize).is_multiple_of(self.dtype.size()) {
            return invalid(format!("{what}: data pointer is not aligned to {}", self.dtype));
        }
        if self.shape.len() > crate::iter::MAX_DIMS {
            return invalid(format!("{what}: more than {} dims", crate::iter::MAX_DIMS));
        }
        let size = self.dtype.size() as isize;
        let mut extent: isize = 0;
        for (&n, &s) in self.shape.iter().zip(self.strides) {
            // A stride counts even on a dim of length 1, so that every
            // stride times the element size is representable.
            let reach = isize::try_from(n - 1)
                .ok()
                .and_then(|n1| n1.max(1).checked_mul(s.checked_abs()?))
                .and_then(|r| r.checked_mul(size))
                .and_then(|r| r.checked_add(extent));
            extent = match reach {
                Some(v) => v,
                None => return invalid(format!("{what}: strides reach beyond the address space")),
            };
        }
        Ok(numel)
    }

    /// Checks `validate` plus the expected dtype.
    pub(crate) fn expect(&self, what: &str, dtype: DType) -> Result<usize, KernelError> {
        if self.dtype != dtype {
            return invalid(format!("{what} has dtype {} but {dtype} is required", self.dtype));
        }
        self.validate(what)
    }
}

/// Row-major (C-order) strides, in elements, for `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(n.max(1) as isize);
    }
    strides
}

/// Fails unless `a` and `b` have the same shape.
pub(crate) fn same_shape(what: &str, a: &[usize], b: &[usize]) -> Result<(), KernelError> {
    if a != b {
        return invalid(format!("{what}: shapes {a:?} and {b:?} differ"));
    }
    Ok(())
}

/// Raw pointers that may cross threads. The kernels hand disjoint parts
/// of one output to different rayon tasks; the pointers themselves are
/// plain addresses.
#[derive(Clone, Copy)]
pub(crate) struct SendPtrs<const K: usize>(pub [*mut u8; K]);

impl<const K: usize> SendPtrs<K> {
    /// The addresses. Closures call this rather than reading the field,
    /// so they capture the `Send` wrapper and not the bare pointers.
    pub fn get(&self) -> [*mut u8; K] {
        self.0
    }
}

// SAFETY: the wrapped values are addresses only; every kernel that shares
// them between threads writes disjoint elements and only reads inputs.
unsafe impl<const K: usize> Send for SendPtrs<K> {}
// SAFETY: as above.
unsafe impl<const K: usize> Sync for SendPtrs<K> {}
