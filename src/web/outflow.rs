//! `POST /api/rooms/{room}/health`: an origin behind nginx or Caddy (or a sidecar beside
//! it) reports its own p95 latency and error rate, for rooms in adaptive outflow
//! (docs/outflow.md). The room's `[rooms.outflow] health_secret` is the bearer; the
//! report counts for two of the room's intervals, merged with the built-in gateway's
//! measurements (the worse figure wins).

use actix_web::{post, web, HttpRequest, HttpResponse};
use serde::Deserialize;
use utoipa::{OpenApi, ToSchema};

use super::error::{ApiError, ErrorBody};
use super::support::bearer;
use crate::domain::admission::Engine;
use crate::domain::outflow::Report;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(health_report);
}

/// The OpenAPI description of this route (merged into `/api/openapi.json`).
#[derive(OpenApi)]
#[openapi(paths(health_report), components(schemas(HealthReport)))]
pub struct Doc;

/// The largest p95 a report may carry (an hour, in ms).
const MAX_P95_MS: f64 = 3_600_000.0;

/// An origin's figures over its last interval.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthReport {
    /// The 95th percentile of the origin's response time (to headers), in ms (0 to
    /// 3600000).
    #[schema(example = 180.0)]
    pub p95_ms: f64,
    /// The share of its answers that were errors (5xx, timeouts), 0 to 1.
    #[schema(example = 0.004)]
    pub error_rate: f64,
}

impl HealthReport {
    /// Refuses nonsense, naming the field.
    fn check(&self) -> Result<(), ApiError> {
        if !(self.p95_ms.is_finite() && (0.0..=MAX_P95_MS).contains(&self.p95_ms)) {
            return Err(ApiError::invalid_field(
                "p95_ms",
                "must be a number of milliseconds from 0 to 3600000",
            ));
        }
        if !(self.error_rate.is_finite() && (0.0..=1.0).contains(&self.error_rate)) {
            return Err(ApiError::invalid_field(
                "error_rate",
                "must be a share from 0 to 1 (e.g. 0.01 for 1 %)",
            ));
        }
        Ok(())
    }
}

/// Takes an origin's health report for a room in adaptive outflow.
#[utoipa::path(
    tag = "health",
    security(("health_secret" = [])),
    params(("room" = String, Path, description = "Room id")),
    request_body = HealthReport,
    responses(
        (status = 204, description = "Taken: it counts for the room's next two intervals."),
        (status = 400, description = "`bad_request` (not JSON, a member missing or unknown) or `invalid_field` (`p95_ms`, `error_rate` out of range).", body = ErrorBody),
        (status = 401, description = "`invalid_token`: no bearer, not the room's `health_secret`, or the room has none.", body = ErrorBody),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody),
    )
)]
#[post("/api/rooms/{room}/health")]
async fn health_report(
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = path.into_inner();
    let count = |outcome: &str| {
        engine
            .metrics()
            .health_reports
            .with_label_values(&[&room, outcome])
            .inc();
    };
    let cfg = engine.room_config_cached(&room).await?;
    // The credential first: without it, nothing about the body is answered.
    let given = bearer(&req)?;
    let ok = match (&cfg.outflow.health_secret, given) {
        (Some(want), Some(t)) if !want.is_empty() => {
            crate::domain::identity::constant_time_eq(t.as_bytes(), want.expose().as_bytes())
        }
        _ => false,
    };
    if !ok {
        count("unauthorized");
        let message = if cfg.outflow.health_secret.is_none() {
            format!("room `{room}` takes no health reports: set [rooms.outflow] health_secret")
        } else {
            "send Authorization: Bearer <the room's health_secret>".to_string()
        };
        return Err(ApiError::unauthorized("invalid_token", message));
    }
    let report: HealthReport = serde_json::from_slice(&body).map_err(|e| {
        count("invalid");
        ApiError::bad_request(format!(
            "the body must be {{\"p95_ms\": <ms>, \"error_rate\": <0-1>}}: {e}"
        ))
    })?;
    report.check().inspect_err(|_| count("invalid"))?;
    let stored = Report {
        p95_ms: Some(report.p95_ms),
        error_rate: Some(report.error_rate),
        ..Report::default()
    };
    // unwrap: a struct of numbers always serialises.
    let json = serde_json::to_string(&stored).expect("a report serialises");
    let store = engine.outflow_store();
    store
        .put_origin_report(
            &room,
            crate::outflow::HEALTH_SOURCE,
            &json,
            crate::outflow::report_ttl_ms(cfg.outflow.interval_secs),
        )
        .await
        .map_err(|e| ApiError::from(engine.store_failed("health", &room, e)))?;
    count("accepted");
    Ok(HttpResponse::NoContent().finish())
}
