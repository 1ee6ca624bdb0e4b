//! Complex kernels: c64 (`Complex32`) and c128 (`Complex64`).
//!
//! Complex numbers have no order, so they sit outside the real
//! [`Element`] family: they are [`Storage`] (what the elementwise engine,
//! the reduction driver and the byte movers need) and [`Cplx`] here.
//! Every function computes in f64 ([`math`], Annex G special values) and
//! rounds each component once; c64 is thus at least as accurate as
//! NumPy's f32 evaluation. Sums, products and scans accumulate in c128.

mod math;
mod ops;

pub(crate) use ops::{binary, cast, reduce, scan, unary};

use crate::arith::Accum;
use crate::element::{Element, Storage};
use anydev_ops::{DType, Scalar};
use num_complex::{Complex32, Complex64};

/// A complex storage type and its real component type.
pub(crate) trait Cplx: Storage + Accum {
    type R: Element;
    fn up(self) -> Complex64;
    fn down(z: Complex64) -> Self;
    fn from_parts(re: Self::R, im: Self::R) -> Self;
    fn re(self) -> Self::R;
    fn im(self) -> Self::R;
}

impl Storage for Complex32 {
    const DTYPE: DType = DType::C64;
    fn from_scalar(s: Scalar) -> Option<Self> {
        match s {
            Scalar::C64(v) => Some(v),
            _ => None,
        }
    }
}

impl Storage for Complex64 {
    const DTYPE: DType = DType::C128;
    fn from_scalar(s: Scalar) -> Option<Self> {
        match s {
            Scalar::C128(v) => Some(v),
            _ => None,
        }
    }
}

impl Cplx for Complex32 {
    type R = f32;
    #[inline(always)]
    fn up(self) -> Complex64 {
        Complex64::new(self.re as f64, self.im as f64)
    }
    #[inline(always)]
    fn down(z: Complex64) -> Self {
        Complex32::new(z.re as f32, z.im as f32)
    }
    #[inline(always)]
    fn from_parts(re: f32, im: f32) -> Self {
        Complex32::new(re, im)
    }
    #[inline(always)]
    fn re(self) -> f32 {
        self.re
    }
    #[inline(always)]
    fn im(self) -> f32 {
        self.im
    }
}

impl Cplx for Complex64 {
    type R = f64;
    #[inline(always)]
    fn up(self) -> Complex64 {
        self
    }
    #[inline(always)]
    fn down(z: Complex64) -> Self {
        z
    }
    #[inline(always)]
    fn from_parts(re: f64, im: f64) -> Self {
        Complex64::new(re, im)
    }
    #[inline(always)]
    fn re(self) -> f64 {
        self.re
    }
    #[inline(always)]
    fn im(self) -> f64 {
        self.im
    }
}

macro_rules! accum_complex {
    ($($t:ty),*) => {$(
        impl Accum for $t {
            type A = Complex64;
            #[inline(always)]
            fn lift(self) -> Complex64 {
                self.up()
            }
            #[inline(always)]
            fn lower(a: Complex64) -> Self {
                <$t>::down(a)
            }
            #[inline(always)]
            fn acc_add(a: Complex64, b: Complex64) -> Complex64 {
                a + b
            }
            #[inline(always)]
            fn acc_mul(a: Complex64, b: Complex64) -> Complex64 {
                math::mul(a, b)
            }
            fn acc_one() -> Complex64 {
                Complex64::new(1.0, 0.0)
            }
        }
    )*};
}

accum_complex!(Complex32, Complex64);
