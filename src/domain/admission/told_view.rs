//! What a view says about the room's schedule and mode, and what the visitor is told
//! ([`crate::domain::told`]): kept beside the view it completes.

use super::{Engine, VisitorView, CLOSED_EVENT_ENDED};
use crate::store::{Snapshot, VisitorState};

impl Engine {
    /// A scheduled event's fields ([`VisitorView::opens_at`], …), in `random` mode the
    /// position shown as the number waiting (each admission is a draw among them all),
    /// and what the visitor is told ([`crate::domain::told::decide`]).
    pub(super) async fn add_event_fields(&self, room: &str, s: &Snapshot, view: &mut VisitorView) {
        use crate::domain::told::{decide, RoomKind};
        let has_place = s.position > 0;
        let cfg = match s.state {
            VisitorState::Admitted | VisitorState::NotQueued | VisitorState::NoShow => None,
            VisitorState::SoldOut | VisitorState::Rejected => None,
            state => self.event_config(room, state).await,
        };
        let Some(cfg) = cfg else {
            let told = decide(
                s.state,
                has_place,
                view.eta_reason,
                RoomKind::default(),
                false,
                false,
            );
            (view.message, view.figures, view.notes) = (told.message, told.figures, told.notes);
            return;
        };
        let secs = |ms: Option<u64>| ms.map(|m| m / 1000);
        let kind = RoomKind::of(&cfg);
        match s.state {
            VisitorState::Scheduled | VisitorState::Prequeue => {
                view.prequeue_opens_at = Some(secs(cfg.prequeue_opens_at));
                view.opens_at = Some(secs(cfg.opens_at));
                view.now_ms = Some(s.now_ms);
            }
            VisitorState::Closed if cfg.closes_at.is_some_and(|c| s.now_ms >= c) => {
                view.closed_reason = Some(CLOSED_EVENT_ENDED);
            }
            VisitorState::Queued | VisitorState::Paused if kind.random && has_place => {
                view.position = s.queue_length;
            }
            _ => {}
        }
        let counting = match s.state {
            VisitorState::Scheduled => cfg.prequeue_opens_at.or(cfg.opens_at).is_some(),
            VisitorState::Prequeue => cfg.opens_at.is_some(),
            _ => false,
        };
        let ended = view.closed_reason.is_some();
        let told = decide(s.state, has_place, view.eta_reason, kind, ended, counting);
        (view.message, view.figures, view.notes) = (told.message, told.figures, told.notes);
    }

    /// The room's configuration for telling a visitor in `state` about it: the cached
    /// one, but read afresh when it cannot be right (the store says `scheduled` or
    /// `prequeue` while the cached configuration has no schedule: an admin just set one),
    /// so no answer says `prequeue` with `opens_at: null`.
    pub(crate) async fn event_config(
        &self,
        room: &str,
        state: VisitorState,
    ) -> Option<std::sync::Arc<crate::room::RoomConfig>> {
        let cfg = self.room_config_cached(room).await.ok()?;
        let stale = match state {
            VisitorState::Scheduled => cfg.opens_at.is_none() && cfg.prequeue_opens_at.is_none(),
            VisitorState::Prequeue => cfg.opens_at.is_none() || cfg.prequeue_opens_at.is_none(),
            _ => false,
        };
        if !stale {
            return Some(cfg);
        }
        self.room_cache.forget(room);
        self.room_config_cached(room).await.ok()
    }

    /// `room`'s configuration as this instance last read it, however long ago (read now
    /// only when it has none): for the hub, which must not read the store per tick to
    /// word a `status` (the mode comes fresh with each tick; lanes and a schedule are
    /// re-read with every join, status and admin change here).
    pub(crate) async fn room_config_known(
        &self,
        room: &str,
    ) -> Option<std::sync::Arc<crate::room::RoomConfig>> {
        // unwrap: never poisoned (no panics while held).
        let known = self
            .room_cache
            .0
            .lock()
            .unwrap()
            .get(room)
            .map(|(_, c)| c.clone());
        match known {
            Some(c) => Some(c),
            None => self.room_config_cached(room).await.ok(),
        }
    }
}
