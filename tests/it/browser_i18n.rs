//! Languages in real headless Chromium (issue 33 item 1): an Arabic page right to left
//! with Arabic-Indic digits, also in the figures the script updates live; the language
//! switch listing the room's languages; `Accept-Language` and the room's
//! `default_language`. Screenshots land in target/screenshots/i18n-*.png (the ones
//! looked at are kept under docs/screenshots/i18n/).

use crate::helpers::browser::{assert_accessible, screenshot, text, wait_text, Driver, DEADLINE};
use crate::helpers::{demo_settings, free_port, room, spawn_app, wait_until, RedisServer};
use anteroom::room::RoomConfig;
use fantoccini::{Client, Locator};
use serde_json::Value;

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arabic_page_reads_right_to_left_with_arabic_digits_also_when_the_line_moves() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            name: "تذاكر الحفل".into(),
            ..room("r", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    // One let in, three in line ahead of the browser.
    let first = app.join("r").await.token();
    for _ in 0..3 {
        app.join("r").await;
    }
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&["--accept-lang=en"], true).await;
    c.goto(&app.url("/r/r?lang=ar")).await.unwrap();
    wait_text(&c, "h1", "أنت في الطابور").await;
    assert_eq!(js(&c, "return document.documentElement.dir").await, "rtl");
    assert_eq!(js(&c, "return document.documentElement.lang").await, "ar");
    // The server's figures, then the script's once live, in Arabic-Indic digits, with the
    // plural form Arabic uses for the count.
    wait_text(&c, "#position", "٤").await;
    wait_text(&c, "#ahead", "٣ أشخاص أمامك").await;
    wait_text(&c, "#conn", "مباشر").await;
    // Mirrored: the room's name starts at the right, the language switch at the left.
    let sides = js(
        &c,
        "var b = document.querySelector('.brand').getBoundingClientRect(); \
         var l = document.querySelector('.langs summary').getBoundingClientRect(); \
         return [b.right, l.left, document.documentElement.clientWidth];",
    )
    .await;
    let (brand_right, langs_left, width) = (
        sides[0].as_f64().unwrap(),
        sides[1].as_f64().unwrap(),
        sides[2].as_f64().unwrap(),
    );
    assert!(brand_right > width / 2.0, "{sides}");
    assert!(langs_left < width / 2.0, "{sides}");
    screenshot(&c, "i18n-queue-ar").await;
    assert_accessible(&c, "the Arabic queue page").await;

    // The line moves: the figures the script writes are Arabic too ("two people": its
    // own plural form, no digit).
    app.release("r", &first).await;
    wait_text(&c, "#position", "٣").await;
    wait_text(&c, "#ahead", "شخصان أمامك").await;
    assert_eq!(text(&c, "#in-line").await, "٣ في الطابور");
    c.set_window_size(390, 844).await.unwrap();
    screenshot(&c, "i18n-queue-ar-phone").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_switch_lists_the_rooms_languages_and_changes_the_page() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![RoomConfig {
            name: "Sneakers".into(),
            languages: vec!["en".into(), "de".into(), "ar".into()],
            ..room("r", 1)
        }],
        "127.0.0.1",
    ))
    .await;
    app.join("r").await;
    let driver = Driver::start();
    let (c, _profile) = driver.browser(&["--accept-lang=en"], true).await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "h1", "You're in line").await;
    // The room's other languages, each in its own name; none the room leaves out.
    let links = js(
        &c,
        "return Array.from(document.querySelectorAll('.langs nav a')).map(a => a.textContent + '|' + a.lang);",
    )
    .await;
    assert_eq!(links, serde_json::json!(["Deutsch|de", "العربية|ar"]));
    // The switch is closed until asked for (a short line on a phone), without scripts.
    assert_eq!(
        js(
            &c,
            "return document.querySelector('.langs summary').textContent"
        )
        .await,
        "Language: English"
    );
    c.find(Locator::Css(".langs summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.find(Locator::LinkText("Deutsch"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "h1", "Sie sind in der Warteschlange").await;
    assert_eq!(js(&c, "return document.documentElement.lang").await, "de");
    wait_text(&c, "#conn", "Live").await;
    // The same place: switching language is a reload of the same visitor.
    assert_eq!(text(&c, "#position").await, "1");
    c.find(Locator::Css(".langs summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    screenshot(&c, "i18n-queue-de").await;
    // A language the room does not offer falls back (here: the visitor's English).
    c.goto(&app.url("/r/r?lang=fr")).await.unwrap();
    wait_text(&c, "h1", "You're in line").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_language_chooses_the_page_language_and_the_room_default_fills_in() {
    let redis = RedisServer::start();
    let port = free_port();
    let app = spawn_app(demo_settings(
        &redis,
        port,
        vec![
            room("r", 1),
            RoomConfig {
                default_language: Some("de".into()),
                ..room("d", 1)
            },
        ],
        "127.0.0.1",
    ))
    .await;
    app.join("r").await;
    app.join("d").await;
    let driver = Driver::start();
    // A French-Canadian browser gets French (fr-CA finds fr).
    let (c, _profile) = driver
        .browser(&["--lang=fr-CA", "--accept-lang=fr-CA,fr;q=0.9"], true)
        .await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "h1", "Vous êtes dans la file").await;
    assert_eq!(js(&c, "return document.documentElement.lang").await, "fr");
    // Its header beats the room's default…
    c.goto(&app.url("/r/d")).await.unwrap();
    wait_text(&c, "h1", "Vous êtes dans la file").await;
    c.close().await.unwrap();
    // …and a browser asking only for a language the instance does not serve gets the
    // room's default.
    let (c, _profile) = driver.browser(&["--accept-lang=fi"], true).await;
    c.goto(&app.url("/r/d")).await.unwrap();
    wait_text(&c, "h1", "Sie sind in der Warteschlange").await;
    c.goto(&app.url("/r/r")).await.unwrap();
    wait_text(&c, "h1", "You're in line").await;
    wait_until(DEADLINE, "the English page to go live", || async {
        (text(&c, "#conn").await == "Live").then_some(())
    })
    .await;
    c.close().await.unwrap();
}
