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
        .backends()
        .iter()
        .find(|b| b.name() == name)
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
