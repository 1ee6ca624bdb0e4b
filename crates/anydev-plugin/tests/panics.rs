//! A Rust plugin that panics inside calls: the helper's table turns each
//! panic into an error carrying the message, the host reports it as a
//! plugin error, and the process (and the plugin) carry on.

use anydev_core::backend::allocate;
use anydev_core::ops::{Op, OpCode};
use anydev_core::plugin::static_provider;
use anydev_core::{BackendStatus, DType, Device, Error, MemoryKind, Runtime, RuntimeConfig};
use anydev_plugin::abi::AnydevPluginApi;
use anydev_plugin::{
    api_table, AttrValue, InitArgs, MemoryStats, Plugin, PluginError, PluginTensor, Properties, Result,
};

/// One device; allocations of exactly 13 bytes panic, and so does every op.
struct Panicky;

impl Plugin for Panicky {
    type Buffer = Vec<u8>;
    type Stream = ();
    type Event = ();

    fn initialize(args: &InitArgs<'_>) -> Result<Self> {
        if args.options_json.contains("panic") {
            panic!("deliberate panic in initialize");
        }
        Ok(Panicky)
    }
    fn device_count(&self) -> usize {
        1
    }
    fn properties(&self, _: usize) -> Result<Properties> {
        Ok(Properties {
            name: "panicky".into(),
            ..Properties::default()
        })
    }
    fn capabilities(&self, _: usize) -> Result<Vec<(String, AttrValue)>> {
        Ok(vec![("dtypes".into(), AttrValue::dtypes(&[DType::F32]))])
    }
    fn supports(&self, _: usize, _: OpCode, _: DType) -> bool {
        true
    }
    fn allocate(&self, _: usize, bytes: usize, _: anydev_plugin::MemoryKind) -> Result<Vec<u8>> {
        assert_ne!(bytes, 13, "deliberate panic in allocate");
        Ok(vec![0; bytes])
    }
    fn memory_stats(&self, _: usize) -> Result<MemoryStats> {
        Ok(MemoryStats::default())
    }
    fn create_stream(&self, _: usize) -> Result<()> {
        Ok(())
    }
    fn synchronize_stream(&self, _: &()) -> Result<()> {
        Ok(())
    }
    fn synchronize(&self, _: usize) -> Result<()> {
        Ok(())
    }
    fn record_event(&self, _: &()) -> Result<()> {
        Ok(())
    }
    fn wait_event(&self, _: &(), _: &()) -> Result<()> {
        Ok(())
    }
    fn query_event(&self, _: &()) -> Result<bool> {
        Ok(true)
    }
    fn synchronize_event(&self, _: &()) -> Result<()> {
        Ok(())
    }
    fn copy_from_host(&self, _: &(), _: &[u8], _: &Vec<u8>, _: usize) -> Result<()> {
        Err(PluginError::unimplemented("read-only test device"))
    }
    fn copy_to_host(&self, _: &(), src: &Vec<u8>, offset: usize, dst: &mut [u8]) -> Result<()> {
        dst.copy_from_slice(&src[offset..offset + dst.len()]);
        Ok(())
    }
    fn copy_between(&self, _: &(), _: &Vec<u8>, _: usize, _: &Vec<u8>, _: usize, _: usize) -> Result<()> {
        Err(PluginError::unimplemented("no peer copies"))
    }
    fn fill(&self, _: &(), _: &Vec<u8>, _: usize, _: usize, _: &[u8]) -> Result<()> {
        Err(PluginError::unimplemented("no fill"))
    }
    fn execute(&self, _: &(), op: &Op<'_, PluginTensor<'_, Vec<u8>>>) -> Result<()> {
        panic!("deliberate panic in execute of {}", op.code())
    }
}

static API: AnydevPluginApi = api_table::<Panicky>();

fn runtime(options: &str) -> Runtime {
    Runtime::new(
        vec![static_provider("panicky", 1, &API, options)],
        RuntimeConfig::default(),
    )
}

#[test]
fn a_panic_inside_a_call_is_an_error_and_the_plugin_keeps_working() {
    let rt = runtime("{}");
    let device: Device = "panicky:0".parse().unwrap();
    let backend = rt.backend(device).unwrap();
    match allocate(backend, device, 13, MemoryKind::Device) {
        Err(Error::Plugin { name, message, .. }) => {
            assert_eq!(name, "panicky");
            assert!(message.contains("the plugin panicked"), "{message}");
            assert!(message.contains("deliberate panic in allocate"), "{message}");
        }
        other => panic!("expected a plugin error, got {other:?}"),
    }
    // The same plugin still serves calls after the panic.
    let buffer = allocate(backend, device, 16, MemoryKind::Device).unwrap();
    let mut back = [1u8; 16];
    backend
        .copy_to_host(&backend.default_stream(0).unwrap(), &buffer, 0, &mut back)
        .unwrap();
    assert_eq!(back, [0; 16]);
    let shape = [4usize];
    let t = anydev_core::TensorRef {
        buffer: &buffer,
        offset: 0,
        dtype: DType::F32,
        shape: &shape,
        strides: &[1],
    };
    let fill = Op::Fill {
        out: t,
        value: anydev_core::Scalar::F32(1.0),
    };
    let err = backend.execute(&backend.default_stream(0).unwrap(), &fill).unwrap_err();
    assert!(err.to_string().contains("deliberate panic in execute of fill"), "{err}");
}

#[test]
fn a_panic_during_initialisation_fails_only_that_plugin() {
    let rt = runtime(r#"{"panic": true}"#);
    match &rt.backends()[0].status() {
        BackendStatus::Failed { reason } => {
            assert!(reason.contains("deliberate panic in initialize"), "{reason}");
            assert!(reason.contains("initialize failed"), "{reason}");
        }
        other => panic!("expected failure, got {other:?}"),
    }
}

#[test]
fn unimplemented_calls_of_a_rust_plugin_surface_as_clean_errors() {
    let rt = runtime("{}");
    let device: Device = "panicky:0".parse().unwrap();
    let backend = rt.backend(device).unwrap();
    let buffer = allocate(backend, device, 8, MemoryKind::Device).unwrap();
    let err = backend
        .fill(&backend.default_stream(0).unwrap(), &buffer, 0, 8, &[0; 4])
        .unwrap_err();
    assert!(matches!(err, Error::Plugin { .. }), "{err:?}");
    assert!(err.to_string().contains("no fill"), "{err}");
}
