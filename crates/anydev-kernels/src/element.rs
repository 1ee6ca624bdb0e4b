//! Rust element types behind each [`DType`] and the per-type arithmetic
//! the kernels are generic over.
//!
//! Every kernel family is written once against these traits; the
//! dispatch macros pick the concrete type. The semantics chosen here are
//! NumPy 2's: integers wrap, integer division by zero gives 0, float
//! half-precision types compute in f32 and round once.

use anydev_ops::{bf16_from_f64, f16_from_f64, DType, Scalar};
use half::{bf16, f16};
use std::fmt::Debug;

/// Any storage element type, complex included: what the elementwise
/// engine, the reduction driver and the byte movers need.
pub(crate) trait Storage: Copy + Default + PartialEq + Send + Sync + Debug + 'static {
    const DTYPE: DType;
    /// The value of a scalar of this dtype, `None` for another dtype.
    fn from_scalar(s: Scalar) -> Option<Self>;
}

/// One real (ordered) storage element type.
pub(crate) trait Element: Storage + PartialOrd {
    const IS_FLOAT: bool;
    /// The least and greatest values (infinities for floats): the
    /// identities of `max` and `min`.
    const LOWEST: Self;
    const HIGHEST: Self;
    /// Exact value of a bool or integer (floats: truncated, saturated).
    fn to_i128(self) -> i128;
    fn to_f64(self) -> f64;
    /// Integer to this type: integers wrap, floats round, bool is `!= 0`.
    fn from_i128(v: i128) -> Self;
    /// Float to this type: integers truncate toward zero and saturate
    /// (NaN gives 0), floats round to nearest, bool is `!= 0`.
    fn from_f64(v: f64) -> Self;
    fn is_nan(self) -> bool {
        false
    }
    fn is_inf(self) -> bool {
        false
    }
    fn sign_bit(self) -> bool {
        false
    }
}

/// `astype` for one element: the source's exact value (integer or f64)
/// converted with the target's rules. `IS_FLOAT` is a constant, so each
/// instantiation keeps one branch.
#[inline(always)]
pub(crate) fn cast<S: Element, D: Element>(x: S) -> D {
    if S::IS_FLOAT {
        D::from_f64(x.to_f64())
    } else {
        D::from_i128(x.to_i128())
    }
}

impl Storage for bool {
    const DTYPE: DType = DType::Bool;
    fn from_scalar(s: Scalar) -> Option<Self> {
        match s {
            Scalar::Bool(v) => Some(v),
            _ => None,
        }
    }
}

impl Element for bool {
    const IS_FLOAT: bool = false;
    const LOWEST: Self = false;
    const HIGHEST: Self = true;
    #[inline(always)]
    fn to_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn from_i128(v: i128) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}

macro_rules! int_element {
    ($($t:ty => $d:ident, $signed:expr;)*) => {$(
        impl Storage for $t {
            const DTYPE: DType = DType::$d;
            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::$d(v) => Some(v),
                    _ => None,
                }
            }
        }

        impl Element for $t {
            const IS_FLOAT: bool = false;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn sign_bit(self) -> bool {
                $signed && self.to_i128() < 0
            }
        }
    )*};
}

int_element! {
    i8 => I8, true; i16 => I16, true; i32 => I32, true; i64 => I64, true;
    u8 => U8, false; u16 => U16, false; u32 => U32, false; u64 => U64, false;
}

/// Float element types: `C` is the type arithmetic runs in (f32 for the
/// 16-bit formats, so compound expressions round once).
pub(crate) trait Float: Element {
    type C: Compute;
    fn up(self) -> Self::C;
    fn down(c: Self::C) -> Self;
    /// The next representable value of this storage type toward `to`.
    fn next_after(self, to: Self) -> Self;
}

/// Arithmetic type of floats: num-traits' `Float` plus what it lacks.
pub(crate) trait Compute: num_traits::Float + Send + Sync + Debug + 'static {
    fn round_even(self) -> Self;
    fn of(v: f64) -> Self;
    /// The same value as an f64 (exact).
    fn wide(self) -> f64;
}

impl Compute for f32 {
    #[inline(always)]
    fn round_even(self) -> Self {
        self.round_ties_even()
    }
    #[inline(always)]
    fn of(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Compute for f64 {
    #[inline(always)]
    fn round_even(self) -> Self {
        self.round_ties_even()
    }
    #[inline(always)]
    fn of(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// `nextafter` on the bit pattern of a storage type: the ordering of
/// IEEE values matches the ordering of their magnitudes' bit patterns.
macro_rules! next_after_bits {
    ($x:expr, $to:expr, $bits:ty, $to_bits:expr, $from_bits:expr) => {{
        let (x, to) = ($x, $to);
        if x.is_nan() {
            return x;
        }
        if to.is_nan() || x == to {
            return to;
        }
        let sign: $bits = 1 << (<$bits>::BITS - 1);
        let bx = $to_bits(x);
        if bx & !sign == 0 {
            // From a zero, the smallest subnormal with the target's sign.
            return $from_bits(($to_bits(to) & sign) | 1);
        }
        let away = (x < to) == (bx & sign == 0);
        $from_bits(if away { bx + 1 } else { bx - 1 })
    }};
}

macro_rules! float_element {
    ($($t:ident => $d:ident, $c:ty, $bits:ty, up: $up:expr, down: $down:expr, from_f: $ff:expr, from_i: $fi:expr;)*) => {$(
        impl Storage for $t {
            const DTYPE: DType = DType::$d;
            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::$d(v) => Some(v),
                    _ => None,
                }
            }
        }

        impl Element for $t {
            const IS_FLOAT: bool = true;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self.to_f64() as i128
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                $fi(v)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                $ff(v)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn is_inf(self) -> bool {
                self.is_infinite()
            }
            #[inline(always)]
            fn sign_bit(self) -> bool {
                self.is_sign_negative()
            }
        }

        impl Float for $t {
            type C = $c;
            #[inline(always)]
            fn up(self) -> $c {
                $up(self)
            }
            #[inline(always)]
            fn down(c: $c) -> Self {
                $down(c)
            }
            fn next_after(self, to: Self) -> Self {
                next_after_bits!(self, to, $bits, $t::to_bits, $t::from_bits)
            }
        }
    )*};
}

float_element! {
    f32 => F32, f32, u32, up: |x| x, down: |c| c, from_f: |v: f64| v as f32, from_i: |v: i128| v as f32;
    f64 => F64, f64, u64, up: |x| x, down: |c| c, from_f: |v: f64| v, from_i: |v: i128| v as f64;
    f16 => F16, f32, u16, up: f16::to_f32, down: f16::from_f32, from_f: f16_from_f64, from_i: |v: i128| f16::from_f32(v as f32);
    bf16 => BF16, f32, u16, up: bf16::to_f32, down: bf16::from_f32, from_f: bf16_from_f64, from_i: |v: i128| bf16_from_f64(v as f64);
}
