//! The admin JSON API under `/api/admin/…`: thin handlers over the admin service
//! ([`crate::domain::admin`]), which applies each change and writes it to the audit log.

use actix_web::{delete, get, post, put, web, HttpResponse, ResponseError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::auth::Admin;
use super::responses::{AdminReadErrors, AdminWriteErrors};
use crate::config::Role;
use crate::domain::admin::visitors::{self, Removal, VisitorMatch, Wanted};
use crate::domain::admin::{self as service, AuditEntry, Overview, PutOutcome, Switch};
use crate::domain::admission::Engine;
use crate::domain::fifo_audit::{self, FifoAudit};
use crate::domain::identity::{SupportCode, VisitorId};
use crate::domain::live::RoomLive;
use crate::room::{QueueMode, RoomConfig};
use crate::store::{RoomPatch, StockChange, MAX_STOCK};
use crate::web::error::{ApiError, ErrorBody, ErrorDetail};
use crate::web::support::room_id;

/// The OpenAPI description of these routes (merged into `/api/openapi.json`). Every
/// route also answers the admin credential's errors: `401 no_credential` /
/// `invalid_token`, `403 forbidden` (a foreign `Origin`, a missing CSRF token), `403
/// forbidden_role` (the user's role may not make this change: `super::roles`), `404
/// not_found` (the admin interface off), `429 rate_limited` (failed authentications).
#[derive(OpenApi)]
#[openapi(
    paths(
        list_rooms,
        get_room,
        put_room,
        delete_room,
        switch,
        stock,
        find_visitors,
        remove_visitor,
        flush,
        room_audit,
        all_audit
    ),
    components(schemas(
        Overview,
        RoomDetail,
        FifoAudit,
        crate::domain::outflow::Point,
        RoomVersion,
        PutRoomBody,
        StaleRoom,
        StockBody,
        StockOutcome,
        VisitorList,
        AmbiguousCode,
        Flushed,
        AuditList
    ))
)]
pub struct Doc;

/// A room's configuration and the version it is at.
#[derive(Serialize, ToSchema)]
pub struct RoomVersion {
    pub config: RoomConfig,
    /// Send it back with a `PUT` to change only what you saw.
    pub version: u64,
}

/// A room's configuration, its version and its live figures.
#[derive(Serialize, ToSchema)]
pub struct RoomDetail {
    pub config: RoomConfig,
    pub version: u64,
    pub live: RoomLive,
    /// Admission order against ticket order over the last hour (0 discordant pairs in
    /// a FIFO room).
    pub fifo_audit: FifoAudit,
    /// The adaptive outflow controller's last decisions, oldest first (docs/outflow.md);
    /// empty for a room it never decided for.
    pub outflow: Vec<crate::domain::outflow::Point>,
    /// Admissions taken back from no-shows so far (docs/outflow.md#no-shows).
    pub no_shows: u64,
}

/// `409 conflict` of a `PUT` based on a version the room is no longer at: nothing
/// changed; the current configuration and version.
#[derive(Serialize, ToSchema)]
pub struct StaleRoom {
    pub error: ErrorDetail,
    pub config: RoomConfig,
    pub version: u64,
}

/// The body of `PUT /api/admin/rooms/{room}`: any room fields, plus the `version` the
/// change is based on.
// Read as a JSON object first (`put_body`): serde cannot refuse unknown fields through
// a flattened struct.
#[derive(ToSchema)]
pub struct PutRoomBody {
    #[serde(flatten)]
    patch: RoomPatch,
    /// The version `GET` answered: the change is refused (`409`) if the room moved on.
    version: Option<u64>,
}

/// A stock change: before and after (`null`: unlimited).
#[derive(Serialize, ToSchema)]
pub struct StockOutcome {
    pub old: Option<u64>,
    pub new: Option<u64>,
}

/// Visitors found by support code or id.
#[derive(Serialize, ToSchema)]
pub struct VisitorList {
    pub visitors: Vec<VisitorMatch>,
}

/// `409 conflict` of a removal by a support code that several visitors share: nobody
/// was removed; the matches.
#[derive(Serialize, ToSchema)]
pub struct AmbiguousCode {
    pub error: ErrorDetail,
    pub visitors: Vec<VisitorMatch>,
}

/// How many visitors a flush removed from the queue.
#[derive(Serialize, ToSchema)]
pub struct Flushed {
    pub flushed: u64,
}

/// Audit log entries, newest first.
#[derive(Serialize, ToSchema)]
pub struct AuditList {
    pub entries: Vec<AuditEntry>,
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(list_rooms)
        .service(get_room)
        .service(put_room)
        .service(delete_room)
        .service(switch)
        .service(stock)
        .service(find_visitors)
        .service(remove_visitor)
        .service(flush)
        .service(room_audit)
        .service(all_audit);
}

#[utoipa::path(
    tag = "admin",
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "Every room with its live figures, the totals.", body = Overview),
        (status = 404, description = "`not_found`: the admin interface is off.", body = ErrorBody),
        AdminReadErrors,
    )
)]
#[get("/api/admin/rooms")]
async fn list_rooms(_a: Admin, engine: web::Data<Engine>) -> Result<HttpResponse, ApiError> {
    let overview: Overview = service::overview(&engine, 0).await?;
    Ok(HttpResponse::Ok().json(overview))
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The room's configuration, version, live figures, FIFO audit and adaptive outflow decisions.", body = RoomDetail),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminReadErrors,
    )
)]
#[get("/api/admin/rooms/{room}")]
async fn get_room(
    _a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let (config, version, live) = service::room(&engine, &room).await?;
    let fifo_audit = fifo_audit::audit(&engine, &room).await?;
    let outflow = crate::outflow::points(
        engine.outflow_store(),
        &room,
        crate::store::outflow::CHART_POINTS,
    )
    .await;
    let no_shows = engine.outflow_store().no_shows(&room).await.unwrap_or(0);
    Ok(HttpResponse::Ok().json(RoomDetail {
        config,
        version,
        live,
        fifo_audit,
        outflow,
        no_shows,
    }))
}

/// An error in the one shape, with more members beside `error` (the `409`s that carry
/// what the client needs to decide: the current config, or the matching visitors).
fn error_with(err: ApiError, body: impl Serialize) -> HttpResponse {
    // unwrap: the bodies always serialise.
    let body = serde_json::to_string(&body).unwrap();
    err.error_response()
        .set_body(actix_web::body::BoxBody::new(body))
}

/// The body of a `PUT`: any room fields, plus the optional `version` the change is based
/// on. Read as an object first so `version` can sit beside the fields of [`RoomPatch`],
/// which refuses unknown fields.
fn put_body(mut body: Map<String, Value>) -> Result<PutRoomBody, ApiError> {
    let malformed = |message: String| ApiError::BadRequest {
        code: "malformed_json",
        message,
    };
    let version = match body.remove("version") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            malformed("`version` must be a whole number (the one GET answered)".into())
        })?),
    };
    // An unknown mode names the field (serde's "unknown variant" would not).
    if let Some(m) = body.get("mode").filter(|m| !m.is_null()) {
        if m.as_str().and_then(QueueMode::parse).is_none() {
            return Err(ApiError::invalid_field(
                "mode",
                "must be \"fifo\", \"random\", \"passthrough\" or \"reject\"",
            ));
        }
    }
    // A scheduled event's times: RFC 3339, or "" to remove (named, as the mode).
    for field in ["prequeue_opens_at", "opens_at", "closes_at"] {
        let ok = match body.get(field) {
            None | Some(Value::Null) => true,
            Some(Value::String(t)) => {
                t.trim().is_empty() || crate::room::schedule::parse_rfc3339_ms(t).is_some()
            }
            Some(_) => false,
        };
        if !ok {
            return Err(ApiError::invalid_field(
                field,
                &format!(
                    "{} (or \"\" to remove it)",
                    crate::room::schedule::TIME_HINT
                ),
            ));
        }
    }
    // Secrets are shown as "[set]": a configuration sent back as it was read keeps them
    // (a `webhook_url` shown with its credentials hidden: `domain::admin`).
    for field in ["webhook_secret", "entry_secret"] {
        if body.get(field).and_then(Value::as_str) == Some(crate::room::redact::SET) {
            body.remove(field);
        }
    }
    let patch = serde_json::from_value(Value::Object(body))
        .map_err(|e| malformed(format!("the request body is not valid JSON: {e}")))?;
    Ok(PutRoomBody { patch, version })
}

/// A change naming a room's entry keys or webhook needs an owner
/// ([`super::roles::OWNER_FIELDS`]); one sending them back as shown (`[set]`) names
/// nothing ([`put_body`] drops those).
fn owner_fields_need_an_owner(a: &Admin, patch: &RoomPatch) -> Result<(), ApiError> {
    let named = [
        ("entry", patch.entry.is_some()),
        ("entry_secret", patch.entry_secret.is_some()),
        ("entry_public_key", patch.entry_public_key.is_some()),
        ("webhook_url", patch.webhook_url.is_some()),
        ("webhook_secret", patch.webhook_secret.is_some()),
    ];
    debug_assert!(named
        .iter()
        .map(|n| n.0)
        .eq(super::roles::OWNER_FIELDS.iter().copied()));
    match named.iter().find(|(_, set)| *set) {
        Some((field, _)) => a.require(Role::Owner, &format!("set `{field}`")),
        None => Ok(()),
    }
}

/// Creates a room (`target_url` required) or changes the given fields of an existing one;
/// with `version`, only if nobody changed the room since that version (else `409`).
#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    request_body(content = PutRoomBody, description = "Room fields to set (`target_url` required to create); unknown fields are refused."),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "Changed.", body = RoomVersion),
        (status = 201, description = "Created.", body = RoomVersion),
        (status = 400, description = "`malformed_json` (also without `Content-Type: application/json`), `invalid_field` (with `field`).", body = ErrorBody),
        (status = 404, description = "`not_found`: the admin interface is off.", body = ErrorBody),
        (status = 409, description = "`conflict`: the room moved on from `version` (nothing changed; the current `config` and `version`), or was created by another request at the same moment.", body = StaleRoom),
        AdminWriteErrors,
    )
)]
#[put("/api/admin/rooms/{room}")]
async fn put_room(
    a: Admin,
    room: web::Path<String>,
    body: web::Json<Map<String, Value>>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let PutRoomBody {
        patch,
        version: expected,
    } = put_body(body.into_inner())?;
    owner_fields_need_an_owner(&a, &patch)?;
    Ok(
        match service::put_room(&engine, &a.who, &room, &patch, expected).await? {
            PutOutcome::Created { config, version } => {
                HttpResponse::Created().json(RoomVersion { config, version })
            }
            PutOutcome::Changed { config, version } => {
                HttpResponse::Ok().json(RoomVersion { config, version })
            }
            PutOutcome::Stale { config, version } => {
                let err = ApiError::Conflict(format!(
                    "`{room}` was changed by someone else since version {}: it is at \
                     version {version}; nothing was changed",
                    expected.unwrap_or_default()
                ));
                let body = StaleRoom {
                    error: err.detail(),
                    config,
                    version,
                };
                error_with(err, body)
            }
        },
    )
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 204, description = "Deleted."),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        (status = 409, description = "`conflict`: the room is declared in the configuration.", body = ErrorBody),
        AdminWriteErrors,
    )
)]
#[delete("/api/admin/rooms/{room}")]
async fn delete_room(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    service::delete_room(&engine, &a.who, &room).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST …/pause`, `…/resume`, `…/close` and `…/open`: one flag each.
#[utoipa::path(
    tag = "admin",
    params(
        ("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`."),
        ("action" = String, Path, description = "`pause`, `resume`, `close` or `open`.", pattern = "^(pause|resume|close|open)$"),
    ),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The flag is set; the room's configuration and version.", body = RoomVersion),
        (status = 404, description = "`unknown_room` (also any other action); `not_found`: the admin interface is off.", body = ErrorBody),
        AdminWriteErrors,
    )
)]
#[post("/api/admin/rooms/{room}/{action:pause|resume|close|open}")]
async fn switch(
    a: Admin,
    path: web::Path<(String, String)>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (room, action) = path.into_inner();
    let room = room_id(&room)?;
    // unwrap: the route's pattern admits only the four actions.
    let action = Switch::parse(&action).unwrap();
    let (config, version) = service::switch(&engine, &a.who, &room, action).await?;
    Ok(HttpResponse::Ok().json(RoomVersion { config, version }))
}

/// Body of `POST …/stock`: exactly one of the fields.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StockBody {
    /// Set the units left.
    set: Option<u64>,
    /// Add units (> 0).
    add: Option<u64>,
    /// `true`: no stock limit.
    unlimited: Option<bool>,
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "Stock before and after.", body = StockOutcome),
        (status = 400, description = "`malformed_json`; `invalid_field` (`stock`): not exactly one valid change, or beyond the bound.", body = ErrorBody),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminWriteErrors,
    )
)]
#[post("/api/admin/rooms/{room}/stock")]
async fn stock(
    a: Admin,
    room: web::Path<String>,
    body: web::Json<StockBody>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let change = match (body.set, body.add, body.unlimited) {
        (Some(n), None, None) | (None, Some(n), None) if n > MAX_STOCK => {
            return Err(ApiError::invalid_field(
                "stock",
                &format!("must be at most {MAX_STOCK}"),
            ))
        }
        (Some(n), None, None) => StockChange::Set(n),
        (None, Some(n), None) if n > 0 => StockChange::Add(n),
        (None, None, Some(true)) => StockChange::Unlimited,
        _ => {
            return Err(ApiError::invalid_field(
                "stock",
                "send exactly one of {\"set\": N}, {\"add\": N > 0} or {\"unlimited\": true}",
            ))
        }
    };
    let (old, new) = service::change_stock(&engine, &a.who, &room, change).await?;
    Ok(HttpResponse::Ok().json(StockOutcome { old, new }))
}

/// `?code=K7QX-M2PD` or `?id=<32 hex>`: exactly one.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct FindQuery {
    /// A support code (`K7QX-M2PD`).
    code: Option<String>,
    /// A visitor id (32 hex digits).
    id: Option<String>,
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The visitors found (queued or admitted).", body = VisitorList),
        (status = 400, description = "`bad_request`: neither or both of `code` and `id`, or another parameter; `invalid_field` (`code`, `id`).", body = ErrorBody),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminReadErrors,
    )
)]
#[get("/api/admin/rooms/{room}/visitors")]
async fn find_visitors(
    _a: Admin,
    room: web::Path<String>,
    q: web::Query<FindQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let wanted = match (&q.code, &q.id) {
        (Some(code), None) => Wanted::Code(SupportCode::parse(code).ok_or_else(|| {
            ApiError::invalid_field(
                "code",
                "must be a support code: 8 characters of 0-9 and A-Z (no I, L, O, U), like K7QX-M2PD",
            )
        })?),
        (None, Some(id)) => Wanted::Id(
            VisitorId::parse(&id.trim().to_ascii_lowercase())
                .ok_or_else(|| ApiError::invalid_field("id", "must be 32 hex digits"))?,
        ),
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of ?code=<support code> or ?id=<visitor id>",
            ))
        }
    };
    let found = visitors::find(&engine, &room, &wanted).await?;
    Ok(HttpResponse::Ok().json(VisitorList { visitors: found }))
}

/// `{id}` is a full visitor id or a support code; a code that matches several visitors
/// removes nobody and answers `409` with the matches.
#[utoipa::path(
    tag = "admin",
    params(
        ("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`."),
        ("id" = String, Path, description = "A visitor id (32 hex digits) or a support code."),
    ),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 204, description = "Removed: the place or the session is gone."),
        (status = 400, description = "`invalid_field` (`id`): neither a visitor id nor a support code.", body = ErrorBody),
        (status = 404, description = "`unknown_room`; `not_found`: no such visitor queued or admitted, or the admin interface is off.", body = ErrorBody),
        (status = 409, description = "`conflict`: several visitors have the support code; nobody was removed.", body = AmbiguousCode),
        AdminWriteErrors,
    )
)]
#[delete("/api/admin/rooms/{room}/visitors/{id}")]
async fn remove_visitor(
    a: Admin,
    path: web::Path<(String, String)>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let (room, id) = path.into_inner();
    let room = room_id(&room)?;
    Ok(match visitors::remove(&engine, &a.who, &room, &id).await? {
        Removal::Removed => HttpResponse::NoContent().finish(),
        Removal::Ambiguous(matches) => {
            let err = ApiError::Conflict(format!(
                "{} visitors have the support code {}; nobody was removed: remove one by its id",
                matches.len(),
                id.trim()
            ));
            let body = AmbiguousCode {
                error: err.detail(),
                visitors: matches,
            };
            error_with(err, body)
        }
    })
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The queue is emptied (sessions stay).", body = Flushed),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminWriteErrors,
    )
)]
#[post("/api/admin/rooms/{room}/flush")]
async fn flush(
    a: Admin,
    room: web::Path<String>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let n = service::flush(&engine, &a.who, &room).await?;
    Ok(HttpResponse::Ok().json(Flushed { flushed: n }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// How many entries, newest first (default 100, at most 1000).
    limit: Option<u32>,
}

#[utoipa::path(
    tag = "admin",
    params(("room" = String, Path, description = "Room id, `[A-Za-z0-9_-]{1,64}`.")),
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The room's audit log, newest first.", body = AuditList),
        (status = 400, description = "`bad_request`: a query that cannot be read.", body = ErrorBody),
        (status = 404, description = "`unknown_room`; `not_found`: the admin interface is off.", body = ErrorBody),
        AdminReadErrors,
    )
)]
#[get("/api/admin/rooms/{room}/audit")]
async fn room_audit(
    _a: Admin,
    room: web::Path<String>,
    q: web::Query<AuditQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(&room)?;
    let limit = q.limit.unwrap_or(100).min(1000);
    let entries = service::read_audit(&engine, limit, Some(&room)).await?;
    Ok(HttpResponse::Ok().json(AuditList { entries }))
}

#[utoipa::path(
    tag = "admin",
    security(("admin_token" = []), ("admin_session" = [])),
    responses(
        (status = 200, description = "The audit log of every room, newest first.", body = AuditList),
        (status = 400, description = "`bad_request`: a query that cannot be read.", body = ErrorBody),
        (status = 404, description = "`not_found`: the admin interface is off.", body = ErrorBody),
        AdminReadErrors,
    )
)]
#[get("/api/admin/audit")]
async fn all_audit(
    _a: Admin,
    q: web::Query<AuditQuery>,
    engine: web::Data<Engine>,
) -> Result<HttpResponse, ApiError> {
    let limit = q.limit.unwrap_or(100).min(1000);
    let entries = service::read_audit(&engine, limit, None).await?;
    Ok(HttpResponse::Ok().json(AuditList { entries }))
}
