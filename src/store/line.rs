//! What a hub needs to keep its sockets' positions without asking per socket
//! (docs/design.md#socket-updates): each room's **line log** of the places that left the
//! line or were put back, read from a cursor, and the hub's **hold** on the visitors it
//! has open sockets for (one lease per instance per room instead of one heartbeat per
//! socket per tick).
//!
//! Both stores keep the log with the same rules: every change that removes a ticket from
//! the line (an admission, a release, a reap) adds one `left` entry, a place put back
//! after a data loss (`restore_place`) one `back` entry; `flush` and a lost store start a
//! new epoch. In a room without lanes every new place is at the back, so a socket's
//! position is its old one, less the `left` tickets below its own, plus the `back` ones
//! below it: exact, computed by the hub.

use async_trait::async_trait;
use futures_util::stream::BoxStream;

use super::{AdmittedEvent, RoomView, SocketCount, StoreResult, WatchEntry};

/// About how many log entries a room keeps (`CHANGES_KEEP` in Lua): a hub further behind
/// than that reads its sockets' places again.
pub const CHANGES_KEEP: u64 = 10_000;

/// How long one tick's lease on an instance's held visitors lasts (`HOLD_LEASE_MS` in
/// Lua): ten ticks, so a hub that misses a few keeps its hold, and one that was killed
/// lets its visitors fall back to the heartbeat timeout within seconds.
pub const HOLD_LEASE_MS: u64 = 10_000;

/// Where a room's line log stands. A cursor from another epoch says nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCursor {
    pub epoch: String,
    pub seq: u64,
}

/// One entry of the line log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineChange {
    pub seq: u64,
    /// The place's ticket.
    pub ticket: u64,
    pub visitor: String,
    /// `false`: the place left the line; `true`: it was put back.
    pub back: bool,
}

impl LineChange {
    /// Parses `<seq>:<kind>:<ticket>:<visitor>` (kind `l` or `b`) as the scripts write it.
    pub fn parse(s: &str) -> Option<Self> {
        let mut it = s.splitn(4, ':');
        let seq = it.next()?.parse().ok()?;
        let back = match it.next()? {
            "l" => false,
            "b" => true,
            _ => return None,
        };
        let ticket = it.next()?.parse().ok()?;
        let visitor = it.next()?.to_string();
        Some(Self {
            seq,
            ticket,
            visitor,
            back,
        })
    }
}

/// Where a visitor stands, with the ticket of a queued one (0 otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub entry: WatchEntry,
    pub ticket: u64,
}

/// What a hub sends with its tick.
#[derive(Clone, Copy, Debug)]
pub struct TickRequest<'a> {
    /// This instance's name (its hold set and lease).
    pub instance: &'a str,
    /// The cursor the hub's positions are exact at, if it has one.
    pub since: Option<&'a LineCursor>,
    /// Visitors whose sockets opened since: held from now, and placed in the reply.
    pub hold: &'a [String],
    /// Visitors whose last socket here closed: no longer held (back on heartbeats).
    pub unhold: &'a [String],
}

/// The answer to a hub's tick.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomTick {
    pub view: super::RoomView,
    /// Where the log stands now.
    pub cursor: LineCursor,
    /// Whether positions may be counted locally (no lanes).
    pub exact: bool,
    /// The log's entries after `since`, oldest first; `None` when it cannot say (no or
    /// another epoch, or trimmed past `since`).
    pub changes: Option<Vec<LineChange>>,
    /// Where each visitor of `hold` stands, in order, exact at `cursor`.
    pub placed: Vec<Placed>,
    /// The instance held nothing here, or its lease had lapsed (the reaper may have let
    /// its visitors go): it must hold all its sockets' visitors again.
    pub rehold: bool,
}

/// The hub's batched view of the line (one round trip per room per tick, whatever the
/// number of sockets), admissions as they happen, and the socket counts it reports.
#[async_trait]
pub trait LineStore: Send + Sync {
    /// Room figures plus, for each visitor, where it stands; refreshes queued visitors'
    /// heartbeats. One store round trip for the whole batch.
    async fn watch(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<WatchEntry>)>;
    /// A hub's tick for one room (docs/design.md#socket-updates): renews this instance's
    /// hold on the visitors it has sockets for, holds `hold` and lets `unhold` go, and
    /// returns the room figures, the line log's changes since the hub's cursor and where
    /// each newly held visitor stands. One round trip whatever the number of sockets.
    async fn tick(&self, room: &str, req: &TickRequest<'_>) -> StoreResult<RoomTick>;
    /// Where each visitor stands (with its ticket), exact at the returned cursor; claims
    /// admitted visitors' sessions, refreshes no heartbeat.
    async fn places(
        &self,
        room: &str,
        visitors: &[String],
    ) -> StoreResult<(RoomView, Vec<Placed>, LineCursor)>;
    /// Admissions as they happen, from every instance. The stream ends when the
    /// subscription breaks (the caller subscribes again).
    async fn subscribe(&self) -> StoreResult<BoxStream<'static, AdmittedEvent>>;
    /// Records this instance's open sockets per room.
    async fn report_sockets(&self, instance: &str, counts: &[(String, u64)]) -> StoreResult<()>;
    /// Socket counts reported in the last minute, by instance and room.
    async fn sockets(&self) -> StoreResult<Vec<SocketCount>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_entry_is_parsed_and_a_bad_one_refused() {
        assert_eq!(
            LineChange::parse("12:l:3000:v:x"),
            Some(LineChange {
                seq: 12,
                ticket: 3000,
                visitor: "v:x".into(),
                back: false
            })
        );
        assert!(LineChange::parse("12:b:7:v").unwrap().back);
        assert_eq!(LineChange::parse("12:z:7:v"), None);
        assert_eq!(LineChange::parse("12:l:x:v"), None);
    }
}
