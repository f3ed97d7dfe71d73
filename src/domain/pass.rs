//! Passes: short-lived JWTs signed with Ed25519 (`alg: EdDSA`) that an admitted visitor
//! presents to the protected site. Claims: `iss`, `room`, `sub` (visitor id), `iat`,
//! `exp` (= issue time + the room's session TTL) and a unique `jti` (`<room>.<serial>`).
//!
//! Ed25519 signatures are deterministic, so re-issuing the pass of the same admission
//! yields the identical token: an idempotent join hands back "the same pass" without
//! storing it. The public key is published as a JWK set at `/.well-known/jwks.json`; an
//! origin can verify passes offline but cannot mint them.
//!
//! ## What a pass costs (issue 35)
//! Signing is most of an admitted join's CPU here (docs/benchmarks.md#what-a-pass-costs
//! has the figures and the commands): `jsonwebtoken::encode` parsed the PKCS#8 key on
//! every call, and an Ed25519 key parse derives the public key, one more scalar
//! multiplication, as dear as the signature itself: 46–57 µs a pass on the 2-core
//! machine. The key held parsed ([`PassKeys::sign`]) signs the same bytes in 22–25 µs.
//! A pass signed once is kept per visitor ([`Issued`]): a status, a re-join or a socket
//! told of the same admission gets it back in ~0.2 µs instead of signing again. A cheaper
//! algorithm (HMAC) would cost the origin its offline check against the published key,
//! and Ed25519 has no batch signing: neither was taken.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ed25519_dalek::{Signer, SigningKey};
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

pub use crate::domain::error::PassError;
use crate::store::Admission;

/// Issuer claim of every pass.
pub const ISSUER: &str = "anteroom";

/// The pass cookie's name for a room.
pub fn pass_cookie(room: &str) -> String {
    format!("anteroom_pass_{room}")
}

/// The claims a pass carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Claims {
    pub iss: String,
    pub room: String,
    pub sub: String,
    pub iat: u64,
    pub exp: u64,
    pub jti: String,
}

/// The JWK set of `/.well-known/jwks.json` (RFC 7517): the one pass verification key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Jwks {
    pub keys: Vec<Jwk>,
}

/// An Ed25519 public key as a JWK (RFC 8037).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Jwk {
    /// `OKP`.
    pub kty: &'static str,
    /// `Ed25519`.
    pub crv: &'static str,
    /// `EdDSA`.
    pub alg: &'static str,
    /// `sig`.
    #[serde(rename = "use")]
    pub use_: &'static str,
    /// The first 16 characters of `x`: the `kid` in every pass's header.
    pub kid: String,
    /// The public key, base64url without padding.
    pub x: String,
}

/// The `jti` suffix of a fail-open pass.
pub const FAIL_OPEN: &str = "fail-open";

impl Claims {
    /// Whether this is a fail-open pass (no admission behind it).
    pub fn is_fail_open(&self) -> bool {
        self.jti
            .rsplit_once('.')
            .is_some_and(|(_, s)| s == FAIL_OPEN)
    }

    /// The admission serial inside `jti` (`<room>.<serial>`).
    pub fn serial(&self) -> Option<u64> {
        let (room, n) = self.jti.rsplit_once('.')?;
        (room == self.room).then_some(())?;
        n.parse().ok()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("signing_key must be a base64 Ed25519 seed of 32 bytes")]
pub struct BadSigningKey;

/// The signing key pair and its published form.
#[derive(Clone)]
pub struct PassKeys {
    /// Parsed once: parsing derives the public key, as dear as a signature (module doc).
    signing: SigningKey,
    /// Every pass's header (`typ`, `alg`, `kid`), base64url: the same for all.
    header: String,
    decoding: DecodingKey,
    kid: String,
    x: String,
    /// Passes signed lately, shared by the clones (one per worker).
    issued: Arc<Issued>,
}

impl PassKeys {
    /// From a 32-byte seed.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let sk = SigningKey::from_bytes(seed);
        let public = sk.verifying_key().to_bytes();
        let x = URL_SAFE_NO_PAD.encode(public);
        // Key id: a short fingerprint of the public key, so rotations are visible.
        let kid: String = x.chars().take(16).collect();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.clone());
        // unwrap: a header of plain strings always serialises.
        let header = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap());
        Self {
            signing: sk,
            header,
            decoding: DecodingKey::from_ed_der(&public),
            kid,
            x,
            issued: Arc::default(),
        }
    }

    /// From the configured base64 seed.
    pub fn from_base64(seed: &str) -> Result<Self, BadSigningKey> {
        let bytes = STANDARD
            .decode(seed.trim())
            .or_else(|_| URL_SAFE_NO_PAD.decode(seed.trim().trim_end_matches('=')))
            .map_err(|_| BadSigningKey)?;
        let seed: [u8; 32] = bytes.try_into().map_err(|_| BadSigningKey)?;
        Ok(Self::from_seed(&seed))
    }

    /// A fresh random key and its base64 seed (for the demo, which prints it).
    pub fn generate() -> (Self, String) {
        let sk = SigningKey::generate(&mut rand::rngs::OsRng);
        let seed = sk.to_bytes();
        (Self::from_seed(&seed), STANDARD.encode(seed))
    }

    /// The pass for one admission: the one signed before for it, if still kept, else
    /// signed now (the same token either way: signatures are deterministic).
    pub fn issue(&self, room: &str, visitor: &str, a: &Admission) -> String {
        if let Some(pass) = self.issued.get(room, visitor, a) {
            return pass;
        }
        let pass = self.sign_admission(room, visitor, a);
        self.issued
            .keep(room, visitor, a, &pass, crate::clock::wall_ms());
        pass
    }

    fn sign_admission(&self, room: &str, visitor: &str, a: &Admission) -> String {
        let claims = Claims {
            iss: ISSUER.into(),
            room: room.into(),
            sub: visitor.into(),
            iat: a.issued_at_ms / 1000,
            exp: a.expires_at_ms.div_ceil(1000),
            jti: format!("{room}.{}", a.serial),
        };
        self.sign(&claims)
    }

    /// A fail-open pass (`store.fail_open`): issued while the store is unreachable, for
    /// `ttl_secs`, with no admission behind it (its `jti` is `<room>.fail-open`). It
    /// verifies only while the store stays unreachable.
    pub fn issue_fail_open(&self, room: &str, visitor: &str, now_ms: u64, ttl_secs: u64) -> String {
        let iat = now_ms / 1000;
        self.sign(&Claims {
            iss: ISSUER.into(),
            room: room.into(),
            sub: visitor.into(),
            iat,
            exp: iat + ttl_secs,
            jti: format!("{room}.{FAIL_OPEN}"),
        })
    }

    /// Signs arbitrary claims (tests use it to make expired passes): the JWS compact form
    /// `jsonwebtoken::encode` gives, byte for byte, with the key held parsed.
    pub fn sign(&self, claims: &Claims) -> String {
        // unwrap: claims of plain strings and integers always serialise.
        let body = serde_json::to_vec(claims).unwrap();
        let mut out = String::with_capacity(self.header.len() + body.len() * 4 / 3 + 92);
        out.push_str(&self.header);
        out.push('.');
        URL_SAFE_NO_PAD.encode_string(body, &mut out);
        let signature = self.signing.sign(out.as_bytes());
        out.push('.');
        URL_SAFE_NO_PAD.encode_string(signature.to_bytes(), &mut out);
        out
    }

    /// Checks signature, algorithm (EdDSA only: `alg: none` and HMAC tricks fail),
    /// issuer, expiry (no leeway) and room.
    pub fn verify(&self, token: &str, room: &str) -> Result<Claims, PassError> {
        let mut v = Validation::new(Algorithm::EdDSA);
        v.leeway = 0;
        v.set_issuer(&[ISSUER]);
        v.set_required_spec_claims(&["exp", "iat", "sub", "iss"]);
        let data =
            jsonwebtoken::decode::<Claims>(token, &self.decoding, &v).map_err(|e| {
                match e.kind() {
                    jsonwebtoken::errors::ErrorKind::ExpiredSignature => PassError::Expired,
                    _ => PassError::Invalid,
                }
            })?;
        if data.claims.room != room {
            return Err(PassError::WrongRoom);
        }
        Ok(data.claims)
    }

    /// The JWK set published at `/.well-known/jwks.json`.
    pub fn jwks(&self) -> Jwks {
        Jwks {
            keys: vec![Jwk {
                kty: "OKP",
                crv: "Ed25519",
                alg: "EdDSA",
                use_: "sig",
                kid: self.kid.clone(),
                x: self.x.clone(),
            }],
        }
    }
}

/// Shards of [`Issued`] and the most passes each keeps (~420 bytes a pass: ~27 MiB at
/// most in all).
const ISSUED_SHARDS: usize = 16;
const ISSUED_PER_SHARD: usize = 4_096;

/// The passes signed lately, by visitor: the last admission each was signed for. A look-up
/// answers only for the same room and the same admission (serial, issue time, end), so a
/// kept pass is exactly the one signing would give. A full shard drops the passes that
/// expired, and if none had, starts over: what is dropped is only signed again.
#[derive(Default)]
struct Issued {
    shards: [Mutex<HashMap<String, IssuedPass>>; ISSUED_SHARDS],
}

struct IssuedPass {
    room: String,
    admission: Admission,
    pass: String,
}

impl Issued {
    fn shard(&self, visitor: &str) -> &Mutex<HashMap<String, IssuedPass>> {
        // FNV-1a: visitor ids are HMAC-signed, so any spread will do.
        let h = visitor.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        &self.shards[(h % ISSUED_SHARDS as u64) as usize]
    }

    fn get(&self, room: &str, visitor: &str, a: &Admission) -> Option<String> {
        // unwrap: never poisoned (no panics while held).
        let shard = self.shard(visitor).lock().unwrap();
        let kept = shard.get(visitor)?;
        (kept.room == room && kept.admission == *a).then(|| kept.pass.clone())
    }

    fn keep(&self, room: &str, visitor: &str, a: &Admission, pass: &str, now_ms: u64) {
        // unwrap: never poisoned (no panics while held).
        let mut shard = self.shard(visitor).lock().unwrap();
        if shard.len() >= ISSUED_PER_SHARD && !shard.contains_key(visitor) {
            shard.retain(|_, p| p.admission.expires_at_ms > now_ms);
            if shard.len() >= ISSUED_PER_SHARD {
                shard.clear();
            }
        }
        shard.insert(
            visitor.to_string(),
            IssuedPass {
                room: room.to_string(),
                admission: a.clone(),
                pass: pass.to_string(),
            },
        );
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(now_ms: u64, ttl_ms: u64) -> Admission {
        Admission {
            serial: 7,
            issued_at_ms: now_ms,
            expires_at_ms: now_ms + ttl_ms,
        }
    }

    fn now_ms() -> u64 {
        jsonwebtoken::get_current_timestamp() * 1000
    }

    #[test]
    fn issues_verifiable_deterministic_passes() {
        let (k, _) = PassKeys::generate();
        let a = admission(now_ms(), 60_000);
        let p = k.issue("demo", "v1", &a);
        assert_eq!(p, k.issue("demo", "v1", &a), "same admission, same pass");
        let c = k.verify(&p, "demo").unwrap();
        assert_eq!((c.sub.as_str(), c.serial()), ("v1", Some(7)));
    }

    #[test]
    fn rejects_expired_wrong_room_tampered_and_foreign() {
        let (k, _) = PassKeys::generate();
        let old = admission(now_ms() - 120_000, 60_000);
        assert_eq!(
            k.verify(&k.issue("demo", "v", &old), "demo"),
            Err(PassError::Expired)
        );
        let p = k.issue("demo", "v", &admission(now_ms(), 60_000));
        assert_eq!(k.verify(&p, "other"), Err(PassError::WrongRoom));
        let mut tampered = p.clone().into_bytes();
        let mid = p.find('.').unwrap() + 3;
        tampered[mid] = if tampered[mid] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(k.verify(&tampered, "demo"), Err(PassError::Invalid));
        let (other, _) = PassKeys::generate();
        assert_eq!(other.verify(&p, "demo"), Err(PassError::Invalid));
    }

    #[test]
    fn rejects_alg_none() {
        let (k, _) = PassKeys::generate();
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let claims = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&Claims {
                iss: ISSUER.into(),
                room: "demo".into(),
                sub: "v".into(),
                iat: 0,
                exp: u64::MAX / 2,
                jti: "demo.1".into(),
            })
            .unwrap(),
        );
        assert_eq!(
            k.verify(&format!("{header}.{claims}."), "demo"),
            Err(PassError::Invalid)
        );
    }

    #[test]
    fn a_pass_is_the_token_jsonwebtoken_signs_byte_for_byte() {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        let seed = [7u8; 32];
        let k = PassKeys::from_seed(&seed);
        let der = SigningKey::from_bytes(&seed).to_pkcs8_der().unwrap();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(k.kid.clone());
        let a = admission(now_ms(), 60_000);
        let claims = k.verify(&k.issue("demo", "v1", &a), "demo").unwrap();
        let theirs = jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes()),
        )
        .unwrap();
        assert_eq!(k.sign(&claims), theirs);
        assert_eq!(k.issue("demo", "v1", &a), theirs, "kept, then given back");
    }

    #[test]
    fn a_kept_pass_answers_only_for_its_own_room_and_admission() {
        let k = PassKeys::from_seed(&[9u8; 32]);
        let a = admission(now_ms(), 60_000);
        let first = k.issue("demo", "v1", &a);
        assert_eq!(k.issued.len(), 1);
        assert_eq!(k.issued.get("demo", "v1", &a), Some(first.clone()));
        let later = Admission {
            serial: 8,
            ..a.clone()
        };
        assert_eq!(
            k.issued.get("demo", "v1", &later),
            None,
            "another admission"
        );
        assert_eq!(k.issued.get("other", "v1", &a), None, "another room");
        let second = k.issue("demo", "v1", &later);
        assert_ne!(first, second);
        assert_eq!(k.verify(&second, "demo").unwrap().serial(), Some(8));
        assert_eq!(
            k.issued.len(),
            1,
            "the visitor's latest replaces the earlier"
        );
        // A clone (another worker) shares what was kept.
        assert_eq!(k.clone().issued.get("demo", "v1", &later), Some(second));
    }

    #[test]
    fn a_full_shard_drops_expired_passes_first_then_starts_over() {
        let issued = Issued::default();
        let live = admission(10_000, 60_000);
        let expired = admission(0, 5_000);
        // One shard's worth of visitors (ids picked to land in the same shard).
        let shard_of = |v: &str| issued.shard(v) as *const _;
        let target = shard_of("v0");
        let same: Vec<String> = (0..)
            .map(|i| format!("v{i}"))
            .filter(|v| shard_of(v) == target)
            .take(ISSUED_PER_SHARD + 1)
            .collect();
        for (i, v) in same[..ISSUED_PER_SHARD].iter().enumerate() {
            let a = if i == 0 { &live } else { &expired };
            issued.keep("r", v, a, "p", 10_000);
        }
        issued.keep("r", &same[ISSUED_PER_SHARD], &live, "p", 10_000);
        assert_eq!(issued.len(), 2, "the expired dropped, the live kept");
        assert!(issued.get("r", &same[0], &live).is_some());
        // Full of live passes: starts over with the newcomer.
        let fresh: Vec<String> = (0..)
            .map(|i| format!("w{i}"))
            .filter(|v| shard_of(v) == target)
            .take(ISSUED_PER_SHARD - 1)
            .collect();
        for v in &fresh {
            issued.keep("r", v, &live, "p", 10_000);
        }
        assert_eq!(issued.len(), 1);
        assert!(issued.get("r", fresh.last().unwrap(), &live).is_some());
    }

    /// What a pass costs: `jsonwebtoken::encode` (the key parsed each call), the key held
    /// parsed, and a kept pass. A measurement, not a check: run it in release.
    #[test]
    #[ignore = "a measurement: cargo test --release --lib pass_signing_cost -- --ignored --nocapture"]
    fn pass_signing_cost() {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        use std::time::Instant;
        let seed = [7u8; 32];
        let k = PassKeys::from_seed(&seed);
        let der = SigningKey::from_bytes(&seed).to_pkcs8_der().unwrap();
        let encoding = jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes());
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(k.kid.clone());
        let n = 20_000u64;
        let a = |i: u64| Admission {
            serial: i,
            issued_at_ms: 1_700_000_000_000,
            expires_at_ms: 1_700_000_600_000,
        };
        let us = |t: Instant| t.elapsed().as_secs_f64() * 1e6 / n as f64;
        for round in 1..=3 {
            let t = Instant::now();
            for i in 0..n {
                let c = Claims {
                    iss: ISSUER.into(),
                    room: "bench".into(),
                    sub: format!("{i:032x}"),
                    iat: 1_700_000_000,
                    exp: 1_700_000_600,
                    jti: format!("bench.{i}"),
                };
                std::hint::black_box(jsonwebtoken::encode(&header, &c, &encoding).unwrap());
            }
            let parsed_each_time = us(t);
            let t = Instant::now();
            for i in 0..n {
                std::hint::black_box(k.sign_admission("bench", &format!("{i:032x}"), &a(i)));
            }
            let held = us(t);
            for i in 0..n {
                k.issue("bench", &format!("{i:032x}"), &a(i));
            }
            let t = Instant::now();
            for i in 0..n {
                std::hint::black_box(k.issue("bench", &format!("{i:032x}"), &a(i)));
            }
            let kept = us(t);
            println!(
                "round {round}: jsonwebtoken::encode {parsed_each_time:.2} µs/pass, key held {held:.2} µs/pass, kept pass {kept:.2} µs/pass"
            );
        }
    }

    #[test]
    fn seed_round_trips_through_base64() {
        let (k, seed) = PassKeys::generate();
        let k2 = PassKeys::from_base64(&seed).unwrap();
        assert_eq!(k.jwks(), k2.jwks());
        assert!(PassKeys::from_base64("c2hvcnQ=").is_err());
    }
}
