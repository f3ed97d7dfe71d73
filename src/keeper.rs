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
//!    `anteroom_rooms_recreated_total`. A room re-created by an instance that had seen
//!    the store before holds its admissions and new places for `store.restore_hold_ms`
//!    (`Store::recreate_room`; joins that need a new place get `503 store_restoring`);
//! 3. lists each declared room's live sessions (`Store::sessions`, at most
//!    [`SESSIONS_KEPT`] a room) into [`KnownSessions`](crate::domain::known_sessions),
//!    and after a loss puts every known session back (`restore_session`), so admitted
//!    visitors count against capacity again before the hold ends, whether or not they
//!    come back meanwhile and whichever instance let them in. The hubs put their
//!    sockets' places back on their next tick, and receipts bring polling visitors'
//!    places back. Joins and admissions wait for the hold, so nobody gets ahead of a
//!    restored place and nobody is let in over a restored session.
//!
//! The interval is `reaper.keeper_interval_ms` (1 s by default).
//!
//! `/readyz` answers 503 while a declared room is missing, and the hub keeps the
//! sockets of a declared room open through the gap instead of telling them "closed".

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::domain::admission::Engine;
use crate::domain::identity::VisitorId;
use crate::room::RoomConfig;
use crate::store::{RecoveryStore, RoomStore, StoreError};

/// What one look found and did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeepOutcome {
    /// The store's epoch changed since the last look: it lost its data.
    pub data_lost: bool,
    /// Declared rooms this look re-created.
    pub recreated: Vec<String>,
}

/// One look. `known_epoch` is this instance's memory of the store's epoch. A room
/// re-created after this instance had seen the store is held for `hold_ms`; at start-up
/// (nothing seen yet) rooms are seeded without a hold.
pub async fn keep_once<S: RoomStore + RecoveryStore + ?Sized>(
    store: &S,
    declared: &[RoomConfig],
    known_epoch: &mut Option<String>,
    hold_ms: u64,
) -> Result<KeepOutcome, StoreError> {
    let mut out = KeepOutcome::default();
    let hold_ms = if known_epoch.is_some() { hold_ms } else { 0 };
    // A fresh candidate each time: if the key is gone, whoever writes next writes a value
    // nobody has seen, so every instance notices.
    let epoch = store.epoch(VisitorId::random().as_str()).await?;
    if known_epoch.as_ref().is_some_and(|k| *k != epoch) {
        out.data_lost = true;
    }
    *known_epoch = Some(epoch);
    let present = store.rooms().await?;
    for cfg in declared {
        if !present.contains(&cfg.id) && store.recreate_room(cfg, hold_ms).await? {
            out.recreated.push(cfg.id.clone());
        }
    }
    Ok(out)
}

/// Runs [`keep_once`] every `reaper.keeper_interval_ms` until cancelled, reporting what it finds.
/// `known` is the epoch seen at start-up, if any.
pub async fn run_keeper(engine: Arc<Engine>, mut known: Option<String>, cancel: CancellationToken) {
    // unwrap: never poisoned (no panics while held).
    *engine.known_epoch().lock().unwrap() = known.clone();
    let every = Duration::from_millis(engine.settings().reaper.keeper_interval_ms);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failovers = engine.recovery_store().failovers();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        if engine.recovery_store().failovers() > failovers {
            failovers = engine.recovery_store().failovers();
            after_failover(&engine).await;
        }
        let hold_ms = engine.settings().store.restore_hold_ms;
        match keep_once(
            engine.shared_store().as_ref(),
            engine.declared_rooms(),
            &mut known,
            hold_ms,
        )
        .await
        {
            Ok(o) => {
                // unwrap: never poisoned (no panics while held).
                *engine.known_epoch().lock().unwrap() = known.clone();
                if o.data_lost {
                    tracing::error!(
                        "the store lost its data (its epoch changed): declared rooms are being re-created; places of visitors not yet back are gone unless they return"
                    );
                    engine.metrics().store_data_loss.inc();
                    engine.note_data_loss();
                    let n = restore_known_sessions(&engine).await;
                    let ended = reapply_ends(&engine).await;
                    tracing::error!(
                        sessions = n,
                        ended,
                        "put back the live sessions this instance knew of, and wrote again the ends it knew of"
                    );
                } else {
                    list_sessions(&engine, &known).await;
                }
                for room in &o.recreated {
                    tracing::error!(room, "a declared room was missing from the store; re-created it from the configuration");
                    engine
                        .metrics()
                        .rooms_recreated
                        .with_label_values(&[room])
                        .inc();
                }
            }
            Err(e) => tracing::debug!(error = %e, "room keeper: store unavailable"),
        }
    }
}

/// The store failed over (Redis Sentinel): replication is asynchronous, so the writes the
/// old master had not passed on may be lost. Treated as a loss of those: noted (the hubs
/// put their sockets' places back, receipts signed before now restore), and every known
/// session is put back (idempotent for those the new master has).
async fn after_failover(engine: &Engine) {
    engine.metrics().store_failovers.inc();
    engine.note_data_loss();
    let n = restore_known_sessions(engine).await;
    let ended = reapply_ends(engine).await;
    tracing::error!(
        sessions = n,
        ended,
        "the store failed over: writes of its last moments may be lost; places come back from sockets and receipts, and the live sessions this instance knew of were put back"
    );
}

/// Looks at each declared room's live sessions (a full listing now and then, what
/// changed in between: see [`KnownSessions`](crate::domain::known_sessions)). What was
/// read across a loss (the epoch moved meanwhile) is dropped: it could be the emptied
/// store's.
pub async fn list_sessions(engine: &Engine, known: &Option<String>) {
    use crate::domain::known_sessions::{Look, PAGE};
    use crate::store::SessionsQuery;
    enum Read {
        Full(
            Vec<(String, crate::store::Admission)>,
            u64,
            crate::store::SessionsPage,
        ),
        Changes(crate::store::SessionsPage),
    }
    let began = crate::clock::wall_ms();
    let mut reads = Vec::new();
    for cfg in engine.declared_rooms() {
        let read = match engine.known_sessions().next_look(&cfg.id, began) {
            Look::Full => {
                // Pages by expiry: each starts at the last expiry of the one before (so a
                // session at the boundary may come twice; the map keeps one).
                // The first page also brings the releases since the last look (all that
                // the store remembers at the first look) and the last flush, for the
                // ledger of what ended.
                let mut gone_after =
                    Some(engine.known_sessions().gone_cursor(&cfg.id).unwrap_or(0));
                let (mut all, mut from, mut first) = (Vec::new(), 0, None);
                loop {
                    let q = SessionsQuery {
                        expires_from: from,
                        gone_after: gone_after.take(),
                        limit: PAGE,
                    };
                    let Ok(mut page) = engine.recovery_store().sessions(&cfg.id, &q).await else {
                        return;
                    };
                    let n = page.sessions.len();
                    let last = page.sessions.last().map(|(_, a)| a.expires_at_ms);
                    all.append(&mut page.sessions);
                    first.get_or_insert(page);
                    match last {
                        Some(l) if n as u32 == PAGE && l > from => from = l,
                        _ => break,
                    }
                }
                let first = first.unwrap_or_default();
                Read::Full(all, first.now_ms, first)
            }
            Look::Changes {
                expires_from,
                gone_after,
            } => {
                let q = SessionsQuery {
                    expires_from,
                    gone_after: Some(gone_after),
                    limit: PAGE,
                };
                match engine.recovery_store().sessions(&cfg.id, &q).await {
                    Ok(page) => Read::Changes(page),
                    Err(_) => return,
                }
            }
        };
        reads.push((cfg.id.clone(), read));
    }
    match engine
        .recovery_store()
        .epoch(VisitorId::random().as_str())
        .await
    {
        Ok(e) if known.as_ref() == Some(&e) => {}
        _ => return,
    }
    for (room, read) in reads {
        match read {
            Read::Full(all, store_now, first) => {
                note_ends(engine, &room, &first);
                engine.known_sessions().listed(&room, all, store_now, began)
            }
            Read::Changes(page) => {
                note_ends(engine, &room, &page);
                engine.known_sessions().changed(&room, page, began)
            }
        }
    }
    engine.ended().sweep(crate::clock::wall_ms());
}

/// Writes what a look read of what ended (releases, the last flush) into the instance's
/// ledger ([`crate::domain::ended`]), before the picture of live sessions forgets the
/// sessions released.
fn note_ends(engine: &Engine, room: &str, page: &crate::store::SessionsPage) {
    let keep = engine.end_keep_ms(room);
    // The first look covers what the store remembers: the last minute of releases.
    engine
        .ended()
        .cover_from(page.now_ms.saturating_sub(crate::store::GONE_KEEP_MS));
    for (visitor, at) in &page.gone {
        let known = engine.known_sessions().session(room, visitor);
        let until = known
            .as_ref()
            .map_or(0, |a| a.expires_at_ms)
            .max(page.now_ms + keep);
        engine.ended().released(room, visitor, *at, until);
        // The session it ended, by serial when known (exact, whatever the issue second).
        if let Some(a) = known.filter(|a| a.issued_at_ms <= *at) {
            engine.ended().session_ended(room, visitor, &a);
        }
    }
    if let Some(at) = page.flushed_at_ms {
        engine.ended().flushed(room, at);
    }
}

/// After a loss or a failover: every session this instance ended whose passes are still
/// good is written to the store's revocation log again (so gateways that start afresh,
/// reading the new log, refuse them too), and ended again where the store has it live (a
/// replica that missed the release). Returns how many were written.
pub async fn reapply_ends(engine: &Engine) -> usize {
    use crate::store::Revocation;
    let mut n = 0;
    for (room, visitor, serial, exp) in engine.ended().ended_sessions(crate::clock::wall_ms()) {
        if let Ok(true) = engine
            .admission_store()
            .session_live(&room, &visitor, serial)
            .await
        {
            if let Err(e) = engine
                .admission_store()
                .release_ended(&room, &visitor)
                .await
            {
                tracing::warn!(room, error = %e, "could not end again a session that ended before the fault");
            }
        }
        let r = Revocation {
            room: room.clone(),
            visitor,
            serial,
            expires_at_ms: exp,
        };
        match engine.revocation_store().revoke(&r).await {
            Ok(()) => n += 1,
            Err(e) => {
                tracing::warn!(room, error = %e, "could not write an ended session to the revocation log again")
            }
        }
    }
    n
}

/// Puts back every live session this instance knew of (after the store lost its data);
/// returns how many it put back. Each is counted in `anteroom_sessions_restored_total`.
/// One whose visitor holds another session or a place in line now, or released since
/// the loss, is left alone (`restore_session`).
pub async fn restore_known_sessions(engine: &Engine) -> usize {
    let mut live = 0;
    for (room, visitor, a) in engine.known_sessions().unexpired(crate::clock::wall_ms()) {
        // Ended since the last look (here, or read from the store): it stays ended.
        if engine
            .ended()
            .session_is_ended(&room, &visitor, a.serial, a.issued_at_ms)
        {
            continue;
        }
        // Live already (a failover that kept it): nothing to put back, nothing counted.
        if let Ok(true) = engine
            .admission_store()
            .session_live(&room, &visitor, a.serial)
            .await
        {
            continue;
        }
        match engine
            .recovery_store()
            .restore_session(&room, &visitor, &a)
            .await
        {
            Ok(true) => {
                live += 1;
                engine
                    .metrics()
                    .sessions_restored
                    .with_label_values(&[&room])
                    .inc();
            }
            Ok(false) | Err(StoreError::NoSuchRoom) => {}
            Err(e) => tracing::warn!(room, error = %e, "could not put a session back"),
        }
    }
    live
}
