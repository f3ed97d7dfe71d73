//! Signed webhooks: every event of a room's stream (`admission`, `release`, `expiry`,
//! `stock_unit_claimed`, `sold_out`, `opened`, `closed`) is POSTed to the room's
//! `webhook_url`, signed as the Standard Webhooks specification says ([`message`]).
//!
//! **One deliverer per room** across all instances: a pass takes the room's lease
//! (`<room>/webhook`) and keeps renewing it between chunks of deliveries, so two
//! instances never walk the same room's stream at once (a holder that dies frees it
//! after the lease, three delivery timeouts).
//!
//! **At least once.** The cursor (the last stream id handled) lives in the store and
//! moves only after a chunk's deliveries are settled: delivered, or parked for a retry
//! with a copy of the body (so a retry survives the stream's `MAXLEN` trimming and an
//! instance restart, and sends the same bytes under the same `webhook-id`). A process
//! that dies mid-chunk leaves the cursor before it, and the next holder sends that chunk
//! again: receivers dedupe by `webhook-id`.
//!
//! **Retries**: exponential backoff with full jitter (seed documents 002/003): after `n`
//! failed attempts the next waits a uniform draw in `[0, min(cap, base · 2^(n-1))]`, the
//! first within `retry_base_ms` (5 s, the Standard Webhooks schedule's first step).
//! After `max_attempts` the delivery is a dead letter, counted per room (dashboard,
//! `/metrics`) and kept with the last attempt's error (the newest 1000 a room) for an
//! admin to read and replay (`/api/admin/rooms/{room}/webhook/dead-letters`): a replayed
//! letter is a retry again, due at once, with all its attempts. A 2xx is delivered; anything else, or no answer within `timeout_ms`, a
//! failure. Retries are worked before new events so an outage does not starve them.
//!
//! Like the reaper: a one-pass function ([`deliver_once`], which tests call) and a loop
//! ([`run_deliverer`]) that stops on a cancellation token.

pub mod client;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::join_all;
use rand::Rng;
use tokio_util::sync::CancellationToken;

use crate::config::WebhookSettings;
use crate::domain::webhook_message as message;
use crate::metrics::Metrics;
use crate::store::{
    EventStore, LeaseStore, RoomStore, Store, StoreError, WebhookDeadLetter, WebhookRetry,
    WebhookSettle,
};
use client::WebhookClient;

/// The lease name of a room's deliverer.
pub fn lease_name(room: &str) -> String {
    format!("{room}/webhook")
}

/// The lease's length: a chunk takes at most one delivery timeout, so three leave room
/// for the store calls around it.
fn lease_ms(cfg: &WebhookSettings) -> u64 {
    cfg.timeout_ms.saturating_mul(3).max(1000)
}

/// What one pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliverOutcome {
    /// Rooms with a webhook this instance worked.
    pub rooms_worked: usize,
    /// Rooms with a webhook another instance holds.
    pub rooms_skipped: usize,
    /// Attempts answered 2xx.
    pub delivered: u64,
    /// Attempts that failed (each parked for a retry or made a dead letter).
    pub failed: u64,
    /// Deliveries given up.
    pub dead: u64,
    /// Rooms whose pass failed on the store, with the error; the others went on.
    pub room_errors: Vec<(String, String)>,
}

/// The roles of the store a delivery uses: the room list and configurations, the stream
/// and the webhook records, the per-room lease.
pub trait DeliveryStore: RoomStore + EventStore + LeaseStore {}
impl<T: RoomStore + EventStore + LeaseStore + ?Sized> DeliveryStore for T {}

/// The deliverer: what a pass needs. Start-up hands it the whole store
/// (`Arc<dyn Store>`, the default); it uses the roles of [`DeliveryStore`].
pub struct Deliverer<S: ?Sized = dyn Store> {
    pub store: Arc<S>,
    pub client: WebhookClient,
    /// This instance, in the leases.
    pub holder: String,
    pub cfg: WebhookSettings,
    pub metrics: Metrics,
}

impl<S: ?Sized> Clone for Deliverer<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            client: self.client.clone(),
            holder: self.holder.clone(),
            cfg: self.cfg.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

impl<S: DeliveryStore + ?Sized> Deliverer<S> {
    pub fn new(
        store: Arc<S>,
        holder: String,
        cfg: WebhookSettings,
        metrics: Metrics,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            client: WebhookClient::new(Duration::from_millis(cfg.timeout_ms))?,
            store,
            holder,
            cfg,
            metrics,
        })
    }
}

/// One pass over every room with a webhook. Fails only when the list of rooms cannot
/// be read.
pub async fn deliver_once<S: DeliveryStore + ?Sized>(
    d: &Deliverer<S>,
) -> Result<DeliverOutcome, StoreError> {
    let mut out = DeliverOutcome::default();
    for room in d.store.rooms().await? {
        match deliver_room(d, &room, &mut out).await {
            Ok(()) | Err(StoreError::NoSuchRoom) => {}
            Err(e) => out.room_errors.push((room, e.to_string())),
        }
    }
    Ok(out)
}

/// The room's URL and signing key, when it has a webhook.
struct Target {
    url: String,
    key: Vec<u8>,
}

async fn deliver_room<S: DeliveryStore + ?Sized>(
    d: &Deliverer<S>,
    room: &str,
    out: &mut DeliverOutcome,
) -> Result<(), StoreError> {
    let Some(cfg) = d.store.room(room).await? else {
        return Ok(());
    };
    let (Some(url), Some(secret)) = (cfg.webhook_url, cfg.webhook_secret) else {
        return Ok(());
    };
    // Checked when the room was written; a secret that no longer decodes sends nothing.
    let Ok(key) = secret.key() else {
        return Ok(());
    };
    let lease = lease_name(room);
    if !d
        .store
        .acquire_lease(&lease, &d.holder, lease_ms(&d.cfg))
        .await?
    {
        out.rooms_skipped += 1;
        return Ok(());
    }
    out.rooms_worked += 1;
    let target = Target { url, key };
    let chunk = d.cfg.concurrency;

    let due = d
        .store
        .webhook_due(room, crate::clock::wall_ms(), d.cfg.batch)
        .await?;
    for part in due.chunks(chunk) {
        let results = join_all(
            part.iter()
                .map(|r| attempt(d, &target, room, &r.event_id, &r.body)),
        )
        .await;
        for (r, res) in part.iter().zip(results) {
            let ok = res.is_ok();
            let outcome = match res {
                Ok(()) => WebhookSettle::Delivered,
                Err(error) if r.attempts + 1 >= d.cfg.max_attempts => WebhookSettle::Dead {
                    attempts: r.attempts + 1,
                    error,
                    at_ms: crate::clock::wall_ms(),
                },
                Err(_) => WebhookSettle::Retry {
                    attempts: r.attempts + 1,
                    due_ms: crate::clock::wall_ms() + delay(&d.cfg, r.attempts + 1),
                },
            };
            count(d, room, ok, &outcome, out);
            d.store.webhook_settle(room, &r.event_id, &outcome).await?;
        }
        if !d
            .store
            .acquire_lease(&lease, &d.holder, lease_ms(&d.cfg))
            .await?
        {
            return Ok(()); // another instance took over
        }
    }

    let cursor = d.store.webhook_cursor(room).await?;
    let events = d.store.events(room, &cursor, d.cfg.batch).await?;
    for part in events.chunks(chunk) {
        let bodies: Vec<String> = part.iter().map(|e| message::body(room, e)).collect();
        let results = join_all(
            part.iter()
                .zip(&bodies)
                .map(|(e, b)| attempt(d, &target, room, &e.id, b)),
        )
        .await;
        let (mut parked, mut dead) = (Vec::new(), Vec::new());
        for ((e, body), res) in part.iter().zip(bodies).zip(results) {
            let ok = res.is_ok();
            let outcome = match res {
                Ok(()) => WebhookSettle::Delivered,
                Err(error) if d.cfg.max_attempts <= 1 => {
                    let at_ms = crate::clock::wall_ms();
                    dead.push(WebhookDeadLetter {
                        event_id: e.id.clone(),
                        body,
                        attempts: 1,
                        error: error.clone(),
                        dead_at_ms: at_ms,
                    });
                    WebhookSettle::Dead {
                        attempts: 1,
                        error,
                        at_ms,
                    }
                }
                Err(_) => {
                    let due_ms = crate::clock::wall_ms() + delay(&d.cfg, 1);
                    parked.push(WebhookRetry {
                        event_id: e.id.clone(),
                        body,
                        attempts: 1,
                        due_ms,
                    });
                    WebhookSettle::Retry {
                        attempts: 1,
                        due_ms,
                    }
                }
            };
            count(d, room, ok, &outcome, out);
        }
        // unwrap: chunks are never empty.
        let last = &part.last().unwrap().id;
        d.store.webhook_advance(room, last, &parked, &dead).await?;
        if !d
            .store
            .acquire_lease(&lease, &d.holder, lease_ms(&d.cfg))
            .await?
        {
            return Ok(());
        }
    }
    Ok(())
}

/// The wait before the next attempt after `attempts` failed ones.
fn delay(cfg: &WebhookSettings, attempts: u32) -> u64 {
    message::retry_delay_ms(attempts, cfg.retry_base_ms, cfg.retry_cap_ms, |ceiling| {
        rand::thread_rng().gen_range(0..=ceiling)
    })
}

fn count<S: ?Sized>(
    d: &Deliverer<S>,
    room: &str,
    ok: bool,
    outcome: &WebhookSettle,
    out: &mut DeliverOutcome,
) {
    let label = match outcome {
        WebhookSettle::Delivered => "delivered",
        WebhookSettle::Retry { .. } => "failed",
        WebhookSettle::Dead { .. } => "dead",
    };
    if ok {
        out.delivered += 1;
    } else {
        out.failed += 1;
    }
    if matches!(outcome, WebhookSettle::Dead { .. }) {
        out.dead += 1;
    }
    d.metrics
        .webhook_deliveries
        .with_label_values(&[room, label])
        .inc();
}

/// One attempt: signs `body` now and POSTs it; `Ok` when the receiver answered 2xx,
/// else what it got (kept as a dead letter's reason when it was the last attempt).
async fn attempt<S: ?Sized>(
    d: &Deliverer<S>,
    t: &Target,
    room: &str,
    event_id: &str,
    body: &str,
) -> Result<(), String> {
    let id = message::webhook_id(room, event_id);
    let headers = message::headers(&t.key, &id, crate::clock::wall_ms() / 1000, body);
    match d
        .client
        .post(&t.url, &headers, Bytes::from(body.to_string()))
        .await
    {
        Ok(status) if (200..300).contains(&status) => Ok(()),
        Ok(status) => {
            tracing::debug!(room, id, status, "webhook refused; retried later");
            Err(format!("the receiver answered HTTP {status}"))
        }
        Err(error) => {
            tracing::debug!(room, id, error, "webhook failed; retried later");
            Err(error)
        }
    }
}

/// Runs [`deliver_once`] every `interval_ms` until cancelled, then gives up its leases.
pub async fn run_deliverer<S: DeliveryStore + ?Sized>(d: Deliverer<S>, cancel: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_millis(d.cfg.interval_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        let pass = tokio::select! {
            _ = cancel.cancelled() => break,
            pass = deliver_once(&d) => pass,
        };
        match pass {
            Ok(o) => {
                for (room, e) in &o.room_errors {
                    d.metrics.store_errors.with_label_values(&["webhook"]).inc();
                    tracing::warn!(room, error = %e, "webhook delivery pass failed for a room");
                }
                if o.dead > 0 {
                    tracing::warn!(dead = o.dead, "webhook deliveries given up (dead letters)");
                }
            }
            Err(e) => {
                d.metrics.store_errors.with_label_values(&["webhook"]).inc();
                tracing::warn!(error = %e, "webhook delivery pass failed");
            }
        }
    }
    if let Ok(rooms) = d.store.rooms().await {
        for room in rooms {
            let _ = d.store.release_lease(&lease_name(&room), &d.holder).await;
        }
    }
}
