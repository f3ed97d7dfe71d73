//! What the handlers share: extractors (room id, client IP, bearer token), the
//! same-origin check, cookie issuance (the visitor cookie and the pass cookie), and
//! page rendering with the security headers every page carries.

use std::net::IpAddr;

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, ResponseError};
use askama::Template;

use super::error::ApiError;
use crate::domain::admission::{Engine, VisitorView};
use crate::domain::identity::{VisitorId, VISITOR_COOKIE};
use crate::domain::pass::pass_cookie;
use crate::domain::request_target::forwarded_client;
use crate::room::valid_room_id;

/// How long the visitor cookie lives.
pub const VISITOR_COOKIE_SECS: i64 = 7 * 86_400;

/// The Content-Security-Policy of every first-party page (queue, messages, admin): our
/// own scripts, styles and socket only, never framed.
pub const PAGE_CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// A room id from the path; ids that could never exist answer 404 without a store call.
pub fn room_id(raw: &str) -> Result<String, ApiError> {
    if valid_room_id(raw) {
        Ok(raw.to_string())
    } else {
        Err(ApiError::UnknownRoom(raw.chars().take(64).collect()))
    }
}

/// The client's IP for limits and logs. The peer address, unless `trust_forwarded_for`
/// is set: then the address that [`forwarded_client`] finds in `X-Forwarded-For` (every
/// header line, read as one list in order).
pub fn client_ip(req: &HttpRequest, engine: &Engine) -> IpAddr {
    let peer = req
        .peer_addr()
        .map(|a| a.ip())
        .unwrap_or(IpAddr::from([127, 0, 0, 1]));
    if !engine.settings().trust_forwarded_for {
        return peer;
    }
    let entries: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    forwarded_client(peer, &entries, engine.trusted_proxies())
}

/// `Authorization: Bearer <token>`, if present. A header that is not valid text is
/// refused (`401 invalid_token`) rather than ignored, so a mangled credential never
/// silently turns into "no credential" (and, on a join, a new visitor).
pub fn bearer(req: &HttpRequest) -> Result<Option<&str>, ApiError> {
    let Some(v) = req.headers().get(actix_web::http::header::AUTHORIZATION) else {
        return Ok(None);
    };
    let v = v.to_str().map_err(|_| {
        ApiError::unauthorized(
            "invalid_token",
            "the Authorization header is not valid text",
        )
    })?;
    Ok(v.strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|t| !t.is_empty()))
}

/// An HttpOnly, Path=/ cookie with our defaults.
pub fn cookie(
    engine: &Engine,
    name: String,
    value: String,
    max_age_secs: i64,
    same_site: SameSite,
) -> Cookie<'static> {
    Cookie::build(name, value)
        .path("/")
        .http_only(true)
        .secure(engine.secure_cookies())
        .same_site(same_site)
        .max_age(CookieDuration::seconds(max_age_secs))
        .finish()
}

/// The visitor cookie (`anteroom_vid`) for a view's token.
pub fn visitor_cookie(engine: &Engine, view: &VisitorView) -> Cookie<'static> {
    token_cookie(engine, view.visitor_token.clone())
}

/// The visitor cookie for an identity (also handed out with a 503, see
/// [`unavailable_keeping`]).
pub fn identity_cookie(engine: &Engine, visitor: &VisitorId) -> Cookie<'static> {
    token_cookie(engine, engine.visitors().token(visitor))
}

fn token_cookie(engine: &Engine, token: String) -> Cookie<'static> {
    cookie(
        engine,
        VISITOR_COOKIE.into(),
        token,
        VISITOR_COOKIE_SECS,
        SameSite::Lax,
    )
}

/// The `503 store_unavailable` of a join, carrying the identity the join was made
/// under (`visitor_token` in the body, and the cookie). A join whose script still runs
/// after the store wakes up then holds a place its visitor can find with the retry,
/// instead of a ghost place nobody holds.
pub fn unavailable_keeping(engine: &Engine, visitor: &VisitorId) -> HttpResponse {
    let mut res = ApiError::Unavailable.error_response();
    let _ = res.add_cookie(&identity_cookie(engine, visitor));
    let body = UnavailableJoinBody {
        error: ApiError::Unavailable.detail(),
        visitor_token: engine.visitors().token(visitor),
    };
    // unwrap: the body always serialises.
    res.set_body(actix_web::body::BoxBody::new(
        serde_json::to_string(&body).unwrap(),
    ))
}

/// A join's `503 store_unavailable`: the error and the identity the join was made under,
/// to retry with.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct UnavailableJoinBody {
    pub error: super::error::ErrorDetail,
    pub visitor_token: String,
}

/// The pass cookie (`anteroom_pass_{room}`) of an admitted view, living as long as the
/// pass; `None` unless the view carries a pass.
pub fn pass_cookie_of(engine: &Engine, view: &VisitorView) -> Option<Cookie<'static>> {
    let (pass, exp) = (view.pass.as_ref()?, view.expires_at?);
    let now = jsonwebtoken::get_current_timestamp();
    Some(cookie(
        engine,
        pass_cookie(&view.room),
        pass.clone(),
        exp.saturating_sub(now).max(1) as i64,
        SameSite::Lax,
    ))
}

/// Sets the visitor cookie and, when admitted, the pass cookie.
pub fn set_visitor_cookies(engine: &Engine, view: &VisitorView, res: &mut HttpResponseBuilder) {
    res.cookie(visitor_cookie(engine, view));
    if let Some(c) = pass_cookie_of(engine, view) {
        res.cookie(c);
    }
}

/// An HTML page with the headers every page carries: no caching, the given CSP, no
/// MIME sniffing, same-origin referrers.
pub fn html(status: StatusCode, body: String, csp: &str) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header(("Cache-Control", "no-store"))
        .insert_header(("Content-Security-Policy", csp.to_string()))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Referrer-Policy", "same-origin"))
        .body(body)
}

/// Renders a template; a template that fails to render is a bug (the page tests render
/// every one), so it is logged and a bare error page is shown.
pub fn render(t: impl Template) -> String {
    t.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "template failed");
        String::from("<!doctype html><title>Error</title><p>Internal error</p>")
    })
}

/// Same-origin check for browser upgrades. Non-browser clients send no `Origin`.
pub fn origin_allowed(req: &HttpRequest, engine: &Engine) -> bool {
    let Some(origin) = req.headers().get("origin").and_then(|o| o.to_str().ok()) else {
        return true;
    };
    let Ok(o) = url::Url::parse(origin) else {
        return false;
    };
    let host_port = match (o.host_str(), o.port_or_known_default()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        _ => return false,
    };
    // The page that opens the socket is served by us: its origin is our Host (the
    // request's own; forwarded host headers only behind a trusted proxy, since a client
    // can send them)...
    let host = if engine.settings().trust_forwarded_for {
        req.connection_info().host().to_string()
    } else {
        req.headers()
            .get(actix_web::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
            .or_else(|| req.uri().authority().map(|a| a.to_string()))
            .unwrap_or_default()
    };
    let host = if host.contains(':') {
        host
    } else {
        format!("{host}:{}", if o.scheme() == "https" { 443 } else { 80 })
    };
    if host_port == host {
        return true;
    }
    // ...or our configured public URL.
    url::Url::parse(engine.public_base())
        .map(|b| b.origin() == o.origin())
        .unwrap_or(false)
}
