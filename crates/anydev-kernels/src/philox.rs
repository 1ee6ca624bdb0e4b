//! Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
//! 1, 2, 3", SC 2011): a counter-based generator. Output `i` is a pure
//! function of (key, counter + i), so any thread can produce any element
//! and results never depend on how work is split.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    ((p >> 32) as u32, p as u32)
}

/// Ten rounds of Philox4x32 on `counter` with `key`.
#[inline]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let (hi0, lo0) = mulhilo(M0, c[0]);
        let (hi1, lo1) = mulhilo(M1, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The four words for element `i` of a stream: key `seed`, 128-bit
/// counter `counter + i` (wrapping in 64 bits; the high words are 0).
#[inline]
pub fn block(seed: u64, counter: u64, i: u64) -> [u32; 4] {
    let c = counter.wrapping_add(i);
    philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], [seed as u32, (seed >> 32) as u32])
}

/// 53 random bits from two words, as a float in [0, 1).
#[inline]
fn unit(hi: u32, lo: u32) -> f64 {
    let bits = ((hi as u64) << 21) | ((lo as u64) >> 11);
    bits as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Element `i` of the stream (seed, counter) as a uniform f64 in [0, 1).
#[inline]
pub fn uniform(seed: u64, counter: u64, i: u64) -> f64 {
    let w = block(seed, counter, i);
    unit(w[0], w[1])
}

/// Element `i` as a standard normal (Box-Muller on the block's two
/// uniforms; `1 - u` keeps the logarithm's argument in (0, 1]).
#[inline]
pub fn normal(seed: u64, counter: u64, i: u64) -> f64 {
    let w = block(seed, counter, i);
    let (u1, u2) = (1.0 - unit(w[0], w[1]), unit(w[2], w[3]));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer vectors published with the reference implementation
    /// (Random123 `kat_vectors`, philox4x32 with 10 rounds).
    #[test]
    fn known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }
}
