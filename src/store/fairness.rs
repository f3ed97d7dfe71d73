//! A room's fairness record (what `GET /api/rooms/{room}/fairness` publishes), the event
//! seed and its commitment, and the steps of a pre-queue shuffle
//! (docs/design.md#the-pre-queue-shuffle).

use async_trait::async_trait;

use super::StoreResult;

/// A room's fairness record ([`Store::fairness`](super::Store::fairness)): what `GET
/// /api/rooms/{room}/fairness` publishes (docs/design.md#the-pre-queue-shuffle).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fairness {
    pub mode: crate::room::QueueMode,
    pub prequeue_opens_at_ms: Option<u64>,
    pub opens_at_ms: Option<u64>,
    pub closes_at_ms: Option<u64>,
    /// Lowercase hex SHA-256 of the seed's 32 bytes, once the seed is drawn.
    pub commitment: Option<String>,
    /// The seed (64 lowercase hex), once revealed: after the shuffle, or in `random`
    /// mode after the room closed or its event ended.
    pub seed: Option<String>,
    /// Visitors in the pre-queue, or put in line by the shuffle when it is done.
    pub prequeue_count: u64,
    /// The pre-queue has been put in line.
    pub shuffled: bool,
    /// Shuffles run in this room (exactly one per event; tests count them).
    pub shuffles: u64,
    /// The store's clock.
    pub now_ms: u64,
}

impl Fairness {
    /// The record from what a store read: `times` = (prequeue_opens_at, opens_at,
    /// closes_at) in ms, `seed` as stored (`""`: not drawn yet; hidden here unless
    /// [`seed_revealed`]), `closed` = (the room is closed, its event ended).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        mode: crate::room::QueueMode,
        times: [Option<u64>; 3],
        seed: String,
        shuffled: bool,
        prequeue_count: u64,
        shuffles: u64,
        now_ms: u64,
        closed: (bool, bool),
    ) -> Self {
        let drawn = !seed.is_empty();
        let revealed = drawn && seed_revealed(mode, shuffled, closed.0, closed.1);
        Fairness {
            mode,
            prequeue_opens_at_ms: times[0],
            opens_at_ms: times[1],
            closes_at_ms: times[2],
            commitment: drawn.then(|| commitment_of(&seed)),
            seed: revealed.then_some(seed),
            prequeue_count,
            shuffled,
            shuffles,
            now_ms,
        }
    }
}

/// A fresh 32-byte event seed, as 64 lowercase hex.
pub fn new_seed() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut b);
    crate::hex::lower(&b)
}

/// Lowercase hex of SHA-256 over the bytes `seed_hex` stands for (the commitment).
pub fn commitment_of(seed_hex: &str) -> String {
    use sha2::{Digest, Sha256};
    let bytes = crate::hex::bytes(seed_hex);
    crate::hex::lower(&Sha256::digest(bytes))
}

/// Whether the seed may be shown now: after the shuffle (the pre-queue's order is
/// fixed), except in `random` mode, whose later draws it decides: then only once the
/// room is closed or its event ended.
pub fn seed_revealed(
    mode: crate::room::QueueMode,
    shuffled: bool,
    closed: bool,
    ended: bool,
) -> bool {
    if mode == crate::room::QueueMode::Random {
        closed || ended
    } else {
        shuffled || ended
    }
}

/// What one step of a shuffle did ([`Store::shuffle_step`](super::Store::shuffle_step)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShuffleStep {
    /// Placed this many visitors (already placed ones are skipped).
    Placed(u64),
    /// The room was already shuffled: nothing done.
    AlreadyDone,
    /// The seed given is not the room's (it was redrawn, or the store lost its data).
    WrongSeed,
    /// Not time yet (before `opens_at`), or no pre-queue.
    NotDue,
}

/// A scheduled event's fair start: the seed, its commitment, the pre-queue and the
/// shuffle; the drops task's role.
#[async_trait]
pub trait FairnessStore: Send + Sync {
    /// The room's event seed (64 lowercase hex): sets it to `candidate` if the room has
    /// none, and returns the value it holds (every instance agrees). The seed is drawn
    /// when the pre-queue opens; only its SHA-256 is published until the shuffle.
    async fn event_seed(&self, room: &str, candidate: &str) -> StoreResult<String>;
    /// The room's fairness record (commitment, seed once revealed, pre-queue count, times).
    async fn fairness(&self, room: &str) -> StoreResult<Fairness>;
    /// The pre-queue, `count` visitors from rank `offset` (by arrival; the order does not
    /// matter: the shuffle sorts it), for the shuffle to list it in pages.
    async fn prequeue_page(&self, room: &str, offset: u64, count: u32) -> StoreResult<Vec<String>>;
    /// One step of the shuffle, atomic and idempotent: puts `visitors` (ranks `first_rank`,
    /// `first_rank + 1`, …, 0-based, of the published order) in line with tickets in that
    /// order, ahead of everyone who joined after `opens_at`; with `last`, marks the room
    /// shuffled (exactly once: a step on a shuffled room does nothing). Only at or after
    /// `opens_at`, and only with the room's own `seed`.
    async fn shuffle_step(
        &self,
        room: &str,
        seed: &str,
        first_rank: u64,
        visitors: &[String],
        last: bool,
    ) -> StoreResult<ShuffleStep>;
}
