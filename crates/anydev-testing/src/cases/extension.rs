//! Extension ops on every device: two test ops with a host kernel (`cpu`),
//! a WGSL kernel (`wgpu`) and a CUDA kernel (`cuda`), one of them with two
//! outputs. On a device
//! whose kind has a kernel the call runs there; on any other it is
//! `NoKernel` naming the kinds that have one, and with the host fallback
//! opted in it runs on the CPU, comes back to the device, and is counted.

use crate::case::{check, check_eq, expect_err, Case, CaseCtx, Failure};
use crate::reference::{self as r, check_array};
use anydev_array::extension::{self as ext, CallOptions, Kernel, OpDef};
use anydev_array::Array;
use anydev_core::extension::{AttrKind, AttrValue, Attrs, Cuda, HostFn, LaunchRule, TensorMeta, Wgsl};
use anydev_core::{DType, Error, Result};
use std::sync::{Arc, OnceLock};

const SCALE_ADD: &str = "anydev_test::scale_add";
const MIN_MAX: &str = "anydev_test::min_max";

pub fn cases() -> Vec<Case> {
    vec![Case::new(
        "extension::runs_where_a_kernel_is_or_says_where_one_is",
        runs_or_names_kernels,
    )
    .all_devices()
    .dtypes(&[DType::F32])]
}

/// Two f32 arrays of one shape, or why not.
fn same_f32_pair(inputs: &[TensorMeta]) -> Result<TensorMeta> {
    let [x, y] = inputs else {
        return Err(Error::invalid_argument("shape rule", "two inputs expected"));
    };
    if x.dtype != DType::F32 || y.dtype != DType::F32 || x.shape != y.shape {
        return Err(Error::invalid_argument(
            "shape rule",
            format!("needs two f32 arrays of one shape, got {x:?} and {y:?}"),
        ));
    }
    Ok(x.clone())
}

const WGSL_SCALE_ADD: &str = r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params[0]) { return; }
    out[i] = x[i] * bitcast<f32>(params[1]) + y[i];
}
"#;

const WGSL_MIN_MAX: &str = r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> lo: array<f32>;
@group(0) @binding(4) var<storage, read_write> hi: array<f32>;
@compute @workgroup_size(64)
fn min_max(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params[0]) { return; }
    lo[i] = min(x[i], y[i]);
    hi[i] = max(x[i], y[i]);
}
"#;

/// The test ops' CUDA kernels, by name (compiled with NVRTC in CI by
/// `tests/nvrtc_extension.rs`; run where a CUDA device exists).
pub const CUDA_SOURCES: [(&str, &str); 2] = [
    (
        "scale_add",
        r#"
extern "C" __global__ void scale_add(const float* x, const float* y, float* out,
                                     unsigned int n, unsigned int scale_bits) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * __uint_as_float(scale_bits) + y[i];
}
"#,
    ),
    (
        "min_max",
        r#"
extern "C" __global__ void min_max(const float* x, const float* y, float* lo, float* hi, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lo[i] = fminf(x[i], y[i]);
        hi[i] = fmaxf(x[i], y[i]);
    }
}
"#,
    ),
];

/// The params both kinds of GPU kernel take: the element count, then the
/// scale's bits for `scale_add`.
fn count_and_scale(scale: bool) -> Arc<LaunchRule<Vec<u32>>> {
    Arc::new(move |_, out, attrs| {
        let mut words = vec![out[0].size() as u32];
        if scale {
            words.push((attrs.float("scale")? as f32).to_bits());
        }
        Ok(words)
    })
}

fn cuda((name, source): (&str, &str), scale: bool) -> Kernel {
    Kernel::Cuda(Cuda {
        source: source.into(),
        name: name.into(),
        grid: Arc::new(|_, out, _| Ok([(out[0].size() as u32).div_ceil(256), 1, 1])),
        block: Arc::new(|_, _, _| Ok([256, 1, 1])),
        params: count_and_scale(scale),
    })
}

/// One thread per element of the first output, in workgroups of 64.
fn wgsl(source: &str, entry_point: &str, scale: bool) -> Kernel {
    Kernel::Wgsl(Wgsl {
        source: source.into(),
        entry_point: entry_point.into(),
        grid: Arc::new(|_, out, _| Ok([(out[0].size() as u32).div_ceil(64), 1, 1])),
        params: count_and_scale(scale),
    })
}

/// Defines the test ops and their kernels once per process.
fn ensure_test_ops() -> Result<()> {
    static DEFINED: OnceLock<Result<()>> = OnceLock::new();
    DEFINED
        .get_or_init(|| {
            let scale_add: Arc<HostFn> = Arc::new(|ins, outs, attrs| {
                let scale = attrs.float("scale")? as f32;
                let (x, y) = (ins[0].as_slice::<f32>()?, ins[1].as_slice::<f32>()?);
                for ((o, a), b) in outs[0].as_mut_slice::<f32>()?.iter_mut().zip(x).zip(y) {
                    *o = a * scale + b;
                }
                Ok(())
            });
            let min_max: Arc<HostFn> = Arc::new(|ins, outs, _| {
                let (x, y) = (ins[0].as_slice::<f32>()?, ins[1].as_slice::<f32>()?);
                let (lo, hi) = outs.split_at_mut(1);
                let (lo, hi) = (lo[0].as_mut_slice::<f32>()?, hi[0].as_mut_slice::<f32>()?);
                for i in 0..x.len() {
                    (lo[i], hi[i]) = (x[i].min(y[i]), x[i].max(y[i]));
                }
                Ok(())
            });
            let define = |name: &str, attrs: Vec<(String, AttrKind)>, outputs: usize| {
                ext::define_op(OpDef {
                    name: name.into(),
                    inputs: 2,
                    attrs,
                    shape_rule: Arc::new(move |ins, _| Ok(vec![same_f32_pair(ins)?; outputs])),
                })
            };
            define(SCALE_ADD, vec![("scale".into(), AttrKind::Float)], 1)
                .and_then(|()| define(MIN_MAX, vec![], 2))
                .and_then(|()| ext::register_kernel(SCALE_ADD, "cpu", Kernel::Host(scale_add)))
                .and_then(|()| ext::register_kernel(SCALE_ADD, "wgpu", wgsl(WGSL_SCALE_ADD, "main", true)))
                .and_then(|()| ext::register_kernel(MIN_MAX, "cpu", Kernel::Host(min_max)))
                .and_then(|()| ext::register_kernel(MIN_MAX, "wgpu", wgsl(WGSL_MIN_MAX, "min_max", false)))
                .and_then(|()| ext::register_kernel(SCALE_ADD, "cuda", cuda(CUDA_SOURCES[0], true)))
                .and_then(|()| ext::register_kernel(MIN_MAX, "cuda", cuda(CUDA_SOURCES[1], false)))
        })
        .clone()
}

fn runs_or_names_kernels(ctx: &CaseCtx) -> std::result::Result<(), Failure> {
    ensure_test_ops()?;
    let dev = ctx.device;
    let n = 1000;
    let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 10.0).collect();
    let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos() * 10.0).collect();
    let (x, y) = (
        r::array(&a, &[10, 100], DType::F32, dev)?,
        r::array(&b, &[10, 100], DType::F32, dev)?,
    );
    // References in f32, as the kernels compute.
    let scaled: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(&p, &q)| f64::from(p as f32 * 2.5f32 + q as f32))
        .collect();
    let lows: Vec<f64> = a.iter().zip(&b).map(|(p, q)| p.min(*q)).collect();
    let highs: Vec<f64> = a.iter().zip(&b).map(|(p, q)| p.max(*q)).collect();
    let attrs = Attrs::new().with("scale", AttrValue::Float(2.5));
    let check_results = |scale_add: Vec<Array>, min_max: Vec<Array>| -> std::result::Result<(), Failure> {
        check_eq("outputs of scale_add", 1, scale_add.len())?;
        check_eq("device of the output", dev, scale_add[0].device())?;
        check_array("scale_add", &[10, 100], &scaled, &scale_add[0])?;
        check_eq("outputs of min_max", 2, min_max.len())?;
        check_array("min_max: min", &[10, 100], &lows, &min_max[0])?;
        check_array("min_max: max", &[10, 100], &highs, &min_max[1])
    };
    let kinds = ext::kernel_kinds(SCALE_ADD)?;
    if kinds.iter().any(|k| k.as_str() == dev.kind().as_str()) {
        check_results(
            ext::call(SCALE_ADD, &[&x, &y], &attrs)?,
            ext::call(MIN_MAX, &[&x, &y], &Attrs::new())?,
        )?;
    } else {
        expect_err(
            format!("{SCALE_ADD} on {dev}"),
            "NoKernel",
            ext::call(SCALE_ADD, &[&x, &y], &attrs),
            |e| matches!(e, Error::NoKernel { available, device, .. } if *available == kinds && *device == dev),
        )?;
        // Opted in per call for one op, per op for the other.
        let before = ext::host_fallbacks();
        let fallback = CallOptions { host_fallback: true };
        ext::set_host_fallback(MIN_MAX, true)?;
        check_results(
            ext::call_with(SCALE_ADD, &[&x, &y], &attrs, fallback)?,
            ext::call(MIN_MAX, &[&x, &y], &Attrs::new())?,
        )?;
        check(
            ext::host_fallbacks() >= before + 2,
            "host fallbacks counted",
            before + 2,
            ext::host_fallbacks(),
        )?;
    }
    // Arguments are checked against the schema before anything runs.
    let bad_calls = [
        ("one input", ext::call(SCALE_ADD, &[&x], &attrs)),
        ("no scale", ext::call(SCALE_ADD, &[&x, &y], &Attrs::new())),
        (
            "an int scale",
            ext::call(SCALE_ADD, &[&x, &y], &Attrs::new().with("scale", AttrValue::Int(2))),
        ),
        (
            "an unknown attribute",
            ext::call(SCALE_ADD, &[&x, &y], &attrs.clone().with("bias", AttrValue::Float(1.0))),
        ),
        (
            "shapes the rule refuses",
            ext::call(SCALE_ADD, &[&x, &x.reshape(&[1000])?], &attrs),
        ),
        ("an op nobody defined", ext::call("anydev_test::nothing", &[&x], &attrs)),
    ];
    for (what, result) in bad_calls {
        expect_err(what, "InvalidArgument", result, |e| {
            matches!(e, Error::InvalidArgument { .. })
        })?;
    }
    for other in ctx.others() {
        let there = r::array(&b, &[10, 100], DType::F32, other)?;
        expect_err(
            format!("inputs on {dev} and {other}"),
            "DeviceMismatch",
            ext::call(SCALE_ADD, &[&x, &there], &attrs),
            |e| matches!(e, Error::DeviceMismatch { .. }),
        )?;
    }
    Ok(())
}
