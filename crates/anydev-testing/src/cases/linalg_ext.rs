//! The `linalg` extension functions composed in the array layer
//! (`diagonal`, `trace`, `outer`, `cross`, `vector_norm`, `matrix_norm`,
//! `matrix_power`), against plain-loop references, and the clean
//! `Unsupported` of what is not there yet.

use crate::case::Need;
use crate::case::{check_eq, expect_err, Case, CaseCtx, Failure};
use crate::cases::complex::carr;
use crate::reference::{self as r, check_array};
use anydev_array::{self as ad, NormOrd};
use anydev_core::ops::{BinaryOp, OpCode, ReduceOp, UnaryOp};
use anydev_core::{DType, Error};
use num_complex::Complex64 as C;

pub fn cases() -> Vec<Case> {
    let floats = &[DType::F32, DType::F64];
    let mut cases = vec![
        Case::new("linalg_ext::diagonal_and_trace", diagonal_and_trace)
            .dtypes(&[DType::F32, DType::I32])
            .op(OpCode::Copy)
            .op(OpCode::Cast)
            .op(OpCode::Reduce(ReduceOp::Sum))
            // Integers sum in i64.
            .needs(Need::Op(OpCode::Reduce(ReduceOp::Sum), Some(DType::I64))),
        Case::new("linalg_ext::outer_and_cross", outer_and_cross)
            .dtypes(floats)
            .op(OpCode::Binary(BinaryOp::Multiply))
            .op(OpCode::Binary(BinaryOp::Subtract))
            .op(OpCode::Copy),
        Case::new("linalg_ext::norms", norms)
            .dtypes(floats)
            .op(OpCode::Unary(UnaryOp::Abs))
            .op(OpCode::Unary(UnaryOp::Sqrt))
            .op(OpCode::Binary(BinaryOp::Pow))
            .op(OpCode::Reduce(ReduceOp::Sum))
            .op(OpCode::Reduce(ReduceOp::Max))
            .op(OpCode::Reduce(ReduceOp::Min))
            .op(OpCode::Unary(UnaryOp::Square))
            .op(OpCode::Cast)
            // ord 0 counts non-zeros and casts the count to the float.
            .counts_nonzero()
            .needs(Need::Op(OpCode::Cast, Some(DType::I64))),
        Case::new("linalg_ext::matrix_power", matrix_power)
            .dtypes(&[DType::F32, DType::I32])
            .op(OpCode::Matmul)
            .op(OpCode::Copy)
            // The identity of n = 0 is an eye: i64 offsets compared.
            .needs(Need::Op(OpCode::Arange, Some(DType::I64)))
            .needs(Need::Op(OpCode::Binary(BinaryOp::Subtract), Some(DType::I64)))
            .needs(Need::Op(OpCode::Binary(BinaryOp::Equal), Some(DType::I64)))
            .needs(Need::Op(OpCode::Cast, Some(DType::Bool))),
    ];
    // Complex norms reduce the magnitudes in the component dtype, so each
    // complex dtype is a case of its own declaring its component's ops.
    for (complex, real) in [(DType::C64, DType::F32), (DType::C128, DType::F64)] {
        cases.push(
            Case::new(format!("linalg_ext::complex_norms_{complex}"), complex_norms)
                .dtypes(&[complex])
                .op(OpCode::Unary(UnaryOp::Abs))
                .ops_for(
                    real,
                    &[
                        OpCode::Unary(UnaryOp::Square),
                        OpCode::Unary(UnaryOp::Sqrt),
                        OpCode::Reduce(ReduceOp::Sum),
                        OpCode::Reduce(ReduceOp::Max),
                    ],
                ),
        );
    }
    cases
}

fn diagonal_and_trace(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    // Two 3 x 4 matrices.
    let v: Vec<f64> = (0..24).map(|i| ((i * 7) % 11) as f64).collect();
    let x = r::array(&v, &[2, 3, 4], dtype, dev)?;
    for offset in [-3isize, -1, 0, 1, 3, 4] {
        let mut want = Vec::new();
        let mut traces = Vec::new();
        for b in 0..2 {
            let diag: Vec<f64> = (0..3isize)
                .map(|i| (i, i + offset))
                .filter(|&(_, j)| (0..4).contains(&j))
                .map(|(i, j)| v[b * 12 + i as usize * 4 + j as usize])
                .collect();
            traces.push(diag.iter().sum());
            want.extend(diag);
        }
        let len = want.len() / 2;
        check_array(
            &format!("diagonal(offset={offset})"),
            &[2, len],
            &want,
            &ad::diagonal(&x, offset)?,
        )?;
        check_array(
            &format!("trace(offset={offset})"),
            &[2],
            &traces,
            &ad::trace(&x, offset)?,
        )?;
    }
    // Of a transposed view: the strides compose.
    let t = x.matrix_transpose()?;
    let want: Vec<f64> = (0..2)
        .flat_map(|b| (0..3).map(move |i| (b, i)))
        .map(|(b, i)| v[b * 12 + i * 4 + i])
        .collect();
    check_array("diagonal of the transpose", &[2, 3], &want, &ad::diagonal(&t, 0)?)?;
    expect_err(
        "diagonal of a vector",
        "InvalidArgument",
        ad::diagonal(&x.flatten()?, 0),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    Ok(())
}

fn outer_and_cross(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let (a, b) = ([1.0, -2.0, 3.0], [0.5, 4.0, -1.0, 2.0]);
    let want: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| x * y)).collect();
    let (xa, xb) = (r::array(&a, &[3], dtype, dev)?, r::array(&b, &[4], dtype, dev)?);
    check_array("outer", &[3, 4], &want, &ad::outer(&xa, &xb)?)?;
    // Cross products of two rows against one vector (broadcast), along the last axis.
    let rows = [1.0, 0.0, 0.0, 2.0, 3.0, 4.0];
    let v = [0.0, 1.0, -1.0];
    let cross = |p: &[f64]| {
        [
            p[1] * v[2] - p[2] * v[1],
            p[2] * v[0] - p[0] * v[2],
            p[0] * v[1] - p[1] * v[0],
        ]
    };
    let want: Vec<f64> = rows.chunks(3).flat_map(cross).collect();
    let (xr, xv) = (r::array(&rows, &[2, 3], dtype, dev)?, r::array(&v, &[3], dtype, dev)?);
    check_array("cross", &[2, 3], &want, &ad::cross(&xr, &xv, -1)?)?;
    // Along axis 0 of the transposed rows.
    let by_column = ad::cross(&xr.matrix_transpose()?, &xv.reshape(&[3, 1])?, 0)?;
    check_array("cross along axis 0", &[3, 2], &transpose(&want, 2, 3), &by_column)?;
    expect_err("cross of 4-vectors", "ShapeMismatch", ad::cross(&xb, &xb, -1), |e| {
        matches!(e, Error::ShapeMismatch { .. })
    })?;
    Ok(())
}

/// The result of a function that needs a factorization: `Some` where the
/// device runs the op (a kernel for its kind, or its plugin's own), `None`
/// after checking that a device which does not list the op says
/// `NoKernel` naming the device and the `cpu` kernel, or that a device
/// without the result's dtype (`eigvals`' complex one) says
/// `UnsupportedDType` naming it.
pub(crate) fn factorized(
    dev: anydev_core::Device,
    result: anydev_core::Result<anydev_array::Array>,
) -> Result<Option<anydev_array::Array>, Failure> {
    match result {
        Ok(array) => Ok(Some(array)),
        Err(Error::NoKernel {
            op, device, available, ..
        }) if device == dev
            && available.iter().any(|k| k == "cpu")
            && !anydev_array::extension::device_ops(dev)?.contains(&op) =>
        {
            Ok(None)
        }
        Err(Error::UnsupportedDType { dtype, device })
            if device == dev && !anydev_array::runtime().capabilities(dev)?.supports_dtype(dtype) =>
        {
            Ok(None)
        }
        Err(e) => Err(Failure::new(
            "a factorization",
            "a result, NoKernel naming cpu, or UnsupportedDType of a dtype the device lacks",
            format!("{e:?}"),
        )),
    }
}

fn transpose(v: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols)
        .flat_map(|j| (0..rows).map(move |i| v[i * cols + j]))
        .collect()
}

fn norms(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let v = [3.0, -4.0, 0.0, 1.0, -2.0, 0.5];
    let x = r::array(&v, &[2, 3], dtype, dev)?;
    let p_norm = |p: f64, part: &[f64]| part.iter().map(|e: &f64| e.abs().powf(p)).sum::<f64>().powf(1.0 / p);
    for (ord, want) in [
        (2.0, p_norm(2.0, &v)),
        (1.0, p_norm(1.0, &v)),
        (3.0, p_norm(3.0, &v)),
        (f64::INFINITY, 4.0),
        (f64::NEG_INFINITY, 0.0),
        (0.0, 5.0),
    ] {
        let got = ad::vector_norm(&x, ad::ALL, false, ord)?;
        r::check_close(&format!("vector_norm(ord={ord})"), dtype, &[want], &got.to_f64_vec()?)?;
    }
    let rows: Vec<f64> = v.chunks(3).map(|row| p_norm(2.0, row)).collect();
    check_array(
        "vector_norm over axis 1, keepdims",
        &[2, 1],
        &rows,
        &ad::vector_norm(&x, 1, true, 2.0)?,
    )?;
    // Matrix norms: column sums of |x| are 4, 6, 0.5; row sums 7, 3.5.
    for (ord, want) in [
        (NormOrd::Fro, p_norm(2.0, &v)),
        (NormOrd::P(1.0), 6.0),
        (NormOrd::P(-1.0), 0.5),
        (NormOrd::P(f64::INFINITY), 7.0),
        (NormOrd::P(f64::NEG_INFINITY), 3.5),
    ] {
        let got = ad::matrix_norm(&x, false, ord)?;
        check_eq(
            format!("matrix_norm({ord:?}) shape"),
            Vec::<usize>::new(),
            got.shape().to_vec(),
        )?;
        r::check_close(&format!("matrix_norm({ord:?})"), dtype, &[want], &got.to_f64_vec()?)?;
    }
    check_eq(
        "matrix_norm keepdims shape",
        vec![1, 1],
        ad::matrix_norm(&x, true, NormOrd::P(1.0))?.shape().to_vec(),
    )?;
    // From the singular values: the eigenvalues of x xᵀ = [[25, 11], [11, 5.25]].
    let (trace, det) = (30.25f64, 25.0 * 5.25 - 121.0);
    let root = (trace * trace - 4.0 * det).sqrt();
    let (large, small) = (((trace + root) / 2.0).sqrt(), ((trace - root) / 2.0).sqrt());
    for (ord, want) in [
        (NormOrd::P(2.0), large),
        (NormOrd::P(-2.0), small),
        (NormOrd::Nuc, large + small),
    ] {
        if let Some(got) = factorized(dev, ad::matrix_norm(&x, false, ord))? {
            r::check_close(&format!("matrix_norm({ord:?})"), dtype, &[want], &got.to_f64_vec()?)?;
        }
    }
    let ints = r::array(&v[..2], &[2], DType::I32, dev)?;
    expect_err(
        "vector_norm of integers",
        "InvalidDType",
        ad::vector_norm(&ints, ad::ALL, false, 2.0),
        |e| matches!(e, Error::InvalidDType { .. }),
    )?;
    Ok(())
}

/// The norms of complex input are those of its magnitudes, in the real
/// component dtype.
fn complex_norms(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let real = dtype.real_dtype();
    // A 2 x 2 matrix of magnitudes 5, 2, 4 and 2: a 2-norm of 7, column
    // sums of 9 and 4.
    let z = [
        C::new(3.0, 4.0),
        C::new(0.0, -2.0),
        C::new(2.4, -3.2),
        C::new(-1.2, 1.6),
    ];
    let x = carr(&z, &[2, 2], dtype, dev)?;
    for (what, got, want) in [
        ("vector_norm(ord=2)", ad::vector_norm(&x, ad::ALL, false, 2.0)?, 7.0),
        (
            "vector_norm(ord=inf)",
            ad::vector_norm(&x, ad::ALL, false, f64::INFINITY)?,
            5.0,
        ),
        ("matrix_norm(fro)", ad::matrix_norm(&x, false, NormOrd::Fro)?, 7.0),
        ("matrix_norm(ord=1)", ad::matrix_norm(&x, false, NormOrd::P(1.0))?, 9.0),
    ] {
        check_eq(format!("{what} dtype"), real, got.dtype())?;
        r::check_close(what, real, &[want], &got.to_f64_vec()?)?;
    }
    Ok(())
}

fn matrix_power(ctx: &CaseCtx) -> Result<(), Failure> {
    let (dtype, dev) = (ctx.dtype(), ctx.device);
    let m = [1.0, 1.0, 1.0, 0.0]; // Fibonacci: m^n = [[F(n+1), F(n)], [F(n), F(n-1)]]
    let x = r::array(&m, &[2, 2], dtype, dev)?;
    let fib = |n: usize| (0..n).fold((0.0, 1.0), |(a, b), _| (b, a + b)).0;
    for n in [0usize, 1, 2, 5, 12] {
        let want = if n == 0 {
            vec![1.0, 0.0, 0.0, 1.0]
        } else {
            vec![fib(n + 1), fib(n), fib(n), fib(n - 1)]
        };
        check_array(
            &format!("matrix_power(n={n})"),
            &[2, 2],
            &want,
            &ad::matrix_power(&x, n as i64)?,
        )?;
    }
    if dtype.is_float() {
        // [[1, 1], [1, 0]]⁻¹ = [[0, 1], [1, -1]]; its square is [[1, -1], [-1, 2]].
        if let Some(got) = factorized(dev, ad::matrix_power(&x, -2))? {
            check_array("matrix_power(n=-2)", &[2, 2], &[1.0, -1.0, -1.0, 2.0], &got)?;
        }
    }
    let wide = r::array(&[1.0; 6], &[2, 3], dtype, dev)?;
    expect_err(
        "matrix_power of a 2 x 3 matrix",
        "InvalidArgument",
        ad::matrix_power(&wide, 2),
        |e| matches!(e, Error::InvalidArgument { .. }),
    )?;
    Ok(())
}
