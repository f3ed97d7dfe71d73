//! Passes whose signature the gateway has checked, until they expire: an Ed25519
//! verification costs about 50 µs, most of the gateway's CPU per guarded request (measured
//! in BENCHMARKS.md), and a visitor sends the same pass with every request. A hit still
//! checks the expiry against the clock, and the caller still checks revocation, so a
//! cached pass is refused as soon as it expires or is revoked.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::RwLock;

use crate::domain::pass::Claims;

/// At most this many passes are kept; past it, expired ones are dropped, and if that is
/// not enough the cache starts again (every pass is then checked once more).
pub const MAX_PASSES: usize = 100_000;

#[derive(Default)]
pub struct PassCache {
    // token → the claims its signature carried (their `room` is the room it was checked
    // for). Keyed by the token alone so that a lookup allocates nothing.
    inner: RwLock<HashMap<String, Claims, TailHash>>,
}

/// Hashes a token by its last [`TAIL`] bytes only, under a random key: they are its
/// signature's, which no two passes share, and a token is a few hundred bytes that
/// SipHash would otherwise read whole on every request (callgrind: a sixtieth of the
/// gateway's instructions per request). Tokens that share a tail (forged ones) only
/// meet in one bucket, where they are compared whole; only passes whose signature
/// checked out are ever kept.
#[derive(Default, Clone)]
struct TailHash(RandomState);

/// The bytes of a token that are hashed.
const TAIL: usize = 24;

impl BuildHasher for TailHash {
    type Hasher = Tail<<RandomState as BuildHasher>::Hasher>;
    fn build_hasher(&self) -> Self::Hasher {
        Tail(self.0.build_hasher())
    }
}

struct Tail<H>(H);

impl<H: Hasher> Hasher for Tail<H> {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(&bytes[bytes.len().saturating_sub(TAIL)..]);
    }
    fn write_u8(&mut self, i: u8) {
        // `str`'s `Hash` ends with one `0xff`: kept, so the hash stays a hash of the
        // whole write sequence.
        self.0.write_u8(i);
    }
    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

impl PassCache {
    /// The claims of a pass checked before for `room`, if it has not expired at `now_s`
    /// (seconds; a pass is good through its `exp` second, as jsonwebtoken counts it).
    /// `Err(())` for a cached pass that has expired.
    pub fn get(&self, room: &str, token: &str, now_s: u64) -> Option<Result<Claims, ()>> {
        // unwrap: never poisoned (no panics while held).
        let m = self.inner.read().unwrap();
        let claims = m.get(token).filter(|c| c.room == room)?;
        Some(if claims.exp < now_s {
            Err(())
        } else {
            Ok(claims.clone())
        })
    }

    /// Keeps a pass whose signature, issuer and room just checked out.
    pub fn put(&self, room: &str, token: &str, claims: &Claims, now_s: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut m = self.inner.write().unwrap();
        if m.len() >= MAX_PASSES {
            m.retain(|_, c| c.exp >= now_s);
            if m.len() >= MAX_PASSES {
                m.clear();
            }
        }
        debug_assert_eq!(claims.room, room, "a pass is checked for its own room");
        m.insert(token.to_string(), claims.clone());
    }

    /// How many passes are cached (the tests' view of the bound).
    #[cfg(test)]
    fn len(&self) -> usize {
        // unwrap: never poisoned (no panics while held).
        self.inner.read().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: u64) -> Claims {
        Claims {
            iss: "anteroom".into(),
            room: "r".into(),
            sub: "v".into(),
            iat: 0,
            exp,
            jti: "r.1".into(),
        }
    }

    #[test]
    fn a_kept_pass_is_good_through_its_expiry_second_and_only_for_its_room() {
        let c = PassCache::default();
        assert!(c.get("r", "t", 10).is_none());
        c.put("r", "t", &claims(100), 10);
        assert_eq!(c.get("r", "t", 100), Some(Ok(claims(100))));
        assert_eq!(c.get("r", "t", 101), Some(Err(())));
        assert!(c.get("other", "t", 10).is_none());
        assert!(c.get("r", "u", 10).is_none());
    }

    #[test]
    fn tokens_that_share_a_tail_are_told_apart() {
        let c = PassCache::default();
        let tail = "x".repeat(TAIL);
        let (a, b) = (format!("a.{tail}"), format!("b.{tail}"));
        c.put("r", &a, &claims(100), 10);
        assert_eq!(c.get("r", &a, 10), Some(Ok(claims(100))));
        assert!(c.get("r", &b, 10).is_none());
        assert!(c.get("r", &tail, 10).is_none());
        assert!(c.get("r", "", 10).is_none());
    }

    #[test]
    fn a_full_cache_drops_expired_passes_first() {
        let c = PassCache::default();
        for i in 0..MAX_PASSES {
            c.put(
                "r",
                &i.to_string(),
                &claims(if i == 0 { 1000 } else { 5 }),
                0,
            );
        }
        assert_eq!(c.len(), MAX_PASSES);
        c.put("r", "new", &claims(1000), 10);
        assert_eq!(c.len(), 2, "the expired ones went, the live one stayed");
        assert!(c.get("r", "0", 10).is_some());
    }
}
