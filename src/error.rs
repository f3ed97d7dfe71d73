//! Error policy.
//!
//! Every failure a client sees has one JSON shape,
//! `{"error": {"code": "<machine code>", "message": "<human sentence>"}}`, and one status:
//!
//! | status | codes | when |
//! |--------|-------|------|
//! | 400 | `malformed_json`, `bad_request`, `invalid_field` (with a `field` member) | input that cannot be parsed or is out of range |
//! | 401 | `invalid_token`, `no_visitor`, `invalid_pass`, `expired_pass` | missing, forged, tampered or expired credentials |
//! | 403 | `forbidden` | cross-site requests where same-origin is required, a missing or wrong CSRF token, a room that may not be embedded here |
//! | 404 | `unknown_room`, `not_found` | the room (or thing) does not exist |
//! | 409 | `conflict` | the thing already exists |
//! | 429 | `rate_limited` | a limiter refused; `Retry-After` says when to come back |
//! | 503 | `store_unavailable` | the store did not answer in time; nothing was changed twice |
//! | 500 | `internal` | a bug; the detail goes to the log, never to the client |
//!
//! Store failures are logged (with the operation) and counted in
//! `anteroom_store_errors_total`; client errors are not logged.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde_json::json;

use crate::pass::PassError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    #[error("`{field}` {message}")]
    InvalidField { field: String, message: String },
    #[error("{message}")]
    Unauthorized { code: &'static str, message: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("no room named `{0}`")]
    UnknownRoom(String),
    #[error("{0}")]
    NotFound(String),
    #[error("too many requests; retry in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    #[error("the queue store is unavailable; please retry shortly")]
    Unavailable,
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::BadRequest {
            code: "bad_request",
            message: message.into(),
        }
    }

    pub fn invalid_field(field: &str, message: &str) -> Self {
        ApiError::InvalidField {
            field: field.to_string(),
            message: message.to_string(),
        }
    }

    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::Unauthorized {
            code,
            message: message.into(),
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest { code, .. } | ApiError::Unauthorized { code, .. } => code,
            ApiError::InvalidField { .. } => "invalid_field",
            ApiError::Conflict(_) => "conflict",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::UnknownRoom(_) => "unknown_room",
            ApiError::NotFound(_) => "not_found",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::Unavailable => "store_unavailable",
            ApiError::Internal(_) => "internal",
        }
    }
}

impl From<PassError> for ApiError {
    fn from(e: PassError) -> Self {
        let code = match e {
            PassError::Expired => "expired_pass",
            PassError::WrongRoom | PassError::Invalid => "invalid_pass",
        };
        ApiError::unauthorized(code, e.to_string())
    }
}

/// Maps store errors for a room-scoped operation. Callers log and count before this.
pub fn from_store(room: &str, e: StoreError) -> ApiError {
    match e {
        StoreError::NoSuchRoom => ApiError::UnknownRoom(room.to_string()),
        StoreError::Unavailable(_) => ApiError::Unavailable,
        StoreError::Protocol(m) => ApiError::Internal(m),
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } | ApiError::InvalidField { .. } => StatusCode::BAD_REQUEST,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::UnknownRoom(_) | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(detail) = self {
            tracing::error!(%detail, "internal error");
        }
        let mut res = HttpResponse::build(self.status_code());
        res.insert_header((header::CACHE_CONTROL, "no-store"));
        match self {
            ApiError::RateLimited { retry_after_secs } => {
                res.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            ApiError::Unavailable => {
                res.insert_header((header::RETRY_AFTER, "1"));
            }
            ApiError::Unauthorized { .. } => {
                res.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            _ => {}
        }
        let mut error = json!({"code": self.code(), "message": self.to_string()});
        if let ApiError::InvalidField { field, .. } = self {
            error["field"] = json!(field);
        }
        res.json(json!({ "error": error }))
    }
}

/// Turns actix's extractor failures (bad JSON, bad path or query) into our shape.
pub fn json_error_handler(
    err: actix_web::error::JsonPayloadError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::BadRequest {
        code: "malformed_json",
        message: format!("the request body is not valid JSON: {err}"),
    }
    .into()
}

pub fn query_error_handler(
    err: actix_web::error::QueryPayloadError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::bad_request(format!("bad query string: {err}")).into()
}

pub fn path_error_handler(
    err: actix_web::error::PathError,
    _req: &actix_web::HttpRequest,
) -> actix_web::Error {
    ApiError::bad_request(format!("bad path: {err}")).into()
}
