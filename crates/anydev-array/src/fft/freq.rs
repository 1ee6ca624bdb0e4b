//! The `fft` extension's helper functions: sample frequencies and the
//! shifts that put the zero frequency in the middle. They are real-valued
//! compositions of `arange`, `where` and `roll`, so every device runs
//! them.

use crate::array::Array;
use crate::context::creation_placement;
use crate::creation::Spec;
use crate::view::Axes;
use anydev_core::{DType, Device, Error, Result};

/// The sample frequencies of an `n`-point transform with sample spacing
/// `d`: `[0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (d * n)`, in
/// `spec`'s dtype (a float; the device's default float without one).
pub fn fftfreq(n: usize, d: f64, spec: impl Into<Spec>) -> Result<Array> {
    let (scale, device, dtype) = frequencies("fftfreq", n, d, spec.into())?;
    let i = crate::arange(0, n as i64, 1, (DType::I64, device))?;
    let positive = (n as i64 - 1) / 2 + 1;
    let signed = crate::where_(&i.greater_equal(positive)?, &i.subtract(n as i64)?, &i)?;
    signed.astype(dtype)?.multiply(scale)
}

/// The non-negative sample frequencies of an `n`-point real transform:
/// `[0, 1, ..., n / 2] / (d * n)`.
pub fn rfftfreq(n: usize, d: f64, spec: impl Into<Spec>) -> Result<Array> {
    let (scale, device, dtype) = frequencies("rfftfreq", n, d, spec.into())?;
    let i = crate::arange(0, (n / 2 + 1) as i64, 1, (DType::I64, device))?;
    i.astype(dtype)?.multiply(scale)
}

/// `x` rolled by half its length along `axes` (every axis for
/// [`crate::ALL`]), moving the zero frequency to the middle.
pub fn fftshift(x: &Array, axes: impl Into<Axes>) -> Result<Array> {
    shift(x, axes.into(), |n| (n / 2) as isize)
}

/// The inverse of [`fftshift`] (they differ for odd lengths).
pub fn ifftshift(x: &Array, axes: impl Into<Axes>) -> Result<Array> {
    shift(x, axes.into(), |n| -((n / 2) as isize))
}

fn shift(x: &Array, axes: Axes, by: impl Fn(usize) -> isize) -> Result<Array> {
    // Normalised (in range, sorted), so each shift pairs with its own
    // axis whatever order the caller gave them in.
    let axes = crate::shape::normalize_axes("fftshift", axes.as_option(), x.ndim())?;
    let shifts: Vec<isize> = axes.iter().map(|&a| by(x.shape()[a])).collect();
    let axes: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
    crate::roll(x, &shifts, axes)
}

/// Checks `n`, `d` and the dtype, and resolves the device as creation
/// does; returns the factor `1 / (d * n)` that NumPy multiplies by.
fn frequencies(op: &str, n: usize, d: f64, spec: Spec) -> Result<(f64, Device, DType)> {
    if n == 0 || n > i64::MAX as usize || d == 0.0 || !d.is_finite() {
        return Err(Error::invalid_argument(
            op,
            format!("needs 0 < n < 2^63 and a finite, non-zero spacing d (got n = {n}, d = {d})"),
        ));
    }
    let (ctx, _memory) = creation_placement(op, &spec)?;
    let dtype = spec.dtype.unwrap_or(ctx.default_float());
    if !dtype.is_float() {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype,
            reason: "frequencies are floating-point".into(),
        });
    }
    Ok((1.0 / (n as f64 * d), ctx.device, dtype))
}
