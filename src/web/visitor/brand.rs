//! A room's `[rooms.brand]` on the built-in page and the widget: what the templates show
//! (title, logo, message), the stylesheet that sets the page's colours
//! (`GET /r/{room}/brand.css`, CSP-clean: no inline style), and the page's
//! `Content-Security-Policy` with a `https://` logo's origin added to `img-src`.

use actix_web::http::header;
use actix_web::{get, web, HttpResponse};
use sha2::{Digest, Sha256};

use super::super::error::ApiError;
use super::super::support::room_id;
use crate::domain::admission::Engine;
use crate::room::brand::Palette;
use crate::room::RoomConfig;

/// What the page's templates show of the brand.
#[derive(Clone, Debug, Default)]
pub(in crate::web) struct BrandView {
    /// Anything to show above the card (a title or a logo).
    pub bar: bool,
    pub title: Option<String>,
    pub logo_url: Option<String>,
    /// The logo's text alternative: none beside a title, else the room's name.
    pub logo_alt: String,
    pub message: Option<String>,
    /// The brand stylesheet's address (with a version: its content's hash).
    pub css_url: Option<String>,
}

impl BrandView {
    pub(in crate::web) fn of(cfg: &RoomConfig, lang: &str) -> Self {
        let b = &cfg.brand;
        Self {
            bar: b.title.is_some() || b.logo_url.is_some(),
            title: b.title.clone(),
            logo_url: b.logo_url.clone(),
            // Beside a title the logo is decoration; alone it says the room's name.
            logo_alt: match &b.title {
                Some(_) => String::new(),
                None => cfg.display_name().to_string(),
            },
            message: b.message_in(lang).map(str::to_string),
            css_url: b
                .has_colors()
                .then(|| format!("/r/{}/brand.css?v={}", cfg.id, version(&css(cfg)))),
        }
    }
}

fn css(cfg: &RoomConfig) -> String {
    Palette::of(&cfg.brand).css()
}

/// A short hash of the stylesheet, so a changed brand is a new address (no stale cache).
fn version(css: &str) -> String {
    crate::hex::lower(&Sha256::digest(css.as_bytes())[..6])
}

/// `csp` with the room's `https://` logo origin allowed as an image source.
pub(in crate::web) fn csp(csp: &str, cfg: &RoomConfig) -> String {
    let Some(origin) = cfg.brand.logo_origin() else {
        return csp.to_string();
    };
    if csp.contains("img-src ") {
        csp.replacen("img-src ", &format!("img-src {origin} "), 1)
    } else {
        format!("{csp}; img-src 'self' {origin}")
    }
}

/// `GET /r/{room}/brand.css`: the room's colours as CSS variables (only `#rrggbb`
/// values [`Palette`] wrote from checked settings). A room without colours answers an
/// empty stylesheet.
#[get("/r/{room}/brand.css")]
pub(super) async fn brand_css(
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let cfg = engine.room_config(&room).await?;
    let body = if cfg.brand.has_colors() {
        css(&cfg)
    } else {
        String::new()
    };
    Ok(HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        // The page asks for it with its hash in the query: a changed brand is a new URL.
        .insert_header((header::CACHE_CONTROL, "public, max-age=300"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Cross-Origin-Resource-Policy", "same-origin"))
        .body(body))
}
