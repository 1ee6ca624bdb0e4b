//! Complex numbers (c64, c128) on any device that declares them:
//! arithmetic, promotion with real arrays and complex scalars (c128
//! scalars travel as one-element arrays), the elementary functions,
//! conj/real/imag, equality, reductions, matmul, where, casts both ways
//! and the special values of C99 Annex G. References are computed on the
//! host with num-complex in f64; a device without complex skips.

use crate::case::{check, expect_err, Case, CaseCtx, Failure, Need};
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp, UnaryOp};
use anydev_core::{DType, Device, Error};
use num_complex::{Complex32, Complex64 as C};

const DTYPES: [DType; 2] = [DType::C64, DType::C128];

fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

/// Relative tolerance of one rounded complex result of `dtype`.
fn tol(dtype: DType) -> f64 {
    if dtype == DType::C64 {
        4e-6
    } else {
        1e-13
    }
}

/// `values` as an array of complex `dtype` on `device`.
pub(crate) fn carr(values: &[C], shape: &[usize], dtype: DType, device: Device) -> Result<Array, Failure> {
    Ok(match dtype {
        DType::C64 => Array::from_vec(
            values
                .iter()
                .map(|z| Complex32::new(z.re as f32, z.im as f32))
                .collect(),
            shape,
            device,
        )?,
        _ => Array::from_slice(values, shape, device)?,
    })
}

/// The values of `values` after a round trip through `dtype`.
fn rounded(values: &[C], dtype: DType) -> Vec<C> {
    values
        .iter()
        .map(|z| {
            if dtype == DType::C64 {
                c(z.re as f32 as f64, z.im as f32 as f64)
            } else {
                *z
            }
        })
        .collect()
}

/// Every element of `got` within `tol(dtype)` of `want`, relative to
/// `|want|` (NaN components must match NaN).
pub(crate) fn near(what: &str, dtype: DType, want: &[C], got: &Array) -> Result<(), Failure> {
    let got = got.to_c128_vec()?;
    check(
        got.len() == want.len(),
        format!("{what}: length"),
        want.len(),
        got.len(),
    )?;
    for (i, (&w, &g)) in want.iter().zip(&got).enumerate() {
        let scale = w.norm().max(1e-300);
        let one = |w: f64, g: f64| (w.is_nan() && g.is_nan()) || w == g || (w - g).abs() <= tol(dtype) * scale;
        check(one(w.re, g.re) && one(w.im, g.im), format!("{what}[{i}]"), w, g)?;
    }
    Ok(())
}

fn sample() -> Vec<C> {
    vec![
        c(1.5, -2.0),
        c(-0.25, 0.75),
        c(3.0, 0.5),
        c(-2.0, -1.25),
        c(0.5, 4.0),
        c(-1.0, 0.125),
    ]
}

fn other() -> Vec<C> {
    vec![
        c(0.5, 1.0),
        c(2.0, -0.5),
        c(-1.5, 0.25),
        c(0.75, 3.0),
        c(-4.0, -2.0),
        c(1.0, 1.0),
    ]
}

fn arithmetic(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let (a, b) = (rounded(&sample(), dt), rounded(&other(), dt));
    let (x, y) = (carr(&a, &[2, 3], dt, ctx.device)?, carr(&b, &[2, 3], dt, ctx.device)?);
    let pair = |f: fn(C, C) -> C| a.iter().zip(&b).map(|(&p, &q)| f(p, q)).collect::<Vec<C>>();
    near("add", dt, &pair(|p, q| p + q), &ad::add(&x, &y)?)?;
    near("subtract", dt, &pair(|p, q| p - q), &ad::subtract(&x, &y)?)?;
    near("multiply", dt, &pair(|p, q| p * q), &ad::multiply(&x, &y)?)?;
    near("divide", dt, &pair(|p, q| p / q), &ad::divide(&x, &y)?)?;
    near("pow", dt, &pair(|p, q| p.powc(q)), &ad::pow(&x, &y)?)?;
    near(
        "pow(x, 2)",
        dt,
        &pair(|p, _| p * p),
        &ad::pow(&x, &ad::full_like(&y, c(2.0, 0.0), ())?)?,
    )?;
    Ok(())
}

fn promotion(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let real = dt.real_dtype();
    let a = rounded(&sample(), dt);
    let x = carr(&a, &[6], dt, ctx.device)?;
    let r = crate::reference::array(&[1.0, -2.0, 0.5, 4.0, -0.25, 3.0], &[6], real, ctx.device)?;
    let sum = ad::add(&x, &r)?;
    check(sum.dtype() == dt, "complex + its real dtype", dt, sum.dtype())?;
    let rv = [1.0, -2.0, 0.5, 4.0, -0.25, 3.0];
    let want: Vec<C> = a.iter().zip(rv).map(|(z, v)| z + v).collect();
    near("complex + real array", dt, &want, &sum)?;
    // Weak complex scalars keep the array's dtype: a c64 scalar arrives as
    // a scalar operand, a c128 one travels as a one-element array.
    let s = c(0.5, -1.5);
    let want: Vec<C> = a.iter().map(|z| z * s).collect();
    let by64 = ad::multiply(&x, Complex32::new(0.5, -1.5))?;
    check(by64.dtype() == dt, "complex * c64 scalar", dt, by64.dtype())?;
    near("complex * c64 scalar", dt, &want, &by64)?;
    let by128 = ad::multiply(&x, s)?;
    check(by128.dtype() == dt, "complex * c128 scalar", dt, by128.dtype())?;
    near("complex * c128 scalar", dt, &want, &by128)?;
    // A real array with a complex scalar becomes complex.
    let rs = ad::subtract(&r, s)?;
    check(rs.dtype() == dt, "real - complex scalar", dt, rs.dtype())?;
    near("real - complex scalar", dt, &rv.map(|v| v - s), &rs)?;
    Ok(())
}

/// `c64` with an `f64` array, or an `f64` array with a complex scalar, is
/// `c128`; a device that holds `f64` but not `c128` refuses rather than
/// drop the `f64` operand's precision to `c64`.
fn f64_operands_keep_their_precision(ctx: &CaseCtx) -> Result<(), Failure> {
    let dev = ctx.device;
    let a = rounded(&sample()[..3], DType::C64);
    let z = carr(&a, &[3], DType::C64, dev)?;
    let rv = [0.1, -2.0, 1.0 / 3.0];
    let r = crate::reference::array(&rv, &[3], DType::F64, dev)?;
    let s = c(0.5, -1.5);
    let holds = ctx.runtime.capabilities(dev)?.supports_dtype(DType::C128);
    for (what, result, want) in [
        (
            "c64 + f64 array",
            ad::add(&z, &r),
            a.iter().zip(rv).map(|(z, v)| z + v).collect::<Vec<C>>(),
        ),
        (
            "f64 array * complex scalar",
            ad::multiply(&r, s),
            rv.map(|v| v * s).to_vec(),
        ),
    ] {
        match (holds, result) {
            (true, Ok(y)) => {
                check(
                    y.dtype() == DType::C128,
                    format!("{what}: dtype"),
                    DType::C128,
                    y.dtype(),
                )?;
                near(what, DType::C128, &want, &y)?;
            }
            (false, Err(Error::UnsupportedDType { dtype: DType::C128, .. })) => {}
            (holds, got) => {
                return Err(Failure::new(
                    what,
                    format!("a c128 result where the device holds c128 (it does: {holds}), else UnsupportedDType"),
                    format!("{:?}", got.map(|y| y.dtype())),
                ))
            }
        }
    }
    Ok(())
}

type Fun = fn(&Array) -> ad::Result<Array>;

/// A function's name, its array form and its host reference.
type Row = (&'static str, Fun, fn(C) -> C);

fn functions(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let a = rounded(&sample(), dt);
    let x = carr(&a, &[6], dt, ctx.device)?;
    let table: [Row; 8] = [
        ("sqrt", ad::sqrt, |z| z.sqrt()),
        ("exp", ad::exp, |z| z.exp()),
        ("log", ad::log, |z| z.ln()),
        ("sin", ad::sin, |z| z.sin()),
        ("tanh", ad::tanh, |z| z.tanh()),
        ("asinh", ad::asinh, |z| z.asinh()),
        ("reciprocal", ad::reciprocal, |z| z.inv()),
        ("square", ad::square, |z| z * z),
    ];
    for (name, f, reference) in table {
        let want: Vec<C> = a.iter().map(|&z| reference(z)).collect();
        near(name, dt, &want, &f(&x)?)?;
    }
    let abs = ad::abs(&x)?;
    check(
        abs.dtype() == dt.real_dtype(),
        "abs dtype",
        dt.real_dtype(),
        abs.dtype(),
    )?;
    let want: Vec<C> = a.iter().map(|z| c(z.norm(), 0.0)).collect();
    near("abs", dt, &want, &abs)?;
    Ok(())
}

/// `atanh` beside its singular points +-1 and `atan` beside +-i, where
/// the square of the small component underflows, so that the real part
/// of atanh as `log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4` would be infinite.
/// The references are NumPy 2.4.6's `arctanh` and `arctan` on complex128
/// (for c64: of the inputs rounded to f32; 1e-30 is normal there), whose
/// pi/4 and pi/2 are the f64 constants.
fn near_singular_points(ctx: &CaseCtx) -> Result<(), Failure> {
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4 as Q};
    /// A function's name, its array form, and arguments with their values.
    type Points = (&'static str, Fun, Vec<(C, C)>);
    let dt = ctx.dtype();
    let (tiny, big) = (5.000000015855384e-31, 34.88534998360512);
    let table: [Points; 2] = if dt == DType::C64 {
        [
            (
                "atanh",
                ad::atanh,
                vec![
                    (c(1.0, 1e-30), c(big, Q)),
                    (c(-1.0, -1e-30), c(-big, -Q)),
                    (c(1.0, 1e-20), c(23.372424536087667, Q)),
                ],
            ),
            (
                "atan",
                ad::atan,
                vec![
                    (c(1e-30, 1.0), c(Q, big)),
                    (c(-1e-30, -1.0), c(-Q, -big)),
                    (c(1.0, 1e-30), c(Q, tiny)),
                ],
            ),
        ]
    } else {
        [
            (
                "atanh",
                ad::atanh,
                vec![
                    (c(1.0, 1e-200), c(230.60508288968455, Q)),
                    (c(-1.0, -1e-200), c(-230.60508288968455, -Q)),
                    (c(1.0, -1e-300), c(345.7343375393868, -Q)),
                    (c(1.0, 1e-17), c(19.918546880729362, Q)),
                    (c(1.0, 1e-15), c(17.615961787735316, 0.7853981633974486)),
                    (
                        c(0.9999999999999999, 1e-200),
                        c(18.714973875118524, 4.503599627370496e-185),
                    ),
                    (c(-1.0000000000000002, 1e-200), c(-18.36840028483855, FRAC_PI_2)),
                ],
            ),
            (
                "atan",
                ad::atan,
                vec![
                    (c(1e-200, 1.0), c(Q, 230.60508288968455)),
                    (c(-1e-200, -1.0), c(-Q, -230.60508288968455)),
                    (c(1e-300, -1.0), c(Q, -345.7343375393868)),
                ],
            ),
        ]
    };
    for (name, f, pairs) in table {
        let (z, want): (Vec<C>, Vec<C>) = pairs.into_iter().unzip();
        let x = carr(&z, &[z.len()], dt, ctx.device)?;
        near(&format!("{name} near its singular points"), dt, &want, &f(&x)?)?;
    }
    Ok(())
}

fn conj_real_imag(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let a = rounded(&sample(), dt);
    let x = carr(&a, &[3, 2], dt, ctx.device)?;
    near(
        "conj",
        dt,
        &a.iter().map(|z| z.conj()).collect::<Vec<_>>(),
        &ad::conj(&x)?,
    )?;
    let (re, im) = (ad::real(&x)?, ad::imag(&x)?);
    check(re.dtype() == dt.real_dtype(), "real dtype", dt.real_dtype(), re.dtype())?;
    check(
        re.to_f64_vec()? == a.iter().map(|z| z.re).collect::<Vec<_>>(),
        "real",
        "real parts",
        format!("{:?}", re.to_f64_vec()?),
    )?;
    check(
        im.to_f64_vec()? == a.iter().map(|z| z.im).collect::<Vec<_>>(),
        "imag",
        "imaginary parts",
        format!("{:?}", im.to_f64_vec()?),
    )?;
    Ok(())
}

/// Complex numbers have no order: every op that orders is refused by the
/// array layer with `InvalidDType`, whatever the device would run (a
/// plugin may declare `sort` or `min` for complex dtypes).
fn ordering_is_refused(ctx: &CaseCtx) -> Result<(), Failure> {
    let x = carr(&[c(1.0, 2.0), c(-1.0, 0.5), c(0.0, 0.0)], &[3], ctx.dtype(), ctx.device)?;
    let attempts: [(&str, ad::Result<Array>); 10] = [
        ("min", ad::min(&x, ad::ALL, false)),
        ("max", ad::max(&x, ad::ALL, false)),
        ("argmin", ad::argmin(&x, None, false)),
        ("argmax", ad::argmax(&x, None, false)),
        ("sort", ad::sort(&x, -1, ad::Order::Ascending)),
        ("argsort", ad::argsort(&x, -1, ad::Order::Ascending)),
        ("searchsorted", ad::searchsorted(&x, &x, ad::Side::Left)),
        ("less", ad::less(&x, &x)),
        ("maximum", ad::maximum(&x, &x)),
        ("clip", ad::clip(&x, &x, ())),
    ];
    for (op, got) in attempts {
        expect_err(op, "InvalidDType", got, |e| matches!(e, Error::InvalidDType { .. }))?;
    }
    Ok(())
}

fn equality(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let a = vec![c(1.0, 2.0), c(1.0, -2.0), c(f64::NAN, 0.0), c(-0.0, 0.0)];
    let b = vec![c(1.0, 2.0), c(1.0, 2.0), c(f64::NAN, 0.0), c(0.0, -0.0)];
    let (x, y) = (carr(&a, &[4], dt, ctx.device)?, carr(&b, &[4], dt, ctx.device)?);
    let eq = ad::equal(&x, &y)?.to_vec::<bool>()?;
    check(
        eq == [true, false, false, true],
        "equal",
        "[true, false, false, true]",
        format!("{eq:?}"),
    )?;
    let ne = ad::not_equal(&x, Complex32::new(1.0, -2.0))?.to_vec::<bool>()?;
    check(
        ne == [true, false, true, true],
        "not_equal scalar",
        "[true, false, true, true]",
        format!("{ne:?}"),
    )?;
    Ok(())
}

fn reductions(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let a = rounded(&sample(), dt);
    let x = carr(&a, &[2, 3], dt, ctx.device)?;
    let rows = |f: fn(C, C) -> C, init: C| {
        vec![
            a[..3].iter().fold(init, |s, &z| f(s, z)),
            a[3..].iter().fold(init, |s, &z| f(s, z)),
        ]
    };
    let sum = ad::sum(&x, 1, false)?;
    check(sum.dtype() == dt, "sum keeps the dtype", dt, sum.dtype())?;
    near("sum", dt, &rows(|s, z| s + z, c(0.0, 0.0)), &sum)?;
    near("prod", dt, &rows(|s, z| s * z, c(1.0, 0.0)), &ad::prod(&x, 1, false)?)?;
    let total: C = a.iter().sum();
    let mean = ad::mean(&x, None::<isize>, false)?;
    check(mean.dtype() == dt, "mean keeps the dtype", dt, mean.dtype())?;
    near("mean", dt, &[total / 6.0], &mean)?;
    expect_err(
        "var of complex",
        "an invalid dtype error",
        ad::var(&x, None::<isize>, 0.0, false),
        |e| matches!(e, Error::InvalidDType { .. }),
    )?;
    Ok(())
}

fn matmul(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let (a, b) = (rounded(&sample(), dt), rounded(&other(), dt));
    let (x, y) = (carr(&a, &[2, 3], dt, ctx.device)?, carr(&b, &[3, 2], dt, ctx.device)?);
    let mut want = Vec::new();
    for i in 0..2 {
        for j in 0..2 {
            want.push((0..3).map(|p| a[i * 3 + p] * b[p * 2 + j]).sum::<C>());
        }
    }
    near("matmul", dt, &want, &ad::matmul(&x, &y)?)
}

fn where_(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let (a, b) = (rounded(&sample(), dt), rounded(&other(), dt));
    let (x, y) = (carr(&a, &[6], dt, ctx.device)?, carr(&b, &[6], dt, ctx.device)?);
    let cond = Array::from_vec(vec![true, false, false, true, true, false], &[6], ctx.device)?;
    let want: Vec<C> = (0..6)
        .map(|i| if [0, 3, 4].contains(&i) { a[i] } else { b[i] })
        .collect();
    near("where", dt, &want, &ad::where_(&cond, &x, &y)?)
}

fn astype(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let real = dt.real_dtype();
    let r = crate::reference::array(&[1.5, -0.0, 3.0], &[3], real, ctx.device)?;
    near(
        "real to complex",
        dt,
        &[c(1.5, 0.0), c(-0.0, 0.0), c(3.0, 0.0)],
        &r.astype(dt)?,
    )?;
    let x = carr(&[c(0.0, 0.0), c(0.0, -1.0), c(2.0, 0.0)], &[3], dt, ctx.device)?;
    let b = x.astype(DType::Bool)?.to_vec::<bool>()?;
    check(
        b == [false, true, true],
        "complex to bool",
        "[false, true, true]",
        format!("{b:?}"),
    )?;
    expect_err(
        "complex to a real dtype",
        "an invalid dtype error",
        x.astype(real),
        |e| matches!(e, Error::InvalidDType { .. }),
    )?;
    Ok(())
}

fn complex_to_complex(ctx: &CaseCtx) -> Result<(), Failure> {
    let a = rounded(&sample(), DType::C64);
    let x = carr(&a, &[6], DType::C64, ctx.device)?;
    let up = x.astype(DType::C128)?;
    near("c64 to c128", DType::C128, &a, &up)?;
    near("c128 to c64", DType::C64, &a, &up.astype(DType::C64)?)
}

fn special_values(ctx: &CaseCtx) -> Result<(), Failure> {
    let dt = ctx.dtype();
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let x = carr(
        &[c(-4.0, 0.0), c(-4.0, -0.0), c(-0.0, 0.0), c(inf, 0.0), c(inf, nan)],
        &[5],
        dt,
        ctx.device,
    )?;
    let sqrt = ad::sqrt(&x)?.to_c128_vec()?;
    check(
        sqrt[0] == c(0.0, 2.0) && sqrt[1] == c(0.0, -2.0),
        "sqrt on both sides of the cut",
        "+-2i",
        format!("{} {}", sqrt[0], sqrt[1]),
    )?;
    check(sqrt[1].im.is_sign_negative(), "sqrt(-4-0i)", "-2i", sqrt[1])?;
    let log = ad::log(&x)?.to_c128_vec()?;
    check(
        log[2].re == -inf && log[2].im == rounded(&[c(std::f64::consts::PI, 0.0)], dt)[0].re,
        "log(-0+0i)",
        "-inf+pi i",
        log[2],
    )?;
    let exp = ad::exp(&x)?.to_c128_vec()?;
    check(exp[3] == c(inf, 0.0), "exp(inf+0i)", "inf+0i", exp[3])?;
    let abs = ad::abs(&x)?.to_f64_vec()?;
    check(abs[4] == inf, "abs(inf+nan i)", "inf", abs[4])?;
    let nan_ = ad::isnan(&x)?.to_vec::<bool>()?;
    let inf_ = ad::isinf(&x)?.to_vec::<bool>()?;
    check(
        nan_ == [false, false, false, false, true],
        "isnan",
        "nan in either part",
        format!("{nan_:?}"),
    )?;
    check(
        inf_ == [false, false, false, true, true],
        "isinf",
        "inf in either part",
        format!("{inf_:?}"),
    )?;
    let one = carr(&[c(1.0, 1.0)], &[1], dt, ctx.device)?;
    let zero = carr(&[c(0.0, 0.0)], &[1], dt, ctx.device)?;
    let q = ad::divide(&one, &zero)?.to_c128_vec()?;
    check(q[0].re == inf && q[0].im == inf, "(1+1i)/0", "inf+inf i", q[0])?;
    Ok(())
}

/// Every pair of these as real and imaginary parts: signed zeros, finite
/// values on both sides of 1, the largest and smallest magnitudes c64
/// holds, infinities and NaN.
const GRID: [f64; 11] = [
    0.0,
    -0.0,
    0.5,
    -1.5,
    3.0,
    1e30,
    -1e-30,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1.0,
];

/// Whether `got` is `want` as NumPy would compare them: NaN for NaN (any
/// sign), infinities and zeros exactly (the zero's sign included), other
/// values within `tol` relative to `scale`. A zero that is a tiny value
/// rounded (`exact`, the result in c128, is not 0) may have either sign.
fn same_component(want: f64, got: f64, exact: f64, tol: f64, scale: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        want.is_nan() && got.is_nan()
    } else if want.is_infinite() || (want == 0.0 && exact == 0.0) {
        want.to_bits() == got.to_bits()
    } else {
        (want - got).abs() <= tol * scale
    }
}

/// [`same_component`] for both components.
fn same_complex(want: C, got: C, exact: C, tol: f64, scale: f64) -> bool {
    same_component(want.re, got.re, exact.re, tol, scale) && same_component(want.im, got.im, exact.im, tol, scale)
}

/// The complex functions on a grid of special and extreme values, against
/// the same functions on `cpu:0` (the host kernels, which follow C99
/// Annex G and are compared with NumPy's results on the same kinds of
/// values): the special values, the signs of zero results and the
/// branch cuts' sides. A function the device does not implement for the
/// dtype is passed over.
fn special_grid_matches_cpu(ctx: &CaseCtx) -> Result<(), Failure> {
    use UnaryOp as U;
    type F = fn(&Array) -> anydev_core::Result<Array>;
    let (dt, device) = (ctx.dtype(), ctx.device);
    let backend = ctx.runtime.backend(device)?;
    if !backend.supports(device.index(), OpCode::Copy, dt) {
        return Ok(());
    }
    let grid: Vec<C> = GRID.iter().flat_map(|&re| GRID.map(|im| c(re, im))).collect();
    let x = carr(&grid, &[grid.len()], dt, device)?;
    let host = x.to_device(Device::cpu())?;
    let wide = host.astype(DType::C128)?;
    let table: [(U, F); 20] = [
        (U::Sqrt, ad::sqrt),
        (U::Exp, ad::exp),
        (U::Expm1, ad::expm1),
        (U::Log, ad::log),
        (U::Log1p, ad::log1p),
        (U::Sin, ad::sin),
        (U::Cos, ad::cos),
        (U::Tan, ad::tan),
        (U::Sinh, ad::sinh),
        (U::Cosh, ad::cosh),
        (U::Tanh, ad::tanh),
        (U::Asin, ad::asin),
        (U::Acos, ad::acos),
        (U::Atan, ad::atan),
        (U::Asinh, ad::asinh),
        (U::Acosh, ad::acosh),
        (U::Atanh, ad::atanh),
        (U::Reciprocal, ad::reciprocal),
        (U::Square, ad::square),
        (U::Sign, ad::sign),
    ];
    let mut wrong = Vec::new();
    for (op, f) in table {
        if !backend.supports(device.index(), OpCode::Unary(op), dt) {
            continue;
        }
        let (got, want) = (f(&x)?.to_c128_vec()?, f(&host)?.to_c128_vec()?);
        let exact = f(&wide)?.to_c128_vec()?;
        for (((z, w), g), e) in grid.iter().zip(&want).zip(&got).zip(&exact) {
            let scale = if w.norm().is_finite() { w.norm() } else { 1.0 };
            if !same_complex(*w, *g, *e, 4.0 * tol(dt), scale) {
                wrong.push(format!("{op}({z}) = {g}, cpu gives {w}"));
            }
        }
    }
    check(
        wrong.is_empty(),
        "the functions at special values",
        "cpu's results",
        wrong.join("; "),
    )
}

/// Finite values from near the largest `c64` holds down to 1e-18, whose
/// squares stay normal, and an infinity.
const LARGE_AND_SMALL: [f64; 11] = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    1e-18,
    1e30,
    1.5e38,
    -2e38,
    3e38,
    f32::MAX as f64,
    f64::NEG_INFINITY,
];

/// `multiply` and `divide` of every pair and `square` of every value of a
/// grid of large and small components, against `cpu:0`, within rounding
/// of `|z| |w|` (`|z| / |w|` for quotients). A partial product or a
/// divisor's sum of squares may overflow where the result does not
/// (`(3e38 + 3e38i)(2 + 2i)` is `0 + 1.2e39i`, `2 * 3e38 * 1e-37` is 60,
/// `(3e38 + 3e38i) / (3e38 + 3e38i)` is 1), and beside an infinite
/// component it must not turn an infinite result into NaN; the host
/// computes `c64` in `f64`, and no device may give NaN or infinity there.
fn products_of_large_values(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dt, device) = (ctx.dtype(), ctx.device);
    let backend = ctx.runtime.backend(device)?;
    let ops = [
        OpCode::Copy,
        OpCode::Binary(BinaryOp::Multiply),
        OpCode::Binary(BinaryOp::Divide),
        OpCode::Unary(UnaryOp::Square),
    ];
    if !ops.iter().all(|&op| backend.supports(device.index(), op, dt)) {
        return Ok(());
    }
    let values = rounded(
        &LARGE_AND_SMALL
            .iter()
            .flat_map(|&re| LARGE_AND_SMALL.map(|im| c(re, im)))
            .collect::<Vec<_>>(),
        dt,
    );
    let n = values.len();
    let column = carr(&values, &[n, 1], dt, device)?;
    let row = column.reshape(&[1, -1])?;
    let wide = |x: &Array| -> Result<Array, Failure> { Ok(x.to_device(Device::cpu())?.astype(DType::C128)?) };
    let pairs: Vec<(C, C)> = values
        .iter()
        .flat_map(|z| values.iter().map(move |w| (*z, *w)))
        .collect();
    let squares = values.iter().map(|z| (*z, *z));
    let (column_host, row_host) = (column.to_device(Device::cpu())?, row.to_device(Device::cpu())?);
    let mut wrong = Vec::new();
    for (what, got, host, exact, inputs) in [
        (
            "multiply",
            ad::multiply(&column, &row)?,
            ad::multiply(&column_host, &row_host)?,
            ad::multiply(&wide(&column)?, &wide(&row)?)?,
            pairs.clone(),
        ),
        (
            "divide",
            ad::divide(&column, &row)?,
            ad::divide(&column_host, &row_host)?,
            ad::divide(&wide(&column)?, &wide(&row)?)?,
            pairs.clone(),
        ),
        (
            "square",
            ad::square(&row)?,
            ad::square(&row_host)?,
            ad::square(&wide(&row)?)?,
            squares.collect(),
        ),
    ] {
        let (got, want, exact) = (got.to_c128_vec()?, host.to_c128_vec()?, exact.to_c128_vec()?);
        for ((&(z, w), g), (h, e)) in inputs.iter().zip(&got).zip(want.iter().zip(&exact)) {
            let right = if what == "divide" {
                // Finite quotients of finite values only, within rounding
                // and without the signs of zeros: infinite operands and
                // division by zero are the special-value grid's, and the
                // sign of a zero that rounding leaves depends on the order
                // of operations, in Smith's algorithm too.
                let scale = z.norm() / w.norm();
                let component = |h: f64, g: f64| match h.is_finite() {
                    true => (h - g).abs() <= 4.0 * tol(dt) * scale,
                    false => h.to_bits() == g.to_bits() || (h.is_nan() && g.is_nan()),
                };
                !(z.norm().is_finite() && w.norm().is_finite() && w.norm() > 0.0)
                    || (component(h.re, g.re) && component(h.im, g.im))
            } else {
                same_complex(*h, *g, *e, 4.0 * tol(dt), z.norm() * w.norm())
            };
            if !right {
                wrong.push(format!("{what}({z}, {w}) = {g}, cpu gives {h}"));
            }
        }
    }
    check(
        wrong.is_empty(),
        "products of large values",
        "cpu's results",
        wrong.join("; "),
    )
}

/// The cases of one complex dtype: each declares the real component
/// dtype (results of abs/real/imag, operands of promotion) and bool
/// (comparisons, conditions) it touches, so a device with c64 but no f64
/// still runs every c64 case.
fn cases_for(dt: DType) -> Vec<Case> {
    use BinaryOp as B;
    use UnaryOp as U;
    let real = dt.real_dtype();
    let case = |name: &str, body| Case::new(format!("complex::{dt}_{name}"), body).dtypes(&[dt]);
    let ops = |case: Case, codes: &[OpCode]| codes.iter().fold(case, |c, &op| c.op(op));
    let with_real = |case: Case| case.needs(Need::DType(real));
    let with_bool = |case: Case| case.needs(Need::DType(DType::Bool));
    vec![
        ops(
            case("arithmetic", arithmetic),
            &[B::Add, B::Subtract, B::Multiply, B::Divide, B::Pow].map(OpCode::Binary),
        )
        .op(OpCode::Fill)
        .op(OpCode::Copy),
        with_real(ops(
            case("promotion", promotion),
            &[B::Add, B::Multiply, B::Subtract].map(OpCode::Binary),
        ))
        .ops_for(real, &[OpCode::Cast]),
        with_real(ops(
            case("functions", functions),
            &[
                U::Sqrt,
                U::Exp,
                U::Log,
                U::Sin,
                U::Tanh,
                U::Asinh,
                U::Reciprocal,
                U::Square,
                U::Abs,
            ]
            .map(OpCode::Unary),
        )),
        ops(
            case("near_singular_points", near_singular_points),
            &[U::Atanh, U::Atan].map(OpCode::Unary),
        ),
        with_real(ops(
            case("conj_real_imag", conj_real_imag),
            &[U::Conj, U::Real, U::Imag].map(OpCode::Unary),
        )),
        case("ordering_is_refused", ordering_is_refused),
        with_bool(ops(
            case("equality", equality),
            &[B::Equal, B::NotEqual].map(OpCode::Binary),
        )),
        ops(
            case("reductions", reductions),
            &[
                OpCode::Reduce(ReduceOp::Sum),
                OpCode::Reduce(ReduceOp::Prod),
                OpCode::Binary(B::Divide),
            ],
        ),
        case("matmul", matmul).op(OpCode::Matmul),
        with_bool(case("where", where_).op(OpCode::Where)),
        with_bool(with_real(case("astype", astype).op(OpCode::Cast))).ops_for(real, &[OpCode::Cast]),
        with_bool(with_real(ops(
            case("special_values", special_values),
            &[
                OpCode::Unary(U::Sqrt),
                OpCode::Unary(U::Log),
                OpCode::Unary(U::Exp),
                OpCode::Unary(U::Abs),
                OpCode::Unary(U::IsNan),
                OpCode::Unary(U::IsInf),
                OpCode::Binary(B::Divide),
            ],
        ))),
        // Both compute their references on cpu:0 (in c128 too), so they
        // touch it whatever the device under test, and check the device's
        // support themselves.
        case("special_grid_matches_cpu", special_grid_matches_cpu)
            .asks_support_itself()
            .all_devices(),
        case("products_of_large_values", products_of_large_values)
            .asks_support_itself()
            .all_devices(),
    ]
}

pub fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = DTYPES.into_iter().flat_map(cases_for).collect();
    cases.push(
        Case::new("complex::c64_c128_round_trip", complex_to_complex)
            .needs(Need::DType(DType::C64))
            .needs(Need::DType(DType::C128))
            .ops_for(DType::C64, &[OpCode::Cast])
            .ops_for(DType::C128, &[OpCode::Cast]),
    );
    cases.push(
        Case::new(
            "complex::f64_operands_keep_their_precision",
            f64_operands_keep_their_precision,
        )
        .needs(Need::DType(DType::C64))
        .needs(Need::DType(DType::F64))
        .asks_support_itself(),
    );
    cases
}
