//! The OpenAPI 3.1 document of the JSON API, served at `GET /api/openapi.json`.
//!
//! It is generated, not written: each handler carries a `#[utoipa::path]` beside its
//! actix route attribute (the path and method are read from that attribute), and the
//! bodies are the handlers' own types deriving `ToSchema` — the ones they serialise and
//! parse. A changed field, status or route changes the document with it.
//! `tests/it/openapi.rs` checks that every route under `/api` is in it and runs a real
//! validator on it.

use std::sync::OnceLock;

use actix_web::{get, web, HttpResponse};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::OpenApi as Document;
use utoipa::{Modify, OpenApi};

use super::{admin, api, fairness, health};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(openapi_json);
}

/// The routes of this module, the info, the tags and the security schemes; the other
/// modules' `Doc`s are merged into it by [`document`].
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Anteroom",
        description = "The JSON API of Anteroom, a virtual waiting room: the visitor API, \
                       the admin API, probes and the pass verification key. Every error \
                       has one shape, `{\"error\": {\"code\", \"message\", \"field\"?}}` \
                       (`ErrorBody`); the codes and when each is given are in \
                       docs/http-api.md#errors."
    ),
    paths(openapi_json),
    modifiers(&SecuritySchemes),
    tags(
        (name = "visitor", description = "Joining, waiting, passes (docs/http-api.md)."),
        (name = "admin", description = "Room controls, behind the admin credential (docs/admin.md#admin-api)."),
        (name = "health", description = "Probes, metrics and the pass verification key."),
        (name = "meta", description = "This document."),
    )
)]
struct Root;

/// The whole document.
pub fn document() -> Document {
    let mut doc = Root::openapi();
    doc.merge(api::Doc::openapi());
    doc.merge(fairness::Doc::openapi());
    doc.merge(super::embed_check::Doc::openapi());
    doc.merge(super::languages::Doc::openapi());
    doc.merge(admin::api::Doc::openapi());
    doc.merge(admin::dead_letters::Doc::openapi());
    doc.merge(health::Doc::openapi());
    doc.merge(super::outflow::Doc::openapi());
    doc
}

/// The credentials the routes name in their `security`.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, doc: &mut Document) {
        let bearer = |format: Option<&str>, description: &str| {
            let mut http = Http::new(HttpAuthScheme::Bearer);
            http.bearer_format = format.map(str::to_string);
            http.description = Some(description.to_string());
            SecurityScheme::Http(http)
        };
        let cookie = |name: &str, description: &str| {
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                name,
                description,
            )))
        };
        let components = doc.components.get_or_insert_with(Default::default);
        for (name, scheme) in [
            (
                "visitor_token",
                bearer(
                    Some("<32 hex>.<base64url HMAC-SHA256>"),
                    "The visitor's signed token, as join and status answer it in `visitor_token`.",
                ),
            ),
            (
                "visitor_cookie",
                cookie(
                    "anteroom_vid",
                    "The visitor token in the cookie join and status set.",
                ),
            ),
            (
                "pass",
                bearer(
                    Some("JWT"),
                    "An admitted visitor's pass: a JWT signed with Ed25519 (`alg: EdDSA`), \
                     verifiable with `/.well-known/jwks.json`.",
                ),
            ),
            (
                "pass_cookie",
                cookie(
                    "anteroom_pass_{room}",
                    "The pass in the room's cookie: its name ends with the room id.",
                ),
            ),
            (
                "admin_token",
                bearer(None, "`admin.token` from the configuration."),
            ),
            (
                "admin_session",
                cookie(
                    "anteroom_admin",
                    "A dashboard session (after `/admin/login`); changes also need \
                     `X-CSRF-Token` and a same-origin `Origin`.",
                ),
            ),
            (
                "metrics_token",
                bearer(None, "`metrics_token` from the configuration, when set."),
            ),
            (
                "health_secret",
                bearer(
                    None,
                    "The room's `[rooms.outflow] health_secret` (docs/outflow.md).",
                ),
            ),
        ] {
            components.security_schemes.insert(name.to_string(), scheme);
        }
    }
}

/// This document, built once.
#[utoipa::path(
    tag = "meta",
    responses((status = 200, description = "The OpenAPI 3.1 document of this API.", content_type = "application/json", body = Object))
)]
#[get("/api/openapi.json")]
async fn openapi_json() -> HttpResponse {
    static JSON: OnceLock<String> = OnceLock::new();
    let body = JSON.get_or_init(|| {
        // unwrap: the document is plain data and always serialises.
        document().to_json().unwrap()
    });
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("Cache-Control", "public, max-age=300"))
        .body(body.as_str())
}
