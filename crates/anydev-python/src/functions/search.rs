//! Sorting, searching and set functions.

use crate::array::PyArray;
use crate::errors::compute;
use crate::operand::{array_arg, required_operand, Operand};
use anydev::{Order, Side, Spec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// anydev's sorts are stable, so `stable=False` (which only permits an
/// unstable sort) is honoured too.
fn order(descending: bool) -> Order {
    if descending {
        Order::Descending
    } else {
        Order::Ascending
    }
}

#[pyfunction]
#[pyo3(
    signature = (x, /, *, axis = -1, descending = false, stable = true),
    text_signature = "(x, /, *, axis=-1, descending=False, stable=True)"
)]
fn sort(py: Python<'_>, x: &Bound<'_, PyAny>, axis: isize, descending: bool, stable: bool) -> PyResult<PyArray> {
    let _ = stable;
    let x = array_arg(x)?;
    compute(py, || anydev::sort(&x, axis, order(descending))).map(PyArray::from)
}

#[pyfunction]
#[pyo3(
    signature = (x, /, *, axis = -1, descending = false, stable = true),
    text_signature = "(x, /, *, axis=-1, descending=False, stable=True)"
)]
fn argsort(py: Python<'_>, x: &Bound<'_, PyAny>, axis: isize, descending: bool, stable: bool) -> PyResult<PyArray> {
    let _ = stable;
    let x = array_arg(x)?;
    compute(py, || anydev::argsort(&x, axis, order(descending))).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /))]
fn nonzero<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let x = array_arg(x)?;
    PyTuple::new(py, compute(py, || anydev::nonzero(&x))?.into_iter().map(PyArray::from))
}

/// Insertion points of `x2` in the sorted `x1` (or in `x1` taken in the
/// order of `sorter`).
#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, side = "left", sorter = None))]
fn searchsorted(
    py: Python<'_>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    side: &str,
    sorter: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let side = match side {
        "left" => Side::Left,
        "right" => Side::Right,
        other => {
            return Err(PyValueError::new_err(format!(
                "side must be 'left' or 'right', not {other:?}"
            )))
        }
    };
    let x1 = array_arg(x1)?;
    let x2 = required_operand(x2)?;
    let sorter = sorter.map(array_arg).transpose()?;
    compute(py, || {
        // A Python scalar (the standard's 2025.12 revision) takes x1's
        // dtype and device, as in the elementwise functions.
        let x2 = match x2 {
            Operand::Array(a) => a.clone(),
            Operand::Scalar(w) => anydev::full(&[], w, Spec::new(Some(x1.dtype()), Some(x1.device())))?,
        };
        let sorted = match &sorter {
            Some(s) => anydev::take(&x1, s, None)?,
            None => x1,
        };
        anydev::searchsorted(&sorted, &x2, side)
    })
    .map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, indices, /, *, axis = None))]
fn take(py: Python<'_>, x: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    let (x, indices) = (array_arg(x)?, array_arg(indices)?);
    compute(py, || anydev::take(&x, &indices, axis)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, indices, /, *, axis = -1), text_signature = "(x, indices, /, *, axis=-1)")]
fn take_along_axis(py: Python<'_>, x: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let (x, indices) = (array_arg(x)?, array_arg(indices)?);
    compute(py, || anydev::take_along_axis(&x, &indices, axis)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /))]
fn unique_values(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::unique_values(&x)).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sort, m)?)?;
    m.add_function(wrap_pyfunction!(argsort, m)?)?;
    m.add_function(wrap_pyfunction!(nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(searchsorted, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(unique_values, m)?)?;
    m.add_function(wrap_pyfunction!(take_along_axis, m)?)?;
    Ok(())
}
