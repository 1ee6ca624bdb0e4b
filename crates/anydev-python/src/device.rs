//! Devices as Python objects, and `device=` arguments.

use crate::errors::to_py;
use anydev::Device;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A device (`anydev.Device('sim:1')`): hashable, equal to the same device,
/// and constructible from its `kind:index` string.
#[pyclass(module = "anydev", name = "Device", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDevice(pub Device);

#[pymethods]
impl PyDevice {
    #[new]
    fn new(name: &str) -> PyResult<Self> {
        name.parse().map(PyDevice).map_err(to_py)
    }

    /// The kind (`"cpu"`, `"sim"`, ...).
    #[getter]
    fn kind(&self) -> String {
        self.0.kind().to_string()
    }

    #[getter]
    fn index(&self) -> usize {
        self.0.index()
    }

    fn __repr__(&self) -> String {
        format!("anydev.Device('{}')", self.0)
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }
}

impl<'py> FromPyObject<'_, 'py> for PyDevice {
    type Error = PyErr;

    /// A `device=` argument: a `Device` or its string form (`"sim:1"`).
    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(d) = obj.cast::<PyDevice>() {
            return Ok(*d.get());
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return PyDevice::new(&s.to_cow()?);
        }
        Err(PyTypeError::new_err(format!(
            "expected an anydev.Device or a device name such as 'cpu:0', got {}",
            obj.repr()?
        )))
    }
}

/// The device of an optional `device=` argument.
pub fn device_of(arg: Option<PyDevice>) -> Option<Device> {
    arg.map(|d| d.0)
}
