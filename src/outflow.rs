//! The adaptive outflow task (docs/outflow.md), one per instance: every room's interval
//! (`[rooms.outflow] interval_secs`), this instance writes what its gateway measured of
//! the origin for the room over its last two intervals ([`OriginMeter::take`]) to the
//! store ([`OutflowStore`]); for a room in `adaptive`
//! mode, the one instance holding the room's `outflow` lease (as the reaper and the
//! shuffle hold theirs) then merges every instance's report and the health reports,
//! decides ([`crate::domain::outflow::decide`]) and applies the new capacity through the
//! admin service, so the change is audited (who: `outflow`), versioned and promotes at
//! once. Each decision is kept in the store for the dashboard's chart and `/metrics`.
//!
//! A one-pass function ([`outflow_once`], tests call it with their own `now_ms`) and a
//! loop that looks every [`TICK`] and stops on a cancellation token. The same loop takes
//! back the slots of no-shows every second ([`crate::domain::noshow::reclaim_once`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::domain::admission::Engine;
use crate::domain::outflow::{decide, Decision, Load, OriginMeter, Point, Report, Signals};
use crate::store::outflow::OutflowStore;
use crate::store::{RoomPatch, StoreError};

/// How often the task looks whether a room's interval ended.
pub const TICK: Duration = Duration::from_millis(250);
/// Who the audit log names for the controller's changes.
pub const WHO: &str = "outflow";
/// The source name of health reports (`POST /api/rooms/{room}/health`).
pub const HEALTH_SOURCE: &str = "health";

/// The lease name of a room's controller.
pub fn lease_name(room: &str) -> String {
    format!("{room}/outflow")
}

/// How long a report counts: two intervals, so the controller always has the last one
/// of each source even when its own interval is out of step with the reporter's.
pub fn report_ttl_ms(interval_secs: u64) -> u64 {
    interval_secs * 2000
}

/// What one pass did.
#[derive(Debug, Default)]
pub struct OutflowOutcome {
    /// Rooms whose interval ended and whose report this instance wrote (it had answers).
    pub reported: Vec<String>,
    /// Rooms it decided for: (room, capacity before, decision, the signals).
    pub decided: Vec<(String, u64, Decision, Signals)>,
    /// Adaptive rooms whose lease another instance holds.
    pub skipped: Vec<String>,
    /// Rooms that failed, with the error; the pass goes on with the others.
    pub failed: Vec<(String, String)>,
}

/// One look at every room at `now_ms` (this instance's clock); `due` holds when each
/// room's current interval ends, and is updated.
pub async fn outflow_once(
    engine: &Engine,
    meter: &OriginMeter,
    holder: &str,
    now_ms: u64,
    due: &mut HashMap<String, u64>,
) -> Result<OutflowOutcome, StoreError> {
    let mut out = OutflowOutcome::default();
    let rooms = engine.room_store().rooms().await?;
    due.retain(|r, _| rooms.contains(r));
    for room in rooms {
        let Ok(cfg) = engine.room_config_cached(&room).await else {
            continue; // deleted meanwhile, or the store failing: next tick
        };
        let interval_ms = cfg.outflow.interval_secs.max(1) * 1000;
        match due.get(&room) {
            Some(&at) if at > now_ms => continue,
            // First sight: start the room's interval now (nothing was measured for it).
            None => {
                due.insert(room.clone(), now_ms + interval_ms);
                meter.reset(&room);
                continue;
            }
            Some(_) => {}
        }
        due.insert(room.clone(), now_ms + interval_ms);
        if let Err(e) = room_once(engine, meter, holder, &room, &cfg, &mut out).await {
            out.failed.push((room, e.to_string()));
        }
    }
    Ok(out)
}

/// The end of one room's interval: report, then decide if adaptive and the lease is ours.
async fn room_once(
    engine: &Engine,
    meter: &OriginMeter,
    holder: &str,
    room: &str,
    cfg: &crate::room::RoomConfig,
    out: &mut OutflowOutcome,
) -> Result<(), StoreError> {
    let shared = engine.shared_store();
    let store = shared.as_ref();
    let ttl = report_ttl_ms(cfg.outflow.interval_secs);
    let report = meter.take(room);
    if report.answers > 0 {
        // unwrap: a struct of numbers always serialises.
        let json = serde_json::to_string(&report).expect("a report serialises");
        store.put_origin_report(room, holder, &json, ttl).await?;
        out.reported.push(room.to_string());
    }
    if !cfg.outflow.adaptive() {
        return Ok(());
    }
    // Three intervals: a holder that stops is replaced within that.
    let lease_ms = cfg.outflow.interval_secs * 3000;
    if !store
        .acquire_lease(&lease_name(room), holder, lease_ms)
        .await?
    {
        // Another instance decides; this one learns from its last decision whether the
        // origin is why the capacity fell (its visitors' `eta_reason`).
        if let Some(last) = points(store, room, 1).await.pop() {
            if last.decision == "lower" && last.at_ms + lease_ms > crate::clock::wall_ms() {
                engine.forecasts().note_origin_busy(room, last.at_ms).await;
            }
        }
        out.skipped.push(room.to_string());
        return Ok(());
    }
    let reports: Vec<Report> = store
        .origin_reports(room)
        .await?
        .iter()
        .filter_map(|r| serde_json::from_str(r).ok())
        .collect();
    let signals = Signals::merge(&reports);
    let stats = store.stats(room).await?;
    let history = points(store, room, crate::store::outflow::CHART_POINTS).await;
    let load = Load {
        capacity: stats.capacity,
        live: stats.active,
        waiting: stats.queue_length,
        ..Load::recall(&cfg.outflow, &history)
    };
    let decision = decide(&cfg.outflow, load, &signals);
    let after = decision.capacity(load.capacity);
    if after != load.capacity {
        let patch = RoomPatch {
            capacity: Some(after),
            ..RoomPatch::default()
        };
        // Noted first: a forecast refreshed between the write and the note would say
        // `capacity_lowered`.
        if matches!(decision, Decision::Lower { .. }) {
            engine
                .forecasts()
                .note_origin_busy(room, crate::clock::wall_ms())
                .await;
        }
        crate::domain::admin::put_room(engine, WHO, room, &patch, None)
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    }
    let point = Point {
        at_ms: crate::clock::wall_ms(),
        capacity: after,
        p95_ms: signals.p95_ms.map(|p| (p * 10.0).round() / 10.0),
        error_rate: signals
            .error_rate
            .map(|e| (e * 10_000.0).round() / 10_000.0),
        decision: decision.label().to_string(),
        live: load.live,
        waiting: load.waiting,
    };
    // unwrap: a struct of numbers and a word always serialises.
    let json = serde_json::to_string(&point).expect("a point serialises");
    store.push_outflow_point(room, &json).await?;
    engine
        .metrics()
        .outflow_decisions
        .with_label_values(&[room, decision.label()])
        .inc();
    tracing::info!(
        room,
        before = load.capacity,
        after,
        decision = decision.label(),
        p95_ms = ?signals.p95_ms,
        error_rate = ?signals.error_rate,
        answers = signals.answers,
        "outflow decision"
    );
    out.decided
        .push((room.to_string(), load.capacity, decision, signals));
    Ok(())
}

/// Runs [`outflow_once`] every [`TICK`] until cancelled, then gives up its leases.
pub async fn run_outflow(engine: Arc<Engine>, meter: Arc<OriginMeter>, cancel: CancellationToken) {
    let holder = engine.instance().clone();
    let mut due = HashMap::new();
    let mut reclaim_at = 0;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        let now = crate::clock::wall_ms();
        if now >= reclaim_at {
            reclaim_at = now + crate::domain::noshow::RECLAIM_EVERY_MS;
            match crate::domain::noshow::reclaim_once(&engine).await {
                Ok(o) => {
                    for (room, e) in &o.failed {
                        engine
                            .metrics()
                            .store_errors
                            .with_label_values(&["noshow"])
                            .inc();
                        tracing::warn!(room, error = %e, "no-shows: a room failed; the others went on");
                    }
                }
                Err(e) => tracing::debug!(error = %e, "no-show pass failed"),
            }
        }
        match outflow_once(&engine, &meter, &holder, now, &mut due).await {
            Ok(o) => {
                for (room, e) in &o.failed {
                    engine
                        .metrics()
                        .store_errors
                        .with_label_values(&["outflow"])
                        .inc();
                    tracing::warn!(room, error = %e, "outflow: a room failed; the others went on");
                }
            }
            Err(e) => {
                engine
                    .metrics()
                    .store_errors
                    .with_label_values(&["outflow"])
                    .inc();
                tracing::debug!(error = %e, "outflow pass failed");
            }
        }
    }
    for room in due.keys() {
        let _ = engine
            .lease_store()
            .release_lease(&lease_name(room), &holder)
            .await;
    }
}

/// A room's last `n` decisions, oldest first (the dashboard's chart).
pub async fn points(store: &dyn OutflowStore, room: &str, n: u64) -> Vec<Point> {
    let mut v: Vec<Point> = store
        .outflow_points(room, n)
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|p| serde_json::from_str(p).ok())
        .collect();
    v.reverse();
    v
}
