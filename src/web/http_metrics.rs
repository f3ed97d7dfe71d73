//! Counts every HTTP answer by status class (`anteroom_http_responses_total{class}`, five
//! values), for the 5xx alert and the dashboard. One atomic add per request; the path is
//! only compared with the three probes, which are left out: a load balancer asking
//! `/readyz` every second while the store is down would otherwise be most of the 5xx, and
//! the scraper most of the traffic. A WebSocket upgrade counts as `1xx` when it is
//! answered (the socket's life is not a request).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, Error};

use crate::domain::admission::Engine;

/// The paths not counted: the probes and the scrape.
const NOT_COUNTED: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// The middleware (`App::wrap(from_fn(count_responses))`, outermost, so it sees the status
/// every other layer settled on, errors included).
pub async fn count_responses(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let engine = (!NOT_COUNTED.contains(&req.path()))
        .then(|| req.app_data::<web::Data<Engine>>().cloned())
        .flatten();
    let res = next.call(req).await;
    if let Some(engine) = engine {
        let status = match &res {
            Ok(r) => r.status(),
            Err(e) => e.as_response_error().status_code(),
        };
        engine.metrics().http_response(status.as_u16());
    }
    res
}
