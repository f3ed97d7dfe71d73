//! The `[admin]` section: who may use the dashboard and the admin API, and how they
//! prove it.
//!
//! - `[[admin.users]]`: named accounts, each with a [`Role`], a dashboard password (an
//!   argon2id PHC string) and/or an API token (kept as its hex SHA-256, so the file
//!   holds nothing that signs in by itself).
//! - `admin.token` / `admin.password_hash`: the shared credentials of before, still
//!   accepted as owners named `token` and `password` (nothing breaks for old configs).
//! - `[admin.oidc]`: single sign-on with an OpenID provider; the role comes from a claim
//!   of the ID token through a map.
//!
//! Every check names the field it refuses (`admin.users[1].password_hash`).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use super::ConfigError;
use crate::room::Secret;

/// What an admin may do. Ordered: each role may do everything the ones before it may.
#[derive(
    Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Sees everything (rooms, figures, visitors, the audit log); changes nothing.
    Viewer,
    /// Also runs rooms: creates and changes them (not their secrets or webhooks),
    /// pauses, closes, sets modes and stock, removes visitors.
    Operator,
    /// Also sets rooms' secrets and webhooks, deletes rooms and flushes their lines.
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Owner => "owner",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "viewer" => Role::Viewer,
            "operator" => Role::Operator,
            "owner" => Role::Owner,
            _ => return None,
        })
    }
}

/// The name `admin.token` signs in as.
pub const TOKEN_USER: &str = "token";
/// The name `admin.password_hash` signs in as.
pub const PASSWORD_USER: &str = "password";

/// The admin dashboard (`/admin`) and API (`/api/admin/…`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AdminSettings {
    /// Serve the dashboard and the admin API. With it on, a credential is required: the
    /// server refuses to start without `users`, `token`, `password_hash` or `oidc`,
    /// except the plain demo (`demo = true`, no `redis_url`), which generates a token and
    /// prints it.
    pub enabled: bool,
    /// Bearer token for the admin API (`Authorization: Bearer …`); also accepted by the
    /// login form. Signs in as an owner named `token`.
    pub token: Option<Secret>,
    /// Argon2 hash (PHC string, `$argon2id$…`) of a shared dashboard password; make one
    /// with `anteroom hash-password`. Signs in as an owner named `password`.
    pub password_hash: Option<Secret>,
    /// Named admin accounts (`[[admin.users]]`), each with its role.
    #[serde(default)]
    pub users: Vec<AdminUser>,
    /// Single sign-on through an OpenID provider (`[admin.oidc]`). Unset: off.
    #[serde(default)]
    pub oidc: Option<OidcSettings>,
    /// How long a dashboard login lasts, in seconds.
    pub session_ttl_secs: u64,
    /// Login attempts allowed per IP per minute (successful or not).
    pub login_attempts_per_minute: u32,
    /// Failed admin authentications (wrong bearer token or login) allowed per client
    /// (IPv4 address or IPv6 /64) per minute; past it, the client is refused with 429
    /// before its credential is checked, until the minute ends.
    pub failed_auth_per_minute: u32,
    /// The same, for all clients together (a ceiling on distributed guessing; while it
    /// is reached, every client that failed in the window answers 429; one that has not
    /// failed is still checked, so others' guesses never lock out the right token).
    pub failed_auth_global_per_minute: u32,
    /// Failed sign-ins naming one user allowed per minute, from all clients together.
    /// Past it, a client that already failed for that user this minute is refused with
    /// 429 for that user; one that has not is still checked, so guesses against a name
    /// never lock its owner out.
    #[serde(default = "default_per_user")]
    pub failed_auth_per_user_per_minute: u32,
    /// Audit log entries kept in the store.
    pub audit_keep: u32,
}

fn default_per_user() -> u32 {
    10
}

/// One named admin account (`[[admin.users]]`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AdminUser {
    /// The name the dashboard's sign-in form takes and the audit log shows:
    /// `[A-Za-z0-9._@-]{1,64}`, unique.
    pub name: String,
    /// `viewer`, `operator` or `owner`.
    pub role: Role,
    /// Argon2id PHC string (`$argon2id$v=19$…`) of the dashboard password, from
    /// `anteroom hash-password`. Unset: no dashboard password for this user.
    #[serde(default)]
    pub password_hash: Option<Secret>,
    /// Hex SHA-256 (64 hex digits) of this user's API token, which is sent as
    /// `Authorization: Bearer <token>` and must be at least 32 characters (a shorter
    /// bearer never matches). Unset: no API access for this user.
    #[serde(default)]
    pub token_sha256: Option<Secret>,
}

/// Single sign-on (`[admin.oidc]`): the authorization-code flow with PKCE against an
/// OpenID provider found by discovery (`<issuer>/.well-known/openid-configuration`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OidcSettings {
    /// The provider's issuer URL, exactly as its ID tokens' `iss`.
    pub issuer: String,
    /// This application's client id at the provider.
    pub client_id: String,
    /// Its client secret (unset for a public client, which PKCE alone protects).
    #[serde(default)]
    pub client_secret: Option<Secret>,
    /// Where the provider sends the browser back: this server's
    /// `/admin/oidc/callback`, as the browser reaches it (registered at the provider).
    pub redirect_url: String,
    /// The ID token claim holding the user's groups or roles (a string or an array of
    /// strings); a dotted path reaches into objects (`realm_access.roles`).
    #[serde(default = "default_roles_claim")]
    pub roles_claim: String,
    /// Claim value -> role. A user gets the highest role any of their values maps to;
    /// a user none of whose values is here is refused.
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
}

fn default_roles_claim() -> String {
    "roles".into()
}

/// A name the form and the audit log can carry as it is.
pub fn valid_user_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'-'))
}

/// Whether `s` is an argon2id PHC string with parameters argon2 accepts.
fn valid_argon2id(s: &str) -> Result<(), String> {
    let h = argon2::PasswordHash::new(s).map_err(|e| e.to_string())?;
    if h.algorithm.as_str() != "argon2id" {
        return Err(format!("is {}, not argon2id", h.algorithm));
    }
    argon2::Params::try_from(&h).map_err(|e| e.to_string())?;
    if h.hash.is_none() || h.salt.is_none() {
        return Err("has no salt or hash".into());
    }
    Ok(())
}

fn valid_url(s: &str) -> bool {
    url::Url::parse(s).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

impl AdminSettings {
    /// Checks the section; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field: &str, message: &str| ConfigError::Invalid {
            field: field.into(),
            message: message.into(),
        };
        if self.audit_keep == 0 {
            return Err(invalid("admin.audit_keep", "must be at least 1"));
        }
        if self.session_ttl_secs == 0 {
            return Err(invalid("admin.session_ttl_secs", "must be at least 1"));
        }
        if let Some(t) = &self.token {
            if !t.is_empty() && t.expose().chars().count() < 32 {
                return Err(invalid(
                    "admin.token",
                    "must be at least 32 characters (e.g. `openssl rand -base64 32`)",
                ));
            }
        }
        for (field, v) in [
            ("admin.failed_auth_per_minute", self.failed_auth_per_minute),
            (
                "admin.failed_auth_global_per_minute",
                self.failed_auth_global_per_minute,
            ),
            (
                "admin.failed_auth_per_user_per_minute",
                self.failed_auth_per_user_per_minute,
            ),
            (
                "admin.login_attempts_per_minute",
                self.login_attempts_per_minute,
            ),
        ] {
            if v == 0 {
                return Err(invalid(field, "must be at least 1"));
            }
        }
        if let Some(h) = &self.password_hash {
            if !h.expose().starts_with("$argon2") {
                return Err(invalid(
                    "admin.password_hash",
                    "must be an argon2 PHC string ($argon2id$…); make one with `anteroom hash-password`",
                ));
            }
        }
        self.validate_users()?;
        if let Some(o) = &self.oidc {
            o.validate()?;
        }
        Ok(())
    }

    fn validate_users(&self) -> Result<(), ConfigError> {
        let mut names = HashSet::new();
        let mut tokens = HashSet::new();
        for (i, u) in self.users.iter().enumerate() {
            let field = |f: &str| format!("admin.users[{i}].{f}");
            let invalid = |f: &str, message: String| ConfigError::Invalid {
                field: field(f),
                message,
            };
            if !valid_user_name(&u.name) {
                return Err(invalid(
                    "name",
                    format!("{:?} must be 1-64 of A-Z a-z 0-9 . _ @ -", u.name),
                ));
            }
            let legacy = (u.name == TOKEN_USER
                && self.token.as_ref().is_some_and(|t| !t.is_empty()))
                || (u.name == PASSWORD_USER && self.password_hash.is_some());
            if legacy {
                return Err(invalid(
                    "name",
                    format!(
                        "{:?} is taken by admin.{}: pick another name",
                        u.name,
                        if u.name == TOKEN_USER {
                            "token"
                        } else {
                            "password_hash"
                        }
                    ),
                ));
            }
            if !names.insert(u.name.as_str()) {
                return Err(invalid(
                    "name",
                    format!("{:?} is a duplicate (names are unique)", u.name),
                ));
            }
            if u.password_hash.is_none() && u.token_sha256.is_none() {
                return Err(invalid(
                    "password_hash",
                    "or token_sha256 is required: the user has no way to sign in".into(),
                ));
            }
            if let Some(h) = &u.password_hash {
                valid_argon2id(h.expose()).map_err(|why| {
                    invalid(
                        "password_hash",
                        format!(
                            "must be an argon2id PHC string ($argon2id$v=19$…) made by `anteroom hash-password`: {why}"
                        ),
                    )
                })?;
            }
            if let Some(t) = &u.token_sha256 {
                let t = t.expose();
                if t.len() != 64 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(invalid(
                        "token_sha256",
                        "must be the token's SHA-256 as 64 hex digits (`printf %s \"$TOKEN\" | sha256sum`)".into(),
                    ));
                }
                if !tokens.insert(t.to_ascii_lowercase()) {
                    return Err(invalid(
                        "token_sha256",
                        "is another user's too: each user needs their own token".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether any way to sign in is configured.
    pub fn has_credential(&self) -> bool {
        self.token.as_ref().is_some_and(|t| !t.is_empty())
            || self.password_hash.is_some()
            || !self.users.is_empty()
            || self.oidc.is_some()
    }
}

impl OidcSettings {
    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |f: &str, message: &str| ConfigError::Invalid {
            field: format!("admin.oidc.{f}"),
            message: message.into(),
        };
        if !valid_url(&self.issuer) {
            return Err(invalid(
                "issuer",
                "must be the provider's issuer URL (https://login.example/realms/x)",
            ));
        }
        if self.client_id.is_empty() {
            return Err(invalid("client_id", "must not be empty"));
        }
        if !valid_url(&self.redirect_url) {
            return Err(invalid(
                "redirect_url",
                "must be this server's /admin/oidc/callback URL as the browser reaches it",
            ));
        }
        if self.roles_claim.is_empty() || self.roles_claim.split('.').any(str::is_empty) {
            return Err(invalid(
                "roles_claim",
                "must name a claim (a dotted path reaches into objects)",
            ));
        }
        if self.roles.is_empty() {
            return Err(invalid(
                "roles",
                "must map at least one claim value to a role (nobody could sign in)",
            ));
        }
        Ok(())
    }
}
