//! Proof-of-work at join, in ALTCHA's open format (<https://altcha.org>, the v1 hash
//! challenge): the server hands out `{algorithm, challenge, maxnumber, salt, signature}`
//! where `challenge = hex(SHA-256(salt ‖ number))` for a secret random `number` ≤
//! `maxnumber` and `signature = hex(HMAC-SHA256(key, challenge))`; the client finds the
//! number by trying them all (about `maxnumber / 2` hashes on average) and sends back
//! base64 of `{algorithm, challenge, number, salt, signature}`. Checking costs one HMAC and
//! one hash. The salt carries `?expires=<unix s>&room=<id>`, signed through the challenge,
//! so a solution is good for one room for [`CHALLENGE_TTL_SECS`]; the caller makes sure it
//! is used once. What it stops and what it does not: `docs/abuse.md`.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::identity::constant_time_eq;
use crate::hex::lower as hex;

/// The only algorithm offered and accepted.
pub const ALGORITHM: &str = "SHA-256";
/// How long a challenge can be solved and used.
pub const CHALLENGE_TTL_SECS: u64 = 300;

/// A challenge, as `GET /api/rooms/{room}/challenge` answers it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Challenge {
    pub algorithm: String,
    pub challenge: String,
    pub maxnumber: u64,
    pub salt: String,
    pub signature: String,
}

/// A solution, as the client sends it (base64 of this JSON).
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Solution {
    pub algorithm: String,
    pub challenge: String,
    pub number: u64,
    pub salt: String,
    pub signature: String,
    /// The ALTCHA widget adds these; they are not checked.
    #[serde(default)]
    pub took: Option<serde_json::Value>,
}

/// Why a join's proof of work was refused (each a `403` with its own code, and a fresh
/// challenge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PowError {
    #[error("this room asks new visitors for a proof of work: solve the challenge and join again")]
    Required,
    #[error("the proof of work was made for a challenge that has expired")]
    Expired,
    #[error("this proof of work has been used already")]
    Reused,
}

impl PowError {
    pub fn code(self) -> &'static str {
        match self {
            Self::Required => "challenge_required",
            Self::Expired => "challenge_expired",
            Self::Reused => "challenge_reused",
        }
    }
}

/// Signs challenges and checks solutions.
#[derive(Clone)]
pub struct PowKeys {
    key: Vec<u8>,
}

fn sha256_hex(salt: &str, number: u64) -> String {
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update(number.to_string().as_bytes());
    hex(&h.finalize())
}

impl PowKeys {
    /// Keys derived from the server's `secret_key` bytes (its own domain: nothing signed
    /// here is valid elsewhere).
    pub fn new(secret: &[u8]) -> Self {
        // unwrap: HMAC accepts keys of any length.
        let mut m = Hmac::<Sha256>::new_from_slice(secret).unwrap();
        m.update(b"anteroom-altcha-v1");
        Self {
            key: m.finalize().into_bytes().to_vec(),
        }
    }

    fn sign(&self, challenge: &str) -> String {
        // unwrap: as above.
        let mut m = Hmac::<Sha256>::new_from_slice(&self.key).unwrap();
        m.update(challenge.as_bytes());
        hex(&m.finalize().into_bytes())
    }

    /// A fresh challenge for `room`, good until `now_secs + CHALLENGE_TTL_SECS`.
    pub fn challenge(&self, room: &str, max_number: u64, now_secs: u64) -> Challenge {
        let mut rng = rand::thread_rng();
        let mut nonce = [0u8; 12];
        rng.fill_bytes(&mut nonce);
        let salt = format!(
            "{}?expires={}&room={room}",
            hex(&nonce),
            now_secs + CHALLENGE_TTL_SECS
        );
        let number = rng.gen_range(0..=max_number);
        let challenge = sha256_hex(&salt, number);
        Challenge {
            algorithm: ALGORITHM.into(),
            signature: self.sign(&challenge),
            challenge,
            maxnumber: max_number,
            salt,
        }
    }

    /// Checks a base64 solution for `room`. `Ok` gives the challenge (the key to use it
    /// once by) and its expiry (unix s). A malformed, forged, wrong or other room's
    /// solution is [`PowError::Required`] (solve a fresh one).
    pub fn check(
        &self,
        payload: &str,
        room: &str,
        now_secs: u64,
    ) -> Result<(String, u64), PowError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload.trim())
            .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim()))
            .map_err(|_| PowError::Required)?;
        let s: Solution = serde_json::from_slice(&bytes).map_err(|_| PowError::Required)?;
        let signed = constant_time_eq(self.sign(&s.challenge).as_bytes(), s.signature.as_bytes());
        if s.algorithm != ALGORITHM || !signed {
            return Err(PowError::Required);
        }
        if !constant_time_eq(
            sha256_hex(&s.salt, s.number).as_bytes(),
            s.challenge.as_bytes(),
        ) {
            return Err(PowError::Required);
        }
        let params = s.salt.split_once('?').map_or("", |(_, q)| q);
        let param = |name: &str| {
            params
                .split('&')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        };
        if param("room") != Some(room) {
            return Err(PowError::Required);
        }
        let expires: u64 = param("expires")
            .and_then(|e| e.parse().ok())
            .ok_or(PowError::Required)?;
        if expires < now_secs {
            return Err(PowError::Expired);
        }
        Ok((s.challenge, expires))
    }
}

/// Solves a challenge the way a client does (tests and the benchmark).
pub fn solve(c: &Challenge) -> Option<String> {
    let number = (0..=c.maxnumber).find(|&n| sha256_hex(&c.salt, n) == c.challenge)?;
    let s = Solution {
        algorithm: c.algorithm.clone(),
        challenge: c.challenge.clone(),
        number,
        salt: c.salt.clone(),
        signature: c.signature.clone(),
        took: None,
    };
    Some(base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&s).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_800_000_000;

    fn keys() -> PowKeys {
        PowKeys::new(b"server-secret")
    }

    fn edited(payload: &str, f: impl FnOnce(&mut serde_json::Value)) -> String {
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut v: serde_json::Value =
            serde_json::from_slice(&b64.decode(payload).unwrap()).unwrap();
        f(&mut v);
        b64.encode(serde_json::to_vec(&v).unwrap())
    }

    #[test]
    fn a_solved_challenge_checks_and_anything_else_does_not() {
        let k = keys();
        let c = k.challenge("sale", 2_000, NOW);
        assert_eq!((c.algorithm.as_str(), c.maxnumber), ("SHA-256", 2_000));
        let good = solve(&c).unwrap();
        let (id, expires) = k.check(&good, "sale", NOW).unwrap();
        assert_eq!(
            (id, expires),
            (c.challenge.clone(), NOW + CHALLENGE_TTL_SECS)
        );
        // Wrong number, another key, another room, edited salt, garbage: solve again.
        let wrong = edited(&good, |v| {
            v["number"] = serde_json::json!(v["number"].as_u64().unwrap() + 1)
        });
        assert_eq!(k.check(&wrong, "sale", NOW), Err(PowError::Required));
        assert_eq!(
            PowKeys::new(b"other").check(&good, "sale", NOW),
            Err(PowError::Required)
        );
        assert_eq!(k.check(&good, "other", NOW), Err(PowError::Required));
        let salt = edited(&good, |v| {
            v["salt"] = serde_json::json!(v["salt"]
                .as_str()
                .unwrap()
                .replace("room=sale", "room=sale2"))
        });
        assert_eq!(k.check(&salt, "sale2", NOW), Err(PowError::Required));
        let alg = edited(&good, |v| v["algorithm"] = serde_json::json!("SHA-1"));
        assert_eq!(k.check(&alg, "sale", NOW), Err(PowError::Required));
        assert_eq!(k.check("not base64!", "sale", NOW), Err(PowError::Required));
        // Past its expiry.
        assert_eq!(
            k.check(&good, "sale", NOW + CHALLENGE_TTL_SECS + 1),
            Err(PowError::Expired)
        );
    }

    #[test]
    fn a_forged_challenge_with_its_own_answer_is_refused() {
        // The client makes up a salt and number: without the key, no valid signature.
        let k = keys();
        let salt = format!("abc?expires={}&room=sale", NOW + 60);
        let forged = Challenge {
            algorithm: ALGORITHM.into(),
            challenge: sha256_hex(&salt, 1),
            maxnumber: 1,
            salt,
            signature: "00".repeat(32),
        };
        assert_eq!(
            k.check(&solve(&forged).unwrap(), "sale", NOW),
            Err(PowError::Required)
        );
    }
}
