//! Anteroom: a fair FIFO virtual waiting room. See README.md for the overview.

pub mod admin;
pub mod admission;
pub mod config;
pub mod error;
pub mod eta;
pub mod hub;
pub mod i18n;
pub mod identity;
pub mod loadgen;
pub mod metrics;
pub mod pass;
pub mod ratelimit;
pub mod reaper;
pub mod routes;
pub mod startup;
pub mod store;
pub mod telemetry;
