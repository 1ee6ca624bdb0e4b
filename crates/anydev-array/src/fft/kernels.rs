//! The extension ops behind the transforms and their `cpu` kernels.
//!
//! Every op transforms the last axis of a contiguous batch:
//! - `fft::c2c` (`inverse`, `scale`): complex `[..., n]` to complex `[..., n]`;
//! - `fft::r2c` (`scale`): `f32`/`f64` `[..., n]` to `c64`/`c128` `[..., n / 2 + 1]`;
//! - `fft::c2r` (`n`, `scale`): complex `[..., n / 2 + 1]` to real `[..., n]`.
//!
//! `scale` multiplies the result (the normalization mode's factor). The
//! kernels are rustfft's (any length: mixed radix, Rader and Bluestein)
//! and realfft's, planned once per length and direction by a planner kept
//! per thread.

use crate::array::Array;
use crate::extension::{self as ext, AttrKind, Attrs, HostFn, HostTensor, HostTensorMut, Kernel, OpDef};
use anydev_core::extension::TensorMeta;
use anydev_core::{DType, Error, Result};
use num_complex::Complex;
use realfft::RealFftPlanner;
use rustfft::{FftNum, FftPlanner};
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// The component types the kernels transform.
trait Component: FftNum + bytemuck::Pod
where
    Complex<Self>: bytemuck::Pod,
{
    fn of(v: f64) -> Self;
    fn planners<R>(f: impl FnOnce(&mut FftPlanner<Self>, &mut RealFftPlanner<Self>) -> R) -> R;
}

macro_rules! component {
    ($t:ty) => {
        impl Component for $t {
            fn of(v: f64) -> Self {
                v as $t
            }

            fn planners<R>(f: impl FnOnce(&mut FftPlanner<Self>, &mut RealFftPlanner<Self>) -> R) -> R {
                thread_local! {
                    static PLANNERS: RefCell<(FftPlanner<$t>, RealFftPlanner<$t>)> =
                        RefCell::new((FftPlanner::new(), RealFftPlanner::new()));
                }
                PLANNERS.with(|p| {
                    let (complex, real) = &mut *p.borrow_mut();
                    f(complex, real)
                })
            }
        }
    };
}

component!(f32);
component!(f64);

fn failed(op: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid_argument(op, e.to_string())
}

fn c2c_kernel<T: Component>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs) -> Result<()>
where
    Complex<T>: bytemuck::Pod,
{
    let (inverse, scale) = (attrs.bool("inverse")?, T::of(attrs.float("scale")?));
    let n = *ins[0].shape.last().expect("checked by the shape rule");
    let input = ins[0].as_slice::<Complex<T>>()?;
    let out = outs[0].as_mut_slice::<Complex<T>>()?;
    out.copy_from_slice(input);
    let plan = T::planners(|p, _| {
        if inverse {
            p.plan_fft_inverse(n)
        } else {
            p.plan_fft_forward(n)
        }
    });
    // rustfft transforms every consecutive run of `n` in one call.
    plan.process(out);
    if scale != T::one() {
        out.iter_mut().for_each(|v| *v = *v * scale);
    }
    Ok(())
}

fn r2c_kernel<T: Component>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs) -> Result<()>
where
    Complex<T>: bytemuck::Pod,
{
    let scale = T::of(attrs.float("scale")?);
    let n = *ins[0].shape.last().expect("checked by the shape rule");
    let input = ins[0].as_slice::<T>()?;
    let out = outs[0].as_mut_slice::<Complex<T>>()?;
    let plan = T::planners(|_, p| p.plan_fft_forward(n));
    let mut row = plan.make_input_vec();
    for (x, y) in input.chunks_exact(n).zip(out.chunks_exact_mut(n / 2 + 1)) {
        row.copy_from_slice(x);
        plan.process(&mut row, y).map_err(|e| failed("rfft", e))?;
        if scale != T::one() {
            y.iter_mut().for_each(|v| *v = *v * scale);
        }
    }
    Ok(())
}

fn c2r_kernel<T: Component>(ins: &[HostTensor<'_>], outs: &mut [HostTensorMut<'_>], attrs: &Attrs) -> Result<()>
where
    Complex<T>: bytemuck::Pod,
{
    let scale = T::of(attrs.float("scale")?);
    let n = outs[0].shape.last().copied().expect("checked by the shape rule");
    let m = n / 2 + 1;
    let input = ins[0].as_slice::<Complex<T>>()?;
    let out = outs[0].as_mut_slice::<T>()?;
    let plan = T::planners(|_, p| p.plan_fft_inverse(n));
    let mut row = plan.make_input_vec();
    for (x, y) in input.chunks_exact(m).zip(out.chunks_exact_mut(n)) {
        row.copy_from_slice(x);
        // A real signal's zero (and even n's Nyquist) term is real; like
        // NumPy, ignore the imaginary parts there instead of failing.
        row[0].im = T::zero();
        if n.is_multiple_of(2) {
            row[m - 1].im = T::zero();
        }
        plan.process(&mut row, y).map_err(|e| failed("irfft", e))?;
        if scale != T::one() {
            y.iter_mut().for_each(|v| *v = *v * scale);
        }
    }
    Ok(())
}

/// A kernel for both precisions, picked by the component type of the
/// first input's dtype.
macro_rules! host {
    ($kernel:ident) => {{
        let f: Arc<HostFn> = Arc::new(|ins, outs, attrs| match ins[0].dtype.real_dtype() {
            DType::F32 => $kernel::<f32>(ins, outs, attrs),
            _ => $kernel::<f64>(ins, outs, attrs),
        });
        Kernel::Host(f)
    }};
}

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
                (
                    "c2c",
                    vec![scale.clone(), ("inverse".to_owned(), AttrKind::Bool)],
                    Arc::new(c2c_rule) as Arc<ext::ShapeRule>,
                    host!(c2c_kernel),
                ),
                ("r2c", vec![scale.clone()], Arc::new(r2c_rule), host!(r2c_kernel)),
                (
                    "c2r",
                    vec![scale, ("n".to_owned(), AttrKind::Int)],
                    Arc::new(c2r_rule),
                    host!(c2r_kernel),
                ),
            ];
            for (name, attrs, shape_rule, kernel) in ops {
                let name = format!("fft::{name}");
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

/// Calls `fft::<name>` on `x` (made contiguous by the call).
pub(super) fn call(name: &str, x: &Array, attrs: &Attrs) -> Result<Array> {
    defined()?;
    Ok(ext::call(&format!("fft::{name}"), &[x], attrs)?.swap_remove(0))
}
