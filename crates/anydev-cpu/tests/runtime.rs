//! The registry with the CPU next to deliberately broken backends.

use anydev_core::backend::Backend;
use anydev_core::{BackendProvider, BackendStatus, Device, Error, InitError, Runtime, RuntimeConfig};
use std::sync::Arc;

fn config(device: Option<&str>, backends: Option<&[&str]>) -> RuntimeConfig {
    RuntimeConfig {
        default_device: device.map(str::to_owned),
        backends: backends.map(|b| b.iter().map(|s| s.to_string()).collect()),
        ..RuntimeConfig::default()
    }
}

/// The CPU, a backend that fails, one that is unavailable and one that
/// panics while initialising, all at higher priority than the CPU.
fn providers() -> Vec<BackendProvider> {
    vec![
        anydev_cpu::provider(),
        BackendProvider::new("broken", 50, || {
            Err(InitError::Failed("driver version 1.0 is too old".into()))
        }),
        BackendProvider::new("absent", 60, || Err(InitError::Unavailable("no such hardware".into()))),
        BackendProvider::new("panicky", 70, || panic!("kaboom in init")),
    ]
}

fn status(runtime: &Runtime, name: &str) -> BackendStatus {
    runtime
        .record(name)
        .unwrap_or_else(|| panic!("no backend {name}"))
        .status()
        .clone()
}

#[test]
fn failing_backends_are_reported_and_the_cpu_still_works() {
    let runtime = Runtime::new(providers(), RuntimeConfig::default());
    assert_eq!(status(&runtime, "cpu"), BackendStatus::Available { devices: 1 });
    assert_eq!(
        status(&runtime, "broken"),
        BackendStatus::Failed {
            reason: "driver version 1.0 is too old".into()
        }
    );
    assert!(
        matches!(status(&runtime, "absent"), BackendStatus::Unavailable { reason } if reason == "no such hardware")
    );
    assert!(
        matches!(status(&runtime, "panicky"), BackendStatus::Failed { reason } if reason.contains("kaboom in init"))
    );

    // The failed accelerators have higher priority, but the default falls to
    // the highest-priority backend that is actually available.
    assert_eq!(runtime.default_device().unwrap(), Device::cpu());
    assert_eq!(runtime.devices(), vec![Device::cpu()]);

    let cpu = runtime.backend(Device::cpu()).unwrap();
    let props = cpu.properties(0).unwrap();
    assert!(props.memory_bytes > 0);
    assert!(!props.name.is_empty());

    let err = runtime
        .backend("broken:0".parse().unwrap())
        .err()
        .expect("broken has no devices");
    let text = err.to_string();
    assert!(
        text.contains("too old") && text.contains("broken:0") && text.contains("cpu:0"),
        "{text}"
    );
}

#[test]
fn anydev_device_naming_an_unknown_or_unavailable_device_is_an_error_listing_available_devices() {
    for (setting, expected) in [
        ("npu:0", "no backend provides devices of kind \"npu\""),
        ("broken:0", "driver version 1.0 is too old"),
        ("cpu:3", "has 1 device"),
    ] {
        let runtime = Runtime::new(providers(), config(Some(setting), None));
        let err = runtime.default_device().unwrap_err();
        let text = err.to_string();
        assert!(text.contains(expected), "{setting}: {text}");
        assert!(text.contains("available devices: cpu:0"), "{setting}: {text}");
        assert!(runtime.default_device_reason().contains("ANYDEV_DEVICE"));
        // No silent fallback: creation calls fail the same way.
        assert!(runtime.creation_device(None).is_err());
    }
    let runtime = Runtime::new(providers(), config(Some("cpu:x"), None));
    assert!(matches!(runtime.default_device(), Err(Error::InvalidDevice { .. })));
    let runtime = Runtime::new(providers(), config(Some("cpu:0"), None));
    assert_eq!(runtime.default_device().unwrap(), Device::cpu());
}

#[test]
fn anydev_backends_restricts_which_backends_load() {
    let runtime = Runtime::new(providers(), config(None, Some(&["cpu"])));
    assert_eq!(status(&runtime, "cpu"), BackendStatus::Available { devices: 1 });
    for name in ["broken", "absent", "panicky"] {
        assert!(
            matches!(status(&runtime, name), BackendStatus::Disabled { .. }),
            "{name}"
        );
    }
    assert!(runtime.problems().is_empty());

    let runtime = Runtime::new(providers(), config(None, Some(&["absent", "nope"])));
    assert!(matches!(status(&runtime, "cpu"), BackendStatus::Disabled { .. }));
    assert!(matches!(status(&runtime, "absent"), BackendStatus::Unavailable { .. }));
    assert!(runtime.problems()[0].contains("\"nope\""), "{:?}", runtime.problems());
    assert!(
        runtime.default_device().is_err(),
        "nothing available means no default, not the CPU"
    );
}

#[test]
fn creation_device_prefers_explicit_then_scope_then_default() {
    let runtime = Runtime::new(providers(), RuntimeConfig::default());
    let cpu = Device::cpu();
    assert_eq!(runtime.creation_device(None).unwrap(), cpu);
    anydev_core::with_device("absent:0".parse().unwrap(), || {
        let err = runtime.creation_device(None).unwrap_err();
        assert!(err.to_string().contains("no such hardware"), "{err}");
        assert_eq!(runtime.creation_device(Some(cpu)).unwrap(), cpu);
    });
}

#[test]
fn duplicate_backend_names_are_rejected() {
    let mut list = providers();
    list.push(BackendProvider::new("cpu", 5, || {
        Ok(Arc::new(anydev_cpu::CpuBackend::new()) as Arc<dyn Backend>)
    }));
    let runtime = Runtime::new(list, RuntimeConfig::default());
    let records: Vec<_> = runtime.backends().iter().filter(|b| b.name() == "cpu").collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].status(), &BackendStatus::Available { devices: 1 });
    assert!(matches!(records[1].status(), BackendStatus::Failed { reason } if reason.contains("duplicate")));
}

/// Backends start when first needed, counted by providers that report
/// themselves unavailable after counting.
mod lazy {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A provider of `name` at `priority` that counts its starts and then
    /// reports no hardware.
    fn counted(name: &'static str, priority: i32, starts: &Arc<AtomicUsize>) -> BackendProvider {
        let starts = Arc::clone(starts);
        BackendProvider::new(name, priority, move || {
            starts.fetch_add(1, Ordering::SeqCst);
            Err(InitError::Unavailable(format!("{name} has no hardware here")))
        })
    }

    fn started(runtime: &Runtime) -> Vec<&str> {
        runtime
            .backends()
            .iter()
            .filter(|b| b.is_started())
            .map(|b| b.name())
            .collect()
    }

    #[test]
    fn nothing_starts_until_it_is_needed() {
        let gpu_starts = Arc::new(AtomicUsize::new(0));
        let runtime = Runtime::new(
            vec![anydev_cpu::provider(), counted("fastgpu", 90, &gpu_starts)],
            RuntimeConfig::default(),
        );
        assert_eq!(started(&runtime), Vec::<&str>::new(), "building starts nothing");

        // Explicit use of cpu:0 starts the CPU alone.
        runtime.backend(Device::cpu()).unwrap();
        runtime.creation_device(Some(Device::cpu())).unwrap();
        assert_eq!(started(&runtime), vec!["cpu"]);
        assert_eq!(gpu_starts.load(Ordering::SeqCst), 0);

        // The default must ask the higher-priority backend, once.
        assert_eq!(runtime.default_device().unwrap(), Device::cpu());
        assert_eq!(runtime.default_device().unwrap(), Device::cpu());
        assert_eq!(gpu_starts.load(Ordering::SeqCst), 1);
        assert_eq!(started(&runtime), vec!["cpu", "fastgpu"]);
    }

    #[test]
    fn the_default_starts_only_backends_that_could_still_win() {
        let low_starts = Arc::new(AtomicUsize::new(0));
        let high_starts = Arc::new(AtomicUsize::new(0));
        // The CPU (priority 0) is available, so nothing declared below it
        // can win and is left alone; the higher one must be asked.
        let runtime = Runtime::new(
            vec![
                counted("lowdev", -5, &low_starts),
                anydev_cpu::provider(),
                counted("highdev", 40, &high_starts),
            ],
            RuntimeConfig::default(),
        );
        assert_eq!(runtime.default_device().unwrap(), Device::cpu());
        assert_eq!(high_starts.load(Ordering::SeqCst), 1);
        assert_eq!(low_starts.load(Ordering::SeqCst), 0);
        assert!(runtime.default_device_reason().contains("cpu, priority 0"));

        // Asking what exists starts the rest.
        assert_eq!(runtime.devices(), vec![Device::cpu()]);
        assert_eq!(low_starts.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn anydev_device_starts_only_its_backend() {
        let other = Arc::new(AtomicUsize::new(0));
        let runtime = Runtime::new(
            vec![anydev_cpu::provider(), counted("fastgpu", 90, &other)],
            config(Some("cpu:0"), None),
        );
        assert_eq!(runtime.default_device().unwrap(), Device::cpu());
        assert_eq!(other.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_default_set_at_run_time_wins_and_can_be_cleared() {
        let runtime = Runtime::new(vec![anydev_cpu::provider()], RuntimeConfig::default());
        let absent: Device = "cpu:3".parse().unwrap();
        let err = runtime.set_default_device(Some(absent)).unwrap_err();
        assert!(matches!(err, Error::DeviceUnavailable { .. }), "{err}");
        runtime.set_default_device(Some(Device::cpu())).unwrap();
        assert!(runtime.default_device_reason().contains("set_default_device"));
        runtime.set_default_device(None).unwrap();
        assert!(runtime.default_device_reason().contains("highest priority"));
    }
}
