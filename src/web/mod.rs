//! The web layer: every HTTP handler, page and the WebSocket, over the HTTP-free
//! [`domain`](crate::domain). The only part of the crate that imports actix.
//!
//! - [`api`]: the visitor JSON API (`/api/rooms/{room}/…`).
//! - [`visitor`]: the queue page, the embed widget and the demo host page.
//! - [`ws`]: the queue WebSocket (upgrade checks and the per-socket loop).
//! - [`admin`]: the dashboard and the admin API, behind one auth extractor.
//! - [`health`]: probes, metrics and the JWK set; [`http_metrics`]: answers counted by
//!   status class; [`openapi`]: the OpenAPI document of
//!   the JSON API; [`demo`]: the demo origin;
//!   [`assets`]: the static files compiled into the binary.
//! - [`support`]: what the handlers share; [`error`]: [`ApiError`](error::ApiError),
//!   the one HTTP error shape.
//!
//! [`serve`] builds the actix-web server from the domain's parts.

pub(crate) mod admin;
pub(crate) mod api;
pub(crate) mod assets;
pub(crate) mod compress_html;
pub(crate) mod demo;
pub(crate) mod embed_check;
pub(crate) mod error;
pub(crate) mod fairness;
pub(crate) mod frame_guard;
pub(crate) mod health;
pub(crate) mod http_metrics;
pub(crate) mod languages;
pub(crate) mod openapi;
pub(crate) mod outflow;
pub(crate) mod support;
pub(crate) mod visitor;
pub mod ws;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::{web, App, HttpServer};
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::domain::admission::Engine;
use crate::hub::HubHandle;
use error::{json_error_handler, path_error_handler, query_error_handler};

/// Every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    health::configure(cfg);
    api::configure(cfg);
    fairness::configure(cfg);
    openapi::configure(cfg);
    outflow::configure(cfg);
    visitor::configure(cfg);
    embed_check::configure(cfg);
    languages::configure(cfg);
    ws::configure(cfg);
    assets::configure(cfg);
    demo::configure(cfg);
    admin::configure(cfg);
    cfg.default_service(web::to(visitor::not_found));
}

/// The HTTP server, bound and ready; [`Server::run_until`] serves.
pub struct Server(actix_web::dev::Server);

/// Builds the HTTP server on `listener`. Fails (before serving anything) when the admin
/// interface is on without a credential.
pub fn serve(
    listener: TcpListener,
    settings: &Settings,
    engine: Arc<Engine>,
    hub: HubHandle,
    tls: Option<rustls::ServerConfig>,
) -> anyhow::Result<Server> {
    let admin = admin::auth::from_settings(settings)?.map(web::Data::new);
    let engine = web::Data::from(engine);
    let hub = web::Data::new(hub);
    let access_log = settings.access_log;
    let server = HttpServer::new(move || {
        let mut app = App::new();
        if let Some(a) = &admin {
            app = app.app_data(a.clone());
        }
        // The Logger runs a regex per request even when its lines are filtered out
        // (~4 % of CPU under load), so it is only installed when asked for.
        app.wrap(actix_web::middleware::from_fn(compress_html::gzip_html))
            .wrap(actix_web::middleware::Condition::new(
                access_log,
                access_logger(),
            ))
            .wrap(actix_web::middleware::from_fn(
                http_metrics::count_responses,
            ))
            .app_data(engine.clone())
            .app_data(hub.clone())
            .app_data(web::JsonConfig::default().error_handler(json_error_handler))
            .app_data(web::QueryConfig::default().error_handler(query_error_handler))
            .app_data(web::PathConfig::default().error_handler(path_error_handler))
            .configure(configure)
    })
    .workers(if settings.workers == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        settings.workers
    });
    // With TLS, actix-web offers h2 and http/1.1 by ALPN itself.
    let server = match tls {
        Some(config) => server.listen_rustls_0_23(listener, config)?,
        None => server.listen(listener)?,
    }
    .disable_signals()
    .run();
    Ok(Server(server))
}

impl Server {
    /// Serves until the server stops by itself or `shutdown` fires (then it stops
    /// gracefully: open requests finish).
    pub async fn run_until(self, shutdown: CancellationToken) -> std::io::Result<()> {
        let handle = self.0.handle();
        tokio::select! {
            r = self.0 => r,
            _ = shutdown.cancelled() => {
                handle.stop(true).await;
                Ok(())
            }
        }
    }
}

/// Request logging (`access_log = true`; target `anteroom::http`, hidden by the default
/// filter — enable with `ANTEROOM_LOG=info`). Credentials in the query string (visitor
/// tokens, passes, enqueue tokens) are written `[set]`.
fn access_logger() -> actix_web::middleware::Logger {
    actix_web::middleware::Logger::new("%a \"%{request}xi\" %s %Dms")
        .custom_request_replace("request", |req| {
            format!(
                "{} {} {:?}",
                req.method(),
                redacted_target(req.path(), req.query_string()),
                req.version()
            )
        })
        .log_target("anteroom::http")
}

/// `path?query` with the values of credential parameters
/// ([`is_secret_param`](crate::room::redact::is_secret_param): visitor tokens, passes,
/// enqueue tokens, however the name is spelled or encoded) replaced by `[set]`.
pub fn redacted_target(path: &str, query: &str) -> String {
    if query.is_empty() {
        return path.to_string();
    }
    format!("{path}?{}", crate::room::redact::query(query))
}

#[cfg(test)]
mod tests {
    use super::redacted_target;

    #[test]
    fn credentials_in_the_query_are_redacted_in_the_access_log() {
        assert_eq!(
            redacted_target("/r/sale/ws", "token=abc.def&return=/x"),
            "/r/sale/ws?token=[set]&return=/x"
        );
        assert_eq!(
            redacted_target("/shop", "anteroom_pass=eyJ.a.b&lang=zh"),
            "/shop?anteroom_pass=[set]&lang=zh"
        );
        assert_eq!(redacted_target("/r/sale", ""), "/r/sale");
    }

    /// Issue 28 finding 9: `?enqueue_token=` was written whole in the access log.
    #[test]
    fn an_enqueue_token_is_redacted_however_its_name_is_written() {
        for q in [
            "enqueue_token=eyJ.s.t",
            "enqueue%5Ftoken=eyJ.s.t",
            "Enqueue_Token=eyJ.s.t",
        ] {
            let line = redacted_target("/r/sale", &format!("lang=en&{q}"));
            assert!(!line.contains("eyJ"), "{line}");
            assert!(line.ends_with("=[set]"), "{line}");
        }
    }
}
