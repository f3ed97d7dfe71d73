//! Languages an operator adds with `i18n_dir` (issue 33 item 1), in the real binary: read
//! at start, served by `GET /api/languages` and the pages; on SIGHUP a bad file is logged
//! and the languages in force kept, a good change replaces them. And the start-up errors
//! that name what is wrong: an unknown room language, a file that does not parse.

use std::time::Duration;

use crate::helpers::{client, prefix, room, test_settings, wait_until, ServerProcess};
use anteroom::room::RoomConfig;

/// English with its name and one headline changed (the paused room's): a complete
/// language of its own.
fn esperanto(title: &str) -> String {
    include_str!("../../i18n/en.ftl")
        .replace("language-name = English", "language-name = Esperanto")
        .replace(
            "title-paused = The line is paused",
            &format!("title-paused = {title}"),
        )
}

async fn page(server: &ServerProcess, path: &str) -> String {
    client()
        .get(server.url(path))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i18n_dir_adds_a_language_and_sighup_reloads_it_keeping_it_on_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("eo.ftl");
    std::fs::write(&file, esperanto("La vico paŭzas")).unwrap();
    let server = ServerProcess::start_logged(
        &format!(
            "i18n_dir = \"{}\"\n[[rooms]]\nid = \"r\"\ncapacity = 1\npaused = true\ntarget_url = \"https://x.example/\"",
            dir.path().display()
        ),
        &[("ANTEROOM_LOG", "info")],
    );
    let langs: serde_json::Value = client()
        .get(server.url("/api/languages"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let list = langs["languages"].as_array().unwrap();
    assert_eq!(list[0]["code"], "en");
    assert!(list.contains(&serde_json::json!({"code": "eo", "name": "Esperanto", "dir": "ltr"})));
    assert!(list.contains(&serde_json::json!({"code": "ar", "name": "العربية", "dir": "rtl"})));
    let html = page(&server, "/r/r?lang=eo").await;
    assert!(
        html.contains("La vico paŭzas") && html.contains("lang=\"eo\""),
        "{html}"
    );

    // A file that no longer parses: logged, and the page keeps its words.
    std::fs::write(&file, "language-name = Esperanto\n= oops\n").unwrap();
    server.signal("HUP");
    wait_until(
        Duration::from_secs(10),
        "the reload error in the log",
        || async {
            let log = server.log();
            (log.contains("i18n_dir not reloaded") && log.contains("eo.ftl line 2")).then_some(())
        },
    )
    .await;
    assert!(page(&server, "/r/r?lang=eo")
        .await
        .contains("La vico paŭzas"));

    // A good change: served from the next page on.
    std::fs::write(&file, esperanto("La vico nun paŭzas")).unwrap();
    server.signal("HUP");
    wait_until(
        Duration::from_secs(10),
        "the new words on the page",
        || async {
            page(&server, "/r/r?lang=eo")
                .await
                .contains("La vico nun paŭzas")
                .then_some(())
        },
    )
    .await;
}

#[test]
fn an_unknown_room_language_or_a_broken_file_stops_start_up_naming_it() {
    let s = test_settings(
        None,
        &prefix(),
        vec![RoomConfig {
            languages: vec!["en".into(), "xx".into()],
            ..room("r", 1)
        }],
    );
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains("rooms[0].languages") && err.contains("`xx`"),
        "{err}"
    );
    let s = test_settings(
        None,
        &prefix(),
        vec![RoomConfig {
            default_language: Some("klingon".into()),
            ..room("r", 1)
        }],
    );
    let err = s.validate().unwrap_err().to_string();
    assert!(err.contains("rooms[0].default_language"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("xx.ftl"), "language-name = X\n= oops\n").unwrap();
    let mut s = test_settings(None, &prefix(), vec![room("r", 1)]);
    s.i18n_dir = Some(dir.path().to_path_buf());
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains("i18n_dir") && err.contains("xx.ftl line 2"),
        "{err}"
    );
    // A complete-looking file missing messages names the first it lacks.
    std::fs::write(
        dir.path().join("xx.ftl"),
        "language-name = X\nlanguage-direction = ltr\n",
    )
    .unwrap();
    let err = s.validate().unwrap_err().to_string();
    assert!(err.contains("xx.ftl") && err.contains("lacks"), "{err}");
}
