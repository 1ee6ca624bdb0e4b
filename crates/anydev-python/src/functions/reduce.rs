//! Reductions and cumulative sums and products.

use super::axes_arg;
use crate::array::PyArray;
use crate::dtype::PyDType;
use crate::errors::{compute, compute_elementwise};
use crate::operand::array_arg;
use anydev::{Array, Axes};
use pyo3::prelude::*;

/// `axis=None` (every axis), one axis or a tuple of axes.
fn axes(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Axes> {
    Ok(match axis {
        None => Axes::All,
        Some(a) => Axes::from(axes_arg(a)?),
    })
}

/// `reduce(x)` in the dtype the caller asked for, if any: the standard
/// casts `x` to it first and returns that dtype, where the reduction's own
/// rule would widen small integers to 64 bits (as NumPy does when no dtype
/// is given). Integer arithmetic wraps, so the 64-bit result cast back is
/// the one computed in the narrow dtype.
pub(crate) fn in_dtype(
    x: Array,
    dtype: Option<PyDType>,
    reduce: impl FnOnce(&Array) -> anydev::Result<Array>,
) -> anydev::Result<Array> {
    match dtype {
        Some(d) => reduce(&x.astype(d.0)?)?.astype(d.0),
        None => reduce(&x),
    }
}

macro_rules! reductions {
    (with_dtype: [$($d:ident)*] plain: [$($p:ident)*]) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (x, /, *, axis = None, dtype = None, keepdims = false))]
            fn $d(py: Python<'_>, x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>, keepdims: bool) -> PyResult<PyArray> {
                let (x, axes) = (array_arg(x)?, axes(axis)?);
                compute_elementwise(py, [Some(&x)], || in_dtype(x.clone(), dtype, |x| anydev::$d(x, axes, keepdims))).map(PyArray::from)
            }
        )*
        $(
            #[pyfunction]
            #[pyo3(signature = (x, /, *, axis = None, keepdims = false))]
            fn $p(py: Python<'_>, x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArray> {
                let (x, axes) = (array_arg(x)?, axes(axis)?);
                compute_elementwise(py, [Some(&x)], || anydev::$p(&x, axes, keepdims)).map(PyArray::from)
            }
        )*
    };
}

reductions! {
    with_dtype: [sum prod]
    plain: [min max all any mean count_nonzero]
}

/// Variance-like reductions: `var` and `std`.
type Spread = fn(&Array, Axes, f64, bool) -> anydev::Result<Array>;

fn spread(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    correction: f64,
    keepdims: bool,
    f: Spread,
) -> PyResult<PyArray> {
    let (x, axes) = (array_arg(x)?, axes(axis)?);
    compute(py, || f(&x, axes, correction, keepdims)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, correction = 0.0, keepdims = false))]
fn var(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyArray> {
    spread(py, x, axis, correction, keepdims, anydev::var)
}

/// `std` (named so in Python; `std` is the Rust standard library here).
#[pyfunction(name = "std")]
#[pyo3(signature = (x, /, *, axis = None, correction = 0.0, keepdims = false))]
fn std_(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyArray> {
    spread(py, x, axis, correction, keepdims, anydev::std)
}

macro_rules! arg_extrema {
    ($($name:ident)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, /, *, axis = None, keepdims = false))]
        fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, axis: Option<isize>, keepdims: bool) -> PyResult<PyArray> {
            let x = array_arg(x)?;
            compute(py, || anydev::$name(&x, axis, keepdims)).map(PyArray::from)
        }
    )*};
}

arg_extrema!(argmin argmax);

macro_rules! cumulative {
    ($($name:ident)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, /, *, axis = None, dtype = None, include_initial = false))]
        fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, axis: Option<isize>, dtype: Option<PyDType>, include_initial: bool) -> PyResult<PyArray> {
            let x = array_arg(x)?;
            compute(py, || in_dtype(x, dtype, |x| anydev::$name(x, axis, include_initial))).map(PyArray::from)
        }
    )*};
}

cumulative!(cumulative_sum cumulative_prod);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(sum, m)?,
        wrap_pyfunction!(prod, m)?,
        wrap_pyfunction!(min, m)?,
        wrap_pyfunction!(max, m)?,
        wrap_pyfunction!(all, m)?,
        wrap_pyfunction!(any, m)?,
        wrap_pyfunction!(mean, m)?,
        wrap_pyfunction!(count_nonzero, m)?,
        wrap_pyfunction!(var, m)?,
        wrap_pyfunction!(std_, m)?,
        wrap_pyfunction!(argmin, m)?,
        wrap_pyfunction!(argmax, m)?,
        wrap_pyfunction!(cumulative_sum, m)?,
        wrap_pyfunction!(cumulative_prod, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
