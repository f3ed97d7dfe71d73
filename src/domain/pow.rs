//! Proof-of-work at join, in ALTCHA's open format (<https://altcha.org>, the v1 hash
//! challenge): the server hands out `{algorithm, challenge, maxnumber, salt, signature}`
//! where `challenge = hex(SHA-256(salt ‖ number))` for a secret random `number` ≤
//! `maxnumber` and `signature = hex(HMAC-SHA256(key, challenge))`; the client finds the
//! number by trying them all (about `maxnumber / 2` hashes on average) and sends back
//! base64 of `{algorithm, challenge, number, salt, signature}`. Checking costs one HMAC and
//! one hash. The salt carries `?expires=<unix s>&room=<id>&max=<maxnumber>&`, signed
//! through the challenge, so a solution is good for one room at one difficulty for
//! [`CHALLENGE_TTL_SECS`]; the caller makes sure it is used once. What it stops and what
//! it does not: `docs/abuse.md`.
//!
//! **Why the salt ends in `&`.** The hash reads `salt ‖ number` as one string, so a salt
//! that ended in a digit could be cut short and its last digits moved into the number
//! (`…room=sale2` + `17` hashes as `…room=sale` + `217`): the same challenge, the same
//! signature, and a room `sale2`'s easy solution counted for room `sale` (the second
//! red-team pass, issue 28 finding 8). A salt that ends in a character no number holds
//! splits one way only, and [`PowKeys::check`] reads it strictly: exactly the fields it
//! signs, in order, the room and the difficulty equal to the room's own. The format stays
//! ALTCHA's (`SHA-256(salt ‖ number)`), so every ALTCHA client still solves it.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::hex::constant_time_eq;
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
            "{}?expires={}&room={room}&max={max_number}&",
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

    /// Checks a base64 solution for `room`, whose difficulty is now `max_number`. `Ok`
    /// gives the challenge (the key to use it once by) and its expiry (unix s). A
    /// malformed, forged, wrong or other room's solution, or one made for another
    /// difficulty, is [`PowError::Required`] (solve a fresh one).
    pub fn check(
        &self,
        payload: &str,
        room: &str,
        max_number: u64,
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
        let salt = SaltFields::parse(&s.salt).ok_or(PowError::Required)?;
        if salt.room != room || salt.max != max_number || s.number > salt.max {
            return Err(PowError::Required);
        }
        if salt.expires < now_secs {
            return Err(PowError::Expired);
        }
        Ok((s.challenge, salt.expires))
    }
}

/// What a salt says, read strictly: `<24 hex>?expires=<n>&room=<id>&max=<n>&`, nothing
/// more, nothing less, nothing reordered.
struct SaltFields<'a> {
    expires: u64,
    room: &'a str,
    max: u64,
}

impl<'a> SaltFields<'a> {
    fn parse(salt: &'a str) -> Option<Self> {
        let (nonce, rest) = salt.split_once('?')?;
        if nonce.len() != 24 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let rest = rest.strip_suffix('&')?;
        let mut fields = rest.split('&');
        let mut field = |name: &str| fields.next()?.strip_prefix(name)?.strip_prefix('=');
        let number = |v: &str| {
            // Canonical decimal only: no sign, no leading zero.
            (!v.is_empty()
                && v.bytes().all(|b| b.is_ascii_digit())
                && (v == "0" || !v.starts_with('0')))
            .then(|| v.parse().ok())
            .flatten()
        };
        let expires = number(field("expires")?)?;
        let room = field("room")?;
        let max = number(field("max")?)?;
        if fields.next().is_some() || !crate::room::valid_room_id(room) {
            return None;
        }
        Some(Self { expires, room, max })
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
        let (id, expires) = k.check(&good, "sale", 2_000, NOW).unwrap();
        assert_eq!(
            (id, expires),
            (c.challenge.clone(), NOW + CHALLENGE_TTL_SECS)
        );
        // Wrong number, another key, another room, edited salt, garbage: solve again.
        let wrong = edited(&good, |v| {
            v["number"] = serde_json::json!(v["number"].as_u64().unwrap() + 1)
        });
        assert_eq!(k.check(&wrong, "sale", 2_000, NOW), Err(PowError::Required));
        assert_eq!(
            PowKeys::new(b"other").check(&good, "sale", 2_000, NOW),
            Err(PowError::Required)
        );
        assert_eq!(k.check(&good, "other", 2_000, NOW), Err(PowError::Required));
        let salt = edited(&good, |v| {
            v["salt"] = serde_json::json!(v["salt"]
                .as_str()
                .unwrap()
                .replace("room=sale", "room=sale2"))
        });
        assert_eq!(k.check(&salt, "sale2", 2_000, NOW), Err(PowError::Required));
        let alg = edited(&good, |v| v["algorithm"] = serde_json::json!("SHA-1"));
        assert_eq!(k.check(&alg, "sale", 2_000, NOW), Err(PowError::Required));
        assert_eq!(
            k.check("not base64!", "sale", 2_000, NOW),
            Err(PowError::Required)
        );
        // Past its expiry.
        assert_eq!(
            k.check(&good, "sale", 2_000, NOW + CHALLENGE_TTL_SECS + 1),
            Err(PowError::Expired)
        );
    }

    #[test]
    fn a_forged_challenge_with_its_own_answer_is_refused() {
        // The client makes up a salt and number: without the key, no valid signature.
        let k = keys();
        let salt = format!("{}?expires={}&room=sale&max=1&", "ab".repeat(12), NOW + 60);
        let forged = Challenge {
            algorithm: ALGORITHM.into(),
            challenge: sha256_hex(&salt, 1),
            maxnumber: 1,
            salt,
            signature: "00".repeat(32),
        };
        assert_eq!(
            k.check(&solve(&forged).unwrap(), "sale", 1, NOW),
            Err(PowError::Required)
        );
    }

    /// Finding 8 of issue 28: the old salt ended in the room id, so an easy room `sale2`'s
    /// salt cut before its last digit, with the digit moved in front of the number, hashed
    /// to the same challenge under the same signature, and counted for room `sale`.
    #[test]
    fn a_solution_cannot_be_spliced_into_another_room_or_difficulty() {
        let k = keys();
        let easy = k.challenge("sale2", 50, NOW);
        let good = solve(&easy).unwrap();
        let number = |p: &str| {
            let v: serde_json::Value = serde_json::from_slice(
                &base64::engine::general_purpose::STANDARD.decode(p).unwrap(),
            )
            .unwrap();
            v["number"].as_u64().unwrap()
        };
        // Every way of moving the salt's tail into the number: never valid, wherever sent.
        for cut in 1..=3 {
            let (head, tail) = easy.salt.split_at(easy.salt.len() - cut);
            let Ok(moved) = format!("{tail}{}", number(&good)).parse::<u64>() else {
                continue; // the tail holds something no number does
            };
            let spliced = edited(&good, |v| {
                v["salt"] = serde_json::json!(head);
                v["number"] = serde_json::json!(moved);
            });
            for (room, max) in [("sale", 50), ("sale", 100_000), ("sale2", 50)] {
                assert_eq!(
                    k.check(&spliced, room, max, NOW),
                    Err(PowError::Required),
                    "cut {cut} sent to {room} at {max}"
                );
            }
        }
        // The salt ends in `&`, which no number can take.
        assert!(easy.salt.ends_with("&max=50&"), "{}", easy.salt);
        // The same solution at a room's other difficulty: solve again.
        assert_eq!(
            k.check(&good, "sale2", 100_000, NOW),
            Err(PowError::Required)
        );
        assert!(k.check(&good, "sale2", 50, NOW).is_ok());
    }

    #[test]
    fn a_salt_is_read_strictly() {
        let n = "ab".repeat(12);
        let ok = format!("{n}?expires=5&room=sale&max=9&");
        assert!(SaltFields::parse(&ok).is_some());
        for bad in [
            format!("{n}?expires=5&room=sale&max=9"),
            format!("{n}?room=sale&expires=5&max=9&"),
            format!("{n}?expires=5&room=sale&max=9&room=x&"),
            format!("{n}?expires=05&room=sale&max=9&"),
            format!("{n}?expires=5&room=sa/le&max=9&"),
            format!("{n}?expires=5&room=sale&max=+9&"),
            "abc?expires=5&room=sale&max=9&".to_string(),
        ] {
            assert!(SaltFields::parse(&bad).is_none(), "{bad}");
        }
    }
}
