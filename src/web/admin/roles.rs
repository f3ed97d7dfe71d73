//! Which role each admin route needs, in one table, checked once by the
//! [`super::auth::Admin`] extractor before any handler runs.
//!
//! - **viewer**: every read (`GET`, `HEAD`): rooms, figures, visitors, the audit log,
//!   the live stream.
//! - **operator**: running rooms: creating and changing them (`PUT`), pausing, resuming,
//!   closing, opening, stock, removing one visitor.
//! - **owner**: rooms' secrets and webhooks (a `PUT` naming `entry`, `entry_secret`,
//!   `entry_public_key`, `webhook_url` or `webhook_secret`: [`OWNER_FIELDS`], checked by
//!   the handler, which alone sees the body), replaying webhook dead letters (not in
//!   [`RULES`], so an owner's), deleting a room, flushing its line.
//!
//! A change route missing from [`RULES`] needs an owner: a route added without a
//! thought about roles is closed, not open.

use actix_web::http::Method;

use crate::config::Role;
use crate::web::error::ApiError;

/// Who signed in, and what they may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    pub role: Role,
}

/// (method, the route's pattern as actix matched it, the role it needs, what it does).
const RULES: &[(&str, &str, Role, &str)] = &[
    (
        "PUT",
        "/api/admin/rooms/{room}",
        Role::Operator,
        "create or change rooms",
    ),
    (
        "POST",
        "/api/admin/rooms/{room}/{action:pause|resume|close|open}",
        Role::Operator,
        "pause, resume, close or open rooms",
    ),
    (
        "POST",
        "/api/admin/rooms/{room}/stock",
        Role::Operator,
        "change stock",
    ),
    (
        "DELETE",
        "/api/admin/rooms/{room}/visitors/{id}",
        Role::Operator,
        "remove visitors",
    ),
    (
        "DELETE",
        "/api/admin/rooms/{room}",
        Role::Owner,
        "delete rooms",
    ),
    (
        "POST",
        "/api/admin/rooms/{room}/flush",
        Role::Owner,
        "flush a room's line",
    ),
];

/// Room fields only an owner may set: the entry keys and the webhook.
pub const OWNER_FIELDS: &[&str] = &[
    "entry",
    "entry_secret",
    "entry_public_key",
    "webhook_url",
    "webhook_secret",
];

/// The role a request needs, and what it does (for the refusal's message).
pub fn required(method: &Method, pattern: Option<&str>) -> (Role, &'static str) {
    if matches!(*method, Method::GET | Method::HEAD) {
        return (Role::Viewer, "read");
    }
    RULES
        .iter()
        .find(|(m, p, _, _)| *m == method.as_str() && Some(*p) == pattern)
        .map(|(_, _, role, what)| (*role, *what))
        .unwrap_or((Role::Owner, "make this change"))
}

/// `403 forbidden_role` unless `have` is at least `need`.
pub fn check(have: Role, need: Role, what: &str) -> Result<(), ApiError> {
    if have >= need {
        return Ok(());
    }
    Err(ApiError::ForbiddenRole(format!(
        "your role ({}) may not {what}: that needs {}",
        have.as_str(),
        need.as_str()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_need_a_viewer_listed_changes_their_role_and_the_rest_an_owner() {
        let put = Some("/api/admin/rooms/{room}");
        assert_eq!(required(&Method::GET, put).0, Role::Viewer);
        assert_eq!(required(&Method::PUT, put).0, Role::Operator);
        assert_eq!(required(&Method::DELETE, put).0, Role::Owner);
        assert_eq!(
            required(&Method::POST, Some("/api/admin/rooms/{room}/stock")).0,
            Role::Operator
        );
        assert_eq!(
            required(&Method::POST, Some("/api/admin/rooms/{room}/flush")).0,
            Role::Owner
        );
        assert_eq!(
            required(&Method::POST, Some("/api/admin/something/new")).0,
            Role::Owner
        );
        assert_eq!(required(&Method::POST, None).0, Role::Owner);
    }

    #[test]
    fn a_lower_role_is_refused_naming_both_roles() {
        assert!(check(Role::Owner, Role::Operator, "x").is_ok());
        assert!(check(Role::Operator, Role::Operator, "x").is_ok());
        let e = check(Role::Viewer, Role::Operator, "change stock").unwrap_err();
        assert_eq!(e.code(), "forbidden_role");
        assert!(e.to_string().contains("viewer"), "{e}");
    }
}
