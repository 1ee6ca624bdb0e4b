//! The stable C ABI between anydev and device plugins (design section 7).
//!
//! A plugin is a shared library exporting one symbol, [`ENTRY_SYMBOL`], of
//! type [`AnydevGetApiFn`]. It returns a pointer to a static
//! [`AnydevPluginApi`]: a function table whose first fields are its own
//! size and the ABI version the plugin was built against. Everything else
//! the host and the plugin exchange is declared here, as `#[repr(C)]` types
//! with compile-time size and offset checks, and mirrored for C and C++
//! authors by `include/anydev_plugin.h` (a test compiles a C plugin against
//! that header and compares its layout with these types).
//!
//! # Compatibility rules
//!
//! * Same major version required; the minor version may differ either way.
//! * A table field lying beyond the table's `struct_size`, or NULL, means
//!   "unimplemented". Hosts never read past `struct_size`.
//! * Argument structs that may grow ([`AnydevInitArgs`],
//!   [`AnydevDeviceProperties`], [`AnydevAttributeList`],
//!   [`AnydevMemoryStats`], [`AnydevOpCall`], [`AnydevOpSignature`],
//!   [`AnydevExtensionOpList`], [`AnydevExtensionCall`], [`AnydevCommInitArgs`],
//!   [`AnydevCollectiveCall`]) start with `struct_size`,
//!   set by whoever allocated the struct; the reader uses only the fields
//!   inside both its own and the writer's size. New fields are only ever
//!   appended.
//! * Calls return an [`AnydevStatus`]: NULL for success, otherwise an
//!   error object the host frees with `error_destroy`. Nothing unwinds
//!   across the boundary.
//! * Numeric dtype and op codes are those of the anydev op set (design
//!   section 6); they never change meaning.
//!
//! This crate has no dependencies and no code beyond type definitions, so
//! an out-of-tree plugin can depend on it alone.

#![no_std]

mod api;
mod codes;
mod handles;
mod layout;
mod structs;

pub use api::*;
pub use codes::*;
pub use handles::*;
pub use structs::*;

/// Major ABI version: changes only when an existing field or call changes
/// meaning. Host and plugin must agree on it.
pub const ABI_VERSION_MAJOR: u16 = 1;

/// Minor ABI version: grows when fields or calls are appended.
pub const ABI_VERSION_MINOR: u16 = 6;

/// The ABI version this crate describes.
pub const ABI_VERSION: AnydevVersion = AnydevVersion {
    major: ABI_VERSION_MAJOR,
    minor: ABI_VERSION_MINOR,
};

/// Name of the symbol every plugin exports, without a trailing NUL.
pub const ENTRY_SYMBOL: &str = "anydev_plugin_get_api";

/// [`ENTRY_SYMBOL`] with its trailing NUL, as dynamic loaders want it.
pub const ENTRY_SYMBOL_NUL: &[u8] = b"anydev_plugin_get_api\0";

/// A `{major, minor}` ABI version.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AnydevVersion {
    pub major: u16,
    pub minor: u16,
}
