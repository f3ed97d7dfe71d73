//! Server-rendered visitor pages: the queue page `GET /r/{room}`, the iframe widget
//! `GET /embed/{room}`, and the demo host page. Every page is an askama template; the
//! numbers are in the HTML so the page is useful before (or without) any script.

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse};
use askama::Template;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::error::ApiError;
use super::support::{
    client_ip, html, identity_cookie, pass_cookie_of, render, room_id, visitor_cookie, PAGE_CSP,
};
use crate::domain::admission::{Engine, VisitorView};
use crate::domain::enter::{EnterOutcome, EnterRequest};
use crate::domain::i18n::catalog::Arg;
use crate::domain::i18n::drops::DropStrings;
use crate::domain::i18n::told::{Said, ToldStrings};
use crate::domain::i18n::{Lang, Offer, Strings};
use crate::domain::identity::VISITOR_COOKIE;
use crate::domain::ratelimit::LimitedAction;
use crate::room::RoomConfig;
use crate::store::VisitorState;

/// Seconds between reloads when scripts are off.
pub const NOSCRIPT_REFRESH_SECS: u64 = 20;

mod brand;
mod custom;
mod preview;
pub(in crate::web) use preview::preview_page;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(home)
        .service(queue_page)
        .service(embed_page)
        .service(demo_host)
        .service(brand::brand_css);
}

/// A page's query. Every field is read leniently: a page route answers a page, never a
/// JSON error about its query (`?start=abc` is ignored, not refused).
#[derive(Deserialize, Default)]
#[serde(default)]
struct PageQuery {
    lang: Option<String>,
    #[serde(rename = "return")]
    ret: Option<String>,
    #[serde(deserialize_with = "lenient_u64")]
    start: Option<u64>,
    parent: Option<String>,
    /// An enqueue token the site signed (one place per person).
    enqueue_token: Option<String>,
    /// `1`: the visitor chose to join again ("Join the line"); a no-show is then queued.
    rejoin: Option<String>,
}

fn lenient_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    Ok(s.and_then(|s| s.trim().parse().ok()))
}

/// The page's query, or an empty one when it cannot be read at all.
fn page_query(req: &HttpRequest) -> PageQuery {
    web::Query::<PageQuery>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

/// What `static/queue.js` is told, as a `data-config` attribute.
#[derive(Serialize)]
struct ScriptConfig<'a> {
    room: &'a str,
    room_name: &'a str,
    lang: &'static str,
    /// `ltr` or `rtl`.
    dir: &'static str,
    /// The numbering system of the language's digits (`latn`, `arab`): the script writes
    /// live figures with `Intl.NumberFormat` in it, as the server writes them.
    numbering: &'static str,
    ws_path: String,
    status_path: String,
    /// Where the page says it went to the background (`navigator.sendBeacon`).
    away_path: String,
    join_path: String,
    embed: bool,
    parent_origin: Option<String>,
    state: VisitorState,
    position: u64,
    queue_length: u64,
    eta_seconds: u64,
    start: u64,
    /// Whether the visitor holds a place (a newcomer on a closed or sold-out room does
    /// not: the page then joins by itself when the room opens again).
    has_place: bool,
    /// The page was rendered without joining: the script solves the room's proof of
    /// work, then joins.
    pow_check: bool,
    /// The room has priority lanes (the queued lead says so).
    lanes: bool,
    /// The enqueue token the page was opened with: the script's own joins (after a proof
    /// of work, the widget's first join, a join again) bring it, so they count as the
    /// token's person, in the token's lane.
    enqueue_token: Option<String>,
    /// The place receipt of the view the page was rendered with (see `queue.js`).
    place_receipt: Option<String>,
    support_code: String,
    keep_open: String,
    /// The sentence for `eta_reason: "you_were_away"`, with the room's timeout in it.
    away_note: String,
    /// The visitor's id (the part of the visitor token before the dot): what a drop's
    /// shuffle ordered by, so the page can check its own rank.
    visitor_id: Option<String>,
    /// A drop's times (seconds since the epoch; none outside a drop) and the store's
    /// clock (ms) the page was rendered at: the countdown runs on it.
    opens_at: Option<u64>,
    prequeue_opens_at: Option<u64>,
    now_ms: u64,
    /// `event_ended` on a room closed by its event's end.
    closed_reason: Option<&'static str>,
    strings: &'static Strings,
    drop_strings: &'static DropStrings,
    told_strings: &'static ToldStrings,
    /// For each message with plural forms (`ahead_many`, `in_line`…, by its key in the
    /// tables above): its text per CLDR plural category; the script picks one with
    /// `Intl.PluralRules`.
    plurals: &'static BTreeMap<String, BTreeMap<&'static str, &'static str>>,
    /// Every `message` code's headline and lead, and every note code's sentence: the
    /// script words what the server decided with these, and decides nothing itself.
    messages: BTreeMap<&'static str, Said>,
    notes: BTreeMap<&'static str, String>,
    /// The notes the page was rendered with (a sticky one stays until dismissed).
    initial_notes: Vec<&'static str>,
    /// The notes the page keeps until the visitor dismisses them.
    sticky_notes: &'static [&'static str],
}

#[derive(Template)]
#[template(path = "queue.html")]
struct QueuePage {
    t: &'static Strings,
    d: &'static DropStrings,
    /// A drop before its opening: the countdown is shown (and runs in the script).
    counting: bool,
    /// The countdown as rendered (the script takes over on the server's clock).
    countdown: String,
    x: &'static ToldStrings,
    footer: &'static str,
    room_name: String,
    state: &'static str,
    /// The `message` code the page was rendered with.
    message: &'static str,
    title: &'static str,
    lead: String,
    waiting: bool,
    /// Which figures show (`domain::told::figure`).
    show_place: bool,
    show_eta: bool,
    show_progress: bool,
    show_chances: bool,
    chances: String,
    /// A sticky note is shown: the "Got it" button with it.
    sticky: bool,
    /// Reloads itself without scripts (not where scripts are needed: proof of work).
    noscript_refresh: bool,
    /// The place, in the language's digits.
    position: String,
    ahead: String,
    in_line: String,
    eta: String,
    progress: u64,
    keep_open: String,
    /// The note under the estimate: why the place is what it is, or how it is estimated.
    eta_note: String,
    refresh_secs: u64,
    refresh_url: String,
    rejoin_url: String,
    /// The language switch: the room's other languages (none when it offers one), under
    /// the page language's own name.
    languages: Vec<LangLink>,
    lang_name: &'static str,
    support_code: String,
    config: String,
    /// `[rooms.brand]`: title, logo, message and the colours' stylesheet.
    brand: brand::BrandView,
}

/// One entry of the page's language switch.
struct LangLink {
    code: &'static str,
    /// The language's name for itself.
    name: &'static str,
    url: String,
}

#[derive(Template)]
#[template(path = "embed.html")]
struct EmbedPage {
    t: &'static Strings,
    x: &'static ToldStrings,
    /// A drop's countdown and fairness check (filled in by the script).
    d: &'static DropStrings,
    room_name: String,
    config: String,
    /// `[rooms.brand]`: title, logo, message and the colours' stylesheet.
    brand: brand::BrandView,
}

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage {
    t: &'static Strings,
    /// The page's code (`data-message`): `unavailable`, `rate_limited`, `restoring`,
    /// `too_many_places`, … (docs/visitor-page.md#error-pages).
    message: &'static str,
    title: &'static str,
    lead: String,
    /// No "Try again" when trying again cannot help (an unknown room).
    retry_url: Option<String>,
    /// Set on the rate-limit page: it counts down and reloads by itself.
    retry_after_secs: Option<u64>,
    /// "Trying again in 5 s…", the seconds in the language's digits.
    retrying: String,
}

#[derive(Template)]
#[template(path = "demo_host.html")]
struct DemoHostPage {
    queue_base: String,
    room: String,
}

/// How long the outage page waits before it tries again by itself (seconds).
pub const OUTAGE_RETRY_SECS: u64 = 5;

/// An error as a page in the visitor's language.
pub(super) fn error_page(lang: Lang, e: &ApiError, retry_url: String) -> HttpResponse {
    error_page_for(lang, e, retry_url, true)
}

/// [`error_page`], saying whether the visitor may hold a place (`may_hold_place`: false
/// for a first-time visitor, who has none to keep).
pub(super) fn error_page_for(
    lang: Lang,
    e: &ApiError,
    retry_url: String,
    may_hold_place: bool,
) -> HttpResponse {
    let (t, x) = (lang.strings(), lang.told_strings());
    // Every page that trying again can help tries again by itself, with a countdown.
    let retry_after_secs = match e {
        ApiError::RateLimited { retry_after_secs }
        | ApiError::Restoring {
            retry_after_secs, ..
        } => Some(*retry_after_secs),
        ApiError::TooManyPlaces(_) => Some(super::error::TOO_MANY_PLACES_RETRY_SECS),
        ApiError::Unavailable => Some(OUTAGE_RETRY_SECS),
        _ => None,
    };
    let (message, title, lead, retry) = match e {
        ApiError::UnknownRoom(_) => (
            "unknown_room",
            t.err_unknown_room,
            t.err_unknown_room_lead.into(),
            None,
        ),
        ApiError::NotFound(_) => (
            "not_found",
            t.err_not_found,
            t.err_not_found_lead.into(),
            None,
        ),
        ApiError::RateLimited { retry_after_secs } => (
            "rate_limited",
            t.err_rate_limited,
            lang.format(
                "err-rate-limited-lead",
                &[("n", Arg::Num(*retry_after_secs))],
            ),
            Some(retry_url),
        ),
        ApiError::Restoring { .. } => (
            "restoring",
            t.err_restoring,
            t.err_restoring_lead.into(),
            Some(retry_url),
        ),
        ApiError::Forbidden(_) => (
            "not_embeddable",
            t.err_not_embeddable,
            t.err_not_embeddable_lead.into(),
            None,
        ),
        ApiError::TooManyPlaces(_) => (
            "too_many_places",
            t.err_places,
            x.err_places_retry.into(),
            Some(retry_url),
        ),
        ApiError::Unauthorized { code, .. } if code.starts_with("token_") => {
            ("entry_required", t.err_entry, t.err_entry_lead.into(), None)
        }
        ApiError::Unavailable if !may_hold_place => (
            "unavailable_newcomer",
            t.err_unavailable,
            x.err_unavailable_newcomer.into(),
            Some(retry_url),
        ),
        ApiError::Unavailable => (
            "unavailable",
            t.err_unavailable,
            x.err_unavailable_kept.into(),
            Some(retry_url),
        ),
        _ => (
            "error",
            t.err_unavailable,
            t.err_unavailable_lead.into(),
            Some(retry_url),
        ),
    };
    let mut res = html(
        actix_web::ResponseError::status_code(e),
        render(MessagePage {
            t,
            message,
            title,
            lead,
            retry_url: retry,
            retry_after_secs,
            retrying: retry_after_secs
                .map(|n| t.retrying_in.replace("{n}", &lang.number(n)))
                .unwrap_or_default(),
        }),
        PAGE_CSP,
    );
    if let Some(secs) = retry_after_secs {
        res.headers_mut()
            .insert(actix_web::http::header::RETRY_AFTER, secs.into());
    }
    res
}

fn lang_of(req: &HttpRequest, q: Option<&str>) -> Lang {
    let accept = req
        .headers()
        .get("accept-language")
        .and_then(|v| v.to_str().ok());
    Lang::negotiate(q, accept)
}

/// The page's language among those the room offers (`languages`, `default_language`).
fn room_lang(req: &HttpRequest, q: Option<&str>, cfg: &RoomConfig) -> Lang {
    let accept = req
        .headers()
        .get("accept-language")
        .and_then(|v| v.to_str().ok());
    Lang::negotiate_for(q, accept, room_offer(cfg))
}

fn room_offer(cfg: &RoomConfig) -> Offer<'_> {
    Offer {
        languages: &cfg.languages,
        default_language: cfg.default_language.as_deref(),
    }
}

/// Percent of the way from where the visitor started to the front.
fn progress(start: u64, position: u64) -> u64 {
    if position == 0 {
        return 100;
    }
    // Counted to the front *and through the door*: place 1 of 1 is half-way, not at 0.
    let start = start.max(position);
    ((start + 1 - position) * 100 / (start + 1)).min(99)
}

/// Random mode's figure: the share of the people waiting let in within the wait's
/// quantiles (`static/queue.js` words it the same way).
fn chances(lang: Lang, view: &VisitorView) -> String {
    let (t, x) = (lang.strings(), lang.told_strings());
    if view.state == VisitorState::Paused {
        return x.chances_paused.to_string();
    }
    if !view.eta_known {
        return if view.eta_high_seconds > 0 {
            let d = lang.duration(view.eta_high_seconds);
            lang.format("told-chances-unknown", &[("t", Arg::Text(&d))])
        } else {
            t.eta_unknown.to_string()
        };
    }
    let (median, low, high) = (
        lang.duration(view.eta_seconds),
        lang.duration(view.eta_low_seconds),
        lang.duration(view.eta_high_seconds),
    );
    lang.format(
        "told-chances",
        &[
            ("n", Arg::Num(view.queue_length)),
            ("median", Arg::Text(&median)),
            ("low", Arg::Text(&low)),
            ("high", Arg::Text(&high)),
        ],
    )
}

/// The notes as the page shows them, by code: the timeout in `you_were_away`, the
/// event's times (UTC here; the script writes them in the visitor's time zone).
fn note_text(lang: Lang, code: &str, cfg: &RoomConfig) -> String {
    let Some(s) = note_sentence(lang, code, cfg) else {
        return String::new();
    };
    let utc = |ms: Option<u64>| ms.map(DropStrings::utc).unwrap_or_default();
    s.replace("{time}", &utc(cfg.prequeue_opens_at))
        .replace("{open}", &utc(cfg.opens_at))
}

/// A note's sentence, with the room's heartbeat timeout in `you_were_away` (its plural
/// form chosen by the count); `{time}`/`{open}` are left for the caller.
fn note_sentence(lang: Lang, code: &str, cfg: &RoomConfig) -> Option<String> {
    if code == crate::domain::eta::reason::YOU_WERE_AWAY {
        return Some(away_note(lang, cfg));
    }
    lang.note(code).map(str::to_string)
}

fn away_note(lang: Lang, cfg: &RoomConfig) -> String {
    lang.format(
        "you-were-away",
        &[("n", Arg::Num(cfg.heartbeat_timeout_secs))],
    )
}

fn query_string(pairs: &[(&str, String)]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

/// `GET /r/{room}`: join (idempotently, by cookie) and either send the visitor on with
/// a pass or show the queue page.
#[get("/r/{room}")]
async fn queue_page(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    let q = page_query(&req);
    let lang = lang_of(&req, q.lang.as_deref());
    let retry = req.uri().to_string();
    // A visitor who brings no identity holds no place: an outage page must not say
    // "you keep your place" to them.
    let known = req.cookie(VISITOR_COOKIE).is_some();
    match queue_page_inner(&req, &room, &q, &engine, lang).await {
        Ok(res) => res,
        Err(e) => error_page_for(lang, &e, retry, known),
    }
}

async fn queue_page_inner(
    req: &HttpRequest,
    room: &str,
    q: &PageQuery,
    engine: &Engine,
    lang: Lang,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(room)?;
    engine.check_ip_limit(client_ip(req, engine), LimitedAction::Join)?;
    let cookie = req
        .cookie(VISITOR_COOKIE)
        .and_then(|c| engine.visitors().verify(c.value()));
    // A newcomer in a proof-of-work room gets a page that does not join (its script joins
    // once solved, and that join is what counts against the per-visitor limit).
    let outcome = engine
        .enter(EnterRequest {
            room: &room,
            visitor: cookie.as_ref(),
            enqueue_token: q.enqueue_token.as_deref(),
            pow_solution: None,
            place_receipt: None,
            ip: client_ip(req, engine),
            return_to: q.ret.as_deref(),
            count_as: Some(LimitedAction::Join),
            rejoin: q.rejoin.as_deref() == Some("1"),
        })
        .await?;
    let (visitor, view, cfg) = match outcome {
        EnterOutcome::Joined { visitor, view, cfg } => (visitor, view, cfg),
        EnterOutcome::ProofNeeded { visitor, cfg, .. } => {
            let lang = room_lang(req, q.lang.as_deref(), &cfg);
            return verifying_page(engine, &room, &cfg, &visitor, q, lang).await;
        }
        EnterOutcome::StoreDown { visitor } => {
            // Keep the identity the join was made under: the reload finds the place.
            let mut res = error_page_for(
                lang,
                &ApiError::Unavailable,
                req.uri().to_string(),
                cookie.is_some(),
            );
            let _ = res.add_cookie(&identity_cookie(engine, &visitor));
            return Ok(res);
        }
        // The page brings no place receipt.
        EnterOutcome::Restored { .. } => {
            return Err(ApiError::Internal("a page join restored a place".into()))
        }
    };
    let lang = room_lang(req, q.lang.as_deref(), &cfg);
    let vid_cookie = visitor_cookie(engine, &view);

    if let (Some(url), Some(pass_cookie)) = (&view.redirect_url, pass_cookie_of(engine, &view)) {
        return Ok(HttpResponse::SeeOther()
            .insert_header(("Location", url.clone()))
            .insert_header(("Cache-Control", "no-store"))
            .cookie(vid_cookie)
            .cookie(pass_cookie)
            .finish());
    }

    let grant = engine
        .visitors()
        .page_grant(&room, &visitor, crate::clock::wall_ms());
    let grace = engine.settings().reaper.hidden_grace_secs;
    let page = queue_page_body(&room, &cfg, &view, q, lang, Some(&grant), grace);
    let mut res = custom::respond(engine.settings(), &cfg, &view, page, lang.code());
    let _ = res.add_cookie(&vid_cookie);
    Ok(res)
}

/// The page for a newcomer in a `challenge = "pow"` room: rendered without joining (the
/// script solves the proof of work in a worker, then joins and listens as usual), with
/// the visitor's identity cookie so the join and the socket are the same visitor.
async fn verifying_page(
    engine: &Engine,
    room: &str,
    cfg: &RoomConfig,
    visitor: &crate::domain::identity::VisitorId,
    q: &PageQuery,
    lang: Lang,
) -> Result<HttpResponse, ApiError> {
    let view = engine.status(room, visitor).await?;
    let t = lang.strings();
    let grant = engine
        .visitors()
        .page_grant(room, visitor, crate::clock::wall_ms());
    let grace = engine.settings().reaper.hidden_grace_secs;
    let mut page = queue_page_body(room, cfg, &view, q, lang, Some(&grant), grace);
    page.state = "verifying";
    page.message = crate::domain::told::message::VERIFYING;
    page.title = t.pow_title;
    page.lead = t.pow_lead.into();
    // Without scripts the check cannot run: say so, never reload forever.
    page.noscript_refresh = false;
    (
        page.waiting,
        page.show_place,
        page.show_eta,
        page.show_progress,
    ) = (false, false, false, false);
    page.show_chances = false;
    let mut config: serde_json::Value =
        serde_json::from_str(&page.config).map_err(|e| ApiError::Internal(e.to_string()))?;
    config["pow_check"] = serde_json::json!(true);
    page.config = config.to_string();
    let mut res = custom::respond(engine.settings(), cfg, &view, page, lang.code());
    let _ = res.add_cookie(&identity_cookie(engine, visitor));
    Ok(res)
}

/// The "Join the line" address: the room's page with the visitor's language and return
/// address kept.
fn rejoin_url(room: &str, q: &PageQuery, lang: Lang) -> String {
    let mut pairs = vec![("lang", lang.code().to_string())];
    if let Some(r) = &q.ret {
        pairs.push(("return", r.clone()));
    }
    pairs.push(("rejoin", "1".into()));
    format!("/r/{room}?{}", query_string(&pairs))
}

/// "Keep this tab open…", and how long a place is held while the page is in the
/// background (`reaper.hidden_grace_secs`) when that is longer.
fn keep_open(lang: Lang, cfg: &RoomConfig, hidden_grace_secs: u64) -> String {
    let mut s = lang.format("keep-open", &[("n", Arg::Num(cfg.heartbeat_timeout_secs))]);
    if hidden_grace_secs > cfg.heartbeat_timeout_secs {
        s.push(' ');
        s.push_str(&lang.format(
            "keep-open-hidden",
            &[("m", Arg::Num(hidden_grace_secs.div_ceil(60)))],
        ));
    }
    s
}

/// A drop before its opening: the lead with the time in it (in UTC here; the script
/// writes it in the visitor's time zone) and the countdown, on the store's clock.
struct DropTexts {
    lead: String,
    countdown: String,
}

fn drop_texts(lang: Lang, cfg: &RoomConfig, view: &VisitorView) -> Option<DropTexts> {
    let d = lang.drop_strings();
    let lead = lang.said(view.message)?.lead;
    let at = match view.state {
        VisitorState::Scheduled => cfg.prequeue_opens_at.or(cfg.opens_at)?,
        VisitorState::Prequeue => cfg.opens_at?,
        _ => return None,
    };
    let now = view.now_ms.unwrap_or_else(crate::clock::wall_ms);
    Some(DropTexts {
        lead: lead.replace("{time}", &DropStrings::utc(at)),
        countdown: d.countdown(lang, at.saturating_sub(now)),
    })
}

/// Where the script runs: the queue page (with its socket grant, if any) or the widget
/// (`/embed/…`, with the parent page's origin).
enum Host<'a> {
    Page { grant: Option<&'a str> },
    Widget { parent_origin: String },
}

/// The script's configuration.
fn script_config(
    room: &str,
    cfg: &RoomConfig,
    view: Option<&VisitorView>,
    q: &PageQuery,
    lang: Lang,
    host: Host<'_>,
    hidden_grace_secs: u64,
) -> String {
    let (parent_origin, grant) = match host {
        Host::Page { grant } => (None, grant),
        Host::Widget { parent_origin } => (Some(parent_origin), None),
    };
    let mut ws_query = Vec::new();
    if let Some(r) = &q.ret {
        ws_query.push(("return", r.clone()));
    }
    if let Some(g) = grant {
        ws_query.push(("grant", g.to_string()));
    }
    let ws_qs = query_string(&ws_query);
    let position = view.map(|v| v.position).unwrap_or(0);
    let told_table = lang.told_table();
    let c = ScriptConfig {
        room,
        room_name: cfg.display_name(),
        lang: lang.code(),
        dir: lang.dir().as_str(),
        numbering: lang.numbering(),
        ws_path: if ws_qs.is_empty() {
            format!("/r/{room}/ws")
        } else {
            format!("/r/{room}/ws?{ws_qs}")
        },
        status_path: format!("/api/rooms/{room}/status"),
        away_path: format!("/api/rooms/{room}/away"),
        join_path: format!("/api/rooms/{room}/join"),
        embed: parent_origin.is_some(),
        parent_origin,
        state: view.map(|v| v.state).unwrap_or(VisitorState::NotQueued),
        position,
        queue_length: view.map(|v| v.queue_length).unwrap_or(0),
        eta_seconds: view.map(|v| v.eta_seconds).unwrap_or(0),
        start: q.start.unwrap_or(0).max(position),
        has_place: position > 0,
        pow_check: false,
        lanes: !cfg.lanes.is_empty(),
        enqueue_token: q.enqueue_token.clone(),
        place_receipt: view.and_then(|v| v.place_receipt.clone()),
        support_code: view.map(|v| v.support_code.clone()).unwrap_or_default(),
        keep_open: keep_open(lang, cfg, hidden_grace_secs),
        away_note: away_note(lang, cfg),
        visitor_id: view.and_then(|v| {
            v.visitor_token
                .split_once('.')
                .map(|(id, _)| id.to_string())
        }),
        opens_at: cfg.opens_at.map(|ms| ms / 1000),
        prequeue_opens_at: cfg.prequeue_opens_at.map(|ms| ms / 1000),
        now_ms: view
            .and_then(|v| v.now_ms)
            .unwrap_or_else(crate::clock::wall_ms),
        closed_reason: view.and_then(|v| v.closed_reason),
        strings: lang.strings(),
        drop_strings: lang.drop_strings(),
        told_strings: lang.told_strings(),
        plurals: lang.plurals(),
        messages: told_table.0,
        notes: told_table
            .1
            .into_iter()
            .map(|(c, s)| (c, note_sentence(lang, c, cfg).unwrap_or_else(|| s.into())))
            .collect(),
        initial_notes: view.map(|v| v.notes.clone()).unwrap_or_default(),
        sticky_notes: crate::domain::told::note::STICKY,
    };
    // unwrap: this struct always serialises.
    serde_json::to_string(&c).unwrap()
}

fn queue_page_body(
    room: &str,
    cfg: &RoomConfig,
    view: &VisitorView,
    q: &PageQuery,
    lang: Lang,
    grant: Option<&str>,
    hidden_grace_secs: u64,
) -> QueuePage {
    let t = lang.strings();
    // What the visitor is told is the view's decision (domain::told); the page words it.
    let said = lang.said(view.message).unwrap_or_else(|| {
        lang.said(crate::domain::told::message::QUEUED)
            .unwrap_or_default()
    });
    let kind = crate::domain::told::RoomKind::of(cfg);
    let lanes = kind.lanes;
    let is_drop = kind.drop;
    let shows = |f: &str| view.figures.contains(&f);
    use crate::domain::told::{figure, note};
    let notes: Vec<String> = view
        .notes
        .iter()
        .map(|c| note_text(lang, c, cfg))
        .filter(|s| !s.is_empty())
        .collect();
    let drop = drop_texts(lang, cfg, view);
    let start = q.start.unwrap_or(0).max(view.position);
    let mut refresh = vec![
        ("start", start.to_string()),
        ("lang", lang.code().to_string()),
    ];
    if let Some(r) = &q.ret {
        refresh.push(("return", r.clone()));
    }
    let offered: Vec<Lang> = Lang::all()
        .into_iter()
        .filter(|l| {
            cfg.languages.is_empty()
                || cfg
                    .languages
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(l.code()))
        })
        .collect();
    let languages = if offered.len() < 2 {
        Vec::new()
    } else {
        offered
            .into_iter()
            .filter(|l| *l != lang)
            .map(|l| {
                let mut pairs = vec![("lang", l.code().to_string()), ("start", start.to_string())];
                if let Some(r) = &q.ret {
                    pairs.push(("return", r.clone()));
                }
                LangLink {
                    code: l.code(),
                    name: l.name(),
                    url: format!("/r/{room}?{}", query_string(&pairs)),
                }
            })
            .collect()
    };
    QueuePage {
        t,
        d: lang.drop_strings(),
        counting: drop.is_some(),
        countdown: drop
            .as_ref()
            .map(|d| d.countdown.clone())
            .unwrap_or_default(),
        footer: if is_drop {
            lang.drop_strings().footer_drop
        } else if kind.random {
            lang.told_strings().footer_random
        } else if lanes {
            t.footer_lanes
        } else {
            t.footer
        },
        x: lang.told_strings(),
        room_name: cfg.display_name().to_string(),
        state: view.state.as_str(),
        message: view.message,
        title: said.title,
        lead: drop
            .as_ref()
            .map_or_else(|| said.lead.to_string(), |d| d.lead.clone()),
        waiting: matches!(view.state, VisitorState::Queued | VisitorState::Paused),
        show_place: shows(figure::PLACE),
        show_eta: shows(figure::ETA),
        show_progress: shows(figure::PROGRESS),
        show_chances: shows(figure::CHANCES),
        chances: chances(lang, view),
        sticky: view.notes.iter().any(|c| note::STICKY.contains(c)),
        noscript_refresh: true,
        position: lang.number(view.position),
        ahead: if view.state == VisitorState::Paused && view.position <= 1 {
            t.ahead_none_paused.to_string()
        } else {
            lang.ahead(view.position)
        },
        in_line: lang.format("in-line", &[("n", Arg::Num(view.queue_length))]),
        eta: if view.position > 0 {
            lang.eta_shown(&view.eta(), view.state == VisitorState::Paused)
        } else {
            String::new()
        },
        progress: progress(start, view.position),
        keep_open: keep_open(lang, cfg, hidden_grace_secs),
        eta_note: notes.join(" "),
        refresh_secs: NOSCRIPT_REFRESH_SECS,
        refresh_url: format!("/r/{room}?{}", query_string(&refresh)),
        rejoin_url: rejoin_url(room, q, lang),
        languages,
        lang_name: lang.name(),
        support_code: view.support_code.clone(),
        config: script_config(
            room,
            cfg,
            Some(view),
            q,
            lang,
            Host::Page { grant },
            hidden_grace_secs,
        ),
        brand: brand::BrandView::of(cfg, lang.code()),
    }
}

/// `GET /embed/{room}?parent=<origin>`: the compact widget for iframes. The visitor's
/// token lives in the iframe (storage), so it works with third-party cookies blocked;
/// the script joins and connects itself.
#[get("/embed/{room}")]
async fn embed_page(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    let q = page_query(&req);
    let lang = lang_of(&req, q.lang.as_deref());
    let retry = req.uri().to_string();
    let result = async {
        let room = room_id(&room)?;
        let cfg = engine.room_config(&room).await?;
        let lang = room_lang(&req, q.lang.as_deref(), &cfg);
        let parent = q
            .parent
            .as_deref()
            .and_then(|p| url::Url::parse(p).ok())
            .map(|u| u.origin().ascii_serialization());
        let allowed = |o: &String| cfg.embed_origins.iter().any(|e| e.trim_end_matches('/') == o);
        let Some(parent) = parent.filter(allowed) else {
            return Err(ApiError::Forbidden("this room may not be embedded here".into()));
        };
        let grace = engine.settings().reaper.hidden_grace_secs;
        let config = script_config(
            &room,
            &cfg,
            None,
            &q,
            lang,
            Host::Widget {
                parent_origin: parent,
            },
            grace,
        );
        let csp = format!(
            "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors {}; base-uri 'none'",
            cfg.embed_origins.join(" ")
        );
        Ok(html(
            StatusCode::OK,
            render(EmbedPage {
                t: lang.strings(),
                x: lang.told_strings(),
                d: lang.drop_strings(),
                room_name: cfg.display_name().to_string(),
                config,
                brand: brand::BrandView::of(&cfg, lang.code()),
            }),
            &brand::csp(&csp, &cfg),
        ))
    }
    .await;
    result.unwrap_or_else(|e| error_page(lang, &e, retry))
}

/// `GET /`: the demo room in demo mode; otherwise a small page saying this is not a
/// waiting room.
#[get("/")]
async fn home(req: HttpRequest, engine: web::Data<Engine>) -> HttpResponse {
    if engine.settings().demo {
        return HttpResponse::SeeOther()
            .insert_header(("Location", "/r/demo"))
            .finish();
    }
    not_found(req).await
}

/// Every path no route answers: a JSON error under `/api/`, a small page in the
/// visitor's language elsewhere (never a blank 404).
pub(super) async fn not_found(req: HttpRequest) -> HttpResponse {
    let e = ApiError::NotFound(format!("nothing at {}", req.path()));
    if req.path().starts_with("/api/") {
        return actix_web::ResponseError::error_response(&e);
    }
    let q = page_query(&req);
    error_page(lang_of(&req, q.lang.as_deref()), &e, String::new())
}

#[derive(Deserialize)]
struct DemoHostQuery {
    room: Option<String>,
}

/// `GET /demo/host`: a pretend shop page embedding the demo room. Open it on another
/// host name than the queue (e.g. `localhost` vs `127.0.0.1`) to see a real
/// cross-site embed.
#[get("/demo/host")]
async fn demo_host(q: web::Query<DemoHostQuery>, engine: web::Data<Engine>) -> HttpResponse {
    let room = q.room.clone().unwrap_or_else(|| "demo".into());
    if !engine.settings().demo || !crate::room::valid_room_id(&room) {
        return HttpResponse::NotFound().finish();
    }
    let body = render(DemoHostPage {
        queue_base: engine.public_base().clone(),
        room,
    });
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body)
}

#[cfg(test)]
mod tests {
    use super::progress;

    #[test]
    fn progress_runs_from_start_to_front() {
        assert_eq!(progress(10, 10), 9);
        assert_eq!(progress(10, 5), 54);
        assert_eq!(progress(10, 1), 90);
        assert_eq!(progress(1, 1), 50);
        assert_eq!(progress(0, 3), 25);
        assert_eq!(progress(10, 0), 100);
    }
}
