//! The domain, free of HTTP: what a waiting room decides and tells, on top of a
//! [`Store`](crate::store::Store). Nothing here imports actix; errors are
//! [`DomainError`](crate::domain::error::DomainError)s, mapped to HTTP once in `web::error`.
//!
//! - [`admission`]: the engine — join, status, release, pass checks, the visitor's view,
//!   the limits.
//! - [`enter`]: the one join use case the API, the queue page and the socket call.
//! - [`admin`]: the admin service — room changes, stock, flush, and the audit log.
//! - [`fifo_audit`]: how far admission order strayed from ticket order (Kendall tau).
//! - [`line_view`]: a queued visitor's status answered from this instance's view of the
//!   line, when the store would only have read.
//! - [`live`]: the dashboard's figures, computed from the store's per-room report.
//! - [`eta`]: the estimated wait.
//! - [`outflow`]: the adaptive outflow controller (capacity from the origin's health).
//! - [`pass`]: Ed25519 passes and the JWK set.
//! - [`identity`]: HMAC-signed visitor ids.
//! - [`known_sessions`]: the live sessions this instance knows (put back after a data loss).
//! - [`revoked`]: the passes revoked anywhere (the store's log, read every 250 ms): the
//!   gateway refuses them, and an admitted status is answered here only for a session not
//!   in it.
//! - [`ended`]: the sessions and places this instance knows ended (never put back).
//! - [`ratelimit`]: the limited actions and the per-IP limiter.
//! - [`bypass`]: `[[bypass]]` rules (requests that pass `verify` without a pass).
//! - [`request_target`]: the one reader of a request's path and host (`verify` and the
//!   gateway), with what it refuses and why.
//! - [`revocation`]: ending a session early from its pass, for every gateway.
//! - [`entry`]: enqueue tokens (one place per person).
//! - [`pow`]: proof of work at join (ALTCHA's format).
//! - [`custom_page`]: a room's own queue template (minijinja, read from `template_dir`).
//! - [`preview`]: a room's page in any state with sample figures (the admin's preview).
//! - [`told`]: what a visitor is told (message, figures, notes), for every client.
//! - [`i18n`]: every visitor-facing string (English, Simplified Chinese) and the
//!   language negotiation.

pub(crate) mod admin;
pub mod admission;
pub mod bypass;
pub mod custom_page;
pub(crate) mod ended;
pub(crate) mod enter;
pub(crate) mod entry;
pub(crate) mod error;
pub mod eta;
pub mod eta_sim;
pub mod fifo_audit;
pub mod forecast;
pub(crate) mod i18n;
pub mod identity;
pub mod known_sessions;
pub(crate) mod line_view;
pub(crate) mod live;
pub(crate) mod noshow;
pub mod outflow;
pub mod pass;
pub mod pow;
pub(crate) mod presented;
pub mod preview;
pub mod ratelimit;
pub mod request_target;
pub(crate) mod revocation;
pub mod revoked;
pub(crate) mod room_check;
pub mod survival;
pub mod told;
pub(crate) mod webhook_message;
