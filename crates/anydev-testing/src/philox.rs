//! The random-number contract of `Op::Random`, computed on the host from
//! its published definition (the header's `random` entry), independently
//! of any kernel: Philox4x32-10 (Salmon et al., SC 2011) keyed by the seed,
//! element `i` at 128-bit counter `counter + i` (wrapping in 64 bits).

/// The ten-round Philox4x32 bijection of `ctr` under `key`.
fn philox(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const MULTIPLIERS: [u64; 2] = [0xD251_1F53, 0xCD9E_8D57];
    const WEYL: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
    let mut x = ctr;
    let mut k = key;
    for round in 0..10 {
        if round != 0 {
            k[0] = k[0].wrapping_add(WEYL[0]);
            k[1] = k[1].wrapping_add(WEYL[1]);
        }
        let p0 = MULTIPLIERS[0] * u64::from(x[0]);
        let p1 = MULTIPLIERS[1] * u64::from(x[2]);
        x = [
            (p1 >> 32) as u32 ^ x[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ x[3] ^ k[1],
            p0 as u32,
        ];
    }
    x
}

fn words(seed: u64, counter: u64, i: u64) -> [u32; 4] {
    let c = counter.wrapping_add(i);
    philox([c as u32, (c >> 32) as u32, 0, 0], [seed as u32, (seed >> 32) as u32])
}

/// 53 bits of two words as a value in [0, 1).
fn unit(a: u32, b: u32) -> f64 {
    (((u64::from(a)) << 21) | (u64::from(b) >> 11)) as f64 / (1u64 << 53) as f64
}

/// Element `i` of a uniform draw on `[low, high)`, before rounding to the
/// output dtype.
pub fn uniform(seed: u64, counter: u64, i: u64, low: f64, high: f64) -> f64 {
    let w = words(seed, counter, i);
    low + (high - low) * unit(w[0], w[1])
}

/// Element `i` of a normal draw, before rounding to the output dtype.
pub fn normal(seed: u64, counter: u64, i: u64, mean: f64, std: f64) -> f64 {
    let w = words(seed, counter, i);
    let radius = (-2.0 * (1.0 - unit(w[0], w[1])).ln()).sqrt();
    mean + std * radius * (std::f64::consts::TAU * unit(w[2], w[3])).cos()
}

#[cfg(test)]
mod tests {
    /// The known-answer vectors of the Random123 reference (philox4x32, 10 rounds).
    #[test]
    fn known_answers() {
        assert_eq!(
            super::philox([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            super::philox(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }
}
