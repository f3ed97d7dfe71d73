//! The admin side: a live dashboard at `/admin` and a JSON API under `/api/admin/…`.
//!
//! - [`auth`]: who may act — the bearer token (API), or a dashboard session cookie plus
//!   a CSRF token and a same-origin `Origin` for anything that changes state.
//! - [`api`]: every control as a JSON endpoint over the admin service
//!   ([`crate::domain::admin`]), which audits each change.
//! - [`pages`]: login, dashboard and the once-a-second live stream (SSE).

pub mod api;
pub mod auth;
pub mod pages;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    api::configure(cfg);
    pages::configure(cfg);
}
