//! The number formats, written from the published algorithms of
//! bitsandbytes (Dettmers et al., "8-bit Optimizers via Block-wise
//! Quantization", 2022, and "QLoRA: Efficient Finetuning of Quantized
//! LLMs", 2023) so that data quantized here and there agree code for code.
//!
//! Every kernel (host, WGSL, CUDA) takes its tables from this module, so
//! one definition serves every device.

use std::fmt;

/// The smallest block size: 64 elements, bitsandbytes' smallest for both
/// the 8-bit and the 4-bit formats.
pub const MIN_BLOCKSIZE: usize = 64;
/// The largest block size (bitsandbytes' largest).
pub const MAX_BLOCKSIZE: usize = 4096;

/// Why arguments do not describe valid quantized data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError(pub String);

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

/// `blocksize` as a block length: a power of two from 64 to 4096, the
/// sizes bitsandbytes' kernels accept (a block always spans whole bytes
/// and whole 32-bit words of packed 4-bit codes, which the GPU kernels
/// rely on).
pub fn check_blocksize(blocksize: i64) -> Result<usize, FormatError> {
    usize::try_from(blocksize)
        .ok()
        .filter(|b| b.is_power_of_two() && (MIN_BLOCKSIZE..=MAX_BLOCKSIZE).contains(b))
        .ok_or_else(|| {
            FormatError(format!(
                "blocksize {blocksize} is not a power of two from {MIN_BLOCKSIZE} to {MAX_BLOCKSIZE}"
            ))
        })
}

/// How many blocks of `blocksize` cover `n` elements (one absmax each).
pub fn blocks(n: usize, blocksize: usize) -> usize {
    n.div_ceil(blocksize)
}

/// The 4-bit data types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantType {
    /// NormalFloat4 (QLoRA): the 16 quantiles of a normal distribution,
    /// normalized to [-1, 1], with an exact zero.
    Nf4,
    /// bitsandbytes' FP4: a sign bit and an e2m1 magnitude (bias 3, one
    /// subnormal), scaled so that the largest magnitude is 1.
    Fp4,
}

impl QuantType {
    pub const ALL: [QuantType; 2] = [QuantType::Nf4, QuantType::Fp4];

    /// The name ops take as their `quant_type` attribute.
    pub fn name(self) -> &'static str {
        match self {
            QuantType::Nf4 => "nf4",
            QuantType::Fp4 => "fp4",
        }
    }

    /// Parses a `quant_type` attribute.
    pub fn parse(name: &str) -> Result<QuantType, FormatError> {
        QuantType::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| FormatError(format!("quant_type {name:?} is neither \"nf4\" nor \"fp4\"")))
    }

    /// The normalized value of each 4-bit code (code = index).
    pub fn values(self) -> [f32; 16] {
        match self {
            QuantType::Nf4 => NF4,
            QuantType::Fp4 => fp4_values(),
        }
    }

    /// The code of `x`, a value already divided by its block's absmax.
    pub fn quantize(self, x: f32) -> u8 {
        match self {
            QuantType::Nf4 => quantize_nf4(x),
            QuantType::Fp4 => quantize_fp4(x),
        }
    }
}

impl fmt::Display for QuantType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// NF4's values (QLoRA, appendix E; bitsandbytes' `dDequantizeNF4`), code
/// = index: the quantiles of N(0, 1) for 8 positive and 7 negative levels,
/// each side scaled to end at ±1, so that 0 is exact. Each is the same
/// f32 as bitsandbytes' literal (an f32 printed as f64), and all but one
/// are written digit for digit as bitsandbytes writes them: NF4[5] is
/// written -0.184_773_433_208_465_58 where bitsandbytes writes
/// -0.18477343022823334; both round to the same f32 (bits 0xbe3d353f),
/// and bitsandbytes' form is that f32 printed as f64.
#[allow(clippy::excessive_precision)]
pub const NF4: [f32; 16] = [
    -1.0,
    -0.696_192_800_998_687_7,
    -0.525_073_051_452_636_7,
    -0.394_917_488_098_144_53,
    -0.284_441_381_692_886_35,
    -0.184_773_433_208_465_58,
    -0.091_050_036_251_544_95,
    0.0,
    0.079_580_299_556_255_34,
    0.160_930_201_411_247_25,
    0.246_112_301_945_686_34,
    0.337_915_241_718_292_24,
    0.440_709_829_330_444_34,
    0.562_617_003_917_694_1,
    0.722_956_836_223_602_3,
    1.0,
];

/// The thresholds of bitsandbytes' NF4 decision tree (`dQuantizeNF4`):
/// the midpoints of neighbouring values, computed in f64 and rounded to
/// f32 as the tree's literals are. A value above threshold `j` has a code
/// above `j`.
pub fn nf4_midpoints() -> [f32; 15] {
    std::array::from_fn(|j| ((f64::from(NF4[j]) + f64::from(NF4[j + 1])) / 2.0) as f32)
}

/// The NF4 code of a normalized `x`: the nearest value, ties going down
/// (bitsandbytes' tree tests `x > midpoint`). Walking the sorted
/// thresholds and counting those below `x` is the same decision as the
/// binary tree; a NaN passes none and gets code 0, as in the tree.
pub fn quantize_nf4(x: f32) -> u8 {
    nf4_midpoints().iter().filter(|&&m| x > m).count() as u8
}

/// FP4's magnitudes by 3-bit code (bitsandbytes' `dDequantizeFP4Tree`):
/// e2m1 with bias 3 and a subnormal, i.e. {0, 0.0625, 8, 12, 4, 6, 2, 3}
/// divided by the largest, 12, as bitsandbytes' literals.
#[allow(clippy::excessive_precision)]
pub const FP4_MAGNITUDES: [f32; 8] = [
    0.0,
    5.208_333_333e-3,
    0.666_666_67,
    1.0,
    0.333_333_33,
    0.5,
    0.166_666_67,
    0.25,
];

/// The thresholds of bitsandbytes' FP4 tree (`dQuantizeFP4`) on |x|: the
/// midpoints of the sorted magnitudes, as the tree's literals (which give
/// the sixth, 7/12, as `0.583333`, six digits; kept so that codes agree
/// with bitsandbytes').
#[allow(clippy::excessive_precision)]
pub const FP4_THRESHOLDS: [f32; 7] = [
    0.002_604_17,
    0.085_937_5,
    0.208_333_33,
    0.291_666_67,
    0.416_666_7,
    0.583_333,
    0.833_333_3,
];

/// The 3-bit code of each magnitude in ascending order (the tree's
/// leaves from left to right).
pub const FP4_SORTED_CODES: [u8; 8] = [0b000, 0b001, 0b110, 0b111, 0b100, 0b101, 0b010, 0b011];

/// Bit 3 of an FP4 code: the sign.
pub const FP4_SIGN: u8 = 0b1000;

/// FP4's value by 4-bit code: the magnitude, negated when the sign bit is
/// set (so code 0b1000 is -0.0, as bitsandbytes' `0 * absmax * -1`).
pub fn fp4_values() -> [f32; 16] {
    std::array::from_fn(|c| {
        let m = FP4_MAGNITUDES[c & 7];
        if c as u8 & FP4_SIGN != 0 {
            -m
        } else {
            m
        }
    })
}

/// The FP4 code of a normalized `x`: sign bit for `x < 0` (not for -0.0),
/// then the magnitude by the thresholds on |x| (above a threshold goes
/// up), as bitsandbytes' tree decides.
pub fn quantize_fp4(x: f32) -> u8 {
    let rank = FP4_THRESHOLDS.iter().filter(|&&t| x.abs() > t).count();
    FP4_SORTED_CODES[rank] | if x < 0.0 { FP4_SIGN } else { 0 }
}

/// PyTorch's `linspace(start, end, steps)` in f32 on the CPU: the first
/// half stepped up from `start`, the second down from `end`, so both ends
/// are exact.
fn linspace_f32(start: f32, end: f32, steps: usize) -> Vec<f32> {
    let step = (end - start) / (steps - 1) as f32;
    let half = steps / 2;
    (0..steps)
        .map(|i| {
            if i < half {
                start + step * i as f32
            } else {
                end - step * (steps - 1 - i) as f32
            }
        })
        .collect()
}

/// The 8-bit dynamic map: bitsandbytes'
/// `create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8)`.
/// For exponent `i` in 0..7 the means of `2^i + 1` boundaries spaced
/// evenly over [0.1, 1] (so `2^i` fraction values), scaled by
/// `10^(i - 6)`, with their negatives; plus 0 and 1; sorted. Computed in
/// f32 as bitsandbytes computes it with PyTorch: 256 values from
/// -0.99296875 (the largest mean, negated) to 1, the smallest positive
/// `1e-6 * 0.55`.
pub fn dynamic_map() -> [f32; 256] {
    const SCALES: [f64; 7] = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0];
    let mut values = Vec::with_capacity(256);
    for (i, scale) in SCALES.iter().enumerate() {
        let boundaries = linspace_f32(0.1, 1.0, (1 << i) + 1);
        let scale = *scale as f32;
        for pair in boundaries.windows(2) {
            let mean = (pair[0] + pair[1]) / 2.0;
            values.push(scale * mean);
            values.push(-(scale * mean));
        }
    }
    values.extend([0.0, 1.0]);
    values.sort_by(f32::total_cmp);
    values.try_into().expect("127 means, their negatives, 0 and 1")
}

/// The 8-bit code of a normalized `x` under `code` (256 sorted values):
/// bitsandbytes' `dQuantize<0>`, a binary search from the middle that
/// keeps the values on either side, then picks the nearer neighbour by
/// the midpoint (a value above the upper midpoint goes up, one below the
/// lower goes down).
pub fn quantize_dynamic(code: &[f32; 256], x: f32) -> u8 {
    let (mut pivot, mut lower_pivot, mut upper_pivot) = (127usize, 0usize, 255usize);
    let (mut lower, mut upper) = (-1.0f32, 1.0f32);
    let mut val = code[pivot];
    let mut step = 64;
    while step > 0 {
        if x > val {
            lower_pivot = pivot;
            lower = val;
            pivot += step;
        } else {
            upper_pivot = pivot;
            upper = val;
            pivot -= step;
        }
        val = code[pivot];
        step /= 2;
    }
    if upper_pivot == 255 {
        upper = code[255];
    }
    if lower_pivot == 0 {
        lower = code[0];
    }
    let chosen = if x > val {
        if x > (upper + val) * 0.5 {
            upper_pivot
        } else {
            pivot
        }
    } else if x < (lower + val) * 0.5 {
        lower_pivot
    } else {
        pivot
    };
    chosen as u8
}

/// The factor that normalizes a block: `1 / absmax`, or 0 for a block of
/// zeros (whose values then all quantize as 0).
pub fn inverse(absmax: f32) -> f32 {
    if absmax > 0.0 {
        1.0 / absmax
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_map_is_bitsandbytes() {
        let map = dynamic_map();
        assert!(map.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
        // -1 is not a value: the negative side ends at the largest mean,
        // (1 - 0.9 / 64 + 1) / 2.
        let step = 0.9f32 / 64.0;
        let largest_mean = (1.0 - step + 1.0) / 2.0;
        assert_eq!((map[0], map[254], map[255]), (-largest_mean, largest_mean, 1.0));
        assert_eq!(largest_mean, 0.992_968_75);
        // The smallest magnitude: 1e-6 times the mean of linspace(0.1, 1, 2).
        // 127 negative means, 0, 127 positive means, 1.
        assert_eq!(map[127], 0.0);
        assert_eq!(map[128], 1e-6f32 * 0.55f32);
        assert_eq!(map[126], -(1e-6f32 * 0.55f32));
    }

    #[test]
    fn four_bit_tables_are_consistent() {
        let nf4 = nf4_midpoints();
        assert!(nf4.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(nf4[7], 0.039_790_15);
        let mut sorted: Vec<f32> = FP4_SORTED_CODES.iter().map(|&c| FP4_MAGNITUDES[c as usize]).collect();
        assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        sorted.dedup();
        for (t, pair) in FP4_THRESHOLDS.iter().zip(sorted.windows(2)) {
            assert!((t - (pair[0] + pair[1]) / 2.0).abs() < 1e-6, "{t} between {pair:?}");
        }
        assert_eq!(fp4_values()[8].to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn blocksizes() {
        for ok in [64, 128, 4096] {
            assert_eq!(check_blocksize(ok), Ok(ok as usize));
        }
        for bad in [-64, 0, 32, 96, 8192] {
            assert!(check_blocksize(bad).is_err(), "{bad}");
        }
    }
}
