//! Shared helpers of the wgpu tests: a device or a clear skip, typed
//! uploads and downloads, and strided operand construction.
#![allow(dead_code)]

use anydev_core::backend::{allocate, Backend, TensorRef};
use anydev_core::ops::Op;
use anydev_core::{Buffer, DType, Device, DeviceKind, InitError, MemoryKind, Result, Stream};
use anydev_wgpu::InitOptions;
use half::{bf16, f16};
use std::sync::{Arc, OnceLock};

pub struct Gpu {
    pub backend: Arc<dyn Backend>,
    pub stream: Stream,
    pub device: Device,
}

/// The first wgpu device, shared by the tests of one binary, or `None`
/// (with the reason printed) when this machine has no adapter.
pub fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<std::result::Result<Gpu, String>> = OnceLock::new();
    let gpu = GPU.get_or_init(|| {
        let options = InitOptions::from_env().map_err(|e| e.to_string())?;
        match anydev_wgpu::init(&options) {
            Ok(backend) => {
                let stream = backend.default_stream(0).map_err(|e| e.to_string())?;
                Ok(Gpu {
                    backend,
                    stream,
                    device: Device::new(DeviceKind::new("wgpu"), 0),
                })
            }
            Err(InitError::Unavailable(r)) | Err(InitError::Failed(r)) => Err(r),
        }
    });
    match gpu {
        Ok(g) => Some(g),
        Err(reason) => {
            eprintln!("SKIPPED: no wgpu device on this machine: {reason}");
            None
        }
    }
}

/// Evaluates to the shared device, or returns from the test (printing why).
#[macro_export]
macro_rules! gpu_or_skip {
    () => {
        match common::gpu() {
            Some(g) => g,
            None => return,
        }
    };
}

impl Gpu {
    pub fn holds(&self, dtype: DType) -> bool {
        self.backend.capabilities(0).unwrap().supports_dtype(dtype)
    }

    pub fn alloc(&self, bytes: usize) -> Buffer {
        allocate(&self.backend, self.device, bytes, MemoryKind::Device).unwrap()
    }

    pub fn upload(&self, bytes: &[u8]) -> Buffer {
        let b = self.alloc(bytes.len());
        self.backend.copy_from_host(&self.stream, bytes, &b, 0).unwrap();
        b
    }

    pub fn download(&self, b: &Buffer) -> Vec<u8> {
        let mut out = vec![0u8; b.len()];
        self.backend.copy_to_host(&self.stream, b, 0, &mut out).unwrap();
        out
    }

    pub fn run(&self, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
        self.backend.execute(&self.stream, op)
    }
}

/// Row-major strides of `shape`.
pub fn contiguous(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s = 1isize;
    for d in (0..shape.len()).rev() {
        strides[d] = s;
        s *= shape[d].max(1) as isize;
    }
    strides
}

pub fn tensor<'a>(
    buffer: &'a Buffer,
    dtype: DType,
    shape: &'a [usize],
    strides: &'a [isize],
    offset_elems: usize,
) -> TensorRef<'a> {
    TensorRef {
        buffer,
        offset: offset_elems * dtype.size(),
        dtype,
        shape,
        strides,
    }
}

/// The element at row-major index `i` of a strided view, as a flat index
/// into its buffer (in elements).
pub fn element_index(i: usize, shape: &[usize], strides: &[isize], offset: usize) -> usize {
    let mut rem = i;
    let mut off = offset as isize;
    for d in (0..shape.len()).rev() {
        off += (rem % shape[d]) as isize * strides[d];
        rem /= shape[d];
    }
    off as usize
}

/// Values of `dtype` from f64s, with the host's conversions (`half` for
/// f16/bf16, Rust `as` for the rest: truncating, saturating).
pub fn encode(dtype: DType, values: &[f64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * dtype.size());
    for &v in values {
        match dtype {
            DType::Bool => out.push((v != 0.0) as u8),
            DType::I8 => out.extend((v as i8).to_le_bytes()),
            DType::I16 => out.extend((v as i16).to_le_bytes()),
            DType::I32 => out.extend((v as i32).to_le_bytes()),
            DType::I64 => out.extend((v as i64).to_le_bytes()),
            DType::U8 => out.extend((v as u8).to_le_bytes()),
            DType::U16 => out.extend((v as u16).to_le_bytes()),
            DType::U32 => out.extend((v as u32).to_le_bytes()),
            DType::U64 => out.extend((v as u64).to_le_bytes()),
            DType::F16 => out.extend(anydev_ops::f16_from_f64(v).to_le_bytes()),
            DType::BF16 => out.extend(anydev_ops::bf16_from_f64(v).to_le_bytes()),
            DType::F32 => out.extend((v as f32).to_le_bytes()),
            DType::F64 => out.extend(v.to_le_bytes()),
            DType::C64 | DType::C128 => panic!("{dtype} values are not f64s"),
        }
    }
    out
}

/// Integer values of an integer (or bool) dtype, wrapping like `as`.
pub fn encode_int(dtype: DType, values: &[i128]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * dtype.size());
    for &v in values {
        let bytes = (v as u128).to_le_bytes();
        out.extend_from_slice(&bytes[..dtype.size()]);
    }
    out
}

/// Every element of a buffer of `dtype` as f64.
pub fn decode(dtype: DType, bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(dtype.size())
        .map(|c| match dtype {
            DType::Bool => (c[0] != 0) as u8 as f64,
            DType::I8 => c[0] as i8 as f64,
            DType::I16 => i16::from_le_bytes([c[0], c[1]]) as f64,
            DType::I32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::I64 => i64::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::U8 => c[0] as f64,
            DType::U16 => u16::from_le_bytes([c[0], c[1]]) as f64,
            DType::U32 => u32::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::U64 => u64::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::F16 => f16::from_le_bytes([c[0], c[1]]).to_f64(),
            DType::BF16 => bf16::from_le_bytes([c[0], c[1]]).to_f64(),
            DType::F32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::F64 => f64::from_le_bytes(c.try_into().unwrap()),
            DType::C64 | DType::C128 => panic!("{dtype} values are not f64s"),
        })
        .collect()
}

/// Every element of an integer (or bool) buffer, exactly.
pub fn decode_int(dtype: DType, bytes: &[u8]) -> Vec<i128> {
    bytes
        .chunks_exact(dtype.size())
        .map(|c| {
            let mut raw = [0u8; 16];
            raw[..c.len()].copy_from_slice(c);
            let v = u128::from_le_bytes(raw);
            let bits = 8 * c.len() as u32;
            if dtype.is_signed() && bits < 128 && (v >> (bits - 1)) & 1 == 1 {
                (v as i128) - (1i128 << bits)
            } else {
                v as i128
            }
        })
        .collect()
}

/// Rounds an f64 reference to `dtype` and back, as a stored result would be.
pub fn round_to(dtype: DType, v: f64) -> f64 {
    decode(dtype, &encode(dtype, &[v]))[0]
}

/// Whether `got` matches the reference `want` for a float dtype: both NaN,
/// equal (infinities included), or within `ulps` units of the dtype's precision.
pub fn close(dtype: DType, got: f64, want: f64, ulps: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    let eps = match dtype {
        DType::F16 => 2f64.powi(-10),
        DType::BF16 => 2f64.powi(-7),
        DType::F32 => 2f64.powi(-23),
        _ => 2f64.powi(-52),
    };
    (got - want).abs() <= ulps * eps * want.abs().max(1e-30) + 1e-300
}

/// A deterministic pseudo-random sequence (SplitMix64) for test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[low, high)`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }

    pub fn vec(&mut self, n: usize, low: f64, high: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(low, high)).collect()
    }
}

/// A strided view over a buffer of `len` elements.
#[derive(Clone, Debug)]
pub struct View {
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
    pub len: usize,
}

impl View {
    pub fn contiguous(shape: &[usize]) -> View {
        View {
            shape: shape.to_vec(),
            strides: contiguous(shape),
            offset: 0,
            len: shape.iter().product::<usize>().max(1),
        }
    }

    /// Every axis reversed (negative strides) inside a buffer with a
    /// 3-element margin on each side.
    pub fn reversed(shape: &[usize]) -> View {
        let c = contiguous(shape);
        let n: usize = shape.iter().product();
        let last: isize = shape.iter().zip(&c).map(|(&d, &s)| (d.max(1) as isize - 1) * s).sum();
        View {
            shape: shape.to_vec(),
            strides: c.iter().map(|s| -s).collect(),
            offset: 3 + last as usize,
            len: n.max(1) + 6,
        }
    }

    /// Column-major (transposed) layout, starting 5 elements in.
    pub fn column_major(shape: &[usize]) -> View {
        let mut strides = vec![0isize; shape.len()];
        let mut s = 1isize;
        for d in 0..shape.len() {
            strides[d] = s;
            s *= shape[d].max(1) as isize;
        }
        View {
            shape: shape.to_vec(),
            strides,
            offset: 5,
            len: s as usize + 5,
        }
    }

    /// Every other element (stride 2 on the last axis).
    pub fn gapped(shape: &[usize]) -> View {
        let mut v = View::contiguous(shape);
        for s in &mut v.strides {
            *s *= 2;
        }
        v.len = 2 * v.len + 1;
        v.offset = 1;
        v
    }

    pub fn all(shape: &[usize]) -> Vec<View> {
        vec![
            View::contiguous(shape),
            View::reversed(shape),
            View::column_major(shape),
            View::gapped(shape),
        ]
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Buffer bytes with `values` (row-major, logical) at their places and
    /// a marker (7) everywhere else.
    pub fn place(&self, dtype: DType, values: &[f64]) -> Vec<u8> {
        let mut all = vec![7.0; self.len];
        for (i, &v) in values.iter().enumerate() {
            all[element_index(i, &self.shape, &self.strides, self.offset)] = v;
        }
        encode(dtype, &all)
    }

    pub fn place_int(&self, dtype: DType, values: &[i128]) -> Vec<u8> {
        let mut all = vec![7i128; self.len];
        for (i, &v) in values.iter().enumerate() {
            all[element_index(i, &self.shape, &self.strides, self.offset)] = v;
        }
        encode_int(dtype, &all)
    }

    /// The logical elements of a downloaded buffer.
    pub fn gather<T: Copy>(&self, all: &[T]) -> Vec<T> {
        (0..self.numel())
            .map(|i| all[element_index(i, &self.shape, &self.strides, self.offset)])
            .collect()
    }

    pub fn tensor<'a>(&'a self, buffer: &'a Buffer, dtype: DType) -> TensorRef<'a> {
        tensor(buffer, dtype, &self.shape, &self.strides, self.offset)
    }
}

pub const FLOATS: [DType; 4] = [DType::F16, DType::BF16, DType::F32, DType::F64];
pub const INTS: [DType; 8] = [
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
];

/// `v` wrapped into integer dtype `dtype`, as two's complement does.
pub fn wrap(dtype: DType, v: i128) -> i128 {
    decode_int(dtype, &encode_int(dtype, &[v]))[0]
}

/// The smallest and largest value of an integer dtype.
pub fn int_range(dtype: DType) -> (i128, i128) {
    let bits = dtype.size() as u32 * 8;
    if dtype.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The row-major index in a reduction's output (`out_shape`: `shape` with
/// the reduced axes of length 1) of the input element at row-major `i`.
pub fn reduced_index(i: usize, shape: &[usize], out_shape: &[usize]) -> usize {
    let mut rem = i;
    let mut coords = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        coords[d] = rem % shape[d];
        rem /= shape[d];
    }
    (0..shape.len()).fold(0, |acc, d| {
        acc * out_shape[d] + if out_shape[d] == 1 { 0 } else { coords[d] }
    })
}
