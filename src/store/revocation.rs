//! Revoked passes: a pass whose session was ended early (the origin's
//! `Anteroom-Command: revoke`, `POST /api/rooms/{room}/revoke`, a release with the pass)
//! is written to a log that every instance reads from a cursor
//! ([`super::Store::revocations_since`]), so gateways, which check passes without the
//! store, refuse it within a poll. An entry lives until the pass would have expired
//! anyway; after that the pass's own `exp` refuses it.
//!
//! Why a log read from a cursor rather than pub/sub: a message published while an
//! instance is reconnecting is lost, and a lost revocation would let a pass in until
//! its expiry. A cursor picks up exactly where the last read stopped, and a read costs
//! one small script when nothing changed.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::StoreResult;

/// One revoked pass: every pass of `visitor` in `room` with a serial up to `serial`
/// stops admitting (older serials are superseded sessions of the same visitor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revocation {
    pub room: String,
    pub visitor: String,
    pub serial: u64,
    /// When the pass expires (ms since the epoch): the log forgets the entry after it.
    pub expires_at_ms: u64,
}

impl Revocation {
    /// `room visitor serial expires_ms`: the Redis member (room ids and visitor ids hold
    /// no spaces).
    pub fn encode(&self) -> String {
        format!(
            "{} {} {} {}",
            self.room, self.visitor, self.serial, self.expires_at_ms
        )
    }

    pub fn decode(s: &str) -> Option<Self> {
        let mut it = s.split(' ');
        let r = Self {
            room: it.next()?.to_string(),
            visitor: it.next()?.to_string(),
            serial: it.next()?.parse().ok()?,
            expires_at_ms: it.next()?.parse().ok()?,
        };
        it.next().is_none().then_some(r)
    }
}

/// One read of the log ([`super::Store::revocations_since`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RevocationPage {
    /// Revocations after the cursor, oldest first.
    pub entries: Vec<Revocation>,
    /// The cursor to read from next time.
    pub cursor: u64,
    /// More entries are waiting past `cursor` (the read stopped at its limit).
    pub more: bool,
}

/// Unexpired revocations the log sweeps per write (a bound on one call's work).
pub const SWEEP_BATCH: usize = 100;

/// The memory store's log: a sequence number per write, entries by sequence, swept of
/// expired entries on each write (the same rules as `revoke.lua`).
#[derive(Default)]
pub struct MemoryLog {
    seq: u64,
    by_seq: BTreeMap<u64, Revocation>,
}

impl MemoryLog {
    /// Records `r` (nothing when it has already expired at `now_ms`); returns its number.
    pub fn push(&mut self, r: &Revocation, now_ms: u64) -> Option<u64> {
        let expired: Vec<u64> = self
            .by_seq
            .iter()
            .filter(|(_, e)| e.expires_at_ms <= now_ms)
            .map(|(s, _)| *s)
            .take(SWEEP_BATCH)
            .collect();
        for s in expired {
            self.by_seq.remove(&s);
        }
        if r.expires_at_ms <= now_ms {
            return None;
        }
        // The same pass revoked twice keeps one entry, at its newest number.
        self.by_seq.retain(|_, e| e != r);
        self.seq += 1;
        self.by_seq.insert(self.seq, r.clone());
        Some(self.seq)
    }

    /// Entries after `cursor`, at most `limit`; a cursor past the log's end (the store
    /// was emptied) reads from the start.
    pub fn since(&self, cursor: u64, limit: usize) -> RevocationPage {
        let cursor = if cursor > self.seq { 0 } else { cursor };
        let mut entries = Vec::new();
        let mut last = cursor;
        let mut more = false;
        for (s, r) in self.by_seq.range(cursor + 1..) {
            if entries.len() == limit {
                more = true;
                break;
            }
            last = *s;
            entries.push(r.clone());
        }
        RevocationPage {
            entries,
            cursor: last,
            more,
        }
    }
}

/// The revocation log of passes that ended early: written by the web layer, the gateway
/// and the keeper, read by the gateway.
#[async_trait]
pub trait RevocationStore: Send + Sync {
    /// Appends a revoked pass to the revocation log (see [the module](self)), kept until its
    /// `expires_at_ms` (store clock; an already expired one is not written). Expired
    /// entries are swept as new ones are written.
    async fn revoke(&self, r: &Revocation) -> StoreResult<()>;
    /// Revocations written after `cursor` (0: from the start), oldest first, at most
    /// `limit`, and the cursor to read from next. Entries that expired but were not swept
    /// yet may be among them. A cursor past the log's end (the store lost its data)
    /// reads from the start again.
    async fn revocations_since(&self, cursor: u64, limit: usize) -> StoreResult<RevocationPage>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_round_trip() {
        let r = Revocation {
            room: "sale-1".into(),
            visitor: "ab12".into(),
            serial: 7,
            expires_at_ms: 99,
        };
        assert_eq!(Revocation::decode(&r.encode()), Some(r));
        assert_eq!(Revocation::decode("a b c 1"), None);
        assert_eq!(Revocation::decode("a b 1 2 3"), None);
    }
}
