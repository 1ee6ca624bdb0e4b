//! `anydev.quant` (native submodule `anydev._anydev._quant`): the
//! quantization library anydev-quant from Python, over the same extension
//! ops as in Rust, so every device that runs them (kernels for cpu, wgpu
//! and cuda, or a plugin's own) runs them from Python too.
//!
//! The quantized containers are Python classes over the Rust types,
//! constructible from their fields so that data saved elsewhere (a
//! bitsandbytes checkpoint's packed `uint8` and `float32` absmax) can be
//! rebuilt; the ops validate whatever they hold when they run.

use crate::array::PyArray;
use crate::device::{device_of, PyDevice};
use crate::dtype::PyDType;
use crate::errors::{compute, to_py};
use crate::info::creation_device;
use crate::operand::array_arg;
use anydev::Error;
use anydev_quant::formats::check_blocksize;
use anydev_quant::{op, QuantType, Quantized4bit, QuantizedBlockwise};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A block size argument, checked as the ops check it (a power of two
/// from 64 to 4096), so that a negative one is the same `ValueError` and
/// not an integer conversion error.
fn blocksize(op: &str, blocksize: i64) -> PyResult<usize> {
    check_blocksize(blocksize).map_err(|e| to_py(Error::invalid_argument(op, e.0)))
}

fn quant_type(op: &str, name: &str) -> PyResult<QuantType> {
    QuantType::parse(name).map_err(|e| to_py(Error::invalid_argument(op, e.0)))
}

/// An array quantized to 4 bits per element (NF4 or FP4).
#[pyclass(module = "anydev.quant", name = "Quantized4bit", frozen)]
pub struct PyQuantized4bit(Quantized4bit);

#[pymethods]
impl PyQuantized4bit {
    /// Rebuilds quantized data from its fields: `packed` (`uint8`, two
    /// codes per byte, element `2j` in the high nibble), `absmax`
    /// (`float32`, one per block), the original `shape` and `dtype`.
    #[new]
    #[pyo3(signature = (packed, absmax, shape, dtype, blocksize, quant_type))]
    fn new(
        packed: &Bound<'_, PyAny>,
        absmax: &Bound<'_, PyAny>,
        shape: Vec<usize>,
        dtype: PyDType,
        blocksize: i64,
        quant_type: &str,
    ) -> PyResult<Self> {
        let what = "Quantized4bit";
        Ok(PyQuantized4bit(Quantized4bit {
            packed: array_arg(packed)?,
            absmax: array_arg(absmax)?,
            shape,
            dtype: dtype.0,
            blocksize: self::blocksize(what, blocksize)?,
            quant_type: self::quant_type(what, quant_type)?,
        }))
    }

    #[getter]
    fn packed(&self) -> PyArray {
        self.0.packed.clone().into()
    }

    #[getter]
    fn absmax(&self) -> PyArray {
        self.0.absmax.clone().into()
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.shape)
    }

    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType(self.0.dtype)
    }

    #[getter]
    fn blocksize(&self) -> usize {
        self.0.blocksize
    }

    #[getter]
    fn quant_type(&self) -> &'static str {
        self.0.quant_type.name()
    }

    /// The device of the packed codes (where the ops run).
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice(self.0.packed.device())
    }

    fn __repr__(&self) -> String {
        let q = &self.0;
        format!(
            "anydev.quant.Quantized4bit(shape={}, dtype={}, blocksize={}, quant_type='{}', device='{}')",
            anydev::python_tuple(&q.shape),
            crate::dtype::python_name(q.dtype),
            q.blocksize,
            q.quant_type.name(),
            q.packed.device()
        )
    }
}

/// An array quantized to 8 bits per element under a 256-value code.
#[pyclass(module = "anydev.quant", name = "QuantizedBlockwise", frozen)]
pub struct PyQuantizedBlockwise(QuantizedBlockwise);

#[pymethods]
impl PyQuantizedBlockwise {
    /// Rebuilds quantized data from its fields: `q` (`uint8` codes in the
    /// original shape), `absmax` (`float32`, one per block), `code`
    /// (`float32[256]`) and the original `dtype`.
    #[new]
    #[pyo3(signature = (q, absmax, code, dtype, blocksize))]
    fn new(
        q: &Bound<'_, PyAny>,
        absmax: &Bound<'_, PyAny>,
        code: &Bound<'_, PyAny>,
        dtype: PyDType,
        blocksize: i64,
    ) -> PyResult<Self> {
        Ok(PyQuantizedBlockwise(QuantizedBlockwise {
            q: array_arg(q)?,
            absmax: array_arg(absmax)?,
            code: array_arg(code)?,
            dtype: dtype.0,
            blocksize: self::blocksize("QuantizedBlockwise", blocksize)?,
        }))
    }

    #[getter]
    fn q(&self) -> PyArray {
        self.0.q.clone().into()
    }

    #[getter]
    fn absmax(&self) -> PyArray {
        self.0.absmax.clone().into()
    }

    #[getter]
    fn code(&self) -> PyArray {
        self.0.code.clone().into()
    }

    /// The original shape (the codes' shape).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.q.shape())
    }

    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType(self.0.dtype)
    }

    #[getter]
    fn blocksize(&self) -> usize {
        self.0.blocksize
    }

    /// The device of the codes (where the ops run).
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice(self.0.q.device())
    }

    fn __repr__(&self) -> String {
        let q = &self.0;
        format!(
            "anydev.quant.QuantizedBlockwise(shape={}, dtype={}, blocksize={}, device='{}')",
            anydev::python_tuple(q.q.shape()),
            crate::dtype::python_name(q.dtype),
            q.blocksize,
            q.q.device()
        )
    }
}

#[pyfunction]
#[pyo3(signature = (x, /, *, blocksize = 64, quant_type = "nf4"))]
fn quantize_4bit(py: Python<'_>, x: &Bound<'_, PyAny>, blocksize: i64, quant_type: &str) -> PyResult<PyQuantized4bit> {
    let o = op::QUANTIZE_4BIT;
    let (x, blocksize, quant_type) = (
        array_arg(x)?,
        self::blocksize(o, blocksize)?,
        self::quant_type(o, quant_type)?,
    );
    compute(py, || anydev_quant::quantize_4bit(&x, quant_type, blocksize)).map(PyQuantized4bit)
}

#[pyfunction]
#[pyo3(signature = (q, /))]
fn dequantize_4bit(py: Python<'_>, q: PyRef<'_, PyQuantized4bit>) -> PyResult<PyArray> {
    let q = &q.0;
    compute(py, || anydev_quant::dequantize_4bit(q)).map(PyArray::from)
}

#[pyfunction]
#[pyo3(signature = (a, q, /))]
fn gemv_4bit(py: Python<'_>, a: &Bound<'_, PyAny>, q: PyRef<'_, PyQuantized4bit>) -> PyResult<PyArray> {
    let (a, q) = (array_arg(a)?, &q.0);
    compute(py, || anydev_quant::gemv_4bit(&a, q)).map(PyArray::from)
}

/// The 8-bit dynamic map as a `float32[256]` on the creation device.
#[pyfunction]
#[pyo3(signature = (*, device = None))]
fn dynamic_map(py: Python<'_>, device: Option<PyDevice>) -> PyResult<PyArray> {
    compute(py, || anydev_quant::dynamic_map(creation_device(device_of(device))?)).map(PyArray::from)
}

/// Quantizes `x` to 8 bits under `code`, by default the dynamic map on
/// `x`'s device.
#[pyfunction]
#[pyo3(signature = (x, /, *, blocksize = 4096, code = None))]
fn quantize_blockwise(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    blocksize: i64,
    code: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyQuantizedBlockwise> {
    let x = array_arg(x)?;
    let blocksize = self::blocksize(op::QUANTIZE_BLOCKWISE, blocksize)?;
    let code = code.map(array_arg).transpose()?;
    compute(py, || {
        let code = match code {
            Some(c) => c,
            None => anydev_quant::dynamic_map(x.device())?,
        };
        anydev_quant::quantize_blockwise(&x, &code, blocksize)
    })
    .map(PyQuantizedBlockwise)
}

#[pyfunction]
#[pyo3(signature = (q, /))]
fn dequantize_blockwise(py: Python<'_>, q: PyRef<'_, PyQuantizedBlockwise>) -> PyResult<PyArray> {
    let q = &q.0;
    compute(py, || anydev_quant::dequantize_blockwise(q)).map(PyArray::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let module = PyModule::new(m.py(), "_quant")?;
    module.add_class::<PyQuantized4bit>()?;
    module.add_class::<PyQuantizedBlockwise>()?;
    for f in [
        wrap_pyfunction!(quantize_4bit, &module)?,
        wrap_pyfunction!(dequantize_4bit, &module)?,
        wrap_pyfunction!(gemv_4bit, &module)?,
        wrap_pyfunction!(dynamic_map, &module)?,
        wrap_pyfunction!(quantize_blockwise, &module)?,
        wrap_pyfunction!(dequantize_blockwise, &module)?,
    ] {
        module.add_function(f)?;
    }
    m.add_submodule(&module)
}
