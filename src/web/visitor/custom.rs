//! A room's own template (`template = "…"`) in place of the built-in queue page: the
//! variables it is rendered with (docs/visitor-page.md#custom-templates), taken from the
//! built-in page's own values so both say the same thing, and the page's CSP (each
//! inline `<style>` element the template writes is allowed by its hash, nothing else).

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use minijinja::context;
use minijinja::value::Value;
use sha2::{Digest, Sha256};

use super::super::support::{html, render, PAGE_CSP};
use super::brand::BrandView;
use super::QueuePage;
use crate::config::Settings;
use crate::domain::admission::VisitorView;
use crate::room::RoomConfig;
use crate::store::VisitorState;

/// The queue page as the room has it: its own template when it has one (the built-in
/// page when that template cannot be rendered now: logged), else the built-in page; with
/// the brand's logo origin in the page's `img-src`.
pub(super) fn respond(
    settings: &Settings,
    cfg: &RoomConfig,
    view: &VisitorView,
    page: QueuePage,
    lang_code: &str,
) -> HttpResponse {
    let csp = super::brand::csp(PAGE_CSP, cfg);
    if let Some(t) = &cfg.template {
        let ctx = context(cfg, view, &page, lang_code, &page.brand);
        match crate::domain::custom_page::render(settings, t, ctx) {
            Ok(body) => {
                let csp = csp_with_styles(&csp, &body);
                return html(StatusCode::OK, body, &csp);
            }
            Err(e) => tracing::warn!(
                room = %cfg.id,
                error = %e,
                "the room's template did not render; the built-in page is shown"
            ),
        }
    }
    html(StatusCode::OK, render(page), &csp)
}

/// The `anteroom_script()` helper's markup: the element `static/queue.js` reads its
/// configuration from (hidden; the template's own elements are bound by their
/// `data-anteroom` attributes), and the script.
fn script_tag(page: &QueuePage) -> String {
    format!(
        "<div id=\"anteroom\" hidden data-message=\"{}\" data-config=\"{}\"></div>\n<script src=\"/static/queue.js\" defer></script>",
        attr(page.message),
        attr(&page.config)
    )
}

/// Text escaped for a double-quoted HTML attribute.
fn attr(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            c => o.push(c),
        }
    }
    o
}

/// The template's variables.
pub(super) fn context(
    cfg: &RoomConfig,
    view: &VisitorView,
    page: &QueuePage,
    lang_code: &str,
    brand: &BrandView,
) -> Value {
    let minutes = view.eta_seconds.div_ceil(60);
    let waiting = matches!(view.state, VisitorState::Queued | VisitorState::Paused);
    let last_updated = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let b = &cfg.brand;
    let script = Value::from_safe_string(script_tag(page));
    context! {
        room => cfg.id,
        room_name => cfg.display_name(),
        language => lang_code,
        state => page.state,
        message_code => page.message,
        headline => page.title,
        message => page.lead,
        note => page.eta_note,
        place => view.position,
        ahead => page.ahead,
        in_line => view.queue_length,
        in_line_text => page.in_line,
        progress => page.progress,
        wait_time_known => waiting && view.eta_known,
        wait_time_minutes => minutes,
        wait_time_low_minutes => view.eta_low_seconds.div_ceil(60),
        wait_time_high_minutes => view.eta_high_seconds.div_ceil(60),
        wait_time_formatted => page.eta,
        queue_is_full => waiting,
        last_updated => last_updated,
        refresh_interval_seconds => page.refresh_secs,
        refresh_url => page.refresh_url,
        rejoin_url => page.rejoin_url,
        support_code => page.support_code,
        brand => context! {
            title => b.title,
            logo_url => b.logo_url,
            message => brand.message,
            accent_color => b.accent_color,
            background_color => b.background_color,
            text_color => b.text_color,
            stylesheet_url => brand.css_url,
        },
        anteroom_script => Value::from_function(move || script.clone()),
    }
}

/// `csp` with every inline `<style>` element of `html` allowed by its SHA-256 (the
/// template's author wrote them; the variables are escaped, so no value adds one).
pub(super) fn csp_with_styles(csp: &str, html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut hashes = Vec::new();
    let mut from = 0;
    while let Some(open) = lower[from..].find("<style") {
        let start = from + open;
        let Some(gt) = lower[start..].find('>') else {
            break;
        };
        let body_start = start + gt + 1;
        let Some(close) = lower[body_start..].find("</style") else {
            break;
        };
        let body = &html[body_start..body_start + close];
        use base64::Engine as _;
        let h = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body.as_bytes()));
        hashes.push(format!("'sha256-{h}'"));
        from = body_start + close;
    }
    if hashes.is_empty() {
        return csp.to_string();
    }
    csp.replacen(
        "style-src 'self'",
        &format!("style-src 'self' {}", hashes.join(" ")),
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_styles_are_allowed_by_their_hash_only() {
        let csp = "default-src 'self'; style-src 'self'; script-src 'self'";
        assert_eq!(csp_with_styles(csp, "<p>no style</p>"), csp);
        let out = csp_with_styles(csp, "<STYLE media=\"all\">p{color:red}</style><p>x</p>");
        // echo -n 'p{color:red}' | openssl dgst -sha256 -binary | base64
        assert!(out.contains("style-src 'self' 'sha256-"), "{out}");
        assert!(
            out.contains("script-src 'self'") && !out.contains("unsafe"),
            "{out}"
        );
    }

    #[test]
    fn attribute_text_is_escaped() {
        assert_eq!(
            attr(r#"{"a":"<b>&'"}"#),
            "{&quot;a&quot;:&quot;&lt;b&gt;&amp;&#39;&quot;}"
        );
    }
}
