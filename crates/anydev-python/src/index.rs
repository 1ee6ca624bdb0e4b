//! `x[key]` with what anydev's views support: integers, slices (any
//! step), `...` and `None`. Integer-array and boolean-mask indexing and
//! `x[key] = v` need gathers and in-place writes the core does not have
//! yet; they fail with `NotImplementedError` saying so.

use crate::array::PyArray;
use crate::errors::compute;
use anydev::SliceArg;
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PyNone, PySlice, PyTuple};

/// One item of an index key.
fn slice_arg(item: &Bound<'_, PyAny>) -> PyResult<SliceArg> {
    if item.is_instance_of::<PyBool>() {
        return Err(not_yet("boolean indices"));
    }
    if item.is_instance_of::<PyInt>() {
        return item
            .extract::<isize>()
            .map(SliceArg::Index)
            .map_err(|_| PyIndexError::new_err(format!("index {item} is out of range")));
    }
    if let Ok(slice) = item.cast::<PySlice>() {
        let bound = |name: &str| -> PyResult<Option<isize>> { slice.getattr(name)?.extract() };
        return Ok(SliceArg::Slice {
            start: bound("start")?,
            stop: bound("stop")?,
            step: bound("step")?.unwrap_or(1),
        });
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(SliceArg::Ellipsis);
    }
    if item.is_instance_of::<PyNone>() {
        return Ok(SliceArg::NewAxis);
    }
    if item.is_instance_of::<PyArray>() || item.is_instance_of::<PyList>() {
        return Err(not_yet("integer-array and boolean-mask indices"));
    }
    Err(PyTypeError::new_err(format!(
        "an index must be an int, a slice, ..., None or a tuple of those, not {}",
        item.get_type().name()?
    )))
}

fn not_yet(what: &str) -> PyErr {
    PyNotImplementedError::new_err(format!(
        "{what} are not supported yet: anydev's core has no gather by index (see docs/python.md)"
    ))
}

#[pymethods]
impl PyArray {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let spec = match key.cast::<PyTuple>() {
            Ok(items) => items.iter().map(|i| slice_arg(&i)).collect::<PyResult<Vec<_>>>()?,
            Err(_) => vec![slice_arg(key)?],
        };
        let a = &self.inner;
        let indexed = spec
            .iter()
            .filter(|s| !matches!(s, SliceArg::NewAxis | SliceArg::Ellipsis))
            .count();
        if indexed > a.ndim() {
            // NumPy's exception for this, so code written for it still works.
            return Err(PyIndexError::new_err(format!(
                "too many indices: {indexed} for an array of {} dimensions",
                a.ndim()
            )));
        }
        compute(py, || a.slice(&spec)).map(PyArray::from)
    }

    /// Arrays are immutable until the core has in-place writes.
    fn __setitem__(&self, _key: &Bound<'_, PyAny>, _value: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(PyNotImplementedError::new_err(
            "x[key] = value is not supported yet: anydev arrays are immutable until the core has in-place writes \
             (see docs/python.md); build a new array with where() or concat()",
        ))
    }
}
