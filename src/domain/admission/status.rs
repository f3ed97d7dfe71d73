//! A visitor's status: answered from this instance's view of the line where the store
//! would only read (a queued visitor whose heartbeat is not due, an admitted one whose
//! session the store has claimed: [`crate::domain::line_view`]), else by the store.

use super::{Engine, VisitorView};
use crate::domain::error::DomainError;
use crate::domain::identity::VisitorId;
use crate::store::{Snapshot, VisitorState};

impl Engine {
    /// Where the visitor stands in `room`, as the visitor's page and the API show it.
    pub(crate) async fn status(
        &self,
        room: &str,
        visitor: &VisitorId,
    ) -> Result<VisitorView, DomainError> {
        // A queued visitor whose heartbeat is not due, in a plainly open room, or an
        // admitted one whose session's claim the store already has: the store would only
        // read, and the hub's view of the line says the same (line_view).
        let now = std::time::Instant::now();
        let losses = self.data_losses.load(std::sync::atomic::Ordering::SeqCst);
        if let Some(s) = self
            .line_views
            .answer(room, visitor.as_str(), now)
            .filter(|s| self.session_not_ended(room, visitor, s, now))
        {
            let view = self.view(room, visitor, &s).await;
            // A data loss noted meanwhile: the answer (and its place receipt, dated now)
            // speaks for a line the store no longer has; the store answers instead.
            if self.data_losses.load(std::sync::atomic::Ordering::SeqCst) == losses {
                self.metrics
                    .status_answers
                    .with_label_values(&["line"])
                    .inc();
                return Ok(view);
            }
        }
        let s = self
            .store
            .status_placed(room, visitor.as_str())
            .await
            .map_err(|e| self.store_failed("status", room, e))?;
        self.metrics
            .status_answers
            .with_label_values(&["store"])
            .inc();
        if s.state == VisitorState::Admitted && !self.renews_sessions(room).await {
            self.line_views
                .learn_admitted(room, visitor.as_str(), &s, now);
        } else {
            self.line_views.learn(room, visitor.as_str(), &s, now);
        }
        Ok(self.view(room, visitor, &s).await)
    }

    /// For an admitted answer from the line view: whether this instance read the
    /// revocation log lately ([`crate::domain::revoked::FRESH`]) and did not find the
    /// session in it (every early end of a session is written there). A queued answer
    /// passes. An ended session is forgotten: its status asks the store.
    fn session_not_ended(
        &self,
        room: &str,
        visitor: &VisitorId,
        s: &Snapshot,
        now: std::time::Instant,
    ) -> bool {
        let Some(a) = &s.admission else {
            return true;
        };
        let live = self.revoked.read_within(now, crate::domain::revoked::FRESH)
            && !self.revoked.is_revoked(room, visitor.as_str(), a.serial);
        if !live {
            self.line_views.forget(room, visitor.as_str());
        }
        live
    }

    /// Whether `room` renews sessions on activity (their end moves with no log saying
    /// so: an admitted status there is the store's to answer). Unknown: as if it did.
    async fn renews_sessions(&self, room: &str) -> bool {
        self.room_config_cached(room)
            .await
            .map_or(true, |c| c.renew_on_activity)
    }
}
