//! Arguments that may be an array or a Python scalar.
//!
//! Python scalars are NEP 50's weak scalars: they have no dtype and no
//! device and take the array's (placement rule 4); the Rust array layer
//! does the promotion and the range checks (`anydev::Weak`). NumPy scalars
//! count as the Python scalar of their kind, as PyTorch takes them:
//! `np.float64` already is a `float`, and giving `np.float32` another rule
//! would make `x * np.float32(0.5)` and `x * np.float64(0.5)` differ.

use crate::array::PyArray;
use anydev::{Arg, Array, Weak};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyComplexMethods, PyDict, PyFloat, PyInt};

/// An operand, the array borrowed from its Python object (which the
/// caller's argument keeps alive); [`Operand::arg`] lends it to anydev.
pub enum Operand<'a> {
    Array(&'a Array),
    Scalar(Weak),
}

impl Operand<'_> {
    pub fn arg(&self) -> Arg<'_> {
        match self {
            Operand::Array(a) => Arg::Array(a),
            Operand::Scalar(w) => Arg::Scalar(*w),
        }
    }

    /// The array, when it is one.
    pub fn array(&self) -> Option<&Array> {
        match self {
            Operand::Array(a) => Some(a),
            Operand::Scalar(_) => None,
        }
    }
}

/// A Python `bool`, `int`, `float` or `complex`, or a NumPy scalar, as a
/// weak scalar, or `None` for anything else.
pub fn weak_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Weak>> {
    match python_scalar(obj)? {
        Some(w) => Ok(Some(w)),
        None => numpy_scalar(obj),
    }
}

/// A Python `bool`, `int`, `float` or `complex` (or an instance of a
/// subclass, such as NumPy's `float64`) as a weak scalar. `bool` is tested
/// first: it is an `int` subclass.
pub fn python_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Weak>> {
    if obj.is_instance_of::<PyBool>() {
        Ok(Some(Weak::Bool(obj.extract()?)))
    } else if obj.is_instance_of::<PyInt>() {
        Ok(Some(Weak::Int(obj.extract()?)))
    } else if obj.is_instance_of::<PyFloat>() {
        Ok(Some(Weak::Float(obj.extract()?)))
    } else if let Ok(c) = obj.cast::<PyComplex>() {
        Ok(Some(Weak::Complex(c.real(), c.imag())))
    } else {
        Ok(None)
    }
}

/// Whether `obj` is exactly a Python `bool`, `int`, `float` or `complex`,
/// not an instance of a subclass: a quick test for the common case.
pub fn is_plain_python_scalar(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_exact_instance_of::<PyBool>()
        || obj.is_exact_instance_of::<PyInt>()
        || obj.is_exact_instance_of::<PyFloat>()
        || obj.is_exact_instance_of::<PyComplex>()
}

/// Whether `obj` is a NumPy scalar (`np.float32(1)`, `np.int64(3)`, ...).
/// NumPy is looked up among the loaded modules, not imported: nothing can
/// be a NumPy scalar before NumPy is loaded.
pub fn is_numpy_scalar(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let modules = obj.py().import("sys")?.getattr("modules")?;
    match modules.cast::<PyDict>()?.get_item("numpy")? {
        Some(numpy) => obj.is_instance(&numpy.getattr("generic")?),
        None => Ok(false),
    }
}

/// A NumPy scalar of a numeric or boolean dtype as the Python scalar of
/// its kind; `None` for anything else (dates, strings, other objects).
fn numpy_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Weak>> {
    if !is_numpy_scalar(obj)? {
        return Ok(None);
    }
    let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
    Ok(match kind.as_str() {
        "b" => Some(Weak::Bool(obj.is_truthy()?)),
        "i" | "u" => Some(Weak::Int(obj.extract()?)),
        "f" => Some(Weak::Float(obj.extract()?)),
        "c" => Some(Weak::Complex(
            obj.getattr("real")?.extract()?,
            obj.getattr("imag")?.extract()?,
        )),
        _ => None,
    })
}

/// An array or a Python scalar, or `None` for anything else (operators
/// then return `NotImplemented`, so Python can ask the other operand).
pub fn operand<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Option<Operand<'a>>> {
    if let Ok(a) = obj.cast::<PyArray>() {
        return Ok(Some(Operand::Array(&a.get().inner)));
    }
    Ok(weak_scalar(obj)?.map(Operand::Scalar))
}

/// An operand of a namespace function: anything but an array or a Python
/// scalar is a `TypeError`.
pub fn required_operand<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Operand<'a>> {
    operand(obj)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "expected an anydev array or a Python (or NumPy) bool, int, float or complex, got {}",
            type_name(obj)
        ))
    })
}

/// An array argument; anything else is a `TypeError` naming what it got.
pub fn array_arg(obj: &Bound<'_, PyAny>) -> PyResult<Array> {
    match obj.cast::<PyArray>() {
        Ok(a) => Ok(a.get().inner.clone()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected an anydev array, got {} (convert with anydev.asarray)",
            type_name(obj)
        ))),
    }
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an object".into())
}
