//! Creation functions. The device is the explicit `device=` argument, which
//! the Python half fills from the `anydev.device(...)` scope when absent
//! (design section 12), else anydev's default device; dtypes default per
//! device (section 14), which this module resolves before calling anydev.

use crate::array::{unshared, PyArray};
use crate::buffer;
use crate::device::{device_of, PyDevice};
use crate::dlpack;
use crate::dtype::{with_element, PyDType};
use crate::errors::compute;
use crate::info::{creation_device, default_dtype, Kind};
use crate::operand::{array_arg, weak_scalar};
use anydev::{Array, DType, Device, Element, Error, Indexing, Scalar, Spec, Weak};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySequence, PyTuple};

/// The default-dtype kind of a Python scalar.
fn kind_of(w: Weak) -> Kind {
    match w {
        Weak::Bool(_) => Kind::Bool,
        Weak::Int(_) => Kind::Int,
        Weak::Float(_) => Kind::Float,
        Weak::Complex(..) => Kind::Complex,
    }
}

/// Dtype and device of a creation call: the explicit ones, else the
/// resolved creation device and its default dtype of `kind`.
fn resolve(dtype: Option<PyDType>, device: Option<PyDevice>, kind: Kind) -> anydev::Result<(DType, Device)> {
    let device = creation_device(device_of(device))?;
    let dtype = match dtype {
        Some(d) => d.0,
        None => default_dtype(device, kind)?,
    };
    Ok((dtype, device))
}

/// [`resolve`] as anydev's creation argument.
fn spec(dtype: Option<PyDType>, device: Option<PyDevice>, kind: Kind) -> anydev::Result<Spec> {
    resolve(dtype, device, kind).map(Spec::from)
}

/// A shape argument: an int or a sequence of ints, none negative.
fn shape_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let dims: Vec<i64> = match obj.extract::<i64>() {
        Ok(n) => vec![n],
        Err(_) => obj
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("a shape is an int or a tuple of ints, not {obj}")))?,
    };
    dims.into_iter()
        .map(|d| usize::try_from(d).map_err(|_| PyValueError::new_err(format!("negative dimension {d} in a shape"))))
        .collect()
}

/// A Python scalar argument (fill values, arange bounds).
fn scalar_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Weak> {
    weak_scalar(obj)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{what} must be a Python bool, int, float or complex, not {obj}"
        ))
    })
}

/// Host values, each already of `dtype`, uploaded to `device`.
fn upload(values: &[Scalar], shape: &[usize], dtype: DType, device: Device) -> anydev::Result<Array> {
    with_element!(dtype, T => {
        let data = values
            .iter()
            .map(|&s| T::from_scalar(s).ok_or_else(|| Error::invalid_argument("asarray", format!("{s:?} is not a {dtype}"))))
            .collect::<anydev::Result<Vec<T>>>()?;
        Array::from_slice(&data, shape, device)
    })
}

/// How deep `asarray` follows nested sequences.
const MAX_NESTING: usize = 64;

/// Nested Python sequences of scalars: their shape and values, row-major.
fn nested(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    shape: &mut Vec<usize>,
    leaf_depth: &mut Option<usize>,
    out: &mut Vec<Weak>,
) -> PyResult<()> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        // A bound on the recursion, far above any real array's rank.
        if depth >= MAX_NESTING {
            return Err(PyValueError::new_err(format!(
                "asarray: sequences nested more than {MAX_NESTING} deep"
            )));
        }
        let seq = obj.cast::<PySequence>()?;
        let n = seq.len()?;
        match shape.get(depth) {
            None if leaf_depth.is_none() => shape.push(n),
            Some(&m) if m == n => {}
            _ => {
                return Err(PyValueError::new_err(
                    "asarray: nested sequences of different lengths (a ragged array)",
                ))
            }
        }
        for item in seq.try_iter()? {
            nested(&item?, depth + 1, shape, leaf_depth, out)?;
        }
        if n == 0 && leaf_depth.is_none() {
            *leaf_depth = Some(depth + 1);
        }
        return Ok(());
    }
    let w = weak_scalar(obj)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "asarray takes anydev arrays, DLPack producers (NumPy, PyTorch, ...), buffer-protocol objects (bytes, array.array, ...), Python scalars and nested lists of them, not {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    match *leaf_depth {
        None => *leaf_depth = Some(depth),
        Some(d) if d == depth => {}
        Some(_) => {
            return Err(PyValueError::new_err(
                "asarray: nested sequences of different depths (a ragged array)",
            ))
        }
    }
    out.push(w);
    Ok(())
}

/// An array from Python scalars or nested sequences of them.
fn from_python(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<Array> {
    let (mut shape, mut leaf, mut values) = (Vec::new(), None, Vec::new());
    nested(obj, 0, &mut shape, &mut leaf, &mut values)?;
    let kind = values.iter().map(|&w| kind_of(w)).max().unwrap_or(Kind::Float);
    compute(py, || {
        let (dtype, device) = resolve(dtype, device, kind)?;
        let scalars = values
            .iter()
            .map(|w| w.to_scalar("asarray", dtype))
            .collect::<anydev::Result<Vec<_>>>()?;
        upload(&scalars, &shape, dtype, device)
    })
}

/// `copy=False` cannot be honoured.
fn no_copy_allowed(why: &str) -> PyErr {
    PyValueError::new_err(format!("asarray(copy=False): {why} needs a copy"))
}

#[pyfunction]
#[pyo3(signature = (obj, /, *, dtype = None, device = None, copy = None))]
fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
    copy: Option<bool>,
) -> PyResult<PyArray> {
    let array = if let Ok(a) = obj.cast::<PyArray>() {
        a.get().inner.clone()
    } else if obj.hasattr("__dlpack__")? {
        dlpack::import(py, obj, device, copy)?
    } else if let Some(host) = buffer::read(obj)? {
        if copy == Some(false) {
            return Err(buffer::copy_refused());
        }
        return compute(py, || {
            let device = creation_device(device_of(device))?;
            let array = dlpack::upload(&host.bytes, &host.shape, host.dtype, device)?;
            array.astype(dtype.map_or(host.dtype, |d| d.0))
        })
        .map(PyArray::from);
    } else {
        if copy == Some(false) {
            return Err(no_copy_allowed("a Python object"));
        }
        return from_python(py, obj, dtype, device).map(PyArray::from);
    };
    let target = device_of(device).unwrap_or(array.device());
    let dtype = dtype.map_or(array.dtype(), |d| d.0);
    if copy == Some(false) && (target != array.device() || dtype != array.dtype()) {
        return Err(no_copy_allowed("another device or dtype"));
    }
    compute(py, || {
        unshared(array.to_device(target)?.astype(dtype)?, &array, copy == Some(true))
    })
    .map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (start, /, stop = None, step = None, *, dtype = None, device = None))]
fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<PyArray> {
    let first = scalar_arg(start, "arange's start")?;
    let (start, stop) = match stop {
        Some(stop) => (first, scalar_arg(stop, "arange's stop")?),
        None => (Weak::Int(0), first),
    };
    let step = step.map_or(Ok(Weak::Int(1)), |s| scalar_arg(s, "arange's step"))?;
    let kind = [start, stop, step].into_iter().map(kind_of).max().unwrap_or(Kind::Int);
    compute(py, || anydev::arange(start, stop, step, spec(dtype, device, kind)?)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (shape, fill_value, *, dtype = None, device = None))]
fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<PyArray> {
    let (shape, value) = (shape_arg(shape)?, scalar_arg(fill_value, "fill_value")?);
    compute(py, || anydev::full(&shape, value, spec(dtype, device, kind_of(value))?)).map(PyArray::from)
}

macro_rules! filled {
    ($($name:ident;)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (shape, *, dtype = None, device = None))]
        fn $name(py: Python<'_>, shape: &Bound<'_, PyAny>, dtype: Option<PyDType>, device: Option<PyDevice>) -> PyResult<PyArray> {
            let shape = shape_arg(shape)?;
            compute(py, || anydev::$name(&shape, spec(dtype, device, Kind::Float)?)).map(PyArray::from)
        }
    )*};
}

filled! {
    zeros;
    ones;
    empty;
}

macro_rules! like {
    ($($name:ident;)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, /, *, dtype = None, device = None))]
        fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, dtype: Option<PyDType>, device: Option<PyDevice>) -> PyResult<PyArray> {
            let x = array_arg(x)?;
            let spec = Spec::new(dtype.map(|d| d.0), device_of(device));
            compute(py, || anydev::$name(&x, spec)).map(PyArray::from)
        }
    )*};
}

like! {
    zeros_like;
    ones_like;
    empty_like;
}

#[pyfunction]
#[pyo3(signature = (x, /, fill_value, *, dtype = None, device = None))]
fn full_like(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<PyArray> {
    let (x, value) = (array_arg(x)?, scalar_arg(fill_value, "fill_value")?);
    let spec = Spec::new(dtype.map(|d| d.0), device_of(device));
    compute(py, || anydev::full_like(&x, value, spec)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (n_rows, n_cols = None, /, *, k = 0, dtype = None, device = None))]
fn eye(
    py: Python<'_>,
    n_rows: usize,
    n_cols: Option<usize>,
    k: isize,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<PyArray> {
    compute(py, || anydev::eye(n_rows, n_cols, k, spec(dtype, device, Kind::Float)?)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (start, stop, /, num, *, dtype = None, device = None, endpoint = true))]
fn linspace(
    py: Python<'_>,
    start: f64,
    stop: f64,
    num: usize,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
    endpoint: bool,
) -> PyResult<PyArray> {
    compute(py, || {
        anydev::linspace(start, stop, num, endpoint, spec(dtype, device, Kind::Float)?)
    })
    .map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (*arrays, indexing = "xy"))]
fn meshgrid(py: Python<'_>, arrays: &Bound<'_, PyTuple>, indexing: &str) -> PyResult<Vec<PyArray>> {
    let indexing = match indexing {
        "xy" => Indexing::Xy,
        "ij" => Indexing::Ij,
        other => {
            return Err(PyValueError::new_err(format!(
                "indexing must be 'xy' or 'ij', not {other:?}"
            )))
        }
    };
    let arrays = arrays.iter().map(|a| array_arg(&a)).collect::<PyResult<Vec<_>>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    Ok(compute(py, || anydev::meshgrid(&refs, indexing))?
        .into_iter()
        .map(PyArray::from)
        .collect())
}

macro_rules! triangle {
    ($($name:ident;)*) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, /, *, k = 0))]
        fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, k: isize) -> PyResult<PyArray> {
            let x = array_arg(x)?;
            compute(py, || anydev::$name(&x, k)).map(PyArray::from)
        }
    )*};
}

triangle! {
    tril;
    triu;
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    m.add_function(wrap_pyfunction!(zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(meshgrid, m)?)?;
    m.add_function(wrap_pyfunction!(tril, m)?)?;
    m.add_function(wrap_pyfunction!(triu, m)?)?;
    Ok(())
}
