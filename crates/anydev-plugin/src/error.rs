//! The error objects a Rust plugin hands the host.

use anydev_plugin_abi::{AnydevError, AnydevErrorCode, AnydevStatus, ANYDEV_ERROR_INTERNAL};
use anydev_plugin_codec::PluginError;
use std::ffi::{c_char, CString};

/// Moves `error` into a heap object the host owns until it calls
/// `error_destroy`.
pub(crate) fn into_status(error: PluginError) -> AnydevStatus {
    // Interior NULs would cut the message short; show them instead.
    let message = CString::new(error.message.replace('\0', "\\0")).unwrap_or_default();
    Box::into_raw(Box::new(ErrorObject {
        code: error.code.code(),
        message,
    }))
    .cast::<AnydevError>()
}

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
