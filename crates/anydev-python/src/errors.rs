//! anydev errors as the exceptions Python users expect, and the one way
//! this crate calls into anydev: [`compute`], with the GIL released.

use anydev::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(
    anydev,
    UnsupportedError,
    PyTypeError,
    "A device does not support an op, a dtype or a feature such as event timing (its backend declares what it \
     supports). A TypeError, as the standard says for unsupported dtypes; catch it to fall back or skip on \
     capability."
);

/// The Python exception for an anydev error; the message is the Rust one.
///
/// Dtypes an op does not take are `TypeError`, as the standard says for
/// unsupported input dtypes; shapes, axes, devices and values are
/// `ValueError`; what the backend or the machine failed at is
/// `RuntimeError`, except memory, which is `MemoryError`.
pub fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::IndexOutOfBounds { .. } => PyIndexError::new_err(message),
        Error::OutOfMemory { .. } => PyMemoryError::new_err(message),
        Error::Unsupported { .. }
        | Error::UnsupportedDType { .. }
        | Error::NoKernel { .. }
        | Error::FeatureUnsupported { .. } => UnsupportedError::new_err(message),
        Error::InvalidDType { .. } => PyTypeError::new_err(message),
        Error::Backend { .. } | Error::Plugin { .. } | Error::DeviceUnavailable { .. } => {
            PyRuntimeError::new_err(message)
        }
        _ => PyValueError::new_err(message),
    }
}

/// Runs `f` (anything that computes on a device or waits for one) with the
/// GIL released, so that other Python threads run meanwhile, and turns its
/// error, or a panic, into a Python exception instead of a crash.
pub fn compute<T: Send>(py: Python<'_>, f: impl FnOnce() -> anydev::Result<T> + Send) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(result) => result.map_err(to_py),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(PyRuntimeError::new_err(format!("anydev failed internally: {message}")))
        }
    }
}
