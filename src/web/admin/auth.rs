//! Admin authentication.
//!
//! - **API**: `Authorization: Bearer <admin.token>`. If the request carries an `Origin`,
//!   it must be this server's (a page elsewhere cannot drive the API with a stolen
//!   token in a victim's browser).
//! - **Dashboard**: `POST /admin/login` with the token or the password (argon2 hash in
//!   config), rate-limited per IP, sets `anteroom_admin`: a signed, expiring cookie
//!   (HttpOnly, SameSite=Strict, Secure behind TLS). With that cookie, reads are allowed;
//!   changes also need the CSRF token (`X-CSRF-Token` header or `csrf` form field, an HMAC
//!   of the session) and a same-origin `Origin`.

use std::future::{ready, Ready};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Instant;

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::Method;
use actix_web::{web, FromRequest, HttpRequest};
use argon2::{Argon2, PasswordHash, PasswordVerifier};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use rand::RngCore;

use crate::config::{AdminSettings, Secret, Settings};
use crate::domain::admission::Engine;
use crate::domain::identity::constant_time_eq;
use crate::domain::ratelimit::FailureLimiter;
use crate::web::error::ApiError;
use crate::web::support::client_ip;

pub const SESSION_COOKIE: &str = "anteroom_admin";
const SESSION_DOMAIN: &str = "admin-session";
const CSRF_DOMAIN: &str = "admin-csrf";

/// The credentials and the login limiter.
pub struct AdminAuth {
    pub token: Option<Secret>,
    pub password_hash: Option<Secret>,
    pub session_ttl_secs: u64,
    login_limiter: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    /// Failed bearer tokens and logins, per client and overall.
    pub failures: FailureLimiter,
}

impl AdminAuth {
    pub fn new(a: &AdminSettings, token: Option<Secret>) -> Self {
        let per_minute = NonZeroU32::new(a.login_attempts_per_minute).unwrap_or(NonZeroU32::MIN);
        Self {
            token,
            password_hash: a.password_hash.clone(),
            session_ttl_secs: a.session_ttl_secs,
            login_limiter: Arc::new(RateLimiter::keyed(Quota::per_minute(per_minute))),
            failures: FailureLimiter::new(
                a.failed_auth_per_minute,
                a.failed_auth_global_per_minute,
                Instant::now(),
            ),
        }
    }

    /// Refuses a client that failed too often (before its credential is looked at).
    pub fn check_not_blocked(&self, ip: IpAddr) -> Result<(), ApiError> {
        match self.failures.blocked(ip, Instant::now()) {
            None => Ok(()),
            Some(retry_after_secs) => {
                tracing::warn!(%ip, "admin authentication refused: too many failures");
                Err(ApiError::RateLimited { retry_after_secs })
            }
        }
    }

    /// Counts and logs a failed credential.
    pub fn failed(&self, ip: IpAddr, what: &'static str) {
        tracing::warn!(%ip, what, "admin authentication failed");
        self.failures.failed(ip, Instant::now());
    }

    /// Counts a login attempt from `ip`; false when over the limit.
    pub fn login_allowed(&self, ip: IpAddr) -> bool {
        self.login_limiter.check_key(&ip).is_ok()
    }

    pub fn token_matches(&self, candidate: &str) -> bool {
        self.token.as_ref().is_some_and(|t| {
            !t.is_empty() && constant_time_eq(t.expose().as_bytes(), candidate.as_bytes())
        })
    }

    /// Checks a login credential: the token, or the password against the argon2 hash.
    /// Returns how the admin authenticated.
    pub fn check_login(&self, credential: &str) -> Option<&'static str> {
        if self.token_matches(credential) {
            return Some("token");
        }
        let hash = self.password_hash.as_ref()?;
        let parsed = PasswordHash::new(hash.expose()).ok()?;
        Argon2::default()
            .verify_password(credential.as_bytes(), &parsed)
            .ok()
            .map(|_| "password")
    }
}

/// A dashboard session: `<expires>.<nonce>.<how>.<tag>`.
pub struct Session {
    pub nonce: String,
    pub how: String,
}

pub fn new_session_cookie(engine: &Engine, auth: &AdminAuth, how: &str) -> Cookie<'static> {
    let mut n = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut n);
    let nonce = crate::hex::lower(&n);
    let expires = jsonwebtoken::get_current_timestamp() + auth.session_ttl_secs;
    let body = format!("{expires}.{nonce}.{how}");
    let value = format!("{body}.{}", engine.visitors.tag(SESSION_DOMAIN, &body));
    Cookie::build(SESSION_COOKIE, value)
        .path("/")
        .http_only(true)
        .secure(engine.secure_cookies)
        .same_site(SameSite::Strict)
        .max_age(CookieDuration::seconds(auth.session_ttl_secs as i64))
        .finish()
}

pub fn removal_cookie(engine: &Engine) -> Cookie<'static> {
    let mut c = Cookie::build(SESSION_COOKIE, "")
        .path("/")
        .http_only(true)
        .secure(engine.secure_cookies)
        .same_site(SameSite::Strict)
        .finish();
    c.make_removal();
    c
}

/// The valid, unexpired session in the request, if any.
pub fn session(req: &HttpRequest, engine: &Engine) -> Option<Session> {
    let c = req.cookie(SESSION_COOKIE)?;
    let (body, tag) = c.value().rsplit_once('.')?;
    if !engine.visitors.check_tag(SESSION_DOMAIN, body, tag) {
        return None;
    }
    let mut parts = body.splitn(3, '.');
    let expires: u64 = parts.next()?.parse().ok()?;
    let nonce = parts.next()?.to_string();
    let how = parts.next()?.to_string();
    (expires > jsonwebtoken::get_current_timestamp()).then_some(Session { nonce, how })
}

pub fn csrf_token(engine: &Engine, s: &Session) -> String {
    engine.visitors.tag(CSRF_DOMAIN, &s.nonce)
}

pub fn csrf_ok(engine: &Engine, s: &Session, presented: Option<&str>) -> bool {
    presented.is_some_and(|p| engine.visitors.check_tag(CSRF_DOMAIN, &s.nonce, p))
}

/// True when the request's `Origin` (if any) is this server.
pub fn same_origin(req: &HttpRequest, engine: &Engine) -> bool {
    crate::web::support::origin_allowed(req, engine)
}

/// An authenticated admin; extracting it enforces the rules in the module doc.
pub struct Admin {
    /// "token", or "session:token" / "session:password".
    pub who: String,
}

fn authenticate(req: &HttpRequest) -> Result<Admin, ApiError> {
    let engine = req
        .app_data::<web::Data<Engine>>()
        .ok_or_else(|| ApiError::Internal("engine missing".into()))?;
    let auth = req
        .app_data::<web::Data<AdminAuth>>()
        .ok_or_else(|| ApiError::NotFound("the admin interface is disabled".into()))?;
    if !same_origin(req, engine) {
        return Err(ApiError::Forbidden(
            "cross-origin admin requests are not allowed".into(),
        ));
    }
    if let Some(t) = crate::web::support::bearer(req)? {
        let ip = client_ip(req, engine);
        auth.check_not_blocked(ip)?;
        return if auth.token_matches(t) {
            Ok(Admin {
                who: "token".into(),
            })
        } else {
            auth.failed(ip, "bearer token");
            Err(ApiError::unauthorized(
                "invalid_token",
                "the admin token is not valid",
            ))
        };
    }
    let Some(s) = session(req, engine) else {
        return Err(ApiError::unauthorized(
            "no_credential",
            "send Authorization: Bearer <admin token>, or log in at /admin",
        ));
    };
    let reads = matches!(*req.method(), Method::GET | Method::HEAD);
    if !reads {
        let presented = req
            .headers()
            .get("x-csrf-token")
            .and_then(|v| v.to_str().ok());
        if !csrf_ok(engine, &s, presented) {
            return Err(ApiError::Forbidden("missing or wrong CSRF token".into()));
        }
    }
    Ok(Admin {
        who: format!("session:{}", s.how),
    })
}

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        ready(authenticate(req))
    }
}

/// The admin credentials, or an error when admin is on without any — except the plain
/// demo (`demo`, no Redis), which gets a generated token, printed once.
pub fn from_settings(settings: &Settings) -> anyhow::Result<Option<AdminAuth>> {
    let a = &settings.admin;
    if !a.enabled {
        return Ok(None);
    }
    let mut token = a.token.clone().filter(|t| !t.is_empty());
    if token.is_none() && a.password_hash.is_none() {
        if settings.demo && settings.redis_url.is_none() {
            let mut b = [0u8; 32];
            rand::thread_rng().fill_bytes(&mut b);
            let generated =
                base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, b);
            tracing::warn!(
                admin_token = %generated,
                "demo: generated an admin token for this run; sign in at /admin with it"
            );
            token = Some(crate::config::Secret::new(generated));
        } else {
            anyhow::bail!(
                "configuration: the admin interface is enabled but has no credential: set `admin.token` (ANTEROOM_ADMIN__TOKEN) or `admin.password_hash`, or set `admin.enabled = false`"
            );
        }
    }
    Ok(Some(AdminAuth::new(a, token)))
}
