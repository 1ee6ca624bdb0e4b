//! Set functions. The `unique_*` results are plain tuples here; the Python
//! half names their fields as the standard's named tuples.

use crate::array::PyArray;
use crate::errors::compute;
use crate::operand::array_arg;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, invert = false))]
fn isin(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>, invert: bool) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    compute(py, || anydev::isin(&x1, &x2, invert)).map(PyArray::from)
}

/// (values, indices, inverse_indices, counts).
#[pyfunction]
#[pyo3(signature = (x, /))]
fn _unique_all(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<(PyArray, PyArray, PyArray, PyArray)> {
    let x = array_arg(x)?;
    let u = compute(py, || anydev::unique_all(&x))?;
    Ok((
        u.values.into(),
        u.indices.into(),
        u.inverse_indices.into(),
        u.counts.into(),
    ))
}

/// (values, counts).
#[pyfunction]
#[pyo3(signature = (x, /))]
fn _unique_counts(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<(PyArray, PyArray)> {
    let x = array_arg(x)?;
    let (values, counts) = compute(py, || anydev::unique_counts(&x))?;
    Ok((values.into(), counts.into()))
}

/// (values, inverse_indices).
#[pyfunction]
#[pyo3(signature = (x, /))]
fn _unique_inverse(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<(PyArray, PyArray)> {
    let x = array_arg(x)?;
    let (values, inverse) = compute(py, || anydev::unique_inverse(&x))?;
    Ok((values.into(), inverse.into()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(isin, m)?)?;
    m.add_function(wrap_pyfunction!(_unique_all, m)?)?;
    m.add_function(wrap_pyfunction!(_unique_counts, m)?)?;
    m.add_function(wrap_pyfunction!(_unique_inverse, m)?)?;
    Ok(())
}
