//! The native half of the `anydev` Python package (`anydev._anydev`).
//!
//! Everything here is a thin layer over the Rust `anydev` crate: arguments
//! are converted, the GIL is released while anydev computes or waits
//! ([`errors::compute`]), and errors become Python exceptions. Placement,
//! promotion and validation all stay in the Rust array layer; the Python
//! half (`python/anydev`) adds what belongs to Python: the `contextvars`
//! device scope, the inspection namespace and the standard's helpers.

mod accelerator;
mod array;
mod buffer;
mod creation;
mod device;
#[cfg(feature = "dist")]
mod dist;
mod dlpack;
mod dtype;
mod errors;
mod extension;
mod functions;
mod index;
mod info;
mod operand;
mod operators;
mod quant;

use pyo3::prelude::*;

#[pymodule]
fn _anydev(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<array::PyArray>()?;
    m.add_class::<device::PyDevice>()?;
    m.add("UnsupportedError", m.py().get_type::<errors::UnsupportedError>())?;
    m.add("AxisError", errors::axis_error(m.py())?)?;
    dtype::register(m)?;
    info::register(m)?;
    creation::register(m)?;
    functions::register(m)?;
    dlpack::register(m)?;
    extension::register(m)?;
    quant::register(m)?;
    accelerator::register(m)?;
    #[cfg(feature = "dist")]
    dist::register(m)?;
    Ok(())
}
