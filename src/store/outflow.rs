//! What the stores keep for a room's adaptive outflow (docs/outflow.md): each source's
//! report for the current interval (an instance's gateway measurements, or a health
//! report), kept for a while and then gone by itself, so a dead instance's figures stop
//! counting; and the controller's last decisions, which the dashboard charts. The
//! reports are opaque JSON to the store ([`crate::domain::outflow::Report`]), as are the
//! points ([`crate::domain::outflow::Point`]).
//!
//! Redis keys (docs/design.md#redis-key-layout): `P:room:{R}:of:rep:<source>` (STRING,
//! PX the report's lifetime), `P:room:{R}:of:src` (SET of the sources that reported; a
//! source whose report lapsed is removed when the set is read) and `P:room:{R}:of:hist`
//! (LIST of points, newest first, trimmed). The memory store keeps a [`MemoryOutflow`]
//! per room.
//!
//! No-shows live with the room's admission state, since admissions write them: in Redis
//! `P:room:{R}:st:claim` (ZSET visitor → deadline ms, written by every admission in a
//! room with `claim_ms`, cleared by `present`), `P:room:{R}:st:noshow` (ZSET visitor →
//! until when their status says `no_show`, expiring with its last entry) and the `st`
//! field `noshows` (a count); in the memory store, fields of its room.

use std::collections::{HashMap, VecDeque};

use async_trait::async_trait;

use super::{Admission, StoreResult};

/// Decisions kept per room: a day at the default 10 s interval is 8,640; the dashboard
/// charts the last [`CHART_POINTS`].
pub const POINTS_KEEP: u64 = 720;
/// Points the dashboard shows.
pub const CHART_POINTS: u64 = 120;

/// The outflow part of a store: a role of its own (the controller and the health route
/// use nothing else of the admission API).
#[async_trait]
pub trait OutflowStore: Send + Sync {
    /// Writes `source`'s report for the room, replacing its last one; it lapses after
    /// `ttl_ms` (the store's clock).
    async fn put_origin_report(
        &self,
        room: &str,
        source: &str,
        report: &str,
        ttl_ms: u64,
    ) -> StoreResult<()>;
    /// Every report for the room that has not lapsed, in no particular order.
    async fn origin_reports(&self, room: &str) -> StoreResult<Vec<String>>;
    /// Adds a controller decision to the room's history (newest first, [`POINTS_KEEP`]).
    async fn push_outflow_point(&self, room: &str, point: &str) -> StoreResult<()>;
    /// The room's last `n` decisions, newest first.
    async fn outflow_points(&self, room: &str, n: u64) -> StoreResult<Vec<String>>;

    /// No-shows (docs/outflow.md#no-shows): whether admission `serial` of `visitor` is
    /// live, as [`super::AdmissionStore::session_live`] answers, and if so its pass was
    /// presented at the origin: its deadline (`claim_timeout_secs` after the admission)
    /// is cleared, so it is no no-show. The gateway and `verify` call it once per session
    /// and instance ([`crate::domain::presented`]).
    async fn present(&self, room: &str, visitor: &str, serial: u64) -> StoreResult<bool>;
    /// Ends up to `batch` live sessions whose pass was not presented by their deadline,
    /// as a release ends them (no recovery puts them back), counts them, adds `no_show`
    /// to the room's stream, and marks each visitor so that their status says
    /// [`super::VisitorState::NoShow`] until the session would have expired (or they are
    /// let in again). Returns the ended sessions, soonest deadline first. Promotes
    /// nobody: the caller does, once the passes are revoked.
    async fn reap_no_shows(&self, room: &str, batch: u32) -> StoreResult<Vec<(String, Admission)>>;
    /// How many no-shows the room has had.
    async fn no_shows(&self, room: &str) -> StoreResult<u64>;
}

/// A room's outflow state in the memory store.
#[derive(Debug, Default)]
pub struct MemoryOutflow {
    /// source → (report, lapses at ms).
    reports: HashMap<String, (String, u64)>,
    /// Newest first.
    points: VecDeque<String>,
}

impl MemoryOutflow {
    pub fn put(&mut self, source: &str, report: &str, until_ms: u64) {
        self.reports
            .insert(source.to_string(), (report.to_string(), until_ms));
    }

    pub fn reports(&mut self, now_ms: u64) -> Vec<String> {
        self.reports.retain(|_, (_, until)| *until > now_ms);
        self.reports.values().map(|(r, _)| r.clone()).collect()
    }

    pub fn push(&mut self, point: &str) {
        self.points.push_front(point.to_string());
        self.points.truncate(POINTS_KEEP as usize);
    }

    pub fn points(&self, n: u64) -> Vec<String> {
        self.points.iter().take(n as usize).cloned().collect()
    }
}
