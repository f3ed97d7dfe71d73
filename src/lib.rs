//! Anteroom: a fair FIFO virtual waiting room. The request flow and where each concern
//! lives are in docs/design.md.
//!
//! - [`web`]: the HTTP layer (actix-web): every handler, page and the WebSocket; the
//!   only module that imports actix.
//! - [`domain`]: admission, the admin service, ETA, passes, identities — free of HTTP.
//! - [`hub`], [`reaper`] and [`keeper`]: the background work (socket updates; reaping
//!   and promoting; re-creating declared rooms and noticing a store that lost its data);
//!   [`webhook`]: the signed webhooks each room's events are delivered by.
//! - [`gateway`]: the built-in reverse proxy that guards a site's routes with rooms
//!   (hyper; HTTP-free logic in its own modules).
//! - [`store`]: the `Store` trait and its `memory` and `redis` backends.
//! - [`tls`]: certificates for the main listener and the gateway, reloaded on SIGHUP.
//! - [`room`]: the room model (a room's settings, modes, patch, limits), the ground floor;
//!   [`config`]: the process settings; [`preflight`]: start-up's check of them.
//! - [`hex`], [`metrics`], [`telemetry`], [`startup`]: the rest (the error policy is
//!   `domain::error`).

pub mod clock;
pub mod config;
pub mod domain;
pub mod drops;
pub mod gateway;
pub(crate) mod hex;
pub mod hub;
pub mod keeper;
pub mod metrics;
pub mod outflow;
pub mod preflight;
pub mod reaper;
pub mod room;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod web;
pub mod webhook;
