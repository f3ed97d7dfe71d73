//! Launch-day drops: the pre-queue's shuffle at `opens_at`, exactly once across
//! instances, in an order anyone can check (docs/design.md#the-pre-queue-shuffle).
//!
//! When a room's pre-queue opens, the room draws a 32-byte seed (the first join into the
//! pre-queue keeps its candidate, or this task draws one: [`Store::event_seed`] is
//! set-if-absent, so every instance agrees) and publishes only its SHA-256, the
//! commitment. At `opens_at` one instance, holding the room's `<room>/shuffle` lease,
//! lists the pre-queue, sorts it ascending by the lowercase hex of
//! `HMAC-SHA256(key = seed bytes, message = visitor id)` ([`fairness_digest`]) and puts
//! it in line in that order through [`Store::shuffle_step`], in chunks of
//! [`SHUFFLE_CHUNK`] (each an atomic, idempotent script: a holder that dies half-way is
//! replaced when its lease runs out, and the next one places only who is left). The
//! last step marks the room shuffled; from then on the seed is revealed, so anyone can
//! recompute the order. A visitor's rank depends only on the seed and their id: joining
//! early or reloading changes nothing.
//!
//! [`shuffle_once`] is the one-pass function tests call; [`run_drops`] the loop.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::domain::admission::Engine;
use crate::store::{fairness_digest, new_seed, FairnessStore, LeaseStore, ShuffleStep, StoreError};

/// Visitors placed per script call: a 10,000-visitor pre-queue is 20 calls, none of
/// which blocks Redis for long.
pub const SHUFFLE_CHUNK: usize = 500;
/// Visitors read per page while listing the pre-queue.
const LIST_PAGE: u32 = 5_000;
/// How often the loop looks at the rooms' times: the shuffle starts within this of the
/// opening.
pub const DROP_TICK: Duration = Duration::from_millis(200);
/// The loop looks this long before a time by the wall clock (the store's clock decides:
/// a look that comes early is answered "not due" and repeated at the next tick).
const EARLY_MS: u64 = 1_000;

/// The lease that makes one instance the shuffler of a room.
pub fn lease_name(room: &str) -> String {
    format!("{room}/shuffle")
}

/// What [`shuffle_once`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShuffleOutcome {
    /// The room has no pre-queue, or its opening has not come (store clock).
    NotDue,
    /// Another instance holds the shuffle lease.
    Busy,
    /// Shuffled before (by this or another instance).
    AlreadyDone,
    /// This call shuffled the pre-queue: `placed` visitors put in line, in this order.
    Shuffled { placed: u64, order: Vec<String> },
}

/// The pre-queue `visitors` in the published order: ascending by
/// [`fairness_digest`]`(seed, visitor)`.
pub fn published_order(seed: &str, visitors: Vec<String>) -> Vec<String> {
    let mut keyed: Vec<(String, String)> = visitors
        .into_iter()
        .map(|v| (fairness_digest(seed, &v), v))
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, v)| v).collect()
}

/// Every visitor of the room's pre-queue, read in pages.
pub async fn list_prequeue<S: FairnessStore + ?Sized>(
    store: &S,
    room: &str,
) -> Result<Vec<String>, StoreError> {
    let mut all = Vec::new();
    loop {
        let page = store
            .prequeue_page(room, all.len() as u64, LIST_PAGE)
            .await?;
        let n = page.len();
        all.extend(page);
        if n < LIST_PAGE as usize {
            return Ok(all);
        }
    }
}

/// Shuffles the room's pre-queue if its opening has come and nobody has yet, holding the
/// room's shuffle lease (`lease_ms`) as `holder`.
pub async fn shuffle_once<S: FairnessStore + LeaseStore + ?Sized>(
    store: &S,
    room: &str,
    holder: &str,
    lease_ms: u64,
) -> Result<ShuffleOutcome, StoreError> {
    let f = store.fairness(room).await?;
    if f.shuffled {
        return Ok(ShuffleOutcome::AlreadyDone);
    }
    let due = f.prequeue_opens_at_ms.is_some() && f.opens_at_ms.is_some_and(|o| f.now_ms >= o);
    if !due {
        return Ok(ShuffleOutcome::NotDue);
    }
    if !store
        .acquire_lease(&lease_name(room), holder, lease_ms)
        .await?
    {
        return Ok(ShuffleOutcome::Busy);
    }
    let out = shuffle_holding(store, room, holder, lease_ms).await;
    let _ = store.release_lease(&lease_name(room), holder).await;
    out
}

/// The shuffle, the lease held. The lease is renewed before each step: a pre-queue so
/// long that its steps outlast the lease never has two instances placing it at once.
async fn shuffle_holding<S: FairnessStore + LeaseStore + ?Sized>(
    store: &S,
    room: &str,
    holder: &str,
    lease_ms: u64,
) -> Result<ShuffleOutcome, StoreError> {
    // Drawn here only if nobody joined the pre-queue (then nobody's rank depends on it).
    let seed = store.event_seed(room, &new_seed()).await?;
    let order = published_order(&seed, list_prequeue(store, room).await?);
    let chunks: Vec<&[String]> = if order.is_empty() {
        vec![&[]]
    } else {
        order.chunks(SHUFFLE_CHUNK).collect()
    };
    let mut placed = 0;
    let mut rank = 0;
    for (i, chunk) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        if i > 0
            && !store
                .acquire_lease(&lease_name(room), holder, lease_ms)
                .await?
        {
            return Ok(ShuffleOutcome::Busy);
        }
        match store.shuffle_step(room, &seed, rank, chunk, last).await? {
            ShuffleStep::Placed(n) => placed += n,
            ShuffleStep::AlreadyDone => return Ok(ShuffleOutcome::AlreadyDone),
            ShuffleStep::NotDue => return Ok(ShuffleOutcome::NotDue),
            ShuffleStep::WrongSeed => {
                return Err(StoreError::Protocol(
                    "the event seed changed mid-shuffle".into(),
                ))
            }
        }
        rank += chunk.len() as u64;
    }
    Ok(ShuffleOutcome::Shuffled { placed, order })
}

/// The loop: every [`DROP_TICK`], for each room with a pre-queue, draws its seed once the
/// pre-queue is open and shuffles it once the opening has come. Times are read from the
/// cached configuration; the store's clock decides.
pub async fn run_drops(
    engine: Arc<Engine>,
    holder: String,
    lease_ms: u64,
    cancel: CancellationToken,
) {
    let store = engine.shared_store();
    // Events (room, pre-queue opening, opening) seeded / shuffled, looked at no more.
    let mut seeded: HashSet<(String, u64, u64)> = HashSet::new();
    let mut done: HashSet<(String, u64, u64)> = HashSet::new();
    let mut tick = tokio::time::interval(DROP_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        let Ok(rooms) = store.rooms().await else {
            continue;
        };
        for room in rooms {
            let Ok(cfg) = engine.room_config_cached(&room).await else {
                continue;
            };
            let (Some(pq), Some(open)) = (cfg.prequeue_opens_at, cfg.opens_at) else {
                continue;
            };
            let key = (room.clone(), pq, open);
            let now = crate::clock::wall_ms() + EARLY_MS;
            if done.contains(&key) || now < pq {
                continue;
            }
            if !seeded.contains(&key) && store.event_seed(&room, &new_seed()).await.is_ok() {
                seeded.insert(key.clone());
            }
            if now < open {
                continue;
            }
            match shuffle_once(store.as_ref(), &room, &holder, lease_ms).await {
                Ok(ShuffleOutcome::Shuffled { placed, .. }) => {
                    tracing::info!(room, placed, "pre-queue shuffled");
                    done.insert(key);
                }
                Ok(ShuffleOutcome::AlreadyDone) => {
                    done.insert(key);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(room, error = %e, "shuffle failed; retrying"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_ascending_by_digest() {
        let seed = "00".repeat(32);
        let vs: Vec<String> = (0..20).map(|i| format!("{i:032x}")).collect();
        let order = published_order(&seed, vs.clone());
        let digests: Vec<String> = order.iter().map(|v| fairness_digest(&seed, v)).collect();
        let mut sorted = digests.clone();
        sorted.sort();
        assert_eq!(digests, sorted);
        assert_eq!(order.len(), vs.len());
    }
}
