//! Scalar semantics of the numeric ops, once per element type.
//!
//! Integers follow NumPy 2: arithmetic wraps; division and remainder by
//! zero give 0 (NumPy warns and gives 0 too); `remainder` takes the
//! divisor's sign and `floor_divide` floors; `pow` with a negative
//! exponent is `1/a^|b|` truncated toward zero, as in PyTorch: 1 for
//! `a = 1`, ±1 for `a = -1`, else 0 (NumPy raises, which a kernel cannot); shifts by a
//! negative amount or by at least the bit width give 0, or -1 for the
//! right shift of a negative value. Floats follow C99/NumPy: `remainder`
//! and `floor_divide` are NumPy's `divmod`, `round` is half-to-even.

use crate::element::{Compute, Element, Float, Storage};
use crate::pairwise;
use std::fmt::Debug;

/// Arithmetic shared by integers and floats.
pub(crate) trait Num: Element {
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn floor_div(a: Self, b: Self) -> Self;
    fn rem(a: Self, b: Self) -> Self;
    fn pow(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    fn sign(a: Self) -> Self;
    fn round(a: Self) -> Self;
    fn floor(a: Self) -> Self;
    fn ceil(a: Self) -> Self;
    fn trunc(a: Self) -> Self;
}

/// Integer-only ops.
pub(crate) trait Int: Num {
    fn shl(a: Self, b: Self) -> Self;
    fn shr(a: Self, b: Self) -> Self;
}

/// `maximum`, propagating NaN (`is_nan` is constant false for integers).
#[inline(always)]
pub(crate) fn maximum<T: Element>(a: T, b: T) -> T {
    if a.is_nan() || a >= b {
        a
    } else {
        b
    }
}

/// `minimum`, propagating NaN.
#[inline(always)]
pub(crate) fn minimum<T: Element>(a: T, b: T) -> T {
    if a.is_nan() || a <= b {
        a
    } else {
        b
    }
}

/// The order comparisons as functions (generic, so `bool` needs no
/// special spelling).
macro_rules! comparisons {
    ($($name:ident: $op:tt),*) => {$(
        #[inline(always)]
        pub(crate) fn $name<T: PartialOrd>(a: T, b: T) -> bool {
            a $op b
        }
    )*};
}
comparisons!(lt: <, le: <=, gt: >, ge: >=);

macro_rules! int_num {
    ($($t:ty, abs: $abs:expr;)*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn floor_div(a: Self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let q = a.wrapping_div(b);
                if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) { q.wrapping_sub(1) } else { q }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn rem(a: Self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let r = a.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) { r.wrapping_add(b) } else { r }
            }
            #[allow(unused_comparisons)]
            fn pow(a: Self, b: Self) -> Self {
                if b < 0 {
                    // 1/a^|b| truncated toward zero, as PyTorch gives:
                    // 1 for a = 1, ±1 for a = -1 by the exponent's parity,
                    // else 0.
                    let minus_one = (0 as $t).wrapping_sub(1);
                    return if a == 1 {
                        1
                    } else if a == minus_one {
                        if b & 1 == 1 { minus_one } else { 1 }
                    } else {
                        0
                    };
                }
                let (mut base, mut e, mut r) = (a, b as u64, 1 as $t);
                while e > 0 {
                    if e & 1 == 1 {
                        r = r.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                r
            }
            #[inline(always)]
            fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)]
            fn abs(a: Self) -> Self { $abs(a) }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn sign(a: Self) -> Self {
                if a > 0 { 1 } else if a < 0 { (0 as $t).wrapping_sub(1) } else { 0 }
            }
            #[inline(always)]
            fn round(a: Self) -> Self { a }
            #[inline(always)]
            fn floor(a: Self) -> Self { a }
            #[inline(always)]
            fn ceil(a: Self) -> Self { a }
            #[inline(always)]
            fn trunc(a: Self) -> Self { a }
        }

        impl Int for $t {
            #[inline(always)]
            fn shl(a: Self, b: Self) -> Self {
                let s = b.to_i128();
                if (0..<$t>::BITS as i128).contains(&s) { a << s as u32 } else { 0 }
            }
            #[inline(always)]
            fn shr(a: Self, b: Self) -> Self {
                let s = b.to_i128();
                if (0..<$t>::BITS as i128).contains(&s) {
                    a >> s as u32
                } else if a.sign_bit() {
                    !0
                } else {
                    0
                }
            }
        }
    )*};
}

int_num! {
    i8, abs: i8::wrapping_abs; i16, abs: i16::wrapping_abs;
    i32, abs: i32::wrapping_abs; i64, abs: i64::wrapping_abs;
    u8, abs: |a| a; u16, abs: |a| a; u32, abs: |a| a; u64, abs: |a| a;
}

/// Applies `f` in the compute type and rounds once to the storage type.
#[inline(always)]
pub(crate) fn lift1<T: Float>(a: T, f: impl Fn(T::C) -> T::C) -> T {
    T::down(f(a.up()))
}

/// Applies `f` in f64 and rounds to the storage type: for functions whose
/// f32 forms (glibc's `sinhf`, `coshf`, or ours in f32) miss by 2 ulps at
/// some inputs, where f64 and one rounding stay within 1.
#[inline(always)]
pub(crate) fn lift1_wide<T: Float>(a: T, f: impl Fn(f64) -> f64) -> T {
    T::down(T::C::of(f(a.up().wide())))
}

/// Two-argument form of [`lift1`].
#[inline(always)]
pub(crate) fn lift2<T: Float>(a: T, b: T, f: impl Fn(T::C, T::C) -> T::C) -> T {
    T::down(f(a.up(), b.up()))
}

/// NumPy's `npy_divmod`: (floor quotient, remainder with the divisor's sign).
#[inline(always)]
pub(crate) fn divmod<C: Compute>(a: C, b: C) -> (C, C) {
    let zero = C::zero();
    if b == zero {
        return (a / b, a % b);
    }
    let mut m = a % b;
    let mut div = (a - m) / b;
    if m != zero {
        if (b < zero) != (m < zero) {
            m = m + b;
            div = div - C::one();
        }
    } else {
        m = zero.copysign(b);
    }
    let q = if div != zero {
        let f = div.floor();
        if div - f > C::of(0.5) {
            f + C::one()
        } else {
            f
        }
    } else {
        zero.copysign(a / b)
    };
    (q, m)
}

/// `sign`: NaN stays NaN, zeros give +0.
#[inline(always)]
pub(crate) fn float_sign<C: Compute>(x: C) -> C {
    if x > C::zero() {
        C::one()
    } else if x < C::zero() {
        -C::one()
    } else if x == C::zero() {
        C::zero()
    } else {
        x
    }
}

/// NumPy's `logaddexp`: exact for equal arguments (including infinities).
#[inline(always)]
pub(crate) fn logaddexp<C: Compute>(x: C, y: C) -> C {
    if x == y {
        return x + C::of(std::f64::consts::LN_2);
    }
    let d = x - y;
    if d > C::zero() {
        x + (-d).exp().ln_1p()
    } else if d <= C::zero() {
        y + d.exp().ln_1p()
    } else {
        d
    }
}

macro_rules! float_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { lift2(a, b, |x, y| x + y) }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self { lift2(a, b, |x, y| x - y) }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { lift2(a, b, |x, y| x * y) }
            #[inline(always)]
            fn floor_div(a: Self, b: Self) -> Self { lift2(a, b, |x, y| divmod(x, y).0) }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self { lift2(a, b, |x, y| divmod(x, y).1) }
            #[inline(always)]
            fn pow(a: Self, b: Self) -> Self { lift2(a, b, |x, y| x.powf(y)) }
            #[inline(always)]
            fn neg(a: Self) -> Self { lift1(a, |x| -x) }
            #[inline(always)]
            fn abs(a: Self) -> Self { lift1(a, |x| x.abs()) }
            #[inline(always)]
            fn sign(a: Self) -> Self { lift1(a, float_sign) }
            #[inline(always)]
            fn round(a: Self) -> Self { lift1(a, |x| x.round_even()) }
            #[inline(always)]
            fn floor(a: Self) -> Self { lift1(a, |x| x.floor()) }
            #[inline(always)]
            fn ceil(a: Self) -> Self { lift1(a, |x| x.ceil()) }
            #[inline(always)]
            fn trunc(a: Self) -> Self { lift1(a, |x| x.trunc()) }
        }
    )*};
}

float_num!(f32, f64, half::f16, half::bf16);

/// Accumulation for sums, products and scans: integers wrap in their own
/// type, f32/f64 accumulate in themselves, f16/bf16 in f32 (rounded once
/// at the end).
pub(crate) trait Accum: Storage {
    type A: Copy + Send + Sync + Default + Debug;
    fn lift(self) -> Self::A;
    fn lower(a: Self::A) -> Self;
    fn acc_add(a: Self::A, b: Self::A) -> Self::A;
    fn acc_mul(a: Self::A, b: Self::A) -> Self::A;
    fn acc_one() -> Self::A;
    /// The sum of one block of [`crate::pairwise`] under instruction set
    /// `S`; f32 and f64 hold its lanes in vectors.
    #[inline(always)]
    fn block_sum<S: pulp::Simd>(simd: S, xs: &[Self]) -> Self::A {
        pairwise::scalar_lanes(simd, xs)
    }
}

macro_rules! accum {
    ($($t:ty => $a:ty, lift: $lift:expr, lower: $lower:expr, add: $add:expr, mul: $mul:expr $(, block: $block:path)?;)*) => {$(
        impl Accum for $t {
            $(
            #[inline(always)]
            fn block_sum<S: pulp::Simd>(simd: S, xs: &[Self]) -> $a { $block(simd, xs) }
            )?
            type A = $a;
            #[inline(always)]
            fn lift(self) -> $a { $lift(self) }
            #[inline(always)]
            fn lower(a: $a) -> Self { $lower(a) }
            #[inline(always)]
            fn acc_add(a: $a, b: $a) -> $a { $add(a, b) }
            #[inline(always)]
            fn acc_mul(a: $a, b: $a) -> $a { $mul(a, b) }
            #[inline(always)]
            fn acc_one() -> $a { 1 as $a }
        }
    )*};
}

macro_rules! accum_int {
    ($($t:ty),*) => {
        accum! {$($t => $t, lift: |x| x, lower: |a| a, add: <$t>::wrapping_add, mul: <$t>::wrapping_mul;)*}
    };
}

accum_int!(i8, i16, i32, i64, u8, u16, u32, u64);
accum! {
    f32 => f32, lift: |x| x, lower: |a| a, add: |a, b| a + b, mul: |a, b| a * b, block: pairwise::f32_lanes;
    f64 => f64, lift: |x| x, lower: |a| a, add: |a, b| a + b, mul: |a, b| a * b, block: pairwise::f64_lanes;
    half::f16 => f32, lift: half::f16::to_f32, lower: half::f16::from_f32, add: |a, b| a + b, mul: |a, b| a * b;
    half::bf16 => f32, lift: half::bf16::to_f32, lower: half::bf16::from_f32, add: |a, b| a + b, mul: |a, b| a * b;
}
