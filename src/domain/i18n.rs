//! Visitor-facing text in English and Simplified Chinese. Pages pick a language from
//! `?lang=` or `Accept-Language`; templates render these strings, and the same table is
//! handed to the browser script as JSON so live updates speak the page's language.
//! Placeholders: `{n}`, `{low}`, `{high}`, `{room}`.

use serde::Serialize;

pub mod drops;
pub mod told;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// `?lang=` wins; then the first supported tag in `Accept-Language` (by q order).
    pub fn negotiate(query: Option<&str>, accept_language: Option<&str>) -> Lang {
        if let Some(l) = query.and_then(Lang::from_tag) {
            return l;
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
                (!tag.is_empty()).then_some((q, tag))
            })
            .collect();
        tags.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        tags.into_iter()
            .find_map(|(_, t)| Lang::from_tag(t))
            .unwrap_or(Lang::En)
    }

    fn from_tag(tag: &str) -> Option<Lang> {
        let t = tag.to_ascii_lowercase();
        if t == "en" || t.starts_with("en-") {
            Some(Lang::En)
        } else if t == "zh" || t.starts_with("zh-") {
            Some(Lang::Zh)
        } else {
            None
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    pub fn strings(self) -> &'static Strings {
        match self {
            Lang::En => &EN,
            Lang::Zh => &ZH,
        }
    }
}

/// Every string a visitor can see.
#[derive(Debug, Serialize)]
pub struct Strings {
    pub html_lang: &'static str,
    pub other_lang_code: &'static str,
    pub other_lang_name: &'static str,
    /// The `lang` attribute of the link to the other language.
    pub other_lang_html: &'static str,
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
    pub ahead_one: &'static str,
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

pub static EN: Strings = Strings {
    html_lang: "en",
    other_lang_code: "zh",
    other_lang_name: "中文",
    other_lang_html: "zh-CN",
    waiting_room: "Waiting room",
    title_queued: "You're in line",
    lead_queued: "Thanks for waiting. We let people in strictly in the order they arrived, and this page updates by itself.",
    lead_queued_lanes: "Thanks for waiting. We let people in in the order they arrived, with a set share of places for priority lanes, and this page updates by itself.",
    footer_lanes: "Fair: first come, first served within each lane. Powered by Anteroom.",
    title_paused: "The line is paused",
    lead_paused: "Admissions are paused for a moment. You keep your place; the numbers start moving again as soon as they resume.",
    title_sold_out: "Sold out",
    lead_sold_out: "Everything available has been taken for now. If more become available, this page joins the line for you by itself; keep it open.",
    lead_sold_out_kept: "Everything available has been taken for now. You keep your place in case more become available, and this page moves on by itself.",
    title_closed: "This waiting room is closed",
    lead_closed: "The organiser has closed this waiting room for now. Keep this page open: it joins the line for you by itself as soon as the room opens.",
    lead_closed_kept: "The organiser has closed this waiting room for now. You keep your place in line, and this page moves on by itself when it opens again.",
    title_rejected: "This sale is not admitting anyone",
    lead_rejected: "The organiser is not letting anyone in or into the line right now. Keep this page open: it joins the line for you by itself as soon as the sale admits again.",
    lead_rejected_kept: "The organiser is not letting anyone in right now. You keep your place in line, and this page moves on by itself when the sale admits again.",
    title_scheduled: "The line has not opened yet",
    lead_scheduled: "This sale has a set start time. Keep this page open: it joins the line for you by itself as soon as the line opens.",
    title_prequeue: "You're in the pre-queue",
    lead_prequeue: "When the sale opens, everyone in the pre-queue is put in a random order, so there is no need to reload or to have arrived first. Keep this page open: it moves into the line by itself at the opening.",
    title_event_ended: "This sale has ended",
    lead_event_ended: "The sale this waiting room was for is over, and the line is closed. Thank you for waiting.",
    title_not_queued: "You're no longer in line",
    lead_not_queued: "The organiser emptied the line (or removed your place), so you are no longer waiting. You can join again at the back of the line.",
    title_no_show: "You missed your turn",
    lead_no_show: "You were let in, but did not reach the site within the time allowed, so your place went to the next person in line. You can join again at the back of the line.",
    title_admitted: "It's your turn",
    lead_admitted: "Taking you there now…",
    continue_link: "Continue",
    rejoin: "Join the line",
    position_label: "Your place in line",
    ahead_many: "{n} people ahead of you",
    ahead_one: "1 person ahead of you",
    ahead_none: "You're next!",
    ahead_none_paused: "No one is ahead of you",
    in_line: "{n} in line",
    in_line_label: "People in line",
    announce_place: "You are now number {n} in line.",
    eta_label: "Estimated wait",
    eta_range: "{low} – {high}",
    eta_minutes_range: "{low}–{high} min",
    eta_up_to: "up to {t}",
    eta_under_minute: "under a minute",
    eta_minutes: "{n} min",
    eta_hours: "{n} h",
    eta_unknown: "working it out…",
    eta_went_up: "The estimate went up: people ahead of you are taking longer than usual.",
    eta_went_down: "Good news: the line is moving faster than expected.",
    eta_explain: "Based on how long people have been staying once let in, and how many places free up.",
    you_were_away: "You were away for longer than {n} seconds, so you lost your place and joined the line again at the back.",
    eta_at_most: "not known yet (at most {t})",
    eta_at_most_minute: "not known yet (under a minute)",
    eta_paused: "on hold while the line is paused",
    reason_capacity_lowered: "The organiser is letting fewer people in at a time, so the wait is longer.",
    reason_capacity_raised: "The organiser is letting more people in at a time, so the wait is shorter.",
    reason_paused: "The line is paused, so there is no countdown. You keep your place.",
    reason_resumed: "The line is moving again.",
    reason_rate_limited: "People are let in at a fixed pace per minute; the estimate follows that pace.",
    reason_sessions_longer: "People who were let in are staying longer than usual, so the line moves more slowly.",
    reason_sessions_shorter: "People who were let in are leaving sooner than usual, so the line moves faster.",
    reason_places_restored: "The waiting room recovered from a fault; you kept your place.",
    reason_stock_may_run_out: "Fewer items are left than people ahead of you: it may sell out before your turn. You keep your place in case more are added.",
    reason_priority_lanes: "This line has priority lanes: people in them are let in alongside it, so your place can move back a little as they arrive.",
    reason_origin_busy: "The site is under strain, so fewer people are let in at a time until it recovers; the wait is longer.",
    progress_label: "Progress through the line",
    keep_open: "Keep this tab open. If you leave, we hold your place for {n} seconds.",
    keep_open_hidden: "If you only switch tabs or lock your phone, we hold it for {m} minutes.",
    live: "Live",
    updated_at: "updated {t}",
    support_code: "Support code",
    connecting: "Connecting…",
    reconnecting: "Reconnecting… your place is held for as long as the note below says.",
    polling: "Live updates are blocked here; checking every few seconds instead.",
    noscript: "This page refreshes itself every 20 seconds.",
    notify_button: "Notify me when it's my turn",
    notify_on: "We'll send a notification when it's your turn.",
    notify_denied: "Notifications are blocked in this browser; keep the tab open.",
    notify_title: "It's your turn!",
    notify_body: "Your place at {room} is ready.",
    tab_title_admitted: "✅ Your turn — {room}",
    footer: "Fair, first come first served. Powered by Anteroom.",
    err_unknown_room: "No such waiting room",
    err_unknown_room_lead: "Check the link you followed; this waiting room does not exist.",
    err_rate_limited: "Too many requests",
    err_rate_limited_lead: "This page was reloaded too often. You keep your place; it tries again by itself in {n} seconds.",
    retrying_in: "Trying again in {n} s…",
    err_not_found: "Nothing here",
    err_not_found_lead: "This address is not a waiting room. If a site sent you here, check the link it gave you.",
    err_unavailable: "We'll be right back",
    err_unavailable_lead: "The waiting room is having trouble right now. Please reload in a few seconds; you keep your place.",
    err_restoring: "The line is being restored",
    err_restoring_lead: "The waiting room's store restarted, and the places people already held are being put back first. New places open again in a moment; this page tries again by itself.",
    err_not_embeddable: "Not available here",
    gw_need_pass: "This page is behind a waiting room",
    gw_need_pass_lead: "Join the queue to continue; you will be let in when it is your turn.",
    gw_join_queue: "Join the queue",
    gw_refused: "The site is not answering",
    gw_refused_lead: "The site behind this address refused the connection. Please try again in a moment.",
    gw_timeout: "The site took too long to answer",
    gw_timeout_lead: "The site behind this address did not answer in time. Please try again in a moment.",
    gw_bad_request: "This address cannot be read",
    gw_bad_request_lead: "The address has a form that sites read in different ways (an encoded '/', a '\\', a '.' or '..' part). Please use the site's own links.",
    err_not_embeddable_lead: "This waiting room may not be embedded on this site.",
    pow_title: "Checking your browser",
    pow_lead: "This takes a few seconds and keeps bots from taking places. You join the line as soon as it is done (JavaScript is needed).",
    pow_progress: "Checking your browser… {n} %",
    pow_failed: "Your browser could not finish the check. Reload the page to try again.",
    err_places: "Your network already has its places in this line",
    err_places_lead: "Someone on the same network (an office, a school, a mobile network) already holds as many places as this line allows per network. Try again once one of them has been let in.",
    err_entry: "This line needs an invitation from the site",
    err_entry_lead: "Open the waiting room from the site's own link (sign in there first). The link you followed has no invitation, or it has expired or is for another line.",
    try_again: "Try again",
};

pub static ZH: Strings = Strings {
    html_lang: "zh-CN",
    other_lang_code: "en",
    other_lang_name: "English",
    other_lang_html: "en",
    waiting_room: "排队等候",
    title_queued: "您正在排队",
    lead_queued: "感谢您的耐心等待。我们严格按照到达顺序放行，本页面会自动更新。",
    lead_queued_lanes: "感谢您的耐心等待。我们按照到达顺序放行，并为优先通道保留固定比例的名额，本页面会自动更新。",
    footer_lanes: "公平排队：每条通道内先到先得。由 Anteroom 提供支持。",
    title_paused: "排队已暂停",
    lead_paused: "放行暂时暂停。您的位置会保留，恢复后数字会继续变化。",
    title_sold_out: "已售罄",
    lead_sold_out: "目前所有名额都已被领取。如有新增名额，本页面会自动为您排队，请保持页面打开。",
    lead_sold_out_kept:
        "目前所有名额都已被领取。您的位置会保留，以防有新增名额；本页面会自动更新。",
    title_closed: "等候室已关闭",
    lead_closed: "主办方暂时关闭了此等候室。请保持本页面打开：开放后会自动为您排队。",
    lead_closed_kept: "主办方暂时关闭了此等候室。您的排队位置会保留，重新开放后本页面会自动继续。",
    title_rejected: "本次发售暂不放行",
    lead_rejected: "主办方目前不放行任何人，也不接受排队。请保持本页面打开：恢复放行后会自动为您排队。",
    lead_rejected_kept: "主办方目前不放行任何人。您的排队位置会保留，恢复放行后本页面会自动继续。",
    title_scheduled: "队伍尚未开放",
    lead_scheduled: "本次发售有固定的开始时间。请保持本页面打开：队伍开放后会自动为您排队。",
    title_prequeue: "您已进入预排队",
    lead_prequeue: "发售开始时，预排队中的所有人会被随机排序，因此无需刷新，也无需抢先到达。请保持本页面打开：开始时会自动进入队伍。",
    title_event_ended: "本次发售已结束",
    lead_event_ended: "此等候室对应的发售已经结束，队伍已关闭。感谢您的等候。",
    title_not_queued: "您已不在队列中",
    lead_not_queued: "主办方清空了队伍（或移除了您的位置），您已不在等候中。您可以重新排到队尾。",
    title_no_show: "您错过了入场机会",
    lead_no_show: "您已获准入场，但未在规定时间内进入网站，因此您的名额已让给队伍中的下一位。您可以重新排到队尾。",
    title_admitted: "轮到您了",
    lead_admitted: "正在为您跳转……",
    continue_link: "继续",
    rejoin: "重新排队",
    position_label: "您的排队位置",
    ahead_many: "前面还有 {n} 人",
    ahead_one: "前面还有 1 人",
    ahead_none: "下一个就是您！",
    ahead_none_paused: "您前面没有人",
    in_line: "共 {n} 人排队",
    in_line_label: "排队人数",
    announce_place: "您现在排在第 {n} 位。",
    eta_label: "预计等待",
    eta_range: "{low} – {high}",
    eta_minutes_range: "{low}–{high} 分钟",
    eta_up_to: "最多 {t}",
    eta_under_minute: "不到 1 分钟",
    eta_minutes: "{n} 分钟",
    eta_hours: "{n} 小时",
    eta_unknown: "正在估算……",
    eta_went_up: "预计时间有所增加：前面的人用时比平常长。",
    eta_went_down: "好消息：队伍比预期移动得更快。",
    eta_explain: "根据已进入者的停留时间和空出名额的速度估算。",
    you_were_away: "您离开的时间超过了 {n} 秒，因此失去了原来的位置，已重新在队尾排队。",
    eta_at_most: "暂时无法估算（最多 {t}）",
    eta_at_most_minute: "暂时无法估算（不到一分钟）",
    eta_paused: "排队暂停期间不倒计时",
    reason_capacity_lowered: "主办方减少了同时放行的人数，因此等待时间变长。",
    reason_capacity_raised: "主办方增加了同时放行的人数，因此等待时间变短。",
    reason_paused: "排队已暂停，因此不倒计时。您的位置会保留。",
    reason_resumed: "队伍重新开始移动。",
    reason_rate_limited: "每分钟按固定速度放行，预计时间按此速度计算。",
    reason_sessions_longer: "已进入的人停留时间比平常长，因此队伍移动变慢。",
    reason_sessions_shorter: "已进入的人离开得比平常快，因此队伍移动变快。",
    reason_places_restored: "等候室已从故障中恢复，您保留了原来的位置。",
    reason_stock_may_run_out:
        "剩余数量少于排在您前面的人数：轮到您之前可能已售罄。您的位置会保留，以防补货。",
    reason_priority_lanes: "本队伍设有优先通道：优先通道中的人会与队伍交替进入，因此他们到达时您的位置可能会稍稍后移。",
    reason_origin_busy: "网站当前负载较高，在恢复之前同时放行的人数会减少，因此等待时间变长。",
    progress_label: "排队进度",
    keep_open: "请保持此页面打开。离开后，我们会为您保留位置 {n} 秒。",
    keep_open_hidden: "如果只是切换标签页或锁屏，我们会为您保留 {m} 分钟。",
    live: "实时",
    updated_at: "更新于 {t}",
    support_code: "客服查询码",
    connecting: "正在连接……",
    reconnecting: "正在重新连接……您的位置会按下方说明的时间保留。",
    polling: "此处无法实时推送，改为每隔几秒检查一次。",
    noscript: "本页面每 20 秒自动刷新一次。",
    notify_button: "轮到我时通知我",
    notify_on: "轮到您时我们会发送通知。",
    notify_denied: "此浏览器已屏蔽通知，请保持页面打开。",
    notify_title: "轮到您了！",
    notify_body: "您在 {room} 的名额已准备好。",
    tab_title_admitted: "✅ 轮到您了 — {room}",
    footer: "公平排队，先到先得。由 Anteroom 提供支持。",
    err_unknown_room: "等候室不存在",
    err_unknown_room_lead: "请检查您打开的链接，此等候室不存在。",
    err_rate_limited: "请求过于频繁",
    err_rate_limited_lead: "本页面刷新过于频繁。您的位置会保留，{n} 秒后会自动重试。",
    retrying_in: "{n} 秒后重试……",
    err_not_found: "这里什么都没有",
    err_not_found_lead: "此地址不是等候室。如果是某个网站把您带到这里，请检查它给您的链接。",
    err_unavailable: "马上回来",
    err_unavailable_lead: "等候室暂时出现问题，请几秒后刷新，您的位置会保留。",
    err_restoring: "正在恢复队列",
    err_restoring_lead: "等候室的存储刚刚重启，正在优先恢复大家原有的位置。新的位置稍后开放；本页会自动重试。",
    err_not_embeddable: "此处不可用",
    gw_need_pass: "此页面设有等候室",
    gw_need_pass_lead: "请先排队，轮到您时即可进入。",
    gw_join_queue: "去排队",
    gw_refused: "网站没有响应",
    gw_refused_lead: "此地址背后的网站拒绝了连接，请稍后再试。",
    gw_timeout: "网站响应超时",
    gw_timeout_lead: "此地址背后的网站未能及时响应，请稍后再试。",
    gw_bad_request: "无法读取此地址",
    gw_bad_request_lead: "此地址的写法会被不同网站读成不同的路径（编码的“/”、“\\”、“.”或“..”）。请使用网站自身的链接。",
    err_not_embeddable_lead: "此等候室不允许嵌入到该网站。",
    pow_title: "正在检查您的浏览器",
    pow_lead: "这需要几秒钟，可防止机器人抢占名额。完成后您将自动排入队列（需要启用 JavaScript）。",
    pow_progress: "正在检查您的浏览器… {n}%",
    pow_failed: "您的浏览器未能完成检查。请刷新页面重试。",
    err_places: "您所在的网络在此队列中的名额已满",
    err_places_lead: "同一网络（公司、学校或移动网络）中已有人占用了此队列允许每个网络持有的全部名额。请在其中有人入场后再试。",
    err_entry: "此队列需要网站的邀请",
    err_entry_lead: "请从网站提供的链接进入（先在网站登录）。您使用的链接没有邀请，或邀请已过期，或不属于此队列。",
    try_again: "重试",
};

impl Strings {
    /// A duration for people: "under a minute", "12 min", "2 h 5 min".
    pub fn duration(&self, secs: u64) -> String {
        if secs < 60 {
            return self.eta_under_minute.to_string();
        }
        let mins = secs.div_ceil(60);
        if mins < 90 {
            return self.eta_minutes.replace("{n}", &mins.to_string());
        }
        let h = mins / 60;
        let m = mins % 60;
        let hours = self.eta_hours.replace("{n}", &h.to_string());
        if m == 0 {
            hours
        } else {
            format!(
                "{hours} {}",
                self.eta_minutes.replace("{n}", &m.to_string())
            )
        }
    }

    /// "3–5 min", "up to 2 min", "1 h 30 min – 2 h", or one value when both ends read
    /// the same. (`static/queue.js` says it the same way.)
    pub fn eta(&self, low: u64, high: u64) -> String {
        let (l, h) = (self.duration(low), self.duration(high));
        if l == h {
            l
        } else if low < 60 {
            self.eta_up_to.replace("{t}", &h)
        } else if high.div_ceil(60) < 90 {
            self.eta_minutes_range
                .replace("{low}", &low.div_ceil(60).to_string())
                .replace("{high}", &high.div_ceil(60).to_string())
        } else {
            self.eta_range.replace("{low}", &l).replace("{high}", &h)
        }
    }

    /// The estimate as shown: a range, "not known yet (at most …)", or on hold.
    pub fn eta_shown(&self, eta: &crate::domain::eta::Eta, paused: bool) -> String {
        if paused {
            self.eta_paused.to_string()
        } else if !eta.known {
            if eta.high > 0 && eta.high < 60 {
                self.eta_at_most_minute.to_string()
            } else if eta.high > 0 {
                self.eta_at_most.replace("{t}", &self.duration(eta.high))
            } else {
                self.eta_unknown.to_string()
            }
        } else {
            self.eta(eta.low, eta.high)
        }
    }

    /// The sentence for an `eta_reason` code (`you_were_away` needs the timeout: see
    /// `you_were_away`).
    pub fn reason(&self, code: &str) -> Option<&'static str> {
        use crate::domain::eta::reason as r;
        Some(match code {
            r::CAPACITY_LOWERED => self.reason_capacity_lowered,
            r::CAPACITY_RAISED => self.reason_capacity_raised,
            r::PAUSED => self.reason_paused,
            r::RESUMED => self.reason_resumed,
            r::RATE_LIMITED => self.reason_rate_limited,
            r::SESSIONS_LONGER => self.reason_sessions_longer,
            r::SESSIONS_SHORTER => self.reason_sessions_shorter,
            r::PLACES_RESTORED => self.reason_places_restored,
            r::STOCK_MAY_RUN_OUT => self.reason_stock_may_run_out,
            r::PRIORITY_LANES => self.reason_priority_lanes,
            crate::domain::outflow::ORIGIN_BUSY => self.reason_origin_busy,
            _ => return None,
        })
    }

    pub fn ahead(&self, position: u64) -> String {
        match position {
            0 | 1 => self.ahead_none.to_string(),
            2 => self.ahead_one.to_string(),
            p => self.ahead_many.replace("{n}", &(p - 1).to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_beats_header_and_q_values_order_tags() {
        assert_eq!(Lang::negotiate(Some("zh"), Some("en")), Lang::Zh);
        assert_eq!(
            Lang::negotiate(None, Some("fr, zh-CN;q=0.8, en;q=0.5")),
            Lang::Zh
        );
        assert_eq!(Lang::negotiate(None, Some("en;q=0.9, zh-TW")), Lang::Zh);
        assert_eq!(Lang::negotiate(None, Some("de")), Lang::En);
        assert_eq!(Lang::negotiate(Some("xx"), None), Lang::En);
    }

    #[test]
    fn every_chinese_string_is_translated() {
        let en = serde_json::to_value(&EN).unwrap();
        let zh = serde_json::to_value(&ZH).unwrap();
        for (k, v) in zh.as_object().unwrap() {
            let s = v.as_str().unwrap();
            assert!(!s.is_empty(), "{k} is empty");
            if !["eta_range", "other_lang_code"].contains(&k.as_str()) {
                assert!(!s.contains("{n} in line"), "{k}");
                assert_ne!(Some(s), en[k].as_str(), "{k} is not translated");
            }
        }
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(EN.duration(30), "under a minute");
        assert_eq!(EN.duration(61), "2 min");
        assert_eq!(EN.duration(2 * 3600 + 300), "2 h 5 min");
        assert_eq!(EN.eta(120, 300), "2–5 min");
        assert_eq!(EN.eta(10, 20), "under a minute");
        assert_eq!(EN.eta(30, 100), "up to 2 min");
        assert_eq!(EN.eta(3000, 6000), "50 min – 1 h 40 min");
        assert_eq!(ZH.eta(120, 300), "2–5 分钟");
        assert_eq!(ZH.duration(600), "10 分钟");
        assert_eq!(EN.ahead(1), "You're next!");
        assert_eq!(EN.ahead(5), "4 people ahead of you");
        let unknown = |high| crate::domain::eta::Eta {
            seconds: high,
            low: 0,
            high,
            known: false,
        };
        assert_eq!(
            EN.eta_shown(&unknown(45), false),
            "not known yet (under a minute)"
        );
        assert_eq!(
            EN.eta_shown(&unknown(240), false),
            "not known yet (at most 4 min)"
        );
        assert_eq!(EN.eta_shown(&unknown(0), false), "working it out…");
    }
}
