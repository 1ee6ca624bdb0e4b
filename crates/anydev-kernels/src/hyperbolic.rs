//! Inverse hyperbolic functions without intermediate overflow.
//!
//! The standard library's `asinh` and `acosh` form `x + sqrt(x^2 ± 1)`,
//! which overflows to infinity for `|x|` above half the largest finite
//! value although the result (about 89.4 for f32, 710.5 for f64) is
//! small. These use the classic three-range formulations (as in fdlibm):
//! `ln(2) + ln|x|` once `1/x^2` no longer changes the result, a form that
//! keeps `2|x|` in range above 2, and `ln_1p` near the origin (asinh) or
//! near 1 (acosh), where a plain logarithm would lose the small argument.
//! `atanh` is computed on `|x|`: the standard library's
//! `0.5 * ln_1p(2x / (1 - x))` rounds `1 - x` away for negative `x` near -1
//! (363,409 f32 ulps off there).

use num_traits::Float;

/// Above this, `sqrt(x^2 ± 1) = |x|` to well within the precision of
/// f64, so `ln(x + sqrt(x^2 ± 1)) = ln(2) + ln(x)`.
const LARGE: f64 = (1u64 << 28) as f64;

fn large<C: Float>() -> C {
    C::from(LARGE).expect("2^28 fits every float type")
}

fn ln_2<C: Float>() -> C {
    C::from(std::f64::consts::LN_2).expect("ln 2 fits every float type")
}

/// `asinh(x)`, odd, exact for signed zeros, infinite only for infinite `x`.
pub(crate) fn asinh<C: Float>(x: C) -> C {
    let (one, two) = (C::one(), C::one() + C::one());
    let a = x.abs();
    let r = if a > large() {
        a.ln() + ln_2()
    } else if a > two {
        (two * a + one / ((a * a + one).sqrt() + a)).ln()
    } else {
        let a2 = a * a;
        (a + a2 / (one + (one + a2).sqrt())).ln_1p()
    };
    // copysign keeps asinh(-0) = -0; NaN passes through every branch.
    r.copysign(x)
}

/// `acosh(x)`: NaN below 1, 0 at 1, infinite only for infinite `x`.
pub(crate) fn acosh<C: Float>(x: C) -> C {
    let (one, two) = (C::one(), C::one() + C::one());
    if x < one {
        C::nan()
    } else if x > large() {
        x.ln() + ln_2()
    } else if x > two {
        (two * x - one / (x + (x * x - one).sqrt())).ln()
    } else {
        let t = x - one;
        (t + (two * t + t * t).sqrt()).ln_1p()
    }
}

/// `atanh(x)`, odd, as fdlibm computes it: `ln_1p(2a + 2a²/(1 - a)) / 2`
/// on `a = |x|` below 1/2 (the correction to `2a` is small, so the
/// rounding of the quotient hardly shows), `ln_1p(2a / (1 - a)) / 2`
/// above. ±1 give ±inf, `|x| > 1` and NaN give NaN.
pub(crate) fn atanh<C: Float>(x: C) -> C {
    let (one, two) = (C::one(), C::one() + C::one());
    let half = one / two;
    let a = x.abs();
    let t = a + a;
    let r = if a < half {
        half * (t + t * a / (one - a)).ln_1p()
    } else {
        half * (t / (one - a)).ln_1p()
    };
    r.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::{acosh, asinh, atanh};

    /// Relative error against a reference taken in f64 (for f32) or from
    /// the identity `asinh(x) = ln(2x)` where `1/x^2` is below f64's ulp.
    fn rel(got: f64, want: f64) -> f64 {
        ((got - want) / want).abs()
    }

    #[test]
    fn largest_finite_values_stay_finite() {
        let want = (f32::MAX as f64).asinh();
        assert!(rel(asinh(f32::MAX) as f64, want) < 2e-7, "{}", asinh(f32::MAX));
        assert!(rel(acosh(f32::MAX) as f64, (f32::MAX as f64).acosh()) < 2e-7);
        assert_eq!(asinh(-f32::MAX), -asinh(f32::MAX));
        let want = f64::MAX.ln() + std::f64::consts::LN_2;
        assert!(rel(asinh(f64::MAX), want) < 4e-16);
        assert!(rel(acosh(f64::MAX), want) < 4e-16);
    }

    #[test]
    fn agree_with_the_f64_functions_where_those_do_not_overflow() {
        let points = [1e-30, 1e-8, 0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 10.0, 1e4, 3e8, 1e20, 1e300];
        for &x in &points {
            assert!(rel(asinh(x), x.asinh()) < 4e-16, "asinh({x})");
            if x > 1.0 {
                assert!(rel(acosh(x), x.acosh()) < 4e-16, "acosh({x})");
            }
            let xf = x as f32;
            if xf.is_finite() {
                assert!(rel(asinh(xf) as f64, (xf as f64).asinh()) < 2e-7, "asinh({x}f32)");
                if xf > 1.0 {
                    assert!(rel(acosh(xf) as f64, (xf as f64).acosh()) < 2e-7, "acosh({x}f32)");
                }
            }
        }
        // Near 1, acosh(1 + t) ~ sqrt(2t): a plain logarithm of
        // x + sqrt(x^2 - 1) would lose most digits.
        let x = 1.0 + 2f64.powi(-40);
        assert!(rel(acosh(x), (2.0 * 2f64.powi(-40)).sqrt()) < 1e-12);
    }

    #[test]
    fn special_values() {
        assert!(asinh(-0.0f64).is_sign_negative() && asinh(-0.0f64) == 0.0);
        assert_eq!(asinh(f64::INFINITY), f64::INFINITY);
        assert_eq!(asinh(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(asinh(f64::NAN).is_nan());
        assert_eq!(acosh(1.0f32), 0.0);
        assert_eq!(acosh(f32::INFINITY), f32::INFINITY);
        assert!(acosh(0.5f64).is_nan() && acosh(-3.0f64).is_nan() && acosh(f64::NAN).is_nan());
        assert!(atanh(-0.0f32).is_sign_negative() && atanh(-0.0f32) == 0.0);
        assert_eq!(atanh(1.0f32), f32::INFINITY);
        assert_eq!(atanh(-1.0f64), f64::NEG_INFINITY);
        assert!(atanh(1.5f32).is_nan() && atanh(-1.5f64).is_nan() && atanh(f32::NAN).is_nan());
    }

    /// Near -1 the old formula lost `1 + x`: atanh(-1 + 2^-24) in f32 must
    /// agree with the f64 function of the same input, and be odd.
    #[test]
    fn atanh_is_accurate_near_both_ends_and_odd() {
        for x in [1e-30f32, 1e-8, 0.1, 0.4999, 0.5, 0.75, 0.9, 1.0 - 2f32.powi(-24)] {
            for x in [x, -x] {
                let want = (x as f64).atanh();
                assert!(
                    rel(atanh(x) as f64, want) < 1.2e-7,
                    "atanh({x}): {} vs {want}",
                    atanh(x)
                );
                assert_eq!(atanh(-x), -atanh(x));
            }
        }
    }
}
