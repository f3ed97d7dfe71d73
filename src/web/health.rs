//! Probes, metrics and the public key set.

use actix_web::{get, web, HttpRequest, HttpResponse};
use serde_json::json;

use super::error::ApiError;
use super::support::bearer;
use crate::domain::admission::Engine;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(healthz)
        .service(readyz)
        .service(metrics)
        .service(jwks);
}

/// The process is up.
#[get("/healthz")]
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// The store answers and holds every declared room; load balancers should stop sending
/// traffic otherwise.
#[get("/readyz")]
async fn readyz(engine: web::Data<Engine>) -> HttpResponse {
    match engine.missing_rooms().await {
        Ok(missing) if missing.is_empty() => HttpResponse::Ok().json(json!({"status": "ready"})),
        Ok(missing) => HttpResponse::ServiceUnavailable().json(json!({
            "status": "unavailable",
            "error": {
                "code": "room_missing",
                "message": format!("declared rooms missing from the store (being re-created): {}", missing.join(", ")),
            },
            "missing_rooms": missing,
        })),
        Err(_) => HttpResponse::ServiceUnavailable().json(json!({
            "status": "unavailable",
            "error": {"code": "store_unavailable", "message": "the store did not answer"}
        })),
    }
}

/// Prometheus text; room figures are read from the store now. With `metrics_token`
/// set, only `Authorization: Bearer <metrics_token>` may read it (it lists room ids).
#[get("/metrics")]
async fn metrics(
    req: HttpRequest,
    engine: web::Data<Engine>,
    hub: Option<web::Data<crate::hub::HubHandle>>,
) -> Result<HttpResponse, ApiError> {
    if let Some(want) = engine
        .settings
        .metrics_token
        .as_ref()
        .filter(|t| !t.is_empty())
    {
        let ok = bearer(&req)?.is_some_and(|t| {
            crate::domain::identity::constant_time_eq(t.as_bytes(), want.expose().as_bytes())
        });
        if !ok {
            return Err(ApiError::unauthorized(
                "invalid_token",
                "send Authorization: Bearer <metrics_token>",
            ));
        }
    }
    if let Some(h) = hub {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &h.stats;
        engine.metrics.observe_hub(
            s.sockets.load(Relaxed),
            s.pushes.load(Relaxed),
            s.store_calls.load(Relaxed),
        );
    }
    match engine.store.rooms().await {
        Ok(rooms) => {
            for room in rooms {
                match engine.store.stats(&room).await {
                    Ok(s) => engine.metrics.observe_room(&room, &s),
                    Err(_) => engine.metrics.forget_room(&room),
                }
            }
        }
        Err(e) => {
            engine
                .metrics
                .store_errors
                .with_label_values(&["metrics"])
                .inc();
            tracing::warn!(error = %e, "metrics: store unavailable");
        }
    }
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(engine.metrics.render()))
}

/// The pass verification key, for origins that check passes themselves.
#[get("/.well-known/jwks.json")]
async fn jwks(engine: web::Data<Engine>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "public, max-age=300"))
        .json(engine.passes.jwks())
}
