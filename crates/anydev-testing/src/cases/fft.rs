//! The `fft` extension: the transforms against a direct O(n²) DFT in
//! f64, on every device with complex arithmetic (through the device's
//! kernels where its kind has them, else composed from its array ops, at
//! lengths that take both the radix-2 and the Bluestein path); sample frequencies against
//! NumPy's definition (`results * (1 / (n * d))`, computed here in f64 and
//! rounded once), and the shifts against index arithmetic.

use crate::case::{check, check_eq, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::fft::Norm;
use anydev_array::{self as ad, fft, Array, Complex32, Complex64};
use anydev_core::ops::{BinaryOp, OpCode, UnaryOp};
use anydev_core::{DType, Device, Error};

/// What a complex transform dispatches where it is composed from the
/// device's ops, for the case's (complex) dtype.
fn composed(case: Case) -> Case {
    case.op(OpCode::Binary(BinaryOp::Multiply))
        .op(OpCode::Binary(BinaryOp::Add))
        .op(OpCode::Binary(BinaryOp::Subtract))
        .op(OpCode::Unary(UnaryOp::Conj))
        .op(OpCode::Unary(UnaryOp::Real))
        .op(OpCode::Copy)
        .op(OpCode::Fill)
        .op(OpCode::Cast)
}

pub fn cases() -> Vec<Case> {
    let i64_op = |op| Need::Op(op, Some(DType::I64));
    // One case per precision: the transforms of real input need the real
    // dtype and its cast too.
    let transforms = [(DType::C64, DType::F32), (DType::C128, DType::F64)].map(|(complex, real)| {
        composed(Case::new(
            format!("fft::transforms_match_the_dft_{real}"),
            transforms_match_the_dft,
        ))
        .dtypes(&[complex])
        .needs(Need::DType(real))
        .needs(Need::Op(OpCode::Cast, Some(real)))
    });
    let mut cases = vec![
        Case::new("fft::frequencies", frequencies)
            .dtypes(&[DType::F32, DType::F64])
            .op(OpCode::Binary(BinaryOp::Multiply))
            .needs(i64_op(OpCode::Arange))
            .needs(i64_op(OpCode::Binary(BinaryOp::GreaterEqual)))
            .needs(i64_op(OpCode::Binary(BinaryOp::Subtract)))
            .needs(i64_op(OpCode::Where))
            .needs(i64_op(OpCode::Cast))
            .needs(Need::DType(DType::Bool)),
        Case::new("fft::shifts", shifts)
            .dtypes(&[DType::F32, DType::I32])
            .op(OpCode::Copy),
        composed(Case::new("fft::long_transforms", long_transforms)).dtypes(&[DType::C64, DType::C128]),
        Case::new("fft::real_input_keeps_its_precision", real_input_keeps_its_precision)
            .dtypes(&[DType::F32, DType::F64])
            .asks_support_itself(),
        Case::new("fft::integer_input_lands_on_the_devices_floats", integer_input)
            .dtypes(&[DType::I32])
            .needs(Need::DType(DType::C64))
            .asks_support_itself(),
    ];
    cases.extend(transforms);
    cases
}

/// The elements of a complex array as `(re, im)` pairs in f64.
pub(crate) fn complex_values(a: &Array) -> Result<Vec<Complex64>, Failure> {
    Ok(match a.dtype() {
        DType::C64 => a
            .to_vec::<Complex32>()?
            .into_iter()
            .map(|v| Complex64::new(v.re.into(), v.im.into()))
            .collect(),
        _ => a.to_vec::<Complex64>()?,
    })
}

/// The DFT of `x` along its only axis: `sum_k x[k] e^(∓2πi jk/n)`, scaled.
fn dft(x: &[Complex64], inverse: bool, scale: f64) -> Vec<Complex64> {
    let n = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n)
        .map(|j| {
            let sum: Complex64 = x
                .iter()
                .enumerate()
                .map(|(k, &v)| {
                    v * Complex64::from_polar(1.0, sign * 2.0 * std::f64::consts::PI * (j * k % n) as f64 / n as f64)
                })
                .sum();
            sum * scale
        })
        .collect()
}

/// Within `tol` of each other, relative to the largest magnitude.
fn near(what: &str, want: &[Complex64], got: &[Complex64], tol: f64) -> Result<(), Failure> {
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.norm()));
    let worst = want.iter().zip(got).map(|(w, g)| (w - g).norm()).fold(0.0, f64::max);
    check(
        want.len() == got.len() && worst <= tol * scale,
        what,
        format!("{want:?} (within {tol} relative)"),
        format!("{got:?}"),
    )
}

fn real(v: &[f64]) -> Vec<Complex64> {
    v.iter().map(|&x| Complex64::new(x, 0.0)).collect()
}

fn transforms_match_the_dft(ctx: &CaseCtx) -> Result<(), Failure> {
    let (complex, dev) = (ctx.dtype(), ctx.device);
    let dtype = complex.real_dtype();
    let tol = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
    let values = r::sample(dtype, 7, 11);
    let x = r::array(&values, &[7], dtype, dev)?;
    let spectrum = fft::fft(&x, None, -1, Norm::Backward)?;
    check_eq("fft of real input is complex", complex, spectrum.dtype())?;
    let want = dft(&real(&values), false, 1.0);
    near("fft (n = 7)", &want, &complex_values(&spectrum)?, tol)?;
    let back = fft::ifft(&spectrum, None, 0, Norm::Backward)?;
    near("ifft(fft(x)) = x", &real(&values), &complex_values(&back)?, tol)?;
    // Real transforms: the non-negative half, and back for odd and even n.
    let half = fft::rfft(&x, None, 0, Norm::Backward)?;
    near("rfft (n = 7)", &want[..4], &complex_values(&half)?, tol)?;
    let restored = fft::irfft(&half, Some(7), 0, Norm::Backward)?;
    check_eq("irfft gives the real dtype", dtype, restored.dtype())?;
    near(
        "irfft(rfft(x), 7) = x",
        &real(&values),
        &real(&restored.to_f64_vec()?),
        tol,
    )?;
    let even = r::array(&values[..6], &[6], dtype, dev)?;
    let restored = fft::irfft(&fft::rfft(&even, None, 0, Norm::Backward)?, None, 0, Norm::Backward)?;
    near(
        "irfft(rfft(x)) = x (n = 6)",
        &real(&values[..6]),
        &real(&restored.to_f64_vec()?),
        tol,
    )?;
    // Padding, cutting and the normalization modes.
    let mut padded = values.clone();
    padded.resize(10, 0.0);
    let ortho = 1.0 / 10f64.sqrt();
    let got = fft::fft(&x, Some(10), 0, Norm::Ortho)?;
    near(
        "fft(x, n = 10, ortho)",
        &dft(&real(&padded), false, ortho),
        &complex_values(&got)?,
        tol,
    )?;
    let got = fft::ifft(&x, Some(4), 0, Norm::Forward)?;
    near(
        "ifft(x, n = 4, forward)",
        &dft(&real(&values[..4]), true, 1.0),
        &complex_values(&got)?,
        tol,
    )?;
    // Two dimensions: fftn over both axes, rfftn's last axis halved.
    let grid = r::array(&values[..6], &[2, 3], dtype, dev)?;
    let rows: Vec<Vec<Complex64>> = values[..6].chunks(3).map(|row| dft(&real(row), false, 1.0)).collect();
    let want2: Vec<Complex64> = (0..6)
        .map(|ij| {
            let column = [rows[0][ij % 3], rows[1][ij % 3]];
            dft(&column, false, 1.0)[ij / 3]
        })
        .collect();
    near(
        "fftn (2 x 3)",
        &want2,
        &complex_values(&fft::fftn(&grid, None, None, Norm::Backward)?)?,
        tol,
    )?;
    let want_r: Vec<Complex64> = want2
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 < 2)
        .map(|(_, v)| *v)
        .collect();
    let rfftn = fft::rfftn(&grid, None, None, Norm::Backward)?;
    near("rfftn (2 x 3)", &want_r, &complex_values(&rfftn)?, tol)?;
    let back = fft::irfftn(&rfftn, Some(&[2, 3]), None, Norm::Backward)?;
    near(
        "irfftn(rfftn(x)) = x",
        &real(&values[..6]),
        &real(&back.to_f64_vec()?),
        tol,
    )?;
    // Hermitian transforms: ihfft is conj(rfft) / n, hfft inverts it.
    let ih = fft::ihfft(&x, None, 0, Norm::Backward)?;
    let want_ih: Vec<Complex64> = want[..4].iter().map(|v| v.conj() / 7.0).collect();
    near("ihfft", &want_ih, &complex_values(&ih)?, tol)?;
    let h = fft::hfft(&ih, Some(7), 0, Norm::Backward)?;
    near("hfft(ihfft(x), 7) = x", &real(&values), &real(&h.to_f64_vec()?), tol)?;
    // Bad input is an error.
    let scalar = r::array(&[1.0], &[], dtype, dev)?;
    expect_err(
        "fft of a 0-d array",
        "InvalidArgument",
        fft::fft(&scalar, None, -1, Norm::Backward),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    expect_err(
        "fft with n = 0",
        "InvalidArgument",
        fft::fft(&x, Some(0), 0, Norm::Backward),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    expect_err(
        "rfft of complex input",
        "InvalidDType",
        fft::rfft(&spectrum, None, 0, Norm::Backward),
        |e| matches!(e, Error::InvalidDType { .. }),
    )?;
    let one = fft::rfft(&r::array(&[2.0], &[1], dtype, dev)?, None, 0, Norm::Backward)?;
    expect_err(
        "irfft of one point without n",
        "InvalidArgument",
        fft::irfft(&one, None, 0, Norm::Backward),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    expect_err("an unknown norm", "InvalidArgument", "sideways".parse::<Norm>(), |e| {
        matches!(e, Error::InvalidArgument { .. })
    })?;
    Ok(())
}

/// Lengths of a thousand points, batched: a power of two (ten radix-2
/// halvings where the transform is composed) and a length with a large
/// prime factor (Bluestein over 2048 points), forward and back.
fn long_transforms(ctx: &CaseCtx) -> Result<(), Failure> {
    let (complex, dev) = (ctx.dtype(), ctx.device);
    let tol = if complex == DType::C64 { 2e-5 } else { 1e-12 };
    for n in [1024usize, 998] {
        let re = r::sample(DType::F64, 2 * n, 3);
        let im = r::sample(DType::F64, 2 * n, 5);
        let signal: Vec<Complex64> = re.iter().zip(&im).map(|(&a, &b)| Complex64::new(a, b)).collect();
        let x = complex_array(&signal, &[2, n], complex, dev)?;
        let got = complex_values(&fft::fft(&x, None, -1, Norm::Backward)?)?;
        for (row, (input, output)) in signal.chunks(n).zip(got.chunks(n)).enumerate() {
            near(
                &format!("fft (n = {n}), row {row}"),
                &dft(input, false, 1.0),
                output,
                tol,
            )?;
        }
        let back = fft::ifft(&fft::fft(&x, None, -1, Norm::Ortho)?, None, -1, Norm::Ortho)?;
        near(
            &format!("ifft(fft(x)) (n = {n}, ortho)"),
            &signal,
            &complex_values(&back)?,
            tol,
        )?;
    }
    Ok(())
}

/// A transform of `f32` or `f64` input is `c64` or `c128`; a device that
/// holds the real dtype but not its complex counterpart refuses it rather
/// than give a narrower result.
fn real_input_keeps_its_precision(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let complex = dtype.complex_dtype().expect("a real float has a complex counterpart");
    let x = r::array(&[1.0, 2.0, -3.0, 0.5], &[4], dtype, dev)?;
    let holds = ctx.runtime.capabilities(dev)?.supports_dtype(complex);
    for (name, result) in [
        ("fft", fft::fft(&x, None, -1, Norm::Backward)),
        ("rfft", fft::rfft(&x, None, -1, Norm::Backward)),
    ] {
        match (holds, result) {
            (true, Ok(y)) => check_eq(format!("{name} of {dtype}: dtype"), complex, y.dtype())?,
            (false, Err(Error::UnsupportedDType { dtype: refused, .. })) if refused == complex => {}
            (holds, got) => {
                return Err(Failure::new(
                    format!("{name} of {dtype}"),
                    format!(
                        "a {complex} result where the device holds {complex} (it does: {holds}), else UnsupportedDType"
                    ),
                    format!("{:?}", got.map(|y| y.dtype())),
                ))
            }
        }
    }
    Ok(())
}

/// Integer input lands on the device's floats (design 14) for every
/// transform alike: `c128` where the device holds it, else `c64`.
fn integer_input(ctx: &CaseCtx) -> Result<(), Failure> {
    let dev = ctx.device;
    let holds = |d| ctx.runtime.capabilities(dev).map(|c| c.supports_dtype(d));
    let complex = if holds(DType::C128)? { DType::C128 } else { DType::C64 };
    let x = Array::from_slice(&[1i32, 2, -3, 0], &[4], dev)?;
    // The DFT of [1, 2, -3, 0]: X[k] = sum x[j] e^{-2 pi i jk / 4}.
    let want = [(0.0, 0.0), (4.0, -2.0), (-4.0, 0.0), (4.0, 2.0)];
    for (name, result, points) in [
        ("fft", fft::fft(&x, None, -1, Norm::Backward)?, 4),
        ("rfft", fft::rfft(&x, None, -1, Norm::Backward)?, 3),
    ] {
        check_eq(format!("{name} of i32: dtype"), complex, result.dtype())?;
        let got = result.to_c128_vec()?;
        for (k, (g, w)) in got.iter().zip(&want[..points]).enumerate() {
            let close = (g.re - w.0).abs() < 1e-5 && (g.im - w.1).abs() < 1e-5;
            check(close, format!("{name} of i32 [{k}]"), format!("{w:?}"), g)?;
        }
    }
    Ok(())
}

/// `values` as an array of complex `dtype`, rounded once.
fn complex_array(values: &[Complex64], shape: &[usize], dtype: DType, dev: Device) -> Result<Array, Failure> {
    Ok(match dtype {
        DType::C64 => {
            let narrow: Vec<Complex32> = values
                .iter()
                .map(|v| Complex32::new(v.re as f32, v.im as f32))
                .collect();
            Array::from_vec(narrow, shape, dev)?
        }
        _ => Array::from_slice(values, shape, dev)?,
    })
}

fn frequencies(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    for (n, d) in [(1usize, 1.0), (8, 0.1), (9, 2.5), (2, 1.0)] {
        let scale = 1.0 / (n as f64 * d);
        let signed = |i: usize| {
            if i <= (n - 1) / 2 {
                i as f64
            } else {
                i as f64 - n as f64
            }
        };
        let want: Vec<f64> = (0..n).map(|i| r::round_to(dtype, signed(i) * scale)).collect();
        let got = fft::fftfreq(n, d, (dtype, dev))?;
        check_array(&format!("fftfreq({n}, {d})"), &[n], &want, &got)?;
        let half: Vec<f64> = (0..=n / 2).map(|i| r::round_to(dtype, i as f64 * scale)).collect();
        check_array(
            &format!("rfftfreq({n}, {d})"),
            &[n / 2 + 1],
            &half,
            &fft::rfftfreq(n, d, (dtype, dev))?,
        )?;
    }
    expect_err("fftfreq(0)", "InvalidArgument", fft::fftfreq(0, 1.0, dev), |e| {
        matches!(e, Error::InvalidArgument { .. })
    })?;
    expect_err(
        "fftfreq with an integer dtype",
        "InvalidDType",
        fft::fftfreq(4, 1.0, (DType::I32, dev)),
        |e| matches!(e, Error::InvalidDType { .. }),
    )?;
    Ok(())
}

fn shifts(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    // A 3 x 5 array: odd and odd lengths, where the two shifts differ.
    let v: Vec<f64> = (0..15).map(|i| i as f64).collect();
    let x = r::array(&v, &[3, 5], dtype, dev)?;
    let rolled = |by: [usize; 2]| -> Vec<f64> {
        let mut out = vec![0.0; 15];
        for i in 0..3 {
            for j in 0..5 {
                out[((i + by[0]) % 3) * 5 + (j + by[1]) % 5] = v[i * 5 + j];
            }
        }
        out
    };
    check_array("fftshift", &[3, 5], &rolled([1, 2]), &fft::fftshift(&x, ad::ALL)?)?;
    check_array("ifftshift", &[3, 5], &rolled([2, 3]), &fft::ifftshift(&x, ad::ALL)?)?;
    check_array("fftshift axis 1", &[3, 5], &rolled([0, 2]), &fft::fftshift(&x, 1)?)?;
    // Each axis keeps its own shift whatever order the axes come in.
    let reversed: &[isize] = &[1, -2];
    check_array(
        "fftshift axes (1, -2)",
        &[3, 5],
        &rolled([1, 2]),
        &fft::fftshift(&x, reversed)?,
    )?;
    let back = fft::ifftshift(&fft::fftshift(&x, ad::ALL)?, ad::ALL)?;
    check_eq("ifftshift(fftshift(x))", v, back.to_f64_vec()?)
}
