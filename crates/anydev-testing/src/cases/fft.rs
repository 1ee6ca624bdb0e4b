//! The `fft` extension's helpers: sample frequencies against NumPy's
//! definition (`results * (1 / (n * d))`, computed here in f64 and rounded
//! once), and the shifts against index arithmetic.

use crate::case::{check_eq, expect_err, Case, CaseCtx, Failure, Need};
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, fft};
use anydev_core::ops::{BinaryOp, OpCode};
use anydev_core::{DType, Error};

pub fn cases() -> Vec<Case> {
    let i64_op = |op| Need::Op(op, Some(DType::I64));
    vec![
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
    ]
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
    let back = fft::ifftshift(&fft::fftshift(&x, ad::ALL)?, ad::ALL)?;
    check_eq("ifftshift(fftshift(x))", v, back.to_f64_vec()?)
}
