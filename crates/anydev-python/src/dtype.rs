//! Dtypes as Python objects: `anydev.float32` and friends.

use crate::array::PyArray;
use crate::operand::weak_scalar;
use anydev::DType;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A dtype. Equal dtype objects are the same dtype; they hash alike so
/// they can key dicts, as the standard's inspection API returns them.
#[pyclass(module = "anydev", name = "DType", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDType(pub DType);

/// The standard's name of each dtype (NumPy's spelling). `float16` and
/// `bfloat16` are anydev extras: the standard has neither.
pub fn python_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::U8 => "uint8",
        DType::U16 => "uint16",
        DType::U32 => "uint32",
        DType::U64 => "uint64",
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::C64 => "complex64",
        DType::C128 => "complex128",
    }
}

#[pymethods]
impl PyDType {
    #[getter]
    fn name(&self) -> &'static str {
        python_name(self.0)
    }

    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.0.size()
    }

    /// The standard's kind names that `isdtype` takes: "bool", "signed
    /// integer", "unsigned integer", "real floating" or "complex floating".
    #[getter]
    fn kind(&self) -> &'static str {
        let d = self.0;
        if d.is_float() {
            "real floating"
        } else if d.is_complex() {
            "complex floating"
        } else if d.is_integer() && d.is_signed() {
            "signed integer"
        } else if d.is_integer() {
            "unsigned integer"
        } else {
            "bool"
        }
    }

    fn __repr__(&self) -> String {
        format!("anydev.{}", python_name(self.0))
    }

    fn __str__(&self) -> &'static str {
        python_name(self.0)
    }
}

impl<'py> FromPyObject<'_, 'py> for PyDType {
    type Error = PyErr;

    /// A dtype argument: an `anydev` dtype object; anything else is a
    /// `TypeError` rather than a guess.
    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        match obj.cast::<PyDType>() {
            Ok(d) => Ok(*d.get()),
            Err(_) => Err(PyTypeError::new_err(format!(
                "expected an anydev dtype such as anydev.float32, got {}",
                obj.repr()?
            ))),
        }
    }
}

/// The dtype the standard's promotion gives `arrays_and_dtypes`: arrays
/// and dtypes promote with each other first, then Python scalars join as
/// weak scalars (the core's rules, NEP 50).
#[pyfunction]
#[pyo3(signature = (*arrays_and_dtypes))]
fn result_type(arrays_and_dtypes: &Bound<'_, PyTuple>) -> PyResult<PyDType> {
    let mut strong = None;
    let mut weak = Vec::new();
    for item in arrays_and_dtypes.iter() {
        let dtype = if let Ok(a) = item.cast::<PyArray>() {
            a.get().inner.dtype()
        } else if let Some(w) = weak_scalar(&item)? {
            weak.push(w);
            continue;
        } else {
            item.extract::<PyDType>()?.0
        };
        strong = Some(strong.map_or(dtype, |s| anydev::result_type(s, dtype)));
    }
    let dtype = strong.ok_or_else(|| PyTypeError::new_err("result_type needs at least one array or dtype"))?;
    Ok(PyDType(weak.into_iter().fold(dtype, |d, w| w.promote_with(d))))
}

/// Adds one module attribute per dtype (`float32`, ...) and `result_type`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDType>()?;
    m.add_function(wrap_pyfunction!(result_type, m)?)?;
    for dtype in DType::ALL {
        m.add(python_name(dtype), PyDType(dtype))?;
    }
    Ok(())
}

/// Runs `$body` with `$t` the Rust element type of `$dtype`, for the few
/// places that move typed host data (Python lists, DLPack imports).
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr) => {{
        use anydev::DType as D;
        match $dtype {
            D::Bool => {
                type $t = bool;
                $body
            }
            D::I8 => {
                type $t = i8;
                $body
            }
            D::I16 => {
                type $t = i16;
                $body
            }
            D::I32 => {
                type $t = i32;
                $body
            }
            D::I64 => {
                type $t = i64;
                $body
            }
            D::U8 => {
                type $t = u8;
                $body
            }
            D::U16 => {
                type $t = u16;
                $body
            }
            D::U32 => {
                type $t = u32;
                $body
            }
            D::U64 => {
                type $t = u64;
                $body
            }
            D::F16 => {
                type $t = half::f16;
                $body
            }
            D::BF16 => {
                type $t = half::bf16;
                $body
            }
            D::F32 => {
                type $t = f32;
                $body
            }
            D::F64 => {
                type $t = f64;
                $body
            }
            D::C64 => {
                type $t = anydev::Complex32;
                $body
            }
            D::C128 => {
                type $t = anydev::Complex64;
                $body
            }
        }
    }};
}
pub(crate) use with_element;
