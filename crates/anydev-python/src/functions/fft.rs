//! The standard's `fft` extension in the native submodule
//! `anydev._anydev._fft` (`anydev.fft` re-exports it).

use crate::array::PyArray;
use crate::device::{device_of, PyDevice};
use crate::dtype::PyDType;
use crate::errors::compute;
use crate::info::{creation_device, default_dtype, Kind};
use crate::operand::array_arg;
use anydev::fft as core;
use anydev::fft::Norm;
use anydev::{Array, Axes};
use pyo3::prelude::*;

type OneAxis = fn(&Array, Option<usize>, isize, Norm) -> anydev::Result<Array>;
type ManyAxes = fn(&Array, Option<&[usize]>, Option<&[isize]>, Norm) -> anydev::Result<Array>;

fn one_axis(
    py: Python<'_>,
    f: OneAxis,
    x: &Bound<'_, PyAny>,
    n: Option<usize>,
    axis: isize,
    norm: &str,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || f(&x, n, axis, norm.parse()?)).map(PyArray::from)
}

fn many_axes(
    py: Python<'_>,
    f: ManyAxes,
    x: &Bound<'_, PyAny>,
    s: Option<Vec<usize>>,
    axes: Option<Vec<isize>>,
    norm: &str,
) -> PyResult<PyArray> {
    let x = array_arg(x)?;
    compute(py, || f(&x, s.as_deref(), axes.as_deref(), norm.parse()?)).map(PyArray::from)
}

/// Declares the one-axis transforms (`fft`, `ifft`, ...) and the
/// several-axes ones (`fftn`, ...) with the standard's signatures.
macro_rules! transforms {
    (one: [$($one:ident)*] many: [$($many:ident)*]) => {
        $(
            #[pyfunction]
            #[pyo3(
                signature = (x, /, *, n = None, axis = -1, norm = "backward"),
                text_signature = "(x, /, *, n=None, axis=-1, norm='backward')"
            )]
            fn $one(py: Python<'_>, x: &Bound<'_, PyAny>, n: Option<usize>, axis: isize, norm: &str) -> PyResult<PyArray> {
                one_axis(py, core::$one, x, n, axis, norm)
            }
        )*
        $(
            #[pyfunction]
            #[pyo3(signature = (x, /, *, s = None, axes = None, norm = "backward"))]
            fn $many(
                py: Python<'_>,
                x: &Bound<'_, PyAny>,
                s: Option<Vec<usize>>,
                axes: Option<Vec<isize>>,
                norm: &str,
            ) -> PyResult<PyArray> {
                many_axes(py, core::$many, x, s, axes, norm)
            }
        )*

        fn add_transforms(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($one, m)?)?;)*
            $(m.add_function(wrap_pyfunction!($many, m)?)?;)*
            Ok(())
        }
    };
}

transforms! {
    one: [fft ifft rfft irfft hfft ihfft]
    many: [fftn ifftn rfftn irfftn]
}

/// The frequencies' dtype and device: the explicit ones, else the
/// creation device and its default float.
fn frequency_spec(dtype: Option<PyDType>, device: Option<PyDevice>) -> anydev::Result<(anydev::DType, anydev::Device)> {
    let device = creation_device(device_of(device))?;
    let dtype = match dtype {
        Some(d) => d.0,
        None => default_dtype(device, Kind::Float)?,
    };
    Ok((dtype, device))
}

#[pyfunction]
#[pyo3(signature = (n, /, *, d = 1.0, dtype = None, device = None))]
fn fftfreq(py: Python<'_>, n: usize, d: f64, dtype: Option<PyDType>, device: Option<PyDevice>) -> PyResult<PyArray> {
    compute(py, || core::fftfreq(n, d, frequency_spec(dtype, device)?)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (n, /, *, d = 1.0, dtype = None, device = None))]
fn rfftfreq(py: Python<'_>, n: usize, d: f64, dtype: Option<PyDType>, device: Option<PyDevice>) -> PyResult<PyArray> {
    compute(py, || core::rfftfreq(n, d, frequency_spec(dtype, device)?)).map(PyArray::from)
}

/// The shifts' `axes`: one axis or any sequence of them (the standard's
/// `Union[int, Sequence[int]]`, where reductions take only tuples).
fn shift_axes(axes: Option<&Bound<'_, PyAny>>) -> PyResult<Axes> {
    Ok(match axes {
        None => Axes::All,
        Some(a) => Axes::from(match a.extract::<isize>() {
            Ok(axis) => vec![axis],
            Err(_) => a.extract::<Vec<isize>>()?,
        }),
    })
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axes = None))]
fn fftshift(py: Python<'_>, x: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let (x, axes) = (array_arg(x)?, shift_axes(axes)?);
    compute(py, || core::fftshift(&x, axes)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axes = None))]
fn ifftshift(py: Python<'_>, x: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let (x, axes) = (array_arg(x)?, shift_axes(axes)?);
    compute(py, || core::ifftshift(&x, axes)).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let module = PyModule::new(m.py(), "_fft")?;
    add_transforms(&module)?;
    for f in [
        wrap_pyfunction!(fftfreq, &module)?,
        wrap_pyfunction!(rfftfreq, &module)?,
        wrap_pyfunction!(fftshift, &module)?,
        wrap_pyfunction!(ifftshift, &module)?,
    ] {
        module.add_function(f)?;
    }
    m.add_submodule(&module)
}
