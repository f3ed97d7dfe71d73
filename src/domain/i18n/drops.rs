//! What a visitor sees of a launch-day drop (a room with `opens_at`), in every served
//! language (the `drop-` messages of `i18n/*.ftl`): the states before the opening, the countdown, and the "How was
//! my place decided?" check. Kept beside [`super::Strings`] (which has the states'
//! titles and the ended event's message) and handed to the page's script the same way
//! (as `drop_strings`). Placeholders: `{time}` (a local time the
//! page writes), `{t}` (a duration), `{draw}`, `{rank}`, `{n}`, `{ok}`, `{url}`.

use serde::{Deserialize, Serialize};

use super::Lang;

/// Every drop string a visitor can see.
#[derive(Debug, Serialize, Deserialize)]
pub struct DropStrings {
    /// State `scheduled` (before the pre-queue, or the line, opens), with the time: the
    /// page's lead under [`super::Strings::title_scheduled`].
    pub lead_scheduled: &'static str,
    /// State `prequeue` (waiting for the shuffle at `opens_at`), with the time.
    pub lead_prequeue: &'static str,
    /// In line in a drop's room: the order is the draw's, then arrival (never "strictly
    /// in the order they arrived").
    pub lead_queued_drop: &'static str,
    pub footer_drop: &'static str,
    /// The countdown's label and its last moment.
    pub countdown_label: &'static str,
    pub countdown_now: &'static str,
    /// The units of the countdown (`1 h 02 min 05 s`).
    pub unit_hours: &'static str,
    pub unit_minutes: &'static str,
    pub unit_seconds: &'static str,
    /// The "How was my place decided?" section.
    pub fair_summary: &'static str,
    pub fair_explain: &'static str,
    pub fair_checking: &'static str,
    pub fair_result: &'static str,
    pub fair_yes: &'static str,
    pub fair_no: &'static str,
    pub fair_not_in: &'static str,
    pub fair_mismatch: &'static str,
    pub fair_unavailable: &'static str,
    pub fair_failed: &'static str,
}

impl DropStrings {
    /// A countdown as the page's script writes it: `1 h 02 min 05 s`, `4 min 09 s`,
    /// `7 s` (Chinese and Japanese without spaces: `1小时02分05秒`), in the language's
    /// digits; whole seconds, rounded up.
    pub fn countdown(&self, lang: Lang, ms: u64) -> String {
        lang.digits(&self.countdown_latin(lang, ms))
    }

    fn countdown_latin(&self, lang: Lang, ms: u64) -> String {
        let s = ms.div_ceil(1000);
        let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60);
        let sep = if no_spaces(lang) { "" } else { " " };
        let mut parts = Vec::new();
        if h > 0 {
            parts.push(format!("{h}{sep}{}", self.unit_hours));
        }
        if h > 0 || m > 0 {
            let m = if h > 0 {
                format!("{m:02}")
            } else {
                m.to_string()
            };
            parts.push(format!("{m}{sep}{}", self.unit_minutes));
        }
        let sec = if h > 0 || m > 0 {
            format!("{sec:02}")
        } else {
            sec.to_string()
        };
        parts.push(format!("{sec}{sep}{}", self.unit_seconds));
        parts.join(sep)
    }

    /// A time as the server can write it before the script puts it in the visitor's
    /// own time zone: `2026-11-27 09:30 UTC`.
    pub fn utc(ms: u64) -> String {
        let t = crate::room::schedule::format_rfc3339_ms(ms);
        match (t.get(..10), t.get(11..16)) {
            (Some(d), Some(hm)) => format!("{d} {hm} UTC"),
            _ => t,
        }
    }
}

/// Whether the language writes a number and its unit without a space (`5秒`): Chinese
/// and Japanese. `queue.js` asks the same of `lang` for its countdown.
pub fn no_spaces(lang: Lang) -> bool {
    let c = lang.code();
    c.starts_with("zh") || c.starts_with("ja")
}

impl Lang {
    /// The drop strings in this language.
    pub fn drop_strings(self) -> &'static DropStrings {
        &self.0.drops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each language's string keeps the placeholders the page fills in.
    #[test]
    fn every_language_keeps_the_placeholders() {
        for lang in Lang::all() {
            let s = lang.drop_strings();
            assert!(s.lead_prequeue.contains("{time}"));
            assert!(s.lead_scheduled.contains("{time}"));
            for p in ["{draw}", "{rank}", "{n}", "{ok}"] {
                assert!(s.fair_result.contains(p), "{}: {p}", lang.code());
            }
            assert!(s.fair_not_in.contains("{draw}"));
            assert!(s.fair_unavailable.contains("{url}"));
        }
    }

    #[test]
    fn the_countdown_reads_as_the_script_writes_it() {
        let en = Lang::en();
        let d = en.drop_strings();
        assert_eq!(d.countdown(en, 3_725_000), "1 h 02 min 05 s");
        assert_eq!(d.countdown(en, 249_000), "4 min 09 s");
        assert_eq!(d.countdown(en, 6_001), "7 s");
        assert_eq!(d.countdown(en, 0), "0 s");
        let zh = Lang::get("zh").unwrap();
        assert_eq!(zh.drop_strings().countdown(zh, 3_725_000), "1小时02分05秒");
    }

    #[test]
    fn a_time_is_written_in_utc_before_the_script_localises_it() {
        assert_eq!(DropStrings::utc(1_795_771_800_000), "2026-11-27 09:30 UTC");
    }
}
