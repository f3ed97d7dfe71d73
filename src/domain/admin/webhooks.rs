//! A room's webhook dead letters for the admin: read them (each with its event, the body
//! sent, the attempts made and the last one's error) and replay one or all, which makes
//! each a retry again, due at once, with all of `webhooks.max_attempts` (the deliverer
//! sends it on its next pass, under the same `webhook-id`). Replays are audited.

use serde::Serialize;
use serde_json::{json, Value};

use super::audit::audit;
use crate::domain::admission::Engine;
use crate::domain::error::DomainError;
use crate::store::{WebhookCounts, WebhookDeadLetter};

/// One dead letter as the admin reads it.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct DeadLetter {
    /// The event's stream id: name it to replay this letter.
    pub event_id: String,
    /// The `webhook-id` every attempt carried (a replay carries it too).
    pub webhook_id: String,
    /// The event's type (`admission`, `release`, `expiry`, `stock_unit_claimed`,
    /// `sold_out`, `opened`, `closed`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The JSON body sent, as an object (a replay sends the same bytes).
    #[schema(value_type = Object)]
    pub payload: Value,
    /// Attempts made before it was given up.
    pub attempts: u32,
    /// What the last attempt got: `the receiver answered HTTP 500`, or why there was no
    /// answer (a timeout, a refused connection, a TLS error).
    pub error: String,
    /// When it was given up, ms since the epoch.
    pub dead_at: u64,
}

impl DeadLetter {
    fn new(room: &str, l: WebhookDeadLetter) -> Self {
        let payload: Value = serde_json::from_str(&l.body).unwrap_or(Value::String(l.body));
        Self {
            webhook_id: crate::domain::webhook_message::webhook_id(room, &l.event_id),
            kind: payload["type"].as_str().unwrap_or_default().to_string(),
            event_id: l.event_id,
            payload,
            attempts: l.attempts,
            error: l.error,
            dead_at: l.dead_at_ms,
        }
    }
}

/// A room's dead letters, newest first, with its webhook figures.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeadLetters {
    pub dead_letters: Vec<DeadLetter>,
    pub counts: WebhookCounts,
}

/// The event ids a replay moved back to the retries.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Replayed {
    pub replayed: Vec<String>,
}

/// An event id as the store writes them (`<ms>-<seq>`, a Redis stream id).
fn valid_event_id(id: &str) -> bool {
    id.split_once('-').is_some_and(|(ms, seq)| {
        [ms, seq]
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The room's kept dead letters (the newest 1000), newest first.
pub async fn dead_letters(engine: &Engine, room: &str) -> Result<DeadLetters, DomainError> {
    engine.room_config(room).await?;
    let failed = |e| engine.store_failed("admin", room, e);
    let letters = engine
        .store
        .webhook_dead_letters(room)
        .await
        .map_err(failed)?;
    let counts = engine.store.webhook_counts(room).await.map_err(failed)?;
    Ok(DeadLetters {
        dead_letters: letters
            .into_iter()
            .map(|l| DeadLetter::new(room, l))
            .collect(),
        counts,
    })
}

/// Replays the dead letter of `event_id`, or every kept one with `None`. A named letter
/// that is not kept (never dead, replayed already, or pushed out) is `NotFound`.
pub async fn replay(
    engine: &Engine,
    who: &str,
    room: &str,
    event_id: Option<&str>,
) -> Result<Vec<String>, DomainError> {
    if let Some(id) = event_id.filter(|id| !valid_event_id(id)) {
        return Err(DomainError::InvalidField {
            field: "event_id".into(),
            message: format!(
                "must be an event id such as 1717171717171-0 (the `event_id` of a dead letter), not `{}`",
                id.chars().take(64).collect::<String>()
            ),
        });
    }
    engine.room_config(room).await?;
    let moved = engine
        .store
        .webhook_replay(room, event_id, crate::clock::wall_ms())
        .await
        .map_err(|e| engine.store_failed("admin", room, e))?;
    if let (Some(id), true) = (event_id, moved.is_empty()) {
        return Err(DomainError::NotFound(format!(
            "room `{room}` keeps no dead letter for the event {id}: it was never given up, was replayed already, or was pushed out by newer ones"
        )));
    }
    if !moved.is_empty() {
        audit(
            engine,
            who,
            room,
            "replay webhook dead letters",
            json!(moved),
            json!("due for delivery"),
        )
        .await;
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::valid_event_id;

    #[test]
    fn event_ids_are_read_strictly() {
        assert!(valid_event_id("1717171717171-0"));
        assert!(valid_event_id("5-12"));
        for bad in ["", "5", "5-", "-0", "a-0", "5-0-1", "5 -0", "1%2F-0"] {
            assert!(!valid_event_id(bad), "{bad}");
        }
    }
}
