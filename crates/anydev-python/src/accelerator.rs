//! The accelerator API (`anydev.accelerator`, native submodule
//! `anydev._anydev._accelerator`): the Rust `anydev::accelerator` calls,
//! waits with the GIL released. The Python half resolves `device=None` to
//! the current device (the `contextvars` scope, else the default).

use crate::device::PyDevice;
use crate::errors::{compute, to_py};
use anydev::accelerator::{self as acc, Event};
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pyfunction]
fn device_count(kind: &str) -> usize {
    acc::device_count(kind)
}

#[pyfunction]
fn set_default_device(device: Option<PyDevice>) -> PyResult<()> {
    acc::set_default_device(device.map(|d| d.0)).map_err(to_py)
}

#[pyfunction]
fn synchronize(py: Python<'_>, device: PyDevice) -> PyResult<()> {
    compute(py, || acc::synchronize(device.0))
}

/// The device's memory accounting as a dict; sizes a device does not know
/// are None.
#[pyfunction]
fn memory_stats<'py>(py: Python<'py>, device: PyDevice) -> PyResult<Bound<'py, PyDict>> {
    let stats = compute(py, || acc::memory_stats(device.0))?;
    let out = PyDict::new(py);
    out.set_item("in_use", stats.in_use)?;
    out.set_item("peak", stats.peak)?;
    out.set_item("allocations", stats.allocations)?;
    out.set_item("reserved", stats.reserved)?;
    out.set_item("limit", stats.limit)?;
    out.set_item("free", stats.free)?;
    out.set_item("total", stats.total)?;
    Ok(out)
}

#[pyfunction]
fn reset_peak(py: Python<'_>, device: PyDevice) -> PyResult<()> {
    compute(py, || acc::reset_peak(device.0))
}

#[pyfunction]
fn empty_cache(py: Python<'_>, device: PyDevice) -> PyResult<()> {
    compute(py, || acc::empty_cache(device.0))
}

/// A point in a device's work, recorded on its current stream when made.
#[pyclass(name = "Event", module = "anydev.accelerator", frozen)]
struct PyEvent(Event);

#[pymethods]
impl PyEvent {
    #[new]
    fn new(py: Python<'_>, device: PyDevice) -> PyResult<Self> {
        compute(py, || Event::record(device.0)).map(PyEvent)
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice(self.0.device())
    }

    /// Whether the work before the event has completed, without waiting.
    fn query(&self, py: Python<'_>) -> PyResult<bool> {
        compute(py, || self.0.query())
    }

    /// Waits until the work before the event has completed.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        compute(py, || self.0.synchronize())
    }

    /// Milliseconds of device time from this event to `end` (waits for
    /// both), as `torch.cuda.Event.elapsed_time`.
    fn elapsed_time(&self, py: Python<'_>, end: &PyEvent) -> PyResult<f64> {
        compute(py, || self.0.elapsed(&end.0)).map(|d| d.as_secs_f64() * 1e3)
    }

    fn __repr__(&self) -> String {
        format!("<anydev.accelerator.Event on {}>", self.0.device())
    }
}

/// Shuts down the plugins the process used (`anydev::shutdown`); the
/// package registers it with `atexit`, so a plugin hears that the
/// interpreter exits.
#[pyfunction]
fn _shutdown(py: Python<'_>) -> PyResult<()> {
    compute(py, anydev::shutdown)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_shutdown, m)?)?;
    let module = PyModule::new(m.py(), "_accelerator")?;
    module.add_class::<PyEvent>()?;
    for f in [
        wrap_pyfunction!(device_count, &module)?,
        wrap_pyfunction!(set_default_device, &module)?,
        wrap_pyfunction!(synchronize, &module)?,
        wrap_pyfunction!(memory_stats, &module)?,
        wrap_pyfunction!(reset_peak, &module)?,
        wrap_pyfunction!(empty_cache, &module)?,
    ] {
        module.add_function(f)?;
    }
    m.add_submodule(&module)
}
