//! The room keeper: rooms declared in the configuration come back by themselves, and a
//! store that lost its data is noticed and said so.
//!
//! Why: Redis restarted without persistence, a failover to an empty replica or a stray
//! `FLUSHALL` used to leave every declared room answering `404 unknown_room` on every
//! instance until each was restarted, while `/readyz` said all was well. Now each
//! instance, once a second:
//!
//! 1. reads the store's **epoch** (a random value the first instance writes with
//!    `SET NX`); a value this instance has not seen before means the store lost its
//!    data: it is logged at ERROR once, counted in `anteroom_store_data_loss_total` and
//!    shown on the dashboard;
//! 2. re-creates every declared room missing from the store (create-only, so instances
//!    racing each other write it once), logged at ERROR and counted in
//!    `anteroom_rooms_recreated_total`.
//!
//! The interval is `reaper.keeper_interval_ms` (1 s by default).
//!
//! `/readyz` answers 503 while a declared room is missing, and the hub keeps the
//! sockets of a declared room open through the gap instead of telling them "closed".

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::RoomConfig;
use crate::domain::admission::Engine;
use crate::domain::identity::VisitorId;
use crate::store::{Store, StoreError};

/// What one look found and did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeepOutcome {
    /// The store's epoch changed since the last look: it lost its data.
    pub data_lost: bool,
    /// Declared rooms this look re-created.
    pub recreated: Vec<String>,
}

/// One look. `known_epoch` is this instance's memory of the store's epoch.
pub async fn keep_once(
    store: &dyn Store,
    declared: &[RoomConfig],
    known_epoch: &mut Option<String>,
) -> Result<KeepOutcome, StoreError> {
    let mut out = KeepOutcome::default();
    // A fresh candidate each time: if the key is gone, whoever writes next writes a value
    // nobody has seen, so every instance notices.
    let epoch = store.epoch(VisitorId::random().as_str()).await?;
    if known_epoch.as_ref().is_some_and(|k| *k != epoch) {
        out.data_lost = true;
    }
    *known_epoch = Some(epoch);
    let present = store.rooms().await?;
    for cfg in declared {
        if !present.contains(&cfg.id) && store.put_room(cfg, true).await? {
            out.recreated.push(cfg.id.clone());
        }
    }
    Ok(out)
}

/// Runs [`keep_once`] every `reaper.keeper_interval_ms` until cancelled, reporting what it finds.
/// `known` is the epoch seen at start-up, if any.
pub async fn run_keeper(engine: Arc<Engine>, mut known: Option<String>, cancel: CancellationToken) {
    // unwrap: never poisoned (no panics while held).
    *engine.known_epoch.lock().unwrap() = known.clone();
    let every = Duration::from_millis(engine.settings.reaper.keeper_interval_ms);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        match keep_once(engine.store.as_ref(), &engine.declared_rooms, &mut known).await {
            Ok(o) => {
                // unwrap: never poisoned (no panics while held).
                *engine.known_epoch.lock().unwrap() = known.clone();
                if o.data_lost {
                    tracing::error!(
                        "the store lost its data (its epoch changed): declared rooms are being re-created; places of visitors not yet back are gone unless they return"
                    );
                    engine.metrics.store_data_loss.inc();
                    engine.note_data_loss();
                }
                for room in &o.recreated {
                    tracing::error!(room, "a declared room was missing from the store; re-created it from the configuration");
                    engine
                        .metrics
                        .rooms_recreated
                        .with_label_values(&[room])
                        .inc();
                }
            }
            Err(e) => tracing::debug!(error = %e, "room keeper: store unavailable"),
        }
    }
}
