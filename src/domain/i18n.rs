//! Visitor-facing text, in every language the instance serves. The words live in Fluent
//! resources (`i18n/<code>.ftl`, embedded in the binary, and an operator's `i18n_dir`):
//! [`catalog`] loads and checks them. Pages pick a language with [`Lang::negotiate_for`]
//! (`?lang=`, then `Accept-Language`, then the room's `default_language`); templates
//! render the language's tables, and the same tables are handed to the browser script as
//! JSON so live updates speak the page's language. In the tables each variable is left as
//! `{name}` (`{n}`, `{low}`, `{high}`, `{room}`…) for the script to fill in.

use serde::{Deserialize, Serialize};

pub mod catalog;
pub mod drops;
pub mod told;

use catalog::{Arg, Language};

/// A served language: a handle on the catalog's entry (cheap to copy).
#[derive(Clone, Copy)]
pub struct Lang(&'static Language);

impl PartialEq for Lang {
    fn eq(&self, other: &Lang) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}
impl Eq for Lang {}

impl std::fmt::Debug for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lang({})", self.0.code)
    }
}

/// What a room offers: its `languages` (empty: all the instance serves) and its
/// `default_language`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Offer<'a> {
    pub languages: &'a [String],
    pub default_language: Option<&'a str>,
}

impl Offer<'_> {
    fn allows(&self, l: &Language) -> bool {
        self.languages.is_empty()
            || self
                .languages
                .iter()
                .any(|c| c.eq_ignore_ascii_case(l.code))
    }
}

impl Lang {
    /// English, the reference language.
    #[cfg(test)]
    pub fn en() -> Lang {
        Lang(catalog::current().english())
    }

    /// The language served under a code or tag (`zh` → `zh-CN`), if any.
    #[cfg(test)]
    pub fn get(tag: &str) -> Option<Lang> {
        catalog::current().lookup(tag).map(Lang)
    }

    /// Every served language, English first.
    pub fn all() -> Vec<Lang> {
        catalog::current()
            .languages()
            .iter()
            .map(|l| Lang(l))
            .collect()
    }

    /// [`Lang::negotiate_for`] among all the instance serves (pages of no room).
    pub fn negotiate(query: Option<&str>, accept_language: Option<&str>) -> Lang {
        Lang::negotiate_for(query, accept_language, Offer::default())
    }

    /// `?lang=` wins if the room offers it; then the first tag of `Accept-Language` (by
    /// q order) the room offers (a tag finds its language with another region: `en-US` →
    /// `en`, `zh-TW` → `zh-TW`, `zh` → `zh-CN`); then the room's `default_language`;
    /// then English if offered, else the room's first language. An unknown `?lang=` is
    /// ignored: the page falls back as if it were absent.
    pub fn negotiate_for(
        query: Option<&str>,
        accept_language: Option<&str>,
        offer: Offer<'_>,
    ) -> Lang {
        let cat = catalog::current();
        let pick = |tag: &str| cat.lookup(tag).filter(|l| offer.allows(l));
        if let Some(l) = query.and_then(pick) {
            return Lang(l);
        }
        let mut tags: Vec<(f32, &str)> = accept_language
            .unwrap_or("")
            .split(',')
            .filter_map(|part| {
                let mut it = part.trim().split(';');
                let tag = it.next()?.trim();
                let q = it
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .and_then(|q| q.parse().ok())
                    .unwrap_or(1.0);
                (!tag.is_empty() && q > 0.0).then_some((q, tag))
            })
            .collect();
        // A stable sort: equal q values keep the header's order.
        tags.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        if let Some(l) = tags.into_iter().find_map(|(_, t)| pick(t)) {
            return Lang(l);
        }
        if let Some(l) = offer.default_language.and_then(pick) {
            return Lang(l);
        }
        let en = cat.english();
        if offer.allows(en) {
            return Lang(en);
        }
        offer
            .languages
            .iter()
            .find_map(|c| pick(c))
            .map(Lang)
            .unwrap_or(Lang(en))
    }

    /// The code it is served under (`en`, `zh-CN`): `?lang=`, `lang=""`.
    pub fn code(self) -> &'static str {
        self.0.code
    }

    /// Its own name for itself.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn dir(self) -> catalog::Direction {
        self.0.dir
    }

    /// The numbering system of its digits (`latn`, `arab`), for `Intl.NumberFormat`.
    pub fn numbering(self) -> &'static str {
        self.0.numbering
    }

    pub fn strings(self) -> &'static Strings {
        &self.0.strings
    }

    /// The plural forms of the messages that have them, for the page's script.
    pub fn plurals(
        self,
    ) -> &'static std::collections::BTreeMap<
        String,
        std::collections::BTreeMap<&'static str, &'static str>,
    > {
        &self.0.plurals
    }

    /// A message (its Fluent id: `ahead-many`) with real arguments.
    pub fn format(self, id: &str, args: &[(&str, Arg)]) -> String {
        self.0.format(id, args)
    }

    /// A whole number in the language's digits.
    pub fn number(self, n: u64) -> String {
        self.0.number(n)
    }

    /// A text's ASCII digits in the language's digits (`"02"` → `"٠٢"` in Arabic).
    pub fn digits(self, s: &str) -> String {
        catalog::localise_digits(s, self.0.numbering)
    }
}

/// Every string a visitor can see.
#[derive(Debug, Serialize, Deserialize)]
pub struct Strings {
    /// The language's code, for `lang=""` (not a message: set by the catalog).
    pub html_lang: &'static str,
    /// `ltr` or `rtl`, for `dir=""` (the message `language-direction`).
    pub dir: &'static str,
    /// The language switch's label (for screen readers).
    pub language_label: &'static str,
    pub waiting_room: &'static str,
    pub title_queued: &'static str,
    pub lead_queued: &'static str,
    /// The queued lead in a room with priority lanes (not first come first served overall).
    pub lead_queued_lanes: &'static str,
    pub footer_lanes: &'static str,
    pub title_paused: &'static str,
    pub lead_paused: &'static str,
    pub title_sold_out: &'static str,
    /// Sold out, for a visitor with no place (the page joins by itself if more come).
    pub lead_sold_out: &'static str,
    /// Sold out, for a visitor who holds a place (kept, in case of a top-up).
    pub lead_sold_out_kept: &'static str,
    pub title_closed: &'static str,
    /// Closed, for a visitor with no place (the page joins by itself when it opens).
    pub lead_closed: &'static str,
    /// Closed, for a visitor who holds a place (kept while closed).
    pub lead_closed_kept: &'static str,
    /// The room's `mode` is `reject`: the sale is not admitting anyone.
    pub title_rejected: &'static str,
    /// Rejecting, for a visitor with no place (the page joins by itself when it admits).
    pub lead_rejected: &'static str,
    /// Rejecting, for a visitor who holds a place (kept).
    pub lead_rejected_kept: &'static str,
    /// A scheduled event whose pre-queue (or line) has not opened yet.
    pub title_scheduled: &'static str,
    pub lead_scheduled: &'static str,
    /// In the event's pre-queue, waiting for the opening (and the shuffle).
    pub title_prequeue: &'static str,
    pub lead_prequeue: &'static str,
    /// The event ended (`closes_at` passed): the room closed with its own message.
    pub title_event_ended: &'static str,
    pub lead_event_ended: &'static str,
    pub title_not_queued: &'static str,
    pub lead_not_queued: &'static str,
    /// Let in, but the pass never reached the site within the room's claim timeout
    /// (`no_show`): the place went to the next in line; they may join again.
    pub title_no_show: &'static str,
    pub lead_no_show: &'static str,
    pub title_admitted: &'static str,
    pub lead_admitted: &'static str,
    pub continue_link: &'static str,
    pub rejoin: &'static str,
    pub position_label: &'static str,
    pub ahead_many: &'static str,
    pub ahead_none: &'static str,
    /// Place 1 while paused ("You're next!" would promise too much).
    pub ahead_none_paused: &'static str,
    pub in_line: &'static str,
    /// The (visually hidden) label of the line-length figure.
    pub in_line_label: &'static str,
    /// What a screen reader hears when the place changes; `{n}`: the place.
    pub announce_place: &'static str,
    pub eta_label: &'static str,
    pub eta_range: &'static str,
    /// Both ends in whole minutes: "2–5 min".
    pub eta_minutes_range: &'static str,
    /// The low end under a minute: "up to 2 min".
    pub eta_up_to: &'static str,
    pub eta_under_minute: &'static str,
    pub eta_minutes: &'static str,
    pub eta_hours: &'static str,
    pub eta_unknown: &'static str,
    pub eta_went_up: &'static str,
    pub eta_went_down: &'static str,
    pub eta_explain: &'static str,
    /// `{n}`: the heartbeat timeout in seconds.
    pub you_were_away: &'static str,
    /// Shown instead of a range when there is no basis yet; `{t}`: the worst case.
    pub eta_at_most: &'static str,
    /// Not known, but at most a minute (not "at most under a minute").
    pub eta_at_most_minute: &'static str,
    /// Shown instead of an estimate while paused (no countdown).
    pub eta_paused: &'static str,
    /// The sentence for each `eta_reason` code but `you_were_away`.
    pub reason_capacity_lowered: &'static str,
    pub reason_capacity_raised: &'static str,
    pub reason_paused: &'static str,
    pub reason_resumed: &'static str,
    pub reason_rate_limited: &'static str,
    pub reason_sessions_longer: &'static str,
    pub reason_sessions_shorter: &'static str,
    pub reason_places_restored: &'static str,
    pub reason_stock_may_run_out: &'static str,
    pub reason_priority_lanes: &'static str,
    pub reason_origin_busy: &'static str,
    pub progress_label: &'static str,
    pub keep_open: &'static str,
    /// After `keep_open` when a hidden page keeps the place longer; `{m}`: minutes.
    pub keep_open_hidden: &'static str,
    pub live: &'static str,
    /// Next to the live dot; `{t}`: the time of the last update from the server.
    pub updated_at: &'static str,
    /// Label of the visitor's support code (read out to the organiser's support).
    pub support_code: &'static str,
    pub connecting: &'static str,
    pub reconnecting: &'static str,
    pub polling: &'static str,
    pub noscript: &'static str,
    pub notify_button: &'static str,
    pub notify_on: &'static str,
    pub notify_denied: &'static str,
    pub notify_title: &'static str,
    pub notify_body: &'static str,
    pub tab_title_admitted: &'static str,
    pub footer: &'static str,
    pub err_unknown_room: &'static str,
    pub err_unknown_room_lead: &'static str,
    pub err_rate_limited: &'static str,
    /// `{n}`: seconds until the page tries again by itself.
    pub err_rate_limited_lead: &'static str,
    /// The countdown on the rate-limit page; `{n}`: seconds left.
    pub retrying_in: &'static str,
    pub err_not_found: &'static str,
    pub err_not_found_lead: &'static str,
    pub err_unavailable: &'static str,
    pub err_unavailable_lead: &'static str,
    /// `503 store_restoring`: the store lost its data and held places are being put back.
    pub err_restoring: &'static str,
    /// The page shows the countdown beside it.
    pub err_restoring_lead: &'static str,
    pub err_not_embeddable: &'static str,
    /// The built-in gateway's own pages (`503` without a pass, `502`, `504`).
    pub gw_need_pass: &'static str,
    pub gw_need_pass_lead: &'static str,
    pub gw_join_queue: &'static str,
    pub gw_refused: &'static str,
    pub gw_refused_lead: &'static str,
    pub gw_timeout: &'static str,
    pub gw_timeout_lead: &'static str,
    /// `400 bad_path`/`bad_host`: a request whose address the gateway will not guess at.
    pub gw_bad_request: &'static str,
    pub gw_bad_request_lead: &'static str,
    pub err_not_embeddable_lead: &'static str,
    /// A `challenge = "pow"` room: the newcomer's browser solves a proof of work first.
    pub pow_title: &'static str,
    pub pow_lead: &'static str,
    /// `{n}`: percent of the numbers tried.
    pub pow_progress: &'static str,
    pub pow_failed: &'static str,
    /// A new place refused: the visitor's network holds `max_places_per_ip` already.
    pub err_places: &'static str,
    pub err_places_lead: &'static str,
    /// An `entry = "token"` room reached without a valid enqueue token.
    pub err_entry: &'static str,
    pub err_entry_lead: &'static str,
    pub try_again: &'static str,
}

impl Lang {
    /// A duration for people: "under a minute", "12 min", "2 h 5 min".
    pub fn duration(self, secs: u64) -> String {
        if secs < 60 {
            return self.strings().eta_under_minute.to_string();
        }
        let mins = secs.div_ceil(60);
        if mins < 90 {
            return self.format("eta-minutes", &[("n", Arg::Num(mins))]);
        }
        let h = mins / 60;
        let m = mins % 60;
        let hours = self.format("eta-hours", &[("n", Arg::Num(h))]);
        if m == 0 {
            hours
        } else {
            format!(
                "{hours} {}",
                self.format("eta-minutes", &[("n", Arg::Num(m))])
            )
        }
    }

    /// "3–5 min", "up to 2 min", "1 h 30 min – 2 h", or one value when both ends read
    /// the same. (`static/queue.js` says it the same way.)
    pub fn eta(self, low: u64, high: u64) -> String {
        let (l, h) = (self.duration(low), self.duration(high));
        if l == h {
            l
        } else if low < 60 {
            self.format("eta-up-to", &[("t", Arg::Text(&h))])
        } else if high.div_ceil(60) < 90 {
            self.format(
                "eta-minutes-range",
                &[
                    ("low", Arg::Num(low.div_ceil(60))),
                    ("high", Arg::Num(high.div_ceil(60))),
                ],
            )
        } else {
            self.format(
                "eta-range",
                &[("low", Arg::Text(&l)), ("high", Arg::Text(&h))],
            )
        }
    }

    /// The estimate as shown: a range, "not known yet (at most …)", or on hold.
    pub fn eta_shown(self, eta: &crate::domain::eta::Eta, paused: bool) -> String {
        let t = self.strings();
        if paused {
            t.eta_paused.to_string()
        } else if !eta.known {
            if eta.high > 0 && eta.high < 60 {
                t.eta_at_most_minute.to_string()
            } else if eta.high > 0 {
                let d = self.duration(eta.high);
                self.format("eta-at-most", &[("t", Arg::Text(&d))])
            } else {
                t.eta_unknown.to_string()
            }
        } else {
            self.eta(eta.low, eta.high)
        }
    }

    /// The sentence for an `eta_reason` code (`you_were_away` needs the timeout: see
    /// `you_were_away`).
    pub fn reason(self, code: &str) -> Option<&'static str> {
        use crate::domain::eta::reason as r;
        let t = self.strings();
        Some(match code {
            r::CAPACITY_LOWERED => t.reason_capacity_lowered,
            r::CAPACITY_RAISED => t.reason_capacity_raised,
            r::PAUSED => t.reason_paused,
            r::RESUMED => t.reason_resumed,
            r::RATE_LIMITED => t.reason_rate_limited,
            r::SESSIONS_LONGER => t.reason_sessions_longer,
            r::SESSIONS_SHORTER => t.reason_sessions_shorter,
            r::PLACES_RESTORED => t.reason_places_restored,
            r::STOCK_MAY_RUN_OUT => t.reason_stock_may_run_out,
            r::PRIORITY_LANES => t.reason_priority_lanes,
            crate::domain::outflow::ORIGIN_BUSY => t.reason_origin_busy,
            _ => return None,
        })
    }

    /// "You're next!", "1 person ahead of you", "4 people ahead of you".
    pub fn ahead(self, position: u64) -> String {
        match position {
            0 | 1 => self.strings().ahead_none.to_string(),
            p => self.format("ahead-many", &[("n", Arg::Num(p - 1))]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(code: &str) -> Lang {
        Lang::get(code).unwrap()
    }

    #[test]
    fn query_beats_header_and_q_values_order_tags() {
        assert_eq!(Lang::negotiate(Some("zh"), Some("en")), l("zh-CN"));
        assert_eq!(
            Lang::negotiate(None, Some("xx, zh-CN;q=0.8, en;q=0.5")),
            l("zh-CN")
        );
        assert_eq!(Lang::negotiate(None, Some("xx")), Lang::en());
        assert_eq!(Lang::negotiate(Some("xx"), None), Lang::en());
        assert_eq!(
            Lang::negotiate(None, Some("zh-CN;q=0, en;q=0.1")),
            Lang::en()
        );
    }

    #[test]
    fn a_room_limits_the_languages_and_names_its_default() {
        let langs = vec!["zh-CN".to_string()];
        let offer = Offer {
            languages: &langs,
            default_language: None,
        };
        // English is not offered: the room's first language.
        assert_eq!(
            Lang::negotiate_for(Some("en"), Some("en"), offer),
            l("zh-CN")
        );
        let offer = Offer {
            languages: &[],
            default_language: Some("zh-CN"),
        };
        assert_eq!(Lang::negotiate_for(None, Some("xx"), offer), l("zh-CN"));
        // The visitor's header beats the room's default; `?lang=` beats both.
        assert_eq!(Lang::negotiate_for(None, Some("en"), offer), Lang::en());
        assert_eq!(Lang::negotiate_for(Some("en"), None, offer), Lang::en());
    }

    #[test]
    fn durations_read_naturally() {
        let en = Lang::en();
        let zh = l("zh");
        assert_eq!(en.duration(30), "under a minute");
        assert_eq!(en.duration(61), "2 min");
        assert_eq!(en.duration(2 * 3600 + 300), "2 h 5 min");
        assert_eq!(en.eta(120, 300), "2–5 min");
        assert_eq!(en.eta(10, 20), "under a minute");
        assert_eq!(en.eta(30, 100), "up to 2 min");
        assert_eq!(en.eta(3000, 6000), "50 min – 1 h 40 min");
        assert_eq!(zh.eta(120, 300), "2–5 分钟");
        assert_eq!(zh.duration(600), "10 分钟");
        assert_eq!(en.ahead(1), "You're next!");
        assert_eq!(en.ahead(2), "1 person ahead of you");
        assert_eq!(en.ahead(5), "4 people ahead of you");
        let unknown = |high| crate::domain::eta::Eta {
            seconds: high,
            low: 0,
            high,
            known: false,
        };
        assert_eq!(
            en.eta_shown(&unknown(45), false),
            "not known yet (under a minute)"
        );
        assert_eq!(
            en.eta_shown(&unknown(240), false),
            "not known yet (at most 4 min)"
        );
        assert_eq!(en.eta_shown(&unknown(0), false), "working it out…");
    }

    /// Units and loan words a language may well write as English does.
    const EXEMPT: [&str; 6] = [
        "eta_range",
        "eta_minutes_range",
        "eta_minutes",
        "eta_hours",
        "live",
        "dir",
    ];

    /// Every language but English says each thing in its own words (a copy of the
    /// English text slipped in is a missed translation); codes and figures are exempt.
    #[test]
    fn every_language_is_translated() {
        let en = serde_json::to_value(Lang::en().strings()).unwrap();
        for lang in Lang::all().into_iter().filter(|l| *l != Lang::en()) {
            let v = serde_json::to_value(lang.strings()).unwrap();
            let mut same = Vec::new();
            for (k, s) in v.as_object().unwrap() {
                let s = s.as_str().unwrap();
                assert!(!s.is_empty(), "{}: {k} is empty", lang.code());
                if !EXEMPT.contains(&k.as_str()) && Some(s) == en[k].as_str() {
                    same.push(k.clone());
                }
            }
            assert!(same.is_empty(), "{}: not translated: {same:?}", lang.code());
        }
    }
}
