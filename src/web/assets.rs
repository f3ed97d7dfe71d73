//! Static files, embedded in the binary so a deployment is one file and no CDN is used.
//! Each carries a strong `ETag` (a hash of its bytes) and answers `If-None-Match` with
//! 304; bodies are gzip-compressed for clients that accept it.

use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::middleware::Compress;
use actix_web::{web, HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/static")
            .wrap(Compress::default())
            .route("/{name}", web::get().to(asset)),
    )
    .route("/favicon.ico", web::get().to(favicon));
}

/// Browsers cache a file this long, then revalidate it with its `ETag`.
pub const CACHE_CONTROL: &str = "public, max-age=300";

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
    (
        "pow-worker.js",
        "text/javascript; charset=utf-8",
        include_str!("../../static/pow-worker.js"),
    ),
    (
        "retry.js",
        "text/javascript; charset=utf-8",
        include_str!("../../static/retry.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("../../static/favicon.svg"),
    ),
];

/// The `ETag` of each file in [`ASSETS`], in the same order.
fn etags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|(_, _, body)| {
                let h = Sha256::digest(body.as_bytes());
                let hex = crate::hex::lower(&h[..8]);
                format!("\"{hex}\"")
            })
            .collect()
    })
}

fn serve(req: &HttpRequest, name: &str) -> HttpResponse {
    let Some(i) = ASSETS.iter().position(|(n, _, _)| *n == name) else {
        return HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .body("no such file");
    };
    let (_, ctype, body) = ASSETS[i];
    let etag = &etags()[i];
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut res = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    res.insert_header((header::ETAG, etag.as_str()))
        .insert_header((header::CACHE_CONTROL, CACHE_CONTROL))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        // embed.js is loaded by other sites' pages.
        .insert_header(("Cross-Origin-Resource-Policy", "cross-origin"));
    if fresh {
        res.finish()
    } else {
        res.content_type(ctype).body(body)
    }
}

async fn asset(req: HttpRequest, name: web::Path<String>) -> HttpResponse {
    serve(&req, &name)
}

/// `GET /favicon.ico`: the SVG icon (browsers that ask for it by this name accept it).
async fn favicon(req: HttpRequest) -> HttpResponse {
    serve(&req, "favicon.svg")
}
