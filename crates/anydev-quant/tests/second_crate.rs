//! A second library supplying a kernel that anydev-quant leaves open:
//! this test crate sees only the public API. It defines the ops with
//! their `cpu` kernels alone (`register_ops`), registers its own WGSL
//! kernel for `quant::dequantize_4bit` (f32 output only), runs it on every
//! wgpu device against the cpu kernel, then lets anydev-quant register
//! the rest (`register`), which keeps the kernel already there.
//!
//! Its own test binary (its own process), since the registry is
//! process-wide and the other tests register everything.

mod common;

use anydev::extension::{self as ext, AttrValue, Attrs, Kernel, Wgsl};
use anydev::{Array, DType, Device, Error};
use anydev_quant::{op, QuantType};
use common::{array, bits};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One invocation per element; f32 output only.
const DEQUANTIZE_NF4_F32: &str = r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> packed: array<u32>;
@group(0) @binding(2) var<storage, read> absmax: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const NF4 = array<f32, 16>(-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534,
    0.16093020141124725, 0.24611230194568634, 0.33791524171829224, 0.44070982933044434,
    0.5626170039176941, 0.7229568362236023, 1.0);

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= params[0]) { return; }
  let byte = (packed[i / 8u] >> ((i / 2u) % 4u * 8u)) & 0xffu;
  let code = select(byte & 0xfu, byte >> 4u, i % 2u == 0u);
  var table = NF4;
  out[i] = table[code] * absmax[i / params[1]];
}
"#;

/// How many calls this crate's kernel has served.
static LAUNCHES: AtomicUsize = AtomicUsize::new(0);

fn own_kernel() -> Kernel {
    Kernel::Wgsl(Wgsl {
        source: DEQUANTIZE_NF4_F32.into(),
        entry_point: "main".into(),
        grid: Arc::new(|_, outs, _| Ok([(outs[0].size() as u32).div_ceil(64).max(1), 1, 1])),
        params: Arc::new(|_, outs, attrs| {
            if outs[0].dtype != DType::F32 || attrs.str("quant_type")? != "nf4" {
                return Err(Error::invalid_argument(
                    op::DEQUANTIZE_4BIT,
                    "this wgpu kernel dequantizes NF4 to f32 only",
                ));
            }
            LAUNCHES.fetch_add(1, Ordering::Relaxed);
            Ok(vec![outs[0].size() as u32, attrs.int("blocksize")? as u32])
        }),
    })
}

#[test]
fn a_second_library_registers_the_wgpu_kernel_anydev_quant_left_open() {
    anydev_quant::register_ops().unwrap();
    assert_eq!(ext::kernel_kinds(op::DEQUANTIZE_4BIT).unwrap(), ["cpu"]);
    ext::register_kernel(op::DEQUANTIZE_4BIT, "wgpu", own_kernel()).unwrap();

    let (n, bs) = (1000, 64);
    let xs: Vec<f32> = (0..n).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
    let attrs = Attrs::new()
        .with("blocksize", AttrValue::Int(bs as i64))
        .with("quant_type", AttrValue::Str("nf4".into()));
    let x = array(&xs, &[n], DType::F32, Device::cpu());
    let quantized = anydev::with_runtime(common::runtime(), || ext::call(op::QUANTIZE_4BIT, &[&x], &attrs)).unwrap();
    let attrs = attrs
        .with("shape", AttrValue::Shape(vec![n]))
        .with("dtype", AttrValue::DType(DType::F32));
    let dequantize = |device: Device| -> anydev::Result<Array> {
        let packed = quantized[0].to_device(device)?;
        let absmax = quantized[1].to_device(device)?;
        Ok(ext::call(op::DEQUANTIZE_4BIT, &[&packed, &absmax], &attrs)?.remove(0))
    };
    let wgpu: Vec<Device> = common::devices()
        .into_iter()
        .filter(|d| d.kind().as_str() == "wgpu")
        .collect();
    let on_cpu = anydev::with_runtime(common::runtime(), || dequantize(Device::cpu())).unwrap();
    for &device in &wgpu {
        let before = LAUNCHES.load(Ordering::Relaxed);
        let out = anydev::with_runtime(common::runtime(), || dequantize(device)).unwrap();
        assert_eq!(bits(&out), bits(&on_cpu), "this crate's kernel on {device}");
        assert_eq!(LAUNCHES.load(Ordering::Relaxed), before + 1);
    }

    // anydev-quant fills the kinds still open and keeps this crate's.
    anydev_quant::register().unwrap();
    assert_eq!(ext::kernel_kinds(op::DEQUANTIZE_4BIT).unwrap(), ["cpu", "cuda", "wgpu"]);
    for &device in &wgpu {
        let before = LAUNCHES.load(Ordering::Relaxed);
        anydev::with_runtime(common::runtime(), || {
            let q = anydev_quant::quantize_4bit(&x.to_device(device)?, QuantType::Nf4, bs)?;
            anydev_quant::dequantize_4bit(&q)
        })
        .unwrap();
        assert_eq!(
            LAUNCHES.load(Ordering::Relaxed),
            before + 1,
            "still this crate's kernel"
        );
    }
    if wgpu.is_empty() {
        eprintln!("no wgpu device selected: the second library's kernel was registered but not run");
    }
}
