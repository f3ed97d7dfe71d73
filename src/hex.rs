//! Lowercase hex, the one encoding of ids, digests, nonces and tokens across the crate
//! (visitor ids, fairness digests, proof-of-work hashes, CSRF tokens, asset hashes, the
//! Redis library's name). A table lookup per nibble: no formatting machinery per byte.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`.
pub fn lower(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    s
}

/// The bytes of a hex string (either case), two digits a byte; a pair that is not hex is
/// skipped, and an odd last digit ignored.
pub fn bytes(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// Compares two byte strings without an early exit (credentials, tags).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_is_what_format_gives_and_bytes_reads_it_back() {
        let all: Vec<u8> = (0..=255).collect();
        let want: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(lower(&all), want);
        assert_eq!(bytes(&want), all);
        assert_eq!(bytes("FF0a"), vec![0xff, 0x0a]);
        assert_eq!(lower(&[]), "");
        assert_eq!(bytes("abc"), vec![0xab], "an odd last digit is ignored");
    }
}
