//! The conformance run behind `anydev conformance PATH`: every case on
//! every device of one plugin, with the CPU beside it as a reference device
//! for transfers and mismatches, run one at a time so memory accounting is
//! exact, then a final check that the plugin holds no memory.
//!
//! `PATH` is a plugin library (its device kind is the file's stem without
//! `lib` and `anydev_`: `libanydev_sim.so` is `sim`) or a plugin manifest
//! (`*.json`), whose `expected_failures` then apply.

use crate::known::KnownFailures;
use crate::runner::{judge, Outcome, Plan};
use anydev_core::plugin::{self, Entry, Manifest, PluginSpec};
use anydev_core::{BackendStatus, Device, Runtime, RuntimeConfig};
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::Path;

/// The row that stands for the plugin loading at all.
pub const LOAD_CASE: &str = "abi::plugin_loads";

/// One line of the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The full instance name (`elementwise::add_broadcast::sim_0::f32`).
    pub name: String,
    pub case: String,
    pub device: String,
    pub dtype: Option<String>,
    /// `pass`, `fail`, `skip`, `xfail` or `xpass`.
    pub outcome: String,
    pub reason: String,
}

/// What a conformance run found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub plugin: String,
    pub library: String,
    pub devices: Vec<String>,
    /// Why the run could not start (the plugin did not load, ...).
    pub error: Option<String>,
    pub rows: Vec<Row>,
    pub summary: Summary,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub passed: usize,
    /// Failures and unexpected passes.
    pub failed: usize,
    /// Skips and expected failures: what was not certified.
    pub skipped: usize,
    /// Of `skipped`, the expected failures.
    pub expected_failures: usize,
}

impl Summary {
    /// Counts one row by its outcome label.
    pub fn count(&mut self, outcome: &str) {
        match outcome {
            "pass" => self.passed += 1,
            "skip" => self.skipped += 1,
            "xfail" => {
                self.skipped += 1;
                self.expected_failures += 1;
            }
            _ => self.failed += 1,
        }
    }
}

impl Report {
    /// An empty report for the plugin at `path`, named as far as the path
    /// tells (the manifest's own name replaces it once it is read).
    pub fn new(path: &Path) -> Report {
        let plugin = if path.extension().is_some_and(|e| e == "json") {
            path.file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
        } else {
            kind_from_file(path)
        };
        Report {
            plugin,
            library: path.display().to_string(),
            devices: Vec::new(),
            error: None,
            rows: Vec::new(),
            summary: Summary::default(),
        }
    }

    /// Adds a finished row and counts it.
    pub fn push(&mut self, row: Row) {
        self.summary.count(&row.outcome);
        self.rows.push(row);
    }

    /// Runs one instance, telling `progress` before and after, and adds
    /// its row.
    fn record(&mut self, mut row: Row, progress: &mut dyn Progress, run: impl FnOnce() -> Outcome) {
        progress.starting(&row);
        let outcome = run();
        row.outcome = outcome.label().to_owned();
        row.reason = outcome.reason().to_owned();
        progress.finished(&row);
        self.push(row);
    }

    /// Records why the run could not start as its one failed row, so that
    /// the summary and the JSON count it: a plugin that does not load is
    /// a failed certification, never an empty pass.
    pub fn fail_to_start(&mut self, reason: String) {
        self.push(Row {
            name: LOAD_CASE.to_owned(),
            case: LOAD_CASE.to_owned(),
            device: "-".to_owned(),
            dtype: None,
            outcome: "fail".to_owned(),
            reason: reason.clone(),
        });
        self.error = Some(reason);
    }

    /// Whether the plugin passed: it loaded and nothing failed.
    pub fn success(&self) -> bool {
        self.error.is_none() && self.summary.failed == 0
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serialises")
    }

    /// A table (case, device, dtype, outcome, reason) and the summary line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "plugin {} (library {})", self.plugin, self.library);
        if !self.devices.is_empty() {
            let _ = writeln!(
                out,
                "devices under test: {} (all of this library's; the CPU serves only as a reference)",
                self.devices.join(", ")
            );
        }
        if let Some(e) = &self.error {
            let _ = writeln!(out, "error: {e}");
        }
        let width = self.rows.iter().map(|r| r.case.len()).max().unwrap_or(4).max(4);
        let dev_width = self.rows.iter().map(|r| r.device.len()).max().unwrap_or(6).max(6);
        let _ = writeln!(
            out,
            "{:width$}  {:dev_width$}  {:5}  {:6}  reason",
            "case", "device", "dtype", "result"
        );
        for row in &self.rows {
            let _ = writeln!(
                out,
                "{:width$}  {:dev_width$}  {:5}  {:6}  {}",
                row.case,
                row.device,
                row.dtype.as_deref().unwrap_or("-"),
                row.outcome,
                row.reason
            );
        }
        let s = self.summary;
        if s.expected_failures > 0 {
            let _ = writeln!(out, "({} of the skipped are expected failures)", s.expected_failures);
        }
        let _ = writeln!(out, "{} passed, {} failed, {} skipped", s.passed, s.failed, s.skipped);
        out
    }
}

/// Which instances a run covers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selection<'a> {
    /// Keeps the instances whose name contains it (or matches it, with `*`).
    pub filter: Option<&'a str>,
    /// Skips every instance up to and including this one (a run that goes
    /// on after the instance that crashed the previous process).
    pub resume_after: Option<&'a str>,
}

/// What a run tells as it goes. A supervisor in another process
/// ([`crate::isolated`]) learns from it which instance was running when a
/// plugin crashed.
pub trait Progress {
    /// The plugin is about to load; `report` names it and its library.
    fn opening(&mut self, _report: &Report) {}
    /// The plugin loaded; `report` names its devices.
    fn loaded(&mut self, _report: &Report) {}
    /// An instance is about to run (its row has no outcome yet).
    fn starting(&mut self, _row: &Row) {}
    fn finished(&mut self, _row: &Row) {}
}

/// Progress nobody listens to.
struct Quiet;

impl Progress for Quiet {}

/// Runs the conformance suite, in this process, against the plugin at
/// `path`; `filter` keeps the instances whose name contains it (or matches
/// it, with `*`). A plugin that crashes takes this process with it:
/// [`crate::isolated`] runs it in a child instead.
pub fn run(path: &Path, filter: Option<&str>) -> Report {
    let selection = Selection {
        filter,
        resume_after: None,
    };
    run_with(path, selection, &mut Quiet)
}

/// [`run`] over `selection`, telling `progress` as it goes.
pub fn run_with(path: &Path, selection: Selection<'_>, progress: &mut dyn Progress) -> Report {
    let mut report = Report::new(path);
    if let Err(e) = run_into(path, selection, &mut report, progress) {
        report.fail_to_start(e);
    }
    report
}

fn run_into(
    path: &Path,
    selection: Selection<'_>,
    report: &mut Report,
    progress: &mut dyn Progress,
) -> Result<(), String> {
    let (spec, known) = spec_for(path)?;
    report.plugin = spec.name.clone();
    report.library = spec.library.display().to_string();
    refuse_built_in_name(&spec)?;
    progress.opening(report);
    let name = spec.name.clone();
    let runtime: &'static Runtime = Box::leak(Box::new(Runtime::new(
        vec![anydev_cpu::provider(), plugin::provider(Entry::Plugin(spec))],
        RuntimeConfig::default(),
    )));
    let record = runtime
        .record(&name)
        .ok_or_else(|| format!("plugin {name} was not registered: {:?}", runtime.problems()))?;
    if !matches!(record.status(), BackendStatus::Available { .. }) {
        return Err(format!(
            "plugin {name} is {}: {}",
            record.status().label(),
            record.status().reason().unwrap_or("")
        ));
    }
    // The record is the plugin's own: no built-in shares its name.
    let under_test = record.devices();
    report.devices = under_test.iter().map(Device::to_string).collect();
    progress.loaded(report);
    let plan = Plan {
        runtime,
        devices: runtime.devices(),
        under_test: under_test.clone(),
        extra_known: known,
    };
    let cases = crate::cases::all();
    let trials = plan.trials(&cases)?;
    let mut resumed = selection.resume_after.is_none();
    for trial in trials.iter() {
        if !resumed {
            resumed = Some(trial.name.as_str()) == selection.resume_after;
            continue;
        }
        if !selection.filter.is_none_or(|f| matches_filter(f, &trial.name)) {
            continue;
        }
        let row = Row {
            name: trial.name.clone(),
            case: trial.case.name.clone(),
            device: trial.device.to_string(),
            dtype: trial.dtype.map(|d| d.name().to_owned()),
            outcome: String::new(),
            reason: String::new(),
        };
        report.record(row, progress, || plan.run(trial));
    }
    for device in under_test {
        let name = format!("{MEMORY_CASE}::{}_{}", device.kind().as_str(), device.index());
        let caps = runtime
            .capabilities(device)
            .map_err(|e| format!("capabilities of {device}: {e}"))?;
        let known = plan.known_failures(device, &caps)?;
        let reason = known.reason(MEMORY_CASE, &name).map(str::to_owned);
        let row = Row {
            name,
            case: MEMORY_CASE.into(),
            device: device.to_string(),
            dtype: None,
            outcome: String::new(),
            reason: String::new(),
        };
        let where_ = format!("case {MEMORY_CASE} on {device}");
        report.record(row, progress, || {
            judge(&where_, memory_left(runtime, device), reason.as_deref())
        });
    }
    Ok(())
}

/// The check, after every case, that the plugin holds no memory.
const MEMORY_CASE: &str = "abi::memory_is_freed_after_the_run";

fn matches_filter(filter: &str, name: &str) -> bool {
    if filter.contains('*') {
        crate::known::glob(filter, name)
    } else {
        name.contains(filter)
    }
}

/// After every case, the plugin's accounting says it holds nothing; else
/// what it still holds.
fn memory_left(runtime: &Runtime, device: Device) -> Option<String> {
    let stats = runtime.backend(device).and_then(|b| {
        b.synchronize(device.index())
            .and_then(|()| b.memory_stats(device.index()))
    });
    match stats {
        Ok(s) if s.in_use == 0 && s.allocations == 0 => None,
        Ok(s) => Some(format!(
            "expected 0 bytes in 0 allocations once every array dropped, got {} bytes in {} allocations",
            s.in_use, s.allocations
        )),
        Err(e) => Some(format!("memory_stats: {e}")),
    }
}

/// Refuses a plugin named like a built-in backend: the runtime would give
/// that name to the built-in, so certifying it would test the wrong code.
fn refuse_built_in_name(spec: &PluginSpec) -> Result<(), String> {
    let built_in: Vec<String> = anydev::backends::builtin_providers()
        .into_iter()
        .map(|p| p.name)
        .collect();
    if built_in.contains(&spec.name) {
        return Err(spec.describe(format!(
            "the name {:?} belongs to a built-in backend ({}), which anydev would use instead of this library; give the plugin another name (in its manifest, or by renaming the library)",
            spec.name,
            built_in.join(", ")
        )));
    }
    Ok(())
}

/// The plugin to load and the known failures its package lists.
fn spec_for(path: &Path) -> Result<(PluginSpec, KnownFailures), String> {
    if path.extension().is_some_and(|e| e == "json") {
        let m = Manifest::read(path)?;
        let known = KnownFailures::from_manifest(path)?;
        let spec = PluginSpec {
            name: m.name,
            library: m.library,
            manifest: Some(m.path),
            abi_version: m.abi_version,
            priority: m.priority,
            options_json: m.options_json,
        };
        return Ok((spec, known));
    }
    if !path.is_file() {
        return Err(format!(
            "{} is not a file: give a plugin library or its manifest",
            path.display()
        ));
    }
    Ok((
        PluginSpec {
            name: kind_from_file(path),
            library: path.to_owned(),
            manifest: None,
            abi_version: None,
            priority: None,
            options_json: "{}".into(),
        },
        KnownFailures::default(),
    ))
}

/// The device kind of a plugin library given without a manifest: its file
/// name without the `lib` prefix, the library suffix (and a version after
/// it, `libfoo.so.1`), and an `anydev_` or `anydev-` prefix, lower-cased,
/// with every character other than a letter or digit as `_`:
/// `libanydev_sim.so` → `sim`, `libAcme-NPU.so.2` → `acme_npu`.
pub fn kind_from_file(path: &Path) -> String {
    let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("plugin");
    let name = name.strip_prefix(std::env::consts::DLL_PREFIX).unwrap_or(name);
    let suffix = std::env::consts::DLL_SUFFIX;
    let stem = name
        .match_indices(suffix)
        .find(|&(at, _)| matches!(name[at + suffix.len()..].chars().next(), None | Some('.')))
        .map_or(name, |(at, _)| &name[..at]);
    let kind: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let kind = kind.strip_prefix("anydev_").map(str::to_owned).unwrap_or(kind);
    if kind.starts_with(|c: char| c.is_ascii_alphabetic()) {
        kind
    } else {
        format!("p{kind}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_library_names() {
        let lib = |s: &str| format!("/x/{}{s}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
        assert_eq!(kind_from_file(Path::new(&lib("anydev_sim"))), "sim");
        assert_eq!(kind_from_file(Path::new(&lib("ctest_broken-add"))), "ctest_broken_add");
        assert_eq!(kind_from_file(Path::new(&lib("anydev-Acme"))), "acme");
        assert_eq!(kind_from_file(Path::new(&lib("42"))), "p42");
        if cfg!(target_os = "linux") {
            assert_eq!(kind_from_file(Path::new("/x/libacme.so.1")), "acme");
            assert_eq!(kind_from_file(Path::new("/x/libacme.so.1.2")), "acme");
            assert_eq!(kind_from_file(Path::new("/x/libacme.solver.so")), "acme_solver");
        }
    }

    #[test]
    fn the_summary_line_stands_alone() {
        let report = Report {
            plugin: "x".into(),
            library: "libx.so".into(),
            devices: vec![],
            error: None,
            rows: vec![],
            summary: Summary {
                passed: 3,
                failed: 1,
                skipped: 2,
                expected_failures: 1,
            },
        };
        let text = report.to_text();
        assert!(text.lines().any(|l| l == "3 passed, 1 failed, 2 skipped"), "{text}");
        assert!(!report.success());
    }
}
