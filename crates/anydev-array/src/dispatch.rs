//! The one place where placement rules, device dtype support and op support
//! are enforced, and where outputs are allocated.
//!
//! Every op that takes several arrays resolves its device with
//! [`same_device`] (placement rules 2 and 3); every output comes from
//! [`alloc`] (the device must hold its dtype); every primitive call goes
//! through [`execute`] (the backend must declare the (op, dtype) pair:
//! nothing ever runs somewhere else instead).

use crate::array::{Array, Storage};
use crate::context::DeviceCtx;
use crate::promote::Weak;
use crate::shape::{self, contiguous_strides};
use anydev_core::ops::Op;
use anydev_core::ordering::Access;
use anydev_core::{backend, Error, Result, Scalar, TensorRef};
use anydev_ops::DType;
use half::{bf16, f16};
use smallvec::SmallVec;
use std::sync::Arc;

/// The device context shared by `arrays`, or `DeviceMismatch` naming `op`
/// and every distinct device involved.
pub(crate) fn same_device<'a>(op: &str, arrays: &[&'a Array]) -> Result<&'a Arc<DeviceCtx>> {
    let Some((first, rest)) = arrays.split_first() else {
        return Err(Error::invalid_argument(op, "needs at least one array"));
    };
    let device = first.device();
    if rest.iter().all(|a| a.device() == device) {
        return Ok(first.ctx());
    }
    let mut devices = Vec::with_capacity(arrays.len());
    for a in arrays {
        if !devices.contains(&a.device()) {
            devices.push(a.device());
        }
    }
    Err(Error::DeviceMismatch {
        op: op.to_owned(),
        devices,
    })
}

/// A fresh, contiguous, uninitialised array of `dtype` and `shape` on the
/// device of `ctx`, in the device's native memory kind (or, with unified
/// memory on, a kind the host reaches too).
pub(crate) fn alloc(ctx: &Arc<DeviceCtx>, dtype: DType, shape: &[usize]) -> Result<Array> {
    ctx.check_dtype(dtype)?;
    let bytes = shape::checked_size("allocate", shape)?
        .checked_mul(dtype.size())
        .ok_or_else(|| Error::invalid_argument("allocate", format!("shape {shape:?} of {dtype} is too large")))?;
    let buffer = backend::allocate(&ctx.backend, ctx.device, bytes, ctx.memory_kind())?;
    Ok(Array {
        storage: Arc::new(Storage {
            buffer,
            ctx: Arc::clone(ctx),
        }),
        dtype,
        shape: shape.into(),
        strides: contiguous_strides(shape),
        offset: 0,
        read_only: false,
    })
}

/// Runs one primitive op on the device of `ctx`, after checking that the
/// device declares support for it, on the thread's stream for the device,
/// ordered after the pending writes of its inputs (see
/// [`anydev_core::ordering`]).
pub(crate) fn execute(ctx: &DeviceCtx, op: &Op<'_, TensorRef<'_>>) -> Result<()> {
    let code = op.code();
    let dtype = op.support_dtype();
    if !ctx.backend.supports(ctx.device.index(), code, dtype) {
        return Err(Error::Unsupported {
            op: code.name().to_owned(),
            dtype,
            device: ctx.device,
        });
    }
    if shape::size(op.output().shape) == 0 {
        return Ok(());
    }
    ordered(
        ctx,
        || op.inputs(),
        || std::iter::once(op.output()),
        |stream| ctx.backend.execute(stream, op),
    )
}

/// `value` as a 0-d array on the device of `ctx`. This is how a `c128`
/// scalar reaches a backend: the plugin ABI carries scalars in 64 bits.
pub(crate) fn scalar_array(ctx: &Arc<DeviceCtx>, value: Scalar) -> Result<Array> {
    crate::transfer::upload(ctx, value.dtype(), &[], &value.to_le_bytes())
}

/// Every element of `out` (an array or a view on the device of `ctx`)
/// becomes `value`, of `out`'s dtype: a `Fill`, or for `c128` a copy from
/// the uploaded value broadcast to `out`'s shape.
pub(crate) fn fill(ctx: &Arc<DeviceCtx>, out: &Array, value: Scalar) -> Result<()> {
    if value.dtype() == DType::C128 {
        let v = scalar_array(ctx, value)?.broadcast_to(out.shape())?;
        return execute(
            ctx,
            &Op::Copy {
                x: v.tensor_ref(),
                out: out.tensor_ref(),
            },
        );
    }
    execute(
        ctx,
        &Op::Fill {
            out: out.tensor_ref(),
            value,
        },
    )
}

/// Runs `work` on the thread's stream for the device of `ctx`, after the
/// pending writes of the `inputs` and the pending uses of the `outputs`
/// (each given as a function listing them, as they are walked twice), and
/// records its reads and writes for the work that follows.
pub(crate) fn ordered<'t, 'b: 't, I, O>(
    ctx: &DeviceCtx,
    inputs: impl Fn() -> I,
    outputs: impl Fn() -> O,
    work: impl FnOnce(&anydev_core::Stream) -> Result<()>,
) -> Result<()>
where
    I: Iterator<Item = &'t TensorRef<'b>>,
    O: Iterator<Item = &'t TensorRef<'b>>,
{
    let stream = ctx.stream();
    for input in inputs() {
        input.buffer.usage().before(&ctx.backend, &stream, Access::Read)?;
    }
    for out in outputs() {
        out.buffer.usage().before(&ctx.backend, &stream, Access::Write)?;
    }
    work(&stream)?;
    if ctx.asynchronous {
        for input in inputs() {
            input.buffer.usage().after(&ctx.backend, &stream, Access::Read);
        }
        for out in outputs() {
            out.buffer.usage().after(&ctx.backend, &stream, Access::Write);
        }
    }
    Ok(())
}

/// An operand of an elementwise op: an array, or a Rust scalar that has no
/// device and takes the array's (placement rule 4).
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Array(&'a Array),
    Scalar(Weak),
}

/// Anything that can be an elementwise operand: `&Array` or a Rust scalar.
pub trait IntoArg<'a> {
    fn into_arg(self) -> Arg<'a>;
}

impl<'a> IntoArg<'a> for &'a Array {
    fn into_arg(self) -> Arg<'a> {
        Arg::Array(self)
    }
}

impl<'a> IntoArg<'a> for Arg<'a> {
    fn into_arg(self) -> Arg<'a> {
        self
    }
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl IntoArg<'_> for $t {
            fn into_arg(self) -> Arg<'static> {
                Arg::Scalar(Weak::from(self))
            }
        }
    )*};
}

scalar_args!(
    bool,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    f16,
    bf16,
    f32,
    f64,
    num_complex::Complex32,
    num_complex::Complex64,
    Scalar,
    Weak
);

impl<'a> Arg<'a> {
    pub(crate) fn array(self) -> Option<&'a Array> {
        match self {
            Arg::Array(a) => Some(a),
            Arg::Scalar(_) => None,
        }
    }
}

/// The arrays among `args`, for placement checks.
pub(crate) fn arrays_of<'a>(args: &[Arg<'a>]) -> SmallVec<[&'a Array; 4]> {
    args.iter().filter_map(|a| a.array()).collect()
}
