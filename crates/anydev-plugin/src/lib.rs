//! Writing anydev device plugins in Rust.
//!
//! Implement [`Plugin`] for your device and export it:
//!
//! ```ignore
//! struct MyDevice { /* ... */ }
//! impl anydev_plugin::Plugin for MyDevice { /* ... */ }
//! anydev_plugin::export_plugin!(MyDevice);
//! ```
//!
//! built as a `cdylib`. The macro defines the entry symbol
//! (`anydev_plugin_get_api`) returning a static function table built by
//! [`api_table`]. Every call decodes its handles, runs your method inside
//! `catch_unwind`, and turns an `Err` into an ABI error object and a panic
//! into an `Internal` error carrying the panic message, so nothing unwinds
//! into the host. (This needs the default `panic = "unwind"`; with
//! `panic = "abort"` a panic ends the host process. A plugin written
//! without this crate must catch its own panics: an unwind reaching an
//! `extern "C"` boundary aborts the process, and the host cannot catch it.)
//!
//! Op calls arrive decoded as [`anydev_ops::Op`] over [`PluginTensor`]s,
//! and calls of named extension ops as [`ExtensionCall`]s with typed
//! attributes, by the same [`codec`] the host's loader encodes them with
//! (the `anydev-plugin-codec` crate, re-exported).

mod collective;
mod error;
mod export;
mod plugin;

pub use anydev_ops as ops;
pub use anydev_ops::AttrValue as ExtensionAttr;
pub use anydev_plugin_abi as abi;
pub use anydev_plugin_codec as codec;
pub use codec::{ErrorCode, ExtensionCall, PluginError, Result, TensorSpec};
pub use collective::{CollectiveCall, CollectiveKind, Collectives, Comm, CommId, CommInit, ReduceOp};
pub use export::api_table;
pub use plugin::{AttrValue, ForeignMemory, InitArgs, MemoryKind, MemoryStats, Plugin, PluginTensor, Properties};

/// Exports `$plugin` (a type implementing [`Plugin`]) as this library's
/// anydev plugin: defines the entry symbol returning its function table.
/// Use it once per shared library.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        /// The anydev plugin entry point: returns this library's function table.
        #[no_mangle]
        pub extern "C" fn anydev_plugin_get_api() -> *const $crate::abi::AnydevPluginApi {
            static API: $crate::abi::AnydevPluginApi = $crate::api_table::<$plugin>();
            &API
        }
    };
}
