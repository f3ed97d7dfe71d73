//! What the stores keep for a room's signed webhooks (`crate::webhook` delivers them):
//! a cursor in the room's stream, the deliveries waiting for a retry (with their bodies,
//! so a retry survives the stream's trimming and an instance restart), a dead-letter
//! count and the last [`MAX_DEAD_LETTERS_KEPT`] dead letters themselves (their body, the
//! last attempt's error), which an admin can read and replay. The Redis keys are in
//! `docs/design.md#redis-key-layout` (`wh:*`); the memory store keeps a
//! [`WebhookState`] in each room.

use std::collections::{BTreeMap, VecDeque};

/// The most dead letters a room keeps (newest kept; the count counts them all).
pub const MAX_DEAD_LETTERS_KEPT: usize = 1000;

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

/// A delivery given up after its last attempt, kept until replayed (or pushed out by
/// newer ones past [`MAX_DEAD_LETTERS_KEPT`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WebhookDeadLetter {
    /// The event's stream id (its `webhook-id` is made from it, as for every attempt).
    pub event_id: String,
    /// The JSON body as sent: a replay sends the same bytes.
    pub body: String,
    /// Attempts made.
    pub attempts: u32,
    /// What the last attempt got: the receiver's status, or why there was no answer.
    pub error: String,
    /// When it was given up, ms since the epoch (the deliverer's clock).
    pub dead_at_ms: u64,
}

/// What became of a retried delivery ([`super::Store::webhook_settle`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebhookSettle {
    /// Delivered: the record is dropped.
    Delivered,
    /// Failed again: try again at `due_ms`, `attempts` made so far.
    Retry { attempts: u32, due_ms: u64 },
    /// Failed for the last time (`attempts` made, the last one's `error`, at `at_ms`):
    /// the record becomes a dead letter, counted.
    Dead {
        attempts: u32,
        error: String,
        at_ms: u64,
    },
}

/// A room's webhook figures ([`super::Store::webhook_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct WebhookCounts {
    /// Deliveries waiting for a retry.
    pub pending: u64,
    /// Deliveries given up after the last attempt, since the room was created.
    pub dead_letters: u64,
    /// Dead letters kept for reading and replay (the newest, at most 1000; a replayed
    /// one leaves this list, not the count above).
    pub dead_letters_kept: u64,
}

/// The memory store's webhook state of one room (the Redis store's `wh:*` keys).
#[derive(Debug, Default)]
pub struct WebhookState {
    /// The last stream id delivered or parked; empty: none yet.
    cursor: String,
    /// event id → retry.
    retries: BTreeMap<String, WebhookRetry>,
    dead: u64,
    /// Newest first.
    letters: VecDeque<WebhookDeadLetter>,
}

impl WebhookState {
    pub fn cursor(&self) -> String {
        self.cursor.clone()
    }

    pub fn advance(&mut self, cursor: &str, retries: &[WebhookRetry], dead: &[WebhookDeadLetter]) {
        self.cursor = cursor.to_string();
        for r in retries {
            self.retries.insert(r.event_id.clone(), r.clone());
        }
        for d in dead {
            self.bury(d.clone());
        }
    }

    fn bury(&mut self, letter: WebhookDeadLetter) {
        self.dead += 1;
        self.letters.push_front(letter);
        self.letters.truncate(MAX_DEAD_LETTERS_KEPT);
    }

    /// The dead letters kept, newest first.
    pub fn dead_letters(&self) -> Vec<WebhookDeadLetter> {
        self.letters.iter().cloned().collect()
    }

    /// Moves the dead letter of `event_id` (every one, with `None`) back to the retries,
    /// due at `due_ms` with no attempt made; the event ids moved.
    pub fn replay(&mut self, event_id: Option<&str>, due_ms: u64) -> Vec<String> {
        let (back, keep): (Vec<_>, Vec<_>) = self
            .letters
            .drain(..)
            .partition(|l| event_id.is_none_or(|id| l.event_id == id));
        self.letters = keep.into();
        back.into_iter()
            .map(|l| {
                self.retries.insert(
                    l.event_id.clone(),
                    WebhookRetry {
                        event_id: l.event_id.clone(),
                        body: l.body,
                        attempts: 0,
                        due_ms,
                    },
                );
                l.event_id
            })
            .collect()
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
            WebhookSettle::Dead {
                attempts,
                error,
                at_ms,
            } => {
                if let Some(r) = self.retries.remove(event_id) {
                    self.bury(WebhookDeadLetter {
                        event_id: r.event_id,
                        body: r.body,
                        attempts: *attempts,
                        error: error.clone(),
                        dead_at_ms: *at_ms,
                    });
                }
            }
        }
    }

    pub fn counts(&self) -> WebhookCounts {
        WebhookCounts {
            pending: self.retries.len() as u64,
            dead_letters: self.dead,
            dead_letters_kept: self.letters.len() as u64,
        }
    }
}
