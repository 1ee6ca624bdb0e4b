//! The array object: attributes, conversions and device moves. Operators
//! are in `operators`, indexing in `index`, DLPack in `dlpack`.

use crate::accelerator::PyStream;
use crate::device::PyDevice;
use crate::dtype::{python_name, PyDType};
use crate::errors::{compute, to_py};
use anydev::{Array, Device, MemoryKind, Scalar, Stream, StreamGuard};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// An array on one anydev device. Operations return new arrays; views
/// (slices, reshapes, transposes) share memory, and writes (`x[k] = v`,
/// `x += 1`) go into it, seen by every view. Arrays can be weakly
/// referenced, as NumPy's and PyTorch's can (caches keyed on arrays,
/// `weakref.finalize`).
#[pyclass(module = "anydev", name = "Array", frozen, weakref)]
pub struct PyArray {
    pub inner: Array,
}

impl From<Array> for PyArray {
    fn from(inner: Array) -> Self {
        PyArray { inner }
    }
}

/// The iterator of [`PyArray::__iter__`].
#[pyclass(module = "anydev", name = "_ArrayIterator")]
pub struct ArrayIterator {
    array: Py<PyArray>,
    next: usize,
    len: usize,
}

#[pymethods]
impl ArrayIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if self.next == self.len {
            return Ok(None);
        }
        let item = self.array.bind(py).get_item(self.next)?;
        self.next += 1;
        Ok(Some(item.unbind()))
    }
}

/// `out`, or, when `copy` (a `copy=True` argument) and it shares
/// `source`'s memory, a copy of it.
pub fn unshared(out: Array, source: &Array, copy: bool) -> anydev::Result<Array> {
    if copy && out.shares_buffer(source) {
        out.copy()
    } else {
        Ok(out)
    }
}

/// A Python `bool`, `int`, `float` or `complex` holding a scalar's exact value.
pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    let obj = match s {
        Scalar::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Scalar::I8(v) => v.into_pyobject(py)?.into_any(),
        Scalar::I16(v) => v.into_pyobject(py)?.into_any(),
        Scalar::I32(v) => v.into_pyobject(py)?.into_any(),
        Scalar::I64(v) => v.into_pyobject(py)?.into_any(),
        Scalar::U8(v) => v.into_pyobject(py)?.into_any(),
        Scalar::U16(v) => v.into_pyobject(py)?.into_any(),
        Scalar::U32(v) => v.into_pyobject(py)?.into_any(),
        Scalar::U64(v) => v.into_pyobject(py)?.into_any(),
        Scalar::C64(_) | Scalar::C128(_) => {
            let c = s.to_c128();
            pyo3::types::PyComplex::from_doubles(py, c.re, c.im).into_any()
        }
        other => other.to_f64().into_pyobject(py)?.into_any(),
    };
    Ok(obj.unbind())
}

impl PyArray {
    /// The single element of a 0-d array; the standard defines the Python
    /// scalar conversions for 0-d arrays only.
    fn item(&self, py: Python<'_>, conversion: &str) -> PyResult<Py<PyAny>> {
        if self.inner.ndim() != 0 {
            return Err(PyTypeError::new_err(format!(
                "{conversion} needs a 0-d array, got shape {:?}",
                self.inner.shape()
            )));
        }
        let a = &self.inner;
        scalar_to_py(py, compute(py, || a.item())?)
    }

    /// The item through a Python builtin (`int`, `float`, `complex`), so
    /// that NaN and infinity fail exactly as they do for Python floats.
    fn item_as(&self, py: Python<'_>, builtin: &str) -> PyResult<Py<PyAny>> {
        let item = self.item(py, builtin)?;
        Ok(py.import("builtins")?.getattr(builtin)?.call1((item,))?.unbind())
    }
}

#[pymethods]
impl PyArray {
    /// `None`: NumPy's ufuncs and operators then defer to anydev's
    /// reflected operators instead of converting the array to NumPy behind
    /// the user's back (`numpy_array + x` is a `TypeError`, as moving data
    /// is only ever explicit).
    #[classattr]
    fn __array_ufunc__() -> Option<()> {
        None
    }

    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType(self.inner.dtype())
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice(self.inner.device())
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.inner.ndim()
    }

    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }

    /// The transpose of a 2-d array (the standard defines `T` for 2-d only).
    #[getter(T)]
    fn transpose(&self, py: Python<'_>) -> PyResult<PyArray> {
        if self.inner.ndim() != 2 {
            return Err(PyValueError::new_err(format!(
                "T needs a 2-d array, got {} dimensions; use permute_dims or mT",
                self.inner.ndim()
            )));
        }
        self.matrix_transpose(py)
    }

    /// The transpose of the last two axes (a view).
    #[getter(mT)]
    fn matrix_transpose(&self, py: Python<'_>) -> PyResult<PyArray> {
        let a = &self.inner;
        compute(py, || a.matrix_transpose()).map(PyArray::from)
    }

    /// The array on `device`: itself on its own device, else a copy (or a
    /// view of the same memory where anydev's unified memory allows).
    /// `stream` (an `anydev.accelerator.Stream` of either device) is the
    /// stream the copy is ordered on there.
    /// `memory` (an anydev extension: "device", "host_pinned", "managed",
    /// "system") asks for a copy in that kind of memory unless the array
    /// is there already.
    #[pyo3(signature = (device, /, *, stream = None, memory = None))]
    fn to_device(
        &self,
        py: Python<'_>,
        device: PyDevice,
        stream: Option<Bound<'_, PyAny>>,
        memory: Option<&str>,
    ) -> PyResult<PyArray> {
        let a = &self.inner;
        let stream = stream.map(|s| copy_stream(&s, a.device(), device.0)).transpose()?;
        let kind: Option<MemoryKind> = memory.map(str::parse).transpose().map_err(to_py)?;
        compute(py, || {
            let _on = stream.as_ref().map(StreamGuard::new);
            match kind {
                Some(kind) => a.to_device_in(device.0, kind),
                None => a.to_device(device.0),
            }
        })
        .map(PyArray::from)
    }

    /// The kind of memory the array lives in: "device", "host_pinned",
    /// "managed" or "system".
    #[getter]
    fn memory_kind(&self) -> String {
        self.inner.memory_kind().to_string()
    }

    /// Starts moving the array's managed memory to `device` (a hint; it
    /// does nothing for other memory, or where the device's
    /// `managed_prefetch` capability is false).
    fn prefetch(&self, py: Python<'_>, device: PyDevice) -> PyResult<()> {
        let a = &self.inner;
        compute(py, || a.prefetch(device.0))
    }

    /// The `anydev` module for its own revision of the standard and the
    /// earlier ones, whose functions it also has (as NumPy answers for
    /// the revisions it knows); any other `api_version` is a `ValueError`.
    #[pyo3(signature = (*, api_version = None))]
    fn __array_namespace__<'py>(&self, py: Python<'py>, api_version: Option<&str>) -> PyResult<Bound<'py, PyModule>> {
        const EARLIER: [&str; 4] = ["2021.12", "2022.12", "2023.12", "2024.12"];
        let module = py.import("anydev")?;
        let ours: String = module.getattr("__array_api_version__")?.extract()?;
        match api_version {
            Some(v) if v != ours && !EARLIER.contains(&v) => Err(PyValueError::new_err(format!(
                "anydev implements Array API version {ours} and the earlier {}, not {v}",
                EARLIER.join(", ")
            ))),
            _ => Ok(module),
        }
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        self.item_as(py, "bool")?.extract(py)
    }

    fn __int__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.item_as(py, "int")
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.item_as(py, "float")
    }

    fn __complex__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.item_as(py, "complex")
    }

    /// Integer arrays only, as `operator.index` requires.
    fn __index__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if !self.inner.dtype().is_integer() {
            return Err(PyTypeError::new_err(format!(
                "only integer arrays can be used as an index, not {}",
                python_name(self.inner.dtype())
            )));
        }
        self.item(py, "__index__")
    }

    fn __len__(&self) -> PyResult<usize> {
        self.inner
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d array"))
    }

    /// `x[0]`, `x[1]`, ... along the first axis, as NumPy iterates. Without
    /// this, Python would iterate through `__getitem__` until an
    /// `IndexError`, and a 0-d array would silently give nothing.
    fn __iter__(slf: Bound<'_, Self>) -> PyResult<ArrayIterator> {
        let len = slf
            .get()
            .inner
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("iteration over a 0-d array"))?;
        Ok(ArrayIterator {
            array: slf.unbind(),
            next: 0,
            len,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let a = &self.inner;
        let keywords = [
            format!("dtype={}", python_name(a.dtype())),
            format!("device='{}'", a.device()),
        ];
        // Printing reads the values back, outside the interpreter's lock.
        Ok(py.detach(|| anydev::array_repr(a, "anydev.Array(", &keywords)))
    }

    /// `format(x, spec)` as NumPy's: a 0-d array formats its element as
    /// the Python scalar does (`f"{loss:.4f}"`); the empty spec is
    /// `str(x)`; any other spec on a larger array is a `TypeError`.
    fn __format__(&self, py: Python<'_>, spec: &str) -> PyResult<Py<PyAny>> {
        if spec.is_empty() {
            return Ok(self.__str__(py).into_pyobject(py)?.into_any().unbind());
        }
        if self.inner.ndim() != 0 {
            return Err(PyTypeError::new_err(
                "unsupported format string passed to anydev.Array.__format__",
            ));
        }
        let item = self.item(py, "__format__")?;
        Ok(py.import("builtins")?.getattr("format")?.call1((item, spec))?.unbind())
    }

    /// The values alone, as NumPy's `str()` writes them.
    fn __str__(&self, py: Python<'_>) -> String {
        let a = &self.inner;
        py.detach(|| a.to_string())
    }
}

/// The anydev stream `stream` names for a copy from `from` to `to`: a
/// stream of either device.
fn copy_stream(stream: &Bound<'_, PyAny>, from: Device, to: Device) -> PyResult<Stream> {
    let stream = stream
        .cast::<PyStream>()
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "stream must be an anydev.accelerator.Stream or None, not {}",
                stream.get_type()
            ))
        })?
        .get()
        .0
        .clone();
    if stream.device() != from && stream.device() != to {
        return Err(PyValueError::new_err(format!(
            "the stream is on {} but the copy goes from {from} to {to}: pass a stream of one of them",
            stream.device()
        )));
    }
    Ok(stream)
}
