//! The devices the tests run on, and an independent scalar reference of
//! the formats, written element by element from bitsandbytes' algorithms
//! (literal trees and searches) rather than from the crate's tables and
//! kernels.

#![allow(dead_code)] // each test file uses its own part

use anydev::plugin::PluginConfig;
use anydev::{DType, Device, Runtime, RuntimeConfig};
use half::{bf16, f16};
use std::sync::OnceLock;

/// The built-in devices plus two simulators, loaded through manifests as
/// the device-generic suite loads plugins: `sim`, which implements the ops
/// through the C ABI's extension calls, and `simbare`, the same library
/// told to list none of them (a plugin without the library's ops).
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let dir =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("anydev-quant-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the manifest directory");
        let library = anydev_testing::locate::sim_library();
        let refuse: Vec<&str> = anydev_quant::op::ALL.to_vec();
        for (name, options) in [
            ("sim", r#"{"devices": 1}"#.to_owned()),
            ("simbare", format!(r#"{{"devices": 1, "refuse_ops": {refuse:?}}}"#)),
        ] {
            let manifest = format!(
                r#"{{"file_format_version": "1.0.0", "name": "{name}", "library_path": {library:?}, "options": {options}}}"#
            );
            std::fs::write(dir.join(format!("{name}.json")), manifest).expect("write a sim manifest");
        }
        let config = RuntimeConfig {
            plugins: PluginConfig {
                search_dirs: vec![dir],
                direct: None,
            },
            ..RuntimeConfig::default()
        };
        Runtime::with_plugins(anydev::backends::builtin_providers(), config)
    })
}

/// The devices `ANYDEV_TEST_DEVICES` selects (every device by default).
pub fn devices() -> Vec<Device> {
    anydev_testing::select::from_env(runtime()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `f` on every selected device, with the test runtime installed.
pub fn on_each_device(mut f: impl FnMut(Device)) {
    anydev::with_runtime(runtime(), || {
        for device in devices() {
            f(device)
        }
    })
}

pub fn supports(device: Device, dtype: DType) -> bool {
    runtime().capabilities(device).is_ok_and(|c| c.supports_dtype(dtype))
}

/// Whether `device` runs the ops: a kernel registered for its kind, or
/// its plugin's own implementation (else its calls are `NoKernel`).
pub fn has_kernels(device: Device) -> bool {
    anydev_quant::register().expect("register the quant ops");
    let ops = anydev::extension::device_ops_in(runtime(), device).expect("a device of the runtime");
    ops.iter().any(|op| op == anydev_quant::op::QUANTIZE_4BIT)
}

/// `values` rounded to `dtype` (f32, f16, bf16), back as f32.
pub fn round(dtype: DType, v: f32) -> f32 {
    match dtype {
        DType::F16 => f16::from_f32(v).to_f32(),
        DType::BF16 => bf16::from_f32(v).to_f32(),
        _ => v,
    }
}

/// An array of `values` (exactly representable in `dtype`) on `device`.
pub fn array(values: &[f32], shape: &[usize], dtype: DType, device: Device) -> anydev::Array {
    let a = match dtype {
        DType::F16 => {
            let v: Vec<f16> = values.iter().map(|&x| f16::from_f32(x)).collect();
            anydev::Array::from_slice(&v, shape, device)
        }
        DType::BF16 => {
            let v: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x)).collect();
            anydev::Array::from_slice(&v, shape, device)
        }
        _ => anydev::Array::from_slice(values, shape, device),
    };
    a.unwrap_or_else(|e| panic!("{dtype} array on {device}: {e}"))
}

/// A float array's values as f32 bits (f16/bf16 widened exactly).
pub fn bits(a: &anydev::Array) -> Vec<u32> {
    let cpu = a.to_device(Device::cpu()).expect("to cpu");
    match a.dtype() {
        DType::F16 => cpu
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_f32().to_bits())
            .collect(),
        DType::BF16 => cpu
            .to_vec::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_f32().to_bits())
            .collect(),
        _ => cpu.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect(),
    }
}

pub mod reference {
    //! bitsandbytes' algorithms, one element at a time.

    /// NF4's values (QLoRA appendix E), code = index, as bitsandbytes
    /// writes them.
    #[allow(clippy::excessive_precision)]
    pub const NF4: [f32; 16] = [
        -1.0,
        -0.6961928009986877,
        -0.5250730514526367,
        -0.39491748809814453,
        -0.28444138169288635,
        -0.18477343022823334,
        -0.09105003625154495,
        0.0,
        0.07958029955625534,
        0.16093020141124725,
        0.24611230194568634,
        0.33791524171829224,
        0.44070982933044434,
        0.5626170039176941,
        0.7229568362236023,
        1.0,
    ];

    /// `dQuantizeNF4`: a binary tree on the midpoints of neighbouring
    /// values (x above a midpoint goes up), each midpoint in f64 rounded
    /// to f32 like the tree's literals.
    pub fn nf4_code(x: f32) -> u8 {
        let mid = |hi: usize| ((NF4[hi - 1] as f64 + NF4[hi] as f64) / 2.0) as f32;
        // The tree splits codes lo..lo+len at lo + len/2.
        let (mut lo, mut len) = (0usize, 16usize);
        while len > 1 {
            let half = len / 2;
            if x > mid(lo + half) {
                lo += half;
            }
            len = half;
        }
        lo as u8
    }

    /// `dQuantizeFP4`, as bitsandbytes writes the tree.
    #[allow(clippy::excessive_precision)]
    pub fn fp4_code(x: f32) -> u8 {
        let sign = if x < 0.0 { 0b1000 } else { 0 };
        let x = x.abs();
        sign + if x > 0.29166667 {
            if x > 0.583333 {
                if x > 0.8333333 {
                    0b0011
                } else {
                    0b0010
                }
            } else if x > 0.4166667 {
                0b101
            } else {
                0b100
            }
        } else if x > 0.0859375 {
            if x > 0.20833333 {
                0b0111
            } else {
                0b0110
            }
        } else if x > 0.00260417 {
            0b0001
        } else {
            0b0000
        }
    }

    /// `dDequantizeFP4Tree`'s value of a code, before the absmax.
    #[allow(clippy::excessive_precision)]
    pub fn fp4_value(code: u8) -> f32 {
        let magnitude = match code & 0b111 {
            0b000 => 0.0,
            0b001 => 5.208333333e-03,
            0b010 => 0.66666667,
            0b011 => 1.0,
            0b100 => 0.33333333,
            0b101 => 0.5,
            0b110 => 0.16666667,
            _ => 0.25,
        };
        if code & 0b1000 != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// `dQuantize<0>` on the 256-value `code`.
    pub fn dynamic_code(code: &[f32], x: f32) -> u8 {
        let mut pivot = 127;
        let (mut lower_pivot, mut upper_pivot) = (0, 255);
        let (mut lower, mut upper) = (-1.0f32, 1.0f32);
        let mut val = code[pivot];
        for i in [64, 32, 16, 8, 4, 2, 1] {
            if x > val {
                lower_pivot = pivot;
                lower = val;
                pivot += i;
            } else {
                upper_pivot = pivot;
                upper = val;
                pivot -= i;
            }
            val = code[pivot];
        }
        if upper_pivot == 255 {
            upper = code[255];
        }
        if lower_pivot == 0 {
            lower = code[0];
        }
        if x > val {
            if x > (upper + val) * 0.5 {
                upper_pivot as u8
            } else {
                pivot as u8
            }
        } else if x < (lower + val) * 0.5 {
            lower_pivot as u8
        } else {
            pivot as u8
        }
    }

    /// Per block: absmax and each element normalized by `x * (1/absmax)`
    /// (0 for a block of zeros).
    pub fn normalized(x: &[f32], blocksize: usize) -> (Vec<f32>, Vec<f32>) {
        let mut absmax = Vec::new();
        let mut out = Vec::new();
        for block in x.chunks(blocksize) {
            let m = block.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let inv = if m > 0.0 { 1.0 / m } else { 0.0 };
            absmax.push(m);
            out.extend(block.iter().map(|v| v * inv));
        }
        (absmax, out)
    }

    /// 4-bit codes, packed two per byte, high nibble first.
    pub fn pack(codes: &[u8]) -> Vec<u8> {
        codes
            .chunks(2)
            .map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0))
            .collect()
    }

    /// The dequantized f32 values of 4-bit `codes`.
    pub fn dequantize4(nf4: bool, codes: &[u8], absmax: &[f32], blocksize: usize) -> Vec<f32> {
        codes
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let v = if nf4 { NF4[c as usize] } else { fp4_value(c) };
                v * absmax[i / blocksize]
            })
            .collect()
    }
}
