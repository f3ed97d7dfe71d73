//! gzip for HTML pages, and for nothing else. The queue page is about 17 KB of HTML (its
//! strings travel in `data-config` for the script) and about 5 KB gzipped; a visitor on a
//! phone on launch day loads it first. JSON answers, socket upgrades and the dashboard's
//! live feed are left as they are: small, hot, or streamed. Static files have their own
//! compression (`web::assets`).

use actix_http::encoding::Encoder;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, ContentEncoding};
use actix_web::middleware::Next;
use actix_web::Error;

/// Whether the request's `Accept-Encoding` takes gzip (and does not refuse it with `q=0`).
fn accepts_gzip(req: &ServiceRequest) -> bool {
    let Some(v) = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    v.split(',').any(|part| {
        let mut it = part.trim().split(';');
        let coding = it.next().unwrap_or("").trim();
        let q_zero = it.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !q_zero
    })
}

/// The middleware (`App::wrap(from_fn(gzip_html))`): a `text/html` answer to a request
/// that accepts gzip is gzipped (with `Vary: accept-encoding`); any other answer passes
/// untouched.
pub async fn gzip_html(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let gzip = accepts_gzip(&req);
    let res = next.call(req).await?;
    Ok(res.map_body(move |head, body| {
        let html = head
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/html"));
        if gzip && html {
            EitherBody::left(Encoder::response(ContentEncoding::Gzip, head, body))
        } else {
            EitherBody::right(body)
        }
    }))
}
