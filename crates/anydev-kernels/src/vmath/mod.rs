//! Elementary functions written for the vectoriser.
//!
//! The platform's `libm` is called one element at a time, so a loop over
//! `f32::exp` runs at the speed of a scalar call. The functions here are
//! branch-free range reductions and polynomials over plain arithmetic and
//! bit operations: inlined into the elementwise engine's dense rows, which
//! run under run-time CPU feature dispatch (`map.rs`), LLVM turns them
//! into SSE2, AVX2 or AVX-512 code. They use no fused multiply-add, so
//! every instruction set gives bit-identical results.
//!
//! f32 `exp` is evaluated in f32 with its one rounding-sensitive sum
//! kept exact; the other f32 functions are evaluated in f64 and rounded
//! once. Both stay within 1 ulp (almost always correctly rounded); f64
//! uses the fdlibm algorithms, whose error is below 1 ulp. The tests
//! compare both with std at scale, special values included.

mod exp;
mod log;

pub(crate) use exp::{exp_f32, exp_f64, expm1_f32, tanh_f32};
pub(crate) use log::{log1p_f32, log_f32, log_f64};

/// The vectorisable functions for each compute type (f16 and bf16
/// compute in f32). f64 `expm1`, `log1p` and `tanh` are still std's.
pub(crate) trait VMath: Copy {
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln_1p(self) -> Self;
    fn tanh(self) -> Self;
}

impl VMath for f32 {
    #[inline(always)]
    fn exp(self) -> Self {
        exp_f32(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        log_f32(self)
    }
    #[inline(always)]
    fn exp_m1(self) -> Self {
        expm1_f32(self)
    }
    #[inline(always)]
    fn ln_1p(self) -> Self {
        log1p_f32(self)
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        tanh_f32(self)
    }
}

impl VMath for f64 {
    #[inline(always)]
    fn exp(self) -> Self {
        exp_f64(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        log_f64(self)
    }
    fn exp_m1(self) -> Self {
        f64::exp_m1(self)
    }
    fn ln_1p(self) -> Self {
        f64::ln_1p(self)
    }
    fn tanh(self) -> Self {
        f64::tanh(self)
    }
}

/// `2^k` for `k` in the normal exponent range, built from its bits.
#[inline(always)]
fn pow2(k: i64) -> f64 {
    f64::from_bits((k.wrapping_add(1023) as u64) << 52)
}

/// [`pow2`] for f32.
#[inline(always)]
fn pow2_f32(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) as u32) << 23)
}

/// Rounds `x` to the nearest integer without a conversion instruction
/// (f64 to i64 has none before AVX-512): adding 1.5 * 2^52 leaves the
/// integer in the low mantissa bits. Valid for |x| < 2^51.
#[inline(always)]
fn round_int(x: f64) -> (f64, i64) {
    const SHIFT: f64 = 6755399441055744.0;
    let t = x + SHIFT;
    (t - SHIFT, (t.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64))
}

/// [`round_int`] in f32: adding 1.5 * 2^23. Valid for |x| < 2^22.
#[inline(always)]
fn round_int_f32(x: f32) -> (f32, i32) {
    const SHIFT: f32 = 12582912.0;
    let t = x + SHIFT;
    (t - SHIFT, (t.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32))
}

#[cfg(test)]
mod tests;
