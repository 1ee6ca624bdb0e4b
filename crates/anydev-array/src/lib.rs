//! Arrays on any device.
//!
//! An [`Array`] is a dtype, a shape and strides over a shared buffer on one
//! device. Every op validates here (placement, promotion, broadcasting,
//! axes, dtype support) and then calls the device's backend through the
//! primitive op interface of `anydev_ops`. The placement rules of the
//! design (section 3) are enforced in one module, `dispatch`:
//!
//! 1. creation functions use the explicit device, else the thread's scope
//!    ([`anydev_core::with_device`]), else the default device;
//! 2. every other op puts its output on its inputs' device, whatever the scope;
//! 3. array inputs on different devices are `Error::DeviceMismatch`;
//! 4. Rust scalars have no device and take the array's;
//! 5. [`Array::to_device`] is the only way data moves (a no-op to the
//!    array's own device);
//! 6. `*_like`, `astype`, `tril`/`triu` inherit the input's device.
//!
//! Numeric semantics follow the Array API standard, then NumPy 2; every
//! place that differs or chooses (result dtypes of integer inputs to float
//! functions, comparisons, `linspace`, `clip`, sizes, slices) is listed in
//! `docs/semantics.md`.
//!
//! ```no_run
//! use anydev_array::{self as ad, DType};
//! # fn main() -> anydev_core::Result<()> {
//! let x = ad::Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2], ())?;
//! let y = x.add(1.0)?.matmul(&x)?; // scalars take x's dtype and device
//! let total = y.sum(ad::ALL, false)?.to_scalar::<f32>()?;
//! let z = ad::zeros(&[3], DType::I64)?;
//! # let _ = (total, z); Ok(()) }
//! ```

mod array;
mod choice;
mod compare;
mod context;
mod creation;
mod defaults;
mod dispatch;
mod element;
mod elementwise;
pub mod extension;
mod factorize;
pub mod fft;
mod foreign;
mod format;
mod indexing;
mod linalg;
mod linalg_ext;
mod manipulation;
pub mod promote;
mod random;
mod reduce;
mod search;
mod sets;
pub mod shape;
mod slice;
mod transfer;
mod update;
mod view;

pub use anydev_core::{DType, Device, Error, ForeignDevice, ForeignHost, Result, Runtime, Scalar};
pub use array::Array;
pub use context::{current_stream, new_stream, runtime, with_runtime, with_stream, RuntimeGuard, StreamGuard};
pub use creation::{
    arange, empty, empty_like, eye, full, full_like, linspace, meshgrid, ones, ones_like, tril, triu, zeros,
    zeros_like, Indexing, Spec,
};
pub use defaults::{default_dtypes, DefaultDTypes};
pub use dispatch::{Arg, IntoArg};
pub use element::Element;
pub use elementwise::*;
pub use factorize::{
    cholesky, det, eig, eigh, eigvals, eigvalsh, inv, matrix_rank, pinv, qr, slogdet, solve, svd, svdvals, Rtol,
};
pub use foreign::follow_platform_stream;
pub use format::{array_repr, array_to_string, python_tuple, EDGE_ITEMS, LINE_WIDTH, SUMMARY_THRESHOLD};
pub use linalg::{matmul, tensordot, vecdot, TensordotAxes};
pub use linalg_ext::{cross, diagonal, matrix_norm, matrix_power, outer, trace, vector_norm, NormOrd};
pub use manipulation::{broadcast_arrays, concat, diff, repeat, roll, stack, tile, unstack, Repeats};
/// The element types of `c64` and `c128`.
pub use num_complex::{Complex32, Complex64};
pub use promote::{result_type, Weak, DEFAULT_FLOAT, DEFAULT_INT};
pub use random::{manual_seed, manual_seed_device, random_normal, random_uniform, rng_state, set_rng_state};
pub use reduce::{
    all, any, argmax, argmin, count_nonzero, cumulative_prod, cumulative_sum, logsumexp, max, mean, min, prod, std,
    sum, var,
};
pub use search::{argsort, nonzero, searchsorted, sort, take, take_along_axis, Order, Side};
pub use sets::{isin, unique_all, unique_counts, unique_inverse, unique_values, Unique};
pub use slice::SliceArg;
pub use view::{Axes, ALL};

/// Free-function forms of the views, for code written against the
/// standard's function names.
pub fn reshape(x: &Array, shape: &[isize]) -> Result<Array> {
    x.reshape(shape)
}

pub fn permute_dims(x: &Array, axes: &[isize]) -> Result<Array> {
    x.permute_dims(axes)
}

pub fn matrix_transpose(x: &Array) -> Result<Array> {
    x.matrix_transpose()
}

pub fn expand_dims(x: &Array, axes: impl Into<Axes>) -> Result<Array> {
    x.expand_dims(axes)
}

pub fn squeeze(x: &Array, axes: impl Into<Axes>) -> Result<Array> {
    x.squeeze(axes)
}

pub fn broadcast_to(x: &Array, shape: &[usize]) -> Result<Array> {
    x.broadcast_to(shape)
}

pub fn flip(x: &Array, axes: impl Into<Axes>) -> Result<Array> {
    x.flip(axes)
}

pub fn moveaxis(x: &Array, source: &[isize], destination: &[isize]) -> Result<Array> {
    x.moveaxis(source, destination)
}

pub fn astype(x: &Array, dtype: DType) -> Result<Array> {
    x.astype(dtype)
}

/// `from_slice` as a free function.
pub fn from_slice<T: Element>(data: &[T], shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
    Array::from_slice(data, shape, spec)
}

/// `from_vec` as a free function.
pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize], spec: impl Into<Spec>) -> Result<Array> {
    Array::from_vec(data, shape, spec)
}
