//! `x[key]` and `x[key] = value`: integers, slices (any step), `...` and
//! `None` select views; a `bool` array over the leading axes selects by
//! mask; integer arrays (one per leading axis) gather. Writes go into the
//! array's memory, as the core's `assign_*` do, and every view sees them.
//! Integer arrays mixed with slices, and writes through integer arrays,
//! need core ops that do not exist yet: `NotImplementedError` says so.

use crate::array::PyArray;
use crate::errors::compute;
use crate::operand::{array_arg, required_operand};
use anydev::{Array, DType, SliceArg};
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PyNone, PySlice, PyTuple};

/// What a key selects.
enum Key {
    /// Views: integers, slices, `...`, `None`.
    Basic(Vec<SliceArg>),
    /// A `bool` array over the leading axes.
    Mask(Array),
    /// Integer arrays, one per leading axis.
    Gather(Vec<Array>),
}

impl Key {
    fn parse(key: &Bound<'_, PyAny>, ndim: usize) -> PyResult<Key> {
        if let Ok(a) = key.cast::<PyArray>() {
            let a = a.get().inner.clone();
            return Ok(if a.dtype() == DType::Bool {
                Key::Mask(a)
            } else {
                Key::Gather(vec![a])
            });
        }
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        if !items.is_empty() && items.iter().all(|i| i.is_instance_of::<PyArray>()) {
            return Ok(Key::Gather(items.iter().map(array_arg).collect::<PyResult<_>>()?));
        }
        let spec = items.iter().map(slice_arg).collect::<PyResult<Vec<_>>>()?;
        let indexed = spec
            .iter()
            .filter(|s| !matches!(s, SliceArg::NewAxis | SliceArg::Ellipsis))
            .count();
        if indexed > ndim {
            // NumPy's exception for this, so code written for it still works.
            return Err(PyIndexError::new_err(format!(
                "too many indices: {indexed} for an array of {ndim} dimensions"
            )));
        }
        Ok(Key::Basic(spec))
    }
}

/// One item of a basic key.
fn slice_arg(item: &Bound<'_, PyAny>) -> PyResult<SliceArg> {
    if item.is_instance_of::<PyBool>() {
        return Err(not_yet("Python bool indices"));
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
    if item.is_instance_of::<PyArray>() {
        return Err(not_yet("arrays mixed with integers, slices, ... or None in one index"));
    }
    if item.is_instance_of::<PyList>() {
        return Err(PyTypeError::new_err(
            "a list is not an index; index with an anydev integer or bool array",
        ));
    }
    Err(PyTypeError::new_err(format!(
        "an index must be an int, a slice, ..., None, an anydev array or a tuple of those, not {}",
        item.get_type().name()?
    )))
}

fn not_yet(what: &str) -> PyErr {
    PyNotImplementedError::new_err(format!(
        "{what} are not supported yet: anydev's core has no op for them (see docs/python.md)"
    ))
}

#[pymethods]
impl PyArray {
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let a = &self.inner;
        let out = match Key::parse(key, a.ndim())? {
            Key::Basic(spec) => compute(py, || a.slice(&spec)),
            Key::Mask(mask) => compute(py, || a.index_mask(&mask)),
            Key::Gather(indices) => {
                let refs: Vec<&Array> = indices.iter().collect();
                compute(py, || a.index_arrays(&refs))
            }
        };
        out.map(PyArray::from)
    }

    /// Writes `value` (a Python scalar, or an array on the same device that
    /// broadcasts) into the selected elements, in place; the value may not
    /// change the array's dtype.
    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = &self.inner;
        let value = required_operand(value)?;
        match Key::parse(key, a.ndim())? {
            Key::Basic(spec) => compute(py, || a.assign_slice(&spec, value.arg())),
            Key::Mask(mask) => compute(py, || a.assign_mask(&mask, value.arg())),
            Key::Gather(_) => Err(not_yet("writes through integer-array indices")),
        }
    }
}
