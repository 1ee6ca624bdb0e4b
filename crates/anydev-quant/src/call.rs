//! The ops by name on host memory, without the runtime: what the `cpu`
//! kernels run, and what a device plugin that computes on the host (the
//! simulator, through the C ABI's extension calls) runs for the same
//! names. The caller has validated the call with the op's shape rule; the
//! host kernels still check every length, so a mistake is an error.

use crate::formats::{self, FormatError, QuantType};
use crate::host::{self, GemvShape};
use anydev_ops::{AttrValue, DType};
use half::{bf16, f16};

/// The ops' names.
pub mod op {
    /// `(x, code f32[256]; blocksize: Int) -> (q u8 like x, absmax f32[blocks])`
    pub const QUANTIZE_BLOCKWISE: &str = "quant::quantize_blockwise";
    /// `(q u8, absmax f32[blocks], code f32[256]; blocksize: Int, dtype: DType) -> out like q`
    pub const DEQUANTIZE_BLOCKWISE: &str = "quant::dequantize_blockwise";
    /// `(x; blocksize: Int, quant_type: Str) -> (packed u8[ceil(n/2)], absmax f32[blocks])`
    pub const QUANTIZE_4BIT: &str = "quant::quantize_4bit";
    /// `(packed, absmax; blocksize: Int, quant_type: Str, shape: Shape, dtype: DType) -> out[shape]`
    pub const DEQUANTIZE_4BIT: &str = "quant::dequantize_4bit";
    /// `(a[..., K], packed, absmax; blocksize: Int, quant_type: Str, shape: Shape [N, K]) -> out[..., N]`
    pub const GEMV_4BIT: &str = "quant::gemv_4bit";

    /// Every op of the library.
    pub const ALL: [&str; 5] = [
        QUANTIZE_BLOCKWISE,
        DEQUANTIZE_BLOCKWISE,
        QUANTIZE_4BIT,
        DEQUANTIZE_4BIT,
        GEMV_4BIT,
    ];
}

pub use anydev_ops::{AttrLookup, HostOperand as Operand, HostOperandMut as OperandMut};

fn missing(name: &str, kind: &str, got: Option<&AttrValue>) -> FormatError {
    match got {
        Some(v) => FormatError(format!("attribute {name} must be {kind}, got {:?}", v.kind())),
        None => FormatError(format!("attribute {name} ({kind}) is missing")),
    }
}

/// The `blocksize` attribute, checked.
pub fn blocksize(attr: &AttrLookup<'_>) -> Result<usize, FormatError> {
    match attr("blocksize") {
        Some(AttrValue::Int(b)) => formats::check_blocksize(*b),
        other => Err(missing("blocksize", "Int", other)),
    }
}

/// The `quant_type` attribute, checked.
pub fn quant_type(attr: &AttrLookup<'_>) -> Result<QuantType, FormatError> {
    match attr("quant_type") {
        Some(AttrValue::Str(name)) => QuantType::parse(name),
        other => Err(missing("quant_type", "Str", other)),
    }
}

/// The `shape` attribute.
pub fn shape<'a>(attr: &AttrLookup<'a>) -> Result<&'a [usize], FormatError> {
    match attr("shape") {
        Some(AttrValue::Shape(shape)) => Ok(shape),
        other => Err(missing("shape", "Shape", other)),
    }
}

/// The weights' `[n, k]` of a `gemv_4bit` call.
pub fn gemv_weights(attr: &AttrLookup<'_>) -> Result<(usize, usize), FormatError> {
    match *shape(attr)? {
        [n, k] => Ok((n, k)),
        ref other => Err(FormatError(format!("shape must be the weights' [N, K], got {other:?}"))),
    }
}

fn typed<'a, T: bytemuck::Pod>(what: &str, dtype: DType, bytes: &'a [u8]) -> Result<&'a [T], FormatError> {
    bytemuck::try_cast_slice(bytes).map_err(|e| FormatError(format!("{what} ({dtype}): {e}")))
}

fn typed_mut<'a, T: bytemuck::Pod>(what: &str, dtype: DType, bytes: &'a mut [u8]) -> Result<&'a mut [T], FormatError> {
    bytemuck::try_cast_slice_mut(bytes).map_err(|e| FormatError(format!("{what} ({dtype}): {e}")))
}

/// The elements of an operand as `T`, once its dtype is checked.
fn of<'a, T: bytemuck::Pod>(x: &'a Operand<'_>, what: &str, want: DType) -> Result<&'a [T], FormatError> {
    expect_dtype(what, x.dtype, want)?;
    typed(what, x.dtype, x.bytes)
}

/// [`of`] for an output.
fn of_mut<'a, T: bytemuck::Pod>(
    x: &'a mut OperandMut<'_>,
    what: &str,
    want: DType,
) -> Result<&'a mut [T], FormatError> {
    expect_dtype(what, x.dtype, want)?;
    typed_mut(what, x.dtype, x.bytes)
}

fn expect_dtype(what: &str, got: DType, want: DType) -> Result<(), FormatError> {
    if got == want {
        return Ok(());
    }
    Err(FormatError(format!("{what} must be {want}, got {got}")))
}

/// Runs `$body` with `$t` the element type of the float dtype `$dtype`.
macro_rules! with_float {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F16 => {
                type $t = f16;
                $body
            }
            DType::BF16 => {
                type $t = bf16;
                $body
            }
            other => Err(FormatError(format!("no host kernel for {other}"))),
        }
    };
}

/// A call's `N` inputs, or why it has another number.
fn inputs<T, const N: usize>(operands: &[T]) -> Result<&[T; N], FormatError> {
    operands
        .try_into()
        .map_err(|_| FormatError(format!("{} inputs, expected {N}", operands.len())))
}

/// A call's `N` outputs, or why it has another number.
fn outputs<T, const N: usize>(operands: &mut [T]) -> Result<&mut [T; N], FormatError> {
    let len = operands.len();
    operands
        .try_into()
        .map_err(|_| FormatError(format!("{len} outputs, expected {N}")))
}

/// Runs op `name` on host memory: `ins` and `outs` as the op's schema
/// orders them, attributes through `attr`.
pub fn run(
    name: &str,
    ins: &[Operand<'_>],
    outs: &mut [OperandMut<'_>],
    attr: &AttrLookup<'_>,
) -> Result<(), FormatError> {
    match name {
        op::QUANTIZE_BLOCKWISE => {
            let [x, code] = inputs(ins)?;
            let [q, absmax] = outputs(outs)?;
            let code = of::<f32>(code, "code", DType::F32)?;
            let (q, absmax) = (
                of_mut::<u8>(q, "q", DType::U8)?,
                of_mut::<f32>(absmax, "absmax", DType::F32)?,
            );
            let bs = blocksize(attr)?;
            with_float!(x.dtype, T => host::quantize_blockwise(typed::<T>("x", x.dtype, x.bytes)?, code, bs, q, absmax))
        }
        op::DEQUANTIZE_BLOCKWISE => {
            let [q, absmax, code] = inputs(ins)?;
            let [out] = outputs(outs)?;
            let (q, absmax) = (of::<u8>(q, "q", DType::U8)?, of::<f32>(absmax, "absmax", DType::F32)?);
            let code = of::<f32>(code, "code", DType::F32)?;
            let bs = blocksize(attr)?;
            with_float!(out.dtype, T => host::dequantize_blockwise(
                q, absmax, code, bs, typed_mut::<T>("out", out.dtype, out.bytes)?
            ))
        }
        op::QUANTIZE_4BIT => {
            let [x] = inputs(ins)?;
            let [packed, absmax] = outputs(outs)?;
            let (bs, qt) = (blocksize(attr)?, quant_type(attr)?);
            let packed = of_mut::<u8>(packed, "packed", DType::U8)?;
            let absmax = of_mut::<f32>(absmax, "absmax", DType::F32)?;
            with_float!(x.dtype, T => host::quantize_4bit(typed::<T>("x", x.dtype, x.bytes)?, qt, bs, packed, absmax))
        }
        op::DEQUANTIZE_4BIT => {
            let [packed, absmax] = inputs(ins)?;
            let [out] = outputs(outs)?;
            let (bs, qt) = (blocksize(attr)?, quant_type(attr)?);
            let (packed, absmax) = (
                of::<u8>(packed, "packed", DType::U8)?,
                of::<f32>(absmax, "absmax", DType::F32)?,
            );
            with_float!(out.dtype, T => host::dequantize_4bit(
                packed, absmax, qt, bs, typed_mut::<T>("out", out.dtype, out.bytes)?
            ))
        }
        op::GEMV_4BIT => {
            let [a, packed, absmax] = inputs(ins)?;
            let [out] = outputs(outs)?;
            let (bs, qt) = (blocksize(attr)?, quant_type(attr)?);
            let (n, k) = gemv_weights(attr)?;
            let rows = a.shape[..a.shape.len().saturating_sub(1)].iter().product();
            let shape = GemvShape { rows, n, k };
            let (packed, absmax) = (
                of::<u8>(packed, "packed", DType::U8)?,
                of::<f32>(absmax, "absmax", DType::F32)?,
            );
            expect_dtype("out", out.dtype, a.dtype)?;
            with_float!(a.dtype, T => host::gemv_4bit(
                typed::<T>("a", a.dtype, a.bytes)?, packed, absmax, qt, bs, shape,
                typed_mut::<T>("out", out.dtype, out.bytes)?
            ))
        }
        other => Err(FormatError(format!(
            "{other} is not an op of this library (its ops: {})",
            op::ALL.join(", ")
        ))),
    }
}
