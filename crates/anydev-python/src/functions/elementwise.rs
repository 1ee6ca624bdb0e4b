//! Elementwise functions, `where`, `clip` and `astype`: one table entry per
//! function of the core's, with Python scalars allowed where the standard
//! allows them.

use crate::array::{unshared, PyArray};
use crate::device::PyDevice;
use crate::dtype::PyDType;
use crate::errors::{compute, compute_elementwise};
use crate::operand::{array_arg, required_operand, Operand};
use pyo3::prelude::*;

macro_rules! elementwise {
    (unary: [$($u:ident)*] binary: [$($b:ident)*]) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (x, /))]
            fn $u(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
                let x = array_arg(x)?;
                compute_elementwise(py, [Some(&x)], || anydev::$u(&x)).map(PyArray::from)
            }
        )*
        $(
            #[pyfunction]
            #[pyo3(signature = (x1, x2, /))]
            fn $b(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>) -> PyResult<PyArray> {
                let (x1, x2) = (required_operand(x1)?, required_operand(x2)?);
                compute_elementwise(py, [x1.array(), x2.array()], || anydev::$b(x1.arg(), x2.arg())).map(PyArray::from)
            }
        )*

        fn register_table(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($u, m)?)?;)*
            $(m.add_function(wrap_pyfunction!($b, m)?)?;)*
            Ok(())
        }
    };
}

elementwise! {
    unary: [
        abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp expm1 floor imag
        isfinite isinf isnan log log1p log2 log10 logical_not negative positive real reciprocal round
        sign signbit sin sinh square sqrt tan tanh trunc
    ]
    binary: [
        add atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor copysign divide
        equal floor_divide greater greater_equal hypot less less_equal logaddexp logical_and logical_or
        logical_xor maximum minimum multiply nextafter not_equal pow remainder subtract
    ]
}

/// `x1` where `condition` holds, else `x2`; either may be a Python scalar.
#[pyfunction(name = "where")]
#[pyo3(signature = (condition, x1, x2, /))]
fn where_(
    py: Python<'_>,
    condition: &Bound<'_, PyAny>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let cond = array_arg(condition)?;
    let (x1, x2) = (required_operand(x1)?, required_operand(x2)?);
    compute(py, || anydev::where_(&cond, x1.arg(), x2.arg())).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, min = None, max = None))]
fn clip(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let (min, max) = (
        min.map(required_operand).transpose()?,
        max.map(required_operand).transpose()?,
    );
    compute(py, || {
        anydev::clip(&x, min.as_ref().map(Operand::arg), max.as_ref().map(Operand::arg))
    })
    .map(PyArray::from)
}

/// `x` as `dtype`, on `device` if given: a new array unless `copy=False`
/// and nothing changes.
#[pyfunction]
#[pyo3(signature = (x, dtype, /, *, copy = true, device = None))]
fn astype(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    dtype: PyDType,
    copy: bool,
    device: Option<PyDevice>,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    let device = device.map_or(x.device(), |d| d.0);
    compute(py, || unshared(x.astype_on(dtype.0, device)?, &x, copy)).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_table(m)?;
    m.add_function(wrap_pyfunction!(where_, m)?)?;
    m.add_function(wrap_pyfunction!(clip, m)?)?;
    m.add_function(wrap_pyfunction!(astype, m)?)?;
    Ok(())
}
