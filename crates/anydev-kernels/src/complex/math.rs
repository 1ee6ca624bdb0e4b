//! Complex elementary functions in f64, with the special values of C99
//! Annex G (infinities and NaNs in either component, signed zeros, branch
//! cuts on the axes with the side chosen by the sign of zero).
//!
//! Finite arguments use formulas that stay accurate near branch points:
//! Kahan's for the inverse trigonometric functions ("Branch cuts for
//! complex elementary functions", 1987), and a scaled form of `exp`,
//! `cosh` and `sinh` whose result is finite although `exp(|x|)` is not.
//! Each function's non-finite arguments are sorted out first, from its
//! table in Annex G; the trigonometric functions follow from the
//! hyperbolic ones as Annex G defines them (`sin(z) = -i sinh(iz)`).

use num_complex::Complex64 as C;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, LN_2, LOG10_E, LOG2_E, PI};

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

#[inline(always)]
fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

/// `i z`.
#[inline(always)]
fn times_i(z: C) -> C {
    c(-z.im, z.re)
}

/// `-i z`.
#[inline(always)]
fn times_minus_i(z: C) -> C {
    c(z.im, -z.re)
}

/// `exp(ax) * m` for `ax` large enough that `exp(ax)` alone may overflow
/// while the product does not.
#[inline]
fn scaled_exp(ax: f64, m: f64) -> f64 {
    if ax < 709.0 {
        ax.exp() * m
    } else {
        let h = (ax * 0.5).exp();
        (m * h) * h
    }
}

/// `|z|` without intermediate overflow.
pub(crate) fn abs(z: C) -> f64 {
    z.re.hypot(z.im)
}

pub(crate) fn mul(a: C, b: C) -> C {
    c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// `a * b` as C99's `_Complex` multiplication (Annex G.5.1): where the
/// plain formula gives NaN in both parts but an operand is infinite, or a
/// partial product overflowed, the result is an infinity. `pow` needs it:
/// NumPy's `a ** b` is C's `cpow`, `cexp(b * clog(a))`, and
/// `(inf + inf i) * (pi/2) i` is `-inf + inf i` there, not NaN.
pub(crate) fn mul_annex_g(a: C, b: C) -> C {
    let p = mul(a, b);
    if !(p.re.is_nan() && p.im.is_nan()) {
        return p;
    }
    let (mut x, mut y, mut u, mut v) = (a.re, a.im, b.re, b.im);
    // An infinity becomes ±1 and its partner ±0; a NaN beside the other
    // operand's infinity becomes ±0.
    let unit = |t: f64| 1f64.copysign(t) * f64::from(u8::from(t.is_infinite()));
    let zero_nan = |t: f64| if t.is_nan() { 0f64.copysign(t) } else { t };
    let mut recompute = false;
    if x.is_infinite() || y.is_infinite() {
        (x, y, u, v) = (unit(x), unit(y), zero_nan(u), zero_nan(v));
        recompute = true;
    }
    if u.is_infinite() || v.is_infinite() {
        (u, v, x, y) = (unit(u), unit(v), zero_nan(x), zero_nan(y));
        recompute = true;
    }
    let overflowed = [x * u, y * v, x * v, y * u].iter().any(|t| t.is_infinite());
    if !recompute && overflowed {
        (x, y, u, v) = (zero_nan(x), zero_nan(y), zero_nan(u), zero_nan(v));
        recompute = true;
    }
    if !recompute {
        return p;
    }
    c(f64::INFINITY * (x * u - y * v), f64::INFINITY * (x * v + y * u))
}

/// `a / b` by Smith's algorithm as NumPy implements it (a zero divisor
/// gives infinities or NaNs component-wise).
pub(crate) fn div(a: C, b: C) -> C {
    let (ar, ai, br, bi) = (a.re, a.im, b.re, b.im);
    if br.abs() >= bi.abs() {
        if br == 0.0 && bi == 0.0 {
            return c(ar / br.abs(), ai / br.abs());
        }
        let rat = bi / br;
        let scl = 1.0 / (br + bi * rat);
        c((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    } else {
        let rat = br / bi;
        let scl = 1.0 / (bi + br * rat);
        c((ar * rat + ai) * scl, (ai * rat - ar) * scl)
    }
}

/// `1 / z`, NumPy's form of Smith's algorithm (`1 / 0` is NaN + NaN i).
pub(crate) fn reciprocal(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y.abs() <= x.abs() {
        let r = y / x;
        let d = x + y * r;
        c(1.0 / d, -r / d)
    } else {
        let r = x / y;
        let d = y + x * r;
        c(r / d, -1.0 / d)
    }
}

/// `z / |z|`; 0 for 0; NaN when a component is NaN or both are infinite;
/// `+-1` or `+-i` beside a single infinity.
pub(crate) fn sign(z: C) -> C {
    let (x, y) = (z.re, z.im);
    // The Array API's order: a NaN component decides, even beside an
    // infinity (NumPy lets the infinity decide).
    if x.is_nan() || y.is_nan() || (x.is_infinite() && y.is_infinite()) {
        return c(NAN, NAN);
    }
    if x.is_infinite() {
        return c(x.signum(), 0.0);
    }
    if y.is_infinite() {
        return c(0.0, y.signum());
    }
    let m = abs(z);
    if m == 0.0 {
        return c(0.0, 0.0);
    }
    // Scaled first so that `m` cannot overflow or underflow the quotient.
    let s = x.abs().max(y.abs());
    let (xs, ys) = (x / s, y / s);
    let ms = xs.hypot(ys);
    c(xs / ms, ys / ms)
}

/// Each component rounded half to even.
pub(crate) fn round(z: C) -> C {
    c(z.re.round_ties_even(), z.im.round_ties_even())
}

pub(crate) fn square(z: C) -> C {
    mul(z, z)
}

/// Principal square root (G.6.4.2), branch cut on the negative real axis.
pub(crate) fn sqrt(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return c(INF, y);
    }
    if x.is_nan() {
        return c(x, NAN);
    }
    if y.is_nan() {
        return if x == INF {
            c(x, y)
        } else if x == -INF {
            c(NAN, INF)
        } else {
            c(NAN, NAN)
        };
    }
    if x.is_infinite() {
        return if x > 0.0 {
            c(x, 0.0f64.copysign(y))
        } else {
            c(0.0, INF.copysign(y))
        };
    }
    if x == 0.0 && y == 0.0 {
        return c(0.0, y);
    }
    let m = x.abs().max(y.abs());
    let (x, y, k) = if m > 1e300 {
        (x * 0.25, y * 0.25, 2.0)
    } else if m < 1e-300 {
        (x * 2f64.powi(600), y * 2f64.powi(600), 2f64.powi(-300))
    } else {
        (x, y, 1.0)
    };
    let h = x.hypot(y);
    if x >= 0.0 {
        let t = ((x + h) * 0.5).sqrt();
        c(t * k, y / (2.0 * t) * k)
    } else {
        let t = ((h - x) * 0.5).sqrt();
        c(y.abs() / (2.0 * t) * k, t.copysign(y) * k)
    }
}

/// `e^z` (G.6.3.1).
pub(crate) fn exp(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return c(x, if y == 0.0 { y } else { NAN });
    }
    if x.is_infinite() {
        if !y.is_finite() {
            return if x > 0.0 {
                c(INF, NAN)
            } else {
                c(0.0, 0.0f64.copysign(y))
            };
        }
        if y == 0.0 {
            return c(if x > 0.0 { INF } else { 0.0 }, y);
        }
        let m = if x > 0.0 { INF } else { 0.0 };
        return c(m * y.cos(), m * y.sin());
    }
    if !y.is_finite() {
        return c(NAN, NAN);
    }
    if y == 0.0 {
        return c(x.exp(), y);
    }
    if x > 700.0 {
        return c(scaled_exp(x, y.cos()), scaled_exp(x, y.sin()));
    }
    let e = x.exp();
    c(e * y.cos(), e * y.sin())
}

/// `e^z - 1`, accurate near 0. Non-finite arguments give `exp(z) - 1`.
pub(crate) fn expm1(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if !(x.is_finite() && y.is_finite()) {
        let e = exp(z);
        return c(e.re - 1.0, e.im);
    }
    if x > 700.0 {
        let e = exp(z);
        return c(e.re - 1.0, e.im);
    }
    let s = (y * 0.5).sin();
    c(
        x.exp_m1() * y.cos() - 2.0 * s * s,
        if y == 0.0 { y } else { x.exp() * y.sin() },
    )
}

/// Natural logarithm (G.6.3.2), branch cut on the negative real axis.
pub(crate) fn log(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let h = x.hypot(y);
    let re = if h > 0.5 && h < 2.0 {
        0.5 * ((x - 1.0) * (x + 1.0) + y * y).ln_1p()
    } else {
        h.ln()
    };
    c(re, y.atan2(x))
}

/// `log(1 + z)`, accurate near 0.
pub(crate) fn log1p(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() && x.abs() < 0.5 && y.abs() < 0.5 {
        c(0.5 * (x * (2.0 + x) + y * y).ln_1p(), y.atan2(1.0 + x))
    } else {
        log(c(1.0 + x, y))
    }
}

pub(crate) fn log2(z: C) -> C {
    let l = log(z);
    c(l.re * LOG2_E, l.im * LOG2_E)
}

pub(crate) fn log10(z: C) -> C {
    let l = log(z);
    c(l.re * LOG10_E, l.im * LOG10_E)
}

/// `sinh` (G.6.2.5).
pub(crate) fn sinh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return c(x, if y == 0.0 { y } else { NAN });
    }
    if x.is_infinite() {
        if !y.is_finite() {
            // Annex G leaves the sign open; NumPy (glibc) gives +inf.
            return c(INF, NAN);
        }
        if y == 0.0 {
            return c(x, y);
        }
        return c(x * y.cos(), INF * y.sin());
    }
    if !y.is_finite() {
        return c(if x == 0.0 { x } else { NAN }, NAN);
    }
    if y == 0.0 {
        return c(x.sinh(), y);
    }
    if x.abs() > 20.0 {
        let ax = x.abs();
        return c(
            x.signum() * scaled_exp(ax, 0.5 * y.cos()),
            scaled_exp(ax, 0.5 * y.sin()),
        );
    }
    c(x.sinh() * y.cos(), x.cosh() * y.sin())
}

/// `cosh` (G.6.2.4).
pub(crate) fn cosh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return c(x, if y == 0.0 { y } else { NAN });
    }
    if x.is_infinite() {
        if !y.is_finite() {
            return c(INF, NAN);
        }
        if y == 0.0 {
            return c(INF, 0.0f64.copysign(x) * y.signum());
        }
        return c(INF * y.cos(), x * y.sin());
    }
    if !y.is_finite() {
        return c(NAN, if x == 0.0 { 0.0 } else { NAN });
    }
    if y == 0.0 {
        return c(x.cosh(), 0.0f64.copysign(x) * y.signum());
    }
    if x.abs() > 20.0 {
        let ax = x.abs();
        return c(
            scaled_exp(ax, 0.5 * y.cos()),
            x.signum() * scaled_exp(ax, 0.5 * y.sin()),
        );
    }
    c(x.cosh() * y.cos(), x.sinh() * y.sin())
}

/// `tanh` (G.6.2.6).
pub(crate) fn tanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_infinite() {
        let im = if y.is_finite() { (2.0 * y).sin() } else { y };
        return c(1.0f64.copysign(x), 0.0f64.copysign(im));
    }
    if x.is_nan() {
        return c(x, if y == 0.0 { y } else { NAN });
    }
    if !y.is_finite() {
        return c(if x == 0.0 { x } else { NAN }, NAN);
    }
    if x.abs() > 22.0 {
        let e = (-2.0 * x.abs()).exp();
        return c(1.0f64.copysign(x), 4.0 * y.sin() * y.cos() * e);
    }
    // Kahan's formula: no cancellation, exact at y = 0.
    let t = y.tan();
    let beta = 1.0 + t * t;
    let s = x.sinh();
    let rho = (1.0 + s * s).sqrt();
    let d = 1.0 + beta * s * s;
    c(beta * rho * s / d, t / d)
}

/// `asin` of a finite argument (Kahan).
fn asin_finite(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let a = sqrt(c(1.0 - x, -y));
    let b = sqrt(c(1.0 + x, y));
    c(x.atan2(a.re * b.re - a.im * b.im), (a.re * b.im - a.im * b.re).asinh())
}

/// `asinh` (G.6.2.2).
pub(crate) fn asinh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return if y == 0.0 {
            c(x, y)
        } else if y.is_infinite() {
            c(INF.copysign(y), NAN)
        } else {
            c(NAN, NAN)
        };
    }
    if y.is_nan() {
        return c(if x.is_infinite() { x } else { NAN }, NAN);
    }
    if x.is_infinite() {
        let im = if y.is_infinite() { FRAC_PI_4 } else { 0.0 };
        return c(x, im.copysign(y));
    }
    if y.is_infinite() {
        return c(INF.copysign(x), FRAC_PI_2.copysign(y));
    }
    // asinh(z) = -i asin(iz)
    times_minus_i(asin_finite(times_i(z)))
}

/// `acos` (G.6.1.1), branch cuts on the real axis beyond +-1.
pub(crate) fn acos(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return c(NAN, if y.is_infinite() { -y } else { NAN });
    }
    if y.is_nan() {
        return if x.is_infinite() {
            c(NAN, -INF)
        } else if x == 0.0 {
            c(FRAC_PI_2, NAN)
        } else {
            c(NAN, NAN)
        };
    }
    if x.is_infinite() {
        let re = match (x > 0.0, y.is_infinite()) {
            (true, true) => FRAC_PI_4,
            (false, true) => 3.0 * FRAC_PI_4,
            (true, false) => 0.0,
            (false, false) => PI,
        };
        return c(re, -INF.copysign(y));
    }
    if y.is_infinite() {
        return c(FRAC_PI_2, -y);
    }
    let a = sqrt(c(1.0 - x, -y));
    let b = sqrt(c(1.0 + x, y));
    c(2.0 * a.re.atan2(b.re), (b.re * a.im - b.im * a.re).asinh())
}

/// `acosh` = `+-i acos(z)`, the sign giving a non-negative real part.
pub(crate) fn acosh(z: C) -> C {
    // NaN + NaN i for finite x (Annex G), except that the Array API gives
    // NaN + i pi/2 for a zero x (the sign of pi/2 is left open).
    if z.im.is_nan() && z.re.is_finite() {
        return c(NAN, if z.re == 0.0 { FRAC_PI_2 } else { NAN });
    }
    let r = acos(z);
    if r.im.is_sign_negative() {
        times_i(r)
    } else {
        times_minus_i(r)
    }
}

/// `atanh` (G.6.2.3), branch cuts on the real axis beyond +-1.
pub(crate) fn atanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return if y.is_infinite() {
            c(0.0, FRAC_PI_2.copysign(y))
        } else {
            c(NAN, NAN)
        };
    }
    if y.is_nan() {
        return if x.is_infinite() || x == 0.0 {
            c(0.0f64.copysign(x), NAN)
        } else {
            c(NAN, NAN)
        };
    }
    if x.is_infinite() || y.is_infinite() {
        return c(0.0f64.copysign(x), FRAC_PI_2.copysign(y));
    }
    if x.abs() > 1e150 || y.abs() > 1e150 {
        // atanh(z) ~ 1/z + i pi/2 sign(y)
        return c(reciprocal(z).re, FRAC_PI_2.copysign(y));
    }
    let ax = x.abs();
    let t = 1.0 - ax;
    let d = t * t + y * y;
    let re = if d < 1e-32 {
        // z within 1e-16 of +-1 (|x| is 1 or an ulp or two away), where
        // `y * y` may underflow (to 0 at y = 1e-200, an infinite result):
        // ln(4 / d) / 4 = (ln 2 - ln |1 - |x| - iy|) / 2, the modulus by
        // `hypot`, which does not underflow (FreeBSD's catanh takes the
        // same limit at |x| = 1; the c64 shader and the CUDA prelude share
        // this form). It drops ln(((1 + |x|)^2 + y^2) / 4) / 4, under
        // 1e-16, far below an ulp of the result (18.8 or more).
        0.5 * (LN_2 - t.hypot(y).ln())
    } else {
        0.25 * (4.0 * ax / d).ln_1p()
    };
    let im = 0.5 * (2.0 * y).atan2(t * (1.0 + ax) - y * y);
    c(re.copysign(x), im)
}

/// `sin(z) = -i sinh(iz)`.
pub(crate) fn sin(z: C) -> C {
    if !z.re.is_finite() && z.im.is_infinite() {
        // Annex G leaves the sign open; NumPy (glibc) gives +inf.
        return c(NAN, INF);
    }
    times_minus_i(sinh(times_i(z)))
}

/// `cos(z) = cosh(iz)`.
pub(crate) fn cos(z: C) -> C {
    cosh(times_i(z))
}

/// `tan(z) = -i tanh(iz)`.
pub(crate) fn tan(z: C) -> C {
    times_minus_i(tanh(times_i(z)))
}

/// `asin(z) = -i asinh(iz)`.
pub(crate) fn asin(z: C) -> C {
    if z.re.is_infinite() && z.im.is_nan() {
        return c(NAN, INF.copysign(z.re));
    }
    times_minus_i(asinh(times_i(z)))
}

/// `atan(z) = -i atanh(iz)`.
pub(crate) fn atan(z: C) -> C {
    if z.re.is_infinite() && z.im.is_nan() {
        return c(FRAC_PI_2.copysign(z.re), 0.0);
    }
    times_minus_i(atanh(times_i(z)))
}

/// `a ** b` as NumPy computes it: `b = 0` gives 1, a zero base gives 0
/// for an exponent with a positive real part (NaN otherwise), small
/// integer exponents multiply out, others are C's `cpow`,
/// `exp(b log a)` with C99's multiplication ([`mul_annex_g`]).
pub(crate) fn pow(a: C, b: C) -> C {
    let (br, bi) = (b.re, b.im);
    if br == 0.0 && bi == 0.0 {
        return c(1.0, 0.0);
    }
    if a.re == 0.0 && a.im == 0.0 {
        return if br > 0.0 { c(0.0, 0.0) } else { c(NAN, NAN) };
    }
    if bi == 0.0 && br == br.trunc() && br.abs() < 100.0 {
        let n = br as i32;
        match n {
            1 => return a,
            2 => return mul(a, a),
            3 => return mul(mul(a, a), a),
            _ => {}
        }
        let (mut acc, mut p, mut k) = (c(1.0, 0.0), a, n.unsigned_abs());
        loop {
            if k & 1 == 1 {
                acc = mul(acc, p);
            }
            k >>= 1;
            if k == 0 {
                break;
            }
            p = mul(p, p);
        }
        return if n < 0 { div(c(1.0, 0.0), acc) } else { acc };
    }
    exp(mul_annex_g(b, log(a)))
}
