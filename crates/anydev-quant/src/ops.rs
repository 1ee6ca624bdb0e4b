//! The `quant::*` ops: their schemas, the shape rules that validate every
//! call before anything runs, the `cpu` kernels (the ops by name of
//! [`crate::call`] over the call's tensors), and registration.

use crate::call::{self, Operand, OperandMut};
use crate::formats::{blocks, FormatError, QuantType};
use anydev::extension::{
    self as ext, AttrKind, AttrValue, Attrs, HostFn, HostTensor, HostTensorMut, Kernel, OpDef, TensorMeta,
};
use anydev::{DType, Error, Result};
use std::sync::{Arc, OnceLock};

pub use crate::call::op;

/// The floating-point dtypes the ops read and write.
pub(crate) const FLOATS: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

fn invalid(op: &str, e: FormatError) -> Error {
    Error::invalid_argument(op, e.0)
}

/// The attributes of a call, as [`call`]'s readers look them up.
fn lookup<'a>(attrs: &'a Attrs) -> impl Fn(&str) -> Option<&'a AttrValue> + 'a {
    move |name| attrs.get(name)
}

pub(crate) fn blocksize(op: &str, attrs: &Attrs) -> Result<usize> {
    call::blocksize(&lookup(attrs)).map_err(|e| invalid(op, e))
}

pub(crate) fn quant_type(op: &str, attrs: &Attrs) -> Result<QuantType> {
    call::quant_type(&lookup(attrs)).map_err(|e| invalid(op, e))
}

fn float(op: &str, what: &str, dtype: DType) -> Result<()> {
    if FLOATS.contains(&dtype) {
        return Ok(());
    }
    Err(Error::InvalidDType {
        op: op.into(),
        dtype,
        reason: format!("{what} must be f32, f16 or bf16"),
    })
}

/// `meta` has `dtype` and `size` elements (any shape).
fn sized(op: &str, what: &str, meta: &TensorMeta, dtype: DType, size: usize, why: &str) -> Result<()> {
    if meta.dtype != dtype {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype: meta.dtype,
            reason: format!("{what} must be {dtype}"),
        });
    }
    if meta.size() != size {
        return Err(Error::invalid_argument(
            op,
            format!("{what} has {} elements; {why} needs {size}", meta.size()),
        ));
    }
    Ok(())
}

fn absmax_of(op: &str, meta: &TensorMeta, n: usize, blocksize: usize) -> Result<()> {
    let why = format!("{n} elements in blocks of {blocksize}");
    sized(op, "absmax", meta, DType::F32, blocks(n, blocksize), &why)
}

fn packed_of(op: &str, meta: &TensorMeta, n: usize) -> Result<()> {
    let why = format!("{n} elements at two per byte");
    sized(op, "packed", meta, DType::U8, n.div_ceil(2), &why)
}

fn code_of(op: &str, meta: &TensorMeta) -> Result<()> {
    sized(op, "code", meta, DType::F32, 256, "an 8-bit code")
}

fn float_attr(op: &str, attrs: &Attrs) -> Result<DType> {
    let dtype = attrs.dtype("dtype")?;
    float(op, "dtype", dtype)?;
    Ok(dtype)
}

fn absmax_meta(n: usize, blocksize: usize) -> TensorMeta {
    TensorMeta::new(DType::F32, &[blocks(n, blocksize)])
}

fn quantize_blockwise_shape(ins: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    let o = op::QUANTIZE_BLOCKWISE;
    let bs = blocksize(o, attrs)?;
    float(o, "x", ins[0].dtype)?;
    code_of(o, &ins[1])?;
    Ok(vec![
        TensorMeta::new(DType::U8, &ins[0].shape),
        absmax_meta(ins[0].size(), bs),
    ])
}

fn dequantize_blockwise_shape(ins: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    let o = op::DEQUANTIZE_BLOCKWISE;
    let bs = blocksize(o, attrs)?;
    let dtype = float_attr(o, attrs)?;
    if ins[0].dtype != DType::U8 {
        return Err(Error::InvalidDType {
            op: o.into(),
            dtype: ins[0].dtype,
            reason: "q must be u8".into(),
        });
    }
    absmax_of(o, &ins[1], ins[0].size(), bs)?;
    code_of(o, &ins[2])?;
    Ok(vec![TensorMeta::new(dtype, &ins[0].shape)])
}

fn quantize_4bit_shape(ins: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    let o = op::QUANTIZE_4BIT;
    let bs = blocksize(o, attrs)?;
    quant_type(o, attrs)?;
    float(o, "x", ins[0].dtype)?;
    let n = ins[0].size();
    Ok(vec![TensorMeta::new(DType::U8, &[n.div_ceil(2)]), absmax_meta(n, bs)])
}

/// The element count of a `shape` attribute, or why it has none.
fn count(op: &str, shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| Error::invalid_argument(op, format!("shape {shape:?} has too many elements")))
}

fn dequantize_4bit_shape(ins: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    let o = op::DEQUANTIZE_4BIT;
    let bs = blocksize(o, attrs)?;
    quant_type(o, attrs)?;
    let dtype = float_attr(o, attrs)?;
    let shape = attrs.shape("shape")?;
    let n = count(o, &shape)?;
    packed_of(o, &ins[0], n)?;
    absmax_of(o, &ins[1], n, bs)?;
    Ok(vec![TensorMeta::new(dtype, &shape)])
}

/// The weights' `[n, k]` of a `gemv_4bit` call.
fn gemv_weights(attrs: &Attrs) -> Result<(usize, usize)> {
    call::gemv_weights(&lookup(attrs)).map_err(|e| invalid(op::GEMV_4BIT, e))
}

fn gemv_4bit_shape(ins: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    let o = op::GEMV_4BIT;
    let bs = blocksize(o, attrs)?;
    quant_type(o, attrs)?;
    let (n, k) = gemv_weights(attrs)?;
    let a = &ins[0];
    float(o, "a", a.dtype)?;
    let Some((_, lead)) = a.shape.split_last().filter(|(&last, _)| last == k) else {
        return Err(Error::invalid_argument(
            o,
            format!("a must be [..., {k}] for weights [{n}, {k}], got {:?}", a.shape),
        ));
    };
    let weights = count(o, &[n, k])?;
    packed_of(o, &ins[1], weights)?;
    absmax_of(o, &ins[2], weights, bs)?;
    let mut shape = lead.to_vec();
    shape.push(n);
    Ok(vec![TensorMeta::new(a.dtype, &shape)])
}

/// The `cpu` kernel of op `name`: [`call::run`] over the call's tensors.
fn host_kernel(name: &'static str) -> Arc<HostFn> {
    Arc::new(
        move |ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs| {
            let ins: Vec<Operand<'_>> = ins.iter().map(HostTensor::operand).collect();
            let mut outs: Vec<OperandMut<'_>> = outs.iter_mut().map(HostTensorMut::operand).collect();
            call::run(name, &ins, &mut outs, &lookup(attrs)).map_err(|e| invalid(name, e))
        },
    )
}

/// One op: its schema and shape rule.
struct Definition {
    name: &'static str,
    inputs: usize,
    attrs: Vec<(&'static str, AttrKind)>,
    shape_rule: fn(&[TensorMeta], &Attrs) -> Result<Vec<TensorMeta>>,
}

fn definitions() -> [Definition; 5] {
    let bs = ("blocksize", AttrKind::Int);
    let qt = ("quant_type", AttrKind::Str);
    let (shape, dtype) = (("shape", AttrKind::Shape), ("dtype", AttrKind::DType));
    [
        Definition {
            name: op::QUANTIZE_BLOCKWISE,
            inputs: 2,
            attrs: vec![bs],
            shape_rule: quantize_blockwise_shape,
        },
        Definition {
            name: op::DEQUANTIZE_BLOCKWISE,
            inputs: 3,
            attrs: vec![bs, dtype],
            shape_rule: dequantize_blockwise_shape,
        },
        Definition {
            name: op::QUANTIZE_4BIT,
            inputs: 1,
            attrs: vec![bs, qt],
            shape_rule: quantize_4bit_shape,
        },
        Definition {
            name: op::DEQUANTIZE_4BIT,
            inputs: 2,
            attrs: vec![bs, qt, shape, dtype],
            shape_rule: dequantize_4bit_shape,
        },
        Definition {
            name: op::GEMV_4BIT,
            inputs: 3,
            attrs: vec![bs, qt, shape],
            shape_rule: gemv_4bit_shape,
        },
    ]
}

/// Defines the ops with their `cpu` kernels only, once per process (later
/// calls return the first call's result). For a library that brings its
/// own kernels for the other device kinds; [`register`] adds this crate's
/// wgpu and cuda kernels.
pub fn register_ops() -> Result<()> {
    static DONE: OnceLock<Result<()>> = OnceLock::new();
    DONE.get_or_init(|| {
        for d in definitions() {
            ext::define_op(OpDef {
                name: d.name.into(),
                inputs: d.inputs,
                attrs: d.attrs.into_iter().map(|(a, k)| (a.to_owned(), k)).collect(),
                shape_rule: Arc::new(d.shape_rule),
            })?;
            ext::register_kernel(d.name, "cpu", Kernel::Host(host_kernel(d.name)))?;
        }
        Ok(())
    })
    .clone()
}

/// Defines the ops and registers every kernel of this crate (`cpu`,
/// `wgpu`, `cuda`), once per process; the typed API calls it itself. A
/// kind another library registered first for an op keeps that kernel.
pub fn register() -> Result<()> {
    static DONE: OnceLock<Result<()>> = OnceLock::new();
    DONE.get_or_init(|| {
        register_ops()?;
        let gpu = crate::wgsl::kernels()
            .into_iter()
            .map(|(op, k)| (op, "wgpu", Kernel::Wgsl(k)))
            .chain(
                crate::cuda::kernels()
                    .into_iter()
                    .map(|(op, k)| (op, "cuda", Kernel::Cuda(k))),
            );
        for (op, kind, kernel) in gpu {
            if !ext::kernel_kinds(op)?.iter().any(|k| k == kind) {
                ext::register_kernel(op, kind, kernel)?;
            }
        }
        Ok(())
    })
    .clone()
}

/// The code the GPU kernels use for a float dtype (params word).
pub(crate) fn float_code(op: &str, dtype: DType) -> Result<u32> {
    match FLOATS.iter().position(|&d| d == dtype) {
        Some(i) => Ok(i as u32),
        None => Err(Error::invalid_argument(op, format!("no GPU kernel for {dtype}"))),
    }
}
