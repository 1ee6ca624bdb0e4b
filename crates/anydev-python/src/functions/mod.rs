//! The standard's namespace functions over what anydev's core has, one
//! module per family. Functions the core lacks are absent, not stubs.

mod elementwise;
mod fft;
mod linalg;
mod linalg_ext;
mod manipulation;
mod reduce;
mod search;
mod sets;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    elementwise::register(m)?;
    linalg::register(m)?;
    manipulation::register(m)?;
    reduce::register(m)?;
    search::register(m)?;
    sets::register(m)?;
    linalg_ext::register(m)?;
    fft::register(m)?;
    Ok(())
}

/// An `axis=` argument that may be one axis or a tuple of them, as a list.
/// Bools are not axes (NumPy refuses `axis=True` too), and anything else
/// is a `TypeError` that says what an axis is.
fn axes_arg(axis: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
    let refuse = || {
        Err(PyTypeError::new_err(format!(
            "axis must be an int or a tuple of ints, not {}",
            axis.get_type().name()?
        )))
    };
    if axis.is_instance_of::<PyBool>() {
        return refuse();
    }
    if let Ok(a) = axis.extract::<isize>() {
        return Ok(vec![a]);
    }
    match axis.cast::<PyTuple>() {
        Ok(axes) if !axes.iter().any(|a| a.is_instance_of::<PyBool>()) => axes.extract().or_else(|_| refuse()),
        _ => refuse(),
    }
}
