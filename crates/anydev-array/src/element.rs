//! The Rust element types that can cross into and out of arrays.
//!
//! [`Element`] ties each of the 15 Rust types to its [`DType`] and to the
//! little-endian byte layout every backend uses for host transfers, so
//! `from_slice` and `to_vec` need no `unsafe` and no per-dtype code at the
//! call site.

use anydev_ops::{DType, Scalar};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is one of the 15 dtypes. Sealed: the set of dtypes is
/// the op set's, not open.
pub trait Element: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static + sealed::Sealed {
    const DTYPE: DType;

    /// The value as a [`Scalar`] of [`Element::DTYPE`].
    fn to_scalar(self) -> Scalar;

    /// The value of a scalar of exactly this dtype.
    fn from_scalar(s: Scalar) -> Option<Self>;

    /// Appends the value's little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);

    /// Reads one value from exactly `DTYPE.size()` little-endian bytes.
    fn get_le(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}

        impl Element for $t {
            const DTYPE: DType = DType::$variant;

            fn to_scalar(self) -> Scalar {
                Scalar::$variant(self)
            }

            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::$variant(v) => Some(v),
                    _ => None,
                }
            }

            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            fn get_le(bytes: &[u8]) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$t>()];
                raw.copy_from_slice(bytes);
                <$t>::from_le_bytes(raw)
            }
        }
    )*};
}

element!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f16 => F16, bf16 => BF16, f32 => F32, f64 => F64,
);

/// Complex numbers: the real part's bytes, then the imaginary part's.
macro_rules! complex_element {
    ($($t:ty => $variant:ident, $part:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}

        impl Element for $t {
            const DTYPE: DType = DType::$variant;

            fn to_scalar(self) -> Scalar {
                Scalar::$variant(self)
            }

            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::$variant(v) => Some(v),
                    _ => None,
                }
            }

            fn put_le(self, out: &mut Vec<u8>) {
                self.re.put_le(out);
                self.im.put_le(out);
            }

            fn get_le(bytes: &[u8]) -> Self {
                let (re, im) = bytes.split_at(std::mem::size_of::<$part>());
                <$t>::new(<$part>::get_le(re), <$part>::get_le(im))
            }
        }
    )*};
}

complex_element!(Complex32 => C64, f32, Complex64 => C128, f64);

impl sealed::Sealed for bool {}

impl Element for bool {
    const DTYPE: DType = DType::Bool;

    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }

    fn from_scalar(s: Scalar) -> Option<Self> {
        match s {
            Scalar::Bool(v) => Some(v),
            _ => None,
        }
    }

    fn put_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }

    fn get_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// Little-endian bytes of `values`, as backends expect them from the host.
pub(crate) fn to_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::DTYPE.size());
    for &v in values {
        v.put_le(&mut out);
    }
    out
}

/// Values of `T` from little-endian bytes (a whole number of elements).
pub(crate) fn from_bytes<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::DTYPE.size()).map(T::get_le).collect()
}

/// One element of any dtype from its little-endian bytes.
pub(crate) fn scalar_from_bytes(dtype: DType, bytes: &[u8]) -> Scalar {
    let mut raw = [0u8; 16];
    raw[..bytes.len()].copy_from_slice(bytes);
    Scalar::from_bits(dtype, u128::from_le_bytes(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_for_every_element_type() {
        fn check<T: Element>(values: &[T]) {
            let bytes = to_bytes(values);
            assert_eq!(bytes.len(), values.len() * T::DTYPE.size());
            assert_eq!(from_bytes::<T>(&bytes), values);
            for (v, chunk) in values.iter().zip(bytes.chunks(T::DTYPE.size())) {
                assert_eq!(scalar_from_bytes(T::DTYPE, chunk).to_bits(), v.to_scalar().to_bits());
            }
        }
        check(&[true, false]);
        check(&[i8::MIN, -1, i8::MAX]);
        check(&[i16::MIN, i16::MAX]);
        check(&[i32::MIN, 7]);
        check(&[i64::MIN, i64::MAX]);
        check(&[0u8, 255]);
        check(&[u16::MAX]);
        check(&[u32::MAX]);
        check(&[u64::MAX, 0]);
        check(&[f16::from_f32(1.5), f16::NEG_INFINITY]);
        check(&[bf16::from_f32(-2.0)]);
        check(&[
            Complex32::new(1.5, -0.0),
            Complex32::new(f32::NEG_INFINITY, f32::INFINITY),
        ]);
        check(&[Complex64::new(-2.0, 1e300)]);
        check(&[f32::INFINITY, 0.1]);
        check(&[f64::MIN_POSITIVE, -0.0]);
    }
}
