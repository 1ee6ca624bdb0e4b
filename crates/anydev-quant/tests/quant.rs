//! The quant ops on every device the runtime sees (`ANYDEV_TEST_DEVICES`
//! narrows them): codes, absmax and dequantized values bit for bit
//! against the scalar reference in `common`, the product against f64,
//! error bounds of round trips, errors for bad arguments, and devices
//! whose kind has no kernel.

mod common;

use anydev::extension::{self as ext, AttrValue, Attrs, CallOptions};
use anydev::{Array, DType, Device, Error};
use anydev_quant::formats::{self, QuantType};
use anydev_quant::{op, Quantized4bit};
use common::{array, bits, has_kernels, on_each_device, reference as r, round, supports};

const FLOATS: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

/// Deterministic values in [-1, 1).
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `n` test values in blocks of `blocksize`: the first block zeros (with
/// negative zeros), the second of absmax 1 holding every threshold of the
/// formats exactly (so normalizing leaves them on the threshold), the rest
/// noise at scales from 1e-3 to 1e3.
fn data(n: usize, blocksize: usize) -> Vec<f32> {
    let map = formats::dynamic_map();
    let mut special: Vec<f32> = vec![1.0, -1.0, -0.0, 0.0];
    special.extend(formats::nf4_midpoints());
    special.extend(formats::FP4_THRESHOLDS.iter().flat_map(|&t| [t, -t]));
    special.extend(map.windows(2).step_by(9).map(|w| (w[0] + w[1]) * 0.5));
    let mut x = noise(n, n as u64 ^ blocksize as u64);
    for (b, block) in x.chunks_mut(blocksize).enumerate() {
        match b {
            0 => block
                .iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = if i % 3 == 0 { -0.0 } else { 0.0 }),
            1 => block.iter_mut().zip(special.iter().cycle()).for_each(|(v, s)| *v = *s),
            _ => {
                let scale = 10f32.powi(b as i32 % 7 - 3);
                block.iter_mut().for_each(|v| *v *= scale);
            }
        }
    }
    x
}

/// `got` equals `want`, or the first difference.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {:?}, expected {:?}", got[i], want[i]);
    }
}

fn bytes(a: &Array) -> Vec<u8> {
    a.to_device(Device::cpu()).unwrap().to_vec::<u8>().unwrap()
}

fn f32_bits(values: &[f32], dtype: DType) -> Vec<u32> {
    values.iter().map(|&v| round(dtype, v).to_bits()).collect()
}

const LENGTHS: [usize; 6] = [0, 1, 63, 65, 1000, 9001];
const BLOCKSIZES: [usize; 3] = [64, 128, 4096];

#[test]
fn four_bit_matches_the_reference_bit_for_bit() {
    on_each_device(|device| {
        if !has_kernels(device) {
            return; // no_kernel_without_opting_in covers it
        }
        for dtype in FLOATS.into_iter().filter(|&d| supports(device, d)) {
            for bs in BLOCKSIZES {
                for n in LENGTHS {
                    let xs: Vec<f32> = data(n, bs).iter().map(|&v| round(dtype, v)).collect();
                    let x = array(&xs, &[n], dtype, device);
                    let (absmax, normalized) = r::normalized(&xs, bs);
                    for qt in QuantType::ALL {
                        let what = format!("{qt} {dtype} n={n} blocksize={bs} on {device}");
                        let nf4 = qt == QuantType::Nf4;
                        let codes: Vec<u8> = normalized
                            .iter()
                            .map(|&v| if nf4 { r::nf4_code(v) } else { r::fp4_code(v) })
                            .collect();
                        let q = anydev_quant::quantize_4bit(&x, qt, bs).unwrap();
                        same(&format!("{what}: packed"), &bytes(&q.packed), &r::pack(&codes));
                        same(
                            &format!("{what}: absmax"),
                            &bits(&q.absmax),
                            &f32_bits(&absmax, DType::F32),
                        );
                        let out = anydev_quant::dequantize_4bit(&q).unwrap();
                        assert_eq!((out.shape(), out.dtype(), out.device()), (&[n][..], dtype, device));
                        let want = r::dequantize4(nf4, &codes, &absmax, bs);
                        same(&format!("{what}: dequantized"), &bits(&out), &f32_bits(&want, dtype));
                    }
                }
            }
        }
    });
}

#[test]
fn eight_bit_matches_the_reference_bit_for_bit() {
    let map = formats::dynamic_map();
    on_each_device(|device| {
        if !has_kernels(device) {
            return;
        }
        let code = anydev_quant::dynamic_map(device).unwrap();
        for dtype in FLOATS.into_iter().filter(|&d| supports(device, d)) {
            for bs in BLOCKSIZES {
                for n in LENGTHS {
                    let what = format!("8-bit {dtype} n={n} blocksize={bs} on {device}");
                    let xs: Vec<f32> = data(n, bs).iter().map(|&v| round(dtype, v)).collect();
                    // Two dimensions: the codes keep the input's shape.
                    let x = array(&xs, &[1, n], dtype, device);
                    let (absmax, normalized) = r::normalized(&xs, bs);
                    let codes: Vec<u8> = normalized.iter().map(|&v| r::dynamic_code(&map, v)).collect();
                    let q = anydev_quant::quantize_blockwise(&x, &code, bs).unwrap();
                    assert_eq!(q.q.shape(), &[1, n]);
                    same(&format!("{what}: q"), &bytes(&q.q), &codes);
                    same(
                        &format!("{what}: absmax"),
                        &bits(&q.absmax),
                        &f32_bits(&absmax, DType::F32),
                    );
                    let out = anydev_quant::dequantize_blockwise(&q).unwrap();
                    let want: Vec<f32> = codes
                        .iter()
                        .enumerate()
                        .map(|(i, &c)| map[c as usize] * absmax[i / bs])
                        .collect();
                    same(&format!("{what}: dequantized"), &bits(&out), &f32_bits(&want, dtype));
                }
            }
        }
    });
}

/// The product against an f64 reference over the reference's weights:
/// within `K * 2^-24 * sum |a_k w_k|` (f32 accumulation of K products)
/// plus the rounding of the result to its dtype.
#[test]
fn gemv_matches_an_f64_reference() {
    let (n, k, bs) = (37, 130, 64);
    let ws: Vec<f32> = noise(n * k, 7).iter().map(|v| v * 3.0).collect();
    let (absmax, normalized) = r::normalized(&ws, bs);
    on_each_device(|device| {
        if !has_kernels(device) {
            return;
        }
        for dtype in FLOATS.into_iter().filter(|&d| supports(device, d)) {
            let precision = match dtype {
                DType::F16 => 11,
                DType::BF16 => 8,
                _ => 24,
            };
            let w = array(&ws, &[n, k], DType::F32, device);
            for qt in QuantType::ALL {
                let nf4 = qt == QuantType::Nf4;
                let codes: Vec<u8> = normalized
                    .iter()
                    .map(|&v| if nf4 { r::nf4_code(v) } else { r::fp4_code(v) })
                    .collect();
                let weights = r::dequantize4(nf4, &codes, &absmax, bs);
                let q = anydev_quant::quantize_4bit(&w, qt, bs).unwrap();
                for lead in [vec![], vec![2, 3], vec![0]] {
                    let rows: usize = lead.iter().product();
                    let a_values: Vec<f32> = noise(rows * k, 11).iter().map(|&v| round(dtype, v * 2.0)).collect();
                    let mut shape = lead.clone();
                    shape.push(k);
                    let a = array(&a_values, &shape, dtype, device);
                    let out = anydev_quant::gemv_4bit(&a, &q).unwrap();
                    let mut want_shape = lead.clone();
                    want_shape.push(n);
                    assert_eq!((out.shape(), out.dtype()), (&want_shape[..], dtype));
                    let got = bits(&out);
                    for (o, g) in got.iter().enumerate() {
                        let (row, j) = (o / n, o % n);
                        let terms = (0..k).map(|i| f64::from(a_values[row * k + i]) * f64::from(weights[j * k + i]));
                        let (exact, magnitude) = terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()));
                        let tolerance = k as f64 * 2f64.powi(-24) * magnitude + 2f64.powi(-precision) * exact.abs();
                        let g = f64::from(f32::from_bits(*g));
                        assert!(
                            (g - exact).abs() <= tolerance,
                            "{qt} {dtype} {lead:?} on {device}: out[{o}] = {g}, expected {exact} within {tolerance}"
                        );
                    }
                }
            }
        }
    });
}

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
        invalid(
            "i32 x",
            anydev_quant::quantize_4bit(&ints, QuantType::Fp4, 64),
            "x must be",
        );
        invalid(
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
        invalid(
            "packed dtype",
            anydev_quant::dequantize_4bit(&wrong_packed),
            "packed must be u8",
        );
        let to_ints = Quantized4bit {
            dtype: DType::I32,
            ..q.clone()
        };
        invalid("output dtype", anydev_quant::dequantize_4bit(&to_ints), "dtype must be");
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
        let codes: Vec<u8> = normalized.iter().map(|&v| r::nf4_code(v)).collect();
        same("packed", &bytes(&q[0]), &r::pack(&codes));
        let attrs = attrs
            .with("shape", AttrValue::Shape(vec![n]))
            .with("dtype", AttrValue::DType(DType::F32));
        let out = ext::call_with(op::DEQUANTIZE_4BIT, &[&q[0], &q[1]], &attrs, fallback).unwrap();
        let want = r::dequantize4(true, &codes, &absmax, bs);
        same("dequantized", &bits(&out[0]), &f32_bits(&want, DType::F32));
        assert!(
            ext::host_fallbacks() >= before + 2,
            "both calls counted as host fallbacks"
        );
    });
    if covered.is_empty() {
        eprintln!("no selected device lacks kernels: the NoKernel path was not exercised");
    }
}
