//! anydev errors as the exceptions Python users expect, and the one way
//! this crate calls into anydev: [`compute`], with the GIL released (or,
//! for a small op on the host, [`compute_elementwise`], with it held).

use crate::dtype::python_name;
use anydev::shape::{broadcast_shapes, checked_size};
use anydev::{Array, DType, Device, Error};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(
    anydev,
    UnsupportedError,
    PyTypeError,
    "A device does not support an op, a dtype or a feature such as event timing (its backend declares what it \
     supports). A TypeError, as the standard says for unsupported dtypes; catch it to fall back or skip on \
     capability."
);

/// `anydev.AxisError`, for an axis out of range: a `ValueError` like
/// anydev's other argument errors, and an `IndexError` as the standard
/// asks of `expand_dims` and `squeeze`; NumPy's `AxisError` is both too.
/// Two bases, so it is made by `type()` rather than `create_exception!`.
pub fn axis_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static AXIS_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    AXIS_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [py.get_type::<PyValueError>(), py.get_type::<PyIndexError>()])?;
            let namespace = PyDict::new(py);
            namespace.set_item("__module__", "anydev")?;
            namespace.set_item("__doc__", "An axis out of range for an array's rank.")?;
            let class = py.get_type::<PyType>().call1(("AxisError", bases, namespace))?;
            Ok(class.cast_into::<PyType>()?.unbind())
        })
        .map(|class| class.bind(py))
}

/// The Python exception for an anydev error; the message is the Rust one,
/// with dtypes spelled as in Python ([`python_dtype_names`]).
///
/// Dtypes an op does not take are `TypeError`, as the standard says for
/// unsupported input dtypes; shapes, devices and values are `ValueError`,
/// axes [`axis_error`]; what the backend or the machine failed at is
/// `RuntimeError`, except memory, which is `MemoryError`.
pub fn to_py(e: Error) -> PyErr {
    let message = python_dtype_names(&e.to_string());
    match e {
        Error::IndexOutOfBounds { .. } => PyIndexError::new_err(message),
        Error::InvalidAxis { .. } => Python::attach(|py| match axis_error(py) {
            Ok(class) => PyErr::from_type(class.clone(), message),
            Err(e) => e,
        }),
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

/// `message` with every word that is a dtype's Rust name (`f64`, `u8`,
/// `c64`) replaced by its Python name (`float64`, `uint8`, `complex64`):
/// a Python user never meets the short names. Words run over letters,
/// digits and `_`, so `libfoo_f32.so` or `f32x4` stay as they are.
pub fn python_dtype_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 16);
    let mut rest = message;
    while let Some(start) = rest.find(is_word) {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        let word = &rest[..end];
        match word.parse::<DType>() {
            Ok(dtype) => out.push_str(python_name(dtype)),
            Err(_) => out.push_str(word),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Runs `f` (anything that computes on a device or waits for one) with the
/// GIL released, so that other Python threads run meanwhile, and turns its
/// error, or a panic, into a Python exception instead of a crash.
pub fn compute<T: Send>(py: Python<'_>, f: impl FnOnce() -> anydev::Result<T> + Send) -> PyResult<T> {
    settle(py.detach(|| catch_unwind(AssertUnwindSafe(f))))
}

/// Elements up to which an elementwise op or reduction on `cpu:0` runs with
/// the GIL held. Releasing and retaking the GIL costs about as much as
/// such an op, and another thread gains nothing from so short a pause;
/// NumPy draws its line at 500 elements too.
const SMALL_HOST_OP: usize = 500;

/// As [`compute`], for an elementwise op or a reduction whose array
/// operands are `arrays` (`None` for a Python scalar): when they all live on
/// `cpu:0` and broadcast to at most [`SMALL_HOST_OP`] elements, `f` runs
/// with the GIL held.
pub fn compute_elementwise<T: Send, const N: usize>(
    py: Python<'_>,
    arrays: [Option<&Array>; N],
    f: impl FnOnce() -> anydev::Result<T> + Send,
) -> PyResult<T> {
    if small_on_host(arrays) {
        settle(catch_unwind(AssertUnwindSafe(f)))
    } else {
        compute(py, f)
    }
}

/// Whether `arrays` are on `cpu:0` and their broadcast shape has at most
/// [`SMALL_HOST_OP`] elements (shapes that do not broadcast count too: the
/// op fails at once).
fn small_on_host<const N: usize>(arrays: [Option<&Array>; N]) -> bool {
    let host = Device::cpu();
    if !arrays.iter().flatten().all(|a| a.device() == host) {
        return false;
    }
    // A Python scalar is 0-d: it broadcasts to anything.
    let shapes = arrays.map(|a| a.map_or(&[][..], Array::shape));
    let small = |shape: &[usize]| checked_size("broadcast", shape).is_ok_and(|n| n <= SMALL_HOST_OP);
    // Operands of one shape, beside scalars, need no broadcast (and no
    // allocation for its result).
    let first = shapes.iter().copied().find(|s| !s.is_empty()).unwrap_or(&[]);
    if shapes.iter().all(|s| s.is_empty() || *s == first) {
        return small(first);
    }
    // Shapes that do not broadcast, or overflow, fail in the op itself.
    broadcast_shapes("broadcast", &shapes).map_or(true, |shape| small(&shape))
}

/// The outcome of a guarded call as a Python result.
fn settle<T>(outcome: std::thread::Result<anydev::Result<T>>) -> PyResult<T> {
    match outcome {
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
