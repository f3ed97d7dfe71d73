//! The sentences for what a visitor is told ([`crate::domain::told`]): each `message`
//! code's headline and lead, each note's sentence, and the strings the page needs beside
//! them (random mode's chances, a feed that went quiet, the outage and refusal pages).
//! Placeholders: `{n}` (a number), `{t}`/`{median}`/`{low}`/`{high}` (durations),
//! `{time}`/`{open}` (times the page writes in the visitor's time zone), `{room}`,
//! `{origin}`, `{rank}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Lang;
use crate::domain::eta::reason;
use crate::domain::told::{message as m, note};

/// The strings added for the one source of truth (the rest are [`super::Strings`] and
/// [`super::drops::DropStrings`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct ToldStrings {
    /// Random mode, in the draw.
    pub title_queued_random: &'static str,
    pub lead_queued_random: &'static str,
    pub footer_random: &'static str,
    /// The figure that replaces the place in random mode.
    pub chances_label: &'static str,
    /// `{n}` waiting, `{median}`, `{low}`, `{high}`: the wait's quantiles.
    pub chances: &'static str,
    /// No basis yet: `{t}`, the worst case.
    pub chances_unknown: &'static str,
    pub chances_paused: &'static str,
    /// Note `random_draw`.
    pub note_random_draw: &'static str,
    /// Note `any_time_before`: `{time}` the pre-queue's opening, `{open}` the draw.
    pub note_any_time_before: &'static str,
    /// Beside the fairness check's "rank r of n": why it is not the place.
    pub fair_rank_explain: &'static str,
    /// The live dot once updates stopped arriving; `{t}` the last one's time.
    pub not_live: &'static str,
    /// The button that dismisses a sticky note.
    pub dismiss: &'static str,
    /// The outage page: for a visitor with no identity yet (no place), and for one who
    /// may hold a place.
    pub err_unavailable_newcomer: &'static str,
    pub err_unavailable_kept: &'static str,
    /// The too-many-places page, which tries again by itself.
    pub err_places_retry: &'static str,
    /// A proof-of-work room with JavaScript off.
    pub pow_noscript: &'static str,
    /// The widget on a site its room does not allow: said on the host page.
    pub embed_refused_title: &'static str,
    pub embed_refused: &'static str,
}

impl Lang {
    pub fn told_strings(self) -> &'static ToldStrings {
        &self.0.told
    }

    /// A `message` code's headline and lead (`{time}`/`{open}` still in the lead of
    /// `scheduled` and `prequeue`); `None` for a code that is not one.
    pub fn said(self, code: &str) -> Option<Said> {
        let (t, d, x) = (self.strings(), self.drop_strings(), self.told_strings());
        let (title, lead) = match code {
            m::QUEUED => (t.title_queued, t.lead_queued),
            m::QUEUED_LANES => (t.title_queued, t.lead_queued_lanes),
            m::QUEUED_RANDOM => (x.title_queued_random, x.lead_queued_random),
            m::QUEUED_DROP => (t.title_queued, d.lead_queued_drop),
            m::PAUSED => (t.title_paused, t.lead_paused),
            m::SOLD_OUT => (t.title_sold_out, t.lead_sold_out),
            m::SOLD_OUT_KEPT => (t.title_sold_out, t.lead_sold_out_kept),
            m::CLOSED => (t.title_closed, t.lead_closed),
            m::CLOSED_KEPT => (t.title_closed, t.lead_closed_kept),
            m::EVENT_ENDED => (t.title_event_ended, t.lead_event_ended),
            m::REJECTED => (t.title_rejected, t.lead_rejected),
            m::REJECTED_KEPT => (t.title_rejected, t.lead_rejected_kept),
            m::SCHEDULED => (t.title_scheduled, d.lead_scheduled),
            m::PREQUEUE => (t.title_prequeue, d.lead_prequeue),
            m::NOT_QUEUED => (t.title_not_queued, t.lead_not_queued),
            m::NO_SHOW => (t.title_no_show, t.lead_no_show),
            m::ADMITTED => (t.title_admitted, t.lead_admitted),
            m::VERIFYING => (t.pow_title, t.pow_lead),
            _ => return None,
        };
        Some(Said { title, lead })
    }

    /// A note code's sentence (`{n}`: the room's heartbeat timeout in `you_were_away`;
    /// `{time}`/`{open}` in `any_time_before`).
    pub fn note(self, code: &str) -> Option<&'static str> {
        let (t, x) = (self.strings(), self.told_strings());
        match code {
            reason::YOU_WERE_AWAY => Some(t.you_were_away),
            note::ETA_EXPLAIN => Some(t.eta_explain),
            note::RANDOM_DRAW => Some(x.note_random_draw),
            note::ANY_TIME_BEFORE => Some(x.note_any_time_before),
            code => self.reason(code),
        }
    }

    /// Every message's headline and lead, and every note's sentence, by code: what the
    /// page's script renders the codes with.
    pub fn told_table(
        self,
    ) -> (
        BTreeMap<&'static str, Said>,
        BTreeMap<&'static str, &'static str>,
    ) {
        let messages = m::ALL
            .iter()
            .filter_map(|c| self.said(c).map(|s| (*c, s)))
            .collect();
        let mut codes = vec![
            reason::YOU_WERE_AWAY,
            note::ETA_EXPLAIN,
            note::RANDOM_DRAW,
            note::ANY_TIME_BEFORE,
        ];
        codes.extend(NOTE_REASONS);
        let notes = codes
            .into_iter()
            .filter_map(|c| self.note(c).map(|s| (c, s)))
            .collect();
        (messages, notes)
    }
}

/// The `eta_reason` codes that are notes as they are.
const NOTE_REASONS: [&str; 11] = [
    reason::CAPACITY_LOWERED,
    reason::CAPACITY_RAISED,
    reason::PAUSED,
    reason::RESUMED,
    reason::RATE_LIMITED,
    reason::SESSIONS_LONGER,
    reason::SESSIONS_SHORTER,
    reason::PLACES_RESTORED,
    reason::STOCK_MAY_RUN_OUT,
    reason::PRIORITY_LANES,
    crate::domain::outflow::ORIGIN_BUSY,
];

/// A headline and its lead.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Said {
    pub title: &'static str,
    pub lead: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_and_note_has_words_in_every_language() {
        for lang in Lang::all() {
            let (messages, notes) = lang.told_table();
            assert_eq!(messages.len(), m::ALL.len(), "{}", lang.code());
            assert_eq!(notes.len(), 4 + NOTE_REASONS.len(), "{}", lang.code());
        }
    }

    #[test]
    fn no_random_mode_sentence_tells_a_first_come_story() {
        let x = Lang::en().told_strings();
        for s in [
            x.lead_queued_random,
            x.note_random_draw,
            x.footer_random,
            x.chances,
        ] {
            for bad in [
                "order they arrived",
                "first come",
                "ahead of you",
                "your place in line",
            ] {
                assert!(!s.contains(bad), "{s}");
            }
        }
    }
}
