//! `astype`, and the ops that only move bytes: copy, fill and where.
//!
//! Byte movers are dispatched on the element *size* (1, 2, 4, 8 or 16
//! bytes) rather than the dtype: moving an `i16` or an `f16` is the same
//! work, and so is moving a `c64` or a `u64`.

use crate::dispatch::{with_any, with_size};
use crate::element::{cast as cast_one, Storage};
use crate::error::{invalid, KernelError};
use crate::iter::GRAIN_CHEAP;
use crate::map::{map1, map3, Src};
use crate::tensor::HostTensor;
use anydev_ops::{DType, Operand, Scalar};

/// The dtype of the unsigned integer of `dtype`'s size.
fn bits_dtype(dtype: DType) -> DType {
    match dtype.size() {
        1 => DType::U8,
        2 => DType::U16,
        4 => DType::U32,
        8 => DType::U64,
        _ => DType::C128,
    }
}

/// A 16-byte element (c128) as plain bits, aligned like its components.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub(crate) struct B128([u64; 2]);

impl Storage for B128 {
    const DTYPE: DType = DType::C128;
    /// Never a scalar: the byte movers take theirs as bits
    /// ([`Bits::from_bits`]), and no c128 scalar reaches a kernel.
    fn from_scalar(_: Scalar) -> Option<Self> {
        None
    }
}

/// The plain-bits types of the byte movers.
pub(crate) trait Bits: Storage {
    /// The low `size_of::<Self>()` bytes of a scalar's bit pattern.
    fn from_bits(b: u128) -> Self;
}

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            #[inline(always)]
            fn from_bits(b: u128) -> Self {
                b as $t
            }
        }
    )*};
}
bits!(u8, u16, u32, u64);

impl Bits for B128 {
    fn from_bits(b: u128) -> Self {
        B128([b as u64, (b >> 64) as u64])
    }
}

/// The same operand, seen as unsigned integers of its element size.
fn as_bits<'a>(t: &HostTensor<'a>) -> HostTensor<'a> {
    HostTensor {
        dtype: bits_dtype(t.dtype),
        ..*t
    }
}

/// A scalar's bit pattern as an element of its size class.
fn scalar_bits<T: Bits>(s: Scalar) -> T {
    T::from_bits(s.to_bits())
}

/// An operand of a byte mover as bits of its size class.
fn bits_src<'a, T: Bits>(o: &Operand<HostTensor<'a>>) -> Src<'a, T> {
    match o {
        Operand::Tensor(t) => Src::Tensor(as_bits(t)),
        Operand::Scalar(s) => Src::Value(scalar_bits::<T>(*s)),
    }
}

/// `out = x as out.dtype` (rules in [`crate::element::Element`]).
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn cast(x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    if x.dtype == out.dtype {
        // SAFETY: forwarded from the caller.
        return unsafe { copy(x, out) };
    }
    if x.dtype.is_complex() || out.dtype.is_complex() {
        // SAFETY: forwarded from the caller.
        return unsafe { crate::complex::cast(x, out) };
    }
    with_any!(x.dtype, |S| with_any!(out.dtype, |D| {
        // SAFETY: forwarded from the caller.
        unsafe { map1(Src::<S>::Tensor(*x), out, GRAIN_CHEAP, cast_one::<S, D>) }
    }))
}

/// Strided copy between two layouts of one dtype.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn copy(x: &HostTensor, out: &HostTensor) -> Result<(), KernelError> {
    if x.dtype != out.dtype {
        return invalid(format!("copy from {} to {}", x.dtype, out.dtype));
    }
    with_size!(x.dtype.size(), |T| {
        // SAFETY: forwarded from the caller.
        unsafe { map1(Src::<T>::Tensor(as_bits(x)), &as_bits(out), GRAIN_CHEAP, |v: T| v) }
    })
}

/// Sets every element of `out` to `value`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn fill(out: &HostTensor, value: Scalar) -> Result<(), KernelError> {
    if value.dtype() != out.dtype {
        return invalid(format!(
            "fill value {value} is {}, output is {}",
            value.dtype(),
            out.dtype
        ));
    }
    with_size!(out.dtype.size(), |T| {
        let v: T = scalar_bits(value);
        // SAFETY: forwarded from the caller.
        unsafe { map1(Src::Value(v), &as_bits(out), GRAIN_CHEAP, |v: T| v) }
    })
}

/// `out = cond ? x : y`.
///
/// # Safety
/// As for [`crate::execute`].
pub(crate) unsafe fn select(
    cond: &HostTensor,
    x: &Operand<HostTensor>,
    y: &Operand<HostTensor>,
    out: &HostTensor,
) -> Result<(), KernelError> {
    if x.dtype() != out.dtype || y.dtype() != out.dtype {
        return invalid(format!(
            "where: x is {}, y is {}, output is {}",
            x.dtype(),
            y.dtype(),
            out.dtype
        ));
    }
    with_size!(out.dtype.size(), |T| {
        let f = |c: bool, a: T, b: T| if c { a } else { b };
        // SAFETY: forwarded from the caller.
        unsafe {
            map3(
                Src::<bool>::Tensor(*cond),
                bits_src::<T>(x),
                bits_src::<T>(y),
                &as_bits(out),
                GRAIN_CHEAP,
                f,
            )
        }
    })
}
