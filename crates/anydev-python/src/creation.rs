//! Creation functions. The device is the explicit `device=` argument, which
//! the Python half fills from the `anydev.device(...)` scope when absent
//! (design section 12), else anydev's default device; dtypes default per
//! device (section 14), which this module resolves before calling anydev.

use crate::array::{unshared, PyArray};
use crate::buffer;
use crate::device::{device_of, PyDevice};
use crate::dlpack;
use crate::dtype::{with_element, PyDType};
use crate::errors::{compute, to_py};
use crate::info::{creation_device, default_dtype, Kind};
use crate::operand::{array_arg, is_numpy_scalar, is_plain_python_scalar, python_scalar, weak_scalar};
use anydev::{result_type, Array, DType, Device, Element, Error, Indexing, Scalar, Spec, Weak};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PySequence, PyString, PyTuple};

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
            "{what} must be a Python (or NumPy) bool, int, float or complex, not {obj}"
        ))
    })
}

/// The dtype of a NumPy scalar (which is a buffer of one element).
fn numpy_scalar_dtype(obj: &Bound<'_, PyAny>) -> PyResult<PyDType> {
    match buffer::read(obj) {
        Ok(Some(b)) => Ok(PyDType(b.dtype)),
        _ => Err(PyTypeError::new_err(format!(
            "fill_value {} has no anydev dtype; pass dtype=",
            obj.repr()?
        ))),
    }
}

/// How deep `asarray` follows nested sequences.
const MAX_NESTING: usize = 64;

/// What `asarray` found in nested Python sequences, row-major: Python
/// scalars, and arrays (anydev arrays, DLPack producers, buffers, NumPy
/// scalars) whose elements continue the nesting.
#[derive(Default)]
struct Nested {
    shape: Vec<usize>,
    /// The depth of the elements, once the first one has been seen.
    leaf_depth: Option<usize>,
    scalars: Vec<Weak>,
    /// Each array, after how many of `scalars` it comes.
    arrays: Vec<(usize, Array)>,
    /// The distinct devices of the anydev arrays among `arrays` (DLPack
    /// producers and buffers are read as host data).
    devices: Vec<Device>,
}

impl Nested {
    fn read(obj: &Bound<'_, PyAny>) -> PyResult<Nested> {
        let mut found = Nested::default();
        found.visit(obj, 0)?;
        Ok(found)
    }

    fn visit(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            return self.sequence(obj.cast::<PySequence>()?, depth);
        }
        // Python's own scalars are weak. NumPy's count with their dtypes, as
        // arrays (they are buffers), `np.float64` too, although it is a
        // `float`; other subclasses of Python's scalar types are weak.
        if is_plain_python_scalar(obj) {
            if let Some(w) = python_scalar(obj)? {
                return self.scalar(w, depth);
            }
        }
        if let Ok(a) = obj.cast::<PyArray>() {
            let device = a.get().inner.device();
            if !self.devices.contains(&device) {
                self.devices.push(device);
            }
        }
        if let Some(array) = array_like(obj)? {
            self.elements(depth, array.shape())?;
            self.arrays.push((self.scalars.len(), array));
            return Ok(());
        }
        if let Some(w) = python_scalar(obj)? {
            return self.scalar(w, depth);
        }
        match obj.cast::<PySequence>() {
            Ok(seq) if !obj.is_instance_of::<PyString>() => self.sequence(seq, depth),
            _ => Err(PyTypeError::new_err(format!(
                "asarray takes anydev arrays, DLPack producers (NumPy, PyTorch, ...), buffer-protocol objects (bytes, array.array, ...), Python scalars and nested sequences of them, not {}",
                obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))),
        }
    }

    /// A Python scalar element.
    fn scalar(&mut self, w: Weak, depth: usize) -> PyResult<()> {
        self.elements(depth, &[])?;
        self.scalars.push(w);
        Ok(())
    }

    fn sequence(&mut self, seq: &Bound<'_, PySequence>, depth: usize) -> PyResult<()> {
        // A bound on the recursion, far above any real array's rank.
        if depth >= MAX_NESTING {
            return Err(PyValueError::new_err(format!(
                "asarray: sequences nested more than {MAX_NESTING} deep"
            )));
        }
        let n = seq.len()?;
        self.dimension(depth, n)?;
        for item in seq.try_iter()? {
            self.visit(&item?, depth + 1)?;
        }
        if n == 0 && self.leaf_depth.is_none() {
            self.leaf_depth = Some(depth + 1);
        }
        Ok(())
    }

    /// Records, or checks against its siblings, a length at `depth`.
    fn dimension(&mut self, depth: usize, n: usize) -> PyResult<()> {
        match self.shape.get(depth) {
            None if self.leaf_depth.is_none() => self.shape.push(n),
            Some(&m) if m == n => {}
            _ => {
                return Err(PyValueError::new_err(
                    "asarray: nested sequences of different lengths (a ragged array)",
                ))
            }
        }
        Ok(())
    }

    /// Records, or checks, elements of `shape` (`[]` for one scalar) at
    /// `depth`.
    fn elements(&mut self, depth: usize, shape: &[usize]) -> PyResult<()> {
        for (i, &n) in shape.iter().enumerate() {
            self.dimension(depth + i, n)?;
        }
        let depth = depth + shape.len();
        match self.leaf_depth {
            None => self.leaf_depth = Some(depth),
            Some(d) if d == depth => {}
            Some(_) => {
                return Err(PyValueError::new_err(
                    "asarray: nested sequences of different depths (a ragged array)",
                ))
            }
        }
        Ok(())
    }

    /// The result's dtype: NumPy's rule for mixed sequences. The Python
    /// scalars count as the device's default dtype of their widest kind,
    /// the arrays with their own dtypes, and all of them promote together.
    fn dtype(&self, device: Device) -> anydev::Result<DType> {
        let scalars = match self.scalars.iter().map(|&w| kind_of(w)).max() {
            Some(kind) => Some(default_dtype(device, kind)?),
            None if self.arrays.is_empty() => Some(default_dtype(device, Kind::Float)?),
            None => None,
        };
        let dtypes = self.arrays.iter().map(|(_, a)| a.dtype()).chain(scalars);
        Ok(dtypes.reduce(result_type).expect("there is at least one dtype"))
    }

    /// The device the result goes to: the explicit one, else that of the
    /// anydev arrays inside (which must agree), else the creation device.
    fn device(&self, explicit: Option<Device>) -> anydev::Result<Device> {
        match self.devices[..] {
            _ if explicit.is_some() => creation_device(explicit),
            [] => creation_device(None),
            [one] => Ok(one),
            _ => Err(Error::DeviceMismatch {
                op: "asarray".into(),
                devices: self.devices.clone(),
            }),
        }
    }

    /// Every element as `dtype`, uploaded to `device`.
    fn upload(&self, dtype: DType, device: Device) -> anydev::Result<Array> {
        let scalars = self
            .scalars
            .iter()
            .map(|w| w.to_scalar("asarray", dtype))
            .collect::<anydev::Result<Vec<_>>>()?;
        with_element!(dtype, T => {
            let from_scalar = |s: &Scalar| T::from_scalar(*s).ok_or_else(|| Error::invalid_argument("asarray", format!("{s:?} is not a {dtype}")));
            let mut data = Vec::with_capacity(self.shape.iter().product());
            let mut taken = 0;
            for (before, array) in &self.arrays {
                for s in &scalars[taken..*before] {
                    data.push(from_scalar(s)?);
                }
                taken = *before;
                // Converted on the CPU, which holds every dtype.
                data.extend(array.to_device(Device::cpu())?.astype(dtype)?.to_vec::<T>()?);
            }
            for s in &scalars[taken..] {
                data.push(from_scalar(s)?);
            }
            Array::from_slice(&data, &self.shape, device)
        })
    }
}

/// An element of a nested sequence that is itself an array: an anydev
/// array, a DLPack producer or a buffer (NumPy scalars are buffers).
fn array_like(obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    if let Ok(a) = obj.cast::<PyArray>() {
        return Ok(Some(a.get().inner.clone()));
    }
    let py = obj.py();
    if obj.hasattr("__dlpack__")? {
        return dlpack::import(py, obj, Some(PyDevice(Device::cpu())), None).map(Some);
    }
    match buffer::read(obj)? {
        Some(host) => compute(py, || {
            dlpack::upload(&host.bytes, &host.shape, host.dtype, Device::cpu())
        })
        .map(Some),
        None => Ok(None),
    }
}

/// An array from Python scalars, arrays, or nested sequences of them.
fn from_python(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<Array> {
    let found = Nested::read(obj)?;
    compute(py, || {
        let device = found.device(device_of(device))?;
        let dtype = match dtype {
            Some(d) => d.0,
            None => found.dtype(device)?,
        };
        found.upload(dtype, device)
    })
}

/// `copy=False` cannot be honoured.
fn no_copy_allowed(why: &str) -> PyErr {
    PyValueError::new_err(format!("asarray(copy=False): {why} needs a copy"))
}

/// What `asarray` reads its data from.
enum Source {
    /// An anydev array, or one imported through DLPack.
    Array(Array),
    /// The contents of a buffer-protocol object.
    Buffer(buffer::HostBuffer),
    /// Python scalars and sequences.
    Python,
}

#[pyfunction]
#[pyo3(signature = (obj, /, *, dtype = None, device = None, copy = None))]
fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<PyDType>,
    mut device: Option<PyDevice>,
    copy: Option<bool>,
) -> PyResult<PyArray> {
    let source = if let Ok(a) = obj.cast::<PyArray>() {
        Source::Array(a.get().inner.clone())
    } else if obj.hasattr("__dlpack__")? {
        // NumPy and other DLPack arrays follow the creation rule, as
        // sequences do: the explicit device (the scope comes in as one),
        // else the default device.
        device = Some(PyDevice(creation_device(device_of(device)).map_err(to_py)?));
        // Host data to convert is read in place on cpu:0 and converted
        // before it moves (below), so that a dtype the target does not hold
        // (NumPy's float64 for a device without f64) never has to reach it.
        let convert_on_host = dtype.is_some() && copy != Some(false) && dlpack::host_producer(obj);
        let at = if convert_on_host {
            Some(PyDevice(Device::cpu()))
        } else {
            device
        };
        match dlpack::import(py, obj, at, copy) {
            Ok(array) => Source::Array(array),
            // DLPack has no code for some of what buffers hold (NumPy's
            // big-endian arrays, strings): the buffer protocol reads the
            // former and names the latter's format.
            Err(refused) if refused.is_instance_of::<PyBufferError>(py) => {
                Source::Buffer(buffer::read(obj)?.ok_or(refused)?)
            }
            Err(e) => return Err(e),
        }
    } else if let Some(host) = buffer::read(obj)? {
        Source::Buffer(host)
    } else {
        Source::Python
    };
    let array = match source {
        Source::Array(array) => array,
        Source::Buffer(host) => {
            if copy == Some(false) {
                return Err(buffer::copy_refused());
            }
            return compute(py, || {
                let device = creation_device(device_of(device))?;
                let at = if holds(device, host.dtype)? {
                    device
                } else {
                    Device::cpu()
                };
                let array = dlpack::upload(&host.bytes, &host.shape, host.dtype, at)?;
                moved_as(&array, device, dtype.map_or(host.dtype, |d| d.0))
            })
            .map(PyArray::from);
        }
        Source::Python => {
            if copy == Some(false) {
                return Err(no_copy_allowed("a Python object"));
            }
            return from_python(py, obj, dtype, device).map(PyArray::from);
        }
    };
    let target = device_of(device).unwrap_or(array.device());
    let dtype = dtype.map_or(array.dtype(), |d| d.0);
    if copy == Some(false) && (target != array.device() || dtype != array.dtype()) {
        return Err(no_copy_allowed("another device or dtype"));
    }
    compute(py, || {
        unshared(moved_as(&array, target, dtype)?, &array, copy == Some(true))
    })
    .map(PyArray::from)
}

/// Whether `device` holds `dtype`.
fn holds(device: Device, dtype: DType) -> anydev::Result<bool> {
    Ok(anydev::runtime().capabilities(device)?.supports_dtype(dtype))
}

/// `array` as `dtype` on `target`: converted where it is when the target
/// cannot hold its dtype, else moved first (the target converts faster).
fn moved_as(array: &Array, target: Device, dtype: DType) -> anydev::Result<Array> {
    if holds(target, array.dtype())? {
        array.to_device(target)?.astype(dtype)
    } else {
        array.astype(dtype)?.to_device(target)
    }
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
    // A NumPy scalar brings its dtype, as in `np.full`.
    let dtype = match dtype {
        None if is_numpy_scalar(fill_value)? => Some(numpy_scalar_dtype(fill_value)?),
        dtype => dtype,
    };
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

/// A diagonal offset (`eye`, `tril`, `triu`): any Python int. Every
/// diagonal past the matrix's corner selects nothing, so offsets beyond
/// `isize` are clamped to it rather than overflowing.
struct DiagonalOffset(isize);

impl<'py> FromPyObject<'_, 'py> for DiagonalOffset {
    type Error = PyErr;

    fn extract(k: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        match k.extract::<isize>() {
            Err(_) if k.is_instance_of::<PyInt>() => Ok(DiagonalOffset(if k.gt(0)? { isize::MAX } else { isize::MIN })),
            k => k.map(DiagonalOffset),
        }
    }
}

#[pyfunction]
#[pyo3(
    signature = (n_rows, n_cols = None, /, *, k = DiagonalOffset(0), dtype = None, device = None),
    text_signature = "(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)"
)]
fn eye(
    py: Python<'_>,
    n_rows: usize,
    n_cols: Option<usize>,
    k: DiagonalOffset,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
) -> PyResult<PyArray> {
    let k = k.0;
    compute(py, || anydev::eye(n_rows, n_cols, k, spec(dtype, device, Kind::Float)?)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (start, stop, /, num, *, dtype = None, device = None, endpoint = true))]
fn linspace(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: &Bound<'_, PyAny>,
    num: usize,
    dtype: Option<PyDType>,
    device: Option<PyDevice>,
    endpoint: bool,
) -> PyResult<PyArray> {
    let (start, stop) = (
        scalar_arg(start, "linspace's start")?,
        scalar_arg(stop, "linspace's stop")?,
    );
    let kind = kind_of(start).max(kind_of(stop)).max(Kind::Float);
    compute(py, || {
        anydev::linspace(start, stop, num, endpoint, spec(dtype, device, kind)?)
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
        #[pyo3(signature = (x, /, *, k = DiagonalOffset(0)), text_signature = "(x, /, *, k=0)")]
        fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, k: DiagonalOffset) -> PyResult<PyArray> {
            let k = k.0;
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
