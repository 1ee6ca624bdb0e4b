//! The transforms composed from the device's own array ops, for devices
//! that neither have an FFT kernel for their kind nor implement the op in
//! their plugin (wgpu, CUDA): a radix-2 Cooley–Tukey transform for
//! power-of-two lengths, and Bluestein's chirp-z algorithm on top of it
//! for every other length. Every step is an op on the input's device
//! (strided views, `stack`, `multiply`, `add`, `concat`), so nothing moves
//! to the host; only the twiddle factors and chirps are computed on the
//! host, in f64, and uploaded in the transform's dtype.
//!
//! A power-of-two length costs about five launches per halving; any other
//! length three power-of-two transforms of at least `2n - 1` points. That
//! is slower than a native kernel, but exact to a few ulps times `log n`,
//! and it runs wherever complex multiply, add and copies do.

use crate::array::Array;
use crate::manipulation::{concat, stack};
use crate::SliceArg;
use anydev_core::{DType, Result};
use num_complex::{Complex32, Complex64};
use std::f64::consts::PI;

/// `fft::c2c` of the last axis of complex `x`, times `scale`.
pub(super) fn c2c(x: &Array, inverse: bool, scale: f64) -> Result<Array> {
    let n = points(x);
    let (y, scale) = if n.is_power_of_two() {
        (radix2(x, inverse)?, scale)
    } else {
        bluestein(x, inverse, scale)?
    };
    scaled(y, scale)
}

/// `fft::r2c`: the `n / 2 + 1` non-negative frequencies of real `x`.
pub(super) fn r2c(x: &Array, scale: f64) -> Result<Array> {
    let complex = x
        .dtype()
        .complex_dtype()
        .expect("the shape rule admits only real floats");
    let half = points(x) / 2 + 1;
    let spectrum = c2c(&x.astype(complex)?, false, 1.0)?;
    scaled(spectrum.slice(&[SliceArg::Ellipsis, (0..half as isize).into()])?, scale)
}

/// `fft::c2r`: `n` real points from the non-negative frequencies `x`,
/// completed by Hermitian symmetry (`X[n - k] = conj(X[k])`); the imaginary
/// parts of the zero and Nyquist terms drop out with the real part taken.
pub(super) fn c2r(x: &Array, n: usize, scale: f64) -> Result<Array> {
    let given = points(x);
    let mirrored = x
        .slice(&[SliceArg::Ellipsis, (1..(n - given + 1) as isize).into()])?
        .flip(-1isize)?
        .conj()?;
    c2c(&concat(&[x, &mirrored], Some(-1))?, true, scale)?.real()
}

fn points(x: &Array) -> usize {
    *x.shape()
        .last()
        .expect("the shape rules ask for at least one dimension")
}

fn scaled(y: Array, scale: f64) -> Result<Array> {
    if scale == 1.0 {
        Ok(y)
    } else {
        y.multiply(scale)
    }
}

/// `e^(sign·2πi·k/n)`'s sign: negative forward, positive inverse.
fn sign(inverse: bool) -> f64 {
    if inverse {
        1.0
    } else {
        -1.0
    }
}

/// Decimation in time: the transforms of the even and odd elements,
/// computed as one batch of half the length, joined by one butterfly.
fn radix2(x: &Array, inverse: bool) -> Result<Array> {
    let n = points(x);
    if n == 1 {
        return Ok(x.clone());
    }
    let every_other = |first: isize| x.slice(&[SliceArg::Ellipsis, SliceArg::from(first..n as isize).step_by(2)]);
    let halves = radix2(&stack(&[&every_other(0)?, &every_other(1)?], -2)?, inverse)?;
    let half = |i: isize| halves.slice(&[SliceArg::Ellipsis, i.into(), (..).into()]);
    let twiddles: Vec<Complex64> = (0..n / 2)
        .map(|k| Complex64::from_polar(1.0, sign(inverse) * 2.0 * PI * k as f64 / n as f64))
        .collect();
    let (even, odd) = (half(0)?, half(1)?.multiply(&constant(&twiddles, x)?)?);
    concat(&[&even.add(&odd)?, &even.subtract(&odd)?], Some(-1))
}

/// Bluestein: with the chirp `c_j = e^(sign·πi·j²/n)`, `jk = (j² + k² -
/// (k - j)²) / 2` makes the transform `X_k = c_k Σ_j (x_j c_j)
/// conj(c_(k-j))`, a convolution, done as a cyclic one of `m ≥ 2n - 1`
/// points with power-of-two transforms. Returns the result and the scale
/// still to apply (the cyclic inverse's `1 / m` is folded in).
fn bluestein(x: &Array, inverse: bool, scale: f64) -> Result<(Array, f64)> {
    let n = points(x);
    let m = (2 * n - 1).next_power_of_two();
    // j² mod 2n keeps the angle small, so it is exact to f64's rounding.
    let chirp: Vec<Complex64> = (0..n as u128)
        .map(|j| Complex64::from_polar(1.0, sign(inverse) * PI * ((j * j) % (2 * n as u128)) as f64 / n as f64))
        .collect();
    let mut kernel = vec![Complex64::new(0.0, 0.0); m];
    for (j, c) in chirp.iter().enumerate() {
        kernel[j] = c.conj();
        kernel[(m - j) % m] = c.conj();
    }
    let mut padded_shape = x.shape().to_vec();
    *padded_shape.last_mut().expect("at least one dimension") = m - n;
    let padding = crate::zeros(&padded_shape, (x.dtype(), x.device()))?;
    let weighted = x.multiply(&constant(&chirp, x)?)?;
    let product =
        radix2(&concat(&[&weighted, &padding], Some(-1))?, false)?.multiply(&radix2(&constant(&kernel, x)?, false)?)?;
    let convolved = radix2(&product, true)?.slice(&[SliceArg::Ellipsis, (0..n as isize).into()])?;
    Ok((convolved.multiply(&constant(&chirp, x)?)?, scale / m as f64))
}

/// `values` as a 1-D array of `like`'s complex dtype on its device,
/// rounded once from f64.
fn constant(values: &[Complex64], like: &Array) -> Result<Array> {
    let shape = [values.len()];
    match like.dtype() {
        DType::C64 => {
            let narrow: Vec<Complex32> = values
                .iter()
                .map(|v| Complex32::new(v.re as f32, v.im as f32))
                .collect();
            Array::from_vec(narrow, &shape, like.device())
        }
        _ => Array::from_slice(values, &shape, like.device()),
    }
}
