//! Opaque handles. The host only ever holds pointers to these types and
//! passes them back; what they point at belongs to the plugin.

use core::marker::{PhantomData, PhantomPinned};

macro_rules! opaque_handle {
    ($($(#[$meta:meta])* $name:ident;)*) => {$(
        $(#[$meta])*
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            // Neither Send, Sync nor Unpin: a raw plugin object.
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}

opaque_handle! {
    /// One initialised plugin instance, from `initialize` to `shutdown`.
    AnydevContext;
    /// One device of the plugin. Owned by the context; valid until `shutdown`.
    AnydevDevice;
    /// One allocation. Owned by the host from `allocate` until it passes
    /// it to `free`.
    AnydevBuffer;
    /// An in-order work queue on one device. Owned by the host from
    /// `stream_create` until `stream_destroy`.
    AnydevStream;
    /// A marker recorded on a stream. Owned by the host from
    /// `event_record` until `event_destroy`.
    AnydevEvent;
    /// An error returned by a call. Owned by the host, which frees it with
    /// `error_destroy` exactly once.
    AnydevError;
    /// One rank's membership of a communicator (ABI 1.6). Owned by the
    /// host from `comm_init` until `comm_destroy`.
    AnydevComm;
}

/// What every call returns: NULL for success, otherwise an error the host
/// owns and frees through the table's `error_destroy`.
pub type AnydevStatus = *mut AnydevError;
