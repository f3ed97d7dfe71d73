//! Probes, metrics and the public key set.

use actix_web::{get, web, HttpRequest, HttpResponse};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::error::{ApiError, ErrorBody, ErrorDetail};
use super::support::bearer;
use crate::domain::admission::Engine;
use crate::domain::pass::Jwks;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(healthz)
        .service(readyz)
        .service(metrics)
        .service(jwks);
}

/// The OpenAPI description of these routes (merged into `/api/openapi.json`).
#[derive(OpenApi)]
#[openapi(
    paths(healthz, readyz, metrics, jwks),
    components(schemas(Health, Readiness, Jwks))
)]
pub struct Doc;

/// The body of `/healthz`.
#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok`.
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// The body of `/readyz`.
#[derive(Serialize, ToSchema)]
pub struct Readiness {
    /// `ready` or `unavailable`.
    #[schema(example = "ready")]
    pub status: &'static str,
    /// Why not ready: `store_unavailable` or `room_missing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
    /// With `room_missing`: the declared rooms the store lost (being re-created).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_rooms: Option<Vec<String>>,
}

/// The process is up.
#[utoipa::path(tag = "health", responses((status = 200, description = "The process is up.", body = Health)))]
#[get("/healthz")]
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

/// The store answers and holds every declared room; load balancers should stop sending
/// traffic otherwise.
#[utoipa::path(
    tag = "health",
    responses(
        (status = 200, description = "Ready: the store answers and holds every declared room.", body = Readiness),
        (status = 503, description = "Not ready: `store_unavailable` (the store did not answer) or `room_missing` (with `missing_rooms`).", body = Readiness),
    )
)]
#[get("/readyz")]
async fn readyz(engine: web::Data<Engine>) -> HttpResponse {
    let missing = readiness(&engine).await;
    let unavailable = |code, message, missing_rooms| {
        HttpResponse::ServiceUnavailable().json(Readiness {
            status: "unavailable",
            error: Some(ErrorDetail {
                code,
                message,
                field: None,
            }),
            missing_rooms,
        })
    };
    match missing {
        Ok(missing) if missing.is_empty() => HttpResponse::Ok().json(Readiness {
            status: "ready",
            error: None,
            missing_rooms: None,
        }),
        Ok(missing) => unavailable(
            "room_missing",
            format!(
                "declared rooms missing from the store (being re-created): {}",
                missing.join(", ")
            ),
            Some(missing),
        ),
        Err(_) => unavailable("store_unavailable", "the store did not answer".into(), None),
    }
}

/// What `/readyz` answers from: the declared rooms the store lacks (`Err`: the store did
/// not answer). Sets `anteroom_ready` to match, so the metric and the probe tell one truth.
async fn readiness(engine: &Engine) -> Result<Vec<String>, ()> {
    let missing = engine.missing_rooms().await.map_err(|_| ());
    let ready = matches!(&missing, Ok(m) if m.is_empty());
    engine.metrics().ready.set(i64::from(ready));
    missing
}

/// Prometheus text; room figures are read from the store now. With `metrics_token`
/// set, only `Authorization: Bearer <metrics_token>` may read it (it lists room ids).
#[utoipa::path(
    tag = "health",
    security((), ("metrics_token" = [])),
    responses(
        (status = 200, description = "Prometheus text exposition (docs/operations.md#metrics).", content_type = "text/plain; version=0.0.4", body = String),
        (status = 401, description = "`invalid_token`: `metrics_token` is set and the bearer is not it.", body = ErrorBody),
    )
)]
#[get("/metrics")]
async fn metrics(
    req: HttpRequest,
    engine: web::Data<Engine>,
    hub: Option<web::Data<crate::hub::HubHandle>>,
) -> Result<HttpResponse, ApiError> {
    if let Some(want) = engine
        .settings()
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
        engine.metrics().observe_hub(
            s.sockets.load(Relaxed),
            s.pushes.load(Relaxed),
            s.store_calls.load(Relaxed),
        );
        engine
            .metrics()
            .observe_silence(s.longest_silence(), crate::hub::promise::SILENCE_PROMISE);
    }
    let rooms = engine.room_store().rooms().await;
    // What /readyz would answer, from the same list (`readiness`).
    let ready = rooms.as_ref().is_ok_and(|present| {
        engine
            .declared_rooms()
            .iter()
            .all(|d| present.contains(&d.id))
    });
    engine.metrics().ready.set(i64::from(ready));
    match rooms {
        Ok(rooms) => {
            if let Ok(reports) = engine.line_store().sockets().await {
                engine.metrics().observe_room_sockets(&rooms, &reports);
            }
            for room in rooms {
                match engine.admin_store().stats(&room).await {
                    Ok(s) => engine.metrics().observe_room(&room, &s),
                    Err(_) => engine.metrics().forget_room(&room),
                }
                let minutes = engine.metrics().waits.minutes_to_read(&room);
                if let Ok(r) = engine.admin_store().report(&room, minutes).await {
                    engine.metrics().observe_waits(&room, &r.minutes);
                }
                if let Some(p) = crate::outflow::points(engine.outflow_store(), &room, 1)
                    .await
                    .pop()
                {
                    engine
                        .metrics()
                        .observe_origin(&room, p.p95_ms, p.error_rate);
                }
                if let Ok(c) = engine.event_store().webhook_counts(&room).await {
                    // Only rooms that have (or had) a webhook get the series.
                    if c != Default::default() || room_has_webhook(&engine, &room).await {
                        engine.metrics().observe_webhooks(&room, &c);
                    }
                }
            }
        }
        Err(e) => {
            engine
                .metrics()
                .store_errors
                .with_label_values(&["metrics"])
                .inc();
            tracing::warn!(error = %e, "metrics: store unavailable");
        }
    }
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(engine.metrics().render()))
}

/// Whether the room has a webhook (its figures are shown from the first scrape on).
async fn room_has_webhook(engine: &Engine, room: &str) -> bool {
    matches!(engine.room_store().room(room).await, Ok(Some(c)) if c.webhook_url.is_some())
}

/// The pass verification key, for origins that check passes themselves.
#[utoipa::path(tag = "health", responses((status = 200, description = "The JWK set (`Cache-Control: public, max-age=300`).", body = Jwks)))]
#[get("/.well-known/jwks.json")]
async fn jwks(engine: web::Data<Engine>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "public, max-age=300"))
        .json(engine.passes().jwks())
}
