//! Queueing modes switched live through the admin API: what joins answer, what the audit
//! log says, and what an open socket is told.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::admin::{admin, admin_app};
use crate::helpers::room;
use crate::helpers::ws::{connect, wait_for, Ws};

const DEADLINE: Duration = Duration::from_secs(10);

/// Waits for a `status` whose state is `state`, skipping the others.
async fn status_in(ws: &mut Ws, state: &str) -> Value {
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        assert!(!left.is_zero(), "no status in state {state} in time");
        let m = wait_for(ws, "status", left).await;
        if m["state"] == state {
            return m;
        }
    }
}

#[tokio::test]
async fn modes_switched_live_change_joins_sockets_and_the_audit_log() {
    let (app, _redis) = admin_app(vec![room("r", 1)]).await;
    assert_eq!(app.join("r").await.state(), "admitted");
    let waiting = app.join("r").await;
    assert_eq!(waiting.state(), "queued");
    let mut ws = connect(&app, "r", &waiting.token(), None).await.unwrap();
    status_in(&mut ws, "queued").await;

    // reject: newcomers are answered 200 `rejected`; the socket keeps its place.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"mode": "reject"})),
    )
    .await;
    assert_eq!(
        (r.status, &r.body["config"]["mode"]),
        (200, &json!("reject"))
    );
    let newcomer = app.join("r").await;
    assert_eq!((newcomer.status, newcomer.state()), (200, "rejected"));
    assert_eq!(newcomer.body["position"], 0);
    wait_for(&mut ws, "rejected", DEADLINE).await;
    let told = status_in(&mut ws, "rejected").await;
    assert_eq!(told["position"], 1, "the place is kept");
    let rooms = admin(&app, Method::GET, "/api/admin/rooms", None).await;
    let shown = &rooms.body["rooms"][0];
    assert_eq!(
        (&shown["state"], &shown["mode"], &shown["queue_all"]),
        (&json!("rejected"), &json!("reject"), &json!(false))
    );
    let page = app.page_as("/r/r", &newcomer.token()).await;
    assert!(page.contains("This sale is not admitting anyone"), "{page}");

    // passthrough: the line goes in, and so does every newcomer, capacity ignored.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"mode": "passthrough"})),
    )
    .await;
    assert_eq!(r.status, 200);
    wait_for(&mut ws, "admitted", DEADLINE).await;
    assert_eq!(app.join("r").await.state(), "admitted");
    assert_eq!(
        app.join_as("r", &newcomer.token()).await.state(),
        "admitted"
    );

    // queue_all: newcomers queue whatever the mode.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/r",
        Some(json!({"queue_all": true})),
    )
    .await;
    assert_eq!(
        (r.status, &r.body["config"]["queue_all"]),
        (200, &json!(true))
    );
    let queued = app.join("r").await;
    assert_eq!(
        (queued.state(), &queued.body["position"]),
        ("paused", &json!(1))
    );
    let mut held = connect(&app, "r", &queued.token(), None).await.unwrap();
    assert_eq!(status_in(&mut held, "paused").await["position"], 1);
    // Switched off, the room is in passthrough again: the held visitor goes in.
    let body = Some(json!({"queue_all": false}));
    let r = admin(&app, Method::PUT, "/api/admin/rooms/r", body).await;
    assert_eq!(r.status, 200);
    wait_for(&mut held, "admitted", DEADLINE).await;

    // Each change is in the audit log, old and new value.
    let audit = admin(&app, Method::GET, "/api/admin/audit?limit=50", None).await;
    let changes: Vec<(String, Value, Value)> = audit.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["room"] == "r")
        .map(|e| {
            (
                e["action"].as_str().unwrap().into(),
                e["old"].clone(),
                e["new"].clone(),
            )
        })
        .collect();
    for want in [
        ("set mode".to_string(), json!("fifo"), json!("reject")),
        (
            "set mode".to_string(),
            json!("reject"),
            json!("passthrough"),
        ),
        ("set queue_all".to_string(), json!(false), json!(true)),
        ("set queue_all".to_string(), json!(true), json!(false)),
    ] {
        assert!(changes.contains(&want), "{want:?} missing from {changes:?}");
    }
}

#[tokio::test]
async fn an_unknown_mode_is_refused_naming_the_field() {
    let (app, _redis) = admin_app(vec![room("r", 1)]).await;
    for bad in [json!("lottery"), json!("FIFO"), json!(3)] {
        let r = admin(
            &app,
            Method::PUT,
            "/api/admin/rooms/r",
            Some(json!({"mode": bad})),
        )
        .await;
        assert_eq!((r.status, r.error_code()), (400, "invalid_field"), "{bad}");
        assert_eq!(r.body["error"]["field"], "mode");
    }
    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.body["config"]["mode"], "fifo", "nothing changed");
}

#[test]
fn an_unknown_mode_in_the_config_file_stops_start_up_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anteroom.toml");
    std::fs::write(
        &path,
        "[[rooms]]\nid = \"r\"\ntarget_url = \"https://x.example/\"\nmode = \"lottery\"\n",
    )
    .unwrap();
    let err = anteroom::config::Settings::load(Some(&path))
        .unwrap_err()
        .to_string();
    assert!(err.contains("mode"), "{err}");
}
