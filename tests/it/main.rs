//! The integration tests: one binary, one module per area, real parts only (a
//! `redis-server` per test, a local Redis Cluster, headless Chromium, nginx).
//! `TEST_LOG=1 cargo test` shows the servers' logs in the test output.

mod helpers;

mod admin;
mod api;
mod brand;
mod browser;
mod browser_admin;
mod browser_brand;
mod browser_drops;
mod browser_i18n;
mod browser_told;
mod budget;
mod caddy;
mod cluster;
mod concurrency;
mod conformance;
mod drop_docs;
mod drops;
mod entry;
mod eta;
mod examples;
mod faults;
mod fuzz;
mod gateway;
mod gateway_idle;
mod hardening;
mod history;
mod hostile;
mod hostile_table;
mod i18n;
mod join_batch;
mod lanes;
mod line_view;
mod metrics;
mod model;
mod modes;
mod nginx;
mod noshow;
mod openapi;
mod outflow;
mod packaging;
mod pages;
mod pow;
mod reaper;
mod recovery;
mod request_target;
mod sentinel;
mod tls;
mod webhooks;
mod ws;
