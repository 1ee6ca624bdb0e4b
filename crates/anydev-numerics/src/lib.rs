//! The numerics behind anydev's `linalg` factorizations and `fft`
//! transforms, on host memory and without the runtime.
//!
//! The array layer defines the ops (`linalg::*`, `fft::*`: schemas and
//! shape rules) and registers [`run`] as their `cpu` kernel; a device
//! plugin that computes on the host (the simulator) links this crate and
//! runs the same code on its own memory through the ABI's extension calls,
//! so both give the same bits. Calls arrive validated by the op's shape
//! rule; every operand's dtype and length is still checked here, so a
//! mistake is an error rather than a panic.
//!
//! - [`linalg`]: faer's Cholesky, LU, QR, eigen and singular value
//!   decompositions, over every matrix of a batch.
//! - [`fft`]: rustfft's and realfft's transforms over the last axis.

pub mod fft;
pub mod linalg;
mod operand;

pub use anydev_ops::{AttrLookup, HostOperand as Operand, HostOperandMut as OperandMut};
pub use operand::NumericsError;

/// The ops' names.
pub mod op {
    pub use crate::fft::op as fft;
    pub use crate::linalg::op as linalg;

    /// Every op of the crate: the factorizations, then the transforms.
    pub fn all() -> impl Iterator<Item = &'static str> {
        linalg::ALL.into_iter().chain(fft::ALL)
    }
}

/// Runs op `name` on host memory: `ins` and `outs` as the op's schema
/// orders them, attributes through `attr`.
pub fn run(
    name: &str,
    ins: &[Operand<'_>],
    outs: &mut [OperandMut<'_>],
    attr: &AttrLookup<'_>,
) -> Result<(), NumericsError> {
    if op::linalg::ALL.contains(&name) {
        linalg::run(name, ins, outs, attr)
    } else if op::fft::ALL.contains(&name) {
        fft::run(name, ins, outs, attr)
    } else {
        Err(NumericsError::new(
            name,
            format!(
                "not an op of this library (its ops: {})",
                op::all().collect::<Vec<_>>().join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anydev_ops::{AttrValue, DType};

    fn no_attrs(_: &str) -> Option<&'static AttrValue> {
        None
    }

    fn f64_bytes(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn inv_inverts_and_refuses_a_singular_matrix() {
        let (bytes, mut out) = (f64_bytes(&[2.0, 0.0, 0.0, 4.0]), vec![0u8; 32]);
        let ins = [Operand {
            dtype: DType::F64,
            shape: &[2, 2],
            bytes: &bytes,
        }];
        let mut outs = [OperandMut {
            dtype: DType::F64,
            shape: &[2, 2],
            bytes: &mut out,
        }];
        run(op::linalg::INV, &ins, &mut outs, &no_attrs).unwrap();
        assert_eq!(out, f64_bytes(&[0.5, 0.0, 0.0, 0.25]));
        let singular = f64_bytes(&[1.0, 2.0, 2.0, 4.0]);
        let ins = [Operand {
            dtype: DType::F64,
            shape: &[2, 2],
            bytes: &singular,
        }];
        let mut outs = [OperandMut {
            dtype: DType::F64,
            shape: &[2, 2],
            bytes: &mut out,
        }];
        let err = run(op::linalg::INV, &ins, &mut outs, &no_attrs).unwrap_err();
        assert_eq!(err, NumericsError::new("inv", "the matrix is singular"));
    }

    /// The message of running `name` on one input and one output.
    fn failure(name: &str, input: (DType, &[usize], &[u8]), output: (DType, &[usize], usize)) -> String {
        let scale = AttrValue::Float(1.0);
        let attrs = |name: &str| (name == "scale").then_some(&scale);
        let mut out = vec![0u8; output.2];
        let ins = [Operand {
            dtype: input.0,
            shape: input.1,
            bytes: input.2,
        }];
        let mut outs = [OperandMut {
            dtype: output.0,
            shape: output.1,
            bytes: &mut out,
        }];
        run(name, &ins, &mut outs, &attrs).unwrap_err().to_string()
    }

    #[test]
    fn malformed_calls_are_errors_not_panics() {
        let three = f64_bytes(&[1.0, 2.0, 3.0]);
        let one = &three[..8];
        let too_short = failure(
            op::linalg::INV,
            (DType::F64, &[2, 2], &three),
            (DType::F64, &[2, 2], 32),
        );
        assert!(too_short.contains("holds 24 bytes, expected 32"), "{too_short}");
        let integers = failure(op::linalg::DET, (DType::I64, &[1, 1], one), (DType::I64, &[], 8));
        assert!(integers.contains("needs f32, f64, c64 or c128"), "{integers}");
        let wrong_output = failure(op::linalg::DET, (DType::F64, &[1, 1], one), (DType::F64, &[2], 16));
        assert!(wrong_output.contains("expected 1"), "{wrong_output}");
        let no_direction = failure(op::fft::C2C, (DType::C128, &[1], &three[..16]), (DType::C128, &[1], 16));
        assert!(no_direction.contains("inverse is missing"), "{no_direction}");
        let real_output = failure(op::fft::R2C, (DType::F64, &[3], &three), (DType::F64, &[2], 16));
        assert!(real_output.contains("expected c128"), "{real_output}");
        assert!(run("linalg::lu", &[], &mut [], &no_attrs).is_err());
    }
}
