//! Host kernels for the anydev op set.
//!
//! Every op of [`anydev_ops::Op`] over raw pointers into host memory
//! ([`HostTensor`]). This crate knows no devices, arrays or runtime: the
//! CPU backend and host-memory plugins (the simulator) both call
//! [`execute`] after checking [`supports`].
//!
//! Numeric semantics follow the Array API standard and NumPy 2. Where
//! those leave room, the kernels choose (see `arith.rs`):
//! - integer arithmetic wraps; `floor_divide` and `remainder` by zero give
//!   0; `remainder` takes the divisor's sign, `floor_divide` floors;
//! - integer `pow` uses repeated squaring with wrap-around; a negative
//!   exponent gives `1/a^|b|` truncated toward zero (1 and -1 keep a
//!   nonzero result; NumPy raises, a kernel cannot);
//! - shifts by a negative amount or by at least the bit width give 0, or
//!   -1 for the right shift of a negative value;
//! - `round` is half-to-even, `sign(NaN)` is NaN, `maximum`/`minimum`/
//!   `min`/`max` propagate NaN, `argmin`/`argmax` return the first
//!   extreme (or the first NaN);
//! - casts: float to int truncates toward zero and saturates, NaN gives
//!   0; int to int wraps; anything to bool is `!= 0` (NaN is true);
//!   f64 to f16/bf16 rounds once (to-odd through f32);
//! - f16 and bf16 compute in f32 and round once per result; their sums,
//!   products and scans accumulate in f32;
//! - `take` accepts indices in `[-len, len)` and refuses others.
//! - c64 and c128 (`complex/`): functions compute in f64 with C99
//!   Annex G special values and round each component once; division is
//!   Smith's (NumPy's); complex to bool is `!= 0`, to another real dtype
//!   the real part; sums, products and scans accumulate in c128; nothing
//!   that needs an order (sort, min/max, comparisons) and no arange or
//!   random.
//!
//! Large calls run on the current rayon pool; results never depend on its
//! size (fixed chunking for long reductions, counter-based random).

mod arith;
mod assist;
mod binary;
pub mod blocks;
mod cast;
mod complex;
mod create;
mod dispatch;
mod element;
mod error;
mod hyperbolic;
mod index;
mod iter;
mod map;
mod matmul;
mod pairwise;
pub mod philox;
mod random;
mod reduce;
mod scan;
mod sort;
mod tensor;
mod unary;
mod vmath;

pub use dispatch::{dtypes, supports};
pub use error::KernelError;
pub use tensor::{contiguous_strides, HostTensor};

use anydev_ops::{Op, OpCode};

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
    // A cast names only its source's dtype above; no operand may have a
    // dtype the kernels do not hold.
    if let Some(t) = op
        .inputs()
        .chain([op.output()])
        .find(|t| !supports(OpCode::Copy, t.dtype))
    {
        return Err(KernelError::Unsupported {
            op: code,
            dtype: t.dtype,
        });
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
