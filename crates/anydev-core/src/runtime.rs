//! The process-wide registry of backends and devices (design section 2).
//!
//! A [`Runtime`] is built from [`BackendProvider`]s. Each provider is
//! initialised on its own, inside `catch_unwind`, and ends in one
//! [`BackendStatus`]; a failing or panicking backend never affects another.
//! The process-wide instance ([`Runtime::global`]) is built on first use,
//! never at load time.

use crate::backend::{Backend, DeviceProperties};
use crate::capability::Capabilities;
use crate::memory::TransferCounter;
use crate::{Device, DeviceKind, Error, Result};
use serde::Serialize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Why a provider produced no backend.
#[derive(Clone, Debug, PartialEq)]
pub enum InitError {
    /// Nothing is wrong, the hardware or driver is simply not there
    /// ("no CUDA driver found").
    Unavailable(String),
    /// Something is broken ("driver version 11.2 is older than 12.0").
    Failed(String),
}

type InitFn = dyn Fn() -> Result<Arc<dyn Backend>, InitError> + Send + Sync;

/// How to make one backend: its name (the device kind it declares), its
/// priority for picking the default device, and its initialiser.
pub struct BackendProvider {
    pub name: String,
    /// Higher wins when the runtime picks the default device. Accelerators
    /// use positive numbers; the CPU uses 0.
    pub priority: i32,
    init: Box<InitFn>,
}

impl BackendProvider {
    pub fn new(
        name: impl Into<String>,
        priority: i32,
        init: impl Fn() -> Result<Arc<dyn Backend>, InitError> + Send + Sync + 'static,
    ) -> BackendProvider {
        BackendProvider {
            name: name.into(),
            priority,
            init: Box::new(init),
        }
    }
}

/// How one backend ended up after initialisation.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum BackendStatus {
    Available {
        devices: usize,
    },
    Unavailable {
        reason: String,
    },
    Failed {
        reason: String,
    },
    /// Not loaded because `ANYDEV_BACKENDS` leaves it out.
    Disabled {
        reason: String,
    },
}

impl BackendStatus {
    /// The reason a backend serves no devices, if it serves none.
    pub fn reason(&self) -> Option<&str> {
        match self {
            BackendStatus::Available { .. } => None,
            BackendStatus::Unavailable { reason }
            | BackendStatus::Failed { reason }
            | BackendStatus::Disabled { reason } => Some(reason),
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            BackendStatus::Available { .. } => "available",
            BackendStatus::Unavailable { .. } => "unavailable",
            BackendStatus::Failed { .. } => "failed",
            BackendStatus::Disabled { .. } => "disabled",
        }
    }
}

/// One backend as the registry knows it.
pub struct BackendRecord {
    name: String,
    kind: Option<DeviceKind>,
    priority: i32,
    status: BackendStatus,
    backend: Option<Arc<dyn Backend>>,
}

impl BackendRecord {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn priority(&self) -> i32 {
        self.priority
    }

    pub fn status(&self) -> &BackendStatus {
        &self.status
    }

    /// The backend, when it is available.
    pub fn backend(&self) -> Option<&Arc<dyn Backend>> {
        self.backend.as_ref()
    }

    /// The devices it serves (empty unless available).
    pub fn devices(&self) -> Vec<Device> {
        match (&self.backend, self.kind) {
            (Some(b), Some(kind)) => (0..b.device_count()).map(|i| Device::new(kind, i)).collect(),
            _ => Vec::new(),
        }
    }
}

/// Settings read from the environment, separate from the process
/// environment so tests can build runtimes side by side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuntimeConfig {
    /// `ANYDEV_DEVICE`: the default device.
    pub default_device: Option<String>,
    /// `ANYDEV_BACKENDS`: the only backends to load, when set.
    pub backends: Option<Vec<String>>,
    /// Where [`Runtime::with_plugins`] looks for plugins
    /// (`ANYDEV_PLUGIN_PATH`, the XDG data dirs, `ANYDEV_PLUGINS`).
    pub plugins: crate::plugin::PluginConfig,
    /// `ANYDEV_UNIFIED_MEMORY`: `1`/`true`/`on` or `0`/`false`/`off`, as
    /// given (checked when the runtime is built; unset is off).
    pub unified_memory: Option<String>,
}

impl RuntimeConfig {
    /// Reads `ANYDEV_DEVICE`, `ANYDEV_BACKENDS` and the plugin settings
    /// ([`crate::plugin::PluginConfig::from_env`]). Empty values count as unset.
    pub fn from_env() -> RuntimeConfig {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        RuntimeConfig {
            default_device: var("ANYDEV_DEVICE").map(|v| v.trim().to_owned()),
            backends: var("ANYDEV_BACKENDS").map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            }),
            plugins: crate::plugin::PluginConfig::from_env(),
            unified_memory: var("ANYDEV_UNIFIED_MEMORY"),
        }
    }
}

/// The registry: every backend with its status, and the default device.
pub struct Runtime {
    backends: Vec<BackendRecord>,
    default_device: Result<Device>,
    default_reason: String,
    problems: Vec<String>,
    unified_memory: AtomicBool,
    /// Why `ANYDEV_UNIFIED_MEMORY` could not be read; every array call
    /// fails with it rather than guess.
    unified_memory_error: Option<Error>,
    transfers: TransferCounter,
}

static GLOBAL: OnceLock<Runtime> = OnceLock::new();

impl Runtime {
    /// The process-wide runtime, built on first call from `providers`, the
    /// plugins the environment names, and the environment's settings.
    /// Later calls return the same runtime and ignore their argument.
    pub fn global(providers: impl FnOnce() -> Vec<BackendProvider>) -> &'static Runtime {
        GLOBAL.get_or_init(|| Runtime::with_plugins(providers(), RuntimeConfig::from_env()))
    }

    /// Builds a runtime from the built-in `providers` followed by the
    /// plugins `config.plugins` discovers. Discovery problems that belong
    /// to no plugin name are kept in [`Runtime::problems`].
    pub fn with_plugins(mut providers: Vec<BackendProvider>, config: RuntimeConfig) -> Runtime {
        let reserved: Vec<String> = providers.iter().map(|p| p.name.clone()).collect();
        let discovery = crate::plugin::discover(&config.plugins, &reserved);
        let problems = discovery.problems.clone();
        providers.extend(crate::plugin::providers(discovery));
        let mut runtime = Runtime::new(providers, config);
        runtime.problems.extend(problems);
        runtime
    }

    /// Builds a runtime: initialises each provider that `config` allows,
    /// independently, then picks the default device.
    pub fn new(providers: Vec<BackendProvider>, config: RuntimeConfig) -> Runtime {
        let mut problems = Vec::new();
        if let Some(allowed) = &config.backends {
            for name in allowed {
                if !providers.iter().any(|p| &p.name == name) {
                    let known: Vec<_> = providers.iter().map(|p| p.name.as_str()).collect();
                    problems.push(format!(
                        "ANYDEV_BACKENDS names unknown backend {name:?}; known backends: {}",
                        known.join(", ")
                    ));
                }
            }
        }
        let mut backends: Vec<BackendRecord> = Vec::with_capacity(providers.len());
        for provider in providers {
            let record = if backends.iter().any(|b| b.name == provider.name) {
                failed_record(
                    &provider,
                    format!(
                        "duplicate backend name {:?}: another backend already declares it",
                        provider.name
                    ),
                )
            } else if let Some(allowed) = config.backends.as_ref().filter(|a| !a.contains(&provider.name)) {
                BackendRecord {
                    name: provider.name.clone(),
                    kind: None,
                    priority: provider.priority,
                    status: BackendStatus::Disabled {
                        reason: format!("not listed in ANYDEV_BACKENDS={}", allowed.join(",")),
                    },
                    backend: None,
                }
            } else {
                initialise(&provider)
            };
            backends.push(record);
        }
        let (unified_memory, unified_memory_error) = match config.unified_memory.as_deref().map(parse_switch) {
            None => (false, None),
            Some(Ok(on)) => (on, None),
            Some(Err(e)) => (false, Some(e)),
        };
        let mut runtime = Runtime {
            backends,
            default_device: Err(Error::backend("runtime", "not initialised")),
            default_reason: String::new(),
            problems,
            unified_memory: AtomicBool::new(unified_memory),
            unified_memory_error,
            transfers: TransferCounter::default(),
        };
        let (default_device, default_reason) = runtime.pick_default(&config);
        runtime.default_device = default_device;
        runtime.default_reason = default_reason;
        runtime
    }

    fn pick_default(&self, config: &RuntimeConfig) -> (Result<Device>, String) {
        if let Some(text) = &config.default_device {
            let chosen = text.parse::<Device>().and_then(|d| self.backend(d).map(|_| d));
            return (chosen, format!("set by ANYDEV_DEVICE={text}"));
        }
        let best = self
            .backends
            .iter()
            .filter(|b| matches!(b.status, BackendStatus::Available { devices } if devices > 0))
            .max_by_key(|b| b.priority);
        match best.and_then(|b| b.devices().first().copied()) {
            Some(device) => {
                let record = best.expect("a device implies a backend");
                let reason = format!(
                    "the available backend of highest priority ({}, priority {})",
                    record.name, record.priority
                );
                (Ok(device), reason)
            }
            None => (
                Err(Error::DeviceUnavailable {
                    device: "default".into(),
                    reason: "no backend is available (see `anydev info`)".into(),
                    available: Vec::new(),
                }),
                "no backend is available".into(),
            ),
        }
    }

    /// Every backend, in provider order, with its status.
    pub fn backends(&self) -> &[BackendRecord] {
        &self.backends
    }

    /// Every available device, backends in provider order.
    pub fn devices(&self) -> Vec<Device> {
        self.backends.iter().flat_map(BackendRecord::devices).collect()
    }

    /// Problems with the configuration itself (an unknown name in
    /// `ANYDEV_BACKENDS`), for `anydev info` to show.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The default device, or why there is none (a bad or unavailable
    /// `ANYDEV_DEVICE` is an error, never a silent fallback).
    pub fn default_device(&self) -> Result<Device> {
        self.default_device.clone()
    }

    /// Why the default device is what it is, in words.
    pub fn default_device_reason(&self) -> &str {
        &self.default_reason
    }

    /// Whether unified memory is on: new arrays are allocated in a kind the
    /// host reaches, and `to_device` shares memory the target reaches
    /// instead of copying it (design section 4). Off unless
    /// `ANYDEV_UNIFIED_MEMORY` or [`Runtime::set_unified_memory`] turns it
    /// on; an unreadable `ANYDEV_UNIFIED_MEMORY` is the error.
    pub fn unified_memory(&self) -> Result<bool> {
        match &self.unified_memory_error {
            Some(e) => Err(e.clone()),
            None => Ok(self.unified_memory.load(Ordering::Relaxed)),
        }
    }

    /// Turns unified memory on or off for arrays created and moved from
    /// now on; arrays that exist keep their memory.
    pub fn set_unified_memory(&self, on: bool) {
        self.unified_memory.store(on, Ordering::Relaxed);
    }

    /// Counts of the moves `to_device` made, shared and copied.
    pub fn transfers(&self) -> &TransferCounter {
        &self.transfers
    }

    /// The device for a creation call: `explicit`, else this thread's
    /// scope, else the default device (placement rule 1). The result is
    /// checked to be available.
    pub fn creation_device(&self, explicit: Option<Device>) -> Result<Device> {
        let device = match explicit {
            Some(d) => d,
            None => crate::current_device(|| self.default_device())?,
        };
        self.backend(device)?;
        Ok(device)
    }

    /// The backend serving `device`, or an error carrying the reason it is
    /// not available and the list of devices that are.
    pub fn backend(&self, device: Device) -> Result<&Arc<dyn Backend>> {
        let unavailable = |reason: String| Error::DeviceUnavailable {
            device: device.to_string(),
            reason,
            available: self.devices(),
        };
        let Some(record) = self.backends.iter().find(|b| b.name == device.kind().as_str()) else {
            let known: Vec<_> = self.backends.iter().map(|b| b.name.as_str()).collect();
            return Err(unavailable(format!(
                "no backend provides devices of kind {:?} (known backends: {})",
                device.kind().as_str(),
                known.join(", ")
            )));
        };
        let Some(backend) = &record.backend else {
            let reason = record.status.reason().unwrap_or("not initialised");
            return Err(unavailable(format!(
                "backend {} is {}: {reason}",
                record.name,
                record.status.label()
            )));
        };
        let count = backend.device_count();
        if device.index() >= count {
            return Err(unavailable(format!("backend {} has {count} device(s)", record.name)));
        }
        Ok(backend)
    }

    pub fn properties(&self, device: Device) -> Result<DeviceProperties> {
        self.backend(device)?.properties(device.index())
    }

    pub fn capabilities(&self, device: Device) -> Result<Capabilities> {
        self.backend(device)?.capabilities(device.index())
    }
}

fn failed_record(provider: &BackendProvider, reason: String) -> BackendRecord {
    BackendRecord {
        name: provider.name.clone(),
        kind: None,
        priority: provider.priority,
        status: BackendStatus::Failed { reason },
        backend: None,
    }
}

/// Runs one provider's initialiser, turning errors and panics into a status.
fn initialise(provider: &BackendProvider) -> BackendRecord {
    let kind = match DeviceKind::parse(&provider.name) {
        Ok(kind) => kind,
        Err(e) => return failed_record(provider, format!("invalid backend name: {e}")),
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| (provider.init)()));
    let (status, backend) = match outcome {
        Ok(Ok(backend)) if backend.name() != provider.name => (
            BackendStatus::Failed {
                reason: format!(
                    "the backend calls itself {:?} but was registered as {:?}",
                    backend.name(),
                    provider.name
                ),
            },
            None,
        ),
        Ok(Ok(backend)) => match backend.device_count() {
            0 => (
                BackendStatus::Unavailable {
                    reason: "the backend found no devices".into(),
                },
                None,
            ),
            devices => (BackendStatus::Available { devices }, Some(backend)),
        },
        Ok(Err(InitError::Unavailable(reason))) => (BackendStatus::Unavailable { reason }, None),
        Ok(Err(InitError::Failed(reason))) => (BackendStatus::Failed { reason }, None),
        Err(panic) => (
            BackendStatus::Failed {
                reason: format!("panicked during initialisation: {}", panic_message(panic.as_ref())),
            },
            None,
        ),
    };
    let priority = backend.as_ref().and_then(|b| b.priority()).unwrap_or(provider.priority);
    BackendRecord {
        name: provider.name.clone(),
        kind: Some(kind),
        priority,
        status,
        backend,
    }
}

/// The text of a panic payload, for error messages.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".into()
    }
}

/// Reads an on/off setting.
fn parse_switch(text: &str) -> Result<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(Error::invalid_argument(
            "ANYDEV_UNIFIED_MEMORY",
            format!("{text:?} is not a switch: use 1/true/on or 0/false/off"),
        )),
    }
}
