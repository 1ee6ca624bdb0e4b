//! Which engine moves each device kind's arrays between ranks.
//!
//! The table is data: a default per device kind, overridden by
//! `ANYDEV_DIST_BACKEND=kind:engine,...` and by
//! [`crate::Communicator::set_engine`]. Whether an array goes through
//! host staging is not in the table: it follows from the device's
//! `host_accessible_memory` capability and is always reported by
//! [`crate::Communicator::describe`].

use crate::error::{DistError, Result};
use std::collections::BTreeMap;
use std::fmt;

/// A collective engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// MPI (Open MPI, MPICH, ...): host memory directly, every other
    /// device's memory through a copy to the host and back.
    Mpi,
    /// NVIDIA's NCCL, for `cuda` arrays in device memory: the CUDA
    /// backend's own collectives (NCCL opened at run time), bootstrapped
    /// over MPI like `plugin`.
    Nccl,
    /// The collectives a device plugin offers for its own devices (ABI
    /// 1.6), bootstrapped over MPI: the data stays in device memory.
    Plugin,
}

impl Engine {
    /// Every engine, in the order of their codes in a metadata record.
    pub(crate) const ALL: [Engine; 3] = [Engine::Mpi, Engine::Nccl, Engine::Plugin];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Mpi => "mpi",
            Engine::Nccl => "nccl",
            Engine::Plugin => "plugin",
        }
    }

    /// Whether the engine keeps the data in device memory, running the
    /// device backend's own collectives.
    pub fn is_device_native(self) -> bool {
        matches!(self, Engine::Nccl | Engine::Plugin)
    }

    /// Whether arrays of device kind `kind` (`*` for any) can use the
    /// engine, or why not.
    pub fn availability_for(self, kind: &str) -> Result<(), String> {
        if self == Engine::Mpi || kind == "*" {
            return Ok(());
        }
        match (self, backend_collectives(kind)) {
            (Engine::Nccl, Some(library)) if library == "nccl" => Ok(()),
            (Engine::Plugin, Some(library)) if library != "nccl" => Ok(()),
            (Engine::Nccl, _) => Err(nccl_missing(kind)),
            _ => Err(format!(
                "no loaded plugin of kind {kind} offers collectives (the ABI 1.6 calls); use mpi"
            )),
        }
    }

    /// The engine for a backend's own collective library.
    fn for_library(library: &str) -> Engine {
        if library == "nccl" {
            Engine::Nccl
        } else {
            Engine::Plugin
        }
    }
}

/// The collective library of the loaded backend of device kind `kind`,
/// when it offers one (`"nccl"` for CUDA, a plugin's own).
fn backend_collectives(kind: &str) -> Option<String> {
    anydev::runtime().record(kind)?.backend()?.collectives()
}

/// Why `kind`'s arrays cannot go through NCCL: no such backend, no
/// device, or no NCCL library (the `cuda.collectives` capability).
fn nccl_missing(kind: &str) -> String {
    if kind != "cuda" {
        return format!("NCCL serves cuda devices, not {kind}");
    }
    let runtime = anydev::runtime();
    let Some(record) = runtime.record(kind) else {
        return "this build has no CUDA backend (anydev-dist's cuda feature)".into();
    };
    if record.backend().is_none() {
        return format!(
            "no {kind} devices: {}",
            record.status().reason().unwrap_or("none found")
        );
    }
    let reason = anydev::DeviceKind::parse(kind)
        .ok()
        .and_then(|k| runtime.capabilities(anydev::Device::new(k, 0)).ok())
        .and_then(|caps| match caps.get("cuda.collectives") {
            Some(anydev::capability::CapValue::Str(s)) => Some(s.clone()),
            _ => None,
        });
    match reason {
        Some(reason) => format!("NCCL {reason}"),
        None => format!("the {kind} backend offers no NCCL"),
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Engine {
    type Err = DistError;

    fn from_str(s: &str) -> Result<Engine> {
        match s.trim() {
            "mpi" => Ok(Engine::Mpi),
            "nccl" => Ok(Engine::Nccl),
            "plugin" => Ok(Engine::Plugin),
            other => Err(DistError::Config(format!(
                "unknown engine {other:?}; known engines: mpi, nccl, plugin"
            ))),
        }
    }
}

/// The engine for each device kind; kinds not listed use the fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineTable {
    by_kind: BTreeMap<String, Engine>,
    fallback: Engine,
}

impl Default for EngineTable {
    /// The built-in defaults: every kind on MPI. `cuda` is listed to make
    /// explicit that it goes through MPI with host staging where NCCL is
    /// missing ([`EngineTable::for_runtime`] routes it through NCCL where
    /// NCCL loads).
    fn default() -> EngineTable {
        let by_kind = [
            ("cpu", Engine::Mpi),
            ("cuda", Engine::Mpi),
            ("sim", Engine::Mpi),
            ("wgpu", Engine::Mpi),
        ]
        .into_iter()
        .map(|(k, e)| (k.to_owned(), e))
        .collect();
        EngineTable {
            by_kind,
            fallback: Engine::Mpi,
        }
    }
}

/// The variable that overrides the default table.
pub const BACKEND_VAR: &str = "ANYDEV_DIST_BACKEND";

impl EngineTable {
    /// The built-in defaults, plus the backend's own collectives for
    /// every loaded kind that offers them: `nccl` for `cuda` where NCCL
    /// loads, `plugin` for a plugin kind with the ABI 1.6 calls (as
    /// PyTorch picks NCCL for CUDA and lets an out-of-tree device register
    /// its collective backend).
    pub fn for_runtime() -> EngineTable {
        let mut table = EngineTable::default();
        let runtime = anydev::runtime();
        for record in runtime.backends() {
            if let Some(library) = backend_collectives(record.name()) {
                table
                    .by_kind
                    .insert(record.name().to_owned(), Engine::for_library(&library));
            }
        }
        table
    }

    /// [`EngineTable::for_runtime`] with `ANYDEV_DIST_BACKEND` applied.
    pub fn from_env() -> Result<EngineTable> {
        let mut table = EngineTable::for_runtime();
        if let Ok(spec) = std::env::var(BACKEND_VAR) {
            table.apply(&spec).map_err(|e| match e {
                DistError::Config(why) => DistError::Config(format!("{BACKEND_VAR}={spec:?}: {why}")),
                other => other,
            })?;
        }
        Ok(table)
    }

    /// Applies `kind:engine,kind:engine` (`*` names every other kind).
    /// Nothing changes when any item is bad.
    pub fn apply(&mut self, spec: &str) -> Result<()> {
        let mut next = self.clone();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((kind, engine)) = item.split_once(':') else {
                return Err(DistError::Config(format!(
                    "{item:?} is not kind:engine (for example sim:mpi)"
                )));
            };
            next.set(kind.trim(), engine.parse()?)?;
        }
        *self = next;
        Ok(())
    }

    /// Routes `kind` (or every other kind, for `*`) through `engine`. An
    /// engine this build does not have is an error carrying the reason.
    pub fn set(&mut self, kind: &str, engine: Engine) -> Result<()> {
        if kind != "*" {
            anydev::DeviceKind::parse(kind)
                .map_err(|_| DistError::Config(format!("{kind:?} is not a device kind name")))?;
        }
        engine
            .availability_for(kind)
            .map_err(|reason| DistError::Config(format!("{kind}:{engine}: {reason}")))?;
        if kind == "*" {
            self.fallback = engine;
        } else {
            self.by_kind.insert(kind.to_owned(), engine);
        }
        Ok(())
    }

    /// The engine for `kind`.
    pub fn engine(&self, kind: &str) -> Engine {
        self.by_kind.get(kind).copied().unwrap_or(self.fallback)
    }

    /// Every listed kind with its engine, then the fallback as `*`.
    pub fn entries(&self) -> Vec<(String, Engine)> {
        let mut out: Vec<_> = self.by_kind.iter().map(|(k, e)| (k.clone(), *e)).collect();
        out.push(("*".into(), self.fallback));
        out
    }
}

impl fmt::Display for EngineTable {
    /// `cpu:mpi,cuda:mpi,...,*:mpi`, the format `ANYDEV_DIST_BACKEND` reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.entries().iter().map(|(k, e)| format!("{k}:{e}")).collect();
        f.write_str(&parts.join(","))
    }
}

/// How one device's arrays travel: the engine, and whether through host staging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub engine: Engine,
    /// The data is copied to host memory for the engine and back after.
    pub host_staging: bool,
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.engine)?;
        if self.host_staging {
            f.write_str(" (host staging)")?;
        }
        Ok(())
    }
}

/// The route for `device`'s arrays: a plugin's own collectives keep the
/// data in device memory; MPI stages it through the host unless the host
/// can address the device's memory (`host_accessible_memory`).
pub fn route(table: &EngineTable, device: anydev::Device) -> Result<Route> {
    let kind = device.kind().as_str();
    let engine = table.engine(kind);
    engine
        .availability_for(kind)
        .map_err(|reason| DistError::Config(format!("{device}: {kind}:{engine}: {reason}")))?;
    let host_staging = !engine.is_device_native() && {
        let caps = anydev::runtime().capabilities(device)?;
        !caps.flag(anydev::capability::keys::HOST_ACCESSIBLE_MEMORY)
    };
    Ok(Route { engine, host_staging })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_route_every_kind_through_mpi() {
        let t = EngineTable::default();
        for kind in ["cpu", "cuda", "sim", "wgpu", "some_vendor"] {
            assert_eq!(t.engine(kind), Engine::Mpi, "{kind}");
        }
        assert_eq!(t.to_string(), "cpu:mpi,cuda:mpi,sim:mpi,wgpu:mpi,*:mpi");
    }

    #[test]
    fn overrides_parse_and_round_trip() {
        let mut t = EngineTable::default();
        t.apply("sim:mpi, vendor_x:mpi ,").unwrap();
        assert_eq!(t.engine("vendor_x"), Engine::Mpi);
        let again = {
            let mut u = EngineTable::default();
            u.apply(&t.to_string()).unwrap();
            u
        };
        assert_eq!(again, t);
    }

    #[test]
    fn bad_overrides_are_errors_that_say_why() {
        let mut t = EngineTable::default();
        let e = t.apply("sim").unwrap_err().to_string();
        assert!(e.contains("kind:engine"), "{e}");
        let e = t.apply("sim:gloo").unwrap_err().to_string();
        assert!(e.contains("unknown engine \"gloo\""), "{e}");
        let e = t.apply("cpu:plugin").unwrap_err().to_string();
        assert!(e.contains("no loaded plugin of kind cpu offers collectives"), "{e}");
        let e = t.apply("Sim:mpi").unwrap_err().to_string();
        assert!(e.contains("not a device kind"), "{e}");
        let e = t.set("Sim", Engine::Mpi).unwrap_err().to_string();
        assert!(e.contains("\"Sim\" is not a device kind name"), "{e}");
        let e = t.apply("sim:mpi,cpu:nccl").unwrap_err().to_string();
        assert!(e.contains("NCCL serves cuda devices, not cpu"), "{e}");
        assert_eq!(t, EngineTable::default(), "a failed override changes nothing");
    }

    #[test]
    fn nccl_is_refused_with_its_reason_where_it_does_not_load() {
        let mut t = EngineTable::default();
        match Engine::Nccl.availability_for("cuda") {
            Ok(()) => {
                t.apply("cuda:nccl").unwrap();
                assert_eq!(t.engine("cuda"), Engine::Nccl);
                assert_eq!(EngineTable::for_runtime().engine("cuda"), Engine::Nccl);
            }
            Err(reason) => {
                println!("{reason}");
                assert!(
                    [
                        "this build has no CUDA backend",
                        "no cuda devices: ",
                        "NCCL unavailable"
                    ]
                    .iter()
                    .any(|start| reason.starts_with(start)),
                    "{reason}"
                );
                let e = t.apply("cuda:nccl").unwrap_err().to_string();
                assert!(e.contains(&reason), "{e}");
                assert_eq!(EngineTable::for_runtime().engine("cuda"), Engine::Mpi);
            }
        }
    }

    #[test]
    fn staging_is_reported_in_the_route() {
        let staged = Route {
            engine: Engine::Mpi,
            host_staging: true,
        };
        assert_eq!(staged.to_string(), "mpi (host staging)");
        let direct = Route {
            engine: Engine::Mpi,
            host_staging: false,
        };
        assert_eq!(direct.to_string(), "mpi");
    }
}
