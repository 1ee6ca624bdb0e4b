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

use pyo3::prelude::*;
use pyo3::types::PyTuple;

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
fn axes_arg(axis: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
    match axis.extract::<isize>() {
        Ok(a) => Ok(vec![a]),
        Err(_) => axis.cast::<PyTuple>()?.extract(),
    }
}
