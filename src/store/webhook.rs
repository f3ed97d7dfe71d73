//! What the stores keep for a room's signed webhooks (`crate::webhook` delivers them):
//! a cursor in the room's stream, the deliveries waiting for a retry (with their bodies,
//! so a retry survives the stream's trimming and an instance restart) and a dead-letter
//! count. The Redis keys are in `docs/design.md#redis-key-layout` (`wh:*`); the memory
//! store keeps a [`WebhookState`] in each room.

use std::collections::BTreeMap;

/// A delivery waiting for another attempt.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WebhookRetry {
    /// The event's stream id (the delivery's `webhook-id` is made from it).
    pub event_id: String,
    /// The JSON body as first sent: a retry sends the same bytes.
    pub body: String,
    /// Attempts made so far (at least 1).
    pub attempts: u32,
    /// When the next attempt is due, ms since the epoch (the deliverer's clock).
    pub due_ms: u64,
}

/// What became of a retried delivery ([`super::Store::webhook_settle`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebhookSettle {
    /// Delivered: the record is dropped.
    Delivered,
    /// Failed again: try again at `due_ms`, `attempts` made so far.
    Retry { attempts: u32, due_ms: u64 },
    /// Failed for the last time: the record is dropped and the dead letters counted.
    Dead,
}

/// A room's webhook figures ([`super::Store::webhook_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct WebhookCounts {
    /// Deliveries waiting for a retry.
    pub pending: u64,
    /// Deliveries given up after the last attempt, since the room was created.
    pub dead_letters: u64,
}

/// The memory store's webhook state of one room (the Redis store's `wh:*` keys).
#[derive(Debug, Default)]
pub struct WebhookState {
    /// The last stream id delivered or parked; empty: none yet.
    cursor: String,
    /// event id → retry.
    retries: BTreeMap<String, WebhookRetry>,
    dead: u64,
}

impl WebhookState {
    pub fn cursor(&self) -> String {
        self.cursor.clone()
    }

    pub fn advance(&mut self, cursor: &str, retries: &[WebhookRetry], dead: u64) {
        self.cursor = cursor.to_string();
        for r in retries {
            self.retries.insert(r.event_id.clone(), r.clone());
        }
        self.dead += dead;
    }

    /// Due retries, soonest first (ties by event id), at most `limit`.
    pub fn due(&self, now_ms: u64, limit: u32) -> Vec<WebhookRetry> {
        let mut due: Vec<WebhookRetry> = self
            .retries
            .values()
            .filter(|r| r.due_ms <= now_ms)
            .cloned()
            .collect();
        due.sort_by(|a, b| (a.due_ms, &a.event_id).cmp(&(b.due_ms, &b.event_id)));
        due.truncate(limit as usize);
        due
    }

    pub fn settle(&mut self, event_id: &str, outcome: &WebhookSettle) {
        match outcome {
            WebhookSettle::Delivered => {
                self.retries.remove(event_id);
            }
            WebhookSettle::Retry { attempts, due_ms } => {
                if let Some(r) = self.retries.get_mut(event_id) {
                    r.attempts = *attempts;
                    r.due_ms = *due_ms;
                }
            }
            WebhookSettle::Dead => {
                if self.retries.remove(event_id).is_some() {
                    self.dead += 1;
                }
            }
        }
    }

    pub fn counts(&self) -> WebhookCounts {
        WebhookCounts {
            pending: self.retries.len() as u64,
            dead_letters: self.dead,
        }
    }
}
