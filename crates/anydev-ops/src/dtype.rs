use std::fmt;
use std::str::FromStr;

/// Element type of an array. The discriminants are the stable ABI codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum DType {
    Bool = 1,
    I8 = 2,
    I16 = 3,
    I32 = 4,
    I64 = 5,
    U8 = 6,
    U16 = 7,
    U32 = 8,
    U64 = 9,
    F16 = 10,
    BF16 = 11,
    F32 = 12,
    F64 = 13,
    /// Two `f32`s, real part first (C99 `float _Complex`, NumPy `complex64`).
    C64 = 14,
    /// Two `f64`s, real part first (C99 `double _Complex`, NumPy `complex128`).
    C128 = 15,
}

/// The family a dtype belongs to; promotion and op support are stated per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DTypeKind {
    Bool,
    SignedInt,
    UnsignedInt,
    Float,
    /// Complex floating point: `c64` and `c128`.
    Complex,
}

impl DType {
    /// Every dtype, in code order.
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// The stable numeric code used by the plugin ABI.
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The dtype for an ABI code, or `None` for a code this version does not know.
    pub fn from_code(code: u32) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.code() == code)
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    pub const fn kind(self) -> DTypeKind {
        match self {
            DType::Bool => DTypeKind::Bool,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => DTypeKind::SignedInt,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => DTypeKind::UnsignedInt,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => DTypeKind::Float,
            DType::C64 | DType::C128 => DTypeKind::Complex,
        }
    }

    /// Real floating point (the complex dtypes are not).
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), DTypeKind::Float)
    }

    pub const fn is_complex(self) -> bool {
        matches!(self.kind(), DTypeKind::Complex)
    }

    /// Real or complex floating point: the dtypes of results that are not exact.
    pub const fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The dtype of one component: `f32` for `c64`, `f64` for `c128`, the
    /// dtype itself for every real dtype.
    pub const fn real_dtype(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex dtype whose components hold this float dtype: `c128`
    /// for `f64`, `c64` for the narrower floats, `None` for the rest
    /// (complex dtypes are their own).
    pub const fn complex_dtype(self) -> Option<DType> {
        match self {
            DType::F64 | DType::C128 => Some(DType::C128),
            DType::F16 | DType::BF16 | DType::F32 | DType::C64 => Some(DType::C64),
            _ => None,
        }
    }

    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), DTypeKind::SignedInt | DTypeKind::UnsignedInt)
    }

    pub const fn is_signed(self) -> bool {
        matches!(
            self.kind(),
            DTypeKind::SignedInt | DTypeKind::Float | DTypeKind::Complex
        )
    }

    /// The canonical lower-case name (`"f32"`, `"bf16"`, `"bool"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for a dtype name that is not one of [`DType::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDType(pub String);

impl fmt::Display for UnknownDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = DType::ALL.iter().map(|d| d.name()).collect();
        write!(f, "unknown dtype {:?}; expected one of {}", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownDType {}

impl FromStr for DType {
    type Err = UnknownDType;

    /// Accepts the canonical names and the NumPy spellings (`float32`, `int64`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let d = match s {
            "bool" => DType::Bool,
            "i8" | "int8" => DType::I8,
            "i16" | "int16" => DType::I16,
            "i32" | "int32" => DType::I32,
            "i64" | "int64" => DType::I64,
            "u8" | "uint8" => DType::U8,
            "u16" | "uint16" => DType::U16,
            "u32" | "uint32" => DType::U32,
            "u64" | "uint64" => DType::U64,
            "f16" | "float16" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "f32" | "float32" => DType::F32,
            "f64" | "float64" => DType::F64,
            "c64" | "complex64" => DType::C64,
            "c128" | "complex128" => DType::C128,
            _ => return Err(UnknownDType(s.to_string())),
        };
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_rejected() {
        for d in DType::ALL {
            assert_eq!(DType::from_code(d.code()), Some(d));
            assert_eq!(d.name().parse::<DType>(), Ok(d));
        }
        assert_eq!(DType::from_code(0), None);
        assert_eq!(DType::from_code(16), None);
        assert!("float128".parse::<DType>().is_err());
    }

    #[test]
    fn complex_dtypes_pair_with_their_components() {
        for d in [DType::C64, DType::C128] {
            assert!(d.is_complex() && d.is_inexact() && !d.is_float());
            assert_eq!(d.size(), 2 * d.real_dtype().size());
            assert_eq!(d.real_dtype().complex_dtype(), Some(d));
        }
        assert_eq!(DType::F16.complex_dtype(), Some(DType::C64));
        assert_eq!(DType::I32.complex_dtype(), None);
        assert_eq!("complex64".parse::<DType>(), Ok(DType::C64));
    }
}
