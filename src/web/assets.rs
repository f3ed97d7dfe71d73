//! Static files, embedded in the binary so a deployment is one file and no CDN is used.

use actix_web::{get, web, HttpResponse};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(asset);
}

/// `(name, content type, body)` of every file under `static/`.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "anteroom.css",
        "text/css; charset=utf-8",
        include_str!("../../static/anteroom.css"),
    ),
    (
        "queue.js",
        "text/javascript; charset=utf-8",
        include_str!("../../static/queue.js"),
    ),
    (
        "embed.js",
        "text/javascript; charset=utf-8",
        include_str!("../../static/embed.js"),
    ),
    (
        "demo.js",
        "text/javascript; charset=utf-8",
        include_str!("../../static/demo.js"),
    ),
    (
        "admin.js",
        "text/javascript; charset=utf-8",
        include_str!("../../static/admin.js"),
    ),
];

#[get("/static/{name}")]
async fn asset(name: web::Path<String>) -> HttpResponse {
    match ASSETS.iter().find(|(n, _, _)| *n == name.as_str()) {
        Some((_, ctype, body)) => HttpResponse::Ok()
            .content_type(*ctype)
            .insert_header(("Cache-Control", "public, max-age=300"))
            .insert_header(("X-Content-Type-Options", "nosniff"))
            // embed.js is loaded by other sites' pages.
            .insert_header(("Cross-Origin-Resource-Policy", "cross-origin"))
            .body(*body),
        None => HttpResponse::NotFound().finish(),
    }
}
