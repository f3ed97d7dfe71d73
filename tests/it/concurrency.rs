//! Many visitors at once, through two Anteroom instances sharing one Redis.

use std::collections::HashSet;

use crate::helpers::{room, spawn_app, test_settings, RedisServer};
use futures_util::stream::{self, StreamExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_concurrent_joins_over_two_instances_admit_exactly_capacity() {
    let redis = RedisServer::start();
    let prefix = crate::helpers::prefix();
    // 2,000 places from one address (127.0.0.1): the default cap per address is off here.
    let sale = anteroom::room::RoomConfig {
        max_places_per_ip: 0,
        ..room("sale", 100)
    };
    let mut settings = test_settings(Some(redis.url()), &prefix, vec![sale]);
    // The promoter would admit released places on its own; here the test drives it.
    settings.reaper.promote_interval_ms = 60_000;
    settings.reaper.interval_ms = 60_000;
    let a = spawn_app(settings.clone()).await;
    let b = spawn_app(settings).await;

    // 2,000 joins, up to 400 in flight, alternating between the instances.
    let replies: Vec<(usize, crate::helpers::Reply)> = stream::iter(0..2000usize)
        .map(|i| {
            let app = if i % 2 == 0 { &a } else { &b };
            async move { (i, app.join("sale").await) }
        })
        .buffer_unordered(400)
        .collect()
        .await;

    assert!(replies.iter().all(|(_, r)| r.status == 200));
    let admitted: Vec<_> = replies
        .iter()
        .filter(|(_, r)| r.state() == "admitted")
        .collect();
    let queued: Vec<_> = replies
        .iter()
        .filter(|(_, r)| r.state() == "queued")
        .collect();
    assert_eq!(admitted.len(), 100);
    assert_eq!(queued.len(), 1900);
    let positions: HashSet<u64> = queued
        .iter()
        .map(|(_, r)| r.body["position"].as_u64().unwrap())
        .collect();
    assert_eq!(
        positions,
        (1..=1900).collect::<HashSet<u64>>(),
        "distinct positions 1..1900"
    );
    let stats = a.engine.admin_store().stats("sale").await.unwrap();
    assert_eq!((stats.active, stats.queue_length), (100, 1900));

    // Releasing every admitted visitor (half on each instance) admits the next 100 in
    // the order they joined.
    let mut by_position: Vec<_> = queued
        .iter()
        .map(|(_, r)| (r.body["position"].as_u64().unwrap(), r.token()))
        .collect();
    by_position.sort();
    for (n, (_, r)) in admitted.iter().enumerate() {
        let app = if n % 2 == 0 { &a } else { &b };
        assert_eq!(app.release("sale", &r.token()).await.status, 204);
    }
    for (pos, token) in &by_position[..100] {
        let s = b.status("sale", token).await;
        assert_eq!(s.state(), "admitted", "position {pos} should be in");
    }
    for (pos, token) in &by_position[100..110] {
        let s = a.status("sale", token).await;
        assert_eq!(s.body["position"].as_u64().unwrap(), pos - 100);
    }
    let stats = b.engine.admin_store().stats("sale").await.unwrap();
    assert_eq!((stats.active, stats.queue_length), (100, 1800));
}
