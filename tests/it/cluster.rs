//! Anteroom on a local three-master Redis Cluster: rooms spread over shards, a short
//! concurrent load, and admissions pushed across instances through cluster pub/sub.

use std::time::{Duration, Instant};

use crate::helpers::ws::{connect, next_json, wait_for};
use crate::helpers::{redis_store, room, spawn_app, test_settings, RedisCluster};
use anteroom::store::prelude::*;
use futures_util::stream::{self, StreamExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_spread_over_shards_and_each_room_stays_in_one_slot() {
    let cluster = RedisCluster::start();
    let store = redis_store(&cluster.url(), &crate::helpers::prefix()).await;
    for i in 0..24 {
        let id = format!("room-{i}");
        store.put_room(&room(&id, 2), true).await.unwrap();
        // Scripts touch all of a room's keys at once: they must share a slot, or the
        // cluster would refuse them with CROSSSLOT.
        for v in 0..3 {
            store.join(&id, &format!("{v:032x}")).await.unwrap();
        }
    }
    let sizes = cluster.dbsizes();
    let shards_used = sizes.iter().filter(|n| **n > 0).count();
    assert_eq!(
        shards_used, 3,
        "rooms should land on every shard: {sizes:?}"
    );
    assert_eq!(store.rooms().await.unwrap().len(), 24);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_load_on_the_cluster_admits_exactly_capacity() {
    let cluster = RedisCluster::start();
    // 600 places from one address (127.0.0.1): the default cap per address is off here.
    let sale = anteroom::room::RoomConfig {
        max_places_per_ip: 0,
        ..room("sale", 50)
    };
    let s = test_settings(Some(cluster.url()), &crate::helpers::prefix(), vec![sale]);
    let a = spawn_app(s.clone()).await;
    let b = spawn_app(s).await;
    let replies: Vec<crate::helpers::Reply> = stream::iter(0..600usize)
        .map(|i| {
            let app = if i % 2 == 0 { &a } else { &b };
            async move { app.join("sale").await }
        })
        .buffer_unordered(100)
        .collect()
        .await;
    assert!(replies.iter().all(|r| r.status == 200));
    assert_eq!(
        replies.iter().filter(|r| r.state() == "admitted").count(),
        50
    );
    let mut positions: Vec<u64> = replies
        .iter()
        .filter_map(|r| r.body["position"].as_u64())
        .filter(|p| *p > 0)
        .collect();
    positions.sort();
    assert_eq!(positions, (1..=550).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admissions_reach_sockets_on_another_instance_through_cluster_pub_sub() {
    let cluster = RedisCluster::start();
    // (The store-level proof that cluster pub/sub delivers admissions is the conformance
    // case `admissions_are_published`, run on the cluster too.)
    let s = test_settings(
        Some(cluster.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    );
    let a = spawn_app(s.clone()).await;
    let b = spawn_app(s).await;
    let holder = a.join("r").await.token();
    let me = a.join("r").await.token();
    let mut ws = connect(&b, "r", &me, None).await.unwrap();
    assert_eq!(
        next_json(&mut ws, Duration::from_secs(10)).await["state"],
        "queued"
    );
    let t = Instant::now();
    assert_eq!(a.release("r", &holder).await.status, 204);
    let m = wait_for(&mut ws, "admitted", Duration::from_secs(1)).await;
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(b.verify("r", m["pass"].as_str().unwrap()).await.status, 200);
}
