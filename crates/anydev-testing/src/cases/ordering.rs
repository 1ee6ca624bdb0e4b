//! What a device promises about numbers and order that no other case
//! checks: the counter contract of random numbers, and stream ordering.

use crate::case::{check_eq, Case, CaseCtx, Failure};
use crate::philox;
use crate::reference::{self as r, check_close};
use anydev_array::{self as ad, Array};
use anydev_core::ops::{BinaryOp, Distribution, Op, OpCode, Operand};
use anydev_core::{DType, Scalar, TensorRef};

pub fn cases() -> Vec<Case> {
    vec![
        Case::new("random::counter_contract", counter_contract)
            .dtypes(&[DType::F32, DType::F64])
            .op(OpCode::Random)
            .op(OpCode::Fill),
        Case::new("streams::work_runs_in_stream_order", stream_order)
            .op(OpCode::Fill)
            .op(OpCode::Binary(BinaryOp::Add))
            .op(OpCode::Copy),
        Case::new("streams::free_while_another_stream_reads", free_while_read)
            .op(OpCode::Fill)
            .op(OpCode::Binary(BinaryOp::Add)),
    ]
}

fn view<'a>(a: &'a Array, shape: &'a [usize], strides: &'a [isize]) -> TensorRef<'a> {
    TensorRef {
        buffer: a.buffer(),
        offset: 0,
        dtype: a.dtype(),
        shape,
        strides,
    }
}

/// Element `i` of a draw is Philox4x32-10 at counter `counter + i`, in the
/// output's row-major order whatever its strides, mapped to the
/// distribution as the header defines: the same numbers on every device.
fn counter_contract(ctx: &CaseCtx) -> Result<(), Failure> {
    let dtype = ctx.dtype();
    let backend = ctx.runtime.backend(ctx.device)?;
    let stream = backend.default_stream(ctx.device.index())?;
    let seed = 0x0123_4567_89ab_cdef;
    // Uniform values are exact up to the final rounding; normal values go
    // through log, sqrt and cos, each within a few ulps of the host's: the
    // dtype's tolerance.
    let draws = [
        (
            "uniform on [-2, 3)",
            Distribution::Uniform { low: -2.0, high: 3.0 },
            7u64,
            dtype,
        ),
        (
            "normal(1, 2)",
            Distribution::Normal { mean: 1.0, std: 2.0 },
            u64::MAX - 20,
            dtype,
        ),
    ];
    for (what, dist, counter, tolerance) in draws {
        // An 8 x 8 output stored transposed: logical (row, col) sits at
        // buffer position row + 8 col and takes counter + 8 row + col.
        let out = ad::zeros(&[64], (dtype, ctx.device))?;
        let (shape, strides) = ([8usize, 8], [1isize, 8]);
        let op = Op::Random {
            out: view(&out, &shape, &strides),
            dist,
            seed,
            counter,
        };
        backend.execute(&stream, &op)?;
        let want: Vec<f64> = (0..64u64)
            .map(|p| {
                let i = (p % 8) * 8 + p / 8;
                let v = match dist {
                    Distribution::Uniform { low, high } => philox::uniform(seed, counter, i, low, high),
                    Distribution::Normal { mean, std } => philox::normal(seed, counter, i, mean, std),
                };
                r::round_to(dtype, v)
            })
            .collect();
        let what = format!("{what}, seed {seed:#x}, counter {counter} (wrapping past 2^64)");
        check_close(&what, tolerance, &want, &out.to_f64_vec()?)?;
    }
    Ok(())
}

/// Work on one stream runs in order, and an event makes a second stream
/// wait for it: fill, then add, on one stream; the copy on another stream
/// after waiting for an event must see the sum.
fn stream_order(ctx: &CaseCtx) -> Result<(), Failure> {
    let backend = ctx.runtime.backend(ctx.device)?;
    let index = ctx.device.index();
    let (first, second) = (backend.create_stream(index)?, backend.create_stream(index)?);
    let n = 1 << 16;
    let (shape, strides) = ([n], [1isize]);
    let a = ad::zeros(&shape, (DType::F32, ctx.device))?;
    let sum = ad::zeros(&shape, (DType::F32, ctx.device))?;
    let copy = ad::zeros(&shape, (DType::F32, ctx.device))?;
    // The zeros above were made on the default stream; start from there.
    backend.synchronize(index)?;
    let fill = Op::Fill {
        out: view(&a, &shape, &strides),
        value: Scalar::F32(1.5),
    };
    backend.execute(&first, &fill)?;
    let add = Op::Binary {
        op: BinaryOp::Add,
        lhs: Operand::Tensor(view(&a, &shape, &strides)),
        rhs: Operand::Tensor(view(&a, &shape, &strides)),
        out: view(&sum, &shape, &strides),
    };
    backend.execute(&first, &add)?;
    let done = backend.record_event(&first)?;
    backend.wait_event(&second, &done)?;
    let move_ = Op::Copy {
        x: view(&sum, &shape, &strides),
        out: view(&copy, &shape, &strides),
    };
    backend.execute(&second, &move_)?;
    backend.synchronize_stream(&second)?;
    let got = copy.to_f64_vec()?;
    let wrong = got.iter().position(|&v| v != 3.0);
    check_eq(
        "first element of the copy that does not hold 1.5 + 1.5 (fill, add on one stream; copy on another after an event)",
        None,
        wrong.map(|i| (i, got[i])),
    )
}

/// Dropping an array while work queued on another stream still reads it
/// must not hand its memory to new arrays before that work is done: sums
/// over `x` are queued on a second stream, `x` is dropped at once, and
/// arrays of the same size, filled on the default stream, may reuse its
/// memory; every sum must still be of `x`'s own values. On a device with
/// a GiB or more the arrays are large (32 MiB), so that on a GPU the adds
/// are still running when the host, which only enqueues them, drops `x`;
/// elsewhere (a device that does not say, or a small one) they are 64 KiB.
fn free_while_read(ctx: &CaseCtx) -> Result<(), Failure> {
    const ADDS: usize = 16;
    let memory = ctx.runtime.properties(ctx.device)?.memory_bytes;
    let shape = [if memory >= 1 << 30 { 1 << 23 } else { 1 << 14 }];
    let x = ad::full(&shape, 1.5, (DType::F32, ctx.device))?;
    let stream = ad::new_stream(ctx.device)?;
    let sum = ad::with_stream(&stream, || (0..ADDS).try_fold(x.clone(), |acc, _| acc.add(&x)))?;
    drop(x);
    let reusers = (0..2)
        .map(|_| ad::full(&shape, -7.0, (DType::F32, ctx.device)))
        .collect::<anydev_core::Result<Vec<_>>>()?;
    let got = sum.to_f64_vec()?;
    drop(reusers);
    let want = 1.5 * (ADDS + 1) as f64;
    let wrong = got.iter().position(|&v| v != want);
    check_eq(
        "first element of the sum that is not 1.5 added 17 times (x dropped while another stream still read it)",
        None,
        wrong.map(|i| (i, got[i])),
    )
}
