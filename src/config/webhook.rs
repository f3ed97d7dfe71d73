//! Signed webhooks (`docs/integrations.md#signed-webhooks`): a room's `webhook_url` and
//! `webhook_secret`, and the `[webhooks]` section that times the deliverer. The secret
//! follows the Standard Webhooks specification: `whsec_` followed by the key in standard
//! base64.

use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{ConfigError, RoomConfig};

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

/// The `[webhooks]` section: how the deliverer works (every room with a `webhook_url`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// Milliseconds between the deliverer's passes over the rooms.
    pub interval_ms: u64,
    /// Milliseconds one delivery may take (connect, send, answer); past it: a failure.
    pub timeout_ms: u64,
    /// The retry schedule's base, in ms: the retry after `n` failed attempts waits a
    /// random time in `[0, min(retry_cap_ms, retry_base_ms · 2^(n-1))]` (full jitter).
    pub retry_base_ms: u64,
    /// The longest wait before a retry, in ms.
    pub retry_cap_ms: u64,
    /// Attempts per event, the first one included; after the last a delivery is a dead
    /// letter (counted per room).
    pub max_attempts: u32,
    /// Deliveries in flight at once per room.
    pub concurrency: usize,
    /// Events (and due retries) taken per room per pass.
    pub batch: u32,
}

impl WebhookSettings {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field: &str, message: &str| {
            Err(ConfigError::Invalid {
                field: format!("webhooks.{field}"),
                message: message.into(),
            })
        };
        if self.interval_ms < 10 {
            return invalid("interval_ms", "must be at least 10");
        }
        if self.timeout_ms == 0 || self.timeout_ms > 60_000 {
            return invalid("timeout_ms", "must be between 1 and 60000");
        }
        if self.retry_base_ms == 0 {
            return invalid("retry_base_ms", "must be at least 1");
        }
        if self.retry_cap_ms < self.retry_base_ms {
            return invalid("retry_cap_ms", "must be at least retry_base_ms");
        }
        if self.max_attempts == 0 || self.max_attempts > 100 {
            return invalid("max_attempts", "must be between 1 and 100");
        }
        if self.concurrency == 0 || self.concurrency > 1000 {
            return invalid("concurrency", "must be between 1 and 1000");
        }
        if self.batch == 0 || self.batch > 10_000 {
            return invalid("batch", "must be between 1 and 10000");
        }
        Ok(())
    }
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
