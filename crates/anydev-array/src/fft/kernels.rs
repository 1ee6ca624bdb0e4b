//! The extension ops behind the transforms: their schemas and shape rules.
//!
//! Every op transforms the last axis of a contiguous batch:
//! - `fft::c2c` (`inverse`, `scale`): complex `[..., n]` to complex `[..., n]`;
//! - `fft::r2c` (`scale`): `f32`/`f64` `[..., n]` to `c64`/`c128` `[..., n / 2 + 1]`;
//! - `fft::c2r` (`n`, `scale`): complex `[..., n / 2 + 1]` to real `[..., n]`.
//!
//! `scale` multiplies the result (the normalization mode's factor). The
//! `cpu` kernels are `anydev_numerics`' (rustfft's and realfft's
//! transforms), which the simulator plugin runs for the same ops.

use super::composed;
use crate::array::Array;
use crate::extension::{self as ext, AttrKind, Attrs, OpDef};
use anydev_core::extension::TensorMeta;
use anydev_core::{DType, Error, Result};
use std::sync::{Arc, OnceLock};

/// The last axis of the single input, after its dtype is checked.
fn last_axis(op: &str, x: &TensorMeta, complex: bool) -> Result<usize> {
    let ok = if complex {
        x.dtype.is_complex()
    } else {
        matches!(x.dtype, DType::F32 | DType::F64)
    };
    if !ok {
        return Err(Error::InvalidDType {
            op: op.into(),
            dtype: x.dtype,
            reason: format!("needs {} input", if complex { "complex" } else { "f32 or f64" }),
        });
    }
    x.shape
        .last()
        .copied()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::invalid_argument(op, format!("needs a non-empty last axis, got shape {:?}", x.shape)))
}

fn with_last(shape: &[usize], n: usize) -> Vec<usize> {
    let mut shape = shape.to_vec();
    *shape.last_mut().expect("at least one dimension") = n;
    shape
}

fn c2c_rule(inputs: &[TensorMeta], _: &Attrs) -> Result<Vec<TensorMeta>> {
    last_axis("fft::c2c", &inputs[0], true)?;
    Ok(vec![inputs[0].clone()])
}

fn r2c_rule(inputs: &[TensorMeta], _: &Attrs) -> Result<Vec<TensorMeta>> {
    let x = &inputs[0];
    let n = last_axis("fft::r2c", x, false)?;
    let dtype = x.dtype.complex_dtype().expect("a real float has a complex counterpart");
    Ok(vec![TensorMeta {
        dtype,
        shape: with_last(&x.shape, n / 2 + 1),
    }])
}

fn c2r_rule(inputs: &[TensorMeta], attrs: &Attrs) -> Result<Vec<TensorMeta>> {
    let x = &inputs[0];
    let m = last_axis("fft::c2r", x, true)?;
    let n = usize::try_from(attrs.int("n")?).unwrap_or(0);
    if n == 0 || n / 2 + 1 != m {
        return Err(Error::invalid_argument(
            "fft::c2r",
            format!("{n} output points need {} input points, got {m}", n / 2 + 1),
        ));
    }
    Ok(vec![TensorMeta {
        dtype: x.dtype.real_dtype(),
        shape: with_last(&x.shape, n),
    }])
}

/// Defines the ops and registers their cpu kernels, once per process.
pub(crate) fn defined() -> Result<()> {
    static DEFINED: OnceLock<Result<()>> = OnceLock::new();
    DEFINED
        .get_or_init(|| {
            let scale = ("scale".to_owned(), AttrKind::Float);
            let ops = [
                ("c2c", vec![scale.clone(), ("inverse".to_owned(), AttrKind::Bool)]),
                ("r2c", vec![scale.clone()]),
                ("c2r", vec![scale, ("n".to_owned(), AttrKind::Int)]),
            ];
            for (name, attrs) in ops {
                let shape_rule = Arc::new(rule(name)) as Arc<ext::ShapeRule>;
                let name = format!("fft::{name}");
                let kernel = ext::numerics_kernel(&name);
                ext::define_host_op(
                    OpDef {
                        name,
                        inputs: 1,
                        attrs,
                        shape_rule,
                    },
                    kernel,
                )?;
            }
            Ok(())
        })
        .clone()
}

/// The shape rule of `fft::<name>`.
fn rule(name: &str) -> fn(&[TensorMeta], &Attrs) -> Result<Vec<TensorMeta>> {
    match name {
        "c2c" => c2c_rule,
        "r2c" => r2c_rule,
        _ => c2r_rule,
    }
}

/// Runs `fft::<name>` on `x`: through the op where the device runs it (a
/// kernel for its kind, or its plugin's own), else composed from the
/// device's array ops ([`composed`]), after the same shape rule.
pub(super) fn call(name: &str, x: &Array, attrs: &Attrs) -> Result<Array> {
    defined()?;
    let op = format!("fft::{name}");
    if ext::device_ops_in(x.ctx().runtime, x.device())?.contains(&op) {
        return Ok(ext::call(&op, &[x], attrs)?.swap_remove(0));
    }
    rule(name)(&[TensorMeta::new(x.dtype(), x.shape())], attrs)?;
    let scale = attrs.float("scale")?;
    match name {
        "c2c" => composed::c2c(x, attrs.bool("inverse")?, scale),
        "r2c" => composed::r2c(x, scale),
        _ => composed::c2r(x, attrs.int("n")? as usize, scale),
    }
}
