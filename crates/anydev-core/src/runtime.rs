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
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

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

/// One backend as the registry knows it. Its provider runs the first
/// time anything asks for the backend, its status or its devices, never
/// before: a program that only uses `cpu:0` never starts Vulkan or CUDA.
pub struct BackendRecord {
    name: String,
    /// The provider's priority: an upper bound of [`BackendRecord::priority`],
    /// known before the backend starts.
    declared_priority: i32,
    start: Start,
    started: OnceLock<Started>,
}

/// How a record gets its state.
enum Start {
    /// Run the provider's initialiser when first needed.
    Provider(Box<InitFn>),
    /// Decided when the runtime was built (disabled, a duplicate name).
    Settled(BackendStatus),
}

/// A record's state once its provider has run.
struct Started {
    kind: Option<DeviceKind>,
    priority: i32,
    status: BackendStatus,
    backend: Option<Arc<dyn Backend>>,
}

impl BackendRecord {
    fn new(provider: BackendProvider) -> BackendRecord {
        BackendRecord {
            name: provider.name,
            declared_priority: provider.priority,
            start: Start::Provider(provider.init),
            started: OnceLock::new(),
        }
    }

    /// A record whose status is decided without running its provider.
    fn settled(provider: BackendProvider, status: BackendStatus) -> BackendRecord {
        BackendRecord {
            start: Start::Settled(status),
            ..BackendRecord::new(provider)
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its default-device priority: the provider's, or lower where the
    /// started backend asks for less (software devices). Starts it.
    pub fn priority(&self) -> i32 {
        self.started().priority
    }

    /// How it started. Starts it.
    pub fn status(&self) -> &BackendStatus {
        &self.started().status
    }

    /// The backend, when it is available. Starts it.
    pub fn backend(&self) -> Option<&Arc<dyn Backend>> {
        self.started().backend.as_ref()
    }

    /// Whether its provider has run (or its status was settled without
    /// running it); asking does not start it.
    pub fn is_started(&self) -> bool {
        self.started.get().is_some()
    }

    /// The devices it serves (empty unless available). Starts it.
    pub fn devices(&self) -> Vec<Device> {
        let started = self.started();
        match (&started.backend, started.kind) {
            (Some(b), Some(kind)) => (0..b.device_count()).map(|i| Device::new(kind, i)).collect(),
            _ => Vec::new(),
        }
    }

    fn started(&self) -> &Started {
        self.started.get_or_init(|| match &self.start {
            Start::Provider(init) => initialise(&self.name, self.declared_priority, init),
            Start::Settled(status) => Started {
                kind: None,
                priority: self.declared_priority,
                status: status.clone(),
                backend: None,
            },
        })
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
    /// `ANYDEV_DEVICE`, as given.
    configured_device: Option<String>,
    /// The default device and why, picked on first need.
    default: OnceLock<(Result<Device>, String)>,
    /// A default set with [`Runtime::set_default_device`], which wins.
    chosen_default: RwLock<Option<Device>>,
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
    /// plugins `config.plugins` discovers (their manifests are read now,
    /// their libraries opened when first needed). Discovery problems that
    /// belong to no plugin name are kept in [`Runtime::problems`].
    pub fn with_plugins(mut providers: Vec<BackendProvider>, config: RuntimeConfig) -> Runtime {
        let reserved: Vec<String> = providers.iter().map(|p| p.name.clone()).collect();
        let discovery = crate::plugin::discover(&config.plugins, &reserved);
        let problems = discovery.problems.clone();
        providers.extend(crate::plugin::providers(discovery));
        let mut runtime = Runtime::new(providers, config);
        runtime.problems.extend(problems);
        runtime
    }

    /// Builds a runtime of `providers` that `config` allows. Nothing starts
    /// here: each backend starts, independently of the others, when it is
    /// first needed (see [`BackendRecord`]).
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
                let reason = format!(
                    "duplicate backend name {:?}: another backend already declares it",
                    provider.name
                );
                BackendRecord::settled(provider, BackendStatus::Failed { reason })
            } else if let Some(allowed) = config.backends.as_ref().filter(|a| !a.contains(&provider.name)) {
                let reason = format!("not listed in ANYDEV_BACKENDS={}", allowed.join(","));
                BackendRecord::settled(provider, BackendStatus::Disabled { reason })
            } else {
                BackendRecord::new(provider)
            };
            backends.push(record);
        }
        let (unified_memory, unified_memory_error) = match config.unified_memory.as_deref().map(parse_switch) {
            None => (false, None),
            Some(Ok(on)) => (on, None),
            Some(Err(e)) => (false, Some(e)),
        };
        Runtime {
            backends,
            configured_device: config.default_device,
            default: OnceLock::new(),
            chosen_default: RwLock::new(None),
            problems,
            unified_memory: AtomicBool::new(unified_memory),
            unified_memory_error,
            transfers: TransferCounter::default(),
        }
    }

    /// The default device by the documented rule: `ANYDEV_DEVICE`, which
    /// starts only its own backend; else device 0 of the available backend
    /// of highest priority, the later one in provider order on a tie.
    /// Backends are started from the highest declared priority down, and
    /// only while one could still win: a started backend's priority never
    /// exceeds its declared one.
    fn pick_default(&self) -> (Result<Device>, String) {
        if let Some(text) = &self.configured_device {
            let chosen = text.parse::<Device>().and_then(|d| self.backend(d).map(|_| d));
            return (chosen, format!("set by ANYDEV_DEVICE={text}"));
        }
        let mut candidates: Vec<(usize, &BackendRecord)> = self.backends.iter().enumerate().collect();
        candidates.sort_by_key(|&(order, record)| std::cmp::Reverse((record.declared_priority, order)));
        let mut best: Option<((i32, usize), &BackendRecord)> = None;
        for (order, record) in candidates {
            if best.is_some_and(|(key, _)| (record.declared_priority, order) < key) {
                break;
            }
            if matches!(record.status(), BackendStatus::Available { devices } if *devices > 0) {
                let key = (record.priority(), order);
                if best.is_none_or(|(best_key, _)| key > best_key) {
                    best = Some((key, record));
                }
            }
        }
        match best.and_then(|(_, record)| record.devices().first().copied().map(|d| (d, record))) {
            Some((device, record)) => {
                let reason = format!(
                    "the available backend of highest priority ({}, priority {})",
                    record.name,
                    record.priority()
                );
                (Ok(device), reason)
            }
            None => {
                let reason = if self.backends.is_empty() {
                    "no backend is compiled into this program and no plugin was found: depend on the \
                     `anydev` crate, whose features register cpu, wgpu and cuda, or register backends \
                     with `anydev_core::builtin_backend!`"
                } else {
                    "no backend is available (see `anydev info`)"
                };
                (
                    Err(Error::DeviceUnavailable {
                        device: "default".into(),
                        reason: reason.into(),
                        available: Vec::new(),
                    }),
                    "no backend is available".into(),
                )
            }
        }
    }

    fn picked_default(&self) -> &(Result<Device>, String) {
        self.default.get_or_init(|| self.pick_default())
    }

    /// Every backend, in provider order, with its status.
    pub fn backends(&self) -> &[BackendRecord] {
        &self.backends
    }

    /// The record of the backend named `name` (the device kind it serves),
    /// without starting it.
    pub fn record(&self, name: &str) -> Option<&BackendRecord> {
        self.backends.iter().find(|b| b.name == name)
    }

    /// Every available device, backends in provider order. Starts every
    /// backend.
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
        match self.chosen_default() {
            Some(device) => Ok(device),
            None => self.picked_default().0.clone(),
        }
    }

    /// Why the default device is what it is, in words.
    pub fn default_device_reason(&self) -> String {
        match self.chosen_default() {
            Some(device) => format!("set to {device} with set_default_device"),
            None => self.picked_default().1.clone(),
        }
    }

    /// The default [`Runtime::set_default_device`] chose, if any.
    fn chosen_default(&self) -> Option<Device> {
        *self.chosen_default.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes `device` the default for creation calls from now on, in every
    /// thread (as `torch.set_default_device`); `with_device` scopes still
    /// win inside them. `None` returns to the rule [`Runtime::default_device`]
    /// follows. The device must be available.
    pub fn set_default_device(&self, device: Option<Device>) -> Result<()> {
        if let Some(device) = device {
            self.backend(device)?;
        }
        *self.chosen_default.write().unwrap_or_else(PoisonError::into_inner) = device;
        Ok(())
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

    /// Shuts down every backend that has started: plugins wait for their
    /// devices and get their `shutdown` call, with arrays possibly still
    /// live (they are let go of without reaching the plugin). For the end
    /// of a program: the process-wide runtime is never dropped, so this is
    /// the only way its plugins hear that the process exits. Every backend
    /// is asked even when one fails; the first failure is returned.
    pub fn shutdown(&self) -> Result<()> {
        let mut outcome = Ok(());
        for record in self.backends.iter().filter(|r| r.is_started()) {
            if let Some(backend) = record.backend() {
                let result = backend.shutdown();
                if outcome.is_ok() {
                    outcome = result;
                }
            }
        }
        outcome
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
        let Some(record) = self.record(device.kind().as_str()) else {
            let known: Vec<_> = self.backends.iter().map(|b| b.name.as_str()).collect();
            return Err(unavailable(format!(
                "no backend provides devices of kind {:?} (known backends: {})",
                device.kind().as_str(),
                known.join(", ")
            )));
        };
        let Some(backend) = record.backend() else {
            let reason = record.status().reason().unwrap_or("not initialised");
            return Err(unavailable(format!(
                "backend {} is {}: {reason}",
                record.name,
                record.status().label()
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

/// Runs one provider's initialiser, turning errors and panics into a status.
fn initialise(name: &str, declared_priority: i32, init: &InitFn) -> Started {
    let failed = |reason: String| Started {
        kind: None,
        priority: declared_priority,
        status: BackendStatus::Failed { reason },
        backend: None,
    };
    let kind = match DeviceKind::parse(name) {
        Ok(kind) => kind,
        Err(e) => return failed(format!("invalid backend name: {e}")),
    };
    let (status, backend) = match catch_unwind(AssertUnwindSafe(init)) {
        Ok(Ok(backend)) if backend.name() != name => {
            return failed(format!(
                "the backend calls itself {:?} but was registered as {name:?}",
                backend.name()
            ))
        }
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
        Err(panic) => {
            return failed(format!(
                "panicked during initialisation: {}",
                panic_message(panic.as_ref())
            ))
        }
    };
    // The declared priority bounds the started one, so the default device
    // can be picked without starting backends that cannot win.
    let priority = backend
        .as_ref()
        .and_then(|b| b.priority())
        .map_or(declared_priority, |p| p.min(declared_priority));
    Started {
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
            format!("{text:?} is not a switch: use 1/true/on/yes or 0/false/off/no"),
        )),
    }
}
