//! Lowercase hex for array bytes: trivial to produce and read on both sides
//! (`bytes.hex()` / `bytes.fromhex` in Python), no dependency.

pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(format!("{:?} is not a hex digit", c as char)),
    };
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return Err("hex text of odd length".into());
    }
    text.chunks_exact(2)
        .map(|pair| Ok(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_every_byte() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(super::decode(&super::encode(&bytes)).unwrap(), bytes);
        assert_eq!(super::decode("0A").unwrap(), [10]);
        assert!(super::decode("abc").is_err());
        assert!(super::decode("zz").is_err());
    }
}
