//! Host kernels for the anydev op set.
//!
//! Every op of [`anydev_ops::Op`] over raw pointers into host memory
//! ([`HostTensor`]). This crate knows no devices, arrays or runtime: the
//! CPU backend and host-memory plugins (the simulator) both call
//! [`execute`] after checking [`supports`].
//!
//! Numeric semantics follow the Array API standard and NumPy 2; the
//! choices where those leave room (integer division by zero gives 0,
//! integer `pow` with a negative exponent gives 0, out-of-range shifts)
//! are documented in [`arith`](crate::arith) and in the crate README.

mod arith;
mod binary;
mod cast;
mod create;
mod dispatch;
mod element;
mod error;
mod index;
mod iter;
mod map;
mod matmul;
pub mod philox;
mod random;
mod reduce;
mod scan;
mod sort;
mod tensor;
mod unary;

pub use dispatch::supports;
pub use error::KernelError;
pub use tensor::{contiguous_strides, HostTensor};

use anydev_ops::Op;

/// Runs one op.
///
/// Operands are checked cheaply first (dtypes, shapes, dims, axes); a
/// malformed call returns [`KernelError::Invalid`] and an unimplemented
/// (op, dtype) pair [`KernelError::Unsupported`], never a panic.
///
/// # Safety
/// Every operand's pointer, shape and strides describe memory valid for
/// reads (inputs) or writes (output) for the duration of the call, with
/// the data pointer aligned for its dtype; the output does not alias an
/// input unless the layouts are identical and the op is elementwise.
pub unsafe fn execute(op: &Op<'_, HostTensor<'_>>) -> Result<(), KernelError> {
    let code = op.code();
    let dtype = op.support_dtype();
    if !supports(code, dtype) {
        return Err(KernelError::Unsupported { op: code, dtype });
    }
    // SAFETY (every arm): the caller's contract is forwarded unchanged.
    unsafe {
        match op {
            Op::Unary { op, x, out } => unary::unary(*op, x, out),
            Op::Binary { op, lhs, rhs, out } => binary::binary(*op, lhs, rhs, out),
            Op::Cast { x, out } => cast::cast(x, out),
            Op::Where { cond, x, y, out } => cast::select(cond, x, y, out),
            Op::Copy { x, out } => cast::copy(x, out),
            Op::Fill { out, value } => cast::fill(out, *value),
            Op::Arange { out, start, step } => create::arange(out, *start, *step),
            Op::Reduce { op, x, axes, out } => reduce::reduce(*op, x, axes, out),
            Op::Scan { op, x, axis, out } => scan::scan(*op, x, *axis, out),
            Op::Random {
                out,
                dist,
                seed,
                counter,
            } => random::random(out, *dist, *seed, *counter),
            Op::Take { x, indices, axis, out } => index::take(x, indices, *axis, out),
            Op::Matmul { a, b, out } => matmul::matmul(a, b, out),
            Op::Sort {
                x,
                axis,
                descending,
                out,
            } => sort::sort::<false>(x, *axis, *descending, out),
            Op::Argsort {
                x,
                axis,
                descending,
                out,
            } => sort::sort::<true>(x, *axis, *descending, out),
            Op::SearchSorted {
                sorted,
                values,
                right,
                out,
            } => sort::searchsorted(sorted, values, *right, out),
            Op::Nonzero { x, out } => index::nonzero(x, out),
        }
    }
}
