//! `GET /api/rooms/{room}/fairness` and `…/fairness/digests`: the commit-then-reveal
//! record of a room's pre-queue shuffle (and of `random` mode's draws), so anyone can
//! check the order (docs/http-api.md#fairness).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::{get, web, HttpResponse};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::error::{ApiError, ErrorBody};
use super::support::room_id;
use crate::domain::admission::Engine;
use crate::room::schedule::format_rfc3339_ms;
use crate::store::fairness_digest;

/// The rule the order follows, as the fairness record names it.
pub const ALGORITHM: &str = "hmac-sha256(seed, visitor_id) ascending hex";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::Data::new(DigestCache::default()))
        .service(fairness)
        .service(digests);
}

/// The pre-queue's sorted digests, per room, with the seed they were computed from. Once
/// the seed is revealed the pre-queue no longer changes (a new event draws a new seed), so
/// they are computed once per seed, not on every visitor's check: for a 10,000-visitor
/// pre-queue that is a listing of the whole pre-queue and 10,000 HMACs.
#[derive(Default)]
struct DigestCache(Mutex<HashMap<String, SeedDigests>>);

/// A seed and the pre-queue's sorted digests under it.
type SeedDigests = (String, Arc<Vec<String>>);

#[derive(OpenApi)]
#[openapi(
    paths(fairness, digests),
    components(schemas(FairnessBody, DigestsBody))
)]
pub struct Doc;

/// A room's fairness record.
#[derive(Serialize, ToSchema)]
pub struct FairnessBody {
    /// The room's queueing mode (`fifo`, `random`, `passthrough`, `reject`).
    pub mode: crate::room::QueueMode,
    /// RFC 3339, or null.
    pub prequeue_opens_at: Option<String>,
    /// RFC 3339, or null.
    pub opens_at: Option<String>,
    /// Lowercase hex SHA-256 of the seed's 32 bytes, published when the pre-queue opens
    /// (null before).
    pub commitment: Option<String>,
    /// The seed (64 lowercase hex): null until the shuffle is done (in `random` mode,
    /// until the room closes or its event ends).
    pub seed: Option<String>,
    /// Visitors in the pre-queue (after the shuffle: those it put in line).
    pub prequeue_count: u64,
    /// The rule: `hmac-sha256(seed, visitor_id) ascending hex`.
    pub algorithm: &'static str,
}

/// The pre-queue's digests, once the seed is revealed.
#[derive(Serialize, ToSchema)]
pub struct DigestsBody {
    /// Lowercase hex `HMAC-SHA256(seed, visitor id)` of every pre-queued visitor,
    /// ascending: a visitor's rank is the index of their own digest + 1.
    pub digests: Vec<String>,
}

/// The room's fairness record: the commitment to the shuffle's seed (SHA-256), the seed
/// once the shuffle is done, the pre-queue's size and the rule. A visitor checks their
/// rank with `…/fairness/digests`.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    responses(
        (status = 200, description = "The fairness record.", body = FairnessBody),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[get("/api/rooms/{room}/fairness")]
async fn fairness(
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let f = engine
        .fairness_store()
        .fairness(&room)
        .await
        .map_err(|e| engine.store_failed("fairness", &room, e))?;
    Ok(HttpResponse::Ok().json(FairnessBody {
        mode: f.mode,
        prequeue_opens_at: f.prequeue_opens_at_ms.map(format_rfc3339_ms),
        opens_at: f.opens_at_ms.map(format_rfc3339_ms),
        commitment: f.commitment,
        seed: f.seed,
        prequeue_count: f.prequeue_count,
        algorithm: ALGORITHM,
    }))
}

/// The sorted digests of the pre-queue (not the visitor ids), once the seed is
/// revealed; an empty list before.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    responses(
        (status = 200, description = "The digests, ascending.", body = DigestsBody),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[get("/api/rooms/{room}/fairness/digests")]
async fn digests(
    room: web::Path<String>,
    engine: web::Data<Engine>,
    cache: web::Data<DigestCache>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let store = engine.fairness_store();
    let failed = |e| engine.store_failed("fairness", &room, e);
    let f = store.fairness(&room).await.map_err(failed)?;
    let (Some(seed), true) = (f.seed, f.shuffled) else {
        return Ok(HttpResponse::Ok().json(DigestsBody {
            digests: Vec::new(),
        }));
    };
    let cached = cache.0.lock().unwrap().get(&room).cloned();
    let digests = match cached {
        Some((s, d)) if s == seed => d,
        _ => {
            let all = crate::drops::list_prequeue(store, &room)
                .await
                .map_err(failed)?;
            let mut d: Vec<String> = all.iter().map(|v| fairness_digest(&seed, v)).collect();
            d.sort();
            let d = Arc::new(d);
            cache
                .0
                .lock()
                .unwrap()
                .insert(room.clone(), (seed, d.clone()));
            d
        }
    };
    Ok(HttpResponse::Ok().json(DigestsBody {
        digests: digests.to_vec(),
    }))
}
