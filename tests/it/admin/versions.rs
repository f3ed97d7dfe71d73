//! Optimistic concurrency on a room's settings: `GET` answers a `version`, a `PUT` that
//! names an older one is refused with `409 conflict` and the current values, and every
//! kind of change moves the version.

use crate::helpers::admin::{admin, admin_app, TOKEN};
use crate::helpers::{room, Reply};
use reqwest::Method;
use serde_json::{json, Value};

async fn version(app: &crate::helpers::TestApp) -> u64 {
    let r = admin(app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.status, 200);
    r.body["version"].as_u64().expect("GET answers a version")
}

async fn put(app: &crate::helpers::TestApp, body: Value) -> Reply {
    admin(app, Method::PUT, "/api/admin/rooms/r", Some(body)).await
}

#[tokio::test]
async fn a_put_based_on_an_old_version_is_refused_with_the_current_values() {
    let (app, _r) = admin_app(vec![room("r", 4)]).await;
    let seen = version(&app).await;

    // A colleague raises the capacity through the API.
    let raised = put(&app, json!({"capacity": 10, "version": seen})).await;
    assert_eq!(raised.status, 200);
    assert_eq!(raised.body["version"], seen + 1);

    // A form filled before that saves a heartbeat change, naming what it saw.
    let stale = put(
        &app,
        json!({"heartbeat_timeout_secs": 30, "capacity": 4, "version": seen}),
    )
    .await;
    assert_eq!((stale.status, stale.error_code()), (409, "conflict"));
    assert_eq!(stale.body["version"], seen + 1);
    assert_eq!(stale.body["config"]["capacity"], 10);
    assert_eq!(stale.body["config"]["heartbeat_timeout_secs"], 60);
    let msg = stale.body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("nothing was changed"), "{msg}");
    let cfg = app.engine.room_store().room("r").await.unwrap().unwrap();
    assert_eq!(
        (cfg.capacity, cfg.heartbeat_timeout_secs),
        (10, 60),
        "nothing changed"
    );
    let audit = admin(&app, Method::GET, "/api/admin/rooms/r/audit", None).await;
    assert_eq!(audit.body["entries"].as_array().unwrap().len(), 1);

    // With the current version the same change goes through.
    let ok = put(
        &app,
        json!({"heartbeat_timeout_secs": 30, "version": seen + 1}),
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["config"]["capacity"], 10);
    assert_eq!(ok.body["version"], seen + 2);
}

#[tokio::test]
async fn a_put_without_a_version_applies_as_before() {
    let (app, _r) = admin_app(vec![room("r", 4)]).await;
    let before = version(&app).await;
    put(&app, json!({"capacity": 10})).await;
    let r = put(&app, json!({"name": "Sale"})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        (
            r.body["config"]["capacity"].as_u64(),
            r.body["config"]["name"].as_str()
        ),
        (Some(10), Some("Sale"))
    );
    assert_eq!(r.body["version"], before + 2);
    let same = put(&app, json!({"name": "Sale"})).await;
    assert_eq!(
        same.body["version"],
        before + 2,
        "a change to the same value is no change"
    );
}

#[tokio::test]
async fn every_kind_of_change_moves_the_version() {
    let (app, _r) = admin_app(vec![room("r", 4)]).await;
    let mut seen = version(&app).await;
    for (method, path, body) in [
        (Method::POST, "/api/admin/rooms/r/pause", None),
        (Method::POST, "/api/admin/rooms/r/resume", None),
        (Method::POST, "/api/admin/rooms/r/close", None),
        (Method::POST, "/api/admin/rooms/r/open", None),
        (
            Method::POST,
            "/api/admin/rooms/r/stock",
            Some(json!({"set": 3})),
        ),
        (
            Method::PUT,
            "/api/admin/rooms/r",
            Some(json!({"capacity": 5})),
        ),
    ] {
        let r = admin(&app, method, path, body).await;
        assert!(r.status < 300, "{path}: {}", r.body);
        let now = version(&app).await;
        assert_eq!(now, seen + 1, "{path} moves the version");
        if path.ends_with("pause") {
            assert_eq!(r.body["version"], now, "the switch answers the version");
        }
        // A form still based on the version before this change is stale now.
        let stale = put(&app, json!({"capacity": 9, "version": seen})).await;
        assert_eq!(
            (stale.status, stale.error_code()),
            (409, "conflict"),
            "{path}"
        );
        seen = now;
    }
    // Admissions consume stock, which is not a configuration change.
    app.join("r").await;
    assert_eq!(version(&app).await, seen);
}

#[tokio::test]
async fn a_put_with_a_version_never_creates_a_room() {
    let (app, _r) = admin_app(vec![room("r", 4)]).await;
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/gone",
        Some(json!({"capacity": 3, "target_url": "https://shop.example/", "version": 1})),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (404, "unknown_room"));
    assert!(app
        .engine
        .room_store()
        .room("gone")
        .await
        .unwrap()
        .is_none());
    let created = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/gone",
        Some(json!({"capacity": 3, "target_url": "https://shop.example/"})),
    )
    .await;
    assert_eq!(created.status, 201);
    assert_eq!(created.body["version"], 1);
}

#[tokio::test]
async fn a_malformed_put_body_is_a_clear_400() {
    let (app, _r) = admin_app(vec![room("r", 4)]).await;
    for body in [
        r#"{"capacity": 5, "version": "three"}"#,
        r#"{"capacity": 5, "version": -1}"#,
        r#"{"capacity": 5, "versoin": 1}"#,
        r#"{"capacity": "5"}"#,
        r#"[{"capacity": 5}]"#,
        r#"{"capacity": 5"#,
    ] {
        let r = Reply::from(
            app.client
                .put(app.url("/api/admin/rooms/r"))
                .bearer_auth(TOKEN)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (r.status, r.error_code()),
            (400, "malformed_json"),
            "{body}"
        );
        assert!(!r.body["error"]["message"].as_str().unwrap().is_empty());
    }
    assert_eq!(version(&app).await, 1, "nothing changed");
    let r = admin(&app, Method::GET, "/api/admin/rooms/nope", None).await;
    assert_eq!((r.status, r.error_code()), (404, "unknown_room"));
}
