//! Simulator devices are ordinary devices to the array layer: every
//! placement rule holds for them, data moves only through `to_device`, and
//! results equal the CPU's.

mod support;

use anydev_array::{self as ad, Array, Order};
use anydev_core::backend::SOFTWARE_PRIORITY;
use anydev_core::capability::keys;
use anydev_core::plugin::PluginConfig;
use anydev_core::{with_device, DType, Device, Error, Runtime, RuntimeConfig};
use support::runtime_with;

fn dev(text: &str) -> Device {
    text.parse().unwrap()
}

/// A process-lifetime runtime with the CPU and the simulator (via manifest).
fn runtime(test: &str, options: &str) -> &'static Runtime {
    Box::leak(Box::new(runtime_with(test, options, vec![anydev_cpu::provider()])))
}

#[test]
fn the_runtime_lists_the_cpu_and_both_sim_devices() {
    let rt = runtime("list", "{}");
    assert_eq!(rt.devices(), [dev("cpu:0"), dev("sim:0"), dev("sim:1")]);
    assert_eq!(
        rt.default_device().unwrap(),
        dev("sim:0"),
        "the manifest's priority 10 beats the CPU's 0"
    );
}

#[test]
fn a_simulator_ranks_below_the_cpu_unless_its_manifest_says_otherwise() {
    let library = support::sim_library().to_str().expect("UTF-8 path").to_owned();
    let dir = support::scratch("software");
    let manifest = format!(r#"{{"file_format_version": "1.0.0", "name": "sim", "library_path": {library:?}}}"#);
    std::fs::write(dir.join("sim.json"), manifest).unwrap();
    let by_manifest = PluginConfig {
        search_dirs: vec![dir],
        direct: None,
    };
    let direct = PluginConfig {
        search_dirs: Vec::new(),
        direct: Some(format!("sim:{library}")),
    };
    for plugins in [by_manifest, direct] {
        let config = RuntimeConfig {
            plugins,
            ..RuntimeConfig::default()
        };
        let rt = Runtime::with_plugins(vec![anydev_cpu::provider()], config);
        assert_eq!(rt.default_device().unwrap(), dev("cpu:0"));
        let sim = rt.record("sim").unwrap();
        assert_eq!(sim.priority(), SOFTWARE_PRIORITY);
        let caps = rt.capabilities(dev("sim:1")).unwrap();
        assert!(caps.flag(keys::SOFTWARE));
    }
}

#[test]
fn arrays_on_two_sim_devices_do_not_mix() {
    ad::with_runtime(runtime("mismatch", "{}"), || {
        let a = Array::from_slice(&[1.0f32, 2.0], &[2], dev("sim:0")).unwrap();
        let b = Array::from_slice(&[3.0f32, 4.0], &[2], dev("sim:1")).unwrap();
        match a.add(&b) {
            Err(Error::DeviceMismatch { op, devices }) => {
                assert_eq!(op, "add");
                assert!(
                    devices.contains(&dev("sim:0")) && devices.contains(&dev("sim:1")),
                    "{devices:?}"
                );
            }
            other => panic!("expected DeviceMismatch, got {other:?}"),
        }
        let message = a.add(&b).unwrap_err().to_string();
        assert!(message.contains("to_device"), "{message}");
    });
}

#[test]
fn to_device_moves_data_between_sims_and_to_the_cpu() {
    ad::with_runtime(runtime("transfer", "{}"), || {
        let values: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
        let x = Array::from_slice(&values, &[10, 100], dev("sim:0")).unwrap();
        assert_eq!(x.to_device(dev("sim:0")).unwrap().device(), dev("sim:0"));
        let y = x.to_device(dev("sim:1")).unwrap();
        assert_eq!(y.device(), dev("sim:1"));
        let z = y.to_device(dev("cpu:0")).unwrap();
        assert_eq!(z.device(), dev("cpu:0"));
        assert_eq!(z.to_vec::<f32>().unwrap(), values);
        // A strided view travels as its elements.
        let t = x.matrix_transpose().unwrap().to_device(dev("sim:1")).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap()[..3], [0.0, 50.0, 100.0]);
    });
}

#[test]
fn ops_follow_their_inputs_not_the_scope() {
    ad::with_runtime(runtime("scope", "{}"), || {
        let x = Array::from_slice(&[1i32, 2, 3], &[3], dev("sim:1")).unwrap();
        let y = with_device(dev("sim:0"), || x.add(1).unwrap());
        assert_eq!(y.device(), dev("sim:1"));
        let z = with_device(dev("sim:0"), || ad::zeros(&[2], DType::F32).unwrap());
        assert_eq!(z.device(), dev("sim:0"));
    });
}

/// A small pipeline touching most op families, run on one device.
fn pipeline(device: Device) -> Vec<Vec<f64>> {
    let a: Vec<f32> = (0..24).map(|i| ((i * 7) % 11) as f32 - 4.5).collect();
    let x = Array::from_slice(&a, &[4, 6], device).unwrap();
    let y = x.exp().unwrap().add(&x.multiply(2.0).unwrap()).unwrap();
    let m = y.matmul(&x.matrix_transpose().unwrap()).unwrap();
    let outputs = [
        y,
        m.clone(),
        m.sum(ad::ALL, false).unwrap(),
        x.sort(1, Order::Descending).unwrap(),
        x.cumulative_sum(Some(0), false).unwrap(),
        x.argmax(Some(1), false).unwrap().astype(DType::F64).unwrap(),
        x.greater(0.0).unwrap().astype(DType::F32).unwrap(),
        x.astype(DType::I16).unwrap().astype(DType::F64).unwrap(),
    ];
    outputs.iter().map(|o| o.to_f64_vec().unwrap()).collect()
}

#[test]
fn results_on_the_sim_equal_the_cpus() {
    ad::with_runtime(runtime("equal", "{}"), || {
        let on_cpu = pipeline(dev("cpu:0"));
        assert_eq!(pipeline(dev("sim:0")), on_cpu);
        assert_eq!(pipeline(dev("sim:1")), on_cpu);
    });
}

#[test]
fn sim_out_of_memory_spares_the_other_sim_and_the_cpu() {
    ad::with_runtime(runtime("oom", r#"{"memory_limit": "64K"}"#), || {
        let big = ad::zeros(&[32 * 1024], (DType::F32, dev("sim:0")));
        match big {
            Err(Error::OutOfMemory { device, limit, .. }) => {
                assert_eq!((device, limit), (dev("sim:0"), Some(64 * 1024)));
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
        let fits = ad::zeros(&[8 * 1024], (DType::F32, dev("sim:1"))).unwrap();
        assert_eq!(fits.sum(ad::ALL, false).unwrap().to_scalar::<f32>().unwrap(), 0.0);
        let host = ad::zeros(&[32 * 1024], (DType::F32, dev("cpu:0"))).unwrap();
        assert_eq!(host.device(), dev("cpu:0"));
    });
}

/// Design section 14: on a device without f64 the defaults are f32, so
/// code written without dtypes runs there unchanged (before, `zeros(shape)`
/// failed on its first line).
#[test]
fn a_device_without_f64_defaults_to_f32() {
    ad::with_runtime(runtime("no-f64", r#"{"refuse_dtypes": ["f64"]}"#), || {
        let sim = dev("sim:0");
        let defaults = ad::default_dtypes(Some(sim)).unwrap();
        assert_eq!((defaults.real_floating, defaults.integral), (DType::F32, DType::I64));
        assert_eq!(
            ad::default_dtypes(Some(dev("cpu:0"))).unwrap().real_floating,
            DType::F64
        );
        for x in [
            ad::zeros(&[3], sim).unwrap(),
            ad::full(&[3], 0.5, sim).unwrap(),
            ad::linspace(0.0, 1.0, 3, true, sim).unwrap(),
            ad::eye(2, None, 0, sim).unwrap(),
            with_device(sim, || ad::ones(&[2], ())).unwrap(),
        ] {
            assert_eq!((x.dtype(), x.device()), (DType::F32, sim));
        }
        // Integers meeting float functions land on the device's floats.
        let ints = ad::arange(0, 4, 1, sim).unwrap();
        assert_eq!(ints.dtype(), DType::I64);
        let mean = ad::mean(&ints, ad::ALL, false).unwrap();
        assert_eq!((mean.dtype(), mean.to_scalar::<f32>().unwrap()), (DType::F32, 1.5));
        let half = ints.divide(2).unwrap();
        assert_eq!(half.to_vec::<f32>().unwrap(), [0.0, 0.5, 1.0, 1.5]);
        let scaled = ints.multiply(0.5).unwrap();
        assert_eq!(scaled.to_vec::<f32>().unwrap(), [0.0, 0.5, 1.0, 1.5]);
    });
}

/// `eye`, `tril` and `triu` build their masks from index offsets in the
/// device's default integer, so a device without `i64` still makes them
/// (before, they failed asking for `i64` even for `f32` output).
#[test]
fn diagonal_masks_need_no_i64() {
    ad::with_runtime(runtime("no-i64", r#"{"refuse_dtypes": "f64,i64"}"#), || {
        let (sim, cpu) = (dev("sim:0"), dev("cpu:0"));
        let values: Vec<f32> = (1..=12).map(|v| v as f32).collect();
        let on_cpu = Array::from_slice(&values, &[3, 4], cpu).unwrap();
        let on_sim = on_cpu.to_device(sim).unwrap();
        for k in [isize::MIN, -3, -1, 0, 2, 4, isize::MAX] {
            let eye = ad::eye(3, Some(4), k, (DType::F32, sim)).unwrap();
            let expected = ad::eye(3, Some(4), k, (DType::F32, cpu)).unwrap();
            assert_eq!(
                eye.to_vec::<f32>().unwrap(),
                expected.to_vec::<f32>().unwrap(),
                "eye k={k}"
            );
            for (made, reference) in [
                (ad::tril(&on_sim, k), ad::tril(&on_cpu, k)),
                (ad::triu(&on_sim, k), ad::triu(&on_cpu, k)),
            ] {
                let made = made.unwrap();
                assert_eq!(made.device(), sim);
                assert_eq!(
                    made.to_vec::<f32>().unwrap(),
                    reference.unwrap().to_vec::<f32>().unwrap(),
                    "k={k}"
                );
            }
        }
    });
}

/// An extension op whose output dtype the device lacks is refused as
/// that dtype, before any kernel is looked for: wherever it ran, its
/// output would have to land on the device.
#[test]
fn an_extension_output_the_device_lacks_is_its_unsupported_dtype() {
    use anydev_array::extension::{self as ext, OpDef};
    use anydev_core::extension::{Attrs, TensorMeta};
    use std::sync::Arc;
    ad::with_runtime(runtime("no-bf16", r#"{"refuse_dtypes": "bf16"}"#), || {
        ext::define_op(OpDef {
            name: "simtest::to_bf16".into(),
            inputs: 1,
            attrs: vec![],
            shape_rule: Arc::new(|ins, _| Ok(vec![TensorMeta::new(DType::BF16, &ins[0].shape)])),
        })
        .unwrap();
        let x = ad::zeros(&[4], (DType::F32, dev("sim:0"))).unwrap();
        match ext::call("simtest::to_bf16", &[&x], &Attrs::new()) {
            Err(Error::UnsupportedDType { dtype, device }) => assert_eq!((dtype, device), (DType::BF16, dev("sim:0"))),
            other => panic!("expected UnsupportedDType(bf16), got {other:?}"),
        }
    });
}

#[test]
fn a_refused_dtype_is_an_error_on_the_sim_only() {
    ad::with_runtime(runtime("refuse", r#"{"refuse_dtypes": ["f64"]}"#), || {
        let err = Array::from_slice(&[1.0f64, 2.0], &[2], dev("sim:0")).unwrap_err();
        assert!(
            matches!(
                err,
                Error::UnsupportedDType { dtype: DType::F64, .. } | Error::Unsupported { dtype: DType::F64, .. }
            ),
            "{err:?}"
        );
        let on_cpu = Array::from_slice(&[1.0f64, 2.0], &[2], dev("cpu:0")).unwrap();
        assert_eq!(on_cpu.to_vec::<f64>().unwrap(), [1.0, 2.0]);
        let f32_on_sim = on_cpu.astype(DType::F32).unwrap().to_device(dev("sim:0")).unwrap();
        assert_eq!(f32_on_sim.to_vec::<f32>().unwrap(), [1.0, 2.0]);
    });
}
