//! Shape manipulation: views where the layout allows, copies otherwise.

use super::axes_arg;
use crate::array::{unshared, PyArray};
use crate::errors::{compute, to_py};
use crate::operand::array_arg;
use anydev::{Array, Axes, Repeats};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A sequence of arrays (`concat`, `stack`).
fn arrays_arg(arrays: &Bound<'_, PyAny>) -> PyResult<Vec<Array>> {
    arrays.try_iter()?.map(|a| array_arg(&a?)).collect()
}

fn new_arrays(arrays: Vec<Array>) -> Vec<PyArray> {
    arrays.into_iter().map(PyArray::from).collect()
}

/// A new shape: a view where the layout allows (`copy=False` fails where
/// it does not), a copy with `copy=True`.
#[pyfunction]
#[pyo3(signature = (x, /, shape, *, copy = None))]
fn reshape(py: Python<'_>, x: &Bound<'_, PyAny>, shape: Vec<isize>, copy: Option<bool>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let out = compute(py, || unshared(anydev::reshape(&x, &shape)?, &x, copy == Some(true)))?;
    if copy == Some(false) && !out.shares_buffer(&x) {
        return Err(PyValueError::new_err("reshape(copy=False): this layout needs a copy"));
    }
    Ok(out.into())
}

#[pyfunction]
#[pyo3(signature = (x, /, axes))]
fn permute_dims(py: Python<'_>, x: &Bound<'_, PyAny>, axes: Vec<isize>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::permute_dims(&x, &axes)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /))]
fn matrix_transpose(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::matrix_transpose(&x)).map(PyArray::from)
}

/// One axis or a tuple of them (the standard's 2025.12 revision), each a
/// position in the result.
#[pyfunction]
#[pyo3(signature = (x, /, axis = None))]
fn expand_dims(py: Python<'_>, x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let axes = match axis {
        None => vec![0],
        Some(a) => {
            axes_arg(a).map_err(|_| PyTypeError::new_err("expand_dims: axis must be an int or a tuple of ints"))?
        }
    };
    compute(py, || anydev::expand_dims(&x, axes)).map(PyArray::from)
}

/// The shape `shapes` broadcast to, without arrays.
#[pyfunction]
#[pyo3(signature = (*shapes))]
fn broadcast_shapes<'py>(py: Python<'py>, shapes: Vec<Vec<usize>>) -> PyResult<Bound<'py, PyTuple>> {
    let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    let out = anydev::shape::broadcast_shapes("broadcast_shapes", &shapes).map_err(to_py)?;
    PyTuple::new(py, out)
}

#[pyfunction]
#[pyo3(signature = (x, /, axis))]
fn squeeze(py: Python<'_>, x: &Bound<'_, PyAny>, axis: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (x, axes) = (array_arg(x)?, axes_arg(axis)?);
    compute(py, || anydev::squeeze(&x, axes)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None))]
fn flip(py: Python<'_>, x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let axes = axis.map(axes_arg).transpose()?.map_or(Axes::All, Axes::from);
    compute(py, || anydev::flip(&x, axes)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, shift, *, axis = None))]
fn roll(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    shift: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (x, shifts) = (array_arg(x)?, axes_arg(shift)?);
    let axes = axis.map(axes_arg).transpose()?.map_or(Axes::All, Axes::from);
    compute(py, || anydev::roll(&x, &shifts, axes)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (arrays, /, *, axis = Some(0)), text_signature = "(arrays, /, *, axis=0)")]
fn concat(py: Python<'_>, arrays: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    let arrays = arrays_arg(arrays)?;
    let refs: Vec<&Array> = arrays.iter().collect();
    compute(py, || anydev::concat(&refs, axis)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (arrays, /, *, axis = 0))]
fn stack(py: Python<'_>, arrays: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let arrays = arrays_arg(arrays)?;
    let refs: Vec<&Array> = arrays.iter().collect();
    compute(py, || anydev::stack(&refs, axis)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, shape))]
fn broadcast_to(py: Python<'_>, x: &Bound<'_, PyAny>, shape: Vec<usize>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::broadcast_to(&x, &shape)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (*arrays))]
fn broadcast_arrays(py: Python<'_>, arrays: &Bound<'_, PyTuple>) -> PyResult<Vec<PyArray>> {
    let arrays = arrays_arg(arrays.as_any())?;
    let refs: Vec<&Array> = arrays.iter().collect();
    compute(py, || anydev::broadcast_arrays(&refs)).map(new_arrays)
}

#[pyfunction]
#[pyo3(signature = (x, repetitions, /))]
fn tile(py: Python<'_>, x: &Bound<'_, PyAny>, repetitions: Vec<usize>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::tile(&x, &repetitions)).map(PyArray::from)
}

/// `repeats` is an int or an integer array on `x`'s device.
#[pyfunction]
#[pyo3(signature = (x, repeats, /, *, axis = None))]
fn repeat(py: Python<'_>, x: &Bound<'_, PyAny>, repeats: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    match repeats.extract::<usize>() {
        Ok(n) => compute(py, || anydev::repeat(&x, n, axis)),
        Err(_) => {
            let counts = array_arg(repeats)?;
            compute(py, || anydev::repeat(&x, Repeats::Array(&counts), axis))
        }
    }
    .map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, source, destination, /))]
fn moveaxis(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    destination: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let (x, source, destination) = (array_arg(x)?, axes_arg(source)?, axes_arg(destination)?);
    compute(py, || anydev::moveaxis(&x, &source, &destination)).map(PyArray::from)
}

/// The `n`-th forward difference along `axis`, after `prepend` and
/// `append` (arrays on `x`'s device) are joined to `x` along it.
#[pyfunction]
#[pyo3(
    signature = (x, /, *, axis = -1, n = 1, prepend = None, append = None),
    text_signature = "(x, /, *, axis=-1, n=1, prepend=None, append=None)"
)]
fn diff(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: isize,
    n: usize,
    prepend: Option<&Bound<'_, PyAny>>,
    append: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let (prepend, append) = (prepend.map(array_arg).transpose()?, append.map(array_arg).transpose()?);
    compute(py, || {
        let parts: Vec<&Array> = prepend.iter().chain([&x]).chain(append.iter()).collect();
        let joined = if parts.len() > 1 {
            anydev::concat(&parts, Some(axis))?
        } else {
            x.clone()
        };
        anydev::diff(&joined, axis, n)
    })
    .map(PyArray::from)
}

/// The views of `x` along `axis`, as a tuple.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = 0))]
fn unstack<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, axis: isize) -> PyResult<Bound<'py, PyTuple>> {
    let x = array_arg(x)?;
    PyTuple::new(py, new_arrays(compute(py, || anydev::unstack(&x, axis))?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(reshape, m)?,
        wrap_pyfunction!(permute_dims, m)?,
        wrap_pyfunction!(matrix_transpose, m)?,
        wrap_pyfunction!(expand_dims, m)?,
        wrap_pyfunction!(squeeze, m)?,
        wrap_pyfunction!(flip, m)?,
        wrap_pyfunction!(roll, m)?,
        wrap_pyfunction!(concat, m)?,
        wrap_pyfunction!(stack, m)?,
        wrap_pyfunction!(broadcast_to, m)?,
        wrap_pyfunction!(broadcast_arrays, m)?,
        wrap_pyfunction!(broadcast_shapes, m)?,
        wrap_pyfunction!(tile, m)?,
        wrap_pyfunction!(repeat, m)?,
        wrap_pyfunction!(moveaxis, m)?,
        wrap_pyfunction!(diff, m)?,
        wrap_pyfunction!(unstack, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
