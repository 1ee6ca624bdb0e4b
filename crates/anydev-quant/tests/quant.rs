//! The quant ops on every device the runtime sees (`ANYDEV_TEST_DEVICES`
//! narrows them): error bounds of round trips, errors for bad arguments,
//! and devices without the ops. The bit-for-bit checks are the library's
//! conformance cases (tests/conformance.rs).

mod common;

use anydev::extension::{self as ext, AttrValue, Attrs, CallOptions};
use anydev::{Array, DType, Device, Error};
use anydev_quant::conformance::reference as r;
use anydev_quant::conformance::{bytes, data, f32_bits, noise, same};
use anydev_quant::formats::{self, QuantType};
use anydev_quant::{op, Quantized4bit};
use common::{array, bits, has_kernels, on_each_device};

#[test]
fn round_trips_stay_within_half_the_largest_gap() {
    let n = 20_000;
    let xs: Vec<f32> = noise(n, 3)
        .iter()
        .enumerate()
        .map(|(i, v)| v * (1 + i % 5) as f32)
        .collect();
    let (absmax, _) = r::normalized(&xs, 256);
    let largest_gap = |values: &mut Vec<f32>| {
        values.sort_by(f32::total_cmp);
        values.windows(2).map(|w| w[1] - w[0]).fold(0.0f32, f32::max)
    };
    let nf4_gap = largest_gap(&mut QuantType::Nf4.values().to_vec());
    let fp4_gap = largest_gap(&mut QuantType::Fp4.values().to_vec());
    let map_gap = largest_gap(&mut formats::dynamic_map().to_vec());
    // NF4's widest interval is its first, from -1 to -0.6961928.
    assert!((nf4_gap - (1.0 - 0.696_192_8)).abs() < 1e-6);
    on_each_device(|device| {
        if !has_kernels(device) {
            return;
        }
        let x = array(&xs, &[n], DType::F32, device);
        let check = |what: &str, out: Array, gap: f32| {
            let got = out.to_device(Device::cpu()).unwrap().to_vec::<f32>().unwrap();
            for (i, (g, x)) in got.iter().zip(&xs).enumerate() {
                // Half the gap, and the rounding of normalizing and scaling.
                let bound = (gap / 2.0 + 1e-6) * absmax[i / 256];
                assert!((g - x).abs() <= bound, "{what} on {device}: {x} came back as {g}");
            }
        };
        for (qt, gap) in [(QuantType::Nf4, nf4_gap), (QuantType::Fp4, fp4_gap)] {
            let q = anydev_quant::quantize_4bit(&x, qt, 256).unwrap();
            check(qt.name(), anydev_quant::dequantize_4bit(&q).unwrap(), gap);
        }
        let code = anydev_quant::dynamic_map(device).unwrap();
        let q = anydev_quant::quantize_blockwise(&x, &code, 256).unwrap();
        check("8-bit", anydev_quant::dequantize_blockwise(&q).unwrap(), map_gap);
    });
}

fn invalid(what: &str, result: anydev::Result<impl std::fmt::Debug>, mentions: &str) {
    match result {
        Err(Error::InvalidArgument { message, .. }) => {
            assert!(
                message.contains(mentions),
                "{what}: {message:?} does not mention {mentions:?}"
            )
        }
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

fn wrong_dtype(what: &str, result: anydev::Result<impl std::fmt::Debug>, mentions: &str) {
    match result {
        Err(e @ Error::InvalidDType { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains(mentions),
                "{what}: {message:?} does not mention {mentions:?}"
            )
        }
        other => panic!("{what}: expected InvalidDType, got {other:?}"),
    }
}

#[test]
fn bad_arguments_are_clear_errors() {
    on_each_device(|device| {
        let x = array(&noise(100, 1), &[10, 10], DType::F32, device);
        let code = anydev_quant::dynamic_map(device).unwrap();
        for bs in [0, 32, 100, 8192] {
            invalid(
                "blocksize",
                anydev_quant::quantize_4bit(&x, QuantType::Nf4, bs),
                "blocksize",
            );
            invalid(
                "blocksize",
                anydev_quant::quantize_blockwise(&x, &code, bs),
                "blocksize",
            );
        }
        let ints = Array::from_slice(&[1i32; 100], &[100], device).unwrap();
        wrong_dtype(
            "i32 x",
            anydev_quant::quantize_4bit(&ints, QuantType::Fp4, 64),
            "x must be",
        );
        wrong_dtype(
            "i32 code",
            anydev_quant::quantize_blockwise(&x, &ints, 64),
            "code must be f32",
        );
        let short = array(&[0.0; 255], &[255], DType::F32, device);
        invalid(
            "short code",
            anydev_quant::quantize_blockwise(&x, &short, 64),
            "code has 255",
        );
        let attrs = Attrs::new()
            .with("blocksize", AttrValue::Int(64))
            .with("quant_type", AttrValue::Str("int4".into()));
        invalid("quant_type", ext::call(op::QUANTIZE_4BIT, &[&x], &attrs), "int4");
        // Quantized data built directly: arguments are checked before any
        // kernel, so this runs on devices without kernels too.
        let q = Quantized4bit {
            packed: Array::from_slice(&[0u8; 50], &[50], device).unwrap(),
            absmax: array(&[1.0; 2], &[2], DType::F32, device),
            shape: vec![10, 10],
            dtype: DType::F32,
            blocksize: 64,
            quant_type: QuantType::Nf4,
        };
        let wrong_absmax = Quantized4bit {
            absmax: array(&[1.0; 3], &[3], DType::F32, device),
            ..q.clone()
        };
        invalid("absmax", anydev_quant::dequantize_4bit(&wrong_absmax), "absmax has 3");
        let wrong_packed = Quantized4bit {
            packed: q.absmax.clone(),
            ..q.clone()
        };
        wrong_dtype(
            "packed dtype",
            anydev_quant::dequantize_4bit(&wrong_packed),
            "packed must be u8",
        );
        let to_ints = Quantized4bit {
            dtype: DType::I32,
            ..q.clone()
        };
        wrong_dtype("output dtype", anydev_quant::dequantize_4bit(&to_ints), "dtype must be");
        let a = array(&[1.0; 9], &[9], DType::F32, device);
        invalid("gemv K", anydev_quant::gemv_4bit(&a, &q), "a must be [..., 10]");
        let as_vector = Quantized4bit {
            shape: vec![100],
            ..q.clone()
        };
        invalid("gemv shape", anydev_quant::gemv_4bit(&a, &as_vector), "[N, K]");
        let wrong_absmax = anydev_quant::QuantizedBlockwise {
            q: Array::from_slice(&[0u8; 100], &[10, 10], device).unwrap(),
            absmax: array(&[1.0; 1], &[1], DType::F32, device),
            code: code.clone(),
            dtype: DType::F32,
            blocksize: 64,
        };
        invalid(
            "8-bit absmax",
            anydev_quant::dequantize_blockwise(&wrong_absmax),
            "absmax has 1",
        );
        let float_codes = anydev_quant::QuantizedBlockwise {
            q: array(&[0.0; 100], &[10, 10], DType::F32, device),
            absmax: array(&[1.0; 2], &[2], DType::F32, device),
            ..wrong_absmax.clone()
        };
        wrong_dtype(
            "8-bit q dtype",
            anydev_quant::dequantize_blockwise(&float_codes),
            "q must be u8",
        );
        for other in common::devices().into_iter().filter(|&d| d != device) {
            let there = array(&[1.0; 10], &[10], DType::F32, other);
            match anydev_quant::gemv_4bit(&there, &q) {
                Err(Error::DeviceMismatch { .. }) => {}
                r => panic!("a on {other}, weights on {device}: expected DeviceMismatch, got {r:?}"),
            }
        }
    });
}

#[test]
fn no_kernel_without_opting_in_and_the_host_fallback_when_asked() {
    let mut covered = Vec::new();
    on_each_device(|device| {
        if has_kernels(device) {
            return;
        }
        covered.push(device);
        let (n, bs) = (1000, 64);
        let xs = data(n, bs);
        let x = array(&xs, &[n], DType::F32, device);
        match anydev_quant::quantize_4bit(&x, QuantType::Nf4, bs) {
            Err(Error::NoKernel { available, .. }) => {
                let sim_loaded = common::runtime().devices().iter().any(|d| d.kind().as_str() == "sim");
                let mut want = vec!["cpu", "cuda", "wgpu"];
                if sim_loaded {
                    want.push("sim");
                }
                want.sort();
                assert_eq!(available, want, "the kinds with a kernel, the simulator's own included");
            }
            r => panic!("{device}: expected NoKernel, got {r:?}"),
        }
        let before = ext::host_fallbacks();
        let fallback = CallOptions { host_fallback: true };
        let attrs = Attrs::new()
            .with("blocksize", AttrValue::Int(bs as i64))
            .with("quant_type", AttrValue::Str("nf4".into()));
        let q = ext::call_with(op::QUANTIZE_4BIT, &[&x], &attrs, fallback).unwrap();
        assert!(q.iter().all(|a| a.device() == device), "outputs come back to {device}");
        let (absmax, normalized) = r::normalized(&xs, bs);
        let codes = r::codes4(true, &normalized);
        same("packed", &bytes(&q[0]).unwrap(), &r::pack(&codes)).unwrap();
        let attrs = attrs
            .with("shape", AttrValue::Shape(vec![n]))
            .with("dtype", AttrValue::DType(DType::F32));
        let out = ext::call_with(op::DEQUANTIZE_4BIT, &[&q[0], &q[1]], &attrs, fallback).unwrap();
        let want = r::dequantize4(true, &codes, &absmax, bs);
        same("dequantized", &bits(&out[0]), &f32_bits(&want, DType::F32)).unwrap();
        assert!(
            ext::host_fallbacks() >= before + 2,
            "both calls counted as host fallbacks"
        );
    });
    if covered.is_empty() {
        eprintln!("no selected device lacks kernels: the NoKernel path was not exercised");
    }
}
