//! The op vocabulary of anydev (design section 6).
//!
//! Everything that crosses the boundary between the array layer and a
//! backend is named here: element types ([`DType`]), the primitive op set
//! with its stable numeric codes ([`OpCode`]), scalar operands
//! ([`Scalar`]), the description of one op call ([`Op`]), the typed
//! attributes of extension-op calls ([`AttrValue`]) and those calls' operands
//! in host memory ([`HostOperand`]).
//!
//! This crate knows no devices and no arrays. The runtime uses [`Op`] with
//! its own buffer references; host kernels and plugins use the same
//! description with raw pointers or plugin handles. The numeric codes are
//! part of the plugin ABI: a code, once published, never changes meaning.

mod attr;
mod codes;
pub mod collective;
mod dtype;
mod host;
mod narrow;
mod op;
mod scalar;

pub use attr::{AttrKind, AttrValue};
pub use codes::{BinaryOp, OpCode, ReduceOp, ScanOp, UnaryOp};
pub use dtype::{DType, DTypeKind};
pub use host::{AttrLookup, HostOperand, HostOperandMut};
pub use narrow::{bf16_from_f64, f16_from_f64};
pub use op::{Distribution, Op, Operand, TensorDType};
pub use scalar::Scalar;

/// Version of the op vocabulary. The minor version grows when codes are
/// added; the major version would change only if a code changed meaning.
pub const OP_SET_VERSION: (u16, u16) = (1, 1);
