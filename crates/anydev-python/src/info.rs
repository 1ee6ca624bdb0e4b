//! What the runtime knows about devices, for `__array_namespace_info__`
//! (assembled in Python) and for per-device default dtypes (design
//! section 14: a device without f64 defaults to float32).

use crate::device::PyDevice;
use crate::dtype::PyDType;
use crate::errors::{compute, to_py};
use anydev::{DType, Device};
use pyo3::prelude::*;

/// The kinds of dtype that have a default, in promotion order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Bool,
    Int,
    Float,
}

/// The dtypes `device` holds, in code order.
pub fn device_dtypes(device: Device) -> anydev::Result<Vec<DType>> {
    let caps = anydev::runtime().capabilities(device)?;
    Ok(DType::ALL.into_iter().filter(|&d| caps.supports_dtype(d)).collect())
}

/// The default dtype of `kind` on `device`: `float64`/`int64`, or the
/// widest the device holds.
pub fn default_dtype(device: Device, kind: Kind) -> anydev::Result<DType> {
    let candidates: &[DType] = match kind {
        Kind::Bool => return Ok(DType::Bool),
        Kind::Int => &[DType::I64, DType::I32],
        Kind::Float => &[DType::F64, DType::F32],
    };
    let held = device_dtypes(device)?;
    Ok(candidates
        .iter()
        .copied()
        .find(|d| held.contains(d))
        .unwrap_or(candidates[0]))
}

/// The device a creation call places its result on: the explicit one
/// (Python hands in the `contextvars` scope as explicit), else the default.
pub fn creation_device(explicit: Option<Device>) -> anydev::Result<Device> {
    anydev::runtime().creation_device(explicit)
}

/// Every available device, plugins included, in the runtime's order.
#[pyfunction]
fn _devices() -> Vec<PyDevice> {
    anydev::runtime().devices().into_iter().map(PyDevice).collect()
}

#[pyfunction]
fn _default_device() -> PyResult<PyDevice> {
    anydev::runtime().default_device().map(PyDevice).map_err(to_py)
}

/// The dtypes a device holds.
#[pyfunction]
fn _device_dtypes(py: Python<'_>, device: PyDevice) -> PyResult<Vec<PyDType>> {
    Ok(compute(py, || device_dtypes(device.0))?
        .into_iter()
        .map(PyDType)
        .collect())
}

/// The device's default (real floating, integral, indexing) dtypes.
#[pyfunction]
fn _default_dtypes(py: Python<'_>, device: PyDevice) -> PyResult<(PyDType, PyDType, PyDType)> {
    let (f, i) = compute(py, || {
        Ok((
            default_dtype(device.0, Kind::Float)?,
            default_dtype(device.0, Kind::Int)?,
        ))
    })?;
    Ok((PyDType(f), PyDType(i), PyDType(i)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_devices, m)?)?;
    m.add_function(wrap_pyfunction!(_default_device, m)?)?;
    m.add_function(wrap_pyfunction!(_device_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(_default_dtypes, m)?)?;
    Ok(())
}
