//! Opening a plugin library and reading its function table.
//!
//! Libraries are never unloaded: a plugin may have started threads (a
//! kernel thread pool, a driver's helper threads) that run its code, so
//! `dlclose` could pull code from under them. Each plugin context is still
//! shut down through the table when the runtime lets go of it.

use anydev_plugin_abi::{
    read_versioned, AnydevGetApiFn, AnydevPluginApi, AnydevVersion, ABI_VERSION, ENTRY_SYMBOL, ENTRY_SYMBOL_NUL,
};
use std::path::Path;

/// The smallest table a plugin may export: the header (`struct_size`,
/// version, reserved), so that the version can be read.
const HEADER_SIZE: usize = std::mem::offset_of!(AnydevPluginApi, error_code);

/// A plugin's table, copied out of the library: fields beyond the
/// plugin's `struct_size` are NULL here, so nothing later reads past the
/// table the plugin exported.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub api: AnydevPluginApi,
    /// The plugin's `struct_size`.
    pub declared_size: usize,
    pub version: AnydevVersion,
}

impl Table {
    /// Copies a table and checks its header and version.
    ///
    /// # Safety
    ///
    /// `api` is NULL or points at a table whose first `struct_size` bytes
    /// are readable and whose function pointers stay callable for the rest
    /// of the process.
    pub unsafe fn read(api: *const AnydevPluginApi) -> Result<Table, String> {
        if api.is_null() {
            return Err(format!("{ENTRY_SYMBOL} returned NULL (the plugin refused to load)"));
        }
        // SAFETY: non-NULL; the caller guarantees the declared size is readable.
        let declared_size = unsafe { std::ptr::read_unaligned(api.cast::<usize>()) };
        if declared_size < HEADER_SIZE {
            return Err(format!(
                "the function table declares struct_size {declared_size}, smaller than its {HEADER_SIZE}-byte header"
            ));
        }
        // SAFETY: as above; `read_versioned` reads at most `declared_size` bytes.
        let api = unsafe { read_versioned(api) }.ok_or("the function table is unreadable")?;
        let version = api.version;
        if version.major != ABI_VERSION.major {
            return Err(format!(
                "the plugin was built for ABI {}.{}, this anydev speaks ABI {}.{}: the major versions differ; rebuild the plugin against anydev-plugin-abi {}.x",
                version.major, version.minor, ABI_VERSION.major, ABI_VERSION.minor, ABI_VERSION.major
            ));
        }
        Ok(Table {
            api,
            declared_size,
            version,
        })
    }
}

/// Whether a table has one particular call.
type HasCall = fn(&AnydevPluginApi) -> bool;

/// The calls every plugin must implement, each with its presence test:
/// without them the host can neither report errors, find and describe
/// devices, nor move data. Every other call may be NULL (the header says
/// what NULL means for each; `execute` NULL is a device that runs no op).
const REQUIRED_CALLS: &[(&str, HasCall)] = &[
    ("error_code", |a| a.error_code.is_some()),
    ("error_message", |a| a.error_message.is_some()),
    ("error_destroy", |a| a.error_destroy.is_some()),
    ("initialize", |a| a.initialize.is_some()),
    ("shutdown", |a| a.shutdown.is_some()),
    ("device_count", |a| a.device_count.is_some()),
    ("get_device", |a| a.get_device.is_some()),
    ("device_properties", |a| a.device_properties.is_some()),
    ("device_capabilities", |a| a.device_capabilities.is_some()),
    ("op_supported", |a| a.op_supported.is_some()),
    ("device_synchronize", |a| a.device_synchronize.is_some()),
    ("allocate", |a| a.allocate.is_some()),
    ("free", |a| a.free.is_some()),
    ("memory_stats", |a| a.memory_stats.is_some()),
    ("copy_host_to_device", |a| a.copy_host_to_device.is_some()),
    ("copy_device_to_host", |a| a.copy_device_to_host.is_some()),
];

/// The stream and event calls: a table has all of them or none. Without
/// them the host passes a NULL stream and keeps its events itself; with
/// only some, the plugin would see both kinds of call on one device.
const STREAM_CALLS: &[(&str, HasCall)] = &[
    ("stream_create", |a| a.stream_create.is_some()),
    ("stream_destroy", |a| a.stream_destroy.is_some()),
    ("stream_synchronize", |a| a.stream_synchronize.is_some()),
    ("event_record", |a| a.event_record.is_some()),
    ("event_wait", |a| a.event_wait.is_some()),
    ("event_query", |a| a.event_query.is_some()),
    ("event_synchronize", |a| a.event_synchronize.is_some()),
    ("event_destroy", |a| a.event_destroy.is_some()),
];

/// The collective calls (ABI 1.6): a table has all of them or none.
const COLLECTIVE_CALLS: &[(&str, HasCall)] = &[
    ("comm_id", |a| a.comm_id.is_some()),
    ("comm_init", |a| a.comm_init.is_some()),
    ("comm_abort", |a| a.comm_abort.is_some()),
    ("comm_destroy", |a| a.comm_destroy.is_some()),
    ("collective", |a| a.collective.is_some()),
];

impl Table {
    /// `Err` naming every required call the table leaves NULL (or outside
    /// its `struct_size`), or the calls missing from a group (the stream
    /// and event calls, the collectives) that the table has only part of.
    pub fn check_required(&self) -> Result<(), String> {
        let required = self.missing(REQUIRED_CALLS);
        let stream = self.missing_from_group(STREAM_CALLS);
        let collective = self.missing_from_group(COLLECTIVE_CALLS);
        // Every defect at once, so a vendor fixes the table in one pass.
        let mut defects = Vec::new();
        if !required.is_empty() {
            defects.push(format!("lacks required calls: {}", required.join(", ")));
        }
        if !stream.is_empty() {
            defects.push(format!(
                "has some stream and event calls but lacks {} (all eight or none)",
                stream.join(", ")
            ));
        }
        if !collective.is_empty() {
            defects.push(format!(
                "has some collective calls but lacks {} (ABI 1.6: all five or none)",
                collective.join(", ")
            ));
        }
        if defects.is_empty() {
            return Ok(());
        }
        Err(format!(
            "the function table (ABI {}.{}, {} bytes) {}",
            self.version.major,
            self.version.minor,
            self.declared_size,
            defects.join("; it ")
        ))
    }

    /// The names of `calls` the table leaves NULL.
    fn missing(&self, calls: &[(&'static str, HasCall)]) -> Vec<&'static str> {
        calls
            .iter()
            .filter(|(_, present)| !present(&self.api))
            .map(|(name, _)| *name)
            .collect()
    }

    /// The names of `calls` the table leaves NULL when it has at least one
    /// of them; empty when it has all or none.
    fn missing_from_group(&self, calls: &[(&'static str, HasCall)]) -> Vec<&'static str> {
        let missing = self.missing(calls);
        if missing.len() == calls.len() {
            return Vec::new();
        }
        missing
    }
}

/// An error and its sources, joined: libloading puts the system loader's
/// own text (the missing dependency, the unresolved symbol, the wrong
/// architecture) in the source, not in the top-level message.
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

/// Opens a library with every symbol bound now, so an unresolved symbol is
/// a load failure here rather than a `symbol lookup error` that kills the
/// process at the plugin's first call; and locally, so that one plugin's
/// symbols never satisfy another's.
#[cfg(unix)]
fn open_library(path: &Path) -> Result<libloading::Library, libloading::Error> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading a library runs its initialisers. Plugins are code the
    // user asked to load (by manifest or ANYDEV_PLUGINS); running it is the
    // point. Nothing else in the process depends on its symbols.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map(Into::into)
}

#[cfg(not(unix))]
fn open_library(path: &Path) -> Result<libloading::Library, libloading::Error> {
    // SAFETY: as above; Windows resolves imports when it loads a library.
    unsafe { libloading::Library::new(path) }
}

/// Opens the library at `path` and reads its table. The library stays loaded for the rest of the
/// process. Errors say what is wrong with the file, in words a person can
/// act on, with the system loader's own message.
pub fn load(path: &Path) -> Result<Table, String> {
    if !path.exists() {
        return Err("the library file does not exist".to_owned());
    }
    if !path.is_file() {
        return Err("the library path is not a file".to_owned());
    }
    // A name without a `/` would make the dynamic loader search the system's
    // library path instead of opening this file.
    let path = std::path::absolute(path).map_err(|e| format!("the library path cannot be resolved: {e}"))?;
    let library = open_library(&path).map_err(|e| {
        let why = super::architecture::mismatch(&path).map_or_else(String::new, |m| format!(" ({m})"));
        format!("cannot be loaded as a shared library{why}: {}", with_sources(&e))
    })?;
    // SAFETY: the symbol, if present, has the entry point's documented type
    // (an ABI requirement); the pointer is used while the library is loaded,
    // which is forever (it is leaked below).
    let entry = unsafe { library.get::<AnydevGetApiFn>(ENTRY_SYMBOL_NUL) }.map_err(|e| {
        format!(
            "the library does not export {ENTRY_SYMBOL} (is it an anydev plugin?): {}",
            with_sources(&e)
        )
    })?;
    let entry: AnydevGetApiFn = *entry;
    std::mem::forget(library);
    // SAFETY: the entry point takes no arguments and returns a table that
    // stays valid while the library is loaded (forever).
    let api = unsafe { entry() };
    // SAFETY: the ABI guarantees the returned table is NULL or valid for its
    // declared size.
    unsafe { Table::read(api) }
}
