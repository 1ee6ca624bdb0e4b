use crate::DType;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::fmt;

/// A value of one dtype, used as the scalar operand of the array-scalar
/// forms of binary ops, `where` and `fill`. Scalars live on no device
/// (placement rule 4): backends receive them by value with the op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
    C64(Complex32),
    C128(Complex64),
}

impl Scalar {
    pub const fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::I8(_) => DType::I8,
            Scalar::I16(_) => DType::I16,
            Scalar::I32(_) => DType::I32,
            Scalar::I64(_) => DType::I64,
            Scalar::U8(_) => DType::U8,
            Scalar::U16(_) => DType::U16,
            Scalar::U32(_) => DType::U32,
            Scalar::U64(_) => DType::U64,
            Scalar::F16(_) => DType::F16,
            Scalar::BF16(_) => DType::BF16,
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
            Scalar::C64(_) => DType::C64,
            Scalar::C128(_) => DType::C128,
        }
    }

    /// The value's bytes in the dtype's native little-endian layout
    /// (complex: real part in the low half), zero-extended to 128 bits.
    /// The plugin ABI carries the low 64 bits: a backend never receives a
    /// `c128` scalar (the array layer passes those as arrays).
    pub fn to_bits(self) -> u128 {
        match self {
            Scalar::Bool(v) => v as u128,
            Scalar::I8(v) => v as u8 as u128,
            Scalar::I16(v) => v as u16 as u128,
            Scalar::I32(v) => v as u32 as u128,
            Scalar::I64(v) => v as u64 as u128,
            Scalar::U8(v) => v as u128,
            Scalar::U16(v) => v as u128,
            Scalar::U32(v) => v as u128,
            Scalar::U64(v) => v as u128,
            Scalar::F16(v) => v.to_bits() as u128,
            Scalar::BF16(v) => v.to_bits() as u128,
            Scalar::F32(v) => v.to_bits() as u128,
            Scalar::F64(v) => v.to_bits() as u128,
            Scalar::C64(v) => (v.re.to_bits() as u128) | ((v.im.to_bits() as u128) << 32),
            Scalar::C128(v) => (v.re.to_bits() as u128) | ((v.im.to_bits() as u128) << 64),
        }
    }

    /// Inverse of [`Scalar::to_bits`]; bits above the dtype's size are ignored.
    pub fn from_bits(dtype: DType, bits: u128) -> Scalar {
        match dtype {
            DType::Bool => Scalar::Bool(bits & 0xff != 0),
            DType::I8 => Scalar::I8(bits as u8 as i8),
            DType::I16 => Scalar::I16(bits as u16 as i16),
            DType::I32 => Scalar::I32(bits as u32 as i32),
            DType::I64 => Scalar::I64(bits as u64 as i64),
            DType::U8 => Scalar::U8(bits as u8),
            DType::U16 => Scalar::U16(bits as u16),
            DType::U32 => Scalar::U32(bits as u32),
            DType::U64 => Scalar::U64(bits as u64),
            DType::F16 => Scalar::F16(f16::from_bits(bits as u16)),
            DType::BF16 => Scalar::BF16(bf16::from_bits(bits as u16)),
            DType::F32 => Scalar::F32(f32::from_bits(bits as u32)),
            DType::F64 => Scalar::F64(f64::from_bits(bits as u64)),
            DType::C64 => Scalar::C64(Complex32::new(
                f32::from_bits(bits as u32),
                f32::from_bits((bits >> 32) as u32),
            )),
            DType::C128 => Scalar::C128(Complex64::new(
                f64::from_bits(bits as u64),
                f64::from_bits((bits >> 64) as u64),
            )),
        }
    }

    /// The value's native little-endian bytes (`dtype().size()` of them).
    pub fn to_le_bytes(self) -> Vec<u8> {
        self.to_bits().to_le_bytes()[..self.dtype().size()].to_vec()
    }

    /// The value as `f64` (exact for every dtype but the 64-bit integers
    /// beyond 2^53; complex: the real part).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(v) => v as u8 as f64,
            Scalar::I8(v) => v as f64,
            Scalar::I16(v) => v as f64,
            Scalar::I32(v) => v as f64,
            Scalar::I64(v) => v as f64,
            Scalar::U8(v) => v as f64,
            Scalar::U16(v) => v as f64,
            Scalar::U32(v) => v as f64,
            Scalar::U64(v) => v as f64,
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::F32(v) => v as f64,
            Scalar::F64(v) => v,
            Scalar::C64(v) => v.re as f64,
            Scalar::C128(v) => v.re,
        }
    }

    /// The value as a complex number of `f64`s (exact where
    /// [`Scalar::to_f64`] is; real dtypes have a zero imaginary part).
    pub fn to_c128(self) -> Complex64 {
        match self {
            Scalar::C64(v) => Complex64::new(v.re as f64, v.im as f64),
            Scalar::C128(v) => v,
            real => Complex64::new(real.to_f64(), 0.0),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(v) => write!(f, "{v}"),
            Scalar::I8(v) => write!(f, "{v}"),
            Scalar::I16(v) => write!(f, "{v}"),
            Scalar::I32(v) => write!(f, "{v}"),
            Scalar::I64(v) => write!(f, "{v}"),
            Scalar::U8(v) => write!(f, "{v}"),
            Scalar::U16(v) => write!(f, "{v}"),
            Scalar::U32(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
            Scalar::F16(v) => write!(f, "{v}"),
            Scalar::BF16(v) => write!(f, "{v}"),
            Scalar::F32(v) => write!(f, "{v}"),
            Scalar::F64(v) => write!(f, "{v}"),
            Scalar::C64(v) => write!(f, "{v}"),
            Scalar::C128(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_for_every_dtype() {
        let values = [
            Scalar::Bool(true),
            Scalar::I8(-3),
            Scalar::I16(-300),
            Scalar::I32(-70_000),
            Scalar::I64(i64::MIN),
            Scalar::U8(200),
            Scalar::U16(60_000),
            Scalar::U32(4_000_000_000),
            Scalar::U64(u64::MAX),
            Scalar::F16(f16::from_f32(-1.5)),
            Scalar::BF16(bf16::from_f32(3.25)),
            Scalar::F32(-0.0),
            Scalar::F64(f64::MIN_POSITIVE),
            Scalar::C64(Complex32::new(1.5, -0.0)),
            Scalar::C128(Complex64::new(f64::NAN, f64::INFINITY)),
        ];
        for v in values {
            let back = Scalar::from_bits(v.dtype(), v.to_bits());
            assert_eq!(back.to_bits(), v.to_bits(), "{v:?}");
            assert!(
                v.to_bits().checked_shr(8 * v.dtype().size() as u32).unwrap_or(0) == 0,
                "{v:?} has bits above its size"
            );
            assert_eq!(v.to_le_bytes().len(), v.dtype().size());
        }
        assert_eq!(Scalar::I8(-1).to_bits(), 0xff, "sign must not leak into high bits");
        assert_eq!(Scalar::I64(-1).to_bits(), u64::MAX as u128);
    }
}
