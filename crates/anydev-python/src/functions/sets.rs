//! Set functions. The `unique_*` results are plain tuples here; the Python
//! half names their fields as the standard's named tuples.

use crate::array::PyArray;
use crate::errors::compute;
use crate::operand::{array_arg, required_operand, Operand};
use anydev::Axes;
use pyo3::prelude::*;

/// `isin(x1, x2)`: either side may be a Python scalar (the standard's
/// `Union[array, int]`). Against a scalar, membership is equality, with
/// `==`'s promotion (NEP 50; an integer outside the array's dtype is
/// simply absent); a scalar `x1` gives a 0-d result.
#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, invert = false))]
fn isin(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>, invert: bool) -> PyResult<PyArray> {
    let (x1, x2) = (required_operand(x1)?, required_operand(x2)?);
    compute(py, || {
        let found = match (x1, x2) {
            (Operand::Array(a), Operand::Array(b)) => return anydev::isin(a, b, invert),
            (Operand::Array(a), Operand::Scalar(w)) => anydev::equal(a, w)?,
            (Operand::Scalar(w), Operand::Array(b)) => anydev::any(&anydev::equal(b, w)?, Axes::All, false)?,
            (Operand::Scalar(_), Operand::Scalar(_)) => {
                return Err(anydev::Error::invalid_argument(
                    "isin",
                    "needs at least one array; both x1 and x2 are Python scalars",
                ))
            }
        };
        if invert {
            anydev::logical_not(&found)
        } else {
            Ok(found)
        }
    })
    .map(PyArray::from)
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
