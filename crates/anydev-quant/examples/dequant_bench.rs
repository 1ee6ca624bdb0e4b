//! Dequantizing a 4096 x 4096 NF4 matrix to f32 and f16, against a plain
//! copy of the same output on the same device in the same run, and the
//! fixed cost of a named op against a built-in op of the same size, on
//! every device with kernels (docs/performance.md, "Quantization").
//!
//! `cargo run --release -p anydev-quant --example dequant_bench`

use anydev::{Array, DType, Device};
use anydev_quant::{dequantize_4bit, quantize_4bit, QuantType};
use std::time::Instant;

/// Waits for `device`'s queued work: reading a fresh array back is
/// ordered after everything queued before it (one in-order queue per
/// device on every backend here).
fn sync(device: Device) -> anydev::Result<()> {
    Array::from_slice(&[0f32], &[1], device)?.to_vec::<f32>()?;
    Ok(())
}

/// The median over `batches` of the time per call of `calls` calls of
/// `f` followed by a sync, in seconds.
fn time(device: Device, batches: usize, calls: usize, mut f: impl FnMut() -> anydev::Result<Array>) -> f64 {
    let mut times: Vec<f64> = (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f().expect("timed call");
            }
            sync(device).expect("sync");
            start.elapsed().as_secs_f64() / calls as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[batches / 2]
}

fn main() -> anydev::Result<()> {
    let (n, k, bs) = (4096, 4096, 64);
    let values: Vec<f32> = (0..n * k).map(|i| ((i * 7919 % 10007) as f32 / 5003.5) - 1.0).collect();
    let devices = anydev::runtime().devices();
    for device in devices
        .into_iter()
        .filter(|d| ["cpu", "wgpu"].contains(&d.kind().as_str()))
    {
        let w = Array::from_slice(&values, &[n, k], device)?;
        let mut q = quantize_4bit(&w, QuantType::Nf4, bs)?;
        for dtype in [DType::F32, DType::F16] {
            q.dtype = dtype;
            let out = dequantize_4bit(&q)?;
            // Warm up: kernels compiled, memory pools filled.
            time(device, 1, 2, || dequantize_4bit(&q));
            time(device, 1, 2, || out.copy());
            let dequantize = time(device, 7, 3, || dequantize_4bit(&q));
            let copy = time(device, 7, 3, || out.copy());
            let mib = (n * k * dtype.size()) as f64 / (1 << 20) as f64;
            println!(
                "{device} dequantize_4bit nf4 {n}x{k} -> {dtype}: {:.2} ms ({:.0} MiB/s out), copy {:.2} ms, ratio {:.2}",
                dequantize * 1e3,
                mib / dequantize,
                copy * 1e3,
                dequantize / copy
            );
        }
        // The fixed cost: 64 elements, a named op (registry lookup, shape
        // rule, launch rules) against the built-in copy of its output.
        let small = quantize_4bit(&Array::from_slice(&values[..64], &[64], device)?, QuantType::Nf4, bs)?;
        let out = dequantize_4bit(&small)?;
        time(device, 1, 100, || dequantize_4bit(&small));
        let named = time(device, 7, 1000, || dequantize_4bit(&small));
        let builtin = time(device, 7, 1000, || out.copy());
        println!(
            "{device} 64 elements: dequantize_4bit {:.1} us, copy {:.1} us, ratio {:.2}",
            named * 1e6,
            builtin * 1e6,
            named / builtin
        );
    }
    Ok(())
}
