//! Stable numeric codes of the primitive op set.
//!
//! Codes are grouped by family in the high byte: `0x01xx` unary,
//! `0x02xx` binary, `0x03xx` reductions, `0x04xx` scans, `0x05xx` data
//! movement and creation, `0x06xx` linear algebra, `0x07xx` sorting and
//! searching. New ops take new codes; existing codes never change meaning.

use crate::DType;
use std::fmt;

/// Declares a fieldless op enum whose discriminants are its ABI codes,
/// with `ALL`, `code`, `from_code` and `name`.
macro_rules! op_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $code:literal => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum $name {
            $($variant = $code,)*
        }

        impl $name {
            /// Every op of this family, in code order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stable numeric code used by the plugin ABI.
            pub const fn code(self) -> u32 {
                self as u32
            }

            /// The op for an ABI code, or `None` for a code this version does not know.
            pub fn from_code(code: u32) -> Option<$name> {
                match code {
                    $($code => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// The Array API standard's name of the op.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

op_enum! {
    /// Elementwise functions of one argument. The output has the input's
    /// dtype except for the predicates (`isfinite`, `isinf`, `isnan`,
    /// `signbit`, `logical_not`), whose output is `bool`.
    UnaryOp {
        Abs = 0x0101 => "abs",
        Acos = 0x0102 => "acos",
        Acosh = 0x0103 => "acosh",
        Asin = 0x0104 => "asin",
        Asinh = 0x0105 => "asinh",
        Atan = 0x0106 => "atan",
        Atanh = 0x0107 => "atanh",
        BitwiseInvert = 0x0108 => "bitwise_invert",
        Ceil = 0x0109 => "ceil",
        Cos = 0x010a => "cos",
        Cosh = 0x010b => "cosh",
        Exp = 0x010c => "exp",
        Expm1 = 0x010d => "expm1",
        Floor = 0x010e => "floor",
        IsFinite = 0x010f => "isfinite",
        IsInf = 0x0110 => "isinf",
        IsNan = 0x0111 => "isnan",
        Log = 0x0112 => "log",
        Log1p = 0x0113 => "log1p",
        Log2 = 0x0114 => "log2",
        Log10 = 0x0115 => "log10",
        LogicalNot = 0x0116 => "logical_not",
        Negative = 0x0117 => "negative",
        Reciprocal = 0x0118 => "reciprocal",
        Round = 0x0119 => "round",
        Sign = 0x011a => "sign",
        SignBit = 0x011b => "signbit",
        Sin = 0x011c => "sin",
        Sinh = 0x011d => "sinh",
        Square = 0x011e => "square",
        Sqrt = 0x011f => "sqrt",
        Tan = 0x0120 => "tan",
        Tanh = 0x0121 => "tanh",
        Trunc = 0x0122 => "trunc",
        Conj = 0x0123 => "conj",
        Real = 0x0124 => "real",
        Imag = 0x0125 => "imag",
    }
}

op_enum! {
    /// Elementwise functions of two arguments of the same dtype. Comparisons
    /// and logical ops output `bool`; the rest output the operands' dtype.
    BinaryOp {
        Add = 0x0201 => "add",
        Atan2 = 0x0202 => "atan2",
        BitwiseAnd = 0x0203 => "bitwise_and",
        BitwiseLeftShift = 0x0204 => "bitwise_left_shift",
        BitwiseOr = 0x0205 => "bitwise_or",
        BitwiseRightShift = 0x0206 => "bitwise_right_shift",
        BitwiseXor = 0x0207 => "bitwise_xor",
        CopySign = 0x0208 => "copysign",
        Divide = 0x0209 => "divide",
        Equal = 0x020a => "equal",
        FloorDivide = 0x020b => "floor_divide",
        Greater = 0x020c => "greater",
        GreaterEqual = 0x020d => "greater_equal",
        Hypot = 0x020e => "hypot",
        Less = 0x020f => "less",
        LessEqual = 0x0210 => "less_equal",
        LogAddExp = 0x0211 => "logaddexp",
        LogicalAnd = 0x0212 => "logical_and",
        LogicalOr = 0x0213 => "logical_or",
        LogicalXor = 0x0214 => "logical_xor",
        Maximum = 0x0215 => "maximum",
        Minimum = 0x0216 => "minimum",
        Multiply = 0x0217 => "multiply",
        NextAfter = 0x0218 => "nextafter",
        NotEqual = 0x0219 => "not_equal",
        Pow = 0x021a => "pow",
        Remainder = 0x021b => "remainder",
        Subtract = 0x021c => "subtract",
    }
}

op_enum! {
    /// Reductions over a set of axes. `argmin`/`argmax` reduce exactly one
    /// axis and output `i64`; `all`/`any` output `bool`; the rest keep the
    /// input dtype (the array layer chooses the accumulation dtype by casting
    /// first, as the standard's `sum` of small integers requires).
    ReduceOp {
        Sum = 0x0301 => "sum",
        Prod = 0x0302 => "prod",
        Min = 0x0303 => "min",
        Max = 0x0304 => "max",
        ArgMin = 0x0305 => "argmin",
        ArgMax = 0x0306 => "argmax",
        All = 0x0307 => "all",
        Any = 0x0308 => "any",
    }
}

op_enum! {
    /// Inclusive scans along one axis.
    ScanOp {
        CumulativeSum = 0x0401 => "cumulative_sum",
        CumulativeProd = 0x0402 => "cumulative_prod",
    }
}

/// One primitive op, as a backend declares support for it and as the
/// plugin ABI encodes it (`code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpCode {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Reduce(ReduceOp),
    Scan(ScanOp),
    /// Elementwise conversion between dtypes (`astype`).
    Cast,
    /// `where(cond, x, y)`.
    Where,
    /// Strided copy between two layouts of the same dtype.
    Copy,
    /// Set every element of a (possibly strided) view to one value.
    Fill,
    /// `out[i] = start + i * step` over the flattened output.
    Arange,
    /// Counter-based random numbers.
    Random,
    /// Gather along one axis with `i64` indices.
    Take,
    /// Batched matrix product.
    Matmul,
    /// Stable sort along one axis.
    Sort,
    /// Stable argsort along one axis (output `i64`).
    Argsort,
    /// Insertion points of values into a sorted 1-D array (output `i64`).
    SearchSorted,
    /// Coordinates of the non-zero elements (output `i64`, shape `[count, ndim]`).
    Nonzero,
}

impl OpCode {
    /// The stable numeric code used by the plugin ABI.
    pub const fn code(self) -> u32 {
        match self {
            OpCode::Unary(op) => op.code(),
            OpCode::Binary(op) => op.code(),
            OpCode::Reduce(op) => op.code(),
            OpCode::Scan(op) => op.code(),
            OpCode::Cast => 0x0501,
            OpCode::Where => 0x0502,
            OpCode::Copy => 0x0503,
            OpCode::Fill => 0x0504,
            OpCode::Arange => 0x0505,
            OpCode::Random => 0x0506,
            OpCode::Take => 0x0507,
            OpCode::Matmul => 0x0601,
            OpCode::Sort => 0x0701,
            OpCode::Argsort => 0x0702,
            OpCode::SearchSorted => 0x0703,
            OpCode::Nonzero => 0x0704,
        }
    }

    /// The ops outside the four elementwise and reduction families, in
    /// code order.
    const OTHERS: [OpCode; 12] = [
        OpCode::Cast,
        OpCode::Where,
        OpCode::Copy,
        OpCode::Fill,
        OpCode::Arange,
        OpCode::Random,
        OpCode::Take,
        OpCode::Matmul,
        OpCode::Sort,
        OpCode::Argsort,
        OpCode::SearchSorted,
        OpCode::Nonzero,
    ];

    /// Every op code of this version of the op set.
    pub fn all() -> Vec<OpCode> {
        let mut all: Vec<OpCode> = Vec::new();
        all.extend(UnaryOp::ALL.iter().map(|&op| OpCode::Unary(op)));
        all.extend(BinaryOp::ALL.iter().map(|&op| OpCode::Binary(op)));
        all.extend(ReduceOp::ALL.iter().map(|&op| OpCode::Reduce(op)));
        all.extend(ScanOp::ALL.iter().map(|&op| OpCode::Scan(op)));
        all.extend(OpCode::OTHERS);
        all
    }

    /// The op for an ABI code, or `None` for a code this version does not
    /// know. Plugins ask this on every call, so it allocates nothing.
    pub fn from_code(code: u32) -> Option<OpCode> {
        UnaryOp::from_code(code)
            .map(OpCode::Unary)
            .or_else(|| BinaryOp::from_code(code).map(OpCode::Binary))
            .or_else(|| ReduceOp::from_code(code).map(OpCode::Reduce))
            .or_else(|| ScanOp::from_code(code).map(OpCode::Scan))
            .or_else(|| OpCode::OTHERS.into_iter().find(|op| op.code() == code))
    }

    pub const fn name(self) -> &'static str {
        match self {
            OpCode::Unary(op) => op.name(),
            OpCode::Binary(op) => op.name(),
            OpCode::Reduce(op) => op.name(),
            OpCode::Scan(op) => op.name(),
            OpCode::Cast => "astype",
            OpCode::Where => "where",
            OpCode::Copy => "copy",
            OpCode::Fill => "fill",
            OpCode::Arange => "arange",
            OpCode::Random => "random",
            OpCode::Take => "take",
            OpCode::Matmul => "matmul",
            OpCode::Sort => "sort",
            OpCode::Argsort => "argsort",
            OpCode::SearchSorted => "searchsorted",
            OpCode::Nonzero => "nonzero",
        }
    }
}

impl fmt::Display for OpCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl UnaryOp {
    /// True for the ops whose output is `bool` whatever the input dtype.
    pub const fn outputs_bool(self) -> bool {
        matches!(
            self,
            UnaryOp::IsFinite | UnaryOp::IsInf | UnaryOp::IsNan | UnaryOp::SignBit | UnaryOp::LogicalNot
        )
    }

    /// The output dtype for an input of `x`: `bool` for predicates, the
    /// component dtype for `abs`, `real` and `imag` of complex input, else
    /// `x` itself.
    pub const fn output_dtype(self, x: DType) -> DType {
        if self.outputs_bool() {
            DType::Bool
        } else if matches!(self, UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag) {
            x.real_dtype()
        } else {
            x
        }
    }
}

impl BinaryOp {
    /// True for comparisons and logical ops, whose output is `bool`.
    pub const fn outputs_bool(self) -> bool {
        matches!(
            self,
            BinaryOp::Equal
                | BinaryOp::NotEqual
                | BinaryOp::Greater
                | BinaryOp::GreaterEqual
                | BinaryOp::Less
                | BinaryOp::LessEqual
                | BinaryOp::LogicalAnd
                | BinaryOp::LogicalOr
                | BinaryOp::LogicalXor
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let all = OpCode::all();
        let codes: HashSet<u32> = all.iter().map(|op| op.code()).collect();
        assert_eq!(codes.len(), all.len(), "two ops share a code");
        for op in all {
            assert_eq!(OpCode::from_code(op.code()), Some(op));
        }
        assert_eq!(OpCode::from_code(0), None);
        assert_eq!(UnaryOp::from_code(0x0201), None);
    }
}
