//! A room's signed webhook (`docs/integrations.md#signed-webhooks`): its `webhook_url`
//! and `webhook_secret`. The secret follows the Standard Webhooks specification:
//! `whsec_` followed by the key in standard base64.

use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::RoomConfig;

/// The prefix of a webhook secret (Standard Webhooks).
pub const SECRET_PREFIX: &str = "whsec_";

/// What a set secret looks like wherever a room's configuration is shown (admin API,
/// dashboard, audit log): never the secret itself.
pub const REDACTED: &str = super::redact::SET;

/// A room's webhook signing secret, `whsec_<base64 key>`. It never leaves the process
/// in a response: it serialises as [`REDACTED`] and prints redacted in `Debug`. It
/// deserialises from any string, so a bad one is refused by [`check_room`] naming the
/// field rather than by serde.
#[derive(Clone, Default, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(transparent)]
#[schema(value_type = String)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    /// The secret as the store keeps it.
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The HMAC key: the base64-decoded part after `whsec_`.
    pub fn key(&self) -> Result<Vec<u8>, String> {
        let b64 = self
            .0
            .strip_prefix(SECRET_PREFIX)
            .ok_or_else(|| format!("must start with `{SECRET_PREFIX}` (Standard Webhooks)"))?;
        match base64::engine::general_purpose::STANDARD.decode(b64) {
            Ok(k) if !k.is_empty() => Ok(k),
            Ok(_) => Err(format!("must carry a key after `{SECRET_PREFIX}`")),
            Err(_) => Err(format!(
                "the part after `{SECRET_PREFIX}` must be standard base64 (e.g. `openssl rand -base64 32`)"
            )),
        }
    }
}

impl Serialize for WebhookSecret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(REDACTED)
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret([redacted])")
    }
}

/// A room's webhook fields; `(field, message)` for the first problem.
pub fn check_room(cfg: &RoomConfig) -> Result<(), (&'static str, String)> {
    if let Some(u) = &cfg.webhook_url {
        match url::Url::parse(u) {
            Ok(p) if (p.scheme() == "http" || p.scheme() == "https") && p.has_host() => {}
            _ => {
                return Err((
                    "webhook_url",
                    "must be an absolute http:// or https:// URL".into(),
                ))
            }
        }
        if cfg.webhook_secret.is_none() {
            return Err((
                "webhook_secret",
                "is required with webhook_url (`whsec_` + base64 key)".into(),
            ));
        }
    }
    if let Some(s) = &cfg.webhook_secret {
        s.key().map_err(|m| ("webhook_secret", m))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_needs_the_prefix_and_a_base64_key() {
        assert!(WebhookSecret::new("whsec_c2VjcmV0").key().is_ok());
        assert!(WebhookSecret::new("c2VjcmV0")
            .key()
            .unwrap_err()
            .contains("whsec_"));
        assert!(WebhookSecret::new("whsec_not base64!").key().is_err());
        assert!(WebhookSecret::new("whsec_").key().is_err());
    }

    #[test]
    fn a_secret_never_serialises() {
        let s = serde_json::to_string(&WebhookSecret::new("whsec_c2VjcmV0")).unwrap();
        assert_eq!(s, format!("\"{REDACTED}\""));
        assert!(!format!("{:?}", WebhookSecret::new("whsec_c2VjcmV0")).contains("c2Vj"));
    }
}
