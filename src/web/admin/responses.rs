//! The error answers every admin route documents besides its own (authentication, the
//! origin check, the failed-authentication limit, the store), written once for the
//! OpenAPI document. A route lists its own answers (`200`, `400`, `404`, `409`) and then
//! [`AdminReadErrors`] or, when it changes something, [`AdminWriteErrors`], which adds
//! `403 forbidden_role` (the user's role may not make the change: `super::roles`).

use crate::web::error::ErrorBody;

/// The shared answers of an admin route that only reads.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Only its OpenAPI description is used.
pub enum AdminReadErrors {
    #[response(status = 401, description = "`no_credential`, `invalid_token`.", headers(("WWW-Authenticate" = String, description = "`Bearer`")))]
    Unauthorized(ErrorBody),
    #[response(
        status = 403,
        description = "`forbidden`: a foreign `Origin`, or a dashboard session without the right `X-CSRF-Token`."
    )]
    Forbidden(ErrorBody),
    #[response(status = 429, description = "`rate_limited`: too many failed authentications from this client.", headers(("Retry-After" = u64, description = "Seconds to wait.")))]
    RateLimited(ErrorBody),
    #[response(status = 503, description = "`store_unavailable`.", headers(("Retry-After" = u64, description = "Seconds to wait.")))]
    StoreUnavailable(ErrorBody),
    #[response(status = 500, description = "`internal`.")]
    Internal(ErrorBody),
}

/// The shared answers of an admin route that changes something: those of
/// [`AdminReadErrors`], and a `403` that may also be `forbidden_role`.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Only its OpenAPI description is used.
pub enum AdminWriteErrors {
    #[response(status = 401, description = "`no_credential`, `invalid_token`.", headers(("WWW-Authenticate" = String, description = "`Bearer`")))]
    Unauthorized(ErrorBody),
    #[response(
        status = 403,
        description = "`forbidden`: a foreign `Origin`, or a dashboard session without the right `X-CSRF-Token`; `forbidden_role`: the user's role may not make this change (the message names the role needed)."
    )]
    Forbidden(ErrorBody),
    #[response(status = 429, description = "`rate_limited`: too many failed authentications from this client.", headers(("Retry-After" = u64, description = "Seconds to wait.")))]
    RateLimited(ErrorBody),
    #[response(status = 503, description = "`store_unavailable`.", headers(("Retry-After" = u64, description = "Seconds to wait.")))]
    StoreUnavailable(ErrorBody),
    #[response(status = 500, description = "`internal`.")]
    Internal(ErrorBody),
}
