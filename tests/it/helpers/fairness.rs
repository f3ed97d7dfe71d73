//! The published shuffle rule, computed in the tests independently of the crate: the
//! order is ascending by the lowercase hex of HMAC-SHA256(key = seed bytes, message =
//! visitor id) (docs/drops.md).

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// A visitor's draw: lowercase hex of HMAC-SHA256(seed bytes, visitor id).
pub fn digest(seed_hex: &str, visitor: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(&unhex(seed_hex)).unwrap();
    mac.update(visitor.as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// The visitors in the published order.
pub fn by_digest(seed_hex: &str, mut vs: Vec<String>) -> Vec<String> {
    vs.sort_by_key(|x| digest(seed_hex, x));
    vs
}
