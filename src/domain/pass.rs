//! Passes: short-lived JWTs signed with Ed25519 (`alg: EdDSA`) that an admitted visitor
//! presents to the protected site. Claims: `iss`, `room`, `sub` (visitor id), `iat`,
//! `exp` (= issue time + the room's session TTL) and a unique `jti` (`<room>.<serial>`).
//!
//! Ed25519 signatures are deterministic, so re-issuing the pass of the same admission
//! yields the identical token: an idempotent join hands back "the same pass" without
//! storing it. The public key is published as a JWK set at `/.well-known/jwks.json`; an
//! origin can verify passes offline but cannot mint them.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::SigningKey;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

pub use crate::error::PassError;
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
    encoding: EncodingKey,
    decoding: DecodingKey,
    kid: String,
    x: String,
}

impl PassKeys {
    /// From a 32-byte seed.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let sk = SigningKey::from_bytes(seed);
        // unwrap: encoding a valid in-memory key as PKCS#8 cannot fail.
        let der = sk.to_pkcs8_der().unwrap();
        let public = sk.verifying_key().to_bytes();
        let x = URL_SAFE_NO_PAD.encode(public);
        // Key id: a short fingerprint of the public key, so rotations are visible.
        let kid = x.chars().take(16).collect();
        Self {
            encoding: EncodingKey::from_ed_der(der.as_bytes()),
            decoding: DecodingKey::from_ed_der(&public),
            kid,
            x,
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

    /// Signs the pass for one admission.
    pub fn issue(&self, room: &str, visitor: &str, a: &Admission) -> String {
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

    /// Signs arbitrary claims (tests use it to make expired passes).
    pub fn sign(&self, claims: &Claims) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        // unwrap: serialising these claims and signing with a valid key cannot fail.
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
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
    fn seed_round_trips_through_base64() {
        let (k, seed) = PassKeys::generate();
        let k2 = PassKeys::from_base64(&seed).unwrap();
        assert_eq!(k.jwks(), k2.jwks());
        assert!(PassKeys::from_base64("c2hvcnQ=").is_err());
    }
}
