//! A stock change needs a number: an empty box in the dashboard must never become
//! "sold out".

use crate::helpers::admin::{admin_app, TOKEN};
use crate::helpers::{room, Reply};
use anteroom::room::RoomConfig;

#[tokio::test]
async fn a_stock_change_without_a_valid_number_is_refused_and_changes_nothing() {
    let (app, _r) = admin_app(vec![RoomConfig {
        stock: Some(7),
        ..room("r", 1)
    }])
    .await;
    for (body, code) in [
        ("{}", "invalid_field"),
        (r#"{"set": null}"#, "invalid_field"),
        (r#"{"add": 0}"#, "invalid_field"),
        (r#"{"unlimited": false}"#, "invalid_field"),
        (r#"{"set": ""}"#, "malformed_json"),
        (r#"{"set": "5"}"#, "malformed_json"),
        (r#"{"set": -1}"#, "malformed_json"),
        (r#"{"set": 1.5}"#, "malformed_json"),
        ("", "malformed_json"),
    ] {
        let r = Reply::from(
            app.client
                .post(app.url("/api/admin/rooms/r/stock"))
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
            (400, code),
            "{body}: {}",
            r.body
        );
        if code == "invalid_field" {
            assert_eq!(r.body["error"]["field"], "stock", "{body}");
        }
    }
    assert_eq!(
        app.engine
            .room_store()
            .room("r")
            .await
            .unwrap()
            .unwrap()
            .stock,
        Some(7),
        "never sold out by a bad request"
    );
}
