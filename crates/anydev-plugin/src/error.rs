//! The plugin side's error type and the error objects it hands the host.

use anydev_plugin_abi::{
    AnydevError, AnydevErrorCode, AnydevStatus, ANYDEV_ERROR_INTERNAL, ANYDEV_ERROR_INVALID_ARGUMENT,
    ANYDEV_ERROR_OUT_OF_MEMORY, ANYDEV_ERROR_UNAVAILABLE, ANYDEV_ERROR_UNIMPLEMENTED,
};
use std::ffi::{c_char, CString};
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

    /// Moves the error into a heap object the host owns until it calls
    /// `error_destroy`.
    pub(crate) fn into_status(self) -> AnydevStatus {
        // Interior NULs would cut the message short; show them instead.
        let message = CString::new(self.message.replace('\0', "\\0")).unwrap_or_default();
        Box::into_raw(Box::new(ErrorObject {
            code: self.code.code(),
            message,
        }))
        .cast::<AnydevError>()
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for PluginError {}

/// What an `AnydevError` handle of a Rust plugin points at.
pub(crate) struct ErrorObject {
    code: AnydevErrorCode,
    message: CString,
}

pub(crate) unsafe extern "C" fn error_code(error: *const AnydevError) -> i32 {
    // SAFETY: the host passes an error this plugin returned and has not
    // destroyed yet (ABI contract), which is a live `ErrorObject`.
    match unsafe { error.cast::<ErrorObject>().as_ref() } {
        Some(e) => e.code,
        None => ANYDEV_ERROR_INTERNAL,
    }
}

pub(crate) unsafe extern "C" fn error_message(error: *const AnydevError) -> *const c_char {
    // SAFETY: as in `error_code`.
    match unsafe { error.cast::<ErrorObject>().as_ref() } {
        Some(e) => e.message.as_ptr(),
        None => c"(null error)".as_ptr(),
    }
}

pub(crate) unsafe extern "C" fn error_destroy(error: *mut AnydevError) {
    if !error.is_null() {
        // SAFETY: the error came from `into_status` (`Box::into_raw`) and
        // the host destroys each error exactly once.
        drop(unsafe { Box::from_raw(error.cast::<ErrorObject>()) });
    }
}
