//! The built-in demo origin: the "protected site" of the demo room. It checks the pass
//! the way a real origin would (here through the engine: signature, expiry, room, live
//! session) and says whether the visitor is in.

use actix_web::{get, web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use crate::domain::admission::Engine;
use crate::domain::pass::pass_cookie;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(origin);
}

#[derive(Template)]
#[template(path = "demo_origin.html")]
struct OriginPage {
    room: String,
    admitted: bool,
    visitor: String,
    expires_in: u64,
    reason: String,
}

#[derive(Deserialize)]
struct OriginQuery {
    anteroom_pass: Option<String>,
    room: Option<String>,
    /// Set by the page itself after "give my place back".
    released: Option<String>,
}

/// Whole seconds left until `exp` (seconds, rounded up when issued): never more than
/// the pass was issued for, so a 60 s pass reads "60 s", not "61 s", when it is new.
fn seconds_left(exp: u64, now_ms: u64) -> u64 {
    (exp * 1000).saturating_sub(now_ms) / 1000
}

#[get("/demo/origin")]
async fn origin(
    req: HttpRequest,
    q: web::Query<OriginQuery>,
    engine: web::Data<Engine>,
) -> actix_web::Result<HttpResponse> {
    let q = q.into_inner();
    let room = q.room.unwrap_or_else(|| "demo".to_string());
    if !engine.settings().demo || !crate::room::valid_room_id(&room) {
        return Ok(HttpResponse::NotFound().finish());
    }
    let from_query = q.anteroom_pass.clone();
    let token = q.anteroom_pass.or_else(|| {
        req.cookie(&pass_cookie(&room))
            .map(|c| c.value().to_string())
    });
    let page = match token {
        _ if q.released.is_some() => OriginPage {
            room,
            admitted: false,
            visitor: String::new(),
            expires_in: 0,
            reason: "You gave your place back, so your pass no longer lets you in. Join the queue again to come back.".into(),
        },
        None => OriginPage {
            room,
            admitted: false,
            visitor: String::new(),
            expires_in: 0,
            reason: "You have no pass for this page yet.".into(),
        },
        Some(t) => match engine.verify_pass(&room, &t).await {
            Ok(v) => OriginPage {
                room,
                admitted: true,
                visitor: v.claims.sub,
                expires_in: seconds_left(v.claims.exp, crate::clock::wall_ms()),
                reason: String::new(),
            },
            Err(e) => OriginPage {
                room,
                admitted: false,
                visitor: String::new(),
                expires_in: 0,
                reason: e.to_string(),
            },
        },
    };
    // A good pass that came in the address is kept in a cookie, as a real origin would:
    // the page takes it out of the address bar.
    let keep = match (&from_query, page.admitted) {
        (Some(t), true) => Some(crate::web::support::cookie(
            &engine,
            pass_cookie(&page.room),
            t.clone(),
            page.expires_in.max(1) as i64,
            actix_web::cookie::SameSite::Lax,
        )),
        _ => None,
    };
    let html = page
        .render()
        .map_err(actix_web::error::ErrorInternalServerError)?;
    let mut res = HttpResponse::Ok();
    if let Some(c) = keep {
        res.cookie(c);
    }
    Ok(res
        .insert_header(("Cache-Control", "no-store"))
        .content_type("text/html; charset=utf-8")
        .body(html))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_new_sixty_second_pass_has_sixty_seconds_left() {
        // Issued at 100.400 s for 60 s: expires at 160.400 s, so exp = 161.
        let exp = 160_400u64.div_ceil(1000);
        assert_eq!(super::seconds_left(exp, 100_400), 60);
        assert_eq!(super::seconds_left(exp, 100_999), 60);
        assert_eq!(super::seconds_left(exp, 160_999), 0);
        assert_eq!(super::seconds_left(exp, 170_000), 0);
    }
}
