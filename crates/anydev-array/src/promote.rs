//! Type promotion: the Array API standard's table for array-array pairs,
//! NumPy 2 (NEP 50) where the standard leaves mixed kinds to the
//! implementation, and "weak" Rust scalars.
//!
//! Choices, all following NumPy 2:
//! - bool with anything gives the other dtype;
//! - `u64` with any signed integer gives `f64` (no integer holds both);
//! - integer with float gives the smallest float of at least the float's
//!   size that holds the integer exactly enough: 8-bit integers keep
//!   `f16`/`bf16`, 16-bit ones need `f32`, 32- and 64-bit ones `f64`;
//! - `f16` with `bf16` gives `f32` (neither holds the other);
//! - a complex dtype with a real one gives the complex dtype whose
//!   components hold the real promotion of the two (`c64` with `f64` is
//!   `c128`, `c64` with `i32` is `c128`, `c64` with `i16` or `f16` stays
//!   `c64`).
//!
//! Rust scalars are weak: they adopt the array's dtype when their kind is
//! no "higher" (bool < int < float) and their value fits, and fail with an
//! error when it does not (`300` with a `u8` array). A float scalar with an
//! integer or bool array gives the default float dtype, `f64`, exactly as a
//! Python float does in NumPy 2; an integer scalar with a bool array gives
//! the default integer dtype, `i64`. A complex scalar with a real array
//! gives the complex dtype of the array's float (`c64` for `f32`, `f16`
//! and `bf16` arrays, the default complex dtype for integer and bool
//! arrays), as in NumPy 2.

use anydev_core::{DType, Error, Result, Scalar};
use anydev_ops::DTypeKind;
use half::{bf16, f16};

/// The default floating-point dtype of a device that holds every dtype
/// (float scalars meeting integer arrays, `mean` of integers); a device
/// narrows it to what it holds ([`crate::default_dtypes`]).
pub const DEFAULT_FLOAT: DType = DType::F64;

/// The default integer dtype of a device that holds every dtype (`sum` of
/// signed integers); a device narrows it to what it holds.
pub const DEFAULT_INT: DType = DType::I64;

/// The default complex dtype of a device that holds every dtype.
pub const DEFAULT_COMPLEX: DType = DType::C128;

/// The dtype two arrays of dtypes `a` and `b` promote to.
pub fn result_type(a: DType, b: DType) -> DType {
    use DTypeKind::*;
    if a == b {
        return a;
    }
    if a.is_complex() || b.is_complex() {
        // Promote the components (a complex dtype's is its real dtype),
        // then make the result complex.
        return complex_of(result_type(a.real_dtype(), b.real_dtype()));
    }
    match (a.kind(), b.kind()) {
        (Bool, _) => b,
        (_, Bool) => a,
        (SignedInt, SignedInt) | (UnsignedInt, UnsignedInt) | (Float, Float) if a.size() != b.size() => {
            if a.size() > b.size() {
                a
            } else {
                b
            }
        }
        // Same size, different floats: f16 and bf16.
        (Float, Float) => DType::F32,
        (SignedInt, UnsignedInt) => mixed_int(a, b),
        (UnsignedInt, SignedInt) => mixed_int(b, a),
        (Float, _) => int_float(b, a),
        (_, Float) => int_float(a, b),
        _ => unreachable!("every kind pair is covered"),
    }
}

/// The complex dtype whose components hold `real` (an integer or float
/// promotion result).
fn complex_of(real: DType) -> DType {
    real.complex_dtype().unwrap_or(DEFAULT_COMPLEX)
}

/// A signed and an unsigned integer: the smallest signed integer holding
/// both, or `f64` when that would need more than 64 bits.
fn mixed_int(signed: DType, unsigned: DType) -> DType {
    let needed = signed.size().max(unsigned.size() * 2);
    match needed {
        1 | 2 => DType::I16,
        4 => DType::I32,
        8 => DType::I64,
        _ => DType::F64,
    }
}

/// An integer (or bool, handled earlier) with a float.
fn int_float(int: DType, float: DType) -> DType {
    let needed = match int.size() {
        1 => float,
        2 => DType::F32,
        _ => DType::F64,
    };
    if needed == float {
        return float;
    }
    // The larger of `needed` and `float`; f16/bf16 never win against f32.
    if needed.size() >= float.size() {
        needed
    } else {
        float
    }
}

/// The dtype of several arrays together (`None` for none).
pub fn result_type_all(dtypes: impl IntoIterator<Item = DType>) -> Option<DType> {
    dtypes.into_iter().reduce(result_type)
}

/// A Rust scalar operand before it meets an array: it has a kind and a
/// value but no dtype yet (NEP 50's "weak" Python scalars).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weak {
    Bool(bool),
    Int(i128),
    Float(f64),
    /// A complex number: real and imaginary parts.
    Complex(f64, f64),
}

macro_rules! weak_from {
    ($variant:ident: $($t:ty),*) => {$(
        impl From<$t> for Weak {
            fn from(v: $t) -> Weak {
                Weak::$variant(v.into())
            }
        }
    )*};
}

weak_from!(Bool: bool);
weak_from!(Int: i8, i16, i32, i64, u8, u16, u32, u64);
weak_from!(Float: f32, f64);

impl From<isize> for Weak {
    fn from(v: isize) -> Weak {
        Weak::Int(v as i128)
    }
}

impl From<usize> for Weak {
    fn from(v: usize) -> Weak {
        Weak::Int(v as i128)
    }
}

impl From<f16> for Weak {
    fn from(v: f16) -> Weak {
        Weak::Float(v.to_f64())
    }
}

impl From<bf16> for Weak {
    fn from(v: bf16) -> Weak {
        Weak::Float(v.to_f64())
    }
}

impl From<num_complex::Complex32> for Weak {
    fn from(v: num_complex::Complex32) -> Weak {
        Weak::Complex(v.re.into(), v.im.into())
    }
}

impl From<num_complex::Complex64> for Weak {
    fn from(v: num_complex::Complex64) -> Weak {
        Weak::Complex(v.re, v.im)
    }
}

impl From<Scalar> for Weak {
    /// A typed scalar loses its dtype and keeps its kind and value.
    fn from(s: Scalar) -> Weak {
        match s {
            Scalar::Bool(v) => Weak::Bool(v),
            Scalar::I8(v) => Weak::Int(v.into()),
            Scalar::I16(v) => Weak::Int(v.into()),
            Scalar::I32(v) => Weak::Int(v.into()),
            Scalar::I64(v) => Weak::Int(v.into()),
            Scalar::U8(v) => Weak::Int(v.into()),
            Scalar::U16(v) => Weak::Int(v.into()),
            Scalar::U32(v) => Weak::Int(v.into()),
            Scalar::U64(v) => Weak::Int(v.into()),
            Scalar::C64(_) | Scalar::C128(_) => {
                let c = s.to_c128();
                Weak::Complex(c.re, c.im)
            }
            other => Weak::Float(other.to_f64()),
        }
    }
}

impl Weak {
    /// The dtype the scalar would have on its own: `bool`, the default
    /// integer or the default float.
    pub fn natural_dtype(self) -> DType {
        match self {
            Weak::Bool(_) => DType::Bool,
            Weak::Int(_) => DEFAULT_INT,
            Weak::Float(_) => DEFAULT_FLOAT,
            Weak::Complex(..) => DEFAULT_COMPLEX,
        }
    }

    /// The value as `f64` (bool as 0 or 1; integers beyond 2^53 rounded;
    /// complex: the real part).
    pub fn as_f64(self) -> f64 {
        match self {
            Weak::Bool(v) => v as u8 as f64,
            Weak::Int(v) => v as f64,
            Weak::Float(v) => v,
            Weak::Complex(re, _) => re,
        }
    }

    /// Whether the value is non-zero (`x != 0`, as `logical_*` read it).
    pub fn is_nonzero(self) -> bool {
        match self {
            Weak::Complex(re, im) => re != 0.0 || im != 0.0,
            other => other.as_f64() != 0.0,
        }
    }

    /// The dtype of `array_dtype` meeting this scalar.
    pub fn promote_with(self, array_dtype: DType) -> DType {
        match (self, array_dtype.kind()) {
            (Weak::Int(_), DTypeKind::Bool) => DEFAULT_INT,
            (Weak::Float(_), DTypeKind::Bool | DTypeKind::SignedInt | DTypeKind::UnsignedInt) => DEFAULT_FLOAT,
            (Weak::Complex(..), DTypeKind::Float) => complex_of(array_dtype),
            (Weak::Complex(..), DTypeKind::Bool | DTypeKind::SignedInt | DTypeKind::UnsignedInt) => DEFAULT_COMPLEX,
            _ => array_dtype,
        }
    }

    /// The value as a scalar of `dtype`, or an error naming `op` when it
    /// does not fit (integers out of range, floats into integers).
    pub fn to_scalar(self, op: &str, dtype: DType) -> Result<Scalar> {
        let value = match self {
            Weak::Bool(v) => Some(Scalar::Bool(v))
                .filter(|_| dtype == DType::Bool)
                .or_else(|| int_scalar(v as i128, dtype)),
            Weak::Int(v) => int_scalar(v, dtype),
            Weak::Float(v) if dtype.is_inexact() => Some(float_scalar(v, dtype)),
            Weak::Float(_) => None,
            Weak::Complex(re, im) => complex_scalar(re, im, dtype),
        };
        value.ok_or_else(|| Error::InvalidDType {
            op: op.to_owned(),
            dtype,
            reason: format!(
                "the scalar {} does not fit in {dtype}; use a value in range or cast the array with astype first",
                self
            ),
        })
    }
}

impl std::fmt::Display for Weak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Weak::Bool(v) => write!(f, "{v}"),
            Weak::Int(v) => write!(f, "{v}"),
            Weak::Float(v) => write!(f, "{v:?}"),
            Weak::Complex(re, im) => write!(f, "({re:?}{im:+?}j)"),
        }
    }
}

/// An integer value as a scalar of `dtype`, when it is representable
/// (floats take any integer, rounding to nearest; bool takes none).
fn int_scalar(v: i128, dtype: DType) -> Option<Scalar> {
    Some(match dtype {
        DType::Bool => return None,
        DType::I8 => Scalar::I8(v.try_into().ok()?),
        DType::I16 => Scalar::I16(v.try_into().ok()?),
        DType::I32 => Scalar::I32(v.try_into().ok()?),
        DType::I64 => Scalar::I64(v.try_into().ok()?),
        DType::U8 => Scalar::U8(v.try_into().ok()?),
        DType::U16 => Scalar::U16(v.try_into().ok()?),
        DType::U32 => Scalar::U32(v.try_into().ok()?),
        DType::U64 => Scalar::U64(v.try_into().ok()?),
        float => float_scalar(v as f64, float),
    })
}

/// The smallest and largest value of an integer dtype; `None` for the
/// others.
pub fn int_limits(dtype: DType) -> Option<(i128, i128)> {
    Some(match dtype {
        DType::I8 => (i8::MIN.into(), i8::MAX.into()),
        DType::I16 => (i16::MIN.into(), i16::MAX.into()),
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::I64 => (i64::MIN.into(), i64::MAX.into()),
        DType::U8 => (0, u8::MAX.into()),
        DType::U16 => (0, u16::MAX.into()),
        DType::U32 => (0, u32::MAX.into()),
        DType::U64 => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// A value as a scalar of `dtype`, converted the way `astype` converts:
/// floats round to nearest, integers truncate toward zero and saturate
/// (NaN gives 0), bool is `!= 0`.
pub fn float_scalar(v: f64, dtype: DType) -> Scalar {
    match dtype {
        DType::Bool => Scalar::Bool(v != 0.0),
        DType::I8 => Scalar::I8(v as i8),
        DType::I16 => Scalar::I16(v as i16),
        DType::I32 => Scalar::I32(v as i32),
        DType::I64 => Scalar::I64(v as i64),
        DType::U8 => Scalar::U8(v as u8),
        DType::U16 => Scalar::U16(v as u16),
        DType::U32 => Scalar::U32(v as u32),
        DType::U64 => Scalar::U64(v as u64),
        DType::F16 => Scalar::F16(anydev_ops::f16_from_f64(v)),
        DType::BF16 => Scalar::BF16(anydev_ops::bf16_from_f64(v)),
        DType::F32 => Scalar::F32(v as f32),
        DType::F64 => Scalar::F64(v),
        DType::C64 => Scalar::C64(num_complex::Complex32::new(v as f32, 0.0)),
        DType::C128 => Scalar::C128(num_complex::Complex64::new(v, 0.0)),
    }
}

/// A complex value as a scalar of the complex `dtype` (`None` for a real
/// dtype: dropping the imaginary part is never implicit).
pub fn complex_scalar(re: f64, im: f64, dtype: DType) -> Option<Scalar> {
    match dtype {
        DType::C64 => Some(Scalar::C64(num_complex::Complex32::new(re as f32, im as f32))),
        DType::C128 => Some(Scalar::C128(num_complex::Complex64::new(re, im))),
        _ => None,
    }
}

/// The largest finite value (`max = true`) or the lowest value of `dtype`,
/// as f64. Used for identities and clipping bounds.
pub fn dtype_limit(dtype: DType, max: bool) -> f64 {
    let (lo, hi) = match dtype {
        DType::Bool => (0.0, 1.0),
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::U8 => (0.0, u8::MAX as f64),
        DType::U16 => (0.0, u16::MAX as f64),
        DType::U32 => (0.0, u32::MAX as f64),
        DType::U64 => (0.0, u64::MAX as f64),
        DType::F16 => (f16::MIN.to_f64(), f16::MAX.to_f64()),
        DType::BF16 => (bf16::MIN.to_f64(), bf16::MAX.to_f64()),
        DType::F32 => (f32::MIN as f64, f32::MAX as f64),
        DType::F64 | DType::C128 => (f64::MIN, f64::MAX),
        // Complex dtypes are not ordered: the limits of a component.
        DType::C64 => (f32::MIN as f64, f32::MAX as f64),
    };
    if max {
        hi
    } else {
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_is_symmetric() {
        for a in DType::ALL {
            for b in DType::ALL {
                assert_eq!(result_type(a, b), result_type(b, a), "{a} {b}");
            }
        }
    }

    #[test]
    fn weak_scalars_adopt_the_array_dtype_when_they_fit() {
        assert_eq!(Weak::from(1).promote_with(DType::U8), DType::U8);
        assert_eq!(Weak::from(1.5).promote_with(DType::I32), DType::F64);
        assert_eq!(Weak::from(1.5f32).promote_with(DType::F16), DType::F16);
        assert_eq!(Weak::from(2).promote_with(DType::Bool), DType::I64);
        assert_eq!(Weak::from(true).promote_with(DType::I8), DType::I8);
        assert_eq!(Weak::from(255).to_scalar("add", DType::U8).unwrap(), Scalar::U8(255));
        let err = Weak::from(300).to_scalar("add", DType::U8).unwrap_err().to_string();
        assert!(err.contains("300") && err.contains("u8"), "{err}");
        assert!(Weak::from(-1).to_scalar("add", DType::U64).is_err());
        assert!(Weak::from(u64::MAX).to_scalar("add", DType::I64).is_err());
        assert_eq!(Weak::from(true).to_scalar("add", DType::F32).unwrap(), Scalar::F32(1.0));
        assert_eq!(
            Weak::from(3).to_scalar("add", DType::F16).unwrap(),
            Scalar::F16(f16::from_f32(3.0))
        );
        assert!(Weak::from(1.0).to_scalar("add", DType::I32).is_err());
    }

    #[test]
    fn complex_promotion_follows_numpy() {
        let cases = [
            (DType::C64, DType::F32, DType::C64),
            (DType::C64, DType::F64, DType::C128),
            (DType::C64, DType::F16, DType::C64),
            (DType::C64, DType::I16, DType::C64),
            (DType::C64, DType::I32, DType::C128),
            (DType::C64, DType::U64, DType::C128),
            (DType::C64, DType::Bool, DType::C64),
            (DType::C64, DType::C128, DType::C128),
            (DType::C128, DType::F32, DType::C128),
        ];
        for (a, b, want) in cases {
            assert_eq!(result_type(a, b), want, "{a} with {b}");
        }
        let j = Weak::Complex(0.0, 1.0);
        assert_eq!(j.promote_with(DType::F32), DType::C64);
        assert_eq!(j.promote_with(DType::F16), DType::C64);
        assert_eq!(j.promote_with(DType::F64), DType::C128);
        assert_eq!(j.promote_with(DType::I8), DType::C128);
        assert_eq!(j.promote_with(DType::C64), DType::C64);
        assert_eq!(Weak::from(2.5).promote_with(DType::C64), DType::C64);
        assert!(
            j.to_scalar("add", DType::F64).is_err(),
            "the imaginary part is never dropped"
        );
        assert_eq!(
            Weak::from(2).to_scalar("add", DType::C64).unwrap(),
            Scalar::C64(num_complex::Complex32::new(2.0, 0.0))
        );
    }
}
