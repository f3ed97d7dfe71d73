//! Background work, one set per instance:
//!
//! - the **reaper**: per room, under a distributed lease so one instance works a room at a
//!   time, drops queued visitors whose heartbeat stopped, prunes expired sessions (both in
//!   bounded batches), then promotes;
//! - the **promoter**: every `promote_interval_ms`, promotes every room, so capacity freed
//!   by expiry is reused within about a second. Promotion is one atomic script, so many
//!   instances promoting at once is safe (and cheap: a full room answers at once).
//!
//! Both are a one-pass function (tests call it directly) plus a loop that stops on a
//! cancellation token.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::ReaperSettings;
use crate::metrics::Metrics;
use crate::store::{AdmissionStore, LeaseStore, RoomStore, StoreError};

/// Most batches worked per room in one pass; the rest waits for the next pass.
const MAX_BATCHES_PER_PASS: u32 = 100;
/// Most admissions per promote call.
const PROMOTE_LIMIT: u32 = 1000;

/// What one reaper pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReapOutcome {
    /// Rooms this instance held the lease for and reaped.
    pub rooms_reaped: usize,
    /// Rooms skipped because another instance holds their lease.
    pub rooms_skipped: usize,
    /// Queued visitors dropped for silence.
    pub dropped: u64,
    /// Expired sessions pruned.
    pub expired: u64,
    /// Visitors admitted by the promote that follows.
    pub admitted: Vec<(String, Vec<String>)>,
    /// Rooms whose reaping failed, with the error; the pass goes on with the others
    /// (one broken or unreachable room must not stop every other room's reaping).
    pub failed: Vec<(String, String)>,
}

/// The lease name of a room's reaper.
pub fn lease_name(room: &str) -> String {
    format!("{room}/reaper")
}

/// One pass over every room. `holder` identifies this instance in the lease. Fails only
/// when the list of rooms cannot be read; a room that fails is recorded in
/// [`ReapOutcome::failed`] and the pass goes on.
pub async fn reap_once<S: RoomStore + LeaseStore + AdmissionStore + ?Sized>(
    store: &S,
    holder: &str,
    cfg: &ReaperSettings,
) -> Result<ReapOutcome, StoreError> {
    let mut out = ReapOutcome::default();
    for room in store.rooms().await? {
        match reap_room(store, holder, cfg, &room, &mut out).await {
            Ok(()) | Err(StoreError::NoSuchRoom) => {} // deleted meanwhile
            Err(e) => out.failed.push((room, e.to_string())),
        }
    }
    Ok(out)
}

/// Reaps one room under its lease, then promotes it.
async fn reap_room<S: LeaseStore + AdmissionStore + ?Sized>(
    store: &S,
    holder: &str,
    cfg: &ReaperSettings,
    room: &str,
    out: &mut ReapOutcome,
) -> Result<(), StoreError> {
    if !store
        .acquire_lease(&lease_name(room), holder, cfg.lease_ms)
        .await?
    {
        out.rooms_skipped += 1;
        return Ok(());
    }
    out.rooms_reaped += 1;
    for _ in 0..MAX_BATCHES_PER_PASS {
        let b = store.reap(room, cfg.batch_size).await?;
        out.dropped += b.dropped;
        out.expired += b.expired;
        if b.dropped < u64::from(cfg.batch_size) && b.expired < u64::from(cfg.batch_size) {
            break;
        }
    }
    let admitted = store.promote(room, PROMOTE_LIMIT).await?;
    if !admitted.is_empty() {
        out.admitted.push((room.to_string(), admitted));
    }
    Ok(())
}

/// Promotes every room once; returns the admitted visitors per room.
pub async fn promote_once<S: RoomStore + AdmissionStore + ?Sized>(
    store: &S,
) -> Result<Vec<(String, Vec<String>)>, StoreError> {
    let mut out = Vec::new();
    for room in store.rooms().await? {
        match store.promote(&room, PROMOTE_LIMIT).await {
            Ok(a) if !a.is_empty() => out.push((room, a)),
            Ok(_) | Err(StoreError::NoSuchRoom) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Runs [`reap_once`] every `interval_ms` until cancelled, then gives up its leases.
/// Start-up hands it the whole store; it uses the roles `reap_once` names.
pub async fn run_reaper<S: RoomStore + LeaseStore + AdmissionStore + ?Sized>(
    store: std::sync::Arc<S>,
    holder: String,
    cfg: ReaperSettings,
    metrics: Metrics,
    cancel: CancellationToken,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(cfg.interval_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        match reap_once(store.as_ref(), &holder, &cfg).await {
            Ok(o) => {
                for (room, e) in &o.failed {
                    metrics.store_errors.with_label_values(&["reap"]).inc();
                    tracing::warn!(room, error = %e, "reaping a room failed; the others went on");
                }
                let result = if o.failed.is_empty() { "ok" } else { "partial" };
                metrics.reaper_passes.with_label_values(&[result]).inc();
                if o.dropped > 0 || o.expired > 0 {
                    tracing::info!(
                        dropped = o.dropped,
                        expired = o.expired,
                        rooms = o.rooms_reaped,
                        "reaper pass"
                    );
                }
                if o.expired > 0 {
                    // Per-room split is not kept for expired sessions; count them once.
                    metrics
                        .reaped
                        .with_label_values(&["*", "expired"])
                        .inc_by(o.expired);
                }
            }
            Err(e) => {
                metrics.reaper_passes.with_label_values(&["error"]).inc();
                metrics.store_errors.with_label_values(&["reap"]).inc();
                tracing::warn!(error = %e, "reaper pass failed");
            }
        }
    }
    if let Ok(rooms) = store.rooms().await {
        for room in rooms {
            let _ = store.release_lease(&lease_name(&room), &holder).await;
        }
    }
}

/// Runs [`promote_once`] every `promote_interval_ms` until cancelled.
pub async fn run_promoter<S: RoomStore + AdmissionStore + ?Sized>(
    store: std::sync::Arc<S>,
    cfg: ReaperSettings,
    metrics: Metrics,
    cancel: CancellationToken,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(cfg.promote_interval_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        if let Err(e) = promote_once(store.as_ref()).await {
            metrics.store_errors.with_label_values(&["promote"]).inc();
            tracing::debug!(error = %e, "promote tick failed");
        }
    }
}
