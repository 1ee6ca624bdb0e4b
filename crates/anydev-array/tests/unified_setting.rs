//! The unified-memory switch: read from `ANYDEV_UNIFIED_MEMORY` (through
//! `RuntimeConfig`), changeable at run time, and an error when unreadable.

use anydev_array::{self as ad, Array, Error, Runtime};
use anydev_core::{MemoryKind, RuntimeConfig};

fn cpu_runtime(unified: Option<&str>) -> &'static Runtime {
    let config = RuntimeConfig {
        unified_memory: unified.map(str::to_owned),
        ..RuntimeConfig::default()
    };
    Box::leak(Box::new(Runtime::new(vec![anydev_cpu::provider()], config)))
}

#[test]
fn an_unreadable_setting_is_an_error_naming_it() {
    let rt = cpu_runtime(Some("maybe"));
    let err = rt.unified_memory().unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    let message = ad::with_runtime(rt, || ad::zeros(&[2], ()).unwrap_err().to_string());
    assert!(
        message.contains("ANYDEV_UNIFIED_MEMORY") && message.contains("maybe"),
        "{message}"
    );
}

#[test]
fn the_setting_reads_the_usual_spellings_and_defaults_to_off() {
    assert!(!cpu_runtime(None).unified_memory().unwrap());
    for on in ["1", "true", "ON", " yes "] {
        assert!(cpu_runtime(Some(on)).unified_memory().unwrap(), "{on}");
    }
    for off in ["0", "false", "off", "No"] {
        assert!(!cpu_runtime(Some(off)).unified_memory().unwrap(), "{off}");
    }
}

#[test]
fn on_the_host_alone_unified_memory_changes_nothing() {
    let rt = cpu_runtime(Some("1"));
    ad::with_runtime(rt, || {
        let x = Array::from_slice(&[1.0f32, 2.0], &[2], ()).unwrap();
        assert_eq!(x.buffer().kind(), MemoryKind::System);
        assert!(x.to_device(x.device()).unwrap().shares_buffer(&x));
        rt.set_unified_memory(false);
        assert!(!rt.unified_memory().unwrap());
        assert_eq!(x.add(1.0f32).unwrap().to_vec::<f32>().unwrap(), [2.0, 3.0]);
        assert_eq!(
            rt.transfers().stats(),
            Default::default(),
            "no move between devices happened"
        );
    });
}
