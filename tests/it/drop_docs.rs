//! The ten-line Python check of docs/drops.md ("Verifying the shuffle"), taken from the
//! document as written and run with `python3` (standard library only) against a real
//! Anteroom on Redis after a drop opened: it must print the visitor's rank, computed
//! here independently.

use std::process::Command;
use std::time::Duration;

use crate::helpers::fairness::digest;
use crate::helpers::{redis_app, room, wait_until};
use anteroom::room::RoomConfig;

/// The Python block under "## Verifying the shuffle".
fn the_docs_check() -> String {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/drops.md")).unwrap();
    let section = &doc[doc.find("## Verifying the shuffle").expect("the section")..];
    let start = section.find("```python\n").expect("a Python block") + "```python\n".len();
    let len = section[start..].find("```").unwrap();
    section[start..start + len].to_string()
}

// Multi-threaded: the server's store runs on this runtime while python3 waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_check_in_the_docs_prints_the_visitors_rank() {
    let code = the_docs_check();
    assert!(code.lines().count() <= 10, "ten lines at most:\n{code}");
    let now = anteroom::clock::wall_ms();
    let (app, _r) = redis_app(vec![RoomConfig {
        prequeue_opens_at: Some(now - 60_000),
        opens_at: Some(now + 1_500),
        ..room("sneakers", 1)
    }])
    .await;
    let mut ids = Vec::new();
    for _ in 0..6 {
        let token = app.join("sneakers").await.token();
        ids.push(token.split_once('.').unwrap().0.to_string());
    }
    let seed = wait_until(Duration::from_secs(15), "the shuffle", || async {
        let f = app.get("/api/rooms/sneakers/fairness").await;
        f.body["seed"].as_str().map(str::to_string)
    })
    .await;
    let me = &ids[3];
    let mut draws: Vec<String> = ids.iter().map(|id| digest(&seed, id)).collect();
    draws.sort();
    let rank = draws.iter().position(|d| *d == digest(&seed, me)).unwrap() + 1;

    // The document's code with this server, room and visitor put in its second line.
    let mut lines: Vec<String> = code.lines().map(str::to_string).collect();
    assert!(lines[1].starts_with("base, room, my_id = "), "{}", lines[1]);
    lines[1] = format!(
        "base, room, my_id = \"{}\", \"sneakers\", \"{me}\"",
        app.url("").trim_end_matches('/')
    );
    let code = lines.join("\n");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg("-c")
            .arg(code)
            .output()
            .expect("python3")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.trim(),
        format!("my draw {} rank {rank} of 6", &digest(&seed, me)[..8])
    );
}
