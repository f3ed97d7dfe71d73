//! The responses the gateway makes itself: redirects (with the pass cookie), and its own
//! `503`/`502`/`504` answers as HTTP responses (their content: [`pages`](super::pages)).

use bytes::Bytes;
use http::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, LOCATION, SET_COOKIE};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

use super::pages::{answer, Answer, Failure};
use super::Body;
use super::Gateway;
use crate::domain::i18n::Lang;
use crate::domain::pass::pass_cookie;

pub(super) fn full(body: impl Into<Bytes>) -> Body {
    Full::new(body.into())
        .map_err(|never| match never {})
        .boxed()
}

/// `anteroom_pass_{room}` for the gateway's host: HttpOnly, SameSite=Lax, `Secure` over
/// TLS; `max_age_secs` 0 with an empty value removes it.
pub(super) fn pass_cookie_header(
    room: &str,
    pass: &str,
    max_age_secs: u64,
    secure: bool,
) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let v = format!(
        "{}={pass}; Path=/; Max-Age={max_age_secs}; HttpOnly; SameSite=Lax{secure}",
        pass_cookie(room)
    );
    // unwrap: room ids and passes (base64url and dots) are valid header text.
    HeaderValue::from_str(&v).expect("a cookie of header-safe text")
}

pub(super) fn redirect(location: &str, cookie: Option<HeaderValue>) -> Response<Body> {
    let mut res = Response::new(full(Bytes::new()));
    *res.status_mut() = StatusCode::FOUND;
    let h = res.headers_mut();
    if let Ok(l) = HeaderValue::from_str(location) {
        h.insert(LOCATION, l);
    }
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(c) = cookie {
        h.append(SET_COOKIE, c);
    }
    res
}

/// A kept header's value as text, if it is.
pub(super) fn header_text(v: &Option<HeaderValue>) -> Option<&str> {
    v.as_ref().and_then(|v| v.to_str().ok())
}

pub(super) fn failure_response(
    gw: &Gateway,
    f: Failure,
    req: &Request<Incoming>,
    queue: Option<&str>,
) -> Response<Body> {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let lang = Lang::negotiate(None, header(http::header::ACCEPT_LANGUAGE));
    answer_response(answer(
        f,
        header(http::header::ACCEPT),
        lang,
        gw.engine.public_base(),
        queue,
    ))
}

pub(super) fn answer_response(a: Answer) -> Response<Body> {
    let mut res = Response::new(full(a.body));
    *res.status_mut() = StatusCode::from_u16(a.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let h = res.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(a.content_type));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(secs) = a.retry_after {
        h.insert(http::header::RETRY_AFTER, HeaderValue::from(secs));
    }
    res
}
