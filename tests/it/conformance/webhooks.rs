//! What the stores keep for signed webhooks (cursor, retries with their bodies, dead
//! letters), run by the `conformance!` macro against every backend.

use anteroom::room::{RoomConfig, WebhookSecret};
use anteroom::store::{
    RoomPatch, WebhookCounts, WebhookDeadLetter, WebhookRetry, WebhookSettle, MAX_DEAD_LETTERS_KEPT,
};

use super::Backend;
use crate::helpers::room;

fn retry(id: &str, due_ms: u64) -> WebhookRetry {
    WebhookRetry {
        event_id: id.into(),
        body: format!("{{\"type\":\"admission\",\"id\":\"{id}\"}}"),
        attempts: 1,
        due_ms,
    }
}

fn dead(attempts: u32, at_ms: u64) -> WebhookSettle {
    WebhookSettle::Dead {
        attempts,
        error: "the receiver answered HTTP 500".into(),
        at_ms,
    }
}

fn letter(id: &str, at_ms: u64) -> WebhookDeadLetter {
    WebhookDeadLetter {
        event_id: id.into(),
        body: format!("{{\"type\":\"release\",\"id\":\"{id}\"}}"),
        attempts: 1,
        error: "no answer within 100 ms".into(),
        dead_at_ms: at_ms,
    }
}

async fn hooked(b: Backend) -> Backend {
    b.with_room(RoomConfig {
        webhook_url: Some("http://127.0.0.1:9/hook".into()),
        webhook_secret: Some(WebhookSecret::new("whsec_c2VjcmV0")),
        ..room("r", 1)
    })
    .await
}

pub(super) async fn dead_letters_are_kept_with_their_reason_and_replayed_as_fresh_retries(
    b: Backend,
) {
    let b = hooked(b).await;
    let s = &b.store;
    assert!(s.webhook_dead_letters("r").await.unwrap().is_empty());
    assert!(s.webhook_replay("r", None, 1).await.unwrap().is_empty());

    // One given up after its retries (its body and the reason kept), two given up at
    // their first attempt.
    s.webhook_advance("r", "2-0", &[retry("2-0", 100)], &[])
        .await
        .unwrap();
    s.webhook_settle("r", "2-0", &dead(4, 9000)).await.unwrap();
    s.webhook_advance("r", "4-0", &[], &[letter("3-0", 9100), letter("4-0", 9200)])
        .await
        .unwrap();
    let kept = s.webhook_dead_letters("r").await.unwrap();
    assert_eq!(
        kept,
        vec![
            letter("4-0", 9200),
            letter("3-0", 9100),
            WebhookDeadLetter {
                event_id: "2-0".into(),
                body: retry("2-0", 0).body,
                attempts: 4,
                error: "the receiver answered HTTP 500".into(),
                dead_at_ms: 9000,
            },
        ],
        "newest first, with the body, attempts, reason and time"
    );
    assert!(s.webhook_due("r", u64::MAX, 10).await.unwrap().is_empty());

    // Replaying one: it is a retry again, due then, with no attempt made; the count
    // of dead letters stays (it counts every one given up), the kept list shrinks.
    assert_eq!(
        s.webhook_replay("r", Some("3-0"), 20_000).await.unwrap(),
        vec!["3-0".to_string()]
    );
    assert!(s.webhook_due("r", 19_999, 10).await.unwrap().is_empty());
    assert_eq!(
        s.webhook_due("r", 20_000, 10).await.unwrap(),
        vec![WebhookRetry {
            event_id: "3-0".into(),
            body: letter("3-0", 0).body,
            attempts: 0,
            due_ms: 20_000,
        }]
    );
    assert_eq!(
        s.webhook_counts("r").await.unwrap(),
        WebhookCounts {
            pending: 1,
            dead_letters: 3,
            dead_letters_kept: 2,
        }
    );
    // A letter replayed already, or never dead, moves nothing.
    assert!(s
        .webhook_replay("r", Some("3-0"), 1)
        .await
        .unwrap()
        .is_empty());
    assert!(s
        .webhook_replay("r", Some("9-0"), 1)
        .await
        .unwrap()
        .is_empty());

    // Replaying all moves the rest; the retries go soonest first, then by event.
    let mut all = s.webhook_replay("r", None, 30_000).await.unwrap();
    all.sort();
    assert_eq!(all, vec!["2-0".to_string(), "4-0".to_string()]);
    assert!(s.webhook_dead_letters("r").await.unwrap().is_empty());
    let due: Vec<String> = s
        .webhook_due("r", 30_000, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.event_id)
        .collect();
    assert_eq!(due, vec!["3-0", "2-0", "4-0"]);

    // A replayed letter that fails for good again is kept again.
    s.webhook_settle("r", "4-0", &dead(2, 40_000))
        .await
        .unwrap();
    assert_eq!(s.webhook_dead_letters("r").await.unwrap().len(), 1);
    assert_eq!(s.webhook_counts("r").await.unwrap().dead_letters, 4);
}

pub(super) async fn only_the_newest_dead_letters_are_kept(b: Backend) {
    let b = hooked(b).await;
    let s = &b.store;
    let many: Vec<WebhookDeadLetter> = (0..MAX_DEAD_LETTERS_KEPT as u64 + 5)
        .map(|i| letter(&format!("{}-0", i + 1), i))
        .collect();
    s.webhook_advance("r", "9999-0", &[], &many).await.unwrap();
    let kept = s.webhook_dead_letters("r").await.unwrap();
    assert_eq!(kept.len(), MAX_DEAD_LETTERS_KEPT);
    assert_eq!(kept[0], *many.last().unwrap(), "the newest first");
    assert_eq!(
        kept.last().unwrap().event_id,
        "6-0",
        "the 5 oldest pushed out"
    );
    let c = s.webhook_counts("r").await.unwrap();
    assert_eq!(
        (c.dead_letters, c.dead_letters_kept),
        (
            MAX_DEAD_LETTERS_KEPT as u64 + 5,
            MAX_DEAD_LETTERS_KEPT as u64
        )
    );
    // A pushed-out letter cannot be replayed; a kept one can.
    assert!(s
        .webhook_replay("r", Some("1-0"), 1)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        s.webhook_replay("r", Some("6-0"), 1).await.unwrap(),
        vec!["6-0"]
    );
}

pub(super) async fn webhook_retries_cursor_and_dead_letters_are_kept(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            webhook_url: Some("http://127.0.0.1:9/hook".into()),
            webhook_secret: Some(WebhookSecret::new("whsec_c2VjcmV0")),
            ..room("r", 1)
        })
        .await;
    let s = &b.store;
    // The config round-trips (the secret as written, for the deliverer).
    let cfg = s.room("r").await.unwrap().unwrap();
    assert_eq!(cfg.webhook_url.as_deref(), Some("http://127.0.0.1:9/hook"));
    assert_eq!(
        cfg.webhook_secret.as_ref().map(|k| k.expose()),
        Some("whsec_c2VjcmV0")
    );
    assert_eq!(s.webhook_cursor("r").await.unwrap(), "");
    assert_eq!(
        s.webhook_counts("r").await.unwrap(),
        WebhookCounts::default()
    );

    // Advancing moves the cursor and parks the failures, with their bodies.
    s.webhook_advance("r", "5-0", &[retry("2-0", 1000), retry("4-0", 500)], &[])
        .await
        .unwrap();
    assert_eq!(s.webhook_cursor("r").await.unwrap(), "5-0");
    assert!(s.webhook_due("r", 499, 10).await.unwrap().is_empty());
    assert_eq!(
        s.webhook_due("r", 1000, 10).await.unwrap(),
        vec![retry("4-0", 500), retry("2-0", 1000)],
        "soonest first, bodies kept"
    );
    assert_eq!(s.webhook_due("r", 1000, 1).await.unwrap().len(), 1);

    // A retry that fails again is re-parked with its attempts; one delivered is gone.
    s.webhook_settle(
        "r",
        "4-0",
        &WebhookSettle::Retry {
            attempts: 2,
            due_ms: 3000,
        },
    )
    .await
    .unwrap();
    s.webhook_settle("r", "2-0", &WebhookSettle::Delivered)
        .await
        .unwrap();
    let due = s.webhook_due("r", 5000, 10).await.unwrap();
    assert_eq!(
        due,
        vec![WebhookRetry {
            attempts: 2,
            due_ms: 3000,
            ..retry("4-0", 500)
        }]
    );
    assert_eq!(
        s.webhook_counts("r").await.unwrap(),
        WebhookCounts {
            pending: 1,
            dead_letters: 0,
            dead_letters_kept: 0,
        }
    );

    // Dead: kept and counted once, even if settled twice.
    s.webhook_settle("r", "4-0", &dead(3, 9000)).await.unwrap();
    s.webhook_settle("r", "4-0", &dead(3, 9000)).await.unwrap();
    s.webhook_advance("r", "6-0", &[], &[letter("5-0", 9500), letter("6-0", 9600)])
        .await
        .unwrap();
    assert_eq!(
        s.webhook_counts("r").await.unwrap(),
        WebhookCounts {
            pending: 0,
            dead_letters: 3,
            dead_letters_kept: 3,
        }
    );

    // Removing the webhook through a patch ("" clears both fields).
    s.patch_room(
        "r",
        &RoomPatch {
            webhook_url: Some(String::new()),
            webhook_secret: Some(WebhookSecret::new("")),
            ..RoomPatch::default()
        },
    )
    .await
    .unwrap();
    let cfg = s.room("r").await.unwrap().unwrap();
    assert_eq!((cfg.webhook_url, cfg.webhook_secret), (None, None));
}
