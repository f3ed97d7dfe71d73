//! Visitor identity: 128 random bits, carried as a signed token
//! `<32 hex id>.<base64url HMAC-SHA256(id)>` in the `anteroom_vid` cookie or, for API and
//! iframe clients, as `visitor_token`. A token whose tag does not match is rejected, so a
//! visitor cannot claim someone else's place by guessing or editing an id.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// The visitor cookie's name.
pub const VISITOR_COOKIE: &str = "anteroom_vid";

/// A visitor id: 32 lowercase hex characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VisitorId(String);

impl VisitorId {
    pub fn random() -> Self {
        let mut b = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut b);
        Self(b.iter().map(|x| format!("{x:02x}")).collect())
    }

    /// Accepts only the exact shape `random()` produces.
    pub fn parse(s: &str) -> Option<Self> {
        (s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| Self(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Compares two byte strings without an early exit (credentials, tags).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Signs and checks visitor tokens.
#[derive(Clone)]
pub struct VisitorSigner {
    key: Vec<u8>,
}

impl VisitorSigner {
    pub fn new(key: &[u8]) -> Self {
        Self { key: key.to_vec() }
    }

    fn mac(&self, id: &str) -> Hmac<Sha256> {
        // unwrap: HMAC accepts keys of any length.
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key).unwrap();
        m.update(b"anteroom-visitor-v1:");
        m.update(id.as_bytes());
        m
    }

    /// A tag over `data` in its own domain (admin sessions, CSRF tokens), so tags made
    /// for one purpose are never valid for another.
    pub fn tag(&self, domain: &str, data: &str) -> String {
        // unwrap: HMAC accepts keys of any length.
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key).unwrap();
        m.update(b"anteroom-");
        m.update(domain.as_bytes());
        m.update(b":");
        m.update(data.as_bytes());
        URL_SAFE_NO_PAD.encode(m.finalize().into_bytes())
    }

    /// Checks a tag made by [`VisitorSigner::tag`], in constant time.
    pub fn check_tag(&self, domain: &str, data: &str, tag: &str) -> bool {
        constant_time_eq(self.tag(domain, data).as_bytes(), tag.as_bytes())
    }

    pub fn token(&self, id: &VisitorId) -> String {
        let tag = self.mac(id.as_str()).finalize().into_bytes();
        format!("{}.{}", id.as_str(), URL_SAFE_NO_PAD.encode(tag))
    }

    /// The id inside a genuine token; `None` for anything forged, edited or malformed.
    pub fn verify(&self, token: &str) -> Option<VisitorId> {
        let (id, tag) = token.split_once('.')?;
        let id = VisitorId::parse(id)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // verify_slice compares in constant time.
        self.mac(id.as_str()).verify_slice(&tag).ok()?;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let s = VisitorSigner::new(b"k");
        let id = VisitorId::random();
        assert_eq!(s.verify(&s.token(&id)), Some(id));
    }

    #[test]
    fn rejects_tampering_and_other_keys() {
        let s = VisitorSigner::new(b"k");
        let t = s.token(&VisitorId::random());
        let other = VisitorId::random();
        let swapped = format!("{}{}", other.as_str(), &t[32..]);
        assert_eq!(s.verify(&swapped), None);
        assert_eq!(VisitorSigner::new(b"other").verify(&t), None);
        assert_eq!(s.verify("garbage"), None);
        assert_eq!(s.verify(&t[..t.len() - 2]), None);
    }

    #[test]
    fn ids_are_128_bit_hex_and_distinct() {
        let a = VisitorId::random();
        assert_eq!(a.as_str().len(), 32);
        assert_ne!(a, VisitorId::random());
        assert!(VisitorId::parse("ABCDEF0123456789abcdef0123456789").is_none());
    }
}
