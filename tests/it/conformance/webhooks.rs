//! What the stores keep for signed webhooks (cursor, retries with their bodies, dead
//! letters), run by the `conformance!` macro against every backend.

use anteroom::config::{RoomConfig, WebhookSecret};
use anteroom::store::{RoomPatch, WebhookCounts, WebhookRetry, WebhookSettle};

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
    s.webhook_advance("r", "5-0", &[retry("2-0", 1000), retry("4-0", 500)], 0)
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
            dead_letters: 0
        }
    );

    // Dead: counted once, even if settled twice.
    s.webhook_settle("r", "4-0", &WebhookSettle::Dead)
        .await
        .unwrap();
    s.webhook_settle("r", "4-0", &WebhookSettle::Dead)
        .await
        .unwrap();
    s.webhook_advance("r", "6-0", &[], 2).await.unwrap();
    assert_eq!(
        s.webhook_counts("r").await.unwrap(),
        WebhookCounts {
            pending: 0,
            dead_letters: 3
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
