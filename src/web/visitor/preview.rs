//! `GET /admin/rooms/{room}/preview?state=…&lang=…` (the handler is in
//! `web::admin::preview`): the room's queue page in any state with sample figures
//! ([`crate::domain::preview`]), built exactly as a visitor's page is (the built-in page
//! with the room's brand, or the room's template), but with its script told it is a
//! preview: it opens no socket and joins nothing.

use actix_web::http::header::{HeaderValue, X_FRAME_OPTIONS};
use actix_web::HttpRequest;
use actix_web::HttpResponse;

use super::{custom, error_page_for, lang_of, queue_page_body, PageQuery};
use crate::domain::admission::Engine;
use crate::domain::error::DomainError;
use crate::domain::preview::{sample, Sample};
use crate::web::error::ApiError;

/// Renders the preview of `state` for `room`; an unknown state is `400` naming it.
pub(in crate::web) async fn preview_page(
    req: &HttpRequest,
    engine: &Engine,
    room: &str,
    state: &str,
    lang: Option<&str>,
) -> Result<HttpResponse, ApiError> {
    let cfg = engine.room_config(room).await?;
    let lang = lang_of(req, lang);
    let now = crate::clock::wall_ms();
    let sample = sample(&cfg, state, now).map_err(|m| DomainError::invalid_field("state", m))?;
    // The store's pages try again by themselves: in a preview, to the preview (never to
    // the room's page, which would join the admin).
    let retry = req.uri().to_string();
    let mut res = match sample {
        Sample::Restoring => error_page_for(
            lang,
            &ApiError::Restoring {
                retry_after_secs: 5,
                message: String::new(),
            },
            retry,
            true,
        ),
        Sample::Outage => error_page_for(lang, &ApiError::Unavailable, retry, true),
        Sample::Page { view, cfg } => {
            let q = PageQuery::default();
            let grace = engine.settings().reaper.hidden_grace_secs;
            let mut page = queue_page_body(room, &cfg, &view, &q, lang, None, grace);
            let mut config: serde_json::Value = serde_json::from_str(&page.config)
                .map_err(|e| ApiError::Internal(e.to_string()))?;
            config["preview"] = serde_json::json!(true);
            page.config = config.to_string();
            custom::respond(engine.settings(), &cfg, &view, page, lang.code())
        }
    };
    // The preview is an admin page: never framed, never indexed.
    res.headers_mut()
        .insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res.headers_mut().insert(
        actix_web::http::header::HeaderName::from_static("x-robots-tag"),
        HeaderValue::from_static("noindex"),
    );
    Ok(res)
}
