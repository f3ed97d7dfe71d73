//! The sentences for what a visitor is told ([`crate::domain::told`]): each `message`
//! code's headline and lead, each note's sentence, and the strings the page needs beside
//! them (random mode's chances, a feed that went quiet, the outage and refusal pages).
//! Placeholders: `{n}` (a number), `{t}`/`{median}`/`{low}`/`{high}` (durations),
//! `{time}`/`{open}` (times the page writes in the visitor's time zone), `{room}`,
//! `{origin}`, `{rank}`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Lang;
use crate::domain::eta::reason;
use crate::domain::told::{message as m, note};

/// The strings added for the one source of truth (the rest are [`super::Strings`] and
/// [`super::drops::DropStrings`]).
#[derive(Debug, Serialize)]
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

pub static TOLD_EN: ToldStrings = ToldStrings {
    title_queued_random: "You're in the draw",
    lead_queued_random: "Each time a place frees up, one person is picked at random from everyone waiting. Arriving earlier or reloading makes no difference. This page updates by itself.",
    footer_random: "Fair: a random draw among everyone waiting. Powered by Anteroom.",
    chances_label: "Your chances",
    chances: "About half of the {n} people waiting now are let in within {median}; 1 in 20 within {low}, 19 in 20 within {high}.",
    chances_unknown: "Not known yet: everyone waiting now is let in within at most {t}.",
    chances_paused: "On hold while the draw is paused.",
    note_random_draw: "There is no place in this line: everyone waiting has the same chance at each draw, whenever they arrived. The chances are the same for everyone and change as people join and leave.",
    note_any_time_before: "Arriving any time before {open} is equally good: the pre-queue opens at {time}, and at {open} everyone in it is put in a random order. There is no need to be here the second it opens.",
    fair_rank_explain: "The rank is your draw among everyone in the pre-queue at the opening; your place counts only the people still waiting ahead of you, so it is lower once some of them have been let in.",
    not_live: "Not live: no update since {t}. Trying again…",
    dismiss: "Got it",
    err_unavailable_newcomer: "The waiting room is having trouble right now, so you could not join the line yet. This page tries again by itself.",
    err_unavailable_kept: "The waiting room is having trouble right now. If you already had a place in line, you keep it. This page tries again by itself.",
    err_places_retry: "Someone on the same network (an office, a school, a mobile network) already holds as many places as this line allows per network. A place frees up when one of them is let in; this page tries again by itself.",
    pow_noscript: "This waiting room checks your browser with a short calculation before you join the line, and that needs JavaScript. Turn JavaScript on for this site, then reload this page.",
    embed_refused_title: "This waiting room cannot be shown here",
    embed_refused: "The waiting room \u{201c}{room}\u{201d} does not allow being embedded on {origin}. If this is your site, add {origin} to the room's embed_origins.",
};

pub static TOLD_ZH: ToldStrings = ToldStrings {
    title_queued_random: "您已参加抽签",
    lead_queued_random: "每当空出一个名额，系统会从所有等候者中随机抽取一人。早到或刷新都不会改变结果。本页面会自动更新。",
    footer_random: "公平：在所有等候者中随机抽签。由 Anteroom 提供支持。",
    chances_label: "您的机会",
    chances: "目前等候的 {n} 人中，约一半会在 {median} 内进入；二十分之一在 {low} 内，二十分之十九在 {high} 内。",
    chances_unknown: "暂时无法估算：目前等候的所有人最多在 {t} 内进入。",
    chances_paused: "抽签暂停期间不估算。",
    note_random_draw: "此队列没有先后位置：无论何时到达，每次抽签每位等候者的机会都相同。这些机会对所有人都一样，并会随着人员加入和离开而变化。",
    note_any_time_before: "在 {open} 之前任何时间到达都一样：预排队于 {time} 开放，{open} 时预排队中的所有人会被随机排序。无需在开放的那一秒赶到。",
    fair_rank_explain: "排名是开放时您在预排队所有人中的抽签名次；您的位置只计算仍在您前面等候的人，因此在他们中有人入场后会更靠前。",
    not_live: "未实时更新：自 {t} 起没有新消息。正在重试……",
    dismiss: "知道了",
    err_unavailable_newcomer: "等候室暂时出现问题，您还未能加入队伍。本页面会自动重试。",
    err_unavailable_kept: "等候室暂时出现问题。如果您已在队伍中，位置会保留。本页面会自动重试。",
    err_places_retry: "同一网络（公司、学校或移动网络）中已有人占用了此队列允许每个网络持有的全部名额。其中有人入场后会空出名额；本页面会自动重试。",
    pow_noscript: "此等候室会在您排队前用一个简短的计算检查您的浏览器，这需要 JavaScript。请为本网站启用 JavaScript，然后刷新本页面。",
    embed_refused_title: "此等候室无法在这里显示",
    embed_refused: "等候室“{room}”不允许嵌入到 {origin}。如果这是您的网站，请将 {origin} 加入该等候室的 embed_origins。",
};

impl Lang {
    pub fn told_strings(self) -> &'static ToldStrings {
        match self {
            Lang::En => &TOLD_EN,
            Lang::Zh => &TOLD_ZH,
        }
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
            code => t.reason(code),
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
    fn every_message_and_note_has_words_in_both_languages() {
        for lang in [Lang::En, Lang::Zh] {
            let (messages, notes) = lang.told_table();
            assert_eq!(messages.len(), m::ALL.len());
            assert_eq!(notes.len(), 4 + NOTE_REASONS.len());
        }
        let en = serde_json::to_value(&TOLD_EN).unwrap();
        let zh = serde_json::to_value(&TOLD_ZH).unwrap();
        for (k, v) in zh.as_object().unwrap() {
            assert_ne!(
                Some(v.as_str().unwrap()),
                en[k].as_str(),
                "{k} is not translated"
            );
            for p in [
                "{n}", "{t}", "{median}", "{low}", "{high}", "{time}", "{open}", "{room}",
                "{origin}",
            ] {
                assert_eq!(
                    en[k].as_str().unwrap().contains(p),
                    v.as_str().unwrap().contains(p),
                    "{k}: {p}"
                );
            }
        }
    }

    #[test]
    fn no_random_mode_sentence_tells_a_first_come_story() {
        for x in [&TOLD_EN] {
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
}
