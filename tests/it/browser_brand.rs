//! Branding, custom templates and the preview in real headless Chromium (issue 33,
//! items 2–4): a branded room's computed colours, logo, title and message; a room's own
//! template kept live over the socket by `data-anteroom` bindings through an admission;
//! the admin's preview of every state. Screenshots land in target/screenshots/brand-*.png
//! (the ones looked at are kept under docs/screenshots/brand/).

use crate::helpers::admin::admin_settings;
use crate::helpers::browser::{screenshot, text, wait_text, Driver, DEADLINE};
use crate::helpers::{free_port, prefix, room, spawn_app, wait_until, RedisServer};
use anteroom::room::brand::{Brand, BrandMessage};
use anteroom::room::RoomConfig;
use fantoccini::{Client, Locator};
use serde_json::Value;

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

/// The computed `property` of the first element matching `css`, as `rgb(r, g, b)`.
async fn computed(c: &Client, css: &str, property: &str) -> String {
    js(
        c,
        &format!(
            "return getComputedStyle(document.querySelector({css:?})).getPropertyValue({property:?});"
        ),
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

fn brand() -> Brand {
    Brand {
        title: Some("Tiny Shoe Shop".into()),
        logo_url: Some("/static/favicon.svg".into()),
        accent_color: Some("#7a1f5c".into()),
        background_color: Some("#fdf6ec".into()),
        text_color: Some("#2b1a10".into()),
        message: Some(BrandMessage::PerLanguage(
            [
                (
                    "en".to_string(),
                    "Launch day: every pair is numbered.".to_string(),
                ),
                ("zh".to_string(), "发布日：每双鞋都有编号。".to_string()),
            ]
            .into_iter()
            .collect(),
        )),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branded_room_shows_its_colours_logo_title_and_message() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(
        &redis,
        &prefix(),
        vec![RoomConfig {
            name: "Spring drop".into(),
            brand: brand(),
            embed_origins: vec!["http://127.0.0.1".into()],
            ..room("shoes", 1)
        }],
    ))
    .await;
    app.join("shoes").await; // holds the only slot: the browser waits, first in line
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/shoes")).await.unwrap();
    wait_text(&c, "#position", "1").await;
    assert_eq!(text(&c, ".brand-title").await, "Tiny Shoe Shop");
    assert_eq!(
        text(&c, "#brand-message").await,
        "Launch day: every pair is numbered."
    );
    // The logo loaded (a broken image has no natural width).
    let logo = js(
        &c,
        "var i = document.querySelector('.brand-logo'); return i.complete && i.naturalWidth > 0;",
    )
    .await;
    assert_eq!(logo, Value::Bool(true), "the logo did not load");
    assert_eq!(
        computed(&c, ".card", "background-color").await,
        "rgb(253, 246, 236)"
    );
    assert_eq!(computed(&c, "h1", "color").await, "rgb(43, 26, 16)");
    assert_eq!(computed(&c, "#position", "color").await, "rgb(122, 31, 92)");
    screenshot(&c, "brand-queue-en").await;
    c.goto(&app.url("/r/shoes?lang=zh")).await.unwrap();
    wait_text(&c, "#brand-message", "发布日：每双鞋都有编号。").await;
    screenshot(&c, "brand-queue-zh").await;
    // The widget carries the brand too.
    c.goto(&app.url("/embed/shoes?parent=http://127.0.0.1"))
        .await
        .unwrap();
    wait_text(&c, ".brand-title", "Tiny Shoe Shop").await;
    assert_eq!(
        computed(&c, ".card", "background-color").await,
        "rgb(253, 246, 236)"
    );
    c.close().await.unwrap();
}

/// A room's own page: its figures bound by `data-anteroom`, the script from the helper.
const TEMPLATE: &str = r#"<!doctype html>
<html lang="{{ language }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ brand.title or room_name }}: the line</title>
<link rel="stylesheet" href="/static/anteroom.css">
{% if brand.stylesheet_url %}<link rel="stylesheet" href="{{ brand.stylesheet_url }}">{% endif %}
<style>
  .shoe-line { max-width: 520px; margin: 48px auto; padding: 32px; border-radius: 24px;
          background: var(--card); border: 3px solid var(--accent); text-align: center; }
  .shoe-line .pos { font-size: 96px; font-weight: 800; color: var(--accent); margin: 0; }
</style>
</head>
<body>
<div class="shoe-line">
  <h1 data-anteroom="title">{{ headline }}</h1>
  <p data-anteroom="message">{{ message }}</p>
  <p class="pos" data-anteroom="position">{{ place }}</p>
  <p><span data-anteroom="in-line">{{ in_line_text }}</span> · <span data-anteroom="eta">{{ wait_time_formatted }}</span></p>
  <p>State: <code data-anteroom="state">{{ state }}</code></p>
  {% if brand.message %}<p class="brand-message">{{ brand.message }}</p>{% endif %}
  <p><small>Updated {{ last_updated }}; this page refreshes every {{ refresh_interval_seconds }} s without scripts.</small></p>
</div>
{{ anteroom_script() }}
</body>
</html>
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_template_stays_live_through_an_admission() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("queue.html"), TEMPLATE).unwrap();
    let port = free_port();
    let mut s = crate::helpers::demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            name: "Spring drop".into(),
            brand: brand(),
            template: Some("queue.html".into()),
            target_url: format!("http://127.0.0.1:{port}/demo/origin?room=shoes"),
            ..room("shoes", 1)
        }],
        "127.0.0.1",
    );
    s.template_dir = Some(dir.path().to_path_buf());
    let app = spawn_app(s).await;
    let holder = app.join("shoes").await.token();
    let ahead = app.join("shoes").await.token();

    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/r/shoes")).await.unwrap();
    // The holder is let in; one visitor waits ahead of the browser.
    wait_text(&c, "[data-anteroom=position]", "2").await;
    assert_eq!(text(&c, "[data-anteroom=state]").await, "queued");
    // The template's own inline style applies (allowed by its hash), with the brand's colours.
    assert_eq!(computed(&c, ".pos", "color").await, "rgb(122, 31, 92)");
    assert_eq!(computed(&c, "h1", "color").await, "rgb(43, 26, 16)");
    screenshot(&c, "brand-custom-template").await;
    app.release("shoes", &ahead).await;
    wait_text(&c, "[data-anteroom=position]", "1").await;
    app.release("shoes", &holder).await;
    wait_until(DEADLINE, "the redirect to the demo origin", || async {
        let url = c.current_url().await.unwrap();
        (url.path() == "/demo/origin").then_some(url)
    })
    .await;
    wait_text(&c, "h1", "You're in.").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_shows_every_state_of_the_branded_page() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(
        &redis,
        &prefix(),
        vec![RoomConfig {
            name: "Spring drop".into(),
            brand: brand(),
            ..room("shoes", 5)
        }],
    ))
    .await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&[], true).await;
    c.goto(&app.url("/admin")).await.unwrap();
    let field = c.find(Locator::Css("#credential")).await.unwrap();
    field.send_keys(crate::helpers::admin::TOKEN).await.unwrap();
    c.find(Locator::Css("form button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#live-status", "Live").await;
    // The room's card links the preview.
    let action = js(
        &c,
        "return document.querySelector('#room-shoes .preview-form').getAttribute('action');",
    )
    .await;
    assert_eq!(action, "/admin/rooms/shoes/preview");
    for state in anteroom::domain::preview::states() {
        c.goto(&app.url(&format!("/admin/rooms/shoes/preview?state={state}")))
            .await
            .unwrap();
        let want = match state {
            "restoring" => "restoring",
            "outage" => "unavailable",
            s => s,
        };
        let shown = js(
            &c,
            "var m = document.querySelector('[data-message]'); return m ? m.getAttribute('data-message') : null;",
        )
        .await;
        assert_eq!(shown, Value::String(want.into()), "{state}");
        // Nothing overwrote the rendered page (the script does nothing in a preview).
        let title = text(&c, "h1").await;
        assert!(!title.is_empty(), "{state}: no headline");
        screenshot(&c, &format!("brand-preview-{state}")).await;
    }
    // A preview joins nobody: the line is still empty.
    let live =
        crate::helpers::admin::admin(&app, reqwest::Method::GET, "/api/admin/rooms/shoes", None)
            .await;
    assert_eq!(
        live.body["live"]["queue_length"], 0,
        "{:?}",
        live.body["live"]
    );
    c.close().await.unwrap();
}
