//! From a runtime [`DType`] to a monomorphised kernel, and the table of
//! supported (op, dtype) pairs.
//!
//! `with_dtype!(dtype, |T| expr, [Variants...], otherwise)` expands to a
//! `match` that binds the type alias `T` to each listed dtype's element
//! type; the named groups below are the ones the op rules use.

use anydev_ops::{BinaryOp, DType, DTypeKind, OpCode, UnaryOp};

macro_rules! with_dtype {
    ($dt:expr, |$T:ident| $body:expr, [$($D:ident),* $(,)?], $other:expr) => {
        match $dt {
            $(anydev_ops::DType::$D => {
                #[allow(dead_code)]
                type $T = $crate::dispatch::with_dtype!(@ty $D);
                $body
            })*
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
    (@ty Bool) => { bool };
    (@ty I8) => { i8 };
    (@ty I16) => { i16 };
    (@ty I32) => { i32 };
    (@ty I64) => { i64 };
    (@ty U8) => { u8 };
    (@ty U16) => { u16 };
    (@ty U32) => { u32 };
    (@ty U64) => { u64 };
    (@ty F16) => { half::f16 };
    (@ty BF16) => { half::bf16 };
    (@ty F32) => { f32 };
    (@ty F64) => { f64 };
}

/// Every dtype.
macro_rules! with_any {
    ($dt:expr, |$T:ident| $body:expr) => {
        $crate::dispatch::with_dtype!(
            $dt,
            |$T| $body,
            [Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64],
            unreachable!()
        )
    };
}

/// Integers and floats.
macro_rules! with_numeric {
    ($dt:expr, |$T:ident| $body:expr, $other:expr) => {
        $crate::dispatch::with_dtype!(
            $dt,
            |$T| $body,
            [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64],
            $other
        )
    };
}

/// Integers.
macro_rules! with_int {
    ($dt:expr, |$T:ident| $body:expr, $other:expr) => {
        $crate::dispatch::with_dtype!($dt, |$T| $body, [I8, I16, I32, I64, U8, U16, U32, U64], $other)
    };
}

/// Integers and bool (the bitwise ops).
macro_rules! with_bits {
    ($dt:expr, |$T:ident| $body:expr, $other:expr) => {
        $crate::dispatch::with_dtype!($dt, |$T| $body, [Bool, I8, I16, I32, I64, U8, U16, U32, U64], $other)
    };
}

/// Floats.
macro_rules! with_float {
    ($dt:expr, |$T:ident| $body:expr, $other:expr) => {
        $crate::dispatch::with_dtype!($dt, |$T| $body, [F16, BF16, F32, F64], $other)
    };
}

/// The plain-bits type of one element size (1, 2, 4, 8 or 16 bytes), for
/// ops that only move bytes.
macro_rules! with_size {
    ($size:expr, |$T:ident| $body:expr) => {
        match $size {
            1 => {
                type $T = u8;
                $body
            }
            2 => {
                type $T = u16;
                $body
            }
            4 => {
                type $T = u32;
                $body
            }
            8 => {
                type $T = u64;
                $body
            }
            _ => {
                type $T = $crate::cast::B128;
                $body
            }
        }
    };
}

pub(crate) use {with_any, with_bits, with_dtype, with_float, with_int, with_numeric, with_size};

/// The dtypes the host kernels hold and compute with: those they can copy.
/// A device running on them declares exactly these in its `dtypes`
/// capability.
pub fn dtypes() -> Vec<DType> {
    DType::ALL.into_iter().filter(|&d| supports(OpCode::Copy, d)).collect()
}

/// Whether `execute` implements `op` for `dtype` (the dtype of
/// `Op::support_dtype`). For `astype` every pair of dtypes is supported.
pub fn supports(op: OpCode, dtype: DType) -> bool {
    if dtype.is_complex() {
        return supports_complex(op);
    }
    let kind = dtype.kind();
    let numeric = kind != DTypeKind::Bool;
    let float = kind == DTypeKind::Float;
    let int = dtype.is_integer();
    match op {
        OpCode::Unary(u) => match u {
            UnaryOp::Abs
            | UnaryOp::Negative
            | UnaryOp::Sign
            | UnaryOp::Square
            | UnaryOp::Round
            | UnaryOp::Floor
            | UnaryOp::Ceil
            | UnaryOp::Trunc
            | UnaryOp::SignBit => numeric,
            UnaryOp::IsFinite | UnaryOp::IsInf | UnaryOp::IsNan => true,
            UnaryOp::BitwiseInvert => !float,
            UnaryOp::LogicalNot => kind == DTypeKind::Bool,
            // Real dtypes: the array layer answers these without a kernel.
            UnaryOp::Conj | UnaryOp::Real | UnaryOp::Imag => false,
            _ => float,
        },
        OpCode::Binary(b) => match b {
            BinaryOp::Add
            | BinaryOp::Subtract
            | BinaryOp::Multiply
            | BinaryOp::FloorDivide
            | BinaryOp::Remainder
            | BinaryOp::Pow => numeric,
            BinaryOp::BitwiseAnd | BinaryOp::BitwiseOr | BinaryOp::BitwiseXor => !float,
            BinaryOp::BitwiseLeftShift | BinaryOp::BitwiseRightShift => int,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor => kind == DTypeKind::Bool,
            BinaryOp::Equal
            | BinaryOp::NotEqual
            | BinaryOp::Greater
            | BinaryOp::GreaterEqual
            | BinaryOp::Less
            | BinaryOp::LessEqual
            | BinaryOp::Maximum
            | BinaryOp::Minimum => true,
            BinaryOp::Atan2
            | BinaryOp::CopySign
            | BinaryOp::Divide
            | BinaryOp::Hypot
            | BinaryOp::LogAddExp
            | BinaryOp::NextAfter => float,
        },
        OpCode::Reduce(r) => match r {
            anydev_ops::ReduceOp::All | anydev_ops::ReduceOp::Any => true,
            _ => numeric,
        },
        OpCode::Scan(_) | OpCode::Matmul | OpCode::Arange => numeric,
        OpCode::Random => float,
        OpCode::Cast
        | OpCode::Where
        | OpCode::Copy
        | OpCode::Fill
        | OpCode::Take
        | OpCode::Sort
        | OpCode::Argsort
        | OpCode::SearchSorted
        | OpCode::Nonzero => true,
    }
}

/// The complex half of [`supports`]: what the standard defines for
/// complex numbers. Nothing that needs an order (comparisons, min/max,
/// sorting, floor/ceil) and no creation from ranges or random bits.
fn supports_complex(op: OpCode) -> bool {
    match op {
        OpCode::Unary(u) => !matches!(
            u,
            UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Trunc
                | UnaryOp::SignBit
                | UnaryOp::BitwiseInvert
                | UnaryOp::LogicalNot
        ),
        OpCode::Binary(b) => matches!(
            b,
            BinaryOp::Add
                | BinaryOp::Subtract
                | BinaryOp::Multiply
                | BinaryOp::Divide
                | BinaryOp::Pow
                | BinaryOp::Equal
                | BinaryOp::NotEqual
        ),
        OpCode::Reduce(r) => matches!(
            r,
            anydev_ops::ReduceOp::Sum
                | anydev_ops::ReduceOp::Prod
                | anydev_ops::ReduceOp::All
                | anydev_ops::ReduceOp::Any
        ),
        OpCode::Scan(_) | OpCode::Matmul => true,
        OpCode::Cast | OpCode::Where | OpCode::Copy | OpCode::Fill | OpCode::Take | OpCode::Nonzero => true,
        OpCode::Arange | OpCode::Random | OpCode::Sort | OpCode::Argsort | OpCode::SearchSorted => false,
    }
}
