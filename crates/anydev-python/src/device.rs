//! Devices as Python objects, and `device=` arguments.

use crate::errors::to_py;
use anydev::{CapValue, Device};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

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

    /// What the device's backend declares about it (`dtypes`, `f64`,
    /// `event_timing`, `software`, `"vendor.key"` entries, ...), as a dict
    /// of bools, ints, floats, strings and lists: the facts to skip or
    /// branch on, never the device's name.
    fn capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let caps = anydev::runtime().capabilities(self.0).map_err(to_py)?;
        let out = PyDict::new(py);
        for (key, value) in caps.iter() {
            match value {
                CapValue::Bool(v) => out.set_item(key, v)?,
                CapValue::I64(v) => out.set_item(key, v)?,
                CapValue::F64(v) => out.set_item(key, v)?,
                CapValue::Str(v) => out.set_item(key, v)?,
                CapValue::IntList(v) => out.set_item(key, v)?,
                CapValue::StrList(v) => out.set_item(key, v)?,
            }
        }
        Ok(out)
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
