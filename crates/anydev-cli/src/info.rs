//! `anydev info`: what the runtime found, for people and for machines.
//!
//! The report is collected once from a [`Runtime`] into plain data, then
//! rendered as text or JSON, so both forms always say the same thing. The
//! JSON schema is documented in the README.

use anydev::{CapValue, Runtime};
use serde::Serialize;
use std::fmt::Write;

/// Everything `anydev info` reports.
#[derive(Debug, Serialize)]
pub struct Report {
    pub version: &'static str,
    pub default_device: Option<String>,
    pub default_device_reason: String,
    pub default_device_error: Option<String>,
    pub problems: Vec<String>,
    /// Whether unified memory is on; `None` when its setting is unreadable
    /// (the reason is among the problems).
    pub unified_memory: Option<bool>,
    pub backends: Vec<BackendReport>,
}

#[derive(Debug, Serialize)]
pub struct BackendReport {
    pub name: String,
    pub status: &'static str,
    pub reason: Option<String>,
    pub priority: i32,
    pub devices: Vec<DeviceReport>,
}

#[derive(Debug, Serialize)]
pub struct DeviceReport {
    pub device: String,
    pub name: String,
    pub vendor: String,
    pub memory_bytes: u64,
    pub driver: String,
    pub version: String,
    pub memory_in_use_bytes: usize,
    /// The kinds the device allocates, native first.
    pub memory_kinds: Vec<anydev::MemoryKind>,
    pub capabilities: anydev::Capabilities,
    /// What creation uses on this device without a dtype (design section
    /// 14); `None` when the capabilities are unknown.
    pub default_dtypes: Option<DefaultDTypesReport>,
    /// The extension ops the device runs (design section 11): those with a
    /// kernel registered for its kind and those its plugin implements.
    pub extension_ops: Vec<String>,
    /// Set when the backend could not describe this device.
    pub error: Option<String>,
}

/// [`anydev::DefaultDTypes`] by name, as the Array API's
/// `default_dtypes(device=)` reports them.
#[derive(Debug, Serialize)]
pub struct DefaultDTypesReport {
    pub real_floating: String,
    pub complex_floating: String,
    pub integral: String,
    pub indexing: String,
}

impl From<anydev::DefaultDTypes> for DefaultDTypesReport {
    fn from(d: anydev::DefaultDTypes) -> DefaultDTypesReport {
        DefaultDTypesReport {
            real_floating: d.real_floating.to_string(),
            complex_floating: d.complex_floating.to_string(),
            integral: d.integral.to_string(),
            indexing: d.indexing.to_string(),
        }
    }
}

impl Report {
    pub fn collect(runtime: &Runtime) -> Report {
        let default = runtime.default_device();
        let mut problems: Vec<String> = runtime.problems().to_vec();
        if let Err(e) = &default {
            problems.push(format!("no default device: {e}"));
        }
        let unified_memory = runtime.unified_memory().map_err(|e| problems.push(e.to_string())).ok();
        let backends = runtime
            .backends()
            .iter()
            .map(|record| {
                let devices = record.devices().into_iter().map(|d| describe(runtime, d)).collect();
                if record.status().label() == "failed" {
                    problems.push(format!(
                        "backend {} failed: {}",
                        record.name(),
                        record.status().reason().unwrap_or_default()
                    ));
                }
                BackendReport {
                    name: record.name().to_owned(),
                    status: record.status().label(),
                    reason: record.status().reason().map(str::to_owned),
                    priority: record.priority(),
                    devices,
                }
            })
            .collect();
        Report {
            version: env!("CARGO_PKG_VERSION"),
            default_device: default.as_ref().ok().map(ToString::to_string),
            default_device_reason: runtime.default_device_reason().to_owned(),
            default_device_error: default.err().map(|e| e.to_string()),
            problems,
            unified_memory,
            backends,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report is plain data")
    }

    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "anydev {}", self.version);
        match (&self.default_device, &self.default_device_error) {
            (Some(d), _) => {
                let _ = writeln!(out, "default device: {d} ({})", self.default_device_reason);
            }
            (None, Some(e)) => {
                let _ = writeln!(out, "default device: NONE: {e}");
            }
            (None, None) => {}
        }
        let unified = match self.unified_memory {
            Some(true) => "on",
            Some(false) => "off",
            None => "unreadable (see problems)",
        };
        let _ = writeln!(out, "unified memory: {unified} (ANYDEV_UNIFIED_MEMORY)");
        let _ = writeln!(out, "\nbackends:");
        for b in &self.backends {
            let _ = write!(out, "  {:<10} {:<12} priority {:<4}", b.name, b.status, b.priority);
            match &b.reason {
                Some(reason) => {
                    let _ = writeln!(out, " {reason}");
                }
                None => {
                    let _ = writeln!(out, " {} device(s)", b.devices.len());
                }
            }
            for d in &b.devices {
                write_device(&mut out, d);
            }
        }
        if !self.problems.is_empty() {
            let _ = writeln!(out, "\nproblems:");
            for p in &self.problems {
                let _ = writeln!(out, "  - {p}");
            }
        }
        out
    }
}

fn describe(runtime: &Runtime, device: anydev::Device) -> DeviceReport {
    let properties = runtime.properties(device);
    let capabilities = runtime.capabilities(device);
    let backend = runtime.backend(device);
    let memory = backend
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|b| b.memory_stats(device.index()));
    let memory_kinds = backend.map(|b| b.memory_kinds(device.index())).unwrap_or_default();
    let extension_ops = anydev::extension::device_ops_in(runtime, device);
    let error = [
        properties.as_ref().err(),
        capabilities.as_ref().err(),
        memory.as_ref().err(),
        extension_ops.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    .map(ToString::to_string)
    .next();
    let properties = properties.unwrap_or_default();
    let default_dtypes = capabilities
        .as_ref()
        .ok()
        .map(|c| anydev::DefaultDTypes::for_device_holding(|d| c.supports_dtype(d)).into());
    DeviceReport {
        device: device.to_string(),
        name: properties.name,
        vendor: properties.vendor,
        memory_bytes: properties.memory_bytes,
        driver: properties.driver,
        version: properties.version,
        memory_in_use_bytes: memory.map(|m| m.in_use).unwrap_or_default(),
        memory_kinds,
        capabilities: capabilities.unwrap_or_default(),
        default_dtypes,
        extension_ops: extension_ops.unwrap_or_default(),
        error,
    }
}

/// The capabilities worth a person's glance; the JSON has all of them.
const KEY_CAPABILITIES: &[&str] = &[
    anydev::capability::keys::COMPUTE_UNITS,
    anydev::capability::keys::F64,
    anydev::capability::keys::F16,
    anydev::capability::keys::PAGEABLE_MEMORY_ACCESS,
    anydev::capability::keys::MANAGED_MEMORY,
    anydev::capability::keys::PEER_DEVICES,
    anydev::capability::keys::DTYPES,
];

fn write_device(out: &mut String, d: &DeviceReport) {
    let _ = writeln!(
        out,
        "    {:<8} {} ({}), {}, driver {}",
        d.device,
        d.name,
        d.vendor,
        human_bytes(d.memory_bytes),
        if d.driver.is_empty() { "-" } else { &d.driver }
    );
    let caps: Vec<String> = KEY_CAPABILITIES
        .iter()
        .filter_map(|k| d.capabilities.get(k).map(|v| format!("{k}={}", short(v))))
        .collect();
    let _ = writeln!(out, "             {}", caps.join(" "));
    let kinds: Vec<String> = d.memory_kinds.iter().map(ToString::to_string).collect();
    let _ = writeln!(out, "             memory kinds: {}", kinds.join(", "));
    if let Some(t) = &d.default_dtypes {
        let _ = writeln!(
            out,
            "             default dtypes: {} (real), {} (complex), {} (integral), {} (indexing)",
            t.real_floating, t.complex_floating, t.integral, t.indexing
        );
    }
    let ops = if d.extension_ops.is_empty() {
        "none".to_owned()
    } else {
        d.extension_ops.join(", ")
    };
    let _ = writeln!(out, "             extension ops: {ops}");
    if let Some(e) = &d.error {
        let _ = writeln!(out, "             error: {e}");
    }
}

fn short(value: &CapValue) -> String {
    match value {
        CapValue::StrList(v) if v.is_empty() => "none".into(),
        other => other.to_string(),
    }
}

/// A memory size for people; 0 is what a backend reports when it does not
/// know (wgpu adapters do not say), shown as "unknown memory".
fn human_bytes(bytes: u64) -> String {
    if bytes == 0 {
        return "unknown memory".into();
    }
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreported_memory_size_is_unknown_not_zero() {
        assert_eq!(human_bytes(0), "unknown memory");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
    use anydev::{BackendProvider, Runtime, RuntimeConfig};

    fn runtime(default_device: Option<&str>) -> Runtime {
        let providers = vec![
            anydev_cpu::provider(),
            BackendProvider::new("broken", 9, || Err(anydev::InitError::Failed("bad firmware".into()))),
        ];
        let config = RuntimeConfig {
            default_device: default_device.map(str::to_owned),
            ..RuntimeConfig::default()
        };
        Runtime::new(providers, config)
    }

    #[test]
    fn json_lists_cpu_available_and_the_failed_backend_with_its_reason() {
        let report = Report::collect(&runtime(None));
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["default_device"], "cpu:0");
        assert!(json["default_device_error"].is_null());
        let backends = json["backends"].as_array().unwrap();
        let cpu = &backends[0];
        assert_eq!(cpu["name"], "cpu");
        assert_eq!(cpu["status"], "available");
        assert_eq!(cpu["devices"][0]["device"], "cpu:0");
        assert!(cpu["devices"][0]["memory_bytes"].as_u64().unwrap() > 0);
        assert_eq!(cpu["devices"][0]["capabilities"]["f64"], true);
        // The built-in extensions' cpu kernels are listed by name.
        let ops = cpu["devices"][0]["extension_ops"].as_array().unwrap();
        assert!(ops.iter().any(|op| op == "linalg::svd"), "{ops:?}");
        let defaults = &cpu["devices"][0]["default_dtypes"];
        assert_eq!(
            (&defaults["real_floating"], &defaults["integral"], &defaults["indexing"]),
            (&"f64".into(), &"i64".into(), &"i64".into())
        );
        assert!(
            ["c128", "c64"].contains(&defaults["complex_floating"].as_str().unwrap()),
            "{defaults}"
        );
        let broken = &backends[1];
        assert_eq!(broken["status"], "failed");
        assert_eq!(broken["reason"], "bad firmware");
        assert!(json["problems"][0].as_str().unwrap().contains("bad firmware"));
    }

    #[test]
    fn a_bad_default_device_is_shown_in_text_and_json() {
        let report = Report::collect(&runtime(Some("cuda:7")));
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert!(json["default_device"].is_null());
        let error = json["default_device_error"].as_str().unwrap();
        assert!(
            error.contains("cuda:7") && error.contains("available devices: cpu:0"),
            "{error}"
        );
        let text = report.to_text();
        assert!(text.contains("default device: NONE"), "{text}");
        assert!(text.contains("problems:"), "{text}");
        assert!(
            text.contains("broken") && text.contains("failed") && text.contains("bad firmware"),
            "{text}"
        );
    }
}
