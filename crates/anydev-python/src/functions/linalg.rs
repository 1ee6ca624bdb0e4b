//! The linear algebra in the main namespace: `matmul`, `tensordot`, `vecdot`.

use crate::array::PyArray;
use crate::errors::compute;
use crate::operand::array_arg;
use anydev::TensordotAxes;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (x1, x2, /))]
fn matmul(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    compute(py, || anydev::matmul(&x1, &x2)).map(PyArray::from)
}

/// `axes` is a count or a pair of axis sequences.
#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, axes = None))]
fn tensordot(
    py: Python<'_>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    axes: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    let axes = match axes {
        None => TensordotAxes::Count(2),
        Some(a) => match a.extract::<usize>() {
            Ok(n) => TensordotAxes::Count(n),
            Err(_) => {
                let (a1, a2): (Vec<isize>, Vec<isize>) = a.extract()?;
                TensordotAxes::Pairs(a1, a2)
            }
        },
    };
    compute(py, || anydev::tensordot(&x1, &x2, axes)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, axis = -1), text_signature = "(x1, x2, /, *, axis=-1)")]
fn vecdot(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    compute(py, || anydev::vecdot(&x1, &x2, axis)).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(tensordot, m)?)?;
    m.add_function(wrap_pyfunction!(vecdot, m)?)?;
    Ok(())
}
