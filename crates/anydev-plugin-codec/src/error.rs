//! The errors of plugin calls, classified by the ABI's error codes: a
//! plugin returns them from its calls (and the codec from decoding), and
//! the host reads them back out of the ABI's error objects.

use anydev_plugin_abi::{
    AnydevErrorCode, ANYDEV_ERROR_INTERNAL, ANYDEV_ERROR_INVALID_ARGUMENT, ANYDEV_ERROR_OUT_OF_MEMORY,
    ANYDEV_ERROR_UNAVAILABLE, ANYDEV_ERROR_UNIMPLEMENTED,
};
use std::fmt;

/// Shorthand for results of plugin calls.
pub type Result<T, E = PluginError> = std::result::Result<T, E>;

/// What went wrong, as the ABI's error codes classify it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    Unimplemented,
    InvalidArgument,
    OutOfMemory,
    Internal,
    Unavailable,
}

impl ErrorCode {
    pub const fn code(self) -> AnydevErrorCode {
        match self {
            ErrorCode::Unimplemented => ANYDEV_ERROR_UNIMPLEMENTED,
            ErrorCode::InvalidArgument => ANYDEV_ERROR_INVALID_ARGUMENT,
            ErrorCode::OutOfMemory => ANYDEV_ERROR_OUT_OF_MEMORY,
            ErrorCode::Internal => ANYDEV_ERROR_INTERNAL,
            ErrorCode::Unavailable => ANYDEV_ERROR_UNAVAILABLE,
        }
    }

    /// The code for an ABI value; codes this version does not know read as
    /// `Internal`, so a newer plugin's new code is still an error.
    pub fn from_code(code: AnydevErrorCode) -> ErrorCode {
        match code {
            ANYDEV_ERROR_UNIMPLEMENTED => ErrorCode::Unimplemented,
            ANYDEV_ERROR_INVALID_ARGUMENT => ErrorCode::InvalidArgument,
            ANYDEV_ERROR_OUT_OF_MEMORY => ErrorCode::OutOfMemory,
            ANYDEV_ERROR_UNAVAILABLE => ErrorCode::Unavailable,
            _ => ErrorCode::Internal,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::Unimplemented => "unimplemented",
            ErrorCode::InvalidArgument => "invalid argument",
            ErrorCode::OutOfMemory => "out of memory",
            ErrorCode::Internal => "internal error",
            ErrorCode::Unavailable => "unavailable",
        }
    }
}

/// An error a plugin returns from a call: a code and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginError {
    pub code: ErrorCode,
    pub message: String,
}

impl PluginError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> PluginError {
        PluginError {
            code,
            message: message.into(),
        }
    }

    pub fn unimplemented(message: impl Into<String>) -> PluginError {
        PluginError::new(ErrorCode::Unimplemented, message)
    }

    pub fn invalid_argument(message: impl Into<String>) -> PluginError {
        PluginError::new(ErrorCode::InvalidArgument, message)
    }

    pub fn out_of_memory(message: impl Into<String>) -> PluginError {
        PluginError::new(ErrorCode::OutOfMemory, message)
    }

    pub fn internal(message: impl Into<String>) -> PluginError {
        PluginError::new(ErrorCode::Internal, message)
    }

    pub fn unavailable(message: impl Into<String>) -> PluginError {
        PluginError::new(ErrorCode::Unavailable, message)
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for PluginError {}
