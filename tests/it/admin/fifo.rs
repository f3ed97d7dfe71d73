//! The FIFO audit in a room's detail: admission order against ticket order over the
//! last hour, read from the room's event stream.

use crate::helpers::admin::{admin, admin_app};
use crate::helpers::room;
use reqwest::Method;

#[tokio::test]
async fn a_fifo_rooms_detail_shows_no_discordant_pairs() {
    let (app, _r) = admin_app(vec![room("r", 1)]).await;
    let mut tokens = Vec::new();
    for _ in 0..4 {
        let j = app.join("r").await;
        assert_eq!(j.status, 200, "{:?}", j.body);
        tokens.push(j.body["visitor_token"].as_str().unwrap().to_string());
    }
    // The first walked in; each release lets the next one in from the line.
    for t in &tokens[..3] {
        assert_eq!(app.release("r", t).await.status, 204);
    }

    let r = admin(&app, Method::GET, "/api/admin/rooms/r", None).await;
    assert_eq!(r.status, 200);
    let a = &r.body["fifo_audit"];
    assert_eq!(a["admissions"], 3, "{a}");
    assert_eq!(a["discordant_pairs"], 0, "{a}");
    assert_eq!(a["normalised"], 0.0, "{a}");
    assert_eq!(a["window_secs"], 3600, "{a}");
}
