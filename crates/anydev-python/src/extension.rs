//! Extension ops by name (`anydev.extension`, native submodule
//! `anydev._anydev._extension`): any op a library defined in the process,
//! called on anydev arrays with its attributes as Python keywords.
//!
//! Python values carry no attribute kind, so each keyword is converted by
//! the kind the op's schema declares for it (`extension::op_attrs`); the
//! call itself, its placement and its errors are the Rust layer's.

use crate::array::PyArray;
use crate::device::PyDevice;
use crate::dtype::PyDType;
use crate::errors::{compute, to_py};
use crate::operand::{array_arg, type_name};
use anydev::extension::{self as ext, AttrKind, AttrValue, Attrs, CallOptions};
use anydev::{Array, Error};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Defines the ops of the libraries this package ships (anydev-quant), so
/// that they can be called and listed by name before their typed API has
/// been used.
fn shipped() -> PyResult<()> {
    anydev_quant::register().map_err(to_py)
}

/// The Python values a kind takes, for errors.
fn python_form(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Int => "an int",
        AttrKind::Float => "an int or a float",
        AttrKind::Bool => "a bool",
        AttrKind::Str => "a str",
        AttrKind::DType => "an anydev dtype",
        AttrKind::Shape => "a tuple or list of non-negative ints",
    }
}

/// A Python `int` that is not a `bool` (`bool` subclasses `int`, but
/// `True` is no block size).
fn is_int(value: &Bound<'_, PyAny>) -> bool {
    value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>()
}

/// `value` as attribute `name` of `op`, of the declared `kind`. A value of
/// another Python type is a `TypeError`; an int out of range (or a
/// negative dimension) a `ValueError`.
fn attr_value(op: &str, name: &str, kind: AttrKind, value: &Bound<'_, PyAny>) -> PyResult<AttrValue> {
    let out_of_range = |what: &str| {
        PyValueError::new_err(format!(
            "{op}: attribute {name} ({kind:?}): {} is {what}",
            value.repr().map_or_else(|_| "the value".into(), |r| r.to_string())
        ))
    };
    let converted = match kind {
        AttrKind::Int if is_int(value) => Some(AttrValue::Int(
            value.extract().map_err(|_| out_of_range("not a 64-bit integer"))?,
        )),
        AttrKind::Float if is_int(value) || value.is_instance_of::<PyFloat>() => Some(AttrValue::Float(
            value.extract().map_err(|_| out_of_range("too large for a float"))?,
        )),
        AttrKind::Bool if value.is_instance_of::<PyBool>() => Some(AttrValue::Bool(value.extract()?)),
        AttrKind::Str if value.is_instance_of::<PyString>() => Some(AttrValue::Str(value.extract()?)),
        AttrKind::DType => value.cast::<PyDType>().ok().map(|d| AttrValue::DType(d.get().0)),
        AttrKind::Shape if value.is_instance_of::<PyTuple>() || value.is_instance_of::<PyList>() => {
            let items: Vec<Bound<'_, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
            if items.iter().all(is_int) {
                let dims = items
                    .iter()
                    .map(|d| d.extract::<usize>())
                    .collect::<PyResult<Vec<usize>>>()
                    .map_err(|_| out_of_range("not a shape of non-negative dimensions"))?;
                Some(AttrValue::Shape(dims))
            } else {
                None
            }
        }
        _ => None,
    };
    converted.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{op}: attribute {name} must be {kind:?} ({}), got {}",
            python_form(kind),
            type_name(value)
        ))
    })
}

/// The keywords of a call as `op`'s attributes. A missing attribute is
/// left to the call, which names it with its kind.
fn attrs_of(op: &str, keywords: Option<&Bound<'_, PyDict>>) -> PyResult<Attrs> {
    let schema = ext::op_attrs(op).map_err(to_py)?;
    let mut attrs = Attrs::new();
    for (key, value) in keywords.into_iter().flat_map(|d| d.iter()) {
        let name: String = key.extract()?;
        let Some((_, kind)) = schema.iter().find(|(n, _)| *n == name) else {
            let declared: Vec<&str> = schema.iter().map(|(n, _)| n.as_str()).collect();
            let declared = if declared.is_empty() {
                "none".into()
            } else {
                declared.join(", ")
            };
            return Err(to_py(Error::invalid_argument(
                op,
                format!("unknown attribute {name} (declared: {declared})"),
            )));
        };
        attrs = attrs.with(&name, attr_value(op, &name, *kind, &value)?);
    }
    Ok(attrs)
}

/// Calls extension op `op` on anydev arrays, its attributes given as
/// keywords; the outputs, on the inputs' device, as a tuple.
#[pyfunction]
#[pyo3(signature = (op, /, *inputs, host_fallback = false, **attrs))]
fn call<'py>(
    py: Python<'py>,
    op: &str,
    inputs: &Bound<'py, PyTuple>,
    host_fallback: bool,
    attrs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyTuple>> {
    shipped()?;
    let inputs: Vec<Array> = inputs.iter().map(|x| array_arg(&x)).collect::<PyResult<_>>()?;
    let attrs = attrs_of(op, attrs)?;
    let outputs = compute(py, || {
        let refs: Vec<&Array> = inputs.iter().collect();
        ext::call_with(op, &refs, &attrs, CallOptions { host_fallback })
    })?;
    PyTuple::new(py, outputs.into_iter().map(PyArray::from))
}

/// The names of every defined op, sorted.
#[pyfunction]
fn ops() -> PyResult<Vec<String>> {
    shipped()?;
    ext::ops().map_err(to_py)
}

/// The ops `device` runs: registered kernels for its kind and its
/// plugin's own implementations.
#[pyfunction]
fn device_ops(device: PyDevice) -> PyResult<Vec<String>> {
    shipped()?;
    ext::device_ops(device.0).map_err(to_py)
}

/// The device kinds with a kernel registered for `op`.
#[pyfunction]
fn kernel_kinds(op: &str) -> PyResult<Vec<String>> {
    shipped()?;
    ext::kernel_kinds(op).map_err(to_py)
}

/// How many calls have run on the host instead of their inputs' device.
#[pyfunction]
fn host_fallbacks() -> u64 {
    ext::host_fallbacks()
}

/// Opts `op` in (or out) of the host fallback for every call.
#[pyfunction]
fn set_host_fallback(op: &str, allow: bool) -> PyResult<()> {
    shipped()?;
    ext::set_host_fallback(op, allow).map_err(to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let module = PyModule::new(m.py(), "_extension")?;
    for f in [
        wrap_pyfunction!(call, &module)?,
        wrap_pyfunction!(ops, &module)?,
        wrap_pyfunction!(device_ops, &module)?,
        wrap_pyfunction!(kernel_kinds, &module)?,
        wrap_pyfunction!(host_fallbacks, &module)?,
        wrap_pyfunction!(set_host_fallback, &module)?,
    ] {
        module.add_function(f)?;
    }
    m.add_submodule(&module)
}
