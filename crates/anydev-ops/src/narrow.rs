//! f64 narrowed to the 16-bit floats with one rounding.
//!
//! `half`'s `from_f64` drops the low 32 bits of the f64 before rounding to
//! nearest-even, so a value just above a tie (1 + 2^-11 + 2^-40) lands on
//! the tie and is rounded the wrong way. Rounding to odd into f32 first
//! keeps those bits as a sticky bit: f32 has at least two more bits than
//! f16 and bf16, so the second rounding, to nearest-even, gives what one
//! rounding of the f64 would.

use half::{bf16, f16};

/// `v` rounded once to the nearest f16 (ties to even).
pub fn f16_from_f64(v: f64) -> f16 {
    f16::from_f32(f32_round_to_odd(v))
}

/// `v` rounded once to the nearest bf16 (ties to even).
pub fn bf16_from_f64(v: f64) -> bf16 {
    bf16::from_f32(f32_round_to_odd(v))
}

/// f64 to f32 rounding to odd: truncate toward zero, then set the last
/// bit if the result is inexact.
fn f32_round_to_odd(v: f64) -> f32 {
    let f = v as f32;
    if !f.is_finite() || f as f64 == v {
        return f;
    }
    let mut bits = f.to_bits();
    if (f as f64).abs() > v.abs() {
        bits -= 1; // rounded away from zero: step back toward it
    }
    f32::from_bits(bits | 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest value to `v` among `candidate` and its neighbours, ties
    /// to the even bit pattern: the rounding rule stated directly.
    fn nearest(v: f64, candidate: u16, to_f64: impl Fn(u16) -> f64) -> u16 {
        let mut best = candidate;
        for bits in [candidate.wrapping_sub(1), candidate.wrapping_add(1)] {
            let (d, db) = ((to_f64(bits) - v).abs(), (to_f64(best) - v).abs());
            if d < db || (d == db && bits % 2 == 0) {
                best = bits;
            }
        }
        best
    }

    #[test]
    fn values_past_a_tie_round_away_from_it() {
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(v).to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(f16::from_f64(v).to_f64(), 1.0, "half's own conversion rounds twice");
        let v = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(bf16_from_f64(v).to_f64(), 1.0 + 2f64.powi(-7));
        assert_eq!(bf16_from_f64(-v).to_f64(), -(1.0 + 2f64.powi(-7)));
    }

    #[test]
    fn exact_ties_go_to_even_and_specials_pass_through() {
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)).to_f64(), 1.0);
        assert_eq!(f16_from_f64(1.0 + 3.0 * 2f64.powi(-11)).to_f64(), 1.0 + 2f64.powi(-9));
        assert!(f16_from_f64(f64::NAN).is_nan());
        assert_eq!(f16_from_f64(f64::INFINITY), f16::INFINITY);
        assert_eq!(f16_from_f64(1e300), f16::INFINITY);
        assert_eq!(bf16_from_f64(-1e300), bf16::NEG_INFINITY);
        assert_eq!(f16_from_f64(-0.0).to_bits(), 0x8000);
        assert_eq!(f16_from_f64(65519.99).to_f64(), 65504.0);
        assert_eq!(f16_from_f64(65520.0), f16::INFINITY);
    }

    #[test]
    fn agrees_with_the_nearest_value_on_a_dense_sweep() {
        // Values spread over every binade f16 and bf16 reach, each nudged
        // by amounts below an f32 ulp so that double rounding would show.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let exp = (state >> 58) as i32 - 30; // 2^-30 ..= 2^33
            let mantissa = 1.0 + (state >> 11 & 0xfffff) as f64 / (1u64 << 20) as f64;
            let nudge = ((state & 0x7ff) as f64 - 1024.0) * 2f64.powi(-45);
            let v = (mantissa + nudge) * 2f64.powi(exp);
            let h = f16_from_f64(v).to_bits();
            // Past f16's largest finite value and half an ulp, IEEE rounds
            // to infinity, which `nearest` does not model.
            assert!(v < 65520.0 || h == 0x7c00, "f16 of {v:e} overflows");
            assert!(
                v >= 65520.0 || h == nearest(v, h, |b| f16::from_bits(b).to_f64()),
                "f16 of {v:e}"
            );
            let b = bf16_from_f64(v).to_bits();
            assert_eq!(b, nearest(v, b, |b| bf16::from_bits(b).to_f64()), "bf16 of {v:e}");
        }
    }
}
