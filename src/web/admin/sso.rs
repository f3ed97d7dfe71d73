//! Single sign-on's two routes, `GET /admin/oidc/login` and `GET /admin/oidc/callback`,
//! and the signed flow cookie between them; the flow and the provider's side are in
//! [`super::oidc`].

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::auth::{new_session_cookie, AdminAuth, SOURCE_OIDC};
use super::oidc::OidcError;
use crate::domain::admission::Engine;
use crate::domain::identity::constant_time_eq;

const FLOW_COOKIE: &str = "anteroom_oidc";
const FLOW_DOMAIN: &str = "admin-oidc-flow";
/// How long a sign-in at the provider may take.
const FLOW_SECS: u64 = 600;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(login).service(callback);
}

fn flow_cookie(engine: &Engine, value: String, max_age: i64) -> Cookie<'static> {
    Cookie::build(FLOW_COOKIE, value)
        .path("/admin/oidc")
        .http_only(true)
        .secure(engine.secure_cookies())
        // Lax, not Strict: the provider's redirect back is a cross-site navigation,
        // which must carry this cookie.
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::seconds(max_age))
        .finish()
}

/// A short page saying why single sign-on did not work.
fn refused(status: StatusCode, message: &str) -> HttpResponse {
    super::pages::message_page(status, "Single sign-on failed", message)
}

/// `GET /admin/oidc/login`: off to the provider.
#[get("/admin/oidc/login")]
async fn login(engine: web::Data<Engine>, auth: Option<web::Data<AdminAuth>>) -> HttpResponse {
    let Some(oidc) = auth.as_ref().and_then(|a| a.oidc.as_ref()) else {
        return HttpResponse::NotFound().body("single sign-on is not configured");
    };
    match oidc.start().await {
        Ok((url, [state, nonce, verifier])) => {
            let expires = jsonwebtoken::get_current_timestamp() + FLOW_SECS;
            let body = format!("{expires}.{state}.{nonce}.{verifier}");
            let value = format!("{body}.{}", engine.visitors().tag(FLOW_DOMAIN, &body));
            HttpResponse::SeeOther()
                .insert_header(("Location", url))
                .insert_header(("Cache-Control", "no-store"))
                .cookie(flow_cookie(&engine, value, FLOW_SECS as i64))
                .finish()
        }
        Err(e) => {
            tracing::warn!(error = %e, "single sign-on could not start");
            refused(StatusCode::BAD_GATEWAY, &e.to_string())
        }
    }
}

#[derive(Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// The flow cookie's state, nonce and verifier, if it is ours and unexpired.
fn read_flow(req: &HttpRequest, engine: &Engine) -> Option<(String, String, String)> {
    let c = req.cookie(FLOW_COOKIE)?;
    let (body, tag) = c.value().rsplit_once('.')?;
    if !engine.visitors().check_tag(FLOW_DOMAIN, body, tag) {
        return None;
    }
    let mut p = body.split('.');
    let expires: u64 = p.next()?.parse().ok()?;
    let (state, nonce, verifier) = (p.next()?, p.next()?, p.next()?);
    (p.next().is_none() && expires > jsonwebtoken::get_current_timestamp())
        .then(|| (state.into(), nonce.into(), verifier.into()))
}

/// `GET /admin/oidc/callback`: the provider's answer.
#[get("/admin/oidc/callback")]
async fn callback(
    req: HttpRequest,
    q: web::Query<Callback>,
    engine: web::Data<Engine>,
    auth: Option<web::Data<AdminAuth>>,
) -> HttpResponse {
    let Some(auth) = auth else {
        return HttpResponse::NotFound().body("the admin interface is disabled");
    };
    let Some(oidc) = auth.oidc.as_ref() else {
        return HttpResponse::NotFound().body("single sign-on is not configured");
    };
    let ip = crate::web::support::client_ip(&req, &engine);
    let q = q.into_inner();
    let outcome = async {
        let (state, nonce, verifier) = read_flow(&req, &engine).ok_or(OidcError::Flow)?;
        if let Some(e) = q.error {
            return Err(OidcError::Refused(match q.error_description {
                Some(d) => format!("{e}: {d}"),
                None => e,
            }));
        }
        let sent = q.state.unwrap_or_default();
        if !constant_time_eq(sent.as_bytes(), state.as_bytes()) {
            return Err(OidcError::Flow);
        }
        let code = q.code.filter(|c| !c.is_empty()).ok_or(OidcError::Flow)?;
        oidc.finish(code, nonce, verifier).await
    }
    .await;
    let mut res = match outcome {
        Ok(who) => {
            tracing::info!(user = %who.name, role = who.role.as_str(), "admin signed in (single sign-on)");
            HttpResponse::SeeOther()
                .insert_header(("Location", "/admin"))
                .insert_header(("Cache-Control", "no-store"))
                .cookie(new_session_cookie(&engine, &auth, SOURCE_OIDC, &who))
                .finish()
        }
        Err(e) => {
            tracing::warn!(%ip, error = %e, "single sign-on refused");
            let status = match e {
                OidcError::Provider(_) => StatusCode::BAD_GATEWAY,
                OidcError::Flow => StatusCode::BAD_REQUEST,
                _ => StatusCode::FORBIDDEN,
            };
            refused(status, &e.to_string())
        }
    };
    // The flow is over either way: its cookie goes.
    let _ = res.add_removal_cookie(&flow_cookie(&engine, String::new(), 0));
    res
}
