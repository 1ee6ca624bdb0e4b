//! Which devices a run covers: `ANYDEV_TEST_DEVICES`.
//!
//! A comma-separated list of device kinds (`cpu,sim`) or devices (`sim:1`),
//! or exclusions (`-wgpu`); a list that starts with an exclusion, or with
//! `all`, starts from every device. Naming a kind the runtime has no device
//! of is an error that says why it has none, never an empty green run.

use anydev_core::{Device, Runtime};

/// The environment variable read by [`from_env`].
pub const VARIABLE: &str = "ANYDEV_TEST_DEVICES";

/// The devices `ANYDEV_TEST_DEVICES` selects among `runtime`'s (all of them
/// when it is unset or empty).
pub fn from_env(runtime: &Runtime) -> Result<Vec<Device>, String> {
    select(runtime, std::env::var(VARIABLE).ok().as_deref().unwrap_or(""))
}

/// The devices `spec` selects among `runtime`'s devices.
pub fn select(runtime: &Runtime, spec: &str) -> Result<Vec<Device>, String> {
    let available = runtime.devices();
    let items: Vec<&str> = spec.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let starts_from_all = items.first().is_none_or(|i| *i == "all" || i.starts_with('-'));
    let mut chosen: Vec<Device> = if starts_from_all { available.clone() } else { Vec::new() };
    for item in items {
        if item == "all" {
            chosen = available.clone();
            continue;
        }
        let (exclude, name) = match item.strip_prefix('-') {
            Some(name) => (true, name.trim()),
            None => (false, item),
        };
        let matching = matching(runtime, &available, name)?;
        if exclude {
            chosen.retain(|d| !matching.contains(d));
        } else {
            for device in matching {
                if !chosen.contains(&device) {
                    chosen.push(device);
                }
            }
        }
    }
    if chosen.is_empty() {
        return Err(format!(
            "{VARIABLE}={spec:?} selects no device (available: {})",
            list(&available)
        ));
    }
    // Runtime order, whatever order the list named them in.
    Ok(available.into_iter().filter(|d| chosen.contains(d)).collect())
}

/// The available devices `name` (a kind or a device) stands for.
fn matching(runtime: &Runtime, available: &[Device], name: &str) -> Result<Vec<Device>, String> {
    if name.contains(':') {
        let device: Device = name.parse().map_err(|e| format!("{VARIABLE}: {name:?}: {e}"))?;
        runtime
            .backend(device)
            .map_err(|e| format!("{VARIABLE} names {name}: {e}"))?;
        return Ok(vec![device]);
    }
    let found: Vec<Device> = available
        .iter()
        .copied()
        .filter(|d| d.kind().as_str() == name)
        .collect();
    if found.is_empty() {
        let why = runtime
            .backends()
            .iter()
            .find(|b| b.name() == name)
            .map(|b| {
                format!(
                    "backend {name} is {}: {}",
                    b.status().label(),
                    b.status().reason().unwrap_or("")
                )
            })
            .unwrap_or_else(|| format!("no backend provides devices of kind {name:?}"));
        return Err(format!(
            "{VARIABLE} names {name}, but the runtime has no {name} device ({why}); available: {}",
            list(available)
        ));
    }
    Ok(found)
}

fn list(devices: &[Device]) -> String {
    if devices.is_empty() {
        return "none".into();
    }
    devices.iter().map(Device::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use anydev_core::RuntimeConfig;

    fn cpu_only() -> Runtime {
        Runtime::new(vec![anydev_cpu::provider()], RuntimeConfig::default())
    }

    #[test]
    fn kinds_exclusions_and_absent_kinds() {
        let rt = cpu_only();
        let cpu: Device = "cpu:0".parse().unwrap();
        assert_eq!(select(&rt, "").unwrap(), [cpu]);
        assert_eq!(select(&rt, "cpu").unwrap(), [cpu]);
        assert_eq!(select(&rt, "all").unwrap(), [cpu]);
        let absent = select(&rt, "cpu,sim").unwrap_err();
        assert!(
            absent.contains("no sim device") && absent.contains("available: cpu:0"),
            "{absent}"
        );
        let nothing = select(&rt, "-cpu").unwrap_err();
        assert!(nothing.contains("selects no device"), "{nothing}");
        assert!(select(&rt, "cpu:3").is_err());
    }
}
