//! A Rust plugin implementing a named extension op through the helper
//! (ABI 1.4): the host's attributes of every kind arrive decoded as they
//! were given, the support query sees the call without its memory, and
//! the plugin's errors reach the caller with its message.

use anydev_core::backend::allocate;
use anydev_core::extension::{AttrValue, Attrs, KernelBody, TensorMeta};
use anydev_core::ops::{Op, OpCode};
use anydev_core::plugin::static_provider;
use anydev_core::{DType, Device, MemoryKind, Runtime, RuntimeConfig, TensorRef};
use anydev_plugin::abi::AnydevPluginApi;
use anydev_plugin::{
    api_table, ExtensionAttr, ExtensionCall, InitArgs, MemoryStats, Plugin, PluginError, PluginTensor, Properties,
    Result, TensorSpec,
};
use std::sync::Mutex;

/// The attributes the last `test::echo` call decoded.
static SEEN: Mutex<Vec<(String, ExtensionAttr)>> = Mutex::new(Vec::new());

/// One device of host memory implementing `test::echo`: copies its input to
/// its output, for f32 only, and fails when the attribute `fail` is true.
struct Echo;

type Memory = Mutex<Vec<u8>>;

impl Plugin for Echo {
    type Buffer = Memory;
    type Stream = ();
    type Event = ();

    fn initialize(_: &InitArgs<'_>) -> Result<Self> {
        Ok(Echo)
    }
    fn device_count(&self) -> usize {
        1
    }
    fn properties(&self, _: usize) -> Result<Properties> {
        Ok(Properties::default())
    }
    fn capabilities(&self, _: usize) -> Result<Vec<(String, anydev_plugin::AttrValue)>> {
        Ok(vec![("dtypes".into(), anydev_plugin::AttrValue::dtypes(&[DType::F32]))])
    }
    fn supports(&self, _: usize, _: OpCode, _: DType) -> bool {
        false
    }
    fn allocate(&self, _: usize, bytes: usize, _: anydev_plugin::MemoryKind) -> Result<Memory> {
        Ok(Mutex::new(vec![0; bytes]))
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
    fn copy_from_host(&self, _: &(), src: &[u8], dst: &Memory, offset: usize) -> Result<()> {
        dst.lock().unwrap()[offset..offset + src.len()].copy_from_slice(src);
        Ok(())
    }
    fn copy_to_host(&self, _: &(), src: &Memory, offset: usize, dst: &mut [u8]) -> Result<()> {
        dst.copy_from_slice(&src.lock().unwrap()[offset..offset + dst.len()]);
        Ok(())
    }
    fn copy_between(&self, _: &(), _: &Memory, _: usize, _: &Memory, _: usize, _: usize) -> Result<()> {
        Err(PluginError::unimplemented("no peer copies"))
    }
    fn fill(&self, _: &(), _: &Memory, _: usize, _: usize, _: &[u8]) -> Result<()> {
        Err(PluginError::unimplemented("no fill"))
    }
    fn execute(&self, _: &(), op: &Op<'_, PluginTensor<'_, Memory>>) -> Result<()> {
        Err(PluginError::unimplemented(format!("no {}", op.code())))
    }

    fn extension_ops(&self, _: usize) -> Vec<String> {
        vec!["test::echo".into()]
    }
    fn extension_supported(&self, _: usize, call: &ExtensionCall<'_, TensorSpec<'_>>) -> bool {
        call.inputs.iter().chain(&call.outputs).all(|t| t.dtype == DType::F32)
    }
    fn execute_extension(&self, _: &(), call: &ExtensionCall<'_, PluginTensor<'_, Memory>>) -> Result<()> {
        *SEEN.lock().unwrap() = call.attrs.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
        if call.attr("fail") == Some(&ExtensionAttr::Bool(true)) {
            return Err(PluginError::invalid_argument("test::echo was told to fail"));
        }
        let [input] = &call.inputs[..] else {
            return Err(PluginError::invalid_argument("test::echo takes one input"));
        };
        let bytes = input.buffer.lock().unwrap()[..input.shape.iter().product::<usize>() * 4].to_vec();
        call.outputs[0].buffer.lock().unwrap()[..bytes.len()].copy_from_slice(&bytes);
        Ok(())
    }
}

static API: AnydevPluginApi = api_table::<Echo>();

fn every_kind(fail: bool) -> Attrs {
    Attrs::new()
        .with("int", AttrValue::Int(-7))
        .with("float", AttrValue::Float(1.0e-3))
        .with("fail", AttrValue::Bool(fail))
        .with("text", AttrValue::Str("nf4 ∑".into()))
        .with("dtype", AttrValue::DType(DType::BF16))
        .with("shape", AttrValue::Shape(vec![3, 0, 64]))
}

#[test]
fn attributes_of_every_kind_round_trip_and_errors_keep_the_plugins_message() {
    let rt = Runtime::new(vec![static_provider("echo", 1, &API, "{}")], RuntimeConfig::default());
    let device: Device = "echo:0".parse().unwrap();
    let backend = rt.backend(device).unwrap();
    assert_eq!(backend.extension_ops(0), ["test::echo"]);
    let stream = backend.default_stream(0).unwrap();
    let values: Vec<u8> = [1.5f32, -2.0, 8.25].iter().flat_map(|v| v.to_le_bytes()).collect();
    let x = allocate(backend, device, 12, MemoryKind::Device).unwrap();
    let out = allocate(backend, device, 12, MemoryKind::Device).unwrap();
    backend.copy_from_host(&stream, &values, &x, 0).unwrap();
    let shape = [3usize];
    let view = |buffer| TensorRef {
        buffer,
        offset: 0,
        dtype: DType::F32,
        shape: &shape,
        strides: &[1],
    };
    let body = KernelBody::Device { op: "test::echo" };
    let attrs = every_kind(false);
    backend
        .run_kernel(&stream, &body, &[view(&x)], &[view(&out)], &attrs)
        .unwrap();
    let seen = SEEN.lock().unwrap().clone();
    let sent: Vec<(String, ExtensionAttr)> = attrs.iter().map(|(n, v)| (n.to_owned(), v.clone())).collect();
    assert_eq!(seen, sent);
    let mut back = vec![0u8; 12];
    backend.copy_to_host(&stream, &out, 0, &mut back).unwrap();
    assert_eq!(back, values);

    let err = backend
        .run_kernel(&stream, &body, &[view(&x)], &[view(&out)], &every_kind(true))
        .unwrap_err();
    assert!(err.to_string().contains("test::echo was told to fail"), "{err}");

    let f32s = [TensorMeta::new(DType::F32, &[3])];
    assert!(backend
        .extension_supported(0, "test::echo", &f32s, &f32s, &attrs)
        .unwrap());
    let f64s = [TensorMeta::new(DType::F64, &[3])];
    assert!(!backend
        .extension_supported(0, "test::echo", &f64s, &f64s, &attrs)
        .unwrap());
    assert!(!backend
        .extension_supported(0, "test::unlisted", &f32s, &f32s, &attrs)
        .unwrap());
}
