//! Adaptive outflow and no-shows (docs/outflow.md): the `[rooms.outflow]` table read from a
//! file, the health endpoint, and the controller on real stores.

use anteroom::config::{OutflowMode, Settings};

/// Loads a config file holding `body` after one room's keys.
fn load(body: &str) -> Result<Settings, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anteroom.toml");
    std::fs::write(
        &path,
        format!("[[rooms]]\nid = \"r\"\ntarget_url = \"https://x.example/\"\n{body}"),
    )
    .unwrap();
    Settings::load(Some(&path)).map_err(|e| e.to_string())
}

#[test]
fn a_room_sets_part_of_its_outflow_table_and_takes_the_rest_from_the_defaults() {
    let s = load("[rooms.outflow]\nmode = \"adaptive\"\nmax_capacity = 300\n").unwrap();
    let o = &s.rooms[0].outflow;
    assert_eq!(o.mode, OutflowMode::Adaptive);
    assert_eq!(o.max_capacity, 300);
    let d = &s.room_defaults.outflow;
    assert_eq!(
        (o.min_capacity, o.target_p95_ms, o.interval_secs),
        (d.min_capacity, d.target_p95_ms, d.interval_secs)
    );
    assert_eq!(
        s.rooms[0].claim_timeout_secs, 0,
        "no-show reclaim is off by default"
    );
}

#[test]
fn bad_outflow_settings_in_a_file_stop_start_up_naming_the_field() {
    let cases = [
        ("mode = \"turbo\"", "mode"),
        (
            "min_capacity = 50\nmax_capacity = 10",
            "rooms[0].outflow.min_capacity",
        ),
        ("target_p95_ms = 0", "rooms[0].outflow.target_p95_ms"),
        ("max_error_rate = 2.0", "rooms[0].outflow.max_error_rate"),
        (
            "health_secret = \"short\"",
            "rooms[0].outflow.health_secret",
        ),
        ("interval_secs = 0", "rooms[0].outflow.interval_secs"),
        ("target_p95 = 100", "target_p95"),
    ];
    for (keys, field) in cases {
        let err = load(&format!("[rooms.outflow]\n{keys}\n")).unwrap_err();
        assert!(err.contains(field), "{keys}: {err}");
    }
}

#[test]
fn a_claim_timeout_not_below_the_session_ttl_is_refused() {
    let err = load("session_ttl_secs = 60\nclaim_timeout_secs = 60\n").unwrap_err();
    assert!(err.contains("rooms[0].claim_timeout_secs"), "{err}");
    load("session_ttl_secs = 60\nclaim_timeout_secs = 30\n").unwrap();
}
