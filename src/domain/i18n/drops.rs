//! What a visitor sees of a launch-day drop (a room with `opens_at`), in English and
//! Simplified Chinese: the states before the opening, the countdown, and the "How was
//! my place decided?" check. Kept beside [`super::Strings`] (which has the states'
//! titles and the ended event's message) and handed to the page's script the same way
//! (as `drop_strings`). Placeholders: `{time}` (a local time the
//! page writes), `{t}` (a duration), `{draw}`, `{rank}`, `{n}`, `{ok}`, `{url}`.

use serde::Serialize;

use super::Lang;

/// Every drop string a visitor can see.
#[derive(Debug, Serialize)]
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

pub static DROP_EN: DropStrings = DropStrings {
    lead_scheduled: "The line opens at {time}. Keep this page open: it joins the line for you by itself; there is no need to reload.",
    lead_prequeue: "At {time} everyone here gets a random place; joining earlier does not help. Keep this page open: it moves into the line by itself.",
    lead_queued_drop: "Thanks for waiting. Places were drawn at random for everyone in the pre-queue, and those who came later queue behind them in arrival order. This page updates by itself.",
    footer_drop: "Fair: a draw anyone can check, then first come, first served. Powered by Anteroom.",
    countdown_label: "Opens in",
    countdown_now: "Opening now…",
    unit_hours: "h",
    unit_minutes: "min",
    unit_seconds: "s",
    fair_summary: "How was my place decided?",
    fair_explain: "When the pre-queue opened, this sale published a commitment: the SHA-256 of a secret random seed. At the opening it revealed the seed, and everyone in the pre-queue was put in order by HMAC-SHA256(seed, their visitor id). This page checks your own place here, in your browser.",
    fair_checking: "Checking…",
    fair_result: "Your draw: {draw}…; rank {rank} of {n}; commitment matches: {ok}",
    fair_yes: "yes",
    fair_no: "no",
    fair_not_in: "Your draw {draw}… is not among the pre-queue's: you joined after the opening, so your place is by arrival.",
    fair_mismatch: "The revealed seed does not match the commitment published before the opening.",
    fair_unavailable: "This browser cannot run the check (it needs Web Crypto on a secure page). The record is at {url}.",
    fair_failed: "The check could not be completed: the fairness record could not be read. Trying again in a few seconds.",
};

pub static DROP_ZH: DropStrings = DropStrings {
    lead_scheduled: "排队将于 {time} 开放。请保持本页面打开：届时会自动为您排队，无需刷新。",
    lead_prequeue: "{time} 时，这里的每个人都会获得一个随机位置；提早加入并不会更靠前。请保持本页面打开：届时会自动进入队伍。",
    lead_queued_drop: "感谢您的耐心等候。预排队中每个人的位置由随机抽签决定，之后到达的人按到达顺序排在其后。本页面会自动更新。",
    footer_drop: "公平：人人可核验的抽签，之后先到先得。由 Anteroom 提供支持。",
    countdown_label: "距开放还有",
    countdown_now: "正在开放…",
    unit_hours: "小时",
    unit_minutes: "分",
    unit_seconds: "秒",
    fair_summary: "我的位置是如何决定的？",
    fair_explain: "预排队开放时，本次发售公布了一个承诺值：一个保密随机种子的 SHA-256。开放时公开了该种子，预排队中的每个人按 HMAC-SHA256(种子, 访客编号) 排序。本页面在您的浏览器中为您核对自己的位置。",
    fair_checking: "正在核对…",
    fair_result: "您的抽签值：{draw}…；排名第 {rank} 位，共 {n} 人；承诺值一致：{ok}",
    fair_yes: "是",
    fair_no: "否",
    fair_not_in: "您的抽签值 {draw}… 不在预排队名单中：您是在开放后加入的，位置按到达顺序排列。",
    fair_mismatch: "公开的种子与开放前公布的承诺值不一致。",
    fair_unavailable: "此浏览器无法进行核对（需要安全页面上的 Web Crypto）。记录位于 {url}。",
    fair_failed: "无法完成核对：未能读取公平性记录。几秒后自动重试。",
};

impl DropStrings {
    /// A countdown as the page's script writes it: `1 h 02 min 05 s`, `4 min 09 s`,
    /// `7 s` (Chinese without spaces: `1小时02分05秒`); whole seconds, rounded up.
    pub fn countdown(&self, lang: Lang, ms: u64) -> String {
        let s = ms.div_ceil(1000);
        let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60);
        let sep = if lang == Lang::Zh { "" } else { " " };
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
        let t = crate::config::schedule::format_rfc3339_ms(ms);
        match (t.get(..10), t.get(11..16)) {
            (Some(d), Some(hm)) => format!("{d} {hm} UTC"),
            _ => t,
        }
    }
}

impl Lang {
    /// The drop strings in this language.
    pub fn drop_strings(self) -> &'static DropStrings {
        match self {
            Lang::En => &DROP_EN,
            Lang::Zh => &DROP_ZH,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each language's string keeps the placeholders the page fills in.
    #[test]
    fn both_languages_keep_the_placeholders() {
        for s in [&DROP_EN, &DROP_ZH] {
            assert!(s.lead_prequeue.contains("{time}"));
            assert!(s.lead_scheduled.contains("{time}"));
            for p in ["{draw}", "{rank}", "{n}", "{ok}"] {
                assert!(s.fair_result.contains(p), "{p}");
            }
            assert!(s.fair_not_in.contains("{draw}"));
            assert!(s.fair_unavailable.contains("{url}"));
        }
    }

    #[test]
    fn the_countdown_reads_as_the_script_writes_it() {
        assert_eq!(DROP_EN.countdown(Lang::En, 3_725_000), "1 h 02 min 05 s");
        assert_eq!(DROP_EN.countdown(Lang::En, 249_000), "4 min 09 s");
        assert_eq!(DROP_EN.countdown(Lang::En, 6_001), "7 s");
        assert_eq!(DROP_EN.countdown(Lang::En, 0), "0 s");
        assert_eq!(DROP_ZH.countdown(Lang::Zh, 3_725_000), "1小时02分05秒");
    }

    #[test]
    fn a_time_is_written_in_utc_before_the_script_localises_it() {
        assert_eq!(DropStrings::utc(1_795_771_800_000), "2026-11-27 09:30 UTC");
    }
}
