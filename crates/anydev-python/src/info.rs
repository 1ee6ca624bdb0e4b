//! What the runtime knows about devices, for `__array_namespace_info__`
//! (assembled in Python) and for the per-device default dtypes that
//! creation from Python values needs (design section 14).

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
    Complex,
}

/// The dtypes `device` holds, in code order.
fn device_dtypes(device: Device) -> anydev::Result<Vec<DType>> {
    let caps = anydev::runtime().capabilities(device)?;
    Ok(DType::ALL.into_iter().filter(|&d| caps.supports_dtype(d)).collect())
}

/// The default dtype of `kind` on `device` (the core's per-device defaults).
pub fn default_dtype(device: Device, kind: Kind) -> anydev::Result<DType> {
    let defaults = anydev::default_dtypes(Some(device))?;
    Ok(match kind {
        Kind::Bool => DType::Bool,
        Kind::Int => defaults.integral,
        Kind::Float => defaults.real_floating,
        Kind::Complex => defaults.complex_floating,
    })
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
fn _default_dtypes(py: Python<'_>, device: PyDevice) -> PyResult<(PyDType, PyDType, PyDType, PyDType)> {
    let d = compute(py, || anydev::default_dtypes(Some(device.0)))?;
    Ok((
        PyDType(d.real_floating),
        PyDType(d.complex_floating),
        PyDType(d.integral),
        PyDType(d.indexing),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_devices, m)?)?;
    m.add_function(wrap_pyfunction!(_default_device, m)?)?;
    m.add_function(wrap_pyfunction!(_device_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(_default_dtypes, m)?)?;
    m.add("_max_ndim", anydev::shape::MAX_NDIM)?;
    Ok(())
}
