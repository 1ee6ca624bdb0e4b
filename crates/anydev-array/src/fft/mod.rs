//! The Array API standard's `fft` extension.
//!
//! The transforms reduce to three extension ops (design section 11) over
//! the last axis of a contiguous batch: `fft::c2c` (complex to complex,
//! either direction), `fft::r2c` (real input, the `n / 2 + 1` non-negative
//! frequencies out) and `fft::c2r` (its inverse). This module moves the
//! transformed axis last, pads or truncates it to the requested length,
//! picks the scale of the normalization mode, and composes the
//! n-dimensional and Hermitian transforms from those three. Their `cpu`
//! kernels are rustfft's and realfft's ([`kernels`]), and a plugin may
//! implement them for its devices (the simulator does); on any other
//! device the three are composed from the device's own array ops
//! (`composed`: radix-2 and Bluestein), so a transform runs on every
//! device with complex arithmetic and nothing moves to the host.
//!
//! Dtypes: complex input keeps its dtype; real floating-point input is
//! taken as complex of the same precision (`f32` gives `c64`); integer
//! input is converted to the device's default float first, as NumPy does.
//! The real transforms need real input and give `c64`/`c128`; their
//! inverses give `f32`/`f64`.

mod composed;
mod freq;
pub(crate) mod kernels;

pub use freq::{fftfreq, fftshift, ifftshift, rfftfreq};

use crate::array::Array;
use crate::extension::{AttrValue, Attrs};
use crate::shape::normalize_axis;
use anydev_core::{DType, Error, Result};

/// Which direction carries the `1 / n` factor (the standard's `norm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Norm {
    /// Forward unscaled, inverse scaled by `1 / n` (the default).
    #[default]
    Backward,
    /// Both directions scaled by `1 / sqrt(n)`.
    Ortho,
    /// Forward scaled by `1 / n`, inverse unscaled.
    Forward,
}

impl Norm {
    /// The factor a transform of `n` points in direction `inverse` applies.
    fn scale(self, n: usize, inverse: bool) -> f64 {
        let n = n as f64;
        match (self, inverse) {
            (Norm::Ortho, _) => 1.0 / n.sqrt(),
            (Norm::Backward, true) | (Norm::Forward, false) => 1.0 / n,
            _ => 1.0,
        }
    }

    /// The mode of the opposite direction, for the Hermitian transforms
    /// (which run the other direction's transform underneath).
    fn swapped(self) -> Norm {
        match self {
            Norm::Backward => Norm::Forward,
            Norm::Forward => Norm::Backward,
            Norm::Ortho => Norm::Ortho,
        }
    }
}

impl std::str::FromStr for Norm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Norm> {
        match s {
            "backward" => Ok(Norm::Backward),
            "ortho" => Ok(Norm::Ortho),
            "forward" => Ok(Norm::Forward),
            other => Err(Error::invalid_argument(
                "fft",
                format!("norm must be \"backward\", \"ortho\" or \"forward\", not {other:?}"),
            )),
        }
    }
}

/// `x` as the complex dtype a complex transform runs in: `f32` and `f64`
/// keep their precision (a device without that complex dtype refuses it
/// rather than narrow the result), narrower floats and integers take the
/// device's.
fn as_complex(op: &str, x: &Array) -> Result<Array> {
    let dtype = x.dtype();
    if dtype.is_complex() {
        return Ok(x.clone());
    }
    let real = as_real(op, x)?;
    let complex = real
        .dtype()
        .complex_dtype()
        .expect("a real float has a complex counterpart");
    if matches!(dtype, DType::F32 | DType::F64) {
        real.astype(complex)
    } else {
        real.astype(x.ctx().float_for(complex))
    }
}

/// `x` as the real float dtype a real transform reads.
fn as_real(op: &str, x: &Array) -> Result<Array> {
    let dtype = x.dtype();
    match dtype {
        DType::F32 | DType::F64 => Ok(x.clone()),
        DType::F16 | DType::BF16 => x.astype(x.ctx().float_for(DType::F32)),
        // Integers land on the device's floats (design 14), here the
        // widest whose complex counterpart it holds too, so that every
        // transform of them computes alike (`f32` on wgpu, without `c128`).
        d if d.is_integer() => x.astype(x.ctx().float_for(DType::C128).real_dtype()),
        _ => Err(Error::InvalidDType {
            op: op.into(),
            dtype,
            reason: format!(
                "{op} needs {} input",
                if dtype.is_complex() { "real" } else { "numeric" }
            ),
        }),
    }
}

/// `x` with axis `axis` (already normalized) last, that axis cut or
/// zero-padded to `n` points.
fn along(op: &str, x: &Array, axis: usize, n: usize) -> Result<Array> {
    if n == 0 {
        return Err(Error::invalid_argument(op, "the transform length n must be at least 1"));
    }
    let last = x.moveaxis(&[axis as isize], &[-1])?;
    let have = *last.shape().last().expect("at least one dimension");
    if have == n {
        return Ok(last);
    }
    if have > n {
        return last.slice(&[crate::SliceArg::Ellipsis, (0..n as isize).into()]);
    }
    let mut pad_shape = last.shape().to_vec();
    *pad_shape.last_mut().expect("at least one dimension") = n - have;
    let pad = crate::zeros(&pad_shape, (last.dtype(), last.device()))?;
    crate::concat(&[&last, &pad], Some(-1))
}

/// The axis of a one-dimensional transform, normalized.
fn axis_of(op: &str, x: &Array, axis: isize) -> Result<usize> {
    if x.ndim() == 0 {
        return Err(Error::invalid_argument(op, "needs an array of at least one dimension"));
    }
    normalize_axis(op, axis, x.ndim())
}

fn scale_attr(scale: f64) -> Attrs {
    Attrs::new().with("scale", AttrValue::Float(scale))
}

/// One complex transform along `axis`.
fn c2c(op: &str, x: &Array, n: Option<usize>, axis: isize, norm: Norm, inverse: bool) -> Result<Array> {
    let axis = axis_of(op, x, axis)?;
    let n = n.unwrap_or(x.shape()[axis]);
    let input = along(op, &as_complex(op, x)?, axis, n)?;
    let attrs = scale_attr(norm.scale(n, inverse)).with("inverse", AttrValue::Bool(inverse));
    kernels::call("c2c", &input, &attrs)?.moveaxis(&[-1], &[axis as isize])
}

/// The discrete Fourier transform of `n` points (default: the axis'
/// length; shorter axes are zero-padded, longer ones cut) along `axis`.
pub fn fft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    c2c("fft", x, n, axis, norm, false)
}

/// The inverse of [`fft`].
pub fn ifft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    c2c("ifft", x, n, axis, norm, true)
}

/// The transform of real input along `axis`: the `n / 2 + 1`
/// non-negative frequency terms.
pub fn rfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    let op = "rfft";
    let axis = axis_of(op, x, axis)?;
    let n = n.unwrap_or(x.shape()[axis]);
    let input = along(op, &as_real(op, x)?, axis, n)?;
    kernels::call("r2c", &input, &scale_attr(norm.scale(n, false)))?.moveaxis(&[-1], &[axis as isize])
}

/// The inverse of [`rfft`]: `n` real points (default `2 * (m - 1)` for
/// `m` input points) from the non-negative frequency terms along `axis`.
/// The imaginary parts of the zero (and, for even `n`, the Nyquist)
/// frequency are ignored, as NumPy ignores them.
pub fn irfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    let op = "irfft";
    let axis = axis_of(op, x, axis)?;
    let m = x.shape()[axis];
    let n = match n {
        Some(n) => n,
        None if m >= 2 => 2 * (m - 1),
        None => {
            return Err(Error::invalid_argument(
                op,
                format!("cannot infer the output length from {m} input point(s); give n"),
            ))
        }
    };
    if n == 0 {
        return Err(Error::invalid_argument(op, "the transform length n must be at least 1"));
    }
    let input = along(op, &as_complex(op, x)?, axis, n / 2 + 1)?;
    let attrs = scale_attr(norm.scale(n, true)).with("n", AttrValue::Int(n as i64));
    kernels::call("c2r", &input, &attrs)?.moveaxis(&[-1], &[axis as isize])
}

/// The transform of a signal with Hermitian symmetry (given by its
/// non-negative frequencies) along `axis`: `n` real points.
pub fn hfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    let x = as_complex("hfft", x)?;
    irfft(&x.conj()?, n, axis, norm.swapped())
}

/// The inverse of [`hfft`]: the non-negative frequency terms of real input.
pub fn ihfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    rfft(x, n, axis, norm.swapped())?.conj()
}

/// The axes and lengths of an n-dimensional transform: `axes` (default:
/// the last `s.len()` axes, or every axis) with lengths `s` (default: the
/// axes' lengths).
fn plan(op: &str, x: &Array, s: Option<&[usize]>, axes: Option<&[isize]>) -> Result<Vec<(usize, Option<usize>)>> {
    let ndim = x.ndim() as isize;
    let axes: Vec<isize> = match (axes, s) {
        (Some(a), _) => a.to_vec(),
        (None, Some(s)) => (ndim - s.len() as isize..ndim).collect(),
        (None, None) => (0..ndim).collect(),
    };
    if let Some(s) = s {
        if s.len() != axes.len() {
            return Err(Error::invalid_argument(
                op,
                format!("s has {} lengths for {} axes", s.len(), axes.len()),
            ));
        }
    }
    let normalized = crate::shape::normalize_axes(op, Some(&axes), x.ndim())?;
    if normalized.len() != axes.len() {
        return Err(Error::invalid_argument(op, "axes must not repeat"));
    }
    if axes.is_empty() {
        return Err(Error::invalid_argument(op, "needs at least one axis"));
    }
    Ok(axes
        .iter()
        .enumerate()
        .map(|(i, &a)| (normalize_axis(op, a, x.ndim()).expect("checked above"), s.map(|s| s[i])))
        .collect())
}

/// [`fft`] over several axes (`s` lengths, `axes`; both optional).
pub fn fftn(x: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Norm) -> Result<Array> {
    let mut out = x.clone();
    for (axis, n) in plan("fftn", x, s, axes)? {
        out = c2c("fftn", &out, n, axis as isize, norm, false)?;
    }
    Ok(out)
}

/// [`ifft`] over several axes.
pub fn ifftn(x: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Norm) -> Result<Array> {
    let mut out = x.clone();
    for (axis, n) in plan("ifftn", x, s, axes)? {
        out = c2c("ifftn", &out, n, axis as isize, norm, true)?;
    }
    Ok(out)
}

/// [`rfft`] over the last of `axes`, then [`fft`] over the others.
pub fn rfftn(x: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Norm) -> Result<Array> {
    let mut plan = plan("rfftn", x, s, axes)?;
    let (last, n) = plan.pop().expect("at least one axis");
    let mut out = rfft(x, n, last as isize, norm)?;
    for (axis, n) in plan {
        out = c2c("rfftn", &out, n, axis as isize, norm, false)?;
    }
    Ok(out)
}

/// The inverse of [`rfftn`]: [`ifft`] over all but the last of `axes`,
/// then [`irfft`] over the last (length `s`'s last, default `2 * (m - 1)`).
pub fn irfftn(x: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Norm) -> Result<Array> {
    let mut plan = plan("irfftn", x, s, axes)?;
    let (last, n) = plan.pop().expect("at least one axis");
    let mut out = x.clone();
    for (axis, n) in plan {
        out = c2c("irfftn", &out, n, axis as isize, norm, true)?;
    }
    irfft(&out, n, last as isize, norm)
}
