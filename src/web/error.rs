//! The web layer's one error type, [`ApiError`]: every failure a client sees as one
//! JSON shape and one status (the table and the layer policy are in `crate::domain::error`).
//! Domain errors become `ApiError`s here, once (`From<DomainError>`).

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::error::DomainError;
use crate::domain::pass::PassError;
use crate::domain::pow::Challenge;

/// What went wrong, in every JSON error body (`error`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A machine code (the table in `docs/http-api.md#errors`).
    #[schema(example = "rate_limited")]
    pub code: &'static str,
    /// A sentence for a person.
    #[schema(example = "too many requests; retry in 60 s")]
    pub message: String,
    /// The offending field: only with `invalid_field`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "capacity")]
    pub field: Option<String>,
}

/// The one JSON error shape: `{"error": {"code", "message", "field"?}}`. Some answers add
/// members beside `error` ([`ChallengeErrorBody`], a join's `503`, the admin `409`s).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// A join refused for want of a proof of work (`403 challenge_*`): the error and a fresh
/// challenge to solve.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ChallengeErrorBody {
    pub error: ErrorDetail,
    pub challenge: Challenge,
}

/// `Retry-After` of a `429 too_many_places`: when one of the group's places may have been
/// let in (a guess; nothing frees on a timer).
pub const TOO_MANY_PLACES_RETRY_SECS: u64 = 30;

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
    /// An admin whose role may not do this (`web::admin::roles`).
    #[error("{0}")]
    ForbiddenRole(String),
    /// A join without a usable proof of work: `403` with a fresh challenge beside the
    /// error.
    #[error("{message}")]
    Challenge {
        code: &'static str,
        message: String,
        challenge: Box<Challenge>,
    },
    #[error("no room named `{0}`")]
    UnknownRoom(String),
    #[error("{0}")]
    NotFound(String),
    #[error("too many requests; retry in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    #[error("{0}")]
    TooManyPlaces(String),
    #[error("the queue store is unavailable; please retry shortly")]
    Unavailable,
    /// The store lost its data; the places it held are being put back.
    #[error("{message}")]
    Restoring {
        retry_after_secs: u64,
        message: String,
    },
    #[error("the request body did not arrive in time")]
    RequestTimeout,
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

    /// The `error` member of this error's body.
    pub fn detail(&self) -> ErrorDetail {
        ErrorDetail {
            code: self.code(),
            message: self.to_string(),
            field: match self {
                ApiError::InvalidField { field, .. } => Some(field.clone()),
                _ => None,
            },
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest { code, .. }
            | ApiError::Unauthorized { code, .. }
            | ApiError::Challenge { code, .. } => code,
            ApiError::InvalidField { .. } => "invalid_field",
            ApiError::Conflict(_) => "conflict",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::ForbiddenRole(_) => "forbidden_role",
            ApiError::UnknownRoom(_) => "unknown_room",
            ApiError::NotFound(_) => "not_found",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::TooManyPlaces(_) => "too_many_places",
            ApiError::Unavailable => "store_unavailable",
            ApiError::Restoring { .. } => "store_restoring",
            ApiError::RequestTimeout => "request_timeout",
            ApiError::Internal(_) => "internal",
        }
    }
}

impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> Self {
        let message = e.to_string();
        match e {
            DomainError::UnknownRoom(room) => ApiError::UnknownRoom(room),
            DomainError::InvalidField { field, message } => {
                ApiError::InvalidField { field, message }
            }
            DomainError::InvalidToken => ApiError::unauthorized("invalid_token", message),
            DomainError::Entry(e) => ApiError::unauthorized(e.code(), message),
            DomainError::Receipt(e) => ApiError::unauthorized(e.code(), message),
            DomainError::Challenge { error, fresh } => ApiError::Challenge {
                code: error.code(),
                message,
                challenge: fresh,
            },
            DomainError::NoVisitor(_) => ApiError::unauthorized("no_visitor", message),
            DomainError::Pass(PassError::Expired) => {
                ApiError::unauthorized("expired_pass", message)
            }
            DomainError::Pass(_) | DomainError::SessionEnded => {
                ApiError::unauthorized("invalid_pass", message)
            }
            DomainError::NotFound(m) => ApiError::NotFound(m),
            DomainError::Conflict(m) => ApiError::Conflict(m),
            DomainError::RateLimited { retry_after_secs } => {
                ApiError::RateLimited { retry_after_secs }
            }
            DomainError::Unavailable => ApiError::Unavailable,
            DomainError::Restoring { retry_after_secs } => ApiError::Restoring {
                retry_after_secs,
                message,
            },
            DomainError::TooManyPlaces => ApiError::TooManyPlaces(message),
            DomainError::Internal(detail) => ApiError::Internal(detail),
        }
    }
}

impl From<PassError> for ApiError {
    fn from(e: PassError) -> Self {
        DomainError::Pass(e).into()
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } | ApiError::InvalidField { .. } => StatusCode::BAD_REQUEST,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) | ApiError::ForbiddenRole(_) | ApiError::Challenge { .. } => {
                StatusCode::FORBIDDEN
            }
            ApiError::UnknownRoom(_) | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::RateLimited { .. } | ApiError::TooManyPlaces(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::Unavailable | ApiError::Restoring { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
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
            ApiError::Restoring {
                retry_after_secs, ..
            } => {
                res.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            ApiError::TooManyPlaces(_) => {
                res.insert_header((header::RETRY_AFTER, TOO_MANY_PLACES_RETRY_SECS.to_string()));
            }
            ApiError::Unauthorized { .. } => {
                res.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            _ => {}
        }
        let error = self.detail();
        if let ApiError::Challenge { challenge, .. } = self {
            return res.json(ChallengeErrorBody {
                error,
                challenge: (**challenge).clone(),
            });
        }
        res.json(ErrorBody { error })
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
