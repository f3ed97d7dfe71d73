//! Finding a visitor by the support code they read out (or their full id), and removing
//! them by either; a code that matches several visitors removes nobody.

use crate::helpers::admin::{admin, admin_app};
use crate::helpers::{room, Reply, TestApp};
use anteroom::domain::identity::VisitorId;
use reqwest::Method;
use serde_json::Value;

fn id_of(token: &str) -> VisitorId {
    VisitorId::parse(token.split('.').next().unwrap()).unwrap()
}

async fn find(app: &TestApp, room: &str, query: &str) -> Reply {
    admin(
        app,
        Method::GET,
        &format!("/api/admin/rooms/{room}/visitors?{query}"),
        None,
    )
    .await
}

#[tokio::test]
async fn a_visitor_is_found_by_support_code_or_id_with_where_they_stand() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let held = id_of(&app.join("r").await.token());
    app.join("r").await;
    let waiting = id_of(&app.join("r").await.token());

    let by_code = find(&app, "r", &format!("code={}", waiting.support_code())).await;
    assert_eq!(by_code.status, 200, "{}", by_code.body);
    let visitors = by_code.body["visitors"].as_array().unwrap();
    assert_eq!(visitors.len(), 1);
    assert_eq!(visitors[0]["id"], waiting.as_str());
    assert_eq!(visitors[0]["support_code"], waiting.support_code());
    assert_eq!(visitors[0]["state"], "queued");
    assert_eq!(visitors[0]["position"], 2);

    // Typed the way people type it: lower case, a space, an O for a 0.
    let sloppy = waiting
        .support_code()
        .to_lowercase()
        .replace('-', " ")
        .replace('0', "o");
    let again = find(&app, "r", &format!("code={}", urlencode(&sloppy))).await;
    assert_eq!(again.body["visitors"][0]["id"], waiting.as_str());

    let by_id = find(&app, "r", &format!("id={}", held.as_str())).await;
    let v = &by_id.body["visitors"][0];
    assert_eq!(
        (v["state"].as_str(), v["id"].as_str()),
        (Some("admitted"), Some(held.as_str()))
    );
    assert!(v["expires_at"].as_u64().unwrap() > v["admitted_at"].as_u64().unwrap() / 1000);
    assert!(v.get("position").is_none());

    let nobody = find(&app, "r", "code=ZZZZ-ZZZZ").await;
    assert_eq!(
        (nobody.status, nobody.body["visitors"].clone()),
        (200, Value::Array(vec![]))
    );
}

#[tokio::test]
async fn a_visitor_is_removed_by_support_code_and_the_removal_is_audited() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let held = id_of(&app.join("r").await.token());
    let next = app.join("r").await.token();
    let r = admin(
        &app,
        Method::DELETE,
        &format!("/api/admin/rooms/r/visitors/{}", held.support_code()),
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(app.status("r", &next).await.state(), "admitted");
    let audit = admin(&app, Method::GET, "/api/admin/rooms/r/audit", None).await;
    let e = &audit.body["entries"][0];
    assert_eq!(
        (e["action"].as_str(), e["old"].as_str()),
        (Some("remove visitor"), Some(held.as_str())),
        "the audit names the full id"
    );
    let again = admin(
        &app,
        Method::DELETE,
        &format!("/api/admin/rooms/r/visitors/{}", held.support_code()),
        None,
    )
    .await;
    assert_eq!((again.status, again.error_code()), (404, "not_found"));
}

#[tokio::test]
async fn a_code_that_matches_two_visitors_removes_nobody_and_answers_both() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    // Two ids with the same first 40 bits: the same support code.
    let a = VisitorId::parse("abcdef0123000000000000000000000a").unwrap();
    let b = VisitorId::parse("abcdef0123ffffffffffffffffffffff").unwrap();
    assert_eq!(a.support_code(), b.support_code());
    let store = app.engine.shared_store();
    store.join("r", a.as_str()).await.unwrap();
    store.join("r", b.as_str()).await.unwrap();

    let r = admin(
        &app,
        Method::DELETE,
        &format!("/api/admin/rooms/r/visitors/{}", a.support_code()),
        None,
    )
    .await;
    assert_eq!((r.status, r.error_code()), (409, "conflict"));
    let ids: Vec<&str> = r.body["visitors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [a.as_str(), b.as_str()], "admitted first, then queued");
    let st = store.stats("r").await.unwrap();
    assert_eq!((st.active, st.queue_length), (1, 1), "nobody removed");

    // The full id picks one.
    let r = admin(
        &app,
        Method::DELETE,
        &format!("/api/admin/rooms/r/visitors/{}", b.as_str()),
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(store.stats("r").await.unwrap().queue_length, 0);
}

#[tokio::test]
async fn bad_searches_and_removals_get_clear_errors() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    for (path, status, code, field) in [
        (
            "/api/admin/rooms/nope/visitors?code=K7QX-M2PD",
            404,
            "unknown_room",
            None,
        ),
        (
            "/api/admin/rooms/bad%20id/visitors?code=K7QX-M2PD",
            404,
            "unknown_room",
            None,
        ),
        (
            "/api/admin/rooms/r/visitors?code=K7QX-M2P",
            400,
            "invalid_field",
            Some("code"),
        ),
        (
            "/api/admin/rooms/r/visitors?code=K7QX-M2PU",
            400,
            "invalid_field",
            Some("code"),
        ),
        (
            "/api/admin/rooms/r/visitors?id=xyz",
            400,
            "invalid_field",
            Some("id"),
        ),
        ("/api/admin/rooms/r/visitors", 400, "bad_request", None),
        (
            "/api/admin/rooms/r/visitors?code=K7QX-M2PD&id=0123456789abcdef0123456789abcdef",
            400,
            "bad_request",
            None,
        ),
        (
            "/api/admin/rooms/r/visitors?name=x",
            400,
            "bad_request",
            None,
        ),
    ] {
        let r = admin(&app, Method::GET, path, None).await;
        assert_eq!(
            (r.status, r.error_code()),
            (status, code),
            "{path}: {}",
            r.body
        );
        assert_eq!(r.body["error"]["field"].as_str(), field, "{path}");
        assert!(!r.body["error"]["message"].as_str().unwrap().is_empty());
    }
    for (path, status, code) in [
        (
            "/api/admin/rooms/nope/visitors/K7QX-M2PD",
            404,
            "unknown_room",
        ),
        ("/api/admin/rooms/r/visitors/K7QX-M2PD", 404, "not_found"),
        ("/api/admin/rooms/r/visitors/K7QX", 400, "invalid_field"),
    ] {
        let r = admin(&app, Method::DELETE, path, None).await;
        assert_eq!(
            (r.status, r.error_code()),
            (status, code),
            "{path}: {}",
            r.body
        );
    }
}

/// Percent-encodes the few characters a typed code may hold.
fn urlencode(s: &str) -> String {
    s.replace(' ', "%20")
}
