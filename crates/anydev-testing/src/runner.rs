//! Instantiating cases for devices and running one instance.
//!
//! Every case becomes one [`Trial`] per selected device (and per dtype, for
//! parametrised cases). A trial whose requirements the device does not meet
//! is a skip that names the requirement; it is never dropped. Running a
//! trial serialises it with the other trials on the devices it touches and
//! checks that those devices hold no more memory afterwards than before, so
//! a kernel or plugin that leaks buffers fails the case that leaked.

use crate::case::{Case, CaseCtx, Need, Scope};
use crate::known::KnownFailures;
use anydev_core::{Capabilities, DType, Device, Runtime};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

/// How one trial ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Pass,
    Fail(String),
    /// Not run: the unmet requirement.
    Skip(String),
    /// Failed as its device's known-failure list says it does: the reason
    /// and the failure.
    ExpectedFail(String),
    /// Listed as a known failure but passed: a failure of the run, so the
    /// stale entry gets removed.
    UnexpectedPass(String),
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Skip(_) => "skip",
            Outcome::ExpectedFail(_) => "xfail",
            Outcome::UnexpectedPass(_) => "xpass",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Outcome::Pass => "",
            Outcome::Fail(r) | Outcome::Skip(r) | Outcome::ExpectedFail(r) | Outcome::UnexpectedPass(r) => r,
        }
    }

    /// Whether the outcome fails a run.
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Fail(_) | Outcome::UnexpectedPass(_))
    }
}

/// One case on one device (and dtype).
pub struct Trial<'a> {
    pub case: &'a Case,
    pub device: Device,
    pub dtype: Option<DType>,
    /// `case::kind_index[::dtype]`, e.g. `elementwise::add_broadcast::sim_1::f32`.
    pub name: String,
    /// Why it cannot run here, when it cannot.
    pub skip: Option<String>,
    /// The known-failure reason, when the device lists this instance.
    pub known: Option<String>,
}

/// `case::kind_index[::dtype]`.
pub fn instance_name(case: &str, device: Device, dtype: Option<DType>) -> String {
    let mut name = format!("{case}::{}_{}", device.kind().as_str(), device.index());
    if let Some(d) = dtype {
        name.push_str("::");
        name.push_str(d.name());
    }
    name
}

/// What a run covers.
pub struct Plan {
    pub runtime: &'static Runtime,
    /// Devices cases may use (the CPU as a reference device, peers).
    pub devices: Vec<Device>,
    /// Devices cases are instantiated for (a subset of `devices`).
    pub under_test: Vec<Device>,
    /// Known failures from outside the devices' capabilities (a manifest).
    pub extra_known: KnownFailures,
}

impl Plan {
    /// Every case instantiated for every device under test. Errors when a
    /// device cannot be asked for its capabilities or lists malformed known
    /// failures: a run that cannot say what it covers must not go green.
    pub fn trials<'a>(&self, cases: &'a [Case]) -> Result<Vec<Trial<'a>>, String> {
        let mut trials = Vec::new();
        for &device in &self.under_test {
            let caps = self
                .runtime
                .capabilities(device)
                .map_err(|e| format!("capabilities of {device}: {e}"))?;
            let known = self.known_failures(device, &caps)?;
            let facts = Facts::of(self, device, caps)?;
            for case in cases {
                let dtypes: Vec<Option<DType>> = if case.dtypes.is_empty() {
                    vec![None]
                } else {
                    case.dtypes.iter().copied().map(Some).collect()
                };
                for dtype in dtypes {
                    let name = instance_name(&case.name, device, dtype);
                    trials.push(Trial {
                        case,
                        device,
                        dtype,
                        skip: facts.unmet(case, dtype),
                        known: known.reason(&case.name, &name).map(str::to_owned),
                        name,
                    });
                }
            }
        }
        Ok(trials)
    }

    /// The failures `device` (with capabilities `caps`) is known to have:
    /// its own list and the plan's extra one.
    pub fn known_failures(&self, device: Device, caps: &Capabilities) -> Result<KnownFailures, String> {
        let mut known = KnownFailures::from_capabilities(caps).map_err(|e| format!("{device}: {e}"))?;
        known.extend(self.extra_known.clone());
        Ok(known)
    }

    /// Runs one trial.
    pub fn run(&self, trial: &Trial<'_>) -> Outcome {
        if let Some(reason) = &trial.skip {
            return Outcome::Skip(reason.clone());
        }
        let touched: Vec<Device> = match trial.case.scope {
            Scope::Device => vec![trial.device],
            Scope::AllDevices => self.devices.clone(),
        };
        let _locks = lock(&touched);
        let before = self.in_use(&touched);
        let ctx = CaseCtx {
            runtime: self.runtime,
            device: trial.device,
            dtype: trial.dtype,
            devices: self.devices.clone(),
        };
        let body = trial.case.body;
        let result = catch_unwind(AssertUnwindSafe(|| {
            anydev_array::with_runtime(self.runtime, || body(&ctx))
        }));
        let failure = match result {
            Ok(Ok(())) => self.leak(&touched, &before),
            Ok(Err(f)) => Some(f.to_string()),
            Err(panic) => Some(format!(
                "panicked: {}",
                anydev_core::runtime::panic_message(panic.as_ref())
            )),
        };
        let where_ = match trial.dtype {
            Some(d) => format!("case {} on {} ({d})", trial.case.name, trial.device),
            None => format!("case {} on {}", trial.case.name, trial.device),
        };
        judge(&where_, failure, trial.known.as_deref())
    }

    fn in_use(&self, devices: &[Device]) -> Vec<Option<usize>> {
        devices
            .iter()
            .map(|&d| {
                let backend = self.runtime.backend(d).ok()?;
                backend.synchronize(d.index()).ok()?;
                backend.memory_stats(d.index()).ok().map(|s| s.in_use)
            })
            .collect()
    }

    /// A message when some device holds more memory than before the case.
    fn leak(&self, devices: &[Device], before: &[Option<usize>]) -> Option<String> {
        let after = self.in_use(devices);
        let leaks: Vec<String> = devices
            .iter()
            .zip(before.iter().zip(&after))
            .filter_map(|(d, (b, a))| match (b, a) {
                (Some(b), Some(a)) if a > b => Some(format!("{d} holds {} more bytes", a - b)),
                _ => None,
            })
            .collect();
        (!leaks.is_empty()).then(|| {
            format!(
                "memory is freed when arrays drop: expected the devices' in-use bytes back where they were, got {}",
                leaks.join(", ")
            )
        })
    }
}

/// The outcome of a check at `where_` that failed with `failure` (or
/// passed), given the reason it is a known failure, if it is listed.
pub fn judge(where_: &str, failure: Option<String>, known: Option<&str>) -> Outcome {
    match (failure, known) {
        (None, None) => Outcome::Pass,
        (Some(f), None) => Outcome::Fail(format!("{where_}: {f}")),
        (Some(f), Some(reason)) => Outcome::ExpectedFail(format!("{reason} ({f})")),
        (None, Some(reason)) => Outcome::UnexpectedPass(format!(
            "{where_} is listed as a known failure ({reason}) but passed; remove the entry"
        )),
    }
}

/// What requirements are checked against, gathered once per device.
struct Facts {
    device: Device,
    caps: Capabilities,
    backend: Arc<dyn anydev_core::Backend>,
    same_kind: usize,
    selected: usize,
    memory_bytes: u64,
    has_limit: bool,
    /// The extension ops the device runs.
    extension_ops: Vec<String>,
}

impl Facts {
    fn of(plan: &Plan, device: Device, caps: Capabilities) -> Result<Facts, String> {
        let backend = Arc::clone(plan.runtime.backend(device).map_err(|e| e.to_string())?);
        let memory_bytes = plan.runtime.properties(device).map_or(0, |p| p.memory_bytes);
        let has_limit = backend.memory_stats(device.index()).is_ok_and(|s| s.limit.is_some());
        let extension_ops = anydev_array::extension::device_ops_in(plan.runtime, device)
            .map_err(|e| format!("extension ops of {device}: {e}"))?;
        Ok(Facts {
            device,
            same_kind: plan.devices.iter().filter(|d| d.kind() == device.kind()).count(),
            selected: plan.devices.len(),
            caps,
            backend,
            memory_bytes,
            has_limit,
            extension_ops,
        })
    }

    fn holds(&self, dtype: DType) -> bool {
        self.caps.supports_dtype(dtype)
    }

    /// The first requirement of `case` (for `dtype`) the device does not meet.
    fn unmet(&self, case: &Case, dtype: Option<DType>) -> Option<String> {
        let declared = || self.caps.strings(anydev_core::capability::keys::DTYPES).join(",");
        if let Some(d) = dtype.filter(|&d| !self.holds(d)) {
            return Some(format!("needs dtype {d} ({} declares {})", self.device, declared()));
        }
        let index = self.device.index();
        case.needs.iter().find_map(|need| {
            let met = match *need {
                Need::F64 => self.caps.flag(anydev_core::capability::keys::F64),
                Need::DType(d) => self.holds(d),
                Need::Op(op, d) => {
                    let d = d.or(dtype).unwrap_or(DType::F32);
                    self.holds(d) && self.backend.supports(index, op, d)
                }
                Need::SameKindDevices(n) => self.same_kind >= n,
                Need::Devices(n) => self.selected >= n,
                Need::UnifiedMemory => {
                    use anydev_core::capability::keys;
                    self.caps.flag(keys::PAGEABLE_MEMORY_ACCESS) || self.caps.flag(keys::MANAGED_MEMORY)
                }
                Need::PeerAccess => !self
                    .caps
                    .strings(anydev_core::capability::keys::PEER_DEVICES)
                    .is_empty(),
                Need::MemoryBytes(n) => self.memory_bytes >= n,
                Need::MemoryLimit => self.has_limit,
                Need::ExtensionOp(op) => self.extension_ops.iter().any(|o| o == op),
                Need::Capability(key) => self.caps.flag(key),
            };
            (!met).then(|| match *need {
                Need::Op(op, d) => format!(
                    "{need} ({} does not implement {} for {})",
                    self.device,
                    op.name(),
                    d.or(dtype).unwrap_or(DType::F32)
                ),
                Need::SameKindDevices(_) => format!(
                    "{need} ({} selected of kind {})",
                    self.same_kind,
                    self.device.kind().as_str()
                ),
                _ => need.to_string(),
            })
        })
    }
}

/// Locks `devices` (in a fixed order, so two trials never deadlock).
fn lock(devices: &[Device]) -> Vec<std::sync::MutexGuard<'static, ()>> {
    static LOCKS: OnceLock<Mutex<HashMap<Device, &'static Mutex<()>>>> = OnceLock::new();
    let mut sorted = devices.to_vec();
    sorted.sort();
    sorted.dedup();
    let mutexes: Vec<&'static Mutex<()>> = {
        let mut map = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        sorted
            .iter()
            .map(|d| *map.entry(*d).or_insert_with(|| Box::leak(Box::new(Mutex::new(())))))
            .collect()
    };
    mutexes
        .into_iter()
        .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
        .collect()
}
