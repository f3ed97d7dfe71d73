//! The `[webhooks]` section that times the deliverer. A room's own webhook fields
//! (`webhook_url`, `webhook_secret`) are the room model's (`crate::room::webhook`).

use serde::{Deserialize, Serialize};

use super::ConfigError;

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
