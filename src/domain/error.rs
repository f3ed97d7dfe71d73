//! Error policy: which error type belongs to which layer.
//!
//! - **Store** (`store::StoreError`): what a backend can report — the room does not
//!   exist, the store did not answer in time (`Unavailable`), or it answered something we
//!   cannot read (`Protocol`, a bug). Backends never log.
//! - **Domain** ([`DomainError`], this file): what the admission engine, the admin
//!   service, passes and identities report, free of HTTP. A store failure becomes
//!   [`DomainError::Unavailable`] or [`DomainError::Internal`] in exactly one place,
//!   `Engine::store_failed`, which also logs it (with the operation) and counts it in
//!   `anteroom_store_errors_total`. Client mistakes (bad input, bad credentials, unknown
//!   rooms) are never logged.
//! - **Web** (`web::error::ApiError`): the one HTTP shape. `From<DomainError> for
//!   ApiError` maps every domain error to a status and a machine code once; handlers add
//!   only the errors that exist at the HTTP level (malformed JSON, a cross-site request,
//!   a missing CSRF token). Every JSON error body is
//!   `{"error": {"code": "<machine code>", "message": "<human sentence>"}}`, plus a
//!   `field` member for `invalid_field`. Pages render the same errors as HTML.
//! - **Start-up** (`config::ConfigError`, `anyhow` in `startup`): configuration problems
//!   name the field and stop the process before it serves anything.
//!
//! | status | codes | when |
//! |--------|-------|------|
//! | 400 | `malformed_json`, `bad_request`, `body_too_large`, `invalid_field` (with a `field` member) | input that cannot be parsed or is out of range |
//! | 401 | `invalid_token`, `no_visitor`, `no_credential`, `invalid_pass`, `expired_pass` | missing, forged, tampered or expired credentials |
//! | 403 | `forbidden` | cross-site requests where same-origin is required, a missing or wrong CSRF token, a room that may not be embedded here |
//! | 404 | `unknown_room`, `not_found` | the room (or thing) does not exist |
//! | 408 | `request_timeout` | a request body did not arrive within its deadline |
//! | 409 | `conflict` | the thing already exists |
//! | 429 | `rate_limited` | a limiter refused; `Retry-After` says when to come back |
//! | 503 | `store_unavailable` | the store did not answer in time; nothing was changed twice |
//! | 503 | `store_restoring` | the store lost its data and the lost places are being put back; `Retry-After` says when to come back |
//! | 500 | `internal` | a bug; the detail goes to the log, never to the client |

/// What the domain reports; mapped to HTTP once, in `web::error`.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    #[error("no room named `{0}`")]
    UnknownRoom(String),
    /// A value out of range, naming the field.
    #[error("`{field}` {message}")]
    InvalidField { field: String, message: String },
    /// A visitor token (bearer, body or `?token=`) that fails its signature check.
    #[error("the visitor token is not valid")]
    InvalidToken,
    /// No visitor identity where one is needed.
    #[error("{0}")]
    NoVisitor(&'static str),
    /// A pass that is forged, tampered, expired or for another room.
    #[error(transparent)]
    Pass(#[from] PassError),
    /// A valid pass whose session has ended (released, removed, expired in the store).
    #[error("the session behind this pass has ended")]
    SessionEnded,
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("too many requests; retry in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    /// An enqueue token missing, expired, for another room or not valid.
    #[error(transparent)]
    Entry(#[from] crate::domain::entry::EntryError),
    /// A place receipt forged, expired, or another visitor's or room's.
    #[error(transparent)]
    Receipt(#[from] crate::domain::identity::ReceiptError),
    /// A join that needs a new place without a usable proof of work; carries a fresh
    /// challenge to solve.
    #[error("{error}")]
    Challenge {
        error: crate::domain::pow::PowError,
        fresh: Box<crate::domain::pow::Challenge>,
    },
    /// A join that needs a new place from an address (or IPv6 /64) that already holds
    /// `max_places_per_ip` places or sessions in the room.
    #[error("your network already holds the most places this room allows per network; try again once one of them has been let in")]
    TooManyPlaces,
    /// The store lost its data and the places it held are being put back (a declared
    /// room being re-created, or its admission hold): no new place for a moment.
    #[error("the queue is being restored after a store failure; places held before it are being put back; please retry in {retry_after_secs} s")]
    Restoring { retry_after_secs: u64 },
    /// The store did not answer in time; the caller may retry.
    #[error("the queue store is unavailable; please retry shortly")]
    Unavailable,
    /// A bug: the detail is logged, never shown.
    #[error("internal error")]
    Internal(String),
}

impl DomainError {
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        DomainError::InvalidField {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Why a pass was refused (signature, algorithm and expiry are checked offline).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PassError {
    #[error("the pass has expired")]
    Expired,
    #[error("the pass is for another room")]
    WrongRoom,
    #[error("the pass is not valid")]
    Invalid,
}
