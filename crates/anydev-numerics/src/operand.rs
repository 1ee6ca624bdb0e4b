//! Reading a call: operands as typed slices and attributes as values, each
//! checked, with errors that name the function the user called.

use crate::{AttrLookup, Operand, OperandMut};
use anydev_ops::{AttrValue, DType};
use num_complex::Complex;
use std::fmt;

/// Why a call failed: the function as the user called it (`inv`, `rfft`)
/// and what went wrong (`the matrix is singular`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumericsError {
    pub function: String,
    pub reason: String,
}

impl NumericsError {
    pub fn new(function: impl Into<String>, reason: impl Into<String>) -> NumericsError {
        NumericsError {
            function: function.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for NumericsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.function, self.reason)
    }
}

impl std::error::Error for NumericsError {}

/// The element types the ops compute with, and their dtypes.
pub trait Element: bytemuck::Pod {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $dtype:ident),*) => {
        $(impl Element for $t {
            const DTYPE: DType = DType::$dtype;
        })*
    };
}

element!(f32 => F32, f64 => F64, Complex<f32> => C64, Complex<f64> => C128);

/// Fails unless an operand of `dtype` and `shape` holds `bytes` of `T`.
fn check<T: Element>(function: &str, dtype: DType, shape: &[usize], bytes: usize) -> Result<(), NumericsError> {
    if dtype != T::DTYPE {
        return Err(NumericsError::new(
            function,
            format!("an operand is {dtype}, expected {}", T::DTYPE),
        ));
    }
    let want = shape.iter().product::<usize>() * std::mem::size_of::<T>();
    if bytes != want {
        return Err(NumericsError::new(
            function,
            format!("an operand of shape {shape:?} holds {bytes} bytes, expected {want}"),
        ));
    }
    Ok(())
}

/// The elements of input `x` as `T`.
pub fn slice<'a, T: Element>(function: &str, x: &'a Operand<'_>) -> Result<&'a [T], NumericsError> {
    check::<T>(function, x.dtype, x.shape, x.bytes.len())?;
    bytemuck::try_cast_slice(x.bytes).map_err(|e| NumericsError::new(function, e.to_string()))
}

/// The elements of output `x` as `T`, of which there must be `len`.
pub fn slice_mut<'a, T: Element>(
    function: &str,
    x: &'a mut OperandMut<'_>,
    len: usize,
) -> Result<&'a mut [T], NumericsError> {
    check::<T>(function, x.dtype, x.shape, x.bytes.len())?;
    let out: &mut [T] =
        bytemuck::try_cast_slice_mut(x.bytes).map_err(|e| NumericsError::new(function, e.to_string()))?;
    if out.len() != len {
        return Err(NumericsError::new(
            function,
            format!("an output of {} elements, expected {len}", out.len()),
        ));
    }
    Ok(out)
}

/// A call's `N` inputs, or why it has another number.
pub fn inputs<'a, 'b, const N: usize>(
    function: &str,
    ins: &'a [Operand<'b>],
) -> Result<&'a [Operand<'b>; N], NumericsError> {
    ins.try_into()
        .map_err(|_| NumericsError::new(function, format!("{} inputs, expected {N}", ins.len())))
}

/// A call's `N` outputs, or why it has another number.
pub fn outputs<'a, 'b, const N: usize>(
    function: &str,
    outs: &'a mut [OperandMut<'b>],
) -> Result<&'a mut [OperandMut<'b>; N], NumericsError> {
    let len = outs.len();
    outs.try_into()
        .map_err(|_| NumericsError::new(function, format!("{len} outputs, expected {N}")))
}

fn attribute<'a>(function: &str, attr: &AttrLookup<'a>, name: &str) -> Result<&'a AttrValue, NumericsError> {
    attr(name).ok_or_else(|| NumericsError::new(function, format!("attribute {name} is missing")))
}

fn wrong(function: &str, name: &str, kind: &str, got: &AttrValue) -> NumericsError {
    NumericsError::new(
        function,
        format!("attribute {name} must be {kind}, got {:?}", got.kind()),
    )
}

/// The `Bool` attribute `name`.
pub fn flag(function: &str, attr: &AttrLookup<'_>, name: &str) -> Result<bool, NumericsError> {
    match attribute(function, attr, name)? {
        AttrValue::Bool(b) => Ok(*b),
        other => Err(wrong(function, name, "Bool", other)),
    }
}

/// The `Float` attribute `name`.
pub fn float(function: &str, attr: &AttrLookup<'_>, name: &str) -> Result<f64, NumericsError> {
    match attribute(function, attr, name)? {
        AttrValue::Float(v) => Ok(*v),
        other => Err(wrong(function, name, "Float", other)),
    }
}
