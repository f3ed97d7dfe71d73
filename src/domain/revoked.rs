//! The revoked passes this instance knows of, fed from the store's revocation log
//! ([`crate::store::revocation`]) every [`POLL_INTERVAL`], so a pass revoked on any
//! instance is refused by every gateway within about that long, while a request itself
//! never waits on the store. The same set tells the status path which sessions ended
//! elsewhere (released, removed, revoked, taken back as no-shows: each is written to the
//! log): an admitted visitor's status is answered by this instance only while the set was
//! read within [`FRESH`] and does not hold the session ([`crate::domain::line_view`]).
//!
//! Kept per (room, visitor): the highest revoked serial and when it stops mattering. A
//! pass is refused when its serial is at or below it (the visitor's older passes are
//! superseded sessions anyway); a later admission of the same visitor, with a higher
//! serial, gets in.
//!
//! A WebSocket (or other upgraded) tunnel opened with a pass lives past the request that
//! checked it, so it waits on [`RevokedSet::until_revoked`] beside its copying and is cut
//! when its pass is revoked: within [`POLL_INTERVAL`] of the revocation reaching the
//! log, well inside a second (before issue 28 a tunnel kept working after its pass was
//! revoked, for as long as it stayed open).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::store::{Revocation, RevocationStore, Store, StoreError};

/// How often the log is read. A read that finds nothing is one small script.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// How old the last successful read may be for the status path to trust the set (four
/// polls: a poll delayed by a busy instance still counts, a stalled poller does not).
pub const FRESH: Duration = Duration::from_millis(1_000);
/// Entries read per call; a longer backlog is read in several calls at once.
pub const POLL_BATCH: usize = 1000;
/// How often expired entries are dropped from memory.
const PRUNE_EVERY: u32 = 40;

/// The revoked passes, and whether the store answered the last read.
pub struct RevokedSet {
    /// (room, visitor) → (highest revoked serial, its pass's expiry in ms). A read-write
    /// lock: every guarded request reads it, writes come a few times a second at most.
    entries: RwLock<HashMap<(String, String), (u64, u64)>>,
    /// The last read of the log succeeded. A fail-open pass is accepted only while it
    /// did not (as `verify` does: such a pass is good only while the store is away).
    store_reachable: AtomicBool,
    /// Bumped on every insert, so open tunnels look again ([`Self::until_revoked`]): a
    /// watch, not a `Notify`, so an insert between a look and the wait is never missed.
    inserted: tokio::sync::watch::Sender<u64>,
    /// When the log was last read whole (no backlog left), for [`Self::read_within`].
    read_at: std::sync::Mutex<Option<Instant>>,
}

impl Default for RevokedSet {
    fn default() -> Self {
        Self {
            entries: RwLock::default(),
            store_reachable: AtomicBool::new(true),
            inserted: tokio::sync::watch::Sender::new(0),
            read_at: std::sync::Mutex::default(),
        }
    }
}

impl RevokedSet {
    pub fn insert(&self, r: &Revocation) {
        // unwrap: a poisoned lock means a panic mid-update; nothing here can panic.
        let mut m = self.entries.write().unwrap();
        let e = m
            .entry((r.room.clone(), r.visitor.clone()))
            .or_insert((r.serial, r.expires_at_ms));
        e.0 = e.0.max(r.serial);
        e.1 = e.1.max(r.expires_at_ms);
        drop(m);
        self.inserted.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Resolves once the pass `serial` of `visitor` in `room` is revoked (at once if it
    /// is); never otherwise. What an open tunnel waits on.
    pub async fn until_revoked(&self, room: &str, visitor: &str, serial: u64) {
        let mut inserted = self.inserted.subscribe();
        loop {
            // Subscribed before the look: an insert after it wakes the wait below.
            if self.is_revoked(room, visitor, serial) {
                return;
            }
            if inserted.changed().await.is_err() {
                return std::future::pending().await; // unreachable: `self` holds the sender
            }
        }
    }

    /// Whether the pass `serial` of `visitor` in `room` was revoked.
    pub fn is_revoked(&self, room: &str, visitor: &str, serial: u64) -> bool {
        // unwrap: see insert.
        let m = self.entries.read().unwrap();
        m.get(&(room.to_string(), visitor.to_string()))
            .is_some_and(|(s, _)| serial <= *s)
    }

    /// Drops entries whose passes have expired (their `exp` refuses them now).
    pub fn prune(&self, now_ms: u64) {
        // unwrap: see insert.
        self.entries
            .write()
            .unwrap()
            .retain(|_, (_, exp)| *exp > now_ms);
    }

    pub fn len(&self) -> usize {
        // unwrap: see insert.
        self.entries.read().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn store_reachable(&self) -> bool {
        self.store_reachable.load(Ordering::Relaxed)
    }

    /// Whether the whole log was read at most `within` before `now`: every revocation
    /// written before that read is in the set.
    pub fn read_within(&self, now: Instant, within: Duration) -> bool {
        // unwrap: never poisoned (no panics while held).
        let at = *self.read_at.lock().unwrap();
        at.is_some_and(|at| now.saturating_duration_since(at) <= within)
    }

    /// Notes a read that reached the end of the log at `at`.
    pub fn note_read(&self, at: Instant) {
        // unwrap: see read_within.
        *self.read_at.lock().unwrap() = Some(at);
    }
}

/// What one read did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PollOutcome {
    /// Revocations read.
    pub read: usize,
    /// The log holds more past the new cursor.
    pub more: bool,
}

/// Reads the log once from `cursor` into `set`, moving `cursor` on.
pub async fn poll_once(
    store: &dyn RevocationStore,
    set: &RevokedSet,
    cursor: &mut u64,
) -> Result<PollOutcome, StoreError> {
    // Taken before the read: whatever was logged before this instant is in the page.
    let asked_at = Instant::now();
    let page = store.revocations_since(*cursor, POLL_BATCH).await;
    set.store_reachable.store(page.is_ok(), Ordering::Relaxed);
    let page = page?;
    for r in &page.entries {
        set.insert(r);
    }
    *cursor = page.cursor;
    if !page.more {
        set.note_read(asked_at);
    }
    Ok(PollOutcome {
        read: page.entries.len(),
        more: page.more,
    })
}

/// Reads the log every [`POLL_INTERVAL`] (at once again while a backlog remains) until
/// cancelled, pruning expired entries now and then.
pub async fn run_poller(
    store: std::sync::Arc<dyn Store>,
    set: std::sync::Arc<RevokedSet>,
    cancel: CancellationToken,
) {
    let mut cursor = 0;
    let mut tick = tokio::time::interval(POLL_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks = 0u32;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        loop {
            match poll_once(store.as_ref(), &set, &mut cursor).await {
                Ok(PollOutcome { more: true, .. }) => continue,
                Ok(_) => break,
                Err(e) => {
                    tracing::debug!(error = %e, "gateway: revocation log unreadable; retrying");
                    break;
                }
            }
        }
        ticks = ticks.wrapping_add(1);
        if ticks.is_multiple_of(PRUNE_EVERY) {
            set.prune(crate::clock::wall_ms());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;
    use crate::store::RevocationStore;

    fn rev(visitor: &str, serial: u64, exp: u64) -> Revocation {
        Revocation {
            room: "sale".into(),
            visitor: visitor.into(),
            serial,
            expires_at_ms: exp,
        }
    }

    #[test]
    fn a_revoked_serial_refuses_itself_and_older_passes_only() {
        let s = RevokedSet::default();
        s.insert(&rev("v", 5, 1_000));
        assert!(s.is_revoked("sale", "v", 5));
        assert!(s.is_revoked("sale", "v", 3));
        assert!(!s.is_revoked("sale", "v", 6), "a later admission gets in");
        assert!(!s.is_revoked("other", "v", 5));
        assert!(!s.is_revoked("sale", "w", 5));
        s.prune(999);
        assert_eq!(s.len(), 1);
        s.prune(1_000);
        assert!(s.is_empty());
    }

    #[tokio::test]
    async fn a_tunnel_waits_until_its_own_pass_is_revoked() {
        let s = std::sync::Arc::new(RevokedSet::default());
        let waiting = {
            let s = s.clone();
            tokio::spawn(async move { s.until_revoked("sale", "v", 4).await })
        };
        s.insert(&rev("w", 9, 1_000)); // someone else's
        s.insert(&rev("v", 3, 1_000)); // an older pass of the same visitor
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        s.insert(&rev("v", 4, 1_000));
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("woken by the revocation")
            .unwrap();
        // Already revoked: at once.
        s.until_revoked("sale", "v", 2).await;
    }

    #[tokio::test]
    async fn the_poller_reads_each_revocation_once_and_follows_the_cursor() {
        let store = MemoryStore::new();
        let set = RevokedSet::default();
        let far = crate::clock::wall_ms() + 60_000;
        let mut cursor = 0;
        assert_eq!(poll_once(&store, &set, &mut cursor).await.unwrap().read, 0);
        store.revoke(&rev("a", 1, far)).await.unwrap();
        store.revoke(&rev("b", 2, far)).await.unwrap();
        assert_eq!(poll_once(&store, &set, &mut cursor).await.unwrap().read, 2);
        assert_eq!(poll_once(&store, &set, &mut cursor).await.unwrap().read, 0);
        store.revoke(&rev("c", 3, far)).await.unwrap();
        assert_eq!(poll_once(&store, &set, &mut cursor).await.unwrap().read, 1);
        assert!(set.is_revoked("sale", "a", 1) && set.is_revoked("sale", "c", 3));
        assert!(set.store_reachable());
    }

    #[tokio::test]
    async fn the_set_counts_as_read_only_after_a_whole_read_and_for_so_long() {
        let store = MemoryStore::new();
        let set = RevokedSet::default();
        let t0 = Instant::now();
        assert!(!set.read_within(t0, FRESH), "never read");
        let far = crate::clock::wall_ms() + 60_000;
        for i in 0..=POLL_BATCH as u64 {
            store.revoke(&rev(&format!("v{i}"), 1, far)).await.unwrap();
        }
        let mut cursor = 0;
        // A page with more behind it is not a whole read.
        assert!(poll_once(&store, &set, &mut cursor).await.unwrap().more);
        assert!(!set.read_within(Instant::now(), FRESH));
        assert!(!poll_once(&store, &set, &mut cursor).await.unwrap().more);
        let now = Instant::now();
        assert!(set.read_within(now, FRESH));
        assert!(!set.read_within(now + FRESH + Duration::from_millis(1), FRESH));
    }
}
