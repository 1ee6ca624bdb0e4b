//! The `cuda` kernels: CUDA C++ that the cuda backend compiles with NVRTC
//! on first use. Each function takes its inputs' and outputs' pointers,
//! then the params words of [`crate::launch`] as `unsigned int`s. The
//! quantizers run a block of 64 threads per quantization block; the
//! dequantizers and the product a thread per output element (CUDA
//! addresses bytes, so neighbouring threads may write neighbouring u8 or
//! 16-bit elements). f16 converts with PTX `cvt` (round to nearest even),
//! bf16 in integer arithmetic, so no header is needed.
//!
//! `tests/nvrtc.rs` compiles every source with NVRTC.

use crate::call::op;
use crate::formats::{self, QuantType};
use crate::launch::{self, float_operand};
use anydev::extension::{Cuda, LaunchRule};
use std::sync::Arc;

/// Loads, stores, the block absmax and the 4-bit tables.
fn prelude() -> String {
    let bits = |values: &[f32]| {
        let words: Vec<String> = values.iter().map(|v| format!("0x{:08x}u", v.to_bits())).collect();
        words.join(", ")
    };
    let values: Vec<f32> = QuantType::ALL.iter().flat_map(|t| t.values()).collect();
    let codes: Vec<String> = formats::FP4_SORTED_CODES.iter().map(|c| format!("{c}u")).collect();
    format!(
        r#"
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

// The 4-bit values by code, NF4's then FP4's; the quantizers' thresholds.
__constant__ u32 VALUES[32] = {{{values}}};
__constant__ u32 NF4_MIDPOINTS[15] = {{{nf4}}};
__constant__ u32 FP4_THRESHOLDS[7] = {{{fp4}}};
__constant__ u32 FP4_SORTED_CODES[8] = {{{codes}}};

__device__ float load_x(const void* x, u32 i, u32 dtype) {{
    if (dtype == 0u) return ((const float*)x)[i];
    u16 h = ((const u16*)x)[i];
    if (dtype == 2u) return __uint_as_float(((u32)h) << 16);
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}}

__device__ void store(void* out, u32 i, u32 dtype, float v) {{
    if (dtype == 0u) {{
        ((float*)out)[i] = v;
        return;
    }}
    u16 h;
    if (dtype == 1u) {{
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    }} else {{
        u32 x = __float_as_uint(v);
        h = (x & 0x7fffffffu) > 0x7f800000u ? (u16)((x >> 16) | 0x40u) : (u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    }}
    ((u16*)out)[i] = h;
}}

// 1 / absmax, or 0 for a block of zeros.
__device__ float inverse(float absmax) {{
    return absmax > 0.0f ? 1.0f / absmax : 0.0f;
}}

// The largest |x| of elements start..end, over the block's 64 threads
// (every thread calls it).
__device__ float block_absmax(const void* x, u32 start, u32 end, u32 dtype) {{
    __shared__ float partial[64];
    float m = 0.0f;
    for (u32 i = start + threadIdx.x; i < end; i += 64u) m = fmaxf(m, fabsf(load_x(x, i, dtype)));
    partial[threadIdx.x] = m;
    __syncthreads();
    for (u32 s = 32u; s > 0u; s >>= 1) {{
        if (threadIdx.x < s) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
        __syncthreads();
    }}
    return partial[0];
}}

// NF4 counts the midpoints below x (bitsandbytes' tree, flattened); FP4
// ranks |x| and adds the sign.
__device__ u32 quantize4(float x, u32 quant_type) {{
    u32 rank = 0u;
    if (quant_type == 0u) {{
        for (u32 j = 0u; j < 15u; j++) rank += x > __uint_as_float(NF4_MIDPOINTS[j]) ? 1u : 0u;
        return rank;
    }}
    for (u32 j = 0u; j < 7u; j++) rank += fabsf(x) > __uint_as_float(FP4_THRESHOLDS[j]) ? 1u : 0u;
    return FP4_SORTED_CODES[rank] | (x < 0.0f ? {sign}u : 0u);
}}

__device__ float value4(const u8* packed, u32 i, u32 quant_type) {{
    u8 byte = packed[i >> 1];
    u32 code = (i & 1u) ? (byte & 0xfu) : (byte >> 4);
    return __uint_as_float(VALUES[quant_type * 16u + code]);
}}

#define PARAMS u32 n, u32 dtype, u32 bs, u32 quant_type, u32 rows_n, u32 k
"#,
        values = bits(&values),
        nf4 = bits(&formats::nf4_midpoints()),
        fp4 = bits(&formats::FP4_THRESHOLDS),
        codes = codes.join(", "),
        sign = formats::FP4_SIGN,
    )
}

const QUANTIZE_BLOCKWISE: &str = r#"
// bitsandbytes' dQuantize<0>: binary search, then the nearer neighbour.
__device__ u8 quantize_dynamic(const float* code, float x) {
    u32 pivot = 127u, lower_pivot = 0u, upper_pivot = 255u;
    float lower = -1.0f, upper = 1.0f;
    float val = code[pivot];
    for (u32 step = 64u; step > 0u; step >>= 1) {
        if (x > val) {
            lower_pivot = pivot;
            lower = val;
            pivot += step;
        } else {
            upper_pivot = pivot;
            upper = val;
            pivot -= step;
        }
        val = code[pivot];
    }
    if (upper_pivot == 255u) upper = code[255];
    if (lower_pivot == 0u) lower = code[0];
    if (x > val) return (u8)(x > (upper + val) * 0.5f ? upper_pivot : pivot);
    return (u8)(x < (lower + val) * 0.5f ? lower_pivot : pivot);
}

extern "C" __global__ void quantize_blockwise(const void* x, const float* code, u8* q, float* absmax, PARAMS) {
    u32 start = blockIdx.x * bs;
    u32 end = min(start + bs, n);
    float amax = block_absmax(x, start, end, dtype);
    if (start >= n) return;
    if (threadIdx.x == 0) absmax[blockIdx.x] = amax;
    float inv = inverse(amax);
    for (u32 i = start + threadIdx.x; i < end; i += 64u) q[i] = quantize_dynamic(code, load_x(x, i, dtype) * inv);
}
"#;

const QUANTIZE_4BIT: &str = r#"
extern "C" __global__ void quantize_4bit(const void* x, u8* packed, float* absmax, PARAMS) {
    u32 start = blockIdx.x * bs;
    u32 end = min(start + bs, n);
    float amax = block_absmax(x, start, end, dtype);
    if (start >= n) return;
    if (threadIdx.x == 0) absmax[blockIdx.x] = amax;
    float inv = inverse(amax);
    // The even element of each byte in its high nibble.
    for (u32 i = start + 2u * threadIdx.x; i < end; i += 128u) {
        u32 byte = quantize4(load_x(x, i, dtype) * inv, quant_type) << 4;
        if (i + 1u < end) byte |= quantize4(load_x(x, i + 1u, dtype) * inv, quant_type);
        packed[i >> 1] = (u8)byte;
    }
}
"#;

const DEQUANTIZE_BLOCKWISE: &str = r#"
extern "C" __global__ void dequantize_blockwise(const u8* q, const float* absmax, const float* code, void* out, PARAMS) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) store(out, i, dtype, code[q[i]] * absmax[i / bs]);
}
"#;

const DEQUANTIZE_4BIT: &str = r#"
extern "C" __global__ void dequantize_4bit(const u8* packed, const float* absmax, void* out, PARAMS) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) store(out, i, dtype, value4(packed, i, quant_type) * absmax[i / bs]);
}
"#;

const GEMV_4BIT: &str = r#"
// Output o = row r, column j: a[r, :] . w[j, :], accumulated in f32 in order.
extern "C" __global__ void gemv_4bit(const void* a, const u8* packed, const float* absmax, void* out, PARAMS) {
    u32 o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= n) return;
    u32 r = o / rows_n, j = o % rows_n;
    float sum = 0.0f;
    for (u32 i = 0u; i < k; i++) {
        u32 wi = j * k + i;
        sum += load_x(a, r * k + i, dtype) * (value4(packed, wi, quant_type) * absmax[wi / bs]);
    }
    store(out, o, dtype, sum);
}
"#;

/// The threads per block of the quantizers (one block per quantization
/// block) and of the others (one thread per output element).
const QUANTIZER_THREADS: u32 = 64;
const ELEMENT_THREADS: u32 = 256;

/// Each op's kernel: its function name and source.
pub fn sources() -> Vec<(&'static str, &'static str, String)> {
    let prelude = prelude();
    [
        (op::QUANTIZE_BLOCKWISE, "quantize_blockwise", QUANTIZE_BLOCKWISE),
        (op::QUANTIZE_4BIT, "quantize_4bit", QUANTIZE_4BIT),
        (op::DEQUANTIZE_BLOCKWISE, "dequantize_blockwise", DEQUANTIZE_BLOCKWISE),
        (op::DEQUANTIZE_4BIT, "dequantize_4bit", DEQUANTIZE_4BIT),
        (op::GEMV_4BIT, "gemv_4bit", GEMV_4BIT),
    ]
    .into_iter()
    .map(|(op, name, body)| (op, name, format!("{prelude}{body}")))
    .collect()
}

fn dims(x: usize, threads: u32) -> ([u32; 3], [u32; 3]) {
    ([x.max(1) as u32, 1, 1], [threads, 1, 1])
}

/// The launch of `op`: a block per quantization block for the
/// quantizers, a thread per output element for the others.
fn launch(op: &'static str) -> Arc<LaunchRule<([u32; 3], [u32; 3])>> {
    Arc::new(move |ins, outs, attrs| {
        if op == op::QUANTIZE_BLOCKWISE || op == op::QUANTIZE_4BIT {
            return Ok(dims(launch::quant_blocks(op, ins, attrs)?, QUANTIZER_THREADS));
        }
        let n = float_operand(op, ins, outs).size();
        Ok(dims(n.div_ceil(ELEMENT_THREADS as usize), ELEMENT_THREADS))
    })
}

/// Each op's CUDA kernel.
pub fn kernels() -> Vec<(&'static str, Cuda)> {
    sources()
        .into_iter()
        .map(|(op, name, source)| {
            let (grid, block) = (launch(op), launch(op));
            let kernel = Cuda {
                source,
                name: name.into(),
                grid: Arc::new(move |i, o, a| Ok(grid(i, o, a)?.0)),
                block: Arc::new(move |i, o, a| Ok(block(i, o, a)?.1)),
                params: launch::params(op),
            };
            (op, kernel)
        })
        .collect()
}
