use super::*;

fn b(s: &str) -> Value {
    Value::BulkString(s.as_bytes().to_vec())
}

#[test]
fn the_library_registers_every_room_function_with_the_rust_constants() {
    let lib = RoomLibrary::get();
    assert!(lib.name.starts_with("anteroom_") && lib.name.len() == "anteroom_".len() + 12);
    assert!(lib
        .source
        .starts_with(&format!("#!lua name={}\n", lib.name)));
    for f in ROOM_FNS {
        let name = lib.function(f);
        assert!(
            lib.source.contains(&format!(
                "redis.register_function('{name}', function(KEYS, ARGV)"
            )),
            "{name}"
        );
    }
    assert!(lib.source.contains(&format!(
        "local PROMOTE_LIMIT = {}\n",
        super::super::PROMOTE_LIMIT
    )));
    assert!(lib
        .source
        .contains("local WAIT_BOUNDS = {1000, 2000, 5000,"));
    assert!(lib.source.contains("local MINUTE_TTL_MS = 1860000\n"));
    // No number the Rust side owns is written again in the Lua files.
    for f in ROOM_FNS
        .iter()
        .map(|f| f.body)
        .chain([include_str!("../lua/common.lua")])
    {
        assert!(!f.contains("1860000") && !f.contains(", 1000)"), "{f}");
    }
}

/// A reply list built by field name, as the Lua side builds it (`SNAP.<field>`): every
/// name of the list exactly once.
fn by_name(names: &[&str], fields: Vec<(&str, Value)>) -> Value {
    assert_eq!(fields.len(), names.len(), "one value per field");
    let mut out = vec![Value::Nil; names.len()];
    for (name, value) in fields {
        let i = names.iter().position(|n| *n == name).expect(name);
        out[i] = value;
    }
    Value::Array(out)
}

#[test]
fn the_library_sets_the_reply_fields_rust_reads_by_name() {
    let lib = RoomLibrary::get();
    assert!(lib.source.contains("out[1] = state\n  out[2] = pos\n"));
    assert!(lib.source.contains("out[18] = joined\n"));
    assert!(lib.source.contains("out[14] = cfg.phase or 'open'\n"));
    assert!(lib
        .source
        .contains(&format!("local out = {{{}}}\n", ["false"; 21].join(", "))));
    // Every place was written in: a misspelt field would be left as it was.
    for token in [
        "[SNAP.",
        "[VIEW.",
        "[SHARED.",
        "[BATCH.",
        "= SNAP_NEW",
        "= VIEW_NEW",
        "= SHARED_NEW",
        "= BATCH_NEW",
    ] {
        assert!(!lib.source.contains(token), "{token} left in the library");
    }
    // Every field the Lua replies set is one Rust knows, and every one is set.
    let common = include_str!("../lua/common.lua");
    for (list, names) in [("SNAP", SNAPSHOT_FIELDS), ("VIEW", ROOM_VIEW_FIELDS)] {
        let set: Vec<&str> = common
            .match_indices(&format!("out[{list}."))
            .map(|(i, m)| {
                let rest = &common[i + m.len()..];
                &rest[..rest.find(']').unwrap()]
            })
            .collect();
        let mut want = names.to_vec();
        let mut got = set.clone();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "{list}");
    }
}

#[test]
fn a_snapshot_reply_is_decoded_and_a_wrong_shape_refused() {
    let queued = |state: &str, stock: i64| {
        vec![
            ("state", b(state)),
            ("position", Value::Int(3)),
            ("queue_length", Value::Int(10)),
            ("active", Value::Int(2)),
            ("capacity", Value::Int(2)),
            ("ttl_ms", Value::Int(60_000)),
            ("stock", Value::Int(stock)),
            ("serial", Value::Int(5)),
            ("issued_ms", Value::Int(1_000)),
            ("expires_ms", Value::Int(61_000)),
            ("now_ms", Value::Int(1_700_000_000_000)),
            ("promoted", Value::Array(vec![b("aa"), b("bb")])),
            ("rate_cap", Value::Int(20)),
            ("target", b("https://shop.example/")),
            ("away", Value::Int(1)),
            ("admits", Value::Int(42)),
            ("ticket", Value::Int(7_000)),
            ("joined_ms", Value::Int(1_699_999_999_000)),
            ("heartbeat_ms", Value::Int(1_700_000_007_500)),
            ("line_epoch", b("e1")),
            ("line_seq", Value::Int(12)),
        ]
    };
    let s = parse_snapshot(by_name(SNAPSHOT_FIELDS, queued("queued", -1))).unwrap();
    assert_eq!(s.state, VisitorState::Queued);
    assert_eq!(
        (s.position, s.queue_length, s.active, s.capacity),
        (3, 10, 2, 2)
    );
    assert_eq!(
        (s.session_ttl_ms, s.stock, s.admission),
        (60_000, None, None)
    );
    assert_eq!(s.now_ms, 1_700_000_000_000);
    assert_eq!(s.promoted, ["aa", "bb"]);
    assert_eq!((s.rate_cap_per_minute, s.admits), (20, 42));
    assert_eq!(s.target_url, "https://shop.example/");
    assert!(s.rejoined_after_absence);
    assert_eq!((s.ticket, s.joined_at_ms), (7_000, 1_699_999_999_000));
    assert_eq!(s.heartbeat_ms, 1_700_000_007_500);
    assert_eq!((s.line.epoch.as_str(), s.line.seq), ("e1", 12));

    let a = parse_snapshot(by_name(SNAPSHOT_FIELDS, queued("admitted", 7))).unwrap();
    assert_eq!(a.stock, Some(7));
    let adm = a.admission.unwrap();
    assert_eq!(
        (adm.serial, adm.issued_at_ms, adm.expires_at_ms),
        (5, 1_000, 61_000)
    );

    assert!(matches!(
        parse_snapshot(Value::Array(vec![b("queued")])),
        Err(StoreError::Protocol(_))
    ));
    assert!(matches!(
        parse_snapshot(by_name(SNAPSHOT_FIELDS, queued("dancing", -1))),
        Err(StoreError::Protocol(_))
    ));
}

#[test]
fn a_join_many_reply_is_decoded_visitor_by_visitor_and_a_wrong_shape_refused() {
    let shared = by_name(
        SHARED_FIELDS,
        vec![
            ("capacity", Value::Int(2)),
            ("ttl_ms", Value::Int(60_000)),
            ("rate_cap", Value::Int(20)),
            ("target", b("https://shop.example/")),
            ("now_ms", Value::Int(1_700_000_000_000)),
        ],
    );
    let one = |state: &str, position: i64, promoted: &str| {
        by_name(
            BATCH_FIELDS,
            vec![
                ("state", b(state)),
                ("position", Value::Int(position)),
                ("queue_length", Value::Int(10)),
                ("active", Value::Int(2)),
                ("stock", Value::Int(-1)),
                ("serial", Value::Int(5)),
                ("issued_ms", Value::Int(1_000)),
                ("expires_ms", Value::Int(61_000)),
                ("promoted", b(promoted)),
                ("away", Value::Int(0)),
                ("admits", Value::Int(42)),
                ("ticket", Value::Int(7_000)),
                ("joined_ms", Value::Int(1_699_999_999_000)),
                ("heartbeat_ms", Value::Int(1_700_000_007_500)),
                ("line_epoch", b("e1")),
                ("line_seq", Value::Int(12)),
            ],
        )
    };
    let flat = |parts: Vec<Value>| {
        Value::Array(
            parts
                .into_iter()
                .flat_map(|p| match p {
                    Value::Array(a) => a,
                    v => vec![v],
                })
                .collect(),
        )
    };
    let replies = parse_join_batch(
        flat(vec![
            shared.clone(),
            one("queued", 3, "aa bb"),
            one("admitted", 0, ""),
            one("too_many_places", 0, ""),
            one("held", 1_500, ""),
        ]),
        4,
    )
    .unwrap();
    let q = replies[0].as_ref().unwrap();
    assert_eq!(
        (q.state, q.position, q.queue_length),
        (VisitorState::Queued, 3, 10)
    );
    assert_eq!(
        (q.capacity, q.session_ttl_ms, q.rate_cap_per_minute),
        (2, 60_000, 20)
    );
    assert_eq!(
        (q.now_ms, q.target_url.as_str()),
        (1_700_000_000_000, "https://shop.example/")
    );
    assert_eq!(q.promoted, ["aa", "bb"]);
    assert_eq!(
        (q.ticket, q.heartbeat_ms, q.line.seq),
        (7_000, 1_700_000_007_500, 12)
    );
    let a = replies[1].as_ref().unwrap();
    assert_eq!(a.state, VisitorState::Admitted);
    assert_eq!(a.admission.as_ref().unwrap().serial, 5);
    assert!(a.promoted.is_empty());
    assert!(matches!(replies[2], Err(StoreError::TooManyPlaces)));
    assert!(matches!(
        replies[3],
        Err(StoreError::Held {
            retry_after_ms: 1_500
        })
    ));
    // One field short, or a count that does not match the joins sent: refused whole.
    assert!(matches!(
        parse_join_batch(flat(vec![shared.clone(), one("queued", 1, "")]), 2),
        Err(StoreError::Protocol(_))
    ));
}

#[test]
fn a_room_view_is_decoded_and_a_wrong_shape_refused() {
    let v = parse_room_view(by_name(
        ROOM_VIEW_FIELDS,
        vec![
            ("queue_length", Value::Int(4)),
            ("active", Value::Int(2)),
            ("capacity", Value::Int(3)),
            ("ttl_ms", Value::Int(30_000)),
            ("stock", Value::Int(9)),
            ("now_ms", Value::Int(5_000)),
            ("rate_cap", Value::Int(0)),
            ("target", b("https://t/")),
            ("paused", Value::Int(1)),
            ("closed", Value::Int(0)),
            ("admits", Value::Int(11)),
            ("mode", b("reject")),
            ("queue_all", Value::Int(1)),
            ("phase", b("prequeue")),
        ],
    ))
    .unwrap();
    assert_eq!(v.phase, crate::room::schedule::EventPhase::Prequeue);
    assert_eq!(
        (v.queue_length, v.active, v.capacity, v.stock),
        (4, 2, 3, Some(9))
    );
    assert_eq!((v.paused, v.closed, v.admits), (true, false, 11));
    assert_eq!(
        (v.mode, v.queue_all),
        (crate::room::QueueMode::Reject, true)
    );
    assert!(matches!(
        parse_room_view(Value::Array(vec![Value::Int(4)])),
        Err(StoreError::Protocol(_))
    ));
}
