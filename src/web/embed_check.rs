//! `GET /api/rooms/{room}/embeddable?origin=<origin>`: whether the widget may be shown on
//! a site, asked by `static/embed.js` on the host page. The widget's own page refuses to
//! be framed by any other site (`frame-ancestors`), and a refused frame is a grey box the
//! browser draws with no word to anyone; this answer lets the host page's script say why
//! instead, in the words the server chooses. Whether an origin may embed a room is no
//! secret (any site can try to frame it), so the answer is readable from every origin.

use actix_web::{get, web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{OpenApi, ToSchema};

use super::error::{ApiError, ErrorBody};
use super::support::room_id;
use crate::domain::admission::Engine;
use crate::domain::i18n::Lang;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(embeddable);
}

/// The OpenAPI description of this route (merged into `/api/openapi.json`).
#[derive(OpenApi)]
#[openapi(paths(embeddable), components(schemas(Embeddable)))]
pub struct Doc;

#[derive(Deserialize)]
struct Query {
    origin: String,
    lang: Option<String>,
}

/// The answer: `allowed`, and when not, a headline and a sentence for the host page.
#[derive(Serialize, ToSchema)]
struct Embeddable {
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// Whether `origin` (an origin as a browser writes it, `https://shop.example`) is one of
/// the room's `embed_origins`: the same test `GET /embed/{room}` applies to `?parent=`.
pub(crate) fn origin_allowed(embed_origins: &[String], origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    let o = url.origin().ascii_serialization();
    embed_origins.iter().any(|e| e.trim_end_matches('/') == o)
}

/// Whether the widget may be shown on a site (`embed_origins`), and if not the words
/// `embed.js` shows there instead.
#[utoipa::path(
    tag = "visitor",
    params(
        ("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`."),
        ("origin" = String, Query, description = "The host page's origin, `https://shop.example`."),
        ("lang" = Option<String>, Query, description = "A served language (`GET /api/languages`; `zh` is `zh-CN`), else `Accept-Language`, else the room's `default_language`."),
    ),
    responses(
        (status = 200, description = "Whether the origin may embed the room.", body = Embeddable),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
    )
)]
#[get("/api/rooms/{room}/embeddable")]
async fn embeddable(
    req: HttpRequest,
    room: web::Path<String>,
    q: web::Query<Query>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let cfg = engine.room_config_cached(&room).await?;
    let allowed = origin_allowed(&cfg.embed_origins, &q.origin);
    let accept = req
        .headers()
        .get("accept-language")
        .and_then(|v| v.to_str().ok());
    let offer = crate::domain::i18n::Offer {
        languages: &cfg.languages,
        default_language: cfg.default_language.as_deref(),
    };
    let x = Lang::negotiate_for(q.lang.as_deref(), accept, offer).told_strings();
    let body = if allowed {
        Embeddable {
            allowed,
            title: None,
            message: None,
        }
    } else {
        Embeddable {
            allowed,
            title: Some(x.embed_refused_title.to_string()),
            message: Some(
                x.embed_refused
                    .replace("{room}", cfg.display_name())
                    .replace("{origin}", &q.origin),
            ),
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header(("Access-Control-Allow-Origin", "*"))
        .insert_header(("Cache-Control", "no-store"))
        .json(body))
}

#[cfg(test)]
mod tests {
    use super::origin_allowed;

    #[test]
    fn an_origin_is_allowed_as_the_widget_page_allows_it() {
        let allowed = vec!["https://shop.example/".to_string()];
        assert!(origin_allowed(&allowed, "https://shop.example"));
        assert!(!origin_allowed(&allowed, "https://evil.example"));
        assert!(!origin_allowed(&allowed, "http://shop.example"));
        assert!(!origin_allowed(&allowed, "not a url"));
    }
}
