//! The one error type of the kernels.

use anydev_ops::{DType, OpCode};
use std::fmt;

/// Why a kernel refused a call. Kernels never panic on bad input; they
/// return one of these so the caller can report it with context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// The (op, dtype) pair is not implemented; [`crate::supports`] says so too.
    Unsupported { op: OpCode, dtype: DType },
    /// The call is malformed (dtype or shape disagreement, bad axis, ...).
    Invalid(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Unsupported { op, dtype } => write!(
                f,
                "the host kernels do not implement {op} for {dtype}; cast to a supported dtype first"
            ),
            KernelError::Invalid(msg) => write!(f, "invalid kernel call: {msg}"),
        }
    }
}

impl std::error::Error for KernelError {}

/// Shorthand for building [`KernelError::Invalid`].
pub(crate) fn invalid<T>(msg: impl Into<String>) -> Result<T, KernelError> {
    Err(KernelError::Invalid(msg.into()))
}
