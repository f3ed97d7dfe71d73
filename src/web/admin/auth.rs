//! Admin authentication: who is asking, and with which [`Role`].
//!
//! - **Accounts**: `[[admin.users]]` (a name, a role, a password hash and/or the SHA-256
//!   of an API token), plus the shared `admin.token` (an owner named `token`) and
//!   `admin.password_hash` (an owner named `password`). [`Accounts`] holds them.
//! - **API**: `Authorization: Bearer <token>`: the shared token, or a user's token
//!   (found by its SHA-256, compared in constant time; shorter than 32 characters never
//!   matches). If the request carries an `Origin`, it must be this server's (a page
//!   elsewhere cannot drive the API with a stolen token in a victim's browser).
//! - **Dashboard**: `POST /admin/login` with `name` and `password`, or with
//!   `credential` (a token or the shared password), rate-limited per IP and throttled
//!   per client and per user ([`FailureLimiter`]); or single sign-on
//!   ([`super::oidc`]). Either sets `anteroom_admin`: a signed, expiring cookie (HttpOnly,
//!   SameSite=Strict, Secure behind TLS) naming the user. With it, reads are allowed;
//!   changes also need the CSRF token (`X-CSRF-Token` header or `csrf` form field, an
//!   HMAC of the session) and a same-origin `Origin`.
//! - **Roles**: [`super::roles`] says which role each route needs; the [`Admin`]
//!   extractor checks it, so a handler runs only for a role allowed to.

use std::future::{ready, Ready};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::http::Method;
use actix_web::{web, FromRequest, HttpRequest};
use argon2::{Argon2, PasswordHash, PasswordVerifier};
use base64::Engine as _;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::config::{AdminSettings, Role, Settings, PASSWORD_USER, TOKEN_USER};
use crate::domain::admission::Engine;
use crate::domain::identity::constant_time_eq;
use crate::domain::ratelimit::FailureLimiter;
use crate::room::Secret;
use crate::web::error::ApiError;
use crate::web::support::client_ip;

/// Who signed in (with their role), kept beside the roles.
pub use super::roles::Principal;

pub const SESSION_COOKIE: &str = "anteroom_admin";
const SESSION_DOMAIN: &str = "admin-session";
const CSRF_DOMAIN: &str = "admin-csrf";
/// Bearer tokens shorter than this never match a user's `token_sha256`.
pub const MIN_TOKEN_CHARS: usize = 32;

/// One configured account.
struct Account {
    name: String,
    role: Role,
    password_hash: Option<Secret>,
    token_sha256: Option<[u8; 32]>,
}

/// A hash verified when the name is unknown, so a wrong name costs what a wrong
/// password costs and the time taken does not say which names exist.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| {
    use argon2::password_hash::{PasswordHasher, SaltString};
    // unwrap: a fixed, valid salt and the default parameters.
    let salt = SaltString::encode_b64(b"anteroom-dummy-salt").unwrap();
    Argon2::default()
        .hash_password(b"not a password", &salt)
        .unwrap()
        .to_string()
});

fn argon2_matches(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

fn sha256(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
}

/// The credentials, the login limiter and, when configured, single sign-on.
pub struct AdminAuth {
    token: Option<Secret>,
    accounts: Vec<Account>,
    pub session_ttl_secs: u64,
    login_limiter: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    /// Failed bearer tokens and logins, per client, per user and overall.
    pub failures: FailureLimiter,
    /// Single sign-on, when `[admin.oidc]` is set.
    pub oidc: Option<super::oidc::Oidc>,
}

impl AdminAuth {
    pub fn new(a: &AdminSettings, token: Option<Secret>) -> Self {
        let per_minute = NonZeroU32::new(a.login_attempts_per_minute).unwrap_or(NonZeroU32::MIN);
        let mut accounts: Vec<Account> = a
            .users
            .iter()
            .map(|u| Account {
                name: u.name.clone(),
                role: u.role,
                password_hash: u.password_hash.clone(),
                // Validated at load: 64 hex digits.
                token_sha256: u
                    .token_sha256
                    .as_ref()
                    .and_then(|t| crate::hex::bytes(t.expose()).try_into().ok()),
            })
            .collect();
        if let Some(h) = &a.password_hash {
            accounts.push(Account {
                name: PASSWORD_USER.into(),
                role: Role::Owner,
                password_hash: Some(h.clone()),
                token_sha256: None,
            });
        }
        Self {
            token,
            accounts,
            session_ttl_secs: a.session_ttl_secs,
            login_limiter: Arc::new(RateLimiter::keyed(Quota::per_minute(per_minute))),
            failures: FailureLimiter::new(
                a.failed_auth_per_minute,
                a.failed_auth_global_per_minute,
                Instant::now(),
            )
            .with_per_user(a.failed_auth_per_user_per_minute),
            oidc: None,
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

    /// Refuses a client that failed too often, or failed too often for `user`.
    pub fn check_user_not_blocked(&self, ip: IpAddr, user: &str) -> Result<(), ApiError> {
        match self.failures.blocked_for_user(ip, user, Instant::now()) {
            None => Ok(()),
            Some(retry_after_secs) => {
                tracing::warn!(%ip, user, "admin sign-in refused: too many failures");
                Err(ApiError::RateLimited { retry_after_secs })
            }
        }
    }

    /// Counts and logs a failed credential.
    pub fn failed(&self, ip: IpAddr, what: &'static str) {
        tracing::warn!(%ip, what, "admin authentication failed");
        self.failures.failed(ip, Instant::now());
    }

    /// Counts and logs a failed sign-in naming `user` (counted for the user only when
    /// it exists, so guessed names cannot grow the counters).
    pub fn failed_for_user(&self, ip: IpAddr, user: &str) {
        tracing::warn!(%ip, user, "admin sign-in failed");
        if self.account(user).is_some() {
            self.failures.failed_for_user(ip, user, Instant::now());
        } else {
            self.failures.failed(ip, Instant::now());
        }
    }

    /// Counts a login attempt from `ip`; false when over the limit.
    pub fn login_allowed(&self, ip: IpAddr) -> bool {
        self.login_limiter.check_key(&ip).is_ok()
    }

    /// Whether named users (with a password) are configured: the form asks for a name.
    pub fn has_users(&self) -> bool {
        self.accounts
            .iter()
            .any(|a| a.password_hash.is_some() && a.name != PASSWORD_USER)
    }

    fn account(&self, name: &str) -> Option<&Account> {
        self.accounts.iter().find(|a| a.name == name)
    }

    /// The account a bearer token belongs to: the shared token (owner `token`), or the
    /// user whose `token_sha256` is the token's SHA-256. Every user's hash is compared,
    /// in constant time, whichever matches.
    pub fn bearer(&self, candidate: &str) -> Option<Principal> {
        let shared = self.token.as_ref().is_some_and(|t| {
            !t.is_empty() && constant_time_eq(t.expose().as_bytes(), candidate.as_bytes())
        });
        if shared {
            return Some(Principal {
                name: TOKEN_USER.into(),
                role: Role::Owner,
            });
        }
        if candidate.chars().count() < MIN_TOKEN_CHARS {
            return None;
        }
        let h = sha256(candidate);
        let mut found = None;
        for a in &self.accounts {
            if let Some(t) = &a.token_sha256 {
                if constant_time_eq(t, &h) && found.is_none() {
                    found = Some(Principal {
                        name: a.name.clone(),
                        role: a.role,
                    });
                }
            }
        }
        found
    }

    /// Checks a sign-in by name and password. An unknown name or a user without a
    /// password costs one argon2 verification too.
    pub fn check_password(&self, name: &str, password: &str) -> Option<Principal> {
        match self.account(name) {
            Some(a) => {
                let hash = a
                    .password_hash
                    .as_ref()
                    .map_or(DUMMY_HASH.as_str(), |h| h.expose());
                (argon2_matches(hash, password) && a.password_hash.is_some()).then(|| Principal {
                    name: a.name.clone(),
                    role: a.role,
                })
            }
            None => {
                argon2_matches(&DUMMY_HASH, password);
                None
            }
        }
    }

    /// Checks the form's single `credential`: a token (the shared one or a user's), or
    /// the shared password (`admin.password_hash`).
    pub fn check_credential(&self, credential: &str) -> Option<Principal> {
        self.bearer(credential)
            .or_else(|| self.check_password(PASSWORD_USER, credential))
    }

    /// The role a session names now: a configured account's role as configured (a user
    /// removed from the configuration is signed out), a single sign-on user's as signed.
    fn session_role(&self, source: &str, name: &str, signed_role: Role) -> Option<Role> {
        match source {
            SOURCE_LOCAL if name == TOKEN_USER => self
                .token
                .as_ref()
                .filter(|t| !t.is_empty())
                .map(|_| Role::Owner),
            SOURCE_LOCAL => self.account(name).map(|a| a.role),
            SOURCE_OIDC if self.oidc.is_some() => Some(signed_role),
            _ => None,
        }
    }
}

/// Where a session's user is defined.
pub const SOURCE_LOCAL: &str = "local";
pub const SOURCE_OIDC: &str = "oidc";

/// A dashboard session: `<expires>.<nonce>.<source>.<role>.<name, base64url>.<tag>`,
/// the tag an HMAC of the rest under the server's key.
pub struct Session {
    pub nonce: String,
    pub who: Principal,
}

pub fn new_session_cookie(
    engine: &Engine,
    auth: &AdminAuth,
    source: &str,
    who: &Principal,
) -> Cookie<'static> {
    let mut n = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut n);
    let nonce = crate::hex::lower(&n);
    let expires = jsonwebtoken::get_current_timestamp() + auth.session_ttl_secs;
    let name = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&who.name);
    let body = format!("{expires}.{nonce}.{source}.{}.{name}", who.role.as_str());
    let value = format!("{body}.{}", engine.visitors().tag(SESSION_DOMAIN, &body));
    Cookie::build(SESSION_COOKIE, value)
        .path("/")
        .http_only(true)
        .secure(engine.secure_cookies())
        .same_site(SameSite::Strict)
        .max_age(CookieDuration::seconds(auth.session_ttl_secs as i64))
        .finish()
}

pub fn removal_cookie(engine: &Engine) -> Cookie<'static> {
    let mut c = Cookie::build(SESSION_COOKIE, "")
        .path("/")
        .http_only(true)
        .secure(engine.secure_cookies())
        .same_site(SameSite::Strict)
        .finish();
    c.make_removal();
    c
}

/// The valid, unexpired session in the request, if any, with the role its user has now.
pub fn session(req: &HttpRequest, engine: &Engine, auth: &AdminAuth) -> Option<Session> {
    let c = req.cookie(SESSION_COOKIE)?;
    let (body, tag) = c.value().rsplit_once('.')?;
    if !engine.visitors().check_tag(SESSION_DOMAIN, body, tag) {
        return None;
    }
    let mut parts = body.split('.');
    let expires: u64 = parts.next()?.parse().ok()?;
    let nonce = parts.next()?.to_string();
    let source = parts.next()?;
    let signed_role = Role::parse(parts.next()?)?;
    let name = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts.next()?)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())?;
    if parts.next().is_some() || expires <= jsonwebtoken::get_current_timestamp() {
        return None;
    }
    let role = auth.session_role(source, &name, signed_role)?;
    Some(Session {
        nonce,
        who: Principal { name, role },
    })
}

pub fn csrf_token(engine: &Engine, s: &Session) -> String {
    engine.visitors().tag(CSRF_DOMAIN, &s.nonce)
}

pub fn csrf_ok(engine: &Engine, s: &Session, presented: Option<&str>) -> bool {
    presented.is_some_and(|p| engine.visitors().check_tag(CSRF_DOMAIN, &s.nonce, p))
}

/// True when the request's `Origin` (if any) is this server.
pub fn same_origin(req: &HttpRequest, engine: &Engine) -> bool {
    crate::web::support::origin_allowed(req, engine)
}

/// An authenticated admin whose role may use the route; extracting it enforces the
/// rules in the module doc and the route's role ([`super::roles::required`]).
pub struct Admin {
    /// The user's name: what the audit log's `who` says.
    pub who: String,
    pub role: Role,
}

impl Admin {
    /// Refuses with `403 forbidden_role` unless this admin's role is at least `role`
    /// (for what depends on the request's content, as a room's secrets in a `PUT`).
    pub fn require(&self, role: Role, what: &str) -> Result<(), ApiError> {
        super::roles::check(self.role, role, what)
    }
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
    let who = if let Some(t) = crate::web::support::bearer(req)? {
        let ip = client_ip(req, engine);
        auth.check_not_blocked(ip)?;
        match auth.bearer(t) {
            Some(p) => p,
            None => {
                auth.failed(ip, "bearer token");
                return Err(ApiError::unauthorized(
                    "invalid_token",
                    "the admin token is not valid",
                ));
            }
        }
    } else {
        let Some(s) = session(req, engine, auth) else {
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
        s.who
    };
    let (needed, what) = super::roles::required(req.method(), req.match_pattern().as_deref());
    super::roles::check(who.role, needed, what)?;
    Ok(Admin {
        who: who.name,
        role: who.role,
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
    if !a.has_credential() {
        if settings.demo && settings.redis_url.is_none() {
            let mut b = [0u8; 32];
            rand::thread_rng().fill_bytes(&mut b);
            let generated = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
            tracing::warn!(
                admin_token = %generated,
                "demo: generated an admin token for this run; sign in at /admin with it"
            );
            token = Some(crate::room::Secret::new(generated));
        } else {
            anyhow::bail!(
                "configuration: the admin interface is enabled but has no credential: set `[[admin.users]]`, `admin.token` (ANTEROOM_ADMIN__TOKEN), `admin.password_hash` or `[admin.oidc]`, or set `admin.enabled = false`"
            );
        }
    }
    let mut auth = AdminAuth::new(a, token);
    if let Some(o) = &a.oidc {
        auth.oidc = Some(super::oidc::Oidc::new(o)?);
    }
    Ok(Some(auth))
}
