//! An extension call as host code sees it: operands as typed bytes in host
//! memory and attributes by name. The libraries whose ops compute on the
//! host (quantization, linalg, fft) take their calls in this form, so that
//! the `cpu` kernels and a host-computing device plugin (the simulator)
//! hand them the same thing without linking the runtime.

use crate::{AttrValue, DType};

/// An input: contiguous row-major elements of `dtype`.
pub struct HostOperand<'a> {
    pub dtype: DType,
    pub shape: &'a [usize],
    pub bytes: &'a [u8],
}

/// An output: contiguous row-major elements of `dtype`, all written.
pub struct HostOperandMut<'a> {
    pub dtype: DType,
    pub shape: &'a [usize],
    pub bytes: &'a mut [u8],
}

/// A call's attributes by name.
pub type AttrLookup<'a> = dyn Fn(&str) -> Option<&'a AttrValue> + 'a;
