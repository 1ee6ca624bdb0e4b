//! The transforms of the `fft` extension ops over the last axis of a
//! contiguous batch:
//! - `fft::c2c` (`inverse`, `scale`): complex `[..., n]` to complex `[..., n]`;
//! - `fft::r2c` (`scale`): `f32`/`f64` `[..., n]` to `c64`/`c128` `[..., n / 2 + 1]`;
//! - `fft::c2r` (`n`, `scale`): complex `[..., n / 2 + 1]` to real `[..., n]`.
//!
//! `scale` multiplies the result (the normalization mode's factor). The
//! transforms are rustfft's (any length: mixed radix, Rader and Bluestein)
//! and realfft's, planned once per length and direction by a planner kept
//! per thread.

use crate::operand::{flag, float, inputs, outputs, slice, slice_mut, Element};
use crate::{AttrLookup, NumericsError, Operand, OperandMut};
use anydev_ops::DType;
use num_complex::Complex;
use realfft::RealFftPlanner;
use rustfft::{FftNum, FftPlanner};
use std::cell::RefCell;

/// The ops' names.
pub mod op {
    /// `(x complex [..., n]; scale: Float, inverse: Bool) -> complex [..., n]`
    pub const C2C: &str = "fft::c2c";
    /// `(x real [..., n]; scale: Float) -> complex [..., n / 2 + 1]`
    pub const R2C: &str = "fft::r2c";
    /// `(x complex [..., n / 2 + 1]; scale: Float, n: Int) -> real [..., n]`
    pub const C2R: &str = "fft::c2r";

    /// Every transform.
    pub const ALL: [&str; 3] = [C2C, R2C, C2R];
}

type Outcome = Result<(), NumericsError>;

/// The component types the transforms compute in.
trait Component: FftNum + Element
where
    Complex<Self>: Element,
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

/// The length of the last axis of `x`, at least 1.
fn last(function: &str, shape: &[usize]) -> Result<usize, NumericsError> {
    shape
        .last()
        .copied()
        .filter(|&n| n > 0)
        .ok_or_else(|| NumericsError::new(function, format!("needs a non-empty last axis, got shape {shape:?}")))
}

fn c2c<T: Component>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome
where
    Complex<T>: Element,
{
    let inverse = flag("fft", attr, "inverse")?;
    let f = if inverse { "ifft" } else { "fft" };
    let scale = T::of(float(f, attr, "scale")?);
    let [x] = inputs(f, ins)?;
    let [out] = outputs(f, outs)?;
    let n = last(f, x.shape)?;
    let input = slice::<Complex<T>>(f, x)?;
    let out = slice_mut::<Complex<T>>(f, out, input.len())?;
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

fn r2c<T: Component>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome
where
    Complex<T>: Element,
{
    let f = "rfft";
    let scale = T::of(float(f, attr, "scale")?);
    let [x] = inputs(f, ins)?;
    let [out] = outputs(f, outs)?;
    let n = last(f, x.shape)?;
    let input = slice::<T>(f, x)?;
    let out = slice_mut::<Complex<T>>(f, out, input.len() / n * (n / 2 + 1))?;
    let plan = T::planners(|_, p| p.plan_fft_forward(n));
    let mut row = plan.make_input_vec();
    for (x, y) in input.chunks_exact(n).zip(out.chunks_exact_mut(n / 2 + 1)) {
        row.copy_from_slice(x);
        plan.process(&mut row, y)
            .map_err(|e| NumericsError::new(f, e.to_string()))?;
        if scale != T::one() {
            y.iter_mut().for_each(|v| *v = *v * scale);
        }
    }
    Ok(())
}

fn c2r<T: Component>(ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome
where
    Complex<T>: Element,
{
    let f = "irfft";
    let scale = T::of(float(f, attr, "scale")?);
    let [x] = inputs(f, ins)?;
    let [out] = outputs(f, outs)?;
    // The output's length is the transform's; its `n / 2 + 1` terms come in.
    let n = last(f, out.shape)?;
    let m = n / 2 + 1;
    if last(f, x.shape)? != m {
        return Err(NumericsError::new(
            f,
            format!("{n} output points need {m} input points, got shape {:?}", x.shape),
        ));
    }
    let input = slice::<Complex<T>>(f, x)?;
    let out = slice_mut::<T>(f, out, input.len() / m * n)?;
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
        plan.process(&mut row, y)
            .map_err(|e| NumericsError::new(f, e.to_string()))?;
        if scale != T::one() {
            y.iter_mut().for_each(|v| *v = *v * scale);
        }
    }
    Ok(())
}

/// Runs the transform `name` (one of [`op::ALL`]) in the precision of its
/// input's components.
pub fn run(name: &str, ins: &[Operand<'_>], outs: &mut [OperandMut<'_>], attr: &AttrLookup<'_>) -> Outcome {
    let dtype = ins.first().ok_or_else(|| NumericsError::new(name, "no input"))?.dtype;
    let kernel = match name {
        op::C2C => [c2c::<f32>, c2c::<f64>],
        op::R2C => [r2c::<f32>, r2c::<f64>],
        op::C2R => [c2r::<f32>, c2r::<f64>],
        other => {
            return Err(NumericsError::new(
                other,
                format!("not a transform (they are: {})", op::ALL.join(", ")),
            ))
        }
    };
    // The kernels check the exact dtypes; this only picks the precision.
    match dtype.real_dtype() {
        DType::F32 => kernel[0](ins, outs, attr),
        _ => kernel[1](ins, outs, attr),
    }
}
