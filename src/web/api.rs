//! The visitor JSON API under `/api/rooms/{room}/…`.

use actix_web::cookie::SameSite;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{OpenApi, ToSchema};

use super::error::{ApiError, ChallengeErrorBody, ErrorBody};
use super::support::{
    bearer, client_ip, cookie, room_id, set_visitor_cookies, unavailable_keeping,
    UnavailableJoinBody,
};
use crate::domain::admission::{Engine, VisitorView, DEGRADED_STORE_UNREACHABLE};
use crate::domain::enter::{EnterOutcome, EnterRequest};
use crate::domain::identity::{VisitorId, VISITOR_COOKIE};
use crate::domain::pass::{pass_cookie, Claims};
use crate::domain::pow::Challenge;
use crate::domain::ratelimit::LimitedAction;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(join)
        .service(status)
        .service(release)
        .service(verify)
        .service(revoke)
        .service(away)
        .service(challenge);
}

/// The OpenAPI description of these routes (merged into `/api/openapi.json`).
#[derive(OpenApi)]
#[openapi(
    paths(join, status, release, away, verify, revoke, challenge),
    components(schemas(
        JoinBody,
        VisitorView,
        Claims,
        Bypassed,
        Challenge,
        ErrorBody,
        ChallengeErrorBody,
        UnavailableJoinBody
    ))
)]
pub struct Doc;

/// Optional body of `POST …/join`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinBody {
    /// The visitor's signed token (or send it as a bearer, or the `anteroom_vid` cookie).
    visitor_token: Option<String>,
    /// An enqueue token the site signed (one place per person): see `domain::entry`.
    enqueue_token: Option<String>,
    /// A proof-of-work solution (ALTCHA payload, base64); or the `X-Anteroom-Challenge`
    /// header.
    altcha: Option<String>,
    /// The place receipt a join or status answered with: after the store lost its data,
    /// it puts the place back.
    place_receipt: Option<String>,
    /// `false`: a join the client makes on its own (the widget on load): a no-show
    /// (docs/outflow.md#no-shows) is answered `state: "no_show"` instead of being queued.
    /// Absent or `true`: the visitor chose to join, and a no-show joins at the back.
    rejoin: Option<bool>,
}

/// The visitor making the request, from (in order) a bearer token, a body token, or the
/// cookie. A bearer or body token that fails its signature check is an error; a bad
/// cookie is ignored (a join then starts a fresh identity; status reports `no_visitor`).
fn visitor_of(
    req: &HttpRequest,
    engine: &Engine,
    body_token: Option<&str>,
) -> Result<Option<VisitorId>, ApiError> {
    if let Some(t) = bearer(req)?.or(body_token) {
        return engine.visitors().verify(t).map(Some).ok_or_else(|| {
            ApiError::unauthorized("invalid_token", "the visitor token is not valid")
        });
    }
    Ok(req
        .cookie(VISITOR_COOKIE)
        .and_then(|c| engine.visitors().verify(c.value())))
}

fn require_visitor(req: &HttpRequest, engine: &Engine) -> Result<VisitorId, ApiError> {
    visitor_of(req, engine, None)?.ok_or_else(|| {
        ApiError::unauthorized(
            "no_visitor",
            "no visitor identity: send the anteroom_vid cookie or Authorization: Bearer <visitor_token>",
        )
    })
}

/// The JSON response for join/status, with the visitor cookie and (when admitted) the
/// pass cookie.
pub fn visitor_response(engine: &Engine, view: &VisitorView) -> HttpResponse {
    let mut res = HttpResponse::Ok();
    res.insert_header(("Cache-Control", "no-store"));
    if let Some(d) = view.degraded {
        res.insert_header(("X-Anteroom-Degraded", d));
    }
    set_visitor_cookies(engine, view, &mut res);
    res.json(view)
}

/// Largest join body accepted (a visitor token, an enqueue token, a proof of work).
pub const MAX_JOIN_BODY: usize = 4096;
/// The header a join's proof-of-work solution may come in.
pub const CHALLENGE_HEADER: &str = "x-anteroom-challenge";

/// A proof-of-work challenge for a `challenge = "pow"` room (ALTCHA's format:
/// `{algorithm, challenge, maxnumber, salt, signature}`); `404` for a room that asks none.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    responses(
        (status = 200, description = "A challenge to solve (docs/abuse.md#proof-of-work).", body = Challenge),
        (status = 404, description = "`unknown_room`; `not_found`: the room asks no proof of work.", body = ErrorBody),
        (status = 429, description = "`rate_limited` (the per-IP join limit).", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[get("/api/rooms/{room}/challenge")]
async fn challenge(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    // Part of joining: counted in the same per-IP bucket.
    engine.check_ip_limit(client_ip(&req, &engine), LimitedAction::Join)?;
    let cfg = engine.room_config_cached(&room).await?;
    if cfg.challenge != crate::room::ChallengeMode::Pow {
        return Err(ApiError::NotFound(format!(
            "room `{room}` asks no proof of work"
        )));
    }
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(engine.pow_challenge(&cfg)))
}
/// Time allowed for a join body to arrive.
pub const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads a small request body within [`BODY_DEADLINE`].
async fn read_body(mut payload: web::Payload) -> Result<web::BytesMut, ApiError> {
    use futures_util::StreamExt;
    let read = async {
        let mut body = web::BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| ApiError::bad_request(format!("bad body: {e}")))?;
            if body.len() + chunk.len() > MAX_JOIN_BODY {
                return Err(ApiError::BadRequest {
                    code: "body_too_large",
                    message: format!("a request body here is at most {MAX_JOIN_BODY} bytes"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    tokio::time::timeout(BODY_DEADLINE, read)
        .await
        .map_err(|_| ApiError::RequestTimeout)?
}

/// Joins the room's queue, or answers where the visitor already stands (idempotent per
/// visitor). The checks run in the order of docs/http-api.md#routes.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    request_body(content = Option<JoinBody>, description = "Optional: empty, or a JSON object of at most 4096 bytes, in full within 5 s."),
    params(("X-Anteroom-Challenge" = Option<String>, Header, description = "A proof-of-work solution (ALTCHA payload, base64), instead of `altcha` in the body.")),
    security((), ("visitor_token" = []), ("visitor_cookie" = [])),
    responses(
        (status = 200, description = "Where the visitor stands; sets `anteroom_vid` (and `anteroom_pass_{room}` when admitted).", body = VisitorView),
        (status = 400, description = "`malformed_json`, `body_too_large`, `bad_request` (an `Authorization` or challenge header that is not text).", body = ErrorBody),
        (status = 401, description = "`invalid_token`; enqueue tokens: `token_required`, `token_expired`, `token_not_yet_valid`, `token_wrong_room`, `token_invalid`, `token_not_accepted`; place receipts: `receipt_invalid`, `receipt_expired`, `receipt_foreign`.", body = ErrorBody, headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "`challenge_required`, `challenge_expired`, `challenge_reused`: with a fresh challenge.", body = ChallengeErrorBody),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 408, description = "`request_timeout`: the body did not arrive within 5 s.", body = ErrorBody),
        (status = 429, description = "`rate_limited`; `too_many_places` (`max_places_per_ip`).", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 503, description = "`store_unavailable`, with the `visitor_token` to retry with (and the `anteroom_vid` cookie); `store_restoring` (no `visitor_token`).", body = UnavailableJoinBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[post("/api/rooms/{room}/join")]
async fn join(
    req: HttpRequest,
    room: web::Path<String>,
    payload: web::Payload,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    // The limiter comes before the body, and the body has a deadline and a size cap: a
    // client over its limit, or one trickling a body, costs nothing but this check.
    engine.check_ip_limit(client_ip(&req, &engine), LimitedAction::Join)?;
    let body = read_body(payload).await?;
    let body: Option<JoinBody> = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        Some(
            serde_json::from_slice(&body).map_err(|e| ApiError::BadRequest {
                code: "malformed_json",
                message: format!("the request body is not valid JSON for a join: {e}"),
            })?,
        )
    };
    let field = |f: fn(&JoinBody) -> Option<&str>| body.as_ref().and_then(f);
    let visitor = visitor_of(&req, &engine, field(|b| b.visitor_token.as_deref()))?;
    let pow_solution =
        match req.headers().get(CHALLENGE_HEADER) {
            Some(h) => Some(h.to_str().map_err(|_| {
                ApiError::bad_request(format!("{CHALLENGE_HEADER} is not valid text"))
            })?),
            None => field(|b| b.altcha.as_deref()),
        };
    let outcome = engine
        .enter(EnterRequest {
            room: &room,
            visitor: visitor.as_ref(),
            enqueue_token: field(|b| b.enqueue_token.as_deref()),
            pow_solution,
            place_receipt: field(|b| b.place_receipt.as_deref()),
            ip: client_ip(&req, &engine),
            return_to: None,
            count_as: Some(LimitedAction::Join),
            // A join asked for is a choice: a no-show is queued at the back.
            rejoin: body.as_ref().and_then(|b| b.rejoin).unwrap_or(true),
        })
        .await?;
    match outcome {
        EnterOutcome::StoreDown { visitor } => Ok(unavailable_keeping(&engine, &visitor)),
        other => Ok(visitor_response(&engine, &*other.into_refusal()?)),
    }
}

/// Where the visitor stands; refreshes a queued visitor's heartbeat. Never joins.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("visitor_token" = []), ("visitor_cookie" = [])),
    responses(
        (status = 200, description = "Where the visitor stands.", body = VisitorView),
        (status = 400, description = "`bad_request`: an `Authorization` header that is not text.", body = ErrorBody),
        (status = 401, description = "`invalid_token`, `no_visitor`.", body = ErrorBody, headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 429, description = "`rate_limited` (per visitor).", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 503, description = "`store_unavailable`, `store_restoring`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[get("/api/rooms/{room}/status")]
async fn status(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let visitor = require_visitor(&req, &engine)?;
    engine
        .check_visitor_limit(&visitor, LimitedAction::Status)
        .await?;
    let view = engine.status(&room, &visitor).await?;
    Ok(visitor_response(&engine, &view))
}

/// The visitor's page went to the background (a hidden tab, a locked phone): a queued
/// visitor keeps the place for `reaper.hidden_grace_secs` without a heartbeat. Sent with
/// `navigator.sendBeacon`, which cannot set headers: the body may be the visitor token as
/// plain text (or the cookie or a bearer token identifies the visitor). `204` either way
/// (a visitor not in line has nothing to hold).
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    request_body(content = Option<String>, content_type = "text/plain", description = "Optional: the visitor token as plain text (what `navigator.sendBeacon` sends; at most 4096 bytes, in full within 5 s)."),
    security((), ("visitor_token" = []), ("visitor_cookie" = [])),
    responses(
        (status = 204, description = "Noted: a queued visitor's place is held for `reaper.hidden_grace_secs` without a heartbeat (nothing for a visitor not in line)."),
        (status = 400, description = "`bad_request`: a body or `Authorization` header that is not text; `body_too_large`.", body = ErrorBody),
        (status = 401, description = "`no_visitor` (no identity), `invalid_token` (forged).", body = ErrorBody, headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 408, description = "`request_timeout`: the body did not arrive within 5 s.", body = ErrorBody),
        (status = 429, description = "`rate_limited` (the per-visitor limit, shared with status).", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 503, description = "`store_unavailable`, `store_restoring`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[post("/api/rooms/{room}/away")]
async fn away(
    req: HttpRequest,
    room: web::Path<String>,
    payload: web::Payload,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let body = read_body(payload).await?;
    let body_token = std::str::from_utf8(&body)
        .map_err(|_| ApiError::bad_request("the body is the visitor token as text"))?
        .trim();
    let visitor = visitor_of(&req, &engine, (!body_token.is_empty()).then_some(body_token))?
        .ok_or_else(|| {
            ApiError::unauthorized(
                "no_visitor",
                "no visitor identity: send the visitor token as the body, the anteroom_vid cookie or Authorization: Bearer <visitor_token>",
            )
        })?;
    // Its own window: a reload (the page, and this beacon as the old page hides) costs
    // one request of the visitor's limit.
    engine.check_away_limit(&visitor).await?;
    engine.hold_away(&room, &visitor).await?;
    Ok(HttpResponse::NoContent()
        .insert_header(("Cache-Control", "no-store"))
        .finish())
}

/// Gives the place or the session back. Accepts the visitor cookie/token or the pass.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("visitor_token" = []), ("pass" = []), ("visitor_cookie" = [])),
    responses(
        (status = 204, description = "Released (also when the visitor held nothing); the pass cookie is removed."),
        (status = 400, description = "`bad_request`: an `Authorization` header that is not text.", body = ErrorBody),
        (status = 401, description = "`invalid_token`, `no_visitor`; with a pass: `invalid_pass` (also a superseded pass), `expired_pass`.", body = ErrorBody, headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[post("/api/rooms/{room}/release")]
async fn release(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    // A pass (three dot-separated parts) in the bearer names its visitor. It must be the
    // pass of the visitor's live session: an older, superseded pass ends nothing.
    // Either way the session it ends goes to the revocation log, which the gateways read.
    match bearer(&req)? {
        Some(t) if t.matches('.').count() == 2 => {
            let claims = engine.verify_pass(&room, t).await?.claims;
            engine.release_pass(&room, &claims).await?;
        }
        _ => {
            let visitor = require_visitor(&req, &engine)?;
            engine.release(&room, visitor.as_str()).await?;
        }
    }
    let mut res = HttpResponse::NoContent();
    // Drop the now useless pass cookie.
    let mut gone = cookie(&engine, pass_cookie(&room), String::new(), 0, SameSite::Lax);
    gone.make_removal();
    res.cookie(gone);
    Ok(res.finish())
}

/// Ends the session of a pass and revokes it everywhere: `verify` refuses it at once,
/// every gateway within a second. The pass comes as a bearer token or in the
/// `anteroom_pass_{room}` cookie (for an origin behind nginx that cannot set the
/// gateway's `Anteroom-Command` header). `204`, also for a pass whose session had
/// already ended; `401` for a forged, expired or other room's pass.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("pass" = []), ("pass_cookie" = [])),
    responses(
        (status = 204, description = "Revoked (also a pass whose session had already ended); the pass cookie is removed."),
        (status = 400, description = "`bad_request`: an `Authorization` header that is not text.", body = ErrorBody),
        (status = 401, description = "`invalid_pass` (none, forged, another room's), `expired_pass`.", body = ErrorBody, headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 503, description = "`store_unavailable`.", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait."))),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[post("/api/rooms/{room}/revoke")]
async fn revoke(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let token = bearer(&req)?
        .map(str::to_string)
        .or_else(|| {
            req.cookie(&pass_cookie(&room))
                .map(|c| c.value().to_string())
        })
        .ok_or_else(|| ApiError::unauthorized("invalid_pass", "no pass presented"))?;
    let claims = engine.passes().verify(&token, &room)?;
    engine.revoke(&room, &claims).await?;
    let mut gone = cookie(&engine, pass_cookie(&room), String::new(), 0, SameSite::Lax);
    gone.make_removal();
    Ok(HttpResponse::NoContent()
        .insert_header(("Cache-Control", "no-store"))
        .cookie(gone)
        .finish())
}

/// The `[[bypass]]` rule this request matches: the client IP, `User-Agent`, headers and
/// the original path (`X-Original-URI`, set by the proxy) of the request being checked,
/// read as the gateway reads a path
/// ([`read_path`](crate::domain::request_target::read_path)). A path the reader refuses
/// (`..%2f`, `%3F`, `\`…) is matched by no `path` rule: the request needs a pass.
fn bypass_rule<'a>(req: &HttpRequest, engine: &'a Engine) -> Option<&'a str> {
    if engine.bypass().is_empty() {
        return None;
    }
    let h = req.headers();
    let header = |name: &str| h.get(name).and_then(|v| v.to_str().ok());
    let path = header("x-original-uri").and_then(|raw| {
        crate::domain::request_target::read_path(raw)
            .inspect_err(|why| {
                tracing::debug!(
                    reason = why.reason(),
                    "verify: X-Original-URI refused; no path bypass"
                )
            })
            .ok()
    });
    engine
        .bypass()
        .matching(&crate::domain::bypass::RequestFacts {
            ip: client_ip(req, engine),
            user_agent: header("user-agent"),
            path: path.as_deref(),
            header: &header,
        })
}

/// 200 with the pass's claims when the pass is valid and its session live, or with
/// `X-Anteroom-Bypass` when a `[[bypass]]` rule matches; 401 otherwise. Suitable for
/// nginx `auth_request`.
#[utoipa::path(
    tag = "visitor",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security((), ("pass" = []), ("pass_cookie" = [])),
    responses(
        (status = 200, description = "The pass is valid and its session live (`X-Anteroom-Visitor`; `X-Anteroom-Degraded: store-unreachable` when checked without the store), or a `[[bypass]]` rule matched (`X-Anteroom-Bypass`).", body = Verified),
        (status = 400, description = "`bad_request`: an `Authorization` header that is not text.", body = ErrorBody),
        (status = 401, description = "`invalid_pass` (none, forged, another room's, session ended), `expired_pass`.", body = ErrorBody, headers(("WWW-Authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "`unknown_room`.", body = ErrorBody),
        (status = 500, description = "`internal`.", body = ErrorBody),
    )
)]
#[get("/api/rooms/{room}/verify")]
async fn verify(
    req: HttpRequest,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    if let Some(rule) = bypass_rule(&req, &engine) {
        engine.metrics().bypassed.with_label_values(&[rule]).inc();
        return Ok(HttpResponse::Ok()
            .insert_header(("Cache-Control", "no-store"))
            .insert_header(("X-Anteroom-Bypass", rule))
            .json(Verified::Bypass(Bypassed {
                bypass: rule.to_string(),
            })));
    }
    let token = bearer(&req)?
        .map(str::to_string)
        .or_else(|| {
            req.cookie(&pass_cookie(&room))
                .map(|c| c.value().to_string())
        })
        .ok_or_else(|| ApiError::unauthorized("invalid_pass", "no pass presented"))?;
    let verified = engine.verify_pass(&room, &token).await?;
    let mut res = HttpResponse::Ok();
    res.insert_header(("Cache-Control", "no-store"))
        .insert_header(("X-Anteroom-Visitor", verified.claims.sub.clone()));
    if verified.degraded {
        res.insert_header(("X-Anteroom-Degraded", DEGRADED_STORE_UNREACHABLE));
    }
    Ok(res.json(Verified::Pass(verified.claims)))
}

/// A `200` from verify: the pass's claims, or the bypass rule that let the request in.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Verified {
    Pass(Claims),
    Bypass(Bypassed),
}

/// A request let in by a `[[bypass]]` rule, without a pass.
#[derive(Serialize, ToSchema)]
pub struct Bypassed {
    /// The rule's name (also in `X-Anteroom-Bypass`).
    pub bypass: String,
}
