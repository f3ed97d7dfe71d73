//! The answers the gateway makes itself: `503` to a request that needs a pass and cannot
//! be redirected, `502` when the upstream refuses, `504` when it does not answer in
//! time. Each is an HTML page or the one JSON error shape, as `Accept` prefers.
//! HTTP-free: [`Answer`] is turned into a response by the server.

use askama::Template;
use serde_json::json;

use crate::domain::i18n::Lang;
use crate::domain::request_target::BadTarget;

/// `Retry-After` of the `503` sent to a request without a pass (a hint: the pass comes
/// from the queue, not from waiting).
pub const NEED_PASS_RETRY_SECS: u64 = 10;

/// A page of the gateway's own. Its stylesheet comes from the main listener (the
/// gateway's host is the site's).
#[derive(Template)]
#[template(path = "gateway.html")]
struct Page<'a> {
    lang: &'static str,
    /// `ltr` or `rtl`.
    dir: &'static str,
    title: &'a str,
    lead: &'a str,
    css_url: String,
    link_url: Option<&'a str>,
    link_text: &'a str,
}

/// What the gateway answers with.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    pub retry_after: Option<u64>,
}

/// The gateway's own errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// `503`: a guarded route without a valid pass, on a method that cannot be
    /// redirected.
    NeedPass,
    /// `502`: the upstream refused the connection or broke it.
    UpstreamRefused,
    /// `504`: the upstream did not answer in time.
    UpstreamTimeout,
    /// `400 bad_path`/`bad_host`: a path or host the shared reader refuses
    /// ([`crate::domain::request_target`]); nothing is proxied.
    BadTarget(BadTarget),
}

impl Failure {
    /// The page's title, lead and link text in `lang`.
    fn page_text(self, lang: Lang) -> (&'static str, &'static str) {
        let t = lang.strings();
        match self {
            Self::NeedPass => (t.gw_need_pass, t.gw_need_pass_lead),
            Self::UpstreamRefused => (t.gw_refused, t.gw_refused_lead),
            Self::UpstreamTimeout => (t.gw_timeout, t.gw_timeout_lead),
            Self::BadTarget(_) => (t.gw_bad_request, t.gw_bad_request_lead),
        }
    }

    /// Status, code, and the English title and message (the JSON's).
    fn parts(self) -> (u16, &'static str, &'static str, &'static str) {
        match self {
            Self::NeedPass => (
                503,
                "queue_required",
                "This page is behind a waiting room",
                "Join the queue to continue; you will be let in when it is your turn.",
            ),
            Self::UpstreamRefused => (
                502,
                "upstream_unavailable",
                "The site is not answering",
                "The site behind this address refused the connection. Please try again in a moment.",
            ),
            Self::UpstreamTimeout => (
                504,
                "upstream_timeout",
                "The site took too long to answer",
                "The site behind this address did not answer in time. Please try again in a moment.",
            ),
            Self::BadTarget(why) => (400, why.code(), "This address cannot be read", why.reason()),
        }
    }
}

/// The answer for `failure`, as HTML (in `lang`) when `accept` prefers it, else JSON.
/// `queue_url` (for [`Failure::NeedPass`]) is linked from the page and given in the JSON.
pub fn answer(
    failure: Failure,
    accept: Option<&str>,
    lang: Lang,
    public_base: &str,
    queue_url: Option<&str>,
) -> Answer {
    let (status, code, _, lead) = failure.parts();
    let retry_after = match failure {
        Failure::NeedPass => Some(NEED_PASS_RETRY_SECS),
        _ => None,
    };
    if wants_html(accept) {
        let (title, page_lead) = failure.page_text(lang);
        let page = Page {
            lang: lang.code(),
            dir: lang.dir().as_str(),
            title,
            lead: page_lead,
            css_url: format!("{public_base}/static/anteroom.css"),
            link_url: queue_url,
            link_text: lang.strings().gw_join_queue,
        };
        let body = page.render().unwrap_or_else(|e| {
            tracing::error!(error = %e, "gateway page failed");
            title.to_string()
        });
        return Answer {
            status,
            content_type: "text/html; charset=utf-8",
            body,
            retry_after,
        };
    }
    let mut body = json!({ "error": { "code": code, "message": lead } });
    if let Some(q) = queue_url {
        body["queue_url"] = json!(q);
    }
    Answer {
        status,
        content_type: "application/json",
        body: body.to_string(),
        retry_after,
    }
}

/// Whether `Accept` prefers HTML to JSON: HTML's quality is higher, or equal and listed
/// first. No `Accept`, or `*/*` alone: JSON (what a script's `fetch` sends).
pub fn wants_html(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    let (mut html, mut json) = (None::<(f32, usize)>, None::<(f32, usize)>);
    for (i, range) in accept.split(',').enumerate() {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|v| v.parse::<f32>().ok())
            .unwrap_or(1.0);
        let slot = match media.as_str() {
            "text/html" | "application/xhtml+xml" => &mut html,
            m if m == "application/json" || m.ends_with("+json") => &mut json,
            _ => continue,
        };
        if slot.is_none_or(|(best, _)| q > best) {
            *slot = Some((q, i));
        }
    }
    match (html, json) {
        (Some((hq, _)), None) => hq > 0.0,
        (Some((hq, hi)), Some((jq, ji))) => hq > jq || (hq == jq && hq > 0.0 && hi < ji),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_picks_html_or_json() {
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert!(wants_html(Some(browser)));
        assert!(!wants_html(Some("application/json")));
        assert!(!wants_html(Some("*/*")));
        assert!(!wants_html(None));
        assert!(!wants_html(Some("text/html;q=0.5, application/json")));
        assert!(wants_html(Some("text/html, application/json")));
        assert!(!wants_html(Some("application/json, text/html")));
        assert!(!wants_html(Some("text/html;q=0")));
    }

    #[test]
    fn the_need_pass_answer_links_the_queue_both_ways() {
        let q = "http://queue.example/r/sale?return=x";
        let a = answer(
            Failure::NeedPass,
            Some("application/json"),
            Lang::get("zh").unwrap(),
            "http://queue.example",
            Some(q),
        );
        assert_eq!((a.status, a.retry_after), (503, Some(NEED_PASS_RETRY_SECS)));
        let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(v["error"]["code"], "queue_required");
        assert_eq!(v["queue_url"], q);
        let a = answer(
            Failure::NeedPass,
            Some("text/html"),
            Lang::en(),
            "http://queue.example",
            Some(q),
        );
        assert!(a.content_type.starts_with("text/html"));
        assert!(
            a.body
                .contains("href=\"http://queue.example/r/sale?return=x\""),
            "{}",
            a.body
        );
        // The page speaks the visitor's language; the JSON stays English (for programs).
        let zh = answer(
            Failure::NeedPass,
            Some("text/html"),
            Lang::get("zh").unwrap(),
            "http://queue.example",
            Some(q),
        );
        assert!(
            zh.body.contains("此页面设有等候室") && zh.body.contains("lang=\"zh"),
            "{}",
            zh.body
        );
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Join the queue"));
        let a = answer(Failure::UpstreamTimeout, None, Lang::en(), "http://q", None);
        assert_eq!((a.status, a.retry_after), (504, None));
    }
}
