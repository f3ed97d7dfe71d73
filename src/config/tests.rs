//! Tests of the settings: defaults, validation errors naming their field, room defaults merged.

use super::*;
use crate::room::{valid_room_id, DEFAULT_MAX_PLACES_PER_IP};

#[test]
fn rejects_zero_capacity_naming_the_field() {
    let mut s = Settings::default();
    s.rooms.push(RoomConfig {
        id: "r".into(),
        capacity: 0,
        target_url: "http://x/".into(),
        ..Default::default()
    });
    let err = s.validate().unwrap_err().to_string();
    assert!(err.contains("rooms[0].capacity"), "{err}");
}

#[test]
fn renew_on_activity_needs_a_cap_of_at_least_the_ttl() {
    let mut s = Settings::default();
    s.rooms.push(RoomConfig {
        id: "r".into(),
        target_url: "http://x/".into(),
        renew_on_activity: true,
        ..Default::default()
    });
    let err = s.validate().unwrap_err().to_string();
    assert!(err.contains("`rooms[0].max_session_secs`"), "{err}");
    s.rooms[0].max_session_secs = s.rooms[0].session_ttl_secs;
    s.validate().unwrap();
    s.rooms[0].max_session_secs = 604_801;
    assert!(s.validate().is_err());
}

#[test]
fn rejects_bad_room_ids() {
    assert!(!valid_room_id("a b"));
    assert!(!valid_room_id(""));
    assert!(!valid_room_id("{x}"));
    assert!(valid_room_id("sale-2026_A"));
}

#[test]
fn secret_does_not_print() {
    let s = Secret::new("hunter2");
    assert!(!format!("{s:?}").contains("hunter2"));
}

/// Issue 28 finding 9: a room's `entry_secret` and the credentials in its
/// `webhook_url` were serialised as they are, into the admin API, the audit log and
/// its INFO line.
#[test]
fn a_room_shows_its_secrets_as_set() {
    let cfg = RoomConfig {
        entry_secret: Some(Secret::new("site-entry-secret-0123456789abcdef")),
        webhook_url: Some("https://u:hunter2@hooks.example/in?token=t0k".into()),
        ..RoomConfig::default()
    };
    let shown = serde_json::to_value(&cfg).unwrap();
    assert_eq!(shown["entry_secret"], "[set]");
    assert_eq!(
        shown["webhook_url"],
        "https://[set]@hooks.example/in?token=[set]"
    );
    let text = shown.to_string();
    for secret in ["site-entry-secret", "hunter2", "t0k"] {
        assert!(!text.contains(secret), "{text}");
    }
}

/// Issue 28 finding 11: with the shipped defaults one address held 6,398 places in
/// 60 s. A room declared without the key, or created by the admin, is capped.
#[test]
fn a_room_caps_places_per_address_by_default() {
    assert_eq!(
        RoomConfig::default().max_places_per_ip,
        DEFAULT_MAX_PLACES_PER_IP
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(
        &path,
        "[[rooms]]\nid = \"sale\"\ntarget_url = \"https://shop.example/\"\n",
    )
    .unwrap();
    let s = Settings::load(Some(&path)).unwrap();
    assert_eq!(s.rooms[0].max_places_per_ip, 300);
    assert_eq!(s.room_defaults.max_places_per_ip, 300);
}

#[test]
fn loads_toml_file_and_env_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(
        &path,
        r#"
listen = "127.0.0.1:9999"
key_prefix = "x"
[[rooms]]
id = "sale"
capacity = 7
target_url = "https://shop.example/"
stock = 5
"#,
    )
    .unwrap();
    let s = Settings::load(Some(&path)).unwrap();
    assert_eq!(s.rooms.len(), 1);
    assert_eq!(s.rooms[0].capacity, 7);
    assert_eq!(s.rooms[0].stock, Some(5));
    assert_eq!(s.key_prefix, "x");
}

#[test]
fn the_built_in_defaults_parse_and_validate() {
    let s = Settings::default();
    s.validate().unwrap();
    assert_eq!(s.listen, "127.0.0.1:8080");
    assert_eq!(s.room_defaults.capacity, 100);
    assert!(s.rooms.is_empty());
    // Every top-level field is a key that ANTEROOM_* variables may set.
    let keys = env_keys();
    for k in [
        "listen",
        "redis_url",
        "secret_key",
        "rooms",
        "room_defaults",
        "admin",
    ] {
        assert!(keys.iter().any(|x| x == k), "{k} in {keys:?}");
    }
}

#[test]
fn rooms_start_from_room_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(
        &path,
        "[room_defaults]\ncapacity = 9\n[[rooms]]\nid = \"a\"\ntarget_url = \"https://x.example/\"\n[[rooms]]\nid = \"b\"\ncapacity = 3\ntarget_url = \"https://x.example/\"\n",
    )
    .unwrap();
    let s = Settings::load(Some(&path)).unwrap();
    assert_eq!(s.rooms[0].capacity, 9);
    assert_eq!(s.rooms[0].session_ttl_secs, 1800);
    assert_eq!(s.rooms[1].capacity, 3);
}

#[test]
fn unknown_keys_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(&path, "capacityy = 3\n").unwrap();
    let err = Settings::load(Some(&path)).unwrap_err().to_string();
    assert!(err.contains("capacityy"), "{err}");
}
