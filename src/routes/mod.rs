//! HTTP routes, one module per area; each has a `configure`.

pub mod api;
pub mod assets;
pub mod demo;
pub mod health;
pub mod pages;
pub mod ws;

use std::net::IpAddr;

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::{web, HttpRequest};

use crate::admission::Engine;
use crate::config::valid_room_id;
use crate::error::ApiError;

pub fn configure(cfg: &mut web::ServiceConfig) {
    health::configure(cfg);
    api::configure(cfg);
    pages::configure(cfg);
    ws::configure(cfg);
    assets::configure(cfg);
    demo::configure(cfg);
    crate::admin::configure(cfg);
}

/// A room id from the path; ids that could never exist answer 404 without a store call.
pub fn room_id(raw: &str) -> Result<String, ApiError> {
    if valid_room_id(raw) {
        Ok(raw.to_string())
    } else {
        Err(ApiError::UnknownRoom(raw.chars().take(64).collect()))
    }
}

/// The client's IP: the peer address, or the last `X-Forwarded-For` entry (the one the
/// trusted proxy appended) when `trust_forwarded_for` is set.
pub fn client_ip(req: &HttpRequest, engine: &Engine) -> IpAddr {
    if engine.settings.trust_forwarded_for {
        if let Some(ip) = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next_back())
            .and_then(|v| v.trim().parse().ok())
        {
            return ip;
        }
    }
    req.peer_addr()
        .map(|a| a.ip())
        .unwrap_or(IpAddr::from([127, 0, 0, 1]))
}

/// `Authorization: Bearer <token>`, if present.
pub fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
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
        .secure(engine.secure_cookies)
        .same_site(same_site)
        .max_age(CookieDuration::seconds(max_age_secs))
        .finish()
}
