//! The library's conformance cases: device-generic checks of every op
//! against [`reference`], an independent scalar version of bitsandbytes'
//! algorithms written element by element (literal trees and searches, not
//! this crate's tables or kernels). `anydev conformance` runs them against
//! a plugin that lists the ops ([`register`] adds them to its run); this
//! crate's tests run them on every device. Each case needs its ops
//! ([`Need::ExtensionOp`]), so a device without them skips it.

use crate::formats::{self, QuantType};
use crate::op;
use anydev::{Array, DType, Device};
use anydev_testing::case::check_eq;
use anydev_testing::{Case, CaseCtx, Failure, Need};
use half::{bf16, f16};

/// Defines the ops with this crate's kernels and adds [`cases`] to the
/// conformance run.
pub fn register() -> anydev::Result<()> {
    crate::register()?;
    anydev_testing::cases::register_library(cases);
    Ok(())
}

const FLOATS: [DType; 3] = [DType::F32, DType::F16, DType::BF16];
const LENGTHS: [usize; 6] = [0, 1, 63, 65, 1000, 9001];
const BLOCKSIZES: [usize; 3] = [64, 128, 4096];

/// The cases, parametrised over the float dtypes.
pub fn cases() -> Vec<Case> {
    let needs = |case: Case, ops: &[&'static str]| ops.iter().fold(case, |c, &op| c.needs(Need::ExtensionOp(op)));
    vec![
        needs(
            Case::new("quant::four_bit_matches_the_reference", four_bit).dtypes(&FLOATS),
            &[op::QUANTIZE_4BIT, op::DEQUANTIZE_4BIT],
        ),
        needs(
            Case::new("quant::eight_bit_matches_the_reference", eight_bit).dtypes(&FLOATS),
            &[op::QUANTIZE_BLOCKWISE, op::DEQUANTIZE_BLOCKWISE],
        ),
        needs(
            Case::new("quant::gemv_matches_an_f64_reference", gemv).dtypes(&FLOATS),
            &[op::QUANTIZE_4BIT, op::GEMV_4BIT],
        ),
    ]
}

/// Deterministic values in [-1, 1).
pub fn noise(n: usize, seed: u64) -> Vec<f32> {
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
pub fn data(n: usize, blocksize: usize) -> Vec<f32> {
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
pub fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Result<(), Failure> {
    check_eq(format!("{what}: length"), want.len(), got.len())?;
    match (0..got.len()).find(|&i| got[i] != want[i]) {
        Some(i) => Err(Failure::new(
            format!("{what}: element {i}"),
            format!("{:?}", want[i]),
            format!("{:?}", got[i]),
        )),
        None => Ok(()),
    }
}

/// A u8 array's bytes, read on the host.
pub fn bytes(a: &Array) -> anydev::Result<Vec<u8>> {
    a.to_device(Device::cpu())?.to_vec::<u8>()
}

/// `values` rounded to `dtype`, as f32 bits.
pub fn f32_bits(values: &[f32], dtype: DType) -> Vec<u32> {
    values.iter().map(|&v| round(dtype, v).to_bits()).collect()
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
pub fn array(values: &[f32], shape: &[usize], dtype: DType, device: Device) -> anydev::Result<Array> {
    match dtype {
        DType::F16 => {
            let v: Vec<f16> = values.iter().map(|&x| f16::from_f32(x)).collect();
            Array::from_slice(&v, shape, device)
        }
        DType::BF16 => {
            let v: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x)).collect();
            Array::from_slice(&v, shape, device)
        }
        _ => Array::from_slice(values, shape, device),
    }
}

/// A float array's values as f32 bits (f16/bf16 widened exactly).
pub fn bits(a: &Array) -> anydev::Result<Vec<u32>> {
    let cpu = a.to_device(Device::cpu())?;
    Ok(match a.dtype() {
        DType::F16 => cpu.to_vec::<f16>()?.iter().map(|v| v.to_f32().to_bits()).collect(),
        DType::BF16 => cpu.to_vec::<bf16>()?.iter().map(|v| v.to_f32().to_bits()).collect(),
        _ => cpu.to_vec::<f32>()?.iter().map(|v| v.to_bits()).collect(),
    })
}

fn four_bit(ctx: &CaseCtx) -> Result<(), Failure> {
    let (device, dtype) = (ctx.device, ctx.dtype());
    for bs in BLOCKSIZES {
        for n in LENGTHS {
            let xs: Vec<f32> = data(n, bs).iter().map(|&v| round(dtype, v)).collect();
            let x = array(&xs, &[n], dtype, device)?;
            let (absmax, normalized) = reference::normalized(&xs, bs);
            for qt in QuantType::ALL {
                let what = format!("{qt} n={n} blocksize={bs}");
                let nf4 = qt == QuantType::Nf4;
                let codes = reference::codes4(nf4, &normalized);
                let q = crate::quantize_4bit(&x, qt, bs)?;
                same(&format!("{what}: packed"), &bytes(&q.packed)?, &reference::pack(&codes))?;
                same(
                    &format!("{what}: absmax"),
                    &bits(&q.absmax)?,
                    &f32_bits(&absmax, DType::F32),
                )?;
                let out = crate::dequantize_4bit(&q)?;
                check_eq(
                    format!("{what}: output shape and dtype"),
                    (&[n][..], dtype),
                    (out.shape(), out.dtype()),
                )?;
                let want = reference::dequantize4(nf4, &codes, &absmax, bs);
                same(&format!("{what}: dequantized"), &bits(&out)?, &f32_bits(&want, dtype))?;
            }
        }
    }
    Ok(())
}

fn eight_bit(ctx: &CaseCtx) -> Result<(), Failure> {
    let (device, dtype) = (ctx.device, ctx.dtype());
    let map = formats::dynamic_map();
    let code = crate::dynamic_map(device)?;
    for bs in BLOCKSIZES {
        for n in LENGTHS {
            let what = format!("8-bit n={n} blocksize={bs}");
            let xs: Vec<f32> = data(n, bs).iter().map(|&v| round(dtype, v)).collect();
            // Two dimensions: the codes keep the input's shape.
            let x = array(&xs, &[1, n], dtype, device)?;
            let (absmax, normalized) = reference::normalized(&xs, bs);
            let codes: Vec<u8> = normalized.iter().map(|&v| reference::dynamic_code(&map, v)).collect();
            let q = crate::quantize_blockwise(&x, &code, bs)?;
            check_eq(format!("{what}: shape of q"), &[1, n][..], q.q.shape())?;
            same(&format!("{what}: q"), &bytes(&q.q)?, &codes)?;
            same(
                &format!("{what}: absmax"),
                &bits(&q.absmax)?,
                &f32_bits(&absmax, DType::F32),
            )?;
            let out = crate::dequantize_blockwise(&q)?;
            let want: Vec<f32> = codes
                .iter()
                .enumerate()
                .map(|(i, &c)| map[c as usize] * absmax[i / bs])
                .collect();
            same(&format!("{what}: dequantized"), &bits(&out)?, &f32_bits(&want, dtype))?;
        }
    }
    Ok(())
}

/// The product against an f64 reference over the reference's weights:
/// within `K * 2^-24 * sum |a_k w_k|` (f32 accumulation of K products)
/// plus the rounding of the result to its dtype.
fn gemv(ctx: &CaseCtx) -> Result<(), Failure> {
    let (device, dtype) = (ctx.device, ctx.dtype());
    let (n, k, bs) = (37, 130, 64);
    let ws: Vec<f32> = noise(n * k, 7).iter().map(|v| v * 3.0).collect();
    let (absmax, normalized) = reference::normalized(&ws, bs);
    let precision = match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        _ => 24,
    };
    let w = array(&ws, &[n, k], DType::F32, device)?;
    for qt in QuantType::ALL {
        let nf4 = qt == QuantType::Nf4;
        let codes = reference::codes4(nf4, &normalized);
        let weights = reference::dequantize4(nf4, &codes, &absmax, bs);
        let q = crate::quantize_4bit(&w, qt, bs)?;
        for lead in [vec![], vec![2, 3], vec![0]] {
            let rows: usize = lead.iter().product();
            let a_values: Vec<f32> = noise(rows * k, 11).iter().map(|&v| round(dtype, v * 2.0)).collect();
            let mut shape = lead.clone();
            shape.push(k);
            let a = array(&a_values, &shape, dtype, device)?;
            let out = crate::gemv_4bit(&a, &q)?;
            let mut want_shape = lead.clone();
            want_shape.push(n);
            check_eq(
                format!("{qt} {lead:?}: output shape and dtype"),
                (&want_shape[..], dtype),
                (out.shape(), out.dtype()),
            )?;
            for (o, g) in bits(&out)?.iter().enumerate() {
                let (row, j) = (o / n, o % n);
                let terms = (0..k).map(|i| f64::from(a_values[row * k + i]) * f64::from(weights[j * k + i]));
                let (exact, magnitude) = terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()));
                let tolerance = k as f64 * 2f64.powi(-24) * magnitude + 2f64.powi(-precision) * exact.abs();
                let g = f64::from(f32::from_bits(*g));
                if (g - exact).abs() > tolerance {
                    return Err(Failure::new(
                        format!("{qt} {lead:?}: out[{o}]"),
                        format!("{exact} within {tolerance}"),
                        g,
                    ));
                }
            }
        }
    }
    Ok(())
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

    /// The 4-bit codes of normalized values: NF4's tree, or FP4's.
    pub fn codes4(nf4: bool, normalized: &[f32]) -> Vec<u8> {
        let code = if nf4 { nf4_code } else { fp4_code };
        normalized.iter().map(|&v| code(v)).collect()
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
