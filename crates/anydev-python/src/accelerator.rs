//! The accelerator API (`anydev.accelerator`, native submodule
//! `anydev._anydev._accelerator`): the Rust `anydev::accelerator` calls,
//! waits with the GIL released. The Python half resolves `device=None` to
//! the current device (the `contextvars` scope, else the default).

use crate::device::PyDevice;
use crate::errors::{compute, to_py};
use anydev::accelerator::{self as acc, Event};
use anydev::{Stream, StreamGuard};
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

/// One of a device's streams: work enqueued on one stream runs in order;
/// work on two streams may overlap unless an event orders it.
#[pyclass(name = "Stream", module = "anydev.accelerator", frozen, subclass)]
pub struct PyStream(pub Stream);

#[pymethods]
impl PyStream {
    /// A new stream on `device`.
    #[new]
    fn new(py: Python<'_>, device: PyDevice) -> PyResult<Self> {
        compute(py, || acc::new_stream(device.0)).map(PyStream)
    }

    /// The stream this thread's work on `device` goes to now.
    #[staticmethod]
    fn current(py: Python<'_>, device: PyDevice) -> PyResult<Self> {
        compute(py, || acc::current_stream(device.0)).map(PyStream)
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice(self.0.device())
    }

    /// Waits until the work enqueued on the stream has completed.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        compute(py, || acc::synchronize_stream(&self.0))
    }

    /// Makes later work on the stream wait for `event`, without waiting here.
    fn wait_event(&self, py: Python<'_>, event: &PyEvent) -> PyResult<()> {
        compute(py, || event.0.wait(&self.0))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyStream>().is_ok_and(|o| o.get().0.same_as(&self.0))
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.device().hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        format!("<anydev.accelerator.Stream on {}>", self.0.device())
    }
}

/// Makes a stream current for its device on this thread while a `with`
/// block runs (`anydev.accelerator.stream(s)`); blocks nest.
#[pyclass(name = "_StreamScope", module = "anydev.accelerator", unsendable)]
struct StreamScope {
    stream: Stream,
    guards: Vec<StreamGuard>,
}

#[pymethods]
impl StreamScope {
    #[new]
    fn new(stream: &PyStream) -> Self {
        StreamScope {
            stream: stream.0.clone(),
            guards: Vec::new(),
        }
    }

    fn __enter__(&mut self) -> PyStream {
        self.guards.push(StreamGuard::new(&self.stream));
        PyStream(self.stream.clone())
    }

    fn __exit__(
        &mut self,
        _ty: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.guards.pop();
    }
}

/// A point in a device's work, recorded on a stream when made (the
/// device's current stream unless one is given).
#[pyclass(name = "Event", module = "anydev.accelerator", frozen)]
struct PyEvent(Event);

#[pymethods]
impl PyEvent {
    #[new]
    #[pyo3(signature = (device, stream = None))]
    fn new(py: Python<'_>, device: PyDevice, stream: Option<&PyStream>) -> PyResult<Self> {
        match stream {
            Some(s) if s.0.device() != device.0 => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "the stream is on {} but the event is for {}",
                s.0.device(),
                device.0
            ))),
            Some(s) => compute(py, || Event::record_on(&s.0)).map(PyEvent),
            None => compute(py, || Event::record(device.0)).map(PyEvent),
        }
    }

    /// Makes later work on `stream` wait for this event.
    fn wait(&self, py: Python<'_>, stream: &PyStream) -> PyResult<()> {
        compute(py, || self.0.wait(&stream.0))
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
    module.add_class::<PyStream>()?;
    module.add_class::<StreamScope>()?;
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
