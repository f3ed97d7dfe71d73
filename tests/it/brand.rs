//! Branding, custom templates and the preview (issue 33, items 2–4), over HTTP: bad
//! values stop start-up or are refused by the admin API naming the field; the brand is
//! stored with the room (a second instance on the same Redis serves it); a custom
//! template is rendered with its variables, escaped; the preview renders every state
//! for a signed-in admin and names an unknown one. The browser side is
//! `browser_brand.rs`.

use std::path::Path;

use crate::helpers::admin::{admin, admin_settings, TOKEN};
use crate::helpers::browser::DEADLINE;
use crate::helpers::{prefix, room, spawn_app, wait_until, RedisServer, TestApp};
use anteroom::config::Settings;
use anteroom::room::brand::Brand;
use anteroom::room::RoomConfig;
use reqwest::Method;
use serde_json::json;

/// `Settings::load` of a file holding `toml`, as its error text.
fn load_error(dir: &Path, toml: &str) -> String {
    let path = dir.join("anteroom.toml");
    std::fs::write(&path, toml).unwrap();
    Settings::load(Some(&path)).unwrap_err().to_string()
}

const ROOM: &str = "[[rooms]]\nid = \"shop\"\ntarget_url = \"https://shop.example/\"\n";

#[test]
fn a_bad_colour_stops_start_up_naming_the_field() {
    let d = tempfile::tempdir().unwrap();
    let e = load_error(
        d.path(),
        &format!("{ROOM}[rooms.brand]\naccent_color = \"blue\"\n"),
    );
    assert!(e.contains("`rooms[0].brand.accent_color`"), "{e}");
    assert!(e.contains("hex colour"), "{e}");
}

#[test]
fn low_contrast_stops_start_up_naming_the_field() {
    let d = tempfile::tempdir().unwrap();
    let e = load_error(
        d.path(),
        &format!("{ROOM}[rooms.brand]\nbackground_color = \"#ffffff\"\ntext_color = \"#999999\"\n"),
    );
    assert!(e.contains("`rooms[0].brand.text_color`"), "{e}");
    assert!(e.contains("4.5:1"), "{e}");
    let e = load_error(
        d.path(),
        &format!("{ROOM}[rooms.brand]\naccent_color = \"#ffdd55\"\n"),
    );
    assert!(e.contains("`rooms[0].brand.accent_color`"), "{e}");
}

#[test]
fn an_unsafe_logo_url_stops_start_up_naming_the_field() {
    let d = tempfile::tempdir().unwrap();
    for bad in [
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "http://shop.example/logo.png",
        "//evil.example/logo.png",
        "/static/../admin",
    ] {
        let e = load_error(
            d.path(),
            &format!("{ROOM}[rooms.brand]\nlogo_url = \"{bad}\"\n"),
        );
        assert!(e.contains("`rooms[0].brand.logo_url`"), "{bad}: {e}");
    }
}

#[test]
fn a_template_that_does_not_parse_stops_start_up_naming_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let tpl = d.path().join("tpl");
    std::fs::create_dir(&tpl).unwrap();
    std::fs::write(
        tpl.join("queue.html"),
        "<!doctype html>\n<p>{{ place }}</p>\n<p>{% if in_line > %}</p>\n",
    )
    .unwrap();
    let e = load_error(
        d.path(),
        &format!(
            "template_dir = \"{}\"\n{ROOM}template = \"queue.html\"\n",
            tpl.display()
        ),
    );
    assert!(e.contains("`rooms[0].template`"), "{e}");
    assert!(e.contains("queue.html:3:"), "{e}");
    // Without template_dir no template is read at all.
    let e = load_error(d.path(), &format!("{ROOM}template = \"queue.html\"\n"));
    assert!(
        e.contains("`rooms[0].template`") && e.contains("template_dir"),
        "{e}"
    );
}

fn template_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("ok.html"),
        "<!doctype html><html lang=\"{{ language }}\"><title>{{ room_name }}</title>\
         <h1 data-anteroom=\"title\">{{ headline }}</h1>\
         <p>Place <b data-anteroom=\"position\">{{ place }}</b> of {{ in_line }}; \
         wait {{ wait_time_formatted }} ({{ wait_time_minutes }} min, known: {{ wait_time_known }}); \
         full: {{ queue_is_full }}; every {{ refresh_interval_seconds }} s; \
         state <span data-anteroom=\"state\">{{ state }}</span>; {{ brand.title }}</p>\
         {{ anteroom_script() }}</html>",
    )
    .unwrap();
    std::fs::write(d.path().join("bad.html"), "line one\n{% for %}\n").unwrap();
    d
}

/// PUTs `body` to room `shop`'s admin route and checks it is refused as `400 invalid_field`
/// naming `field`; the error's message.
async fn refused_naming(app: &TestApp, body: &serde_json::Value, field: &str) -> String {
    let r = admin(
        app,
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(body.clone()),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (400, "invalid_field"), "{body}");
    assert_eq!(r.body["error"]["field"], field, "{body}");
    r.body["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_admin_api_refuses_bad_brands_and_templates_naming_the_field() {
    let redis = RedisServer::start();
    let dir = template_dir();
    let mut s = admin_settings(&redis, &prefix(), vec![room("shop", 1)]);
    s.template_dir = Some(dir.path().to_path_buf());
    let app = spawn_app(s).await;
    for (body, field, part) in [
        (
            json!({"brand": {"text_color": "#cccccc"}}),
            "brand.text_color",
            "4.5:1",
        ),
        (
            json!({"brand": {"accent_color": "#fff000"}}),
            "brand.accent_color",
            "4.5:1",
        ),
        (
            json!({"brand": {"background_color": "red"}}),
            "brand.background_color",
            "hex",
        ),
        (
            json!({"brand": {"logo_url": "javascript:alert(1)"}}),
            "brand.logo_url",
            "https://",
        ),
        (json!({"template": "bad.html"}), "template", "bad.html:2:"),
        (json!({"template": "../ok.html"}), "template", ".."),
        (
            json!({"template": "missing.html"}),
            "template",
            "missing.html",
        ),
    ] {
        let msg = refused_naming(&app, &body, field).await;
        assert!(msg.contains(part), "{body}: {msg}");
    }
    let r = admin(&app, Method::GET, "/api/admin/rooms/shop", None).await;
    assert!(
        r.body["config"].get("brand").is_none(),
        "nothing was stored"
    );
    assert!(
        r.body["config"].get("template").is_none(),
        "nothing was stored"
    );
}

#[tokio::test]
async fn a_brand_set_on_one_instance_is_served_by_another() {
    let redis = RedisServer::start();
    let p = prefix();
    let one = spawn_app(admin_settings(&redis, &p, vec![room("shop", 1)])).await;
    let two = spawn_app(admin_settings(&redis, &p, vec![room("shop", 1)])).await;
    let brand = json!({
        "title": "Tiny Shoe Shop",
        "accent_color": "#7a1f5c",
        "background_color": "#fdf6ec",
        "text_color": "#2b1a10",
        "message": {"en": "Launch day: thank you for waiting.", "zh": "感谢您的耐心等待。"}
    });
    let r = admin(
        &one,
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(json!({ "brand": brand })),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = admin(&two, Method::GET, "/api/admin/rooms/shop", None).await;
    assert_eq!(r.body["config"]["brand"], brand);
    // The other instance's page (a second visitor's: the first holds the only slot) links
    // the stylesheet and shows the message in Chinese, once its room cache (1 s) has it.
    two.join("shop").await;
    let page = wait_until(DEADLINE, "the other instance's branded page", || async {
        let page = two
            .client
            .get(two.url("/r/shop?lang=zh"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        page.contains("Tiny Shoe Shop").then_some(page)
    })
    .await;
    assert!(page.contains("感谢您的耐心等待。"), "{page}");
    let css_url = page
        .split("href=\"")
        .find_map(|s| s.split('"').next().filter(|u| u.contains("brand.css")))
        .expect("the brand stylesheet is linked")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&");
    let css = two.client.get(two.url(&css_url)).send().await.unwrap();
    assert_eq!(css.headers()["content-type"], "text/css; charset=utf-8");
    let css = css.text().await.unwrap();
    assert!(
        css.contains("--accent:#7a1f5c") && css.contains("--card:#fdf6ec"),
        "{css}"
    );
    // `{}` removes it.
    let r = admin(
        &two,
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(json!({"brand": {}})),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = admin(&one, Method::GET, "/api/admin/rooms/shop", None).await;
    assert!(r.body["config"].get("brand").is_none(), "{:?}", r.body);
}

#[tokio::test]
async fn a_custom_template_is_rendered_with_its_variables_escaped() {
    let redis = RedisServer::start();
    let dir = template_dir();
    let mut s = admin_settings(
        &redis,
        &prefix(),
        vec![RoomConfig {
            name: "<b>Shoes</b>".into(),
            template: Some("ok.html".into()),
            brand: Brand {
                title: Some("Tiny & Co".into()),
                ..Brand::default()
            },
            ..room("shop", 1)
        }],
    );
    s.template_dir = Some(dir.path().to_path_buf());
    let app = spawn_app(s).await;
    app.join("shop").await; // holds the only slot
    let res = app.client.get(app.url("/r/shop")).send().await.unwrap();
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let page = res.text().await.unwrap();
    assert!(
        page.contains("<title>&lt;b&gt;Shoes&lt;&#x2f;b&gt;</title>"),
        "{page}"
    );
    assert!(page.contains("Tiny &amp; Co"), "{page}");
    assert!(
        page.contains("<b data-anteroom=\"position\">1</b> of 1"),
        "{page}"
    );
    // minijinja writes booleans as Python does.
    assert!(page.contains("known: False); full: True;"), "{page}");
    assert!(page.contains("every 20 s"), "{page}");
    assert!(
        page.contains("<span data-anteroom=\"state\">queued</span>"),
        "{page}"
    );
    // The script helper: the configuration element and queue.js, unescaped.
    assert!(page.contains("<div id=\"anteroom\" hidden data-message=\"queued\" data-config=\"{&quot;room&quot;:&quot;shop&quot;"), "{page}");
    assert!(
        page.contains("<script src=\"/static/queue.js\" defer></script>"),
        "{page}"
    );
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
    // The preview renders the room's template too, in any state.
    let preview = app
        .client
        .get(app.url("/admin/rooms/shop/preview?state=sold_out"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        preview.contains("<span data-anteroom=\"state\">sold_out</span>"),
        "{preview}"
    );
    // Back to the built-in page.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(json!({"template": ""})),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let page = app
        .client
        .get(app.url("/r/shop"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("id=\"position\""), "{page}");
}

#[tokio::test]
async fn the_preview_renders_every_state_and_names_an_unknown_one() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(&redis, &prefix(), vec![room("shop", 5)])).await;
    let get = |path: String| {
        let req = app.client.get(app.url(&path)).bearer_auth(TOKEN);
        async move { req.send().await.unwrap() }
    };
    for state in anteroom::domain::preview::states() {
        let res = get(format!("/admin/rooms/shop/preview?state={state}")).await;
        let status = res.status().as_u16();
        let page = res.text().await.unwrap();
        let code = match state {
            "restoring" => "data-message=\"restoring\"",
            "outage" => "data-message=\"unavailable\"",
            s => &format!("data-message=\"{s}\""),
        };
        assert!(page.contains(code), "{state} ({status}): {page}");
        // The page's script is told it is a preview (askama writes `"` as `&#34;`).
        let preview = page.contains("preview&#34;:true") || page.contains("preview&quot;:true");
        assert!(
            preview || matches!(state, "restoring" | "outage"),
            "{state}: {page}"
        );
        if matches!(state, "restoring" | "outage") {
            // It tries again to the preview, never to the room's page (a join).
            assert!(
                page.contains(&format!("preview?state={state}")),
                "{state}: {page}"
            );
        }
    }
    // In the language asked for.
    let page = get("/admin/rooms/shop/preview?state=paused&lang=zh".into())
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("<html lang=\"zh"), "{page}");
    let res = get("/admin/rooms/shop/preview?state=on_fire".into()).await;
    assert_eq!(res.status(), 400);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["error"]["field"], "state");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`on_fire`"));
    // Nobody signed in: to the sign-in page.
    let res = app
        .client
        .get(app.url("/admin/rooms/shop/preview?state=queued"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], "/admin");
    // The preview joined nobody.
    let r = admin(&app, Method::GET, "/api/admin/rooms/shop", None).await;
    assert_eq!(r.body["live"]["queue_length"], 0, "{:?}", r.body["live"]);
}

#[tokio::test]
async fn a_viewer_may_preview_and_may_not_change_the_brand() {
    use crate::helpers::admin::{user, user_token};
    let redis = RedisServer::start();
    let mut s = admin_settings(&redis, &prefix(), vec![room("shop", 5)]);
    s.admin.users = vec![user("vic", anteroom::config::Role::Viewer)];
    let app = spawn_app(s).await;
    let res = app
        .client
        .get(app.url("/admin/rooms/shop/preview?state=paused"))
        .bearer_auth(user_token("vic"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("data-message=\"paused\""));
    let r = crate::helpers::admin::as_user(
        &app,
        "vic",
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(json!({"brand": {"title": "Mine"}})),
    )
    .await;
    assert_eq!((r.status, r.error_code()), (403, "forbidden_role"));
}

#[tokio::test]
async fn an_https_logo_origin_is_the_only_source_added_to_the_page_csp() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(
        &redis,
        &prefix(),
        vec![RoomConfig {
            brand: Brand {
                logo_url: Some("https://cdn.shop.example/img/logo.svg?v=2".into()),
                ..Brand::default()
            },
            ..room("shop", 1)
        }],
    ))
    .await;
    app.join("shop").await; // holds the only slot: the page is the queue page
    let res = app.client.get(app.url("/r/shop")).send().await.unwrap();
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("img-src https://cdn.shop.example 'self' data:;"),
        "{csp}"
    );
    assert!(
        csp.contains("style-src 'self';") && csp.contains("script-src 'self';"),
        "{csp}"
    );
    let page = res.text().await.unwrap();
    assert!(page.contains("class=\"brand-logo\""), "{page}");
    // No colours set: no stylesheet of the brand's.
    assert!(!page.contains("brand.css"), "{page}");
}

#[tokio::test]
async fn a_room_whose_template_file_went_missing_can_still_be_paused() {
    let redis = RedisServer::start();
    let dir = template_dir();
    let mut s = admin_settings(
        &redis,
        &prefix(),
        vec![RoomConfig {
            template: Some("ok.html".into()),
            ..room("shop", 1)
        }],
    );
    s.template_dir = Some(dir.path().to_path_buf());
    let app = spawn_app(s).await;
    std::fs::remove_file(dir.path().join("ok.html")).unwrap();
    // A change that leaves the template alone does not read it.
    let r = admin(&app, Method::POST, "/api/admin/rooms/shop/pause", None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(json!({"capacity": 3})),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // The page falls back to the built-in one (logged).
    app.join("shop").await;
    let page = app
        .client
        .get(app.url("/r/shop"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("id=\"position\""), "{page}");
    // Naming it again is refused: the file is gone.
    let r = admin(
        &app,
        Method::PUT,
        "/api/admin/rooms/shop",
        Some(json!({"template": "ok.html"})),
    )
    .await;
    assert_eq!(r.body["error"]["field"], "template", "{:?}", r.body);
}

/// A room's `languages` and `default_language` are changed through the admin API like any
/// other setting (so a configuration read from the API can be sent back), checked against
/// the languages the instance serves, naming the field.
#[tokio::test]
async fn the_admin_api_changes_a_rooms_languages_and_refuses_unknown_ones() {
    let redis = RedisServer::start();
    let app = spawn_app(admin_settings(&redis, &prefix(), vec![room("shop", 1)])).await;
    for (body, field) in [
        (json!({"languages": ["en", "xx"]}), "languages"),
        (json!({"default_language": "xx"}), "default_language"),
        (
            json!({"languages": ["en", "de"], "default_language": "fr"}),
            "default_language",
        ),
    ] {
        refused_naming(&app, &body, field).await;
    }
    let body = json!({"languages": ["en", "de"], "default_language": "de"});
    let r = admin(&app, Method::PUT, "/api/admin/rooms/shop", Some(body)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = admin(&app, Method::GET, "/api/admin/rooms/shop", None).await;
    assert_eq!(r.body["config"]["languages"], json!(["en", "de"]));
    assert_eq!(r.body["config"]["default_language"], "de");
    // The page follows: German by default (the only slot held, so the page is the queue's).
    app.join("shop").await;
    let res = app.client.get(app.url("/r/shop")).send().await.unwrap();
    let html = res.text().await.unwrap();
    assert!(html.contains(r#"lang="de""#), "{html}");
    // "" goes back to negotiating from the browser alone.
    let body = json!({"default_language": ""});
    let r = admin(&app, Method::PUT, "/api/admin/rooms/shop", Some(body)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = admin(&app, Method::GET, "/api/admin/rooms/shop", None).await;
    assert!(r.body["config"]["default_language"].is_null(), "{}", r.body);
}
