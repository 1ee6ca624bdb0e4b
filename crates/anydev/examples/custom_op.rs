//! An extension op defined outside anydev: `demo::axpy` (`a * x + y`) with
//! a host kernel for `cpu` and a WGSL kernel for `wgpu`, called on every
//! device found. Devices of other kinds have no kernel: the call says so,
//! and runs on the CPU only when the caller opts in.
//!
//! `cargo run -p anydev --example custom_op` (docs/extensions.md walks
//! through it).

use anydev::extension::{self as ext, AttrKind, AttrValue, Attrs, CallOptions, HostFn, Kernel, OpDef, Wgsl};
use anydev::{Array, DType, Error};
use std::sync::Arc;

const AXPY_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params[0]) { return; }
    out[id.x] = bitcast<f32>(params[1]) * x[id.x] + y[id.x];
}
"#;

fn define_axpy() -> anydev::Result<()> {
    ext::define_op(OpDef {
        name: "demo::axpy".into(),
        inputs: 2,
        attrs: vec![("a".into(), AttrKind::Float)],
        // Runs before any kernel: the output's dtype and shape, or why not.
        shape_rule: Arc::new(|inputs, _| {
            let (x, y) = (&inputs[0], &inputs[1]);
            if x.dtype != DType::F32 || y != x {
                return Err(Error::invalid_argument(
                    "demo::axpy",
                    "needs two f32 arrays of one shape",
                ));
            }
            Ok(vec![x.clone()])
        }),
    })?;
    let host: Arc<HostFn> = Arc::new(|inputs, outputs, attrs| {
        let a = attrs.float("a")? as f32;
        let (x, y) = (inputs[0].as_slice::<f32>()?, inputs[1].as_slice::<f32>()?);
        for ((out, x), y) in outputs[0].as_mut_slice::<f32>()?.iter_mut().zip(x).zip(y) {
            *out = a * x + y;
        }
        Ok(())
    });
    ext::register_kernel("demo::axpy", "cpu", Kernel::Host(host))?;
    let wgsl = Wgsl {
        source: AXPY_WGSL.into(),
        entry_point: "main".into(),
        grid: Arc::new(|_, outputs, _| Ok([(outputs[0].size() as u32).div_ceil(64), 1, 1])),
        params: Arc::new(|_, outputs, attrs| Ok(vec![outputs[0].size() as u32, (attrs.float("a")? as f32).to_bits()])),
    };
    ext::register_kernel("demo::axpy", "wgpu", Kernel::Wgsl(wgsl))
}

fn main() -> anydev::Result<()> {
    define_axpy()?;
    let attrs = Attrs::new().with("a", AttrValue::Float(2.0));
    for device in anydev::runtime().devices() {
        let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3], device)?;
        let y = Array::from_slice(&[10.0f32, 20.0, 30.0], &[3], device)?;
        let out = match ext::call("demo::axpy", &[&x, &y], &attrs) {
            Ok(out) => out,
            Err(e @ Error::NoKernel { .. }) => {
                println!("{device}: {e}");
                let options = CallOptions { host_fallback: true };
                ext::call_with("demo::axpy", &[&x, &y], &attrs, options)?
            }
            Err(e) => return Err(e),
        };
        println!(
            "{device}: 2 * x + y = {:?} (on {})",
            out[0].to_vec::<f32>()?,
            out[0].device()
        );
    }
    Ok(())
}
