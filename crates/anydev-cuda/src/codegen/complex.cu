// ---- complex numbers (c64, c128) ---------------------------------------
//
// A port of anydev-kernels' complex/math.rs, so that the device computes
// what the host kernels compute: every function runs in double (c64 is
// widened first and each component rounded once at the end), with the
// special values of C99 Annex G and the same formulas, evaluated in the
// same order (modules compile with --fmad=false). The names follow the
// host's functions: c_exp is math::exp, and so on.

struct alignas(8) cfloat {
    float re, im;
};
struct alignas(16) cdouble {
    double re, im;
};

__device__ __forceinline__ cfloat cflt(float re, float im) {
    cfloat z;
    z.re = re;
    z.im = im;
    return z;
}
__device__ __forceinline__ cdouble cdbl(double re, double im) {
    cdouble z;
    z.re = re;
    z.im = im;
    return z;
}

// Widening is exact; narrowing rounds each component once.
__device__ __forceinline__ cdouble c_up(cfloat z) { return cdbl((double)z.re, (double)z.im); }
__device__ __forceinline__ cdouble c_up(cdouble z) { return z; }
__device__ __forceinline__ cfloat c_down(cdouble z) { return cflt(__double2float_rn(z.re), __double2float_rn(z.im)); }

// `z != 0` (a NaN component counts as non-zero): casts to bool, all/any, nonzero.
__device__ __forceinline__ bool c_nonzero(cfloat z) { return !(z.re == 0.0f && z.im == 0.0f); }
__device__ __forceinline__ bool c_nonzero(cdouble z) { return !(z.re == 0.0 && z.im == 0.0); }
__device__ __forceinline__ bool c_equal(cfloat a, cfloat b) { return a.re == b.re && a.im == b.im; }
__device__ __forceinline__ bool c_equal(cdouble a, cdouble b) { return a.re == b.re && a.im == b.im; }

__device__ __forceinline__ double c_nan() { return __longlong_as_double(0x7ff8000000000000ll); }
__device__ __forceinline__ double c_inf() { return __longlong_as_double(0x7ff0000000000000ll); }
#define C_FRAC_PI_2 1.5707963267948966
#define C_FRAC_PI_4 0.7853981633974483
#define C_PI 3.141592653589793
#define C_LOG10_E 0.4342944819032518
#define C_LOG2_E 1.4426950408889634
#define C_LN_2 0.6931471805599453

// Rust's f64::signum: +-1 by the sign bit, NaN for NaN.
__device__ __forceinline__ double r_signum(double x) { return x != x ? x : copysign(1.0, x); }

// Rust's f64::asinh (its own formula, not libm's), which the host's
// inverse trigonometric functions call.
__device__ __forceinline__ double r_asinh(double x) {
    const double ax = fabs(x);
    const double ix = 1.0 / ax;
    return copysign(log1p(ax + (ax / (hypot(1.0, ix) + ix))), x);
}

// `exp(ax) * m` for `ax` large enough that `exp(ax)` alone may overflow
// while the product does not.
__device__ __forceinline__ double c_scaled_exp(double ax, double m) {
    if (ax < 709.0) return exp(ax) * m;
    const double h = exp(ax * 0.5);
    return (m * h) * h;
}

__device__ __forceinline__ cdouble c_times_i(cdouble z) { return cdbl(-z.im, z.re); }
__device__ __forceinline__ cdouble c_times_minus_i(cdouble z) { return cdbl(z.im, -z.re); }

// ---- arithmetic

__device__ __forceinline__ cdouble c_add(cdouble a, cdouble b) { return cdbl(a.re + b.re, a.im + b.im); }
__device__ __forceinline__ cdouble c_subtract(cdouble a, cdouble b) { return cdbl(a.re - b.re, a.im - b.im); }
__device__ __forceinline__ cdouble c_multiply(cdouble a, cdouble b) {
    return cdbl(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// a * b as C99's _Complex multiplication (Annex G.5.1): where the plain
// formula gives NaN in both parts but an operand is infinite, or a partial
// product overflowed, the result is an infinity (pow's b log a needs it).
__device__ __forceinline__ double c_unit(double t) { return copysign(m_isinf(t) ? 1.0 : 0.0, t); }
__device__ __forceinline__ double c_zero_nan(double t) { return m_isnan(t) ? copysign(0.0, t) : t; }
__device__ __forceinline__ cdouble c_multiply_annex_g(cdouble a, cdouble b) {
    const cdouble p = c_multiply(a, b);
    if (!(m_isnan(p.re) && m_isnan(p.im))) return p;
    double x = a.re, y = a.im, u = b.re, v = b.im;
    bool recompute = false;
    if (m_isinf(x) || m_isinf(y)) {
        x = c_unit(x); y = c_unit(y); u = c_zero_nan(u); v = c_zero_nan(v);
        recompute = true;
    }
    if (m_isinf(u) || m_isinf(v)) {
        u = c_unit(u); v = c_unit(v); x = c_zero_nan(x); y = c_zero_nan(y);
        recompute = true;
    }
    if (!recompute && (m_isinf(x * u) || m_isinf(y * v) || m_isinf(x * v) || m_isinf(y * u))) {
        x = c_zero_nan(x); y = c_zero_nan(y); u = c_zero_nan(u); v = c_zero_nan(v);
        recompute = true;
    }
    if (!recompute) return p;
    const double inf = c_inf();
    return cdbl(inf * (x * u - y * v), inf * (x * v + y * u));
}
// Sums, products and scans accumulate in cdouble through these.
__device__ __forceinline__ cdouble operator+(cdouble a, cdouble b) { return c_add(a, b); }
__device__ __forceinline__ cdouble operator*(cdouble a, cdouble b) { return c_multiply(a, b); }

// Smith's algorithm as NumPy implements it (a zero divisor gives
// infinities or NaNs component-wise).
__device__ __forceinline__ cdouble c_divide(cdouble a, cdouble b) {
    const double ar = a.re, ai = a.im, br = b.re, bi = b.im;
    if (fabs(br) >= fabs(bi)) {
        if (br == 0.0 && bi == 0.0) return cdbl(ar / fabs(br), ai / fabs(br));
        const double rat = bi / br;
        const double scl = 1.0 / (br + bi * rat);
        return cdbl((ar + ai * rat) * scl, (ai - ar * rat) * scl);
    }
    const double rat = br / bi;
    const double scl = 1.0 / (bi + br * rat);
    return cdbl((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}

__device__ __forceinline__ cdouble c_negative(cdouble z) { return cdbl(-z.re, -z.im); }
__device__ __forceinline__ cdouble c_conj(cdouble z) { return cdbl(z.re, -z.im); }
__device__ __forceinline__ double c_abs(cdouble z) { return hypot(z.re, z.im); }
__device__ __forceinline__ cdouble c_square(cdouble z) { return c_multiply(z, z); }
// Half to even, per component.
__device__ __forceinline__ cdouble c_round(cdouble z) { return cdbl(rint(z.re), rint(z.im)); }

// 1 / z, NumPy's form of Smith's algorithm (1 / 0 is NaN + NaN i).
__device__ __forceinline__ cdouble c_reciprocal(cdouble z) {
    const double x = z.re, y = z.im;
    if (fabs(y) <= fabs(x)) {
        const double r = y / x;
        const double d = x + y * r;
        return cdbl(1.0 / d, -r / d);
    }
    const double r = x / y;
    const double d = y + x * r;
    return cdbl(r / d, -1.0 / d);
}

// z / |z|; 0 for 0; NaN when a component is NaN or both are infinite;
// +-1 or +-i beside a single infinity.
__device__ __forceinline__ cdouble c_sign(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x) || m_isnan(y) || (m_isinf(x) && m_isinf(y))) return cdbl(c_nan(), c_nan());
    if (m_isinf(x)) return cdbl(r_signum(x), 0.0);
    if (m_isinf(y)) return cdbl(0.0, r_signum(y));
    if (c_abs(z) == 0.0) return cdbl(0.0, 0.0);
    const double s = fmax(fabs(x), fabs(y));
    const double xs = x / s, ys = y / s;
    const double ms = hypot(xs, ys);
    return cdbl(xs / ms, ys / ms);
}

// ---- roots, exponentials, logarithms

// Principal square root (G.6.4.2), branch cut on the negative real axis.
__device__ __forceinline__ cdouble c_sqrt(cdouble z) {
    double x = z.re, y = z.im;
    if (m_isinf(y)) return cdbl(c_inf(), y);
    if (m_isnan(x)) return cdbl(x, c_nan());
    if (m_isnan(y)) {
        if (x == c_inf()) return cdbl(x, y);
        if (x == -c_inf()) return cdbl(c_nan(), c_inf());
        return cdbl(c_nan(), c_nan());
    }
    if (m_isinf(x)) return x > 0.0 ? cdbl(x, copysign(0.0, y)) : cdbl(0.0, copysign(c_inf(), y));
    if (x == 0.0 && y == 0.0) return cdbl(0.0, y);
    const double m = fmax(fabs(x), fabs(y));
    double k = 1.0;
    if (m > 1e300) {
        x = x * 0.25;
        y = y * 0.25;
        k = 2.0;
    } else if (m < 1e-300) {
        const double up = __longlong_as_double(0x6570000000000000ll);  // 2^600
        x = x * up;
        y = y * up;
        k = __longlong_as_double(0x2d30000000000000ll);  // 2^-300
    }
    const double h = hypot(x, y);
    if (x >= 0.0) {
        const double t = sqrt((x + h) * 0.5);
        return cdbl(t * k, y / (2.0 * t) * k);
    }
    const double t = sqrt((h - x) * 0.5);
    return cdbl(fabs(y) / (2.0 * t) * k, copysign(t, y) * k);
}

// e^z (G.6.3.1).
__device__ __forceinline__ cdouble c_exp(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x)) return cdbl(x, y == 0.0 ? y : c_nan());
    if (m_isinf(x)) {
        if (!m_isfinite(y)) return x > 0.0 ? cdbl(c_inf(), c_nan()) : cdbl(0.0, copysign(0.0, y));
        if (y == 0.0) return cdbl(x > 0.0 ? c_inf() : 0.0, y);
        const double m = x > 0.0 ? c_inf() : 0.0;
        return cdbl(m * cos(y), m * sin(y));
    }
    if (!m_isfinite(y)) return cdbl(c_nan(), c_nan());
    if (y == 0.0) return cdbl(exp(x), y);
    if (x > 700.0) return cdbl(c_scaled_exp(x, cos(y)), c_scaled_exp(x, sin(y)));
    const double e = exp(x);
    return cdbl(e * cos(y), e * sin(y));
}

// e^z - 1, accurate near 0; non-finite arguments give exp(z) - 1.
__device__ __forceinline__ cdouble c_expm1(cdouble z) {
    const double x = z.re, y = z.im;
    if (!(m_isfinite(x) && m_isfinite(y)) || x > 700.0) {
        const cdouble e = c_exp(z);
        return cdbl(e.re - 1.0, e.im);
    }
    const double s = sin(y * 0.5);
    return cdbl(expm1(x) * cos(y) - 2.0 * s * s, y == 0.0 ? y : exp(x) * sin(y));
}

// Natural logarithm (G.6.3.2), branch cut on the negative real axis.
__device__ __forceinline__ cdouble c_log(cdouble z) {
    const double x = z.re, y = z.im;
    const double h = hypot(x, y);
    const double re = (h > 0.5 && h < 2.0) ? 0.5 * log1p((x - 1.0) * (x + 1.0) + y * y) : log(h);
    return cdbl(re, atan2(y, x));
}

// log(1 + z), accurate near 0.
__device__ __forceinline__ cdouble c_log1p(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isfinite(x) && m_isfinite(y) && fabs(x) < 0.5 && fabs(y) < 0.5)
        return cdbl(0.5 * log1p(x * (2.0 + x) + y * y), atan2(y, 1.0 + x));
    return c_log(cdbl(1.0 + x, y));
}

__device__ __forceinline__ cdouble c_log2(cdouble z) {
    const cdouble l = c_log(z);
    return cdbl(l.re * C_LOG2_E, l.im * C_LOG2_E);
}

__device__ __forceinline__ cdouble c_log10(cdouble z) {
    const cdouble l = c_log(z);
    return cdbl(l.re * C_LOG10_E, l.im * C_LOG10_E);
}

// ---- hyperbolic functions

// sinh (G.6.2.5).
__device__ __forceinline__ cdouble c_sinh(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x)) return cdbl(x, y == 0.0 ? y : c_nan());
    if (m_isinf(x)) {
        // Annex G leaves the sign open; NumPy (glibc) gives +inf.
        if (!m_isfinite(y)) return cdbl(c_inf(), c_nan());
        if (y == 0.0) return cdbl(x, y);
        return cdbl(x * cos(y), c_inf() * sin(y));
    }
    if (!m_isfinite(y)) return cdbl(x == 0.0 ? x : c_nan(), c_nan());
    if (y == 0.0) return cdbl(sinh(x), y);
    if (fabs(x) > 20.0) {
        const double ax = fabs(x);
        return cdbl(r_signum(x) * c_scaled_exp(ax, 0.5 * cos(y)), c_scaled_exp(ax, 0.5 * sin(y)));
    }
    return cdbl(sinh(x) * cos(y), cosh(x) * sin(y));
}

// cosh (G.6.2.4).
__device__ __forceinline__ cdouble c_cosh(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x)) return cdbl(x, y == 0.0 ? y : c_nan());
    if (m_isinf(x)) {
        if (!m_isfinite(y)) return cdbl(c_inf(), c_nan());
        if (y == 0.0) return cdbl(c_inf(), copysign(0.0, x) * r_signum(y));
        return cdbl(c_inf() * cos(y), x * sin(y));
    }
    if (!m_isfinite(y)) return cdbl(c_nan(), x == 0.0 ? 0.0 : c_nan());
    if (y == 0.0) return cdbl(cosh(x), copysign(0.0, x) * r_signum(y));
    if (fabs(x) > 20.0) {
        const double ax = fabs(x);
        return cdbl(c_scaled_exp(ax, 0.5 * cos(y)), r_signum(x) * c_scaled_exp(ax, 0.5 * sin(y)));
    }
    return cdbl(cosh(x) * cos(y), sinh(x) * sin(y));
}

// tanh (G.6.2.6).
__device__ __forceinline__ cdouble c_tanh(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isinf(x)) {
        const double im = m_isfinite(y) ? sin(2.0 * y) : y;
        return cdbl(copysign(1.0, x), copysign(0.0, im));
    }
    if (m_isnan(x)) return cdbl(x, y == 0.0 ? y : c_nan());
    if (!m_isfinite(y)) return cdbl(x == 0.0 ? x : c_nan(), c_nan());
    if (fabs(x) > 22.0) {
        const double e = exp(-2.0 * fabs(x));
        return cdbl(copysign(1.0, x), 4.0 * sin(y) * cos(y) * e);
    }
    // Kahan's formula: no cancellation, exact at y = 0.
    const double t = tan(y);
    const double beta = 1.0 + t * t;
    const double s = sinh(x);
    const double rho = sqrt(1.0 + s * s);
    const double d = 1.0 + beta * s * s;
    return cdbl(beta * rho * s / d, t / d);
}

// ---- inverse functions (Kahan, "Branch cuts for complex elementary functions")

// asin of a finite argument.
__device__ __forceinline__ cdouble c_asin_finite(cdouble z) {
    const double x = z.re, y = z.im;
    const cdouble a = c_sqrt(cdbl(1.0 - x, -y));
    const cdouble b = c_sqrt(cdbl(1.0 + x, y));
    return cdbl(atan2(x, a.re * b.re - a.im * b.im), r_asinh(a.re * b.im - a.im * b.re));
}

// asinh (G.6.2.2).
__device__ __forceinline__ cdouble c_asinh(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x)) {
        if (y == 0.0) return cdbl(x, y);
        if (m_isinf(y)) return cdbl(copysign(c_inf(), y), c_nan());
        return cdbl(c_nan(), c_nan());
    }
    if (m_isnan(y)) return cdbl(m_isinf(x) ? x : c_nan(), c_nan());
    if (m_isinf(x)) return cdbl(x, copysign(m_isinf(y) ? C_FRAC_PI_4 : 0.0, y));
    if (m_isinf(y)) return cdbl(copysign(c_inf(), x), copysign(C_FRAC_PI_2, y));
    // asinh(z) = -i asin(iz)
    return c_times_minus_i(c_asin_finite(c_times_i(z)));
}

// acos (G.6.1.1), branch cuts on the real axis beyond +-1.
__device__ __forceinline__ cdouble c_acos(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x)) return cdbl(c_nan(), m_isinf(y) ? -y : c_nan());
    if (m_isnan(y)) {
        if (m_isinf(x)) return cdbl(c_nan(), -c_inf());
        if (x == 0.0) return cdbl(C_FRAC_PI_2, c_nan());
        return cdbl(c_nan(), c_nan());
    }
    if (m_isinf(x)) {
        const double re = x > 0.0 ? (m_isinf(y) ? C_FRAC_PI_4 : 0.0) : (m_isinf(y) ? 3.0 * C_FRAC_PI_4 : C_PI);
        return cdbl(re, -copysign(c_inf(), y));
    }
    if (m_isinf(y)) return cdbl(C_FRAC_PI_2, -y);
    const cdouble a = c_sqrt(cdbl(1.0 - x, -y));
    const cdouble b = c_sqrt(cdbl(1.0 + x, y));
    return cdbl(2.0 * atan2(a.re, b.re), r_asinh(b.re * a.im - b.im * a.re));
}

// acosh = +-i acos(z), the sign giving a non-negative real part.
__device__ __forceinline__ cdouble c_acosh(cdouble z) {
    // NaN + NaN i for finite x, NaN + i pi/2 for a zero x (the Array API).
    if (m_isnan(z.im) && m_isfinite(z.re)) return cdbl(c_nan(), z.re == 0.0 ? C_FRAC_PI_2 : c_nan());
    const cdouble r = c_acos(z);
    return m_signbit(r.im) ? c_times_i(r) : c_times_minus_i(r);
}

// atanh (G.6.2.3), branch cuts on the real axis beyond +-1.
__device__ __forceinline__ cdouble c_atanh(cdouble z) {
    const double x = z.re, y = z.im;
    if (m_isnan(x)) return m_isinf(y) ? cdbl(0.0, copysign(C_FRAC_PI_2, y)) : cdbl(c_nan(), c_nan());
    if (m_isnan(y)) return (m_isinf(x) || x == 0.0) ? cdbl(copysign(0.0, x), c_nan()) : cdbl(c_nan(), c_nan());
    if (m_isinf(x) || m_isinf(y)) return cdbl(copysign(0.0, x), copysign(C_FRAC_PI_2, y));
    // atanh(z) ~ 1/z + i pi/2 sign(y)
    if (fabs(x) > 1e150 || fabs(y) > 1e150) return cdbl(c_reciprocal(z).re, copysign(C_FRAC_PI_2, y));
    const double ax = fabs(x);
    const double t = 1.0 - ax;
    const double d = t * t + y * y;
    // z within 1e-16 of +-1, where y * y may underflow (to 0 at y = 1e-200):
    // ln(4 / d) / 4 = (ln 2 - ln |1 - |x| - iy|) / 2, the modulus by hypot.
    const double re = d < 1e-32 ? 0.5 * (C_LN_2 - log(hypot(t, y))) : 0.25 * log1p(4.0 * ax / d);
    const double im = 0.5 * atan2(2.0 * y, t * (1.0 + ax) - y * y);
    return cdbl(copysign(re, x), im);
}

// ---- trigonometric functions, from the hyperbolic ones as Annex G defines them

// sin(z) = -i sinh(iz); Annex G leaves the sign open, NumPy (glibc) gives +inf.
__device__ __forceinline__ cdouble c_sin(cdouble z) {
    if (!m_isfinite(z.re) && m_isinf(z.im)) return cdbl(c_nan(), c_inf());
    return c_times_minus_i(c_sinh(c_times_i(z)));
}

// cos(z) = cosh(iz).
__device__ __forceinline__ cdouble c_cos(cdouble z) { return c_cosh(c_times_i(z)); }

// tan(z) = -i tanh(iz).
__device__ __forceinline__ cdouble c_tan(cdouble z) { return c_times_minus_i(c_tanh(c_times_i(z))); }

// asin(z) = -i asinh(iz).
__device__ __forceinline__ cdouble c_asin(cdouble z) {
    if (m_isinf(z.re) && m_isnan(z.im)) return cdbl(c_nan(), copysign(c_inf(), z.re));
    return c_times_minus_i(c_asinh(c_times_i(z)));
}

// atan(z) = -i atanh(iz).
__device__ __forceinline__ cdouble c_atan(cdouble z) {
    if (m_isinf(z.re) && m_isnan(z.im)) return cdbl(copysign(C_FRAC_PI_2, z.re), 0.0);
    return c_times_minus_i(c_atanh(c_times_i(z)));
}

// a ** b as NumPy computes it: b = 0 gives 1, a zero base gives 0 for an
// exponent with a positive real part (NaN otherwise), small integer
// exponents multiply out, others are C's cpow, exp(b log a) with C99's
// multiplication.
__device__ __forceinline__ cdouble c_pow(cdouble a, cdouble b) {
    const double br = b.re, bi = b.im;
    if (br == 0.0 && bi == 0.0) return cdbl(1.0, 0.0);
    if (a.re == 0.0 && a.im == 0.0) return br > 0.0 ? cdbl(0.0, 0.0) : cdbl(c_nan(), c_nan());
    if (bi == 0.0 && br == trunc(br) && fabs(br) < 100.0) {
        const int n = (int)br;
        if (n == 1) return a;
        if (n == 2) return c_multiply(a, a);
        if (n == 3) return c_multiply(c_multiply(a, a), a);
        cdouble acc = cdbl(1.0, 0.0), p = a;
        unsigned k = n < 0 ? (unsigned)(-n) : (unsigned)n;
        for (;;) {
            if (k & 1u) acc = c_multiply(acc, p);
            k >>= 1;
            if (k == 0u) break;
            p = c_multiply(p, p);
        }
        return n < 0 ? c_divide(cdbl(1.0, 0.0), acc) : acc;
    }
    return c_exp(c_multiply_annex_g(b, c_log(a)));
}

// ---- warp shuffles of the accumulator (two doubles)

__device__ __forceinline__ cdouble shfl_down(cdouble v, int o) { return cdbl(shfl_down(v.re, o), shfl_down(v.im, o)); }
__device__ __forceinline__ cdouble shfl_up(cdouble v, int o) { return cdbl(shfl_up(v.re, o), shfl_up(v.im, o)); }
