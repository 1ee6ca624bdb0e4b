//! Device plugins: shared libraries behind the C ABI of
//! `anydev-plugin-abi` (design section 7).
//!
//! [`discover`] reads manifests and `ANYDEV_PLUGINS` without opening any
//! library; [`providers`] turns what it found into [`BackendProvider`]s
//! whose initialiser opens the library, checks its ABI version, calls the
//! plugin's `initialize`, and wraps it as an ordinary [`Backend`]. Every
//! failure becomes a failed (or, when the plugin says its hardware is
//! absent, unavailable) backend status whose reason names the plugin, its
//! library, its manifest and the versions involved; asking for one of its
//! devices returns that reason. One broken plugin never affects another.

mod adapter;
mod architecture;
mod comm;
mod discovery;
mod instance;
mod library;
mod manifest;
mod support;
mod watch;

pub use discovery::{discover, Discovery, Entry, PluginConfig, PluginSpec};
pub use manifest::{Manifest, DEFAULT_PRIORITY};
pub use watch::{watch_calls, CallWatcher};

use crate::backend::Backend;
use crate::runtime::{BackendProvider, InitError};
use crate::Error;
use adapter::{Identity, PluginBackend};
use anydev_plugin_abi::{AnydevPluginApi, ABI_VERSION};
use anydev_plugin_codec::ErrorCode;
use instance::Instance;
use library::Table;
use std::path::PathBuf;
use std::sync::Arc;

/// One provider per discovered entry, in discovery order.
pub fn providers(discovery: Discovery) -> Vec<BackendProvider> {
    discovery.entries.into_iter().map(provider).collect()
}

/// The provider for one entry. A plugin's library is opened only when the
/// runtime calls the provider's initialiser.
pub fn provider(entry: Entry) -> BackendProvider {
    match entry {
        Entry::Plugin(spec) => {
            let priority = spec.priority.unwrap_or(DEFAULT_PRIORITY);
            BackendProvider::new(spec.name.clone(), priority, move || open(&spec))
        }
        Entry::Broken { name, priority, reason } => {
            BackendProvider::new(name, priority, move || Err(InitError::Failed(reason.clone())))
        }
    }
}

/// A provider for a plugin linked into the executable rather than loaded
/// from a file: its table (for a Rust plugin, `anydev_plugin::api_table`)
/// goes through the same checks and adapter as a loaded one.
pub fn static_provider(
    name: impl Into<String>,
    priority: i32,
    table: &'static AnydevPluginApi,
    options_json: impl Into<String>,
) -> BackendProvider {
    let spec = PluginSpec {
        name: name.into(),
        library: PathBuf::from("(linked in)"),
        manifest: None,
        abi_version: None,
        priority: Some(priority),
        options_json: options_json.into(),
    };
    BackendProvider::new(spec.name.clone(), priority, move || {
        // SAFETY: a `'static` reference to a table is valid for its whole
        // size forever, and its functions are part of this executable.
        let table = unsafe { Table::read(table) }.map_err(|e| InitError::Failed(spec.describe(e)))?;
        start(&spec, table)
    })
}

/// Opens, checks and initialises one plugin.
fn open(spec: &PluginSpec) -> Result<Arc<dyn Backend>, InitError> {
    if let Some((major, minor)) = spec.abi_version {
        if major != ABI_VERSION.major {
            return Err(InitError::Failed(spec.describe(format!(
                "the manifest declares ABI {major}.{minor}, this anydev speaks ABI {}.{}: the major versions differ",
                ABI_VERSION.major, ABI_VERSION.minor
            ))));
        }
    }
    let table = library::load(&spec.library).map_err(|e| InitError::Failed(spec.describe(e)))?;
    start(spec, table)
}

/// Checks the table's required calls, initialises the plugin and wraps it.
/// A plugin with no devices is unavailable, named like every other problem.
fn start(spec: &PluginSpec, table: Table) -> Result<Arc<dyn Backend>, InitError> {
    table
        .check_required()
        .map_err(|e| InitError::Failed(spec.describe(e)))?;
    let version = table.version;
    let instance = Instance::initialize(table, &spec.name, &spec.options_json).map_err(|e| {
        let reason = spec.describe(format!(
            "{} failed ({}, plugin ABI {}.{}): {}",
            e.call,
            e.code.name(),
            version.major,
            version.minor,
            e.message
        ));
        match e.code {
            ErrorCode::Unavailable => InitError::Unavailable(reason),
            _ => InitError::Failed(reason),
        }
    })?;
    if instance.device_count() == 0 {
        return Err(InitError::Unavailable(spec.describe(format!(
            "the plugin (ABI {}.{}) reports 0 devices",
            version.major, version.minor
        ))));
    }
    let identity = Identity {
        name: spec.name.clone(),
        library: spec.library.clone(),
        priority_set: spec.priority.is_some(),
    };
    let backend = PluginBackend::new(instance, identity).map_err(|e| setup_failure(spec, e))?;
    Ok(Arc::new(backend))
}

/// The reason a plugin failed while the host set it up after
/// `initialize`. A plugin error already names the plugin and its library,
/// which `describe` adds, so only its message goes in.
fn setup_failure(spec: &PluginSpec, error: Error) -> InitError {
    let reason = match error {
        Error::Plugin { message, .. } => message,
        other => other.to_string(),
    };
    InitError::Failed(spec.describe(reason))
}
