//! The host kernels on plain slices, parallel over blocks (rayon). They
//! need no runtime: the `cpu` kernels of the ops call them, and a device
//! plugin that computes on the host can link them without linking anydev
//! (`default-features = false`).
//!
//! Every function checks that the slices' lengths agree with each other
//! and with the block size, so a caller's mistake is an error, never a
//! panic or a partial write.

use crate::formats::{self, blocks, FormatError, QuantType};
use half::{bf16, f16};
use rayon::prelude::*;

/// A floating-point element the kernels read and write: computed in f32,
/// stored rounded to nearest even.
pub trait Element: Copy + Send + Sync {
    fn to_f32(self) -> f32;
    fn from_f32(value: f32) -> Self;
}

impl Element for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(value: f32) -> f32 {
        value
    }
}

impl Element for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn from_f32(value: f32) -> f16 {
        f16::from_f32(value)
    }
}

impl Element for bf16 {
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    fn from_f32(value: f32) -> bf16 {
        bf16::from_f32(value)
    }
}

fn expect_len(what: &str, len: usize, want: usize) -> Result<(), FormatError> {
    if len == want {
        return Ok(());
    }
    Err(FormatError(format!("{what} has {len} elements, expected {want}")))
}

/// Checks the block size and that `absmax` has one entry per block of `n`.
fn check_blocks(n: usize, blocksize: usize, absmax: usize) -> Result<(), FormatError> {
    formats::check_blocksize(blocksize as i64)?;
    expect_len("absmax", absmax, blocks(n, blocksize))
}

/// The 256-entry code of the 8-bit format, or why `code` is not one.
fn code_table(code: &[f32]) -> Result<&[f32; 256], FormatError> {
    code.try_into()
        .map_err(|_| FormatError(format!("code has {} elements, expected 256", code.len())))
}

/// The largest |x| of a block (0 for an empty one).
fn block_absmax<T: Element>(x: &[T]) -> f32 {
    x.iter().fold(0.0f32, |m, v| m.max(v.to_f32().abs()))
}

/// 8-bit blockwise quantization: per block of `blocksize` elements its
/// absmax, and each element's code under `code` after normalizing by
/// `x * (1 / absmax)`.
pub fn quantize_blockwise<T: Element>(
    x: &[T],
    code: &[f32],
    blocksize: usize,
    q: &mut [u8],
    absmax: &mut [f32],
) -> Result<(), FormatError> {
    let code = code_table(code)?;
    check_blocks(x.len(), blocksize, absmax.len())?;
    expect_len("q", q.len(), x.len())?;
    x.par_chunks(blocksize)
        .zip(q.par_chunks_mut(blocksize))
        .zip(absmax.par_iter_mut())
        .for_each(|((x, q), absmax)| {
            *absmax = block_absmax(x);
            let inverse = formats::inverse(*absmax);
            for (q, x) in q.iter_mut().zip(x) {
                *q = formats::quantize_dynamic(code, x.to_f32() * inverse);
            }
        });
    Ok(())
}

/// 8-bit blockwise dequantization: `code[q] * absmax` of the block.
pub fn dequantize_blockwise<T: Element>(
    q: &[u8],
    absmax: &[f32],
    code: &[f32],
    blocksize: usize,
    out: &mut [T],
) -> Result<(), FormatError> {
    let code = code_table(code)?;
    check_blocks(q.len(), blocksize, absmax.len())?;
    expect_len("the output", out.len(), q.len())?;
    out.par_chunks_mut(blocksize)
        .zip(q.par_chunks(blocksize))
        .zip(absmax.par_iter())
        .for_each(|((out, q), &absmax)| {
            for (o, &q) in out.iter_mut().zip(q) {
                *o = T::from_f32(code[usize::from(q)] * absmax);
            }
        });
    Ok(())
}

/// 4-bit blockwise quantization: per block its absmax, and two codes per
/// byte (element `2j` in the high nibble, `2j + 1` in the low one; an odd
/// count leaves the last low nibble 0).
pub fn quantize_4bit<T: Element>(
    x: &[T],
    quant_type: QuantType,
    blocksize: usize,
    packed: &mut [u8],
    absmax: &mut [f32],
) -> Result<(), FormatError> {
    check_blocks(x.len(), blocksize, absmax.len())?;
    expect_len("packed", packed.len(), x.len().div_ceil(2))?;
    x.par_chunks(blocksize)
        .zip(packed.par_chunks_mut(blocksize / 2))
        .zip(absmax.par_iter_mut())
        .for_each(|((x, packed), absmax)| {
            *absmax = block_absmax(x);
            let inverse = formats::inverse(*absmax);
            let code = |v: &T| quant_type.quantize(v.to_f32() * inverse);
            for (byte, pair) in packed.iter_mut().zip(x.chunks(2)) {
                *byte = code(&pair[0]) << 4 | pair.get(1).map_or(0, code);
            }
        });
    Ok(())
}

/// The 4-bit code of element `i` in `packed`.
fn nibble(packed: &[u8], i: usize) -> usize {
    let byte = packed[i / 2];
    usize::from(if i.is_multiple_of(2) { byte >> 4 } else { byte & 0xf })
}

/// 4-bit blockwise dequantization: the code's value times the block's
/// absmax.
pub fn dequantize_4bit<T: Element>(
    packed: &[u8],
    absmax: &[f32],
    quant_type: QuantType,
    blocksize: usize,
    out: &mut [T],
) -> Result<(), FormatError> {
    check_blocks(out.len(), blocksize, absmax.len())?;
    expect_len("packed", packed.len(), out.len().div_ceil(2))?;
    let values = quant_type.values();
    out.par_chunks_mut(blocksize)
        .zip(packed.par_chunks(blocksize / 2))
        .zip(absmax.par_iter())
        .for_each(|((out, packed), &absmax)| {
            // The block's 16 results, each rounded once: a byte then costs
            // two lookups instead of two multiplications and conversions
            // (the conversion to f16/bf16 dominates otherwise).
            let scaled: [T; 16] = std::array::from_fn(|c| T::from_f32(values[c] * absmax));
            let whole = out.len() / 2;
            let mut pairs = out.chunks_exact_mut(2);
            for (pair, &byte) in (&mut pairs).zip(packed) {
                pair[0] = scaled[usize::from(byte >> 4)];
                pair[1] = scaled[usize::from(byte & 0xf)];
            }
            if let ([last], Some(&byte)) = (pairs.into_remainder(), packed.get(whole)) {
                *last = scaled[usize::from(byte >> 4)];
            }
        });
    Ok(())
}

/// The shape of a 4-bit matrix-vector product: weights `[n, k]`
/// quantized as one flat array, inputs `rows` vectors of `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemvShape {
    pub rows: usize,
    pub n: usize,
    pub k: usize,
}

/// 4-bit matrix-vector product (bitsandbytes' `gemv_4bit`): for each of
/// `rows` inputs `a[r, :]`, `out[r, j] = sum_k a[r, k] * w[j, k]`, with
/// `w` dequantized on the fly (row-major, blocks over the flattened
/// matrix), accumulated in f32 in order of `k`.
pub fn gemv_4bit<T: Element>(
    a: &[T],
    packed: &[u8],
    absmax: &[f32],
    quant_type: QuantType,
    blocksize: usize,
    shape: GemvShape,
    out: &mut [T],
) -> Result<(), FormatError> {
    let GemvShape { rows, n, k } = shape;
    let too_big = || FormatError(format!("{rows} x {n} x {k} elements overflow"));
    let weights = n.checked_mul(k).ok_or_else(too_big)?;
    check_blocks(weights, blocksize, absmax.len())?;
    expect_len("packed", packed.len(), weights.div_ceil(2))?;
    expect_len("a", a.len(), rows.checked_mul(k).ok_or_else(too_big)?)?;
    expect_len("the output", out.len(), rows.checked_mul(n).ok_or_else(too_big)?)?;
    let values = quant_type.values();
    let weight = |i: usize| values[nibble(packed, i)] * absmax[i / blocksize];
    out.par_iter_mut().enumerate().for_each(|(o, out)| {
        let (r, j) = (o / n, o % n);
        let a = &a[r * k..(r + 1) * k];
        let sum = a
            .iter()
            .enumerate()
            .fold(0.0f32, |s, (i, a)| s + a.to_f32() * weight(j * k + i));
        *out = T::from_f32(sum);
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatched_lengths_are_errors() {
        let x = [1.0f32; 100];
        let (mut q, mut absmax) = ([0u8; 100], [0f32; 2]);
        let code = formats::dynamic_map();
        assert!(quantize_blockwise(&x, &code[..255], 64, &mut q, &mut absmax).is_err());
        assert!(quantize_blockwise(&x, &code, 64, &mut q[..99], &mut absmax).is_err());
        assert!(quantize_blockwise(&x, &code, 64, &mut q, &mut absmax[..1]).is_err());
        assert!(quantize_blockwise(&x, &code, 65, &mut q, &mut absmax).is_err());
        let mut packed = [0u8; 50];
        assert!(quantize_4bit(&x, QuantType::Nf4, 64, &mut packed[..49], &mut absmax).is_err());
        let shape = GemvShape { rows: 1, n: 10, k: 10 };
        let mut out = [0f32; 10];
        assert!(gemv_4bit(&x[..10], &packed, &absmax, QuantType::Fp4, 64, shape, &mut out).is_ok());
        assert!(gemv_4bit(&x[..9], &packed, &absmax, QuantType::Fp4, 64, shape, &mut out).is_err());
        let huge = GemvShape {
            rows: 1,
            n: usize::MAX,
            k: 2,
        };
        assert!(gemv_4bit(&x[..2], &packed, &absmax[..1], QuantType::Fp4, 64, huge, &mut out).is_err());
    }

    #[test]
    fn empty_matrices() {
        let shape = GemvShape { rows: 3, n: 4, k: 0 };
        let mut out = [f16::ONE; 12];
        gemv_4bit::<f16>(&[], &[], &[], QuantType::Nf4, 64, shape, &mut out).unwrap();
        assert!(out.iter().all(|v| v.to_f32() == 0.0));
        let shape = GemvShape { rows: 3, n: 0, k: 4 };
        gemv_4bit::<f32>(&[0.0; 12], &[], &[], QuantType::Nf4, 64, shape, &mut []).unwrap();
    }
}
