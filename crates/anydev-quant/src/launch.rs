//! What the GPU kernels (WGSL and CUDA) are told per call: one params
//! layout for every op, and the shapes of their launches.
//!
//! Params words: `[count, dtype, blocksize, quant_type, n, k]`, where
//! `count` and `dtype` describe the op's float operand (the input of a
//! quantization, the output of a dequantization or product), `dtype` is
//! 0 (f32), 1 (f16) or 2 (bf16), `quant_type` is 0 (NF4) or 1 (FP4; 0 for
//! the 8-bit ops), and `n`, `k` are the weights' dimensions of `gemv_4bit`
//! (0 for the other ops).

use crate::call::op;
use crate::formats::{blocks, QuantType};
use crate::ops;
use anydev::extension::{Attrs, LaunchRule, TensorMeta};
use anydev::{Error, Result};
use std::sync::Arc;

/// The most elements a GPU kernel indexes: element and block offsets stay
/// below 2^32 in 32-bit arithmetic, with room for a grid's spare groups.
const MAX_ELEMENTS: usize = i32::MAX as usize;

/// Whether the op's float operand is its first input (the quantizers) or
/// its first output (the others).
fn float_is_input(op: &str) -> bool {
    op == op::QUANTIZE_BLOCKWISE || op == op::QUANTIZE_4BIT
}

/// The float operand of a call to `op`.
pub fn float_operand<'m>(op: &str, ins: &'m [TensorMeta], outs: &'m [TensorMeta]) -> &'m TensorMeta {
    if float_is_input(op) {
        &ins[0]
    } else {
        &outs[0]
    }
}

/// `n` as a 32-bit kernel index, or why a GPU kernel cannot index it.
pub fn index(op: &str, n: usize) -> Result<u32> {
    if n > MAX_ELEMENTS {
        return Err(Error::invalid_argument(
            op,
            format!("{n} elements exceed the {MAX_ELEMENTS} a GPU kernel indexes"),
        ));
    }
    Ok(n as u32)
}

/// The params rule of `op` (the layout above).
pub fn params(op: &'static str) -> Arc<LaunchRule<Vec<u32>>> {
    Arc::new(move |ins, outs, attrs| {
        let float = float_operand(op, ins, outs);
        let (n, k) = match op {
            // The shape rule has checked that `[n, k]` is the weights'
            // shape and `a` is `[..., k]`; both must be indexable too.
            op::GEMV_4BIT => {
                let shape = attrs.shape("shape")?;
                index(op, shape[0] * shape[1])?;
                index(op, ins[0].size())?;
                (index(op, shape[0])?, index(op, shape[1])?)
            }
            _ => (0, 0),
        };
        Ok(vec![
            index(op, float.size())?,
            ops::float_code(op, float.dtype)?,
            ops::blocksize(op, attrs)? as u32,
            quant_type_code(op, attrs)?,
            n,
            k,
        ])
    })
}

fn quant_type_code(op: &str, attrs: &Attrs) -> Result<u32> {
    if attrs.get("quant_type").is_none() {
        return Ok(0);
    }
    let qt = ops::quant_type(op, attrs)?;
    Ok(QuantType::ALL.iter().position(|&t| t == qt).unwrap_or_default() as u32)
}

/// How many quantization blocks a quantizer's call covers (a GPU kernel
/// gives each a group of threads).
pub fn quant_blocks(op: &str, ins: &[TensorMeta], attrs: &Attrs) -> Result<usize> {
    Ok(blocks(ins[0].size(), ops::blocksize(op, attrs)?))
}
