//! Dashboard pages: login (by name and password, or by token), the dashboard itself,
//! logout, and the live stream. Single sign-on's two routes are in [`super::oidc`].

use std::time::Duration;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use askama::Template;
use futures_util::stream;
use rand::RngCore;
use serde::Deserialize;

use super::auth::{
    csrf_ok, csrf_token, new_session_cookie, removal_cookie, same_origin, session, Admin,
    AdminAuth, Principal, SOURCE_LOCAL,
};
use crate::domain::admin::overview;
use crate::domain::admission::Engine;
use crate::web::support::{client_ip, html, render, PAGE_CSP};

const LOGIN_CSRF_COOKIE: &str = "anteroom_login_csrf";
/// How often the live stream pushes.
pub const LIVE_EVERY: Duration = Duration::from_secs(1);

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(dashboard)
        .service(login)
        .service(logout)
        .service(live);
}

#[derive(Template)]
#[template(path = "admin_login.html")]
struct LoginPage {
    csrf: String,
    error: String,
    /// Named users are configured: the name and password form is shown.
    users: bool,
    /// Single sign-on is configured: its button is shown.
    oidc: bool,
}

#[derive(Template)]
#[template(path = "admin.html")]
struct DashboardPage {
    csrf: String,
    /// Who is signed in, and their role (`viewer`, `operator`, `owner`).
    who: String,
    role: String,
    initial: String,
    /// The states a room's page can be previewed in (`/admin/rooms/{room}/preview`).
    preview_states: Vec<&'static str>,
}

#[derive(Template)]
#[template(path = "admin_message.html")]
struct MessagePage<'a> {
    title: &'a str,
    message: &'a str,
}

/// A short admin page with a title and a message (and a link back to sign-in).
pub fn message_page(status: StatusCode, title: &str, message: &str) -> HttpResponse {
    page(status, render(MessagePage { title, message }))
}

/// Every admin page: the first-party page headers, and never framed.
fn page(status: StatusCode, body: String) -> HttpResponse {
    let mut res = html(status, body, PAGE_CSP);
    res.headers_mut().insert(
        actix_web::http::header::X_FRAME_OPTIONS,
        actix_web::http::header::HeaderValue::from_static("DENY"),
    );
    res
}

/// A login form with a fresh login-CSRF cookie (double submit).
fn login_page(engine: &Engine, auth: &AdminAuth, status: StatusCode, error: &str) -> HttpResponse {
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    let csrf = crate::hex::lower(&b);
    let mut res = page(
        status,
        render(LoginPage {
            csrf: csrf.clone(),
            error: error.into(),
            users: auth.has_users(),
            oidc: auth.oidc.is_some(),
        }),
    );
    let c = Cookie::build(LOGIN_CSRF_COOKIE, csrf)
        .path("/admin")
        .http_only(true)
        .secure(engine.secure_cookies())
        .same_site(SameSite::Strict)
        .finish();
    let _ = res.add_cookie(&c);
    res
}

fn disabled() -> HttpResponse {
    HttpResponse::NotFound().body("the admin interface is disabled")
}

#[get("/admin")]
async fn dashboard(
    req: HttpRequest,
    engine: web::Data<Engine>,
    auth: Option<web::Data<AdminAuth>>,
) -> HttpResponse {
    let Some(auth) = auth else {
        return disabled();
    };
    let Some(s) = session(&req, &engine, &auth) else {
        return login_page(&engine, &auth, StatusCode::OK, "");
    };
    let initial = match overview(&engine, 20).await {
        Ok(o) => serde_json::to_string(&o).unwrap_or_default(),
        Err(_) => String::new(),
    };
    page(
        StatusCode::OK,
        render(DashboardPage {
            csrf: csrf_token(&engine, &s),
            who: s.who.name,
            role: s.who.role.as_str().into(),
            initial,
            preview_states: crate::domain::preview::states(),
        }),
    )
}

/// The sign-in form: `name` and `password` (a named user), or `credential` (a token,
/// or the shared `admin.password_hash` password).
#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    credential: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    csrf: String,
}

#[post("/admin/login")]
async fn login(
    req: HttpRequest,
    form: web::Form<LoginForm>,
    engine: web::Data<Engine>,
    auth: Option<web::Data<AdminAuth>>,
) -> HttpResponse {
    let Some(auth) = auth else { return disabled() };
    let ip = client_ip(&req, &engine);
    let by_name = !form.name.is_empty();
    let blocked = if by_name {
        auth.check_user_not_blocked(ip, &form.name)
    } else {
        auth.check_not_blocked(ip)
    };
    if !auth.login_allowed(ip) || blocked.is_err() {
        let mut res = login_page(
            &engine,
            &auth,
            StatusCode::TOO_MANY_REQUESTS,
            "Too many attempts. Wait a minute and try again.",
        );
        res.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            actix_web::http::header::HeaderValue::from_static("60"),
        );
        return res;
    }
    let cookie_csrf = req.cookie(LOGIN_CSRF_COOKIE).map(|c| c.value().to_string());
    let csrf_matches = cookie_csrf.is_some_and(|c| {
        crate::domain::identity::constant_time_eq(c.as_bytes(), form.csrf.as_bytes())
    });
    if !csrf_matches || !same_origin(&req, &engine) {
        return login_page(
            &engine,
            &auth,
            StatusCode::FORBIDDEN,
            "The form expired or came from another site. Please try again.",
        );
    }
    let who: Option<Principal> = if by_name {
        auth.check_password(&form.name, &form.password)
    } else {
        auth.check_credential(&form.credential)
    };
    match who {
        Some(who) => {
            tracing::info!(user = %who.name, role = who.role.as_str(), "admin logged in");
            HttpResponse::SeeOther()
                .insert_header(("Location", "/admin"))
                .insert_header(("Cache-Control", "no-store"))
                .cookie(new_session_cookie(&engine, &auth, SOURCE_LOCAL, &who))
                .finish()
        }
        None => {
            if by_name {
                auth.failed_for_user(ip, &form.name);
            } else {
                auth.failed(ip, "login");
            }
            let what = if by_name {
                "That name and password do not match."
            } else {
                "That token or password is not right."
            };
            login_page(&engine, &auth, StatusCode::UNAUTHORIZED, what)
        }
    }
}

#[derive(Deserialize)]
struct LogoutForm {
    csrf: String,
}

#[post("/admin/logout")]
async fn logout(
    req: HttpRequest,
    form: web::Form<LogoutForm>,
    engine: web::Data<Engine>,
    auth: Option<web::Data<AdminAuth>>,
) -> HttpResponse {
    let Some(auth) = auth else { return disabled() };
    let ok = session(&req, &engine, &auth).is_some_and(|s| csrf_ok(&engine, &s, Some(&form.csrf)));
    if !ok || !same_origin(&req, &engine) {
        return HttpResponse::Forbidden().finish();
    }
    HttpResponse::SeeOther()
        .insert_header(("Location", "/admin"))
        .cookie(removal_cookie(&engine))
        .finish()
}

/// `GET /admin/live`: Server-Sent Events every second. The first message is the whole
/// overview (rooms, totals, the newest audit entries; `"full": true`); each one after it
/// carries only what changed since the last sent on this connection (`"full": false`):
/// the rooms whose figures changed (with the chart's last two points, `series_tail`,
/// instead of its 30), the ids of rooms gone (`removed`), and `totals`,
/// `audit` and `store_data_lost_at` only when they changed. A second with no change sends
/// a two-byte comment, so an idle dashboard of a hundred rooms costs almost nothing on
/// the wire (docs/admin.md#admin-dashboard).
#[get("/admin/live")]
async fn live(_a: Admin, engine: web::Data<Engine>) -> HttpResponse {
    let body = stream::unfold(
        (engine, LiveState::default()),
        |(engine, mut state)| async move {
            if state.sent_any {
                tokio::time::sleep(LIVE_EVERY).await;
            }
            let chunk = match overview(&engine, 20).await {
                Ok(o) => state.next(&o),
                Err(e) => format!(
                    "event: error\ndata: {}\n\n",
                    serde_json::json!({"message": e.to_string()})
                ),
            };
            Some((
                Ok::<_, actix_web::Error>(web::Bytes::from(chunk)),
                (engine, state),
            ))
        },
    );
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-store"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body)
}

/// What one live connection last sent, to send only what changed.
#[derive(Default)]
struct LiveState {
    sent_any: bool,
    rooms: std::collections::HashMap<String, String>,
    totals: String,
    audit: String,
    lost: String,
}

impl LiveState {
    /// The next message for `o`: the whole overview first, then only what changed (a
    /// comment when nothing did).
    fn next(&mut self, o: &crate::domain::admin::Overview) -> String {
        let full = !self.sent_any;
        self.sent_any = true;
        let mut msg = serde_json::Map::new();
        msg.insert("full".into(), full.into());
        msg.insert("at".into(), o.at.into());
        let mut rooms = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in &o.rooms {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            // The 30-minute chart moves every minute: after the first message only its
            // last two points travel (`series_tail`), which the page merges by minute.
            let tail = match v.get_mut("series").map(serde_json::Value::take) {
                Some(serde_json::Value::Array(points)) => {
                    points[points.len().saturating_sub(2)..].to_vec()
                }
                _ => Vec::new(),
            };
            if let Some(m) = v.as_object_mut() {
                m.remove("series");
                m.insert("series_tail".into(), tail.into());
            }
            let text = v.to_string();
            seen.insert(r.live.id.clone());
            if full || self.rooms.get(&r.live.id) != Some(&text) {
                self.rooms.insert(r.live.id.clone(), text);
                rooms.push(if full {
                    serde_json::to_value(r).unwrap_or_default()
                } else {
                    v
                });
            }
        }
        let removed: Vec<String> = self
            .rooms
            .keys()
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        for id in &removed {
            self.rooms.remove(id);
        }
        let changed = !rooms.is_empty() || !removed.is_empty();
        msg.insert("rooms".into(), rooms.into());
        if !removed.is_empty() {
            msg.insert("removed".into(), removed.into());
        }
        let mut part = |key: &str, v: serde_json::Value, last: &mut String| {
            let text = v.to_string();
            if full || *last != text {
                *last = text;
                msg.insert(key.into(), v);
                true
            } else {
                false
            }
        };
        let totals = part(
            "totals",
            serde_json::to_value(&o.totals).unwrap_or_default(),
            &mut self.totals,
        );
        let audit = part(
            "audit",
            serde_json::to_value(&o.audit).unwrap_or_default(),
            &mut self.audit,
        );
        let lost = part(
            "store_data_lost_at",
            serde_json::to_value(o.store_data_lost_at).unwrap_or_default(),
            &mut self.lost,
        );
        if full || changed || totals || audit || lost {
            format!("data: {}\n\n", serde_json::Value::Object(msg))
        } else {
            ":\n\n".to_string()
        }
    }
}
