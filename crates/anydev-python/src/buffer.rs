//! `asarray` of objects that speak Python's buffer protocol: `bytes`,
//! `bytearray`, `memoryview`, `array.array`, ctypes arrays, `mmap`.
//!
//! PyO3 reads a buffer directly only where the stable ABI has the buffer
//! API, CPython 3.11 on; the wheel is built for 3.10 up, so the data comes
//! through a `memoryview`: its struct-module `format`, its `shape`, and a
//! C-order copy from `tobytes()`. An import is therefore always a copy.

use anydev::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView};

/// A buffer's elements on the host: little-endian, row-major.
pub struct HostBuffer {
    pub bytes: Vec<u8>,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

/// The contents of `obj` if it exports a buffer, `None` if it does not.
pub fn read(obj: &Bound<'_, PyAny>) -> PyResult<Option<HostBuffer>> {
    let Ok(view) = PyMemoryView::from(obj) else {
        return Ok(None);
    };
    let format: String = view.getattr("format")?.extract()?;
    let itemsize: usize = view.getattr("itemsize")?.extract()?;
    let (dtype, order) = element(&format, itemsize)?;
    let shape: Vec<usize> = view.getattr("shape")?.extract()?;
    let copy = view.call_method0("tobytes")?;
    let mut bytes = copy.cast::<PyBytes>()?.as_bytes().to_vec();
    if order.swapped() {
        // A complex element is two floats, each in the buffer's order.
        let unit = if dtype.is_complex() { itemsize / 2 } else { itemsize };
        bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
    Ok(Some(HostBuffer { bytes, shape, dtype }))
}

/// The byte order a struct-module format states.
#[derive(Clone, Copy)]
enum Order {
    Little,
    Big,
}

impl Order {
    const NATIVE: Order = if cfg!(target_endian = "big") {
        Order::Big
    } else {
        Order::Little
    };

    /// Whether elements need their bytes reversed to be little-endian.
    fn swapped(self) -> bool {
        matches!(self, Order::Big)
    }
}

/// The dtype and byte order of one element of a buffer of `format`.
fn element(format: &str, itemsize: usize) -> PyResult<(DType, Order)> {
    let (order, code) = match format.as_bytes().first() {
        Some(b'@' | b'=') => (Order::NATIVE, &format[1..]),
        Some(b'<') => (Order::Little, &format[1..]),
        Some(b'>' | b'!') => (Order::Big, &format[1..]),
        _ => (Order::NATIVE, format),
    };
    let dtype = match (code, itemsize) {
        ("?", 1) => DType::Bool,
        ("b", 1) => DType::I8,
        ("B", 1) => DType::U8,
        ("e", 2) => DType::F16,
        ("f", 4) => DType::F32,
        ("d", 8) => DType::F64,
        ("Zf", 8) => DType::C64,
        ("Zd", 16) => DType::C128,
        // The C integer types: their width is the buffer's item size.
        ("h" | "i" | "l" | "q" | "n", _) => integer(SIGNED, itemsize).ok_or_else(|| unsupported(format, itemsize))?,
        ("H" | "I" | "L" | "Q" | "N", _) => integer(UNSIGNED, itemsize).ok_or_else(|| unsupported(format, itemsize))?,
        _ => return Err(unsupported(format, itemsize)),
    };
    Ok((dtype, order))
}

const SIGNED: [DType; 4] = [DType::I8, DType::I16, DType::I32, DType::I64];
const UNSIGNED: [DType; 4] = [DType::U8, DType::U16, DType::U32, DType::U64];

/// The integer dtype among `widths` whose items are `itemsize` bytes.
fn integer(widths: [DType; 4], itemsize: usize) -> Option<DType> {
    widths.into_iter().find(|d| d.size() == itemsize)
}

fn unsupported(format: &str, itemsize: usize) -> PyErr {
    PyTypeError::new_err(format!(
        "asarray: a buffer of format {format:?} ({itemsize}-byte items) has no anydev dtype \
         (bool, integers, float16/32/64 and complex64/128 do)"
    ))
}

/// `copy=False` for a buffer: it is read through a copy.
pub fn copy_refused() -> PyErr {
    PyValueError::new_err(
        "asarray(copy=False): a buffer-protocol object is read through memoryview.tobytes, a copy; \
         export it with DLPack (e.g. numpy.asarray first) to share its memory",
    )
}
