//! The standard's `linalg` extension, as far as the core has it, in the
//! native submodule `anydev._anydev._linalg` (`anydev.linalg` adds the main
//! namespace's `matmul`, `tensordot`, `vecdot` and `matrix_transpose`).

use crate::array::PyArray;
use crate::dtype::PyDType;
use crate::errors::compute;
use crate::operand::array_arg;
use anydev::{Axes, NormOrd};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (x, /, *, offset = 0))]
fn diagonal(py: Python<'_>, x: &Bound<'_, PyAny>, offset: isize) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::diagonal(&x, offset)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, offset = 0, dtype = None))]
fn trace(py: Python<'_>, x: &Bound<'_, PyAny>, offset: isize, dtype: Option<PyDType>) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || super::reduce::in_dtype(x, dtype, |x| anydev::trace(x, offset))).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x1, x2, /))]
fn outer(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    compute(py, || anydev::outer(&x1, &x2)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, axis = -1), text_signature = "(x1, x2, /, *, axis=-1)")]
fn cross(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    compute(py, || anydev::cross(&x1, &x2, axis)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, keepdims = false, ord = 2.0))]
fn vector_norm(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    ord: f64,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let axes = axis.map(super::axes_arg).transpose()?.map_or(Axes::All, Axes::from);
    compute(py, || anydev::vector_norm(&x, axes, keepdims, ord)).map(PyArray::from)
}

/// `ord` is a number (1, -1, inf, -inf; 2 and -2 need singular values the
/// core does not have yet), `"fro"` or `"nuc"`.
#[pyfunction]
#[pyo3(signature = (x, /, *, keepdims = false, ord = None))]
fn matrix_norm(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    keepdims: bool,
    ord: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let ord = match ord {
        None => NormOrd::Fro,
        Some(o) => match o.extract::<String>() {
            Ok(name) if name == "fro" => NormOrd::Fro,
            Ok(name) if name == "nuc" => NormOrd::Nuc,
            Ok(name) => {
                return Err(PyValueError::new_err(format!(
                    "ord must be a number, 'fro' or 'nuc', not {name:?}"
                )))
            }
            Err(_) => NormOrd::P(o.extract()?),
        },
    };
    compute(py, || anydev::matrix_norm(&x, keepdims, ord)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, n, /))]
fn matrix_power(py: Python<'_>, x: &Bound<'_, PyAny>, n: i64) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::matrix_power(&x, n)).map(PyArray::from)
}

/// Declares the factorization-based functions that take one array and
/// return one array or a tuple of arrays.
macro_rules! one_input {
    ($($name:ident => |$x:ident| $body:expr;)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, /))]
        fn $name(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
            let $x = array_arg(x)?;
            let out = compute(py, || $body)?;
            Ok(out.into_pyobject(py)?.into_any().unbind())
        }
    )*};
}

fn pair((a, b): (anydev::Array, anydev::Array)) -> (PyArray, PyArray) {
    (a.into(), b.into())
}

one_input! {
    inv => |x| anydev::inv(&x).map(PyArray::from);
    det => |x| anydev::det(&x).map(PyArray::from);
    eigvals => |x| anydev::eigvals(&x).map(PyArray::from);
    eigvalsh => |x| anydev::eigvalsh(&x).map(PyArray::from);
    svdvals => |x| anydev::svdvals(&x).map(PyArray::from);
    slogdet => |x| anydev::slogdet(&x).map(pair);
    eig => |x| anydev::eig(&x).map(pair);
    eigh => |x| anydev::eigh(&x).map(pair);
}

#[pyfunction]
#[pyo3(signature = (x, /, *, upper = false))]
fn cholesky(py: Python<'_>, x: &Bound<'_, PyAny>, upper: bool) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || anydev::cholesky(&x, upper)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x1, x2, /))]
fn solve(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (x1, x2) = (array_arg(x1)?, array_arg(x2)?);
    compute(py, || anydev::solve(&x1, &x2)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, full_matrices = true))]
fn svd(py: Python<'_>, x: &Bound<'_, PyAny>, full_matrices: bool) -> PyResult<(PyArray, PyArray, PyArray)> {
    let x = array_arg(x)?;
    let (u, s, vh) = compute(py, || anydev::svd(&x, full_matrices))?;
    Ok((u.into(), s.into(), vh.into()))
}

#[pyfunction]
#[pyo3(signature = (x, /, *, mode = "reduced"))]
fn qr(py: Python<'_>, x: &Bound<'_, PyAny>, mode: &str) -> PyResult<(PyArray, PyArray)> {
    let complete = match mode {
        "reduced" => false,
        "complete" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "qr's mode is \"reduced\" or \"complete\", not {other:?}"
            )))
        }
    };
    let x = array_arg(x)?;
    compute(py, || anydev::qr(&x, complete)).map(pair)
}

/// `pinv`'s and `matrix_rank`'s `rtol`: absent, a Python number, or an
/// array (one cutoff per matrix).
enum RtolArg {
    Default,
    Value(f64),
    Array(anydev::Array),
}

impl RtolArg {
    fn new(rtol: Option<&Bound<'_, PyAny>>) -> PyResult<RtolArg> {
        let Some(rtol) = rtol else {
            return Ok(RtolArg::Default);
        };
        match rtol.cast::<PyArray>() {
            Ok(a) => Ok(RtolArg::Array(a.get().inner.clone())),
            Err(_) => Ok(RtolArg::Value(rtol.extract()?)),
        }
    }

    fn get(&self) -> anydev::Rtol<'_> {
        match self {
            RtolArg::Default => anydev::Rtol::Default,
            RtolArg::Value(v) => anydev::Rtol::Value(*v),
            RtolArg::Array(a) => anydev::Rtol::Array(a),
        }
    }
}

#[pyfunction]
#[pyo3(signature = (x, /, *, rtol = None))]
fn pinv(py: Python<'_>, x: &Bound<'_, PyAny>, rtol: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let (x, rtol) = (array_arg(x)?, RtolArg::new(rtol)?);
    compute(py, || anydev::pinv(&x, rtol.get())).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, rtol = None))]
fn matrix_rank(py: Python<'_>, x: &Bound<'_, PyAny>, rtol: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let (x, rtol) = (array_arg(x)?, RtolArg::new(rtol)?);
    compute(py, || anydev::matrix_rank(&x, rtol.get())).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let linalg = PyModule::new(m.py(), "_linalg")?;
    for f in [
        wrap_pyfunction!(cholesky, &linalg)?,
        wrap_pyfunction!(inv, &linalg)?,
        wrap_pyfunction!(solve, &linalg)?,
        wrap_pyfunction!(det, &linalg)?,
        wrap_pyfunction!(slogdet, &linalg)?,
        wrap_pyfunction!(eig, &linalg)?,
        wrap_pyfunction!(eigvals, &linalg)?,
        wrap_pyfunction!(eigh, &linalg)?,
        wrap_pyfunction!(eigvalsh, &linalg)?,
        wrap_pyfunction!(svd, &linalg)?,
        wrap_pyfunction!(svdvals, &linalg)?,
        wrap_pyfunction!(qr, &linalg)?,
        wrap_pyfunction!(pinv, &linalg)?,
        wrap_pyfunction!(matrix_rank, &linalg)?,
        wrap_pyfunction!(diagonal, &linalg)?,
        wrap_pyfunction!(trace, &linalg)?,
        wrap_pyfunction!(outer, &linalg)?,
        wrap_pyfunction!(cross, &linalg)?,
        wrap_pyfunction!(vector_norm, &linalg)?,
        wrap_pyfunction!(matrix_norm, &linalg)?,
        wrap_pyfunction!(matrix_power, &linalg)?,
    ] {
        linalg.add_function(f)?;
    }
    m.add_submodule(&linalg)
}
