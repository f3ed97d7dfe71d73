//! Enqueue tokens: one place per person. A site signs a JWT for its signed-in user
//! (`sub`: its user id or a hash of it, `room`, `exp`, optionally `lane`) with the room's
//! `entry_secret` (HS256) or the private half of `entry_public_key` (EdDSA). Every
//! browser, device or instance presenting a token with the same `sub` is the same
//! visitor ([`VisitorSigner::entry_id`](crate::domain::identity::VisitorSigner::entry_id)),
//! so it gets the same place and at most one stock unit. A room with `entry = "token"`
//! lets nobody take a new place without one. Threat model: `docs/abuse.md`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use crate::room::{RoomConfig, Secret};

/// Clock skew allowed between the site that signs and Anteroom, in seconds.
pub const LEEWAY_SECS: u64 = 30;
/// The longest `sub` accepted (bytes).
pub const MAX_SUB: usize = 256;

/// Why an enqueue token was refused (each a `401` with its own code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("this room lets visitors in line only with an enqueue token from the site")]
    Required,
    #[error("the enqueue token has expired; get a new one from the site")]
    Expired,
    #[error("the enqueue token is not valid yet (its nbf is in the future)")]
    NotYetValid,
    #[error("the enqueue token is for another room")]
    WrongRoom,
    #[error("the enqueue token is not valid (signature, algorithm or claims)")]
    Invalid,
    #[error("this room takes no enqueue tokens (it has no entry key)")]
    NoKey,
}

impl EntryError {
    /// The error code clients see.
    pub fn code(self) -> &'static str {
        match self {
            Self::Required => "token_required",
            Self::Expired => "token_expired",
            Self::NotYetValid => "token_not_yet_valid",
            Self::WrongRoom => "token_wrong_room",
            Self::Invalid => "token_invalid",
            Self::NoKey => "token_not_accepted",
        }
    }
}

/// What a valid enqueue token says.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct EntryClaims {
    pub sub: String,
    pub room: String,
    pub exp: u64,
    #[serde(default)]
    pub lane: Option<String>,
}

/// A room's key for enqueue tokens.
pub struct EntryKey {
    key: DecodingKey,
    alg: Algorithm,
}

impl std::fmt::Debug for EntryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryKey").field("alg", &self.alg).finish()
    }
}

impl EntryKey {
    /// The room's key, `None` when it has none; `Err` (a message naming the setting) for
    /// a key that cannot be used, or `entry = "token"` without a key.
    pub fn from_room(cfg: &RoomConfig) -> Result<Option<Self>, String> {
        let key = Self::parse(cfg.entry_secret.as_ref(), cfg.entry_public_key.as_deref())?;
        if key.is_none() && cfg.entry == crate::room::EntryMode::Token {
            return Err(r#"entry = "token" needs entry_secret or entry_public_key"#.into());
        }
        Ok(key)
    }

    /// The key from the two settings (`entry_secret`, `entry_public_key`): `None` when
    /// neither is set.
    fn parse(secret: Option<&Secret>, public_key: Option<&str>) -> Result<Option<Self>, String> {
        Ok(match (secret, public_key) {
            (Some(_), Some(_)) => {
                return Err("set entry_secret or entry_public_key, not both".into())
            }
            (Some(s), None) => {
                if s.expose().len() < 32 {
                    return Err("entry_secret must be at least 32 characters".into());
                }
                Some(Self {
                    key: DecodingKey::from_secret(s.expose().as_bytes()),
                    alg: Algorithm::HS256,
                })
            }
            (None, Some(k)) => {
                let key = if k.trim_start().starts_with('{') {
                    serde_json::from_str::<jsonwebtoken::jwk::Jwk>(k)
                        .ok()
                        .and_then(|jwk| DecodingKey::from_jwk(&jwk).ok())
                } else {
                    DecodingKey::from_ed_pem(k.as_bytes()).ok()
                };
                let key =
                    key.ok_or("entry_public_key must be an Ed25519 public key (PEM or JWK)")?;
                Some(Self {
                    key,
                    alg: Algorithm::EdDSA,
                })
            }
            (None, None) => None,
        })
    }

    /// Checks a token for `room`: signature and algorithm, `exp` and, when present, `nbf`
    /// (each with [`LEEWAY_SECS`]), `room`, and a non-empty `sub` of at most [`MAX_SUB`]
    /// bytes. A site that signs tokens ahead of a sale with `nbf` at its start gets them
    /// refused until then (before issue 28, `nbf` was not read at all).
    pub fn check(&self, token: &str, room: &str) -> Result<EntryClaims, EntryError> {
        let mut v = Validation::new(self.alg);
        v.leeway = LEEWAY_SECS;
        v.validate_nbf = true;
        v.set_required_spec_claims(&["exp", "sub"]);
        let claims = jsonwebtoken::decode::<EntryClaims>(token, &self.key, &v)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => EntryError::Expired,
                jsonwebtoken::errors::ErrorKind::ImmatureSignature => EntryError::NotYetValid,
                _ => EntryError::Invalid,
            })?
            .claims;
        if claims.room != room {
            return Err(EntryError::WrongRoom);
        }
        if claims.sub.is_empty() || claims.sub.len() > MAX_SUB {
            return Err(EntryError::Invalid);
        }
        Ok(claims)
    }
}

/// Rooms past this many in [`EntryKeys`] empty it (room ids come from the configuration
/// and the admin API, so this is a bound, not a working size).
const MAX_CACHED_KEYS: usize = 4096;

/// Each room's entry key, parsed once per configured value rather than on every token
/// check (an Ed25519 PEM or JWK is a parse; a secret is a copy). The cache is keyed on
/// the configured `entry_secret` and `entry_public_key` themselves: a key changed through
/// the admin API is seen on the first check that reads the new configuration, and the
/// old key is never used for it.
#[derive(Debug, Default)]
pub struct EntryKeys {
    by_room: RwLock<HashMap<String, Arc<ParsedKey>>>,
}

/// One room's key and the configured values it was parsed from (`Debug` shows no secret).
#[derive(Debug)]
struct ParsedKey {
    secret: Option<Secret>,
    public_key: Option<String>,
    /// `None`: no usable key (none set, or one that does not parse): tokens get `NoKey`.
    key: Option<EntryKey>,
}

impl ParsedKey {
    fn is_for(&self, cfg: &RoomConfig) -> bool {
        self.secret == cfg.entry_secret && self.public_key == cfg.entry_public_key
    }
}

impl EntryKeys {
    /// The enqueue token `token` for the room `cfg`: its claims, or why it is refused
    /// (`NoKey` when the room has no usable key). The key is parsed at most once per
    /// configured value.
    pub fn check(&self, cfg: &RoomConfig, token: &str) -> Result<EntryClaims, EntryError> {
        match &self.key_for(cfg).key {
            Some(key) => key.check(token, &cfg.id),
            None => Err(EntryError::NoKey),
        }
    }

    fn key_for(&self, cfg: &RoomConfig) -> Arc<ParsedKey> {
        // A poisoned lock only means a panic elsewhere while holding it; the map is
        // always whole (entries are inserted or cleared in one step).
        let cached = self
            .by_room
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&cfg.id)
            .filter(|k| k.is_for(cfg))
            .cloned();
        if let Some(k) = cached {
            return k;
        }
        let key = EntryKey::parse(cfg.entry_secret.as_ref(), cfg.entry_public_key.as_deref());
        self.keep(cfg, key.ok().flatten())
    }

    /// Checks `cfg`'s key as [`EntryKey::from_room`] does (the same errors) and keeps it
    /// parsed for the room's token checks: start-up's check parses each declared room's
    /// key here, once, and hands these keys to the engine.
    pub fn check_room(&self, cfg: &RoomConfig) -> Result<(), String> {
        let key = EntryKey::from_room(cfg)?;
        self.keep(cfg, key);
        Ok(())
    }

    fn keep(&self, cfg: &RoomConfig, key: Option<EntryKey>) -> Arc<ParsedKey> {
        let parsed = Arc::new(ParsedKey {
            secret: cfg.entry_secret.clone(),
            public_key: cfg.entry_public_key.clone(),
            key,
        });
        let mut map = self.by_room.write().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_CACHED_KEYS && !map.contains_key(&cfg.id) {
            map.clear();
        }
        map.insert(cfg.id.clone(), parsed.clone());
        parsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::room::{EntryMode, Secret};
    use jsonwebtoken::{EncodingKey, Header};

    const SECRET: &str = "site-entry-secret-0123456789abcdef";

    /// The enqueue token `token` for the room `cfg`, its key parsed afresh.
    fn check(cfg: &RoomConfig, token: &str) -> Result<EntryClaims, EntryError> {
        EntryKeys::default().check(cfg, token)
    }

    fn room() -> RoomConfig {
        RoomConfig {
            id: "sale".into(),
            entry: EntryMode::Token,
            entry_secret: Some(Secret::new(SECRET)),
            target_url: "https://shop.example/".into(),
            ..RoomConfig::default()
        }
    }

    fn now() -> u64 {
        jsonwebtoken::get_current_timestamp()
    }

    fn hs(claims: serde_json::Value, secret: &str) -> String {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap()
    }

    /// Issue 28 finding 11: a token whose `nbf` was an hour away was honoured at once.
    #[test]
    fn a_token_is_refused_before_its_nbf() {
        let cfg = room();
        let token = |nbf: serde_json::Value| {
            hs(
                serde_json::json!({"sub": "u", "room": "sale", "exp": now() + 7200, "nbf": nbf}),
                SECRET,
            )
        };
        assert_eq!(
            check(&cfg, &token(serde_json::json!(now() + 3600))),
            Err(EntryError::NotYetValid)
        );
        assert_eq!(EntryError::NotYetValid.code(), "token_not_yet_valid");
        // Within the leeway, or past: good. Not a number: invalid.
        assert!(check(&cfg, &token(serde_json::json!(now() + LEEWAY_SECS - 5))).is_ok());
        assert!(check(&cfg, &token(serde_json::json!(now() - 60))).is_ok());
        assert_eq!(
            check(&cfg, &token(serde_json::json!("soon"))),
            Err(EntryError::Invalid)
        );
    }

    #[test]
    fn a_good_token_gives_its_claims_and_bad_ones_their_reason() {
        let cfg = room();
        let good = hs(
            serde_json::json!({"sub": "user-1", "room": "sale", "exp": now() + 60, "lane": "members"}),
            SECRET,
        );
        let c = check(&cfg, &good).unwrap();
        assert_eq!(
            (c.sub.as_str(), c.lane.as_deref()),
            ("user-1", Some("members"))
        );
        let expired = hs(
            serde_json::json!({"sub": "u", "room": "sale", "exp": now() - LEEWAY_SECS - 5}),
            SECRET,
        );
        assert_eq!(check(&cfg, &expired), Err(EntryError::Expired));
        let other = hs(
            serde_json::json!({"sub": "u", "room": "other", "exp": now() + 60}),
            SECRET,
        );
        assert_eq!(check(&cfg, &other), Err(EntryError::WrongRoom));
        let forged = hs(
            serde_json::json!({"sub": "u", "room": "sale", "exp": now() + 60}),
            "another-secret-0123456789abcdef0123",
        );
        assert_eq!(check(&cfg, &forged), Err(EntryError::Invalid));
        let no_sub = hs(
            serde_json::json!({"room": "sale", "exp": now() + 60}),
            SECRET,
        );
        assert_eq!(check(&cfg, &no_sub), Err(EntryError::Invalid));
        assert_eq!(check(&cfg, "not.a.jwt"), Err(EntryError::Invalid));
        // alg=none, or HS256 where the room expects EdDSA, is refused.
        let none = format!(
            "{}.{}.",
            base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                br#"{"alg":"none","typ":"JWT"}"#
            ),
            base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                format!(r#"{{"sub":"u","room":"sale","exp":{}}}"#, now() + 60)
            )
        );
        assert_eq!(check(&cfg, &none), Err(EntryError::Invalid));
        let open = RoomConfig {
            entry: EntryMode::Open,
            entry_secret: None,
            ..room()
        };
        assert_eq!(check(&open, &good), Err(EntryError::NoKey));
    }

    #[test]
    fn ed25519_tokens_verify_with_the_public_key_as_pem_or_jwk() {
        use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey};
        let sk = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
        let pem = sk
            .verifying_key()
            .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap();
        let der = sk.to_pkcs8_der().unwrap();
        let token = jsonwebtoken::encode(
            &Header::new(Algorithm::EdDSA),
            &serde_json::json!({"sub": "u", "room": "sale", "exp": now() + 60}),
            &EncodingKey::from_ed_der(der.as_bytes()),
        )
        .unwrap();
        let by_pem = RoomConfig {
            entry_secret: None,
            entry_public_key: Some(pem),
            ..room()
        };
        assert_eq!(check(&by_pem, &token).unwrap().sub, "u");
        let x = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            sk.verifying_key().as_bytes(),
        );
        let by_jwk = RoomConfig {
            entry_public_key: Some(format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}"}}"#)),
            ..by_pem.clone()
        };
        assert_eq!(check(&by_jwk, &token).unwrap().sub, "u");
        // An HS256 token signed with the PEM text as the secret is not accepted.
        let confused = hs(
            serde_json::json!({"sub": "u", "room": "sale", "exp": now() + 60}),
            by_pem.entry_public_key.as_deref().unwrap(),
        );
        assert_eq!(check(&by_pem, &confused), Err(EntryError::Invalid));
    }

    #[test]
    fn unusable_keys_are_refused_with_the_setting_named() {
        let short = RoomConfig {
            entry_secret: Some(Secret::new("short")),
            ..room()
        };
        assert!(EntryKey::from_room(&short)
            .unwrap_err()
            .contains("entry_secret"));
        let none = RoomConfig {
            entry_secret: None,
            ..room()
        };
        assert!(EntryKey::from_room(&none).unwrap_err().contains("needs"));
        let bad = RoomConfig {
            entry_secret: None,
            entry_public_key: Some("not a key".into()),
            ..room()
        };
        assert!(EntryKey::from_room(&bad)
            .unwrap_err()
            .contains("entry_public_key"));
    }

    /// Issue 29: a room's key is parsed once per configured value, and a key changed
    /// (through the admin API: a new configuration read) is used from the next check on.
    #[test]
    fn the_engine_keeps_each_rooms_parsed_key_until_its_configured_value_changes() {
        let keys = EntryKeys::default();
        let cfg = room();
        let claims = serde_json::json!({"sub": "u", "room": "sale", "exp": now() + 60});
        let old_token = hs(claims.clone(), SECRET);
        assert_eq!(keys.check(&cfg, &old_token).unwrap().sub, "u");
        let first = keys.key_for(&cfg);
        assert!(
            Arc::ptr_eq(&first, &keys.key_for(&cfg.clone())),
            "parsed once"
        );

        let new_secret = "a-new-site-entry-secret-0123456789";
        let changed = RoomConfig {
            entry_secret: Some(Secret::new(new_secret)),
            ..room()
        };
        assert_eq!(keys.check(&changed, &old_token), Err(EntryError::Invalid));
        assert_eq!(
            keys.check(&changed, &hs(claims.clone(), new_secret))
                .unwrap()
                .sub,
            "u"
        );
        assert!(
            !Arc::ptr_eq(&first, &keys.key_for(&changed)),
            "parsed again"
        );
        // The key removed: no token is taken; another room's key is its own.
        let open = RoomConfig {
            entry: EntryMode::Open,
            entry_secret: None,
            ..room()
        };
        assert_eq!(keys.check(&open, &old_token), Err(EntryError::NoKey));
        let other = RoomConfig {
            id: "other".into(),
            ..room()
        };
        assert_eq!(keys.check(&other, &old_token), Err(EntryError::WrongRoom));
        assert_eq!(keys.check(&cfg, &old_token).unwrap().sub, "u");
    }

    /// Issue 29: the key start-up's check parsed is the one the token checks use.
    #[test]
    fn a_key_parsed_by_the_room_check_is_the_one_the_token_checks_use() {
        let keys = EntryKeys::default();
        let cfg = room();
        keys.check_room(&cfg).unwrap();
        let kept = keys.by_room.read().unwrap().get("sale").cloned().unwrap();
        assert!(Arc::ptr_eq(&kept, &keys.key_for(&cfg)));
        let token = hs(
            serde_json::json!({"sub": "u", "room": "sale", "exp": now() + 60}),
            SECRET,
        );
        assert_eq!(keys.check(&cfg, &token).unwrap().sub, "u");
        // A key the check refuses is refused with its message, and nothing is kept.
        let short = RoomConfig {
            id: "short".into(),
            entry_secret: Some(Secret::new("short")),
            ..room()
        };
        assert!(keys
            .check_room(&short)
            .unwrap_err()
            .contains("entry_secret"));
        assert!(keys.by_room.read().unwrap().get("short").is_none());
    }
}
