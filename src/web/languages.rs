//! `GET /api/languages`: the languages this instance serves (the built-in ones and those
//! `i18n_dir` adds), for a site that builds its own language menu or checks a room's
//! `languages` before setting it. A room offers all of them unless its `languages` says
//! fewer (docs/visitor-page.md#languages).

use actix_web::{get, web, HttpResponse};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use crate::domain::i18n::Lang;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(languages);
}

/// The OpenAPI description of this route (merged into `/api/openapi.json`).
#[derive(OpenApi)]
#[openapi(paths(languages), components(schemas(Languages, Language)))]
pub struct Doc;

/// Every served language, English first.
#[derive(Serialize, ToSchema)]
struct Languages {
    languages: Vec<Language>,
}

/// One served language.
#[derive(Serialize, ToSchema)]
struct Language {
    /// The code `?lang=`, a room's `languages` and `default_language` use (`pt-BR`).
    code: &'static str,
    /// The language's own name for itself (`Português (Brasil)`).
    name: &'static str,
    /// `ltr` or `rtl`.
    dir: &'static str,
}

/// The languages this instance serves.
#[utoipa::path(
    tag = "visitor",
    responses(
        (status = 200, description = "Every served language, English first.", body = Languages),
    )
)]
#[get("/api/languages")]
async fn languages() -> HttpResponse {
    HttpResponse::Ok().json(Languages {
        languages: Lang::all()
            .into_iter()
            .map(|l| Language {
                code: l.code(),
                name: l.name(),
                dir: l.dir().as_str(),
            })
            .collect(),
    })
}
