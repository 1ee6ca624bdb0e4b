//! The typed API: the ops behind Rust types that keep quantized data
//! together with what it takes to dequantize it. Every function registers
//! the ops on first use and runs on its inputs' device.

use crate::call::op;
use crate::formats::{self, QuantType};
use crate::ops::register;
use anydev::extension::{self as ext, AttrValue, Attrs};
use anydev::{Array, DType, Device, Result};

fn int(blocksize: usize) -> AttrValue {
    AttrValue::Int(i64::try_from(blocksize).unwrap_or(i64::MAX))
}

/// An array quantized to 4 bits per element.
#[derive(Clone, Debug)]
pub struct Quantized4bit {
    /// `u8[ceil(n / 2)]`: element `2j` in the high nibble of byte `j`.
    pub packed: Array,
    /// `f32[ceil(n / blocksize)]`: each block's largest |x|.
    pub absmax: Array,
    /// The original shape.
    pub shape: Vec<usize>,
    /// The original dtype, which dequantization restores.
    pub dtype: DType,
    pub blocksize: usize,
    pub quant_type: QuantType,
}

impl Quantized4bit {
    /// The attributes shared by `dequantize_4bit` and `gemv_4bit`.
    fn attrs(&self) -> Attrs {
        Attrs::new()
            .with("blocksize", int(self.blocksize))
            .with("quant_type", AttrValue::Str(self.quant_type.name().into()))
            .with("shape", AttrValue::Shape(self.shape.clone()))
    }
}

/// Quantizes `x` (f32, f16 or bf16, any shape) to NF4 or FP4 in blocks of
/// `blocksize` (a power of two from 64 to 4096).
pub fn quantize_4bit(x: &Array, quant_type: QuantType, blocksize: usize) -> Result<Quantized4bit> {
    register()?;
    let attrs = Attrs::new()
        .with("blocksize", int(blocksize))
        .with("quant_type", AttrValue::Str(quant_type.name().into()));
    let [packed, absmax] = outputs(ext::call(op::QUANTIZE_4BIT, &[x], &attrs)?)?;
    Ok(Quantized4bit {
        packed,
        absmax,
        shape: x.shape().to_vec(),
        dtype: x.dtype(),
        blocksize,
        quant_type,
    })
}

/// The values of `q` in its original shape and dtype.
pub fn dequantize_4bit(q: &Quantized4bit) -> Result<Array> {
    register()?;
    let attrs = q.attrs().with("dtype", AttrValue::DType(q.dtype));
    let [out] = outputs(ext::call(op::DEQUANTIZE_4BIT, &[&q.packed, &q.absmax], &attrs)?)?;
    Ok(out)
}

/// `a @ w.T` for 4-bit weights `w` of shape `[N, K]` and `a` of shape
/// `[..., K]` (f32, f16 or bf16): `[..., N]` in `a`'s dtype, accumulated in
/// f32.
pub fn gemv_4bit(a: &Array, w: &Quantized4bit) -> Result<Array> {
    register()?;
    let [out] = outputs(ext::call(op::GEMV_4BIT, &[a, &w.packed, &w.absmax], &w.attrs())?)?;
    Ok(out)
}

/// The 8-bit dynamic map ([`formats::dynamic_map`]) as an `f32[256]` on
/// `device`.
pub fn dynamic_map(device: Device) -> Result<Array> {
    Array::from_slice(&formats::dynamic_map(), &[256], device)
}

/// An array quantized to 8 bits per element under a 256-value code.
#[derive(Clone, Debug)]
pub struct QuantizedBlockwise {
    /// `u8`, the original shape: each element's code.
    pub q: Array,
    /// `f32[ceil(n / blocksize)]`: each block's largest |x|.
    pub absmax: Array,
    /// `f32[256]`: the code, e.g. [`dynamic_map`].
    pub code: Array,
    /// The original dtype, which dequantization restores.
    pub dtype: DType,
    pub blocksize: usize,
}

/// Quantizes `x` (f32, f16 or bf16) to 8 bits under `code` (an
/// `f32[256]` of sorted values from -1 to 1, such as [`dynamic_map`]) in
/// blocks of `blocksize`.
pub fn quantize_blockwise(x: &Array, code: &Array, blocksize: usize) -> Result<QuantizedBlockwise> {
    register()?;
    let attrs = Attrs::new().with("blocksize", int(blocksize));
    let [q, absmax] = outputs(ext::call(op::QUANTIZE_BLOCKWISE, &[x, code], &attrs)?)?;
    Ok(QuantizedBlockwise {
        q,
        absmax,
        code: code.clone(),
        dtype: x.dtype(),
        blocksize,
    })
}

/// The values of `q` in its original shape and dtype.
pub fn dequantize_blockwise(q: &QuantizedBlockwise) -> Result<Array> {
    register()?;
    let attrs = Attrs::new()
        .with("blocksize", int(q.blocksize))
        .with("dtype", AttrValue::DType(q.dtype));
    let [out] = outputs(ext::call(
        op::DEQUANTIZE_BLOCKWISE,
        &[&q.q, &q.absmax, &q.code],
        &attrs,
    )?)?;
    Ok(out)
}

/// A call's outputs as an array of the count the op declares (which its
/// shape rule guarantees).
fn outputs<const N: usize>(outputs: Vec<Array>) -> Result<[Array; N]> {
    outputs.try_into().map_err(|v: Vec<Array>| {
        anydev::Error::invalid_argument("anydev-quant", format!("expected {N} outputs, got {}", v.len()))
    })
}
