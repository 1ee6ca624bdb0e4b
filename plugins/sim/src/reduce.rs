//! The typed reduction of all-reduce and reduce-scatter, as the ABI states
//! it (`ANYDEV_REDUCE_*`): bool sum and max are logical or, prod and min
//! logical and; integers wrap; f16 and bf16 accumulate in f32 and round
//! once; min and max propagate NaN; complex dtypes have sum and prod only.
//! Ranks combine in rank order, so every rank computes the same bits.

use anydev_ops::DType;
use anydev_plugin::{PluginError, ReduceOp, Result};
use half::{bf16, f16};

/// How two accumulated values combine.
type Combine<A> = fn(A, A) -> A;

/// An element type as the reduction sees it: how it is read from and
/// written to little-endian bytes, and the value it accumulates in.
trait Element {
    /// What the reduction accumulates in (f32 for f16 and bf16).
    type Acc: Copy;
    const SIZE: usize;
    fn load(bytes: &[u8]) -> Self::Acc;
    fn store(acc: Self::Acc, out: &mut [u8]);
    /// How two accumulated values combine under `op`; `None` when `op` is
    /// not defined for the type.
    fn combine(op: ReduceOp) -> Option<Combine<Self::Acc>>;
}

fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes[..N].try_into().expect("a whole element")
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Element for $t {
            type Acc = $t;
            const SIZE: usize = std::mem::size_of::<$t>();
            fn load(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(array(bytes))
            }
            fn store(acc: $t, out: &mut [u8]) {
                out.copy_from_slice(&acc.to_le_bytes());
            }
            fn combine(op: ReduceOp) -> Option<Combine<$t>> {
                Some(match op {
                    ReduceOp::Sum => <$t>::wrapping_add,
                    ReduceOp::Prod => <$t>::wrapping_mul,
                    ReduceOp::Min => Ord::min,
                    ReduceOp::Max => Ord::max,
                })
            }
        }
    )*};
}

integer!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Element for $t {
            type Acc = $t;
            const SIZE: usize = std::mem::size_of::<$t>();
            fn load(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(array(bytes))
            }
            fn store(acc: $t, out: &mut [u8]) {
                out.copy_from_slice(&acc.to_le_bytes());
            }
            fn combine(op: ReduceOp) -> Option<Combine<$t>> {
                // `min`/`max` of std ignore NaN; the ABI propagates it.
                Some(match op {
                    ReduceOp::Sum => |a, b| a + b,
                    ReduceOp::Prod => |a, b| a * b,
                    ReduceOp::Min => |a, b| if a.is_nan() || b.is_nan() { <$t>::NAN } else if b < a { b } else { a },
                    ReduceOp::Max => |a, b| if a.is_nan() || b.is_nan() { <$t>::NAN } else if b > a { b } else { a },
                })
            }
        }
    )*};
}

float!(f32, f64);

macro_rules! half_float {
    ($($t:ty),*) => {$(
        impl Element for $t {
            type Acc = f32;
            const SIZE: usize = 2;
            fn load(bytes: &[u8]) -> f32 {
                <$t>::from_le_bytes(array(bytes)).to_f32()
            }
            fn store(acc: f32, out: &mut [u8]) {
                out.copy_from_slice(&<$t>::from_f32(acc).to_le_bytes());
            }
            fn combine(op: ReduceOp) -> Option<Combine<f32>> {
                <f32 as Element>::combine(op)
            }
        }
    )*};
}

half_float!(f16, bf16);

impl Element for bool {
    type Acc = bool;
    const SIZE: usize = 1;
    fn load(bytes: &[u8]) -> bool {
        bytes[0] != 0
    }
    fn store(acc: bool, out: &mut [u8]) {
        out[0] = u8::from(acc);
    }
    fn combine(op: ReduceOp) -> Option<Combine<bool>> {
        Some(match op {
            ReduceOp::Sum | ReduceOp::Max => |a, b| a || b,
            ReduceOp::Prod | ReduceOp::Min => |a, b| a && b,
        })
    }
}

// `c64` and `c128` as `[f32; 2]` and `[f64; 2]`: real part first.
macro_rules! complex {
    ($($t:ty),*) => {$(
        impl Element for [$t; 2] {
            type Acc = [$t; 2];
            const SIZE: usize = 2 * std::mem::size_of::<$t>();
            fn load(bytes: &[u8]) -> [$t; 2] {
                let half = Self::SIZE / 2;
                [<$t>::from_le_bytes(array(bytes)), <$t>::from_le_bytes(array(&bytes[half..]))]
            }
            fn store(acc: [$t; 2], out: &mut [u8]) {
                let half = Self::SIZE / 2;
                out[..half].copy_from_slice(&acc[0].to_le_bytes());
                out[half..].copy_from_slice(&acc[1].to_le_bytes());
            }
            fn combine(op: ReduceOp) -> Option<Combine<[$t; 2]>> {
                match op {
                    ReduceOp::Sum => Some(|[a, b], [c, d]| [a + c, b + d]),
                    ReduceOp::Prod => Some(|[a, b], [c, d]| [a * c - b * d, a * d + b * c]),
                    ReduceOp::Min | ReduceOp::Max => None,
                }
            }
        }
    )*};
}

complex!(f32, f64);

/// Whether `op` is defined for `dtype`.
pub fn check(dtype: DType, op: ReduceOp) -> Result<()> {
    match dtype.is_complex() && matches!(op, ReduceOp::Min | ReduceOp::Max) {
        false => Ok(()),
        true => Err(PluginError::invalid_argument(format!(
            "{op:?} is not defined for the complex dtype {dtype}: reduce complex values with Sum or Prod"
        ))),
    }
}

fn reduce_as<E: Element>(op: ReduceOp, inputs: &[&[u8]], out: &mut [u8]) -> Result<()> {
    let combine = E::combine(op).ok_or_else(|| PluginError::invalid_argument(format!("{op:?} is not defined here")))?;
    for (i, element) in out.chunks_exact_mut(E::SIZE).enumerate() {
        let at = i * E::SIZE;
        let mut acc = E::load(&inputs[0][at..]);
        for input in &inputs[1..] {
            acc = combine(acc, E::load(&input[at..]));
        }
        E::store(acc, element);
    }
    Ok(())
}

/// `out = inputs[0] op inputs[1] op …`, element by element, left to right
/// (the inputs in rank order). Every input has `out`'s length, a whole
/// number of `dtype` elements.
pub fn reduce(dtype: DType, op: ReduceOp, inputs: &[&[u8]], out: &mut [u8]) -> Result<()> {
    check(dtype, op)?;
    if inputs.is_empty() || inputs.iter().any(|i| i.len() != out.len()) || !out.len().is_multiple_of(dtype.size()) {
        return Err(PluginError::internal(format!(
            "reduce: {} inputs of lengths {:?} for {} bytes of {dtype}",
            inputs.len(),
            inputs.iter().map(|i| i.len()).collect::<Vec<_>>(),
            out.len()
        )));
    }
    match dtype {
        DType::Bool => reduce_as::<bool>(op, inputs, out),
        DType::I8 => reduce_as::<i8>(op, inputs, out),
        DType::I16 => reduce_as::<i16>(op, inputs, out),
        DType::I32 => reduce_as::<i32>(op, inputs, out),
        DType::I64 => reduce_as::<i64>(op, inputs, out),
        DType::U8 => reduce_as::<u8>(op, inputs, out),
        DType::U16 => reduce_as::<u16>(op, inputs, out),
        DType::U32 => reduce_as::<u32>(op, inputs, out),
        DType::U64 => reduce_as::<u64>(op, inputs, out),
        DType::F16 => reduce_as::<f16>(op, inputs, out),
        DType::BF16 => reduce_as::<bf16>(op, inputs, out),
        DType::F32 => reduce_as::<f32>(op, inputs, out),
        DType::F64 => reduce_as::<f64>(op, inputs, out),
        DType::C64 => reduce_as::<[f32; 2]>(op, inputs, out),
        DType::C128 => reduce_as::<[f64; 2]>(op, inputs, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Copy, const N: usize>(values: &[T], to: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| to(v)).collect()
    }

    fn run(dtype: DType, op: ReduceOp, inputs: &[Vec<u8>]) -> Vec<u8> {
        let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut out = vec![0u8; inputs[0].len()];
        reduce(dtype, op, &refs, &mut out).unwrap();
        out
    }

    #[test]
    fn integers_wrap() {
        let a = bytes(&[i32::MAX, -3], i32::to_le_bytes);
        let b = bytes(&[1, 5], i32::to_le_bytes);
        assert_eq!(
            run(DType::I32, ReduceOp::Sum, &[a, b]),
            bytes(&[i32::MIN, 2], i32::to_le_bytes)
        );
        assert_eq!(run(DType::U8, ReduceOp::Prod, &[vec![16, 3], vec![17, 4]]), [16, 12]);
    }

    #[test]
    fn half_floats_round_once() {
        // 2048 + 1 + 1: f16 has no 2049, so rounding each step stays at 2048.
        let h = |v: f32| bytes(&[f16::from_f32(v)], f16::to_le_bytes);
        let out = run(DType::F16, ReduceOp::Sum, &[h(2048.0), h(1.0), h(1.0)]);
        assert_eq!(out, h(2050.0));
        let b = |v: f32| bytes(&[bf16::from_f32(v)], bf16::to_le_bytes);
        let out = run(DType::BF16, ReduceOp::Sum, &[b(256.0), b(1.0), b(1.0)]);
        assert_eq!(out, b(258.0));
    }

    #[test]
    fn min_and_max_propagate_nan_and_bool_is_logical() {
        let f = |v: &[f64]| bytes(v, f64::to_le_bytes);
        let out = run(DType::F64, ReduceOp::Min, &[f(&[1.0, f64::NAN]), f(&[f64::NAN, 2.0])]);
        assert!(f64::from_le_bytes(out[..8].try_into().unwrap()).is_nan());
        assert!(f64::from_le_bytes(out[8..].try_into().unwrap()).is_nan());
        let out = run(DType::F64, ReduceOp::Max, &[f(&[1.0, -4.0]), f(&[3.0, -5.0])]);
        assert_eq!(out, f(&[3.0, -4.0]));
        let (a, b) = (vec![0, 1, 0, 1], vec![0, 0, 1, 1]);
        assert_eq!(run(DType::Bool, ReduceOp::Sum, &[a.clone(), b.clone()]), [0, 1, 1, 1]);
        assert_eq!(run(DType::Bool, ReduceOp::Min, &[a, b]), [0, 0, 0, 1]);
    }

    #[test]
    fn complex_multiplies_and_has_no_order() {
        let c = |v: &[f32]| bytes(v, f32::to_le_bytes);
        // (1 + 2i)(3 - i) = 5 + 5i
        assert_eq!(
            run(DType::C64, ReduceOp::Prod, &[c(&[1.0, 2.0]), c(&[3.0, -1.0])]),
            c(&[5.0, 5.0])
        );
        let err = reduce(DType::C128, ReduceOp::Max, &[&[0; 16]], &mut [0; 16]).unwrap_err();
        assert!(err.message.contains("complex"), "{err}");
    }
}
