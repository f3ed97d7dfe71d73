//! What a visitor is told: one decision, made here, of the headline and lead (the
//! `message` code), the figures shown (`figures`) and the notes (`notes`), from the
//! visitor's state and the room's mode. The JSON view, the socket's `status`, the queue
//! page and the widget all carry this decision; the page's script renders the codes with
//! the strings it is handed and decides nothing itself (docs/visitor-page.md#what-a-visitor-is-told).
//!
//! Why codes and not sentences: the API has no language, and a socket's visitor may
//! switch languages; the codes are the contract, the sentences are `i18n`'s.

use crate::domain::eta::reason;
use crate::room::{QueueMode, RoomConfig};
use crate::store::VisitorState;

/// The `message` codes: which headline and lead a visitor sees.
pub mod message {
    /// In line, first come first served.
    pub const QUEUED: &str = "queued";
    /// In line in a room with priority lanes.
    pub const QUEUED_LANES: &str = "queued_lanes";
    /// In the draw of a `random`-mode room: no place, chances.
    pub const QUEUED_RANDOM: &str = "queued_random";
    /// In line in a scheduled event's room (the draw's order, then arrival's).
    pub const QUEUED_DROP: &str = "queued_drop";
    pub const PAUSED: &str = "paused";
    pub const SOLD_OUT: &str = "sold_out";
    pub const SOLD_OUT_KEPT: &str = "sold_out_kept";
    pub const CLOSED: &str = "closed";
    pub const CLOSED_KEPT: &str = "closed_kept";
    pub const EVENT_ENDED: &str = "event_ended";
    pub const REJECTED: &str = "rejected";
    pub const REJECTED_KEPT: &str = "rejected_kept";
    pub const SCHEDULED: &str = "scheduled";
    pub const PREQUEUE: &str = "prequeue";
    pub const NOT_QUEUED: &str = "not_queued";
    pub const ADMITTED: &str = "admitted";
    /// Let in, but the pass was not presented at the site within the room's claim
    /// timeout: the admission was given to the next in line; they may join again.
    pub const NO_SHOW: &str = "no_show";
    /// The queue page of a proof-of-work room before the visitor joined (page only).
    pub const VERIFYING: &str = "verifying";

    /// Every code, in the order docs/visitor-page.md lists them.
    pub const ALL: &[&str] = &[
        QUEUED,
        QUEUED_LANES,
        QUEUED_RANDOM,
        QUEUED_DROP,
        PAUSED,
        SOLD_OUT,
        SOLD_OUT_KEPT,
        CLOSED,
        CLOSED_KEPT,
        EVENT_ENDED,
        REJECTED,
        REJECTED_KEPT,
        SCHEDULED,
        PREQUEUE,
        NOT_QUEUED,
        ADMITTED,
        NO_SHOW,
        VERIFYING,
    ];
}

/// The `figures` codes: which numbers the page shows.
pub mod figure {
    /// The place in line and how many are ahead.
    pub const PLACE: &str = "place";
    /// The estimated wait as a range.
    pub const ETA: &str = "eta";
    /// How many people are waiting.
    pub const IN_LINE: &str = "in_line";
    /// The progress bar (from the place the visitor started at).
    pub const PROGRESS: &str = "progress";
    /// Random mode: the share of the people waiting let in within the estimate's
    /// quantiles (instead of a place and a personal estimate).
    pub const CHANCES: &str = "chances";
    /// The countdown to a scheduled event's next opening.
    pub const COUNTDOWN: &str = "countdown";
}

/// The `notes` codes besides the [`reason`] codes (every `eta_reason` is also a note).
pub mod note {
    /// How the estimate is made (a first-come line with nothing else to say).
    pub const ETA_EXPLAIN: &str = "eta_explain";
    /// How the draw works and what the chances mean (random mode).
    pub const RANDOM_DRAW: &str = "random_draw";
    /// Before a pre-queue opens: arriving any time before the opening is equally good.
    pub const ANY_TIME_BEFORE: &str = "any_time_before";
    /// A note the page keeps until the visitor dismisses it (the others are shown
    /// exactly while the server sends them).
    pub const STICKY: &[&str] = &[super::reason::YOU_WERE_AWAY];
}

/// What a room is, as far as what its visitors are told depends on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoomKind {
    pub random: bool,
    pub lanes: bool,
    /// A scheduled event (`opens_at`).
    pub drop: bool,
    /// The event has a pre-queue (`prequeue_opens_at`).
    pub prequeue: bool,
}

impl RoomKind {
    pub fn of(cfg: &RoomConfig) -> Self {
        Self {
            random: cfg.mode == QueueMode::Random,
            lanes: !cfg.lanes.is_empty(),
            drop: cfg.opens_at.is_some(),
            prequeue: cfg.prequeue_opens_at.is_some(),
        }
    }
}

/// The decision: what the visitor sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Told {
    pub message: &'static str,
    pub figures: &'static [&'static str],
    pub notes: Vec<&'static str>,
}

const WAITING: &[&str] = &[
    figure::PLACE,
    figure::ETA,
    figure::IN_LINE,
    figure::PROGRESS,
];
const DRAWN: &[&str] = &[figure::IN_LINE, figure::CHANCES];
const PAUSED: &[&str] = &[figure::PLACE, figure::ETA, figure::IN_LINE];
const PAUSED_DRAWN: &[&str] = &[figure::IN_LINE];
const COUNTING: &[&str] = &[figure::COUNTDOWN];

/// What a visitor in `state` is told. `has_place`: they hold a place (a closed, sold-out
/// or rejecting room keeps it); `eta_reason`: the view's; `event_ended`: a closed room's
/// event is over; `counting`: there is a time to count down to.
pub fn decide(
    state: VisitorState,
    has_place: bool,
    eta_reason: Option<&'static str>,
    kind: RoomKind,
    event_ended: bool,
    counting: bool,
) -> Told {
    use message as m;
    let kept = |yes, no| if has_place { yes } else { no };
    let (message, figures): (&'static str, &'static [&'static str]) = match state {
        VisitorState::Queued if kind.random => (m::QUEUED_RANDOM, DRAWN),
        VisitorState::Queued if kind.drop => (m::QUEUED_DROP, WAITING),
        VisitorState::Queued if kind.lanes => (m::QUEUED_LANES, WAITING),
        VisitorState::Queued => (m::QUEUED, WAITING),
        VisitorState::Paused if kind.random => (m::PAUSED, PAUSED_DRAWN),
        VisitorState::Paused => (m::PAUSED, PAUSED),
        VisitorState::SoldOut => (kept(m::SOLD_OUT_KEPT, m::SOLD_OUT), &[]),
        VisitorState::Closed if event_ended => (m::EVENT_ENDED, &[]),
        VisitorState::Closed => (kept(m::CLOSED_KEPT, m::CLOSED), &[]),
        VisitorState::Rejected => (kept(m::REJECTED_KEPT, m::REJECTED), &[]),
        VisitorState::Scheduled => (m::SCHEDULED, if counting { COUNTING } else { &[] }),
        VisitorState::Prequeue => (m::PREQUEUE, if counting { COUNTING } else { &[] }),
        VisitorState::NotQueued => (m::NOT_QUEUED, &[]),
        VisitorState::NoShow => (m::NO_SHOW, &[]),
        VisitorState::Admitted => (m::ADMITTED, &[]),
    };
    let mut notes = Vec::new();
    // "You were away" is said whatever the state; it is sticky on the page.
    if eta_reason == Some(reason::YOU_WERE_AWAY) {
        notes.push(reason::YOU_WERE_AWAY);
    }
    match state {
        VisitorState::Queued | VisitorState::Paused => {
            // The reason the estimate is what it is, while the server gives one; in
            // random mode a reason about places ahead means nothing (there are none).
            let reason = eta_reason.filter(|r| {
                *r != reason::YOU_WERE_AWAY && !(kind.random && *r == reason::PRIORITY_LANES)
            });
            if let Some(r) = reason {
                notes.push(r);
            }
            if kind.random {
                notes.push(note::RANDOM_DRAW);
            } else if reason.is_none() && state == VisitorState::Queued {
                notes.push(note::ETA_EXPLAIN);
            }
        }
        VisitorState::Scheduled if kind.prequeue && counting => notes.push(note::ANY_TIME_BEFORE),
        _ => {}
    }
    Told {
        message,
        figures,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIFO: RoomKind = RoomKind {
        random: false,
        lanes: false,
        drop: false,
        prequeue: false,
    };

    #[test]
    fn random_mode_is_a_draw_with_chances_and_no_place() {
        let random = RoomKind {
            random: true,
            ..FIFO
        };
        let t = decide(VisitorState::Queued, true, None, random, false, false);
        assert_eq!(t.message, message::QUEUED_RANDOM);
        assert!(!t.figures.contains(&figure::PLACE));
        assert!(!t.figures.contains(&figure::PROGRESS));
        assert!(t.figures.contains(&figure::CHANCES));
        assert_eq!(t.notes, vec![note::RANDOM_DRAW]);
        let paused = decide(
            VisitorState::Paused,
            true,
            Some(reason::PAUSED),
            random,
            false,
            false,
        );
        assert!(!paused.figures.contains(&figure::PLACE));
    }

    #[test]
    fn a_reason_note_lives_exactly_as_long_as_the_reason() {
        let with = decide(
            VisitorState::Queued,
            true,
            Some(reason::STOCK_MAY_RUN_OUT),
            FIFO,
            false,
            false,
        );
        assert_eq!(with.notes, vec![reason::STOCK_MAY_RUN_OUT]);
        let without = decide(VisitorState::Queued, true, None, FIFO, false, false);
        assert_eq!(without.notes, vec![note::ETA_EXPLAIN]);
        let away = decide(
            VisitorState::Queued,
            true,
            Some(reason::YOU_WERE_AWAY),
            FIFO,
            false,
            false,
        );
        assert_eq!(away.notes, vec![reason::YOU_WERE_AWAY, note::ETA_EXPLAIN]);
    }

    #[test]
    fn a_kept_place_is_said_only_to_who_holds_one() {
        for (state, yes, no) in [
            (VisitorState::Closed, message::CLOSED_KEPT, message::CLOSED),
            (
                VisitorState::SoldOut,
                message::SOLD_OUT_KEPT,
                message::SOLD_OUT,
            ),
            (
                VisitorState::Rejected,
                message::REJECTED_KEPT,
                message::REJECTED,
            ),
        ] {
            assert_eq!(decide(state, true, None, FIFO, false, false).message, yes);
            assert_eq!(decide(state, false, None, FIFO, false, false).message, no);
        }
        let ended = decide(VisitorState::Closed, true, None, FIFO, true, false);
        assert_eq!(ended.message, message::EVENT_ENDED);
    }

    #[test]
    fn before_a_pre_queue_arriving_any_time_is_said_to_be_as_good() {
        let drop = RoomKind {
            drop: true,
            prequeue: true,
            ..FIFO
        };
        let t = decide(VisitorState::Scheduled, false, None, drop, false, true);
        assert_eq!(t.figures, COUNTING);
        assert_eq!(t.notes, vec![note::ANY_TIME_BEFORE]);
        let no_pq = RoomKind {
            prequeue: false,
            ..drop
        };
        assert!(
            decide(VisitorState::Scheduled, false, None, no_pq, false, true)
                .notes
                .is_empty()
        );
        assert_eq!(
            decide(VisitorState::Queued, true, None, drop, false, false).message,
            message::QUEUED_DROP
        );
    }
}
