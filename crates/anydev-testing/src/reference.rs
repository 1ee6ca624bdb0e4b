//! Independent references: values, shapes and results computed on the host
//! in f64 by plain loops, never by a kernel, and per-dtype tolerances.

use crate::case::Failure;
use anydev_array::Array;
use anydev_core::{DType, Device, Result};

/// The float dtypes, narrowest first.
pub const FLOATS: &[DType] = &[DType::F16, DType::BF16, DType::F32, DType::F64];
/// Integer dtypes with distinct edge behaviour (signed/unsigned, narrow/wide).
pub const INTS: &[DType] = &[DType::I8, DType::I32, DType::I64, DType::U8, DType::U32];
/// The dtypes most code uses: f32, f64, i32, i64.
pub const COMMON: &[DType] = &[DType::F32, DType::F64, DType::I32, DType::I64];

/// `(relative, absolute)` tolerance for results of `dtype` computed from
/// exactly representable inputs: a few units in the last place of the
/// dtype's precision; integers and bools are exact.
pub fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (4e-3, 1e-3),
        DType::BF16 => (3e-2, 1e-2),
        DType::F32 => (2e-6, 1e-6),
        DType::F64 => (1e-12, 1e-12),
        _ => (0.0, 0.0),
    }
}

/// Whether `got` equals `want` within `dtype`'s tolerance. NaN equals NaN,
/// infinities must match exactly.
pub fn close(dtype: DType, got: f64, want: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    let (rtol, atol) = tolerance(dtype);
    (got - want).abs() <= atol + rtol * want.abs()
}

/// Compares element by element, naming the first element that differs.
pub fn check_close(what: &str, dtype: DType, want: &[f64], got: &[f64]) -> std::result::Result<(), Failure> {
    if want.len() != got.len() {
        return Err(Failure::new(format!("{what}: element count"), want.len(), got.len()));
    }
    match (0..want.len()).find(|&i| !close(dtype, got[i], want[i])) {
        None => Ok(()),
        Some(i) => Err(Failure::new(
            format!("{what}: element {i} ({dtype}, tolerance {:?})", tolerance(dtype)),
            want[i],
            got[i],
        )),
    }
}

/// Reads `array` back and compares it with `want` (shape and values).
pub fn check_array(what: &str, want_shape: &[usize], want: &[f64], array: &Array) -> std::result::Result<(), Failure> {
    if array.shape() != want_shape {
        return Err(Failure::new(
            format!("{what}: shape"),
            format!("{want_shape:?}"),
            format!("{:?}", array.shape()),
        ));
    }
    if array.dtype().is_complex() {
        // Real references (from `array`'s zero imaginary parts): the real
        // parts must match and the imaginary parts stay 0.
        let got = array.to_c128_vec()?;
        if let Some(z) = got.iter().find(|z| z.im != 0.0) {
            return Err(Failure::new(format!("{what}: imaginary part"), 0.0, z.im));
        }
        let re: Vec<f64> = got.iter().map(|z| z.re).collect();
        return check_close(what, array.dtype().real_dtype(), want, &re);
    }
    check_close(what, array.dtype(), want, &array.to_f64_vec()?)
}

/// `v` rounded to the nearest value `dtype` holds (integers wrap like a cast
/// from i64), so references start from exactly the inputs the device sees.
pub fn round_to(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::Bool => (v != 0.0) as u8 as f64,
        DType::I8 => v as i64 as i8 as f64,
        DType::I16 => v as i64 as i16 as f64,
        DType::I32 => v as i64 as i32 as f64,
        DType::I64 => v as i64 as f64,
        DType::U8 => v as i64 as u8 as f64,
        DType::U16 => v as i64 as u16 as f64,
        DType::U32 => v as i64 as u32 as f64,
        DType::U64 => v as u64 as f64,
        DType::F16 => anydev_core::ops::f16_from_f64(v).to_f64(),
        DType::BF16 => anydev_core::ops::bf16_from_f64(v).to_f64(),
        DType::F32 | DType::C64 => v as f32 as f64,
        DType::F64 | DType::C128 => v,
    }
}

/// `n` deterministic values that `dtype` holds exactly: small integers for
/// integer dtypes (non-negative for unsigned), quarters in [-8, 8) for
/// floats (and for the real parts of complex dtypes).
pub fn sample(dtype: DType, n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) as i64;
            let v = match dtype.kind() {
                anydev_core::ops::DTypeKind::Bool => (r % 2) as f64,
                anydev_core::ops::DTypeKind::SignedInt => (r % 41 - 20) as f64,
                anydev_core::ops::DTypeKind::UnsignedInt => (r % 41) as f64,
                anydev_core::ops::DTypeKind::Float | anydev_core::ops::DTypeKind::Complex => (r % 64 - 32) as f64 / 4.0,
            };
            round_to(dtype, v)
        })
        .collect()
}

/// An array of `dtype` on `device` holding `values` (converted like a
/// cast; complex dtypes get zero imaginary parts).
pub fn array(values: &[f64], shape: &[usize], dtype: DType, device: Device) -> Result<Array> {
    fn up<T: anydev_array::Element>(v: Vec<T>, shape: &[usize], device: Device) -> Result<Array> {
        Array::from_vec(v, shape, device)
    }
    let vals = values.iter().copied();
    match dtype {
        DType::Bool => up(vals.map(|v| v != 0.0).collect(), shape, device),
        DType::I8 => up(vals.map(|v| v as i64 as i8).collect(), shape, device),
        DType::I16 => up(vals.map(|v| v as i64 as i16).collect(), shape, device),
        DType::I32 => up(vals.map(|v| v as i64 as i32).collect(), shape, device),
        DType::I64 => up(vals.map(|v| v as i64).collect(), shape, device),
        DType::U8 => up(vals.map(|v| v as i64 as u8).collect(), shape, device),
        DType::U16 => up(vals.map(|v| v as i64 as u16).collect(), shape, device),
        DType::U32 => up(vals.map(|v| v as i64 as u32).collect(), shape, device),
        DType::U64 => up(vals.map(|v| v as u64).collect(), shape, device),
        DType::F16 => up(vals.map(anydev_core::ops::f16_from_f64).collect(), shape, device),
        DType::BF16 => up(vals.map(anydev_core::ops::bf16_from_f64).collect(), shape, device),
        DType::F32 => up(vals.map(|v| v as f32).collect(), shape, device),
        DType::F64 => up(vals.collect(), shape, device),
        DType::C64 => up(
            vals.map(|v| num_complex::Complex32::new(v as f32, 0.0)).collect(),
            shape,
            device,
        ),
        DType::C128 => up(
            vals.map(|v| num_complex::Complex64::new(v, 0.0)).collect(),
            shape,
            device,
        ),
    }
}

/// Every multi-index of `shape`, row-major.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = shape.iter().product();
    (0..total)
        .map(|mut flat| {
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = flat % shape[d];
                flat /= shape[d];
            }
            idx
        })
        .collect()
}

/// The broadcast of two shapes by the standard's rule, `None` when they
/// are incompatible.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
            let y = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
            match (x, y) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// Row-major position in an array of `shape`, broadcast to `out`, of the
/// element at `out_idx`.
pub fn source_index(shape: &[usize], out: &[usize], out_idx: &[usize]) -> usize {
    let lead = out.len() - shape.len();
    shape
        .iter()
        .enumerate()
        .fold(0, |acc, (d, &n)| acc * n + if n == 1 { 0 } else { out_idx[lead + d] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_representable_and_in_range() {
        for dtype in DType::ALL {
            for v in sample(dtype, 50, 3) {
                assert_eq!(round_to(dtype, v), v, "{dtype} {v}");
                if !dtype.is_float() {
                    assert!((-20.0..=40.0).contains(&v), "{dtype} {v}");
                }
            }
        }
    }

    #[test]
    fn tolerances_scale_with_precision() {
        assert!(close(DType::F32, 1.0 + 1e-7, 1.0));
        assert!(!close(DType::F32, 1.001, 1.0));
        assert!(close(DType::F16, 1.001, 1.0));
        assert!(!close(DType::I32, 2.0, 1.0));
        assert!(close(DType::F64, f64::NAN, f64::NAN));
        assert!(!close(DType::F64, f64::INFINITY, 1e300));
    }

    #[test]
    fn broadcasting_reference() {
        assert_eq!(broadcast_shape(&[3, 1, 4], &[2, 4]), Some(vec![3, 2, 4]));
        assert_eq!(broadcast_shape(&[3], &[4]), None);
        assert_eq!(source_index(&[1, 4], &[3, 2, 4], &[2, 1, 3]), 3);
        assert_eq!(indices(&[2, 2]), vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
    }
}
