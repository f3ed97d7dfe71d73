//! The admin side: a live dashboard at `/admin` and a JSON API under `/api/admin/…`.
//!
//! - [`auth`]: who may act — a bearer token (API), or a dashboard session cookie plus
//!   a CSRF token and a same-origin `Origin` for anything that changes state.
//! - [`roles`]: which role (viewer, operator, owner) each route needs.
//! - [`oidc`]: single sign-on with an OpenID provider.
//! - [`api`]: every control as a JSON endpoint over the admin service
//!   ([`crate::domain::admin`]), which audits each change.
//! - [`dead_letters`]: a room's webhook dead letters, listed and replayed.
//! - [`pages`]: login, dashboard and the once-a-second live stream (SSE).
//! - [`preview`]: a room's queue page in any state, with sample figures.

pub mod api;
pub mod auth;
pub mod dead_letters;
pub mod oidc;
pub mod pages;
pub mod preview;
mod responses;
pub mod roles;
mod sso;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    api::configure(cfg);
    dead_letters::configure(cfg);
    pages::configure(cfg);
    preview::configure(cfg);
    sso::configure(cfg);
}
