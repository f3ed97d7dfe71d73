//! Joins taken together on a real Redis (`store.batch_joins`, store/join_batch.rs): joins
//! sent while a call for the room is in flight go in one `join_many` call, doing fewer
//! commands per join; a store that freezes fails them all, and each visitor's retry then
//! takes exactly one place. The rules every join keeps, batched or not, are the
//! conformance suite's (`joins_sent_together_take_one_place_each_in_the_order_sent`).

use std::time::Duration;

use anteroom::config::StoreSettings;
use anteroom::store::prelude::*;
use anteroom::store::redis::RedisStore;
use anteroom::store::{StoreError, VisitorState};
use futures_util::future::join_all;

use crate::helpers::{command_calls, prefix, room, wait_until, RedisServer};

fn v(i: usize) -> String {
    format!("{i:032x}")
}

async fn store(redis: &RedisServer, batch_joins: bool, response_timeout_ms: u64) -> RedisStore {
    let t = StoreSettings {
        batch_joins,
        response_timeout_ms,
        ..StoreSettings::default()
    };
    let s = RedisStore::connect(&redis.url(), &prefix(), &t)
        .await
        .unwrap();
    assert!(s.put_room(&room("r", 2), true).await.unwrap());
    s
}

/// `FCALL`s and commands run inside them while `n` visitors join together.
async fn calls_for_joins(batch_joins: bool, n: usize) -> (u64, u64) {
    let redis = RedisServer::start();
    let s = store(&redis, batch_joins, 5000).await;
    let before = command_calls(&redis);
    let snaps = join_all((0..n).map(|i| {
        let s = s.clone();
        async move { s.join("r", &v(i)).await.unwrap() }
    }))
    .await;
    let after = command_calls(&redis);
    let queued = snaps
        .iter()
        .filter(|x| x.state == VisitorState::Queued)
        .count();
    assert_eq!(queued, n - 2, "two walk in, the rest wait");
    let delta = |name: &str| after.get(name).unwrap_or(&0) - before.get(name).unwrap_or(&0);
    let fcalls = delta("fcall");
    let inside: u64 = after
        .keys()
        .filter(|k| !["fcall", "info"].contains(&k.as_str()))
        .map(|k| delta(k))
        .sum();
    (fcalls, inside)
}

#[tokio::test]
async fn joins_sent_together_go_in_few_calls_with_fewer_commands_each() {
    let n = 200;
    let (alone_calls, alone_inside) = calls_for_joins(false, n).await;
    assert_eq!(alone_calls, n as u64, "off: one call per join");
    let (calls, inside) = calls_for_joins(true, n).await;
    // The first join goes alone; the others waited for it and go 64 to a call.
    assert!(
        calls <= 1 + (n as u64 - 1).div_ceil(64) + 1,
        "{calls} calls for {n} joins sent together"
    );
    println!(
        "commands per join: {:.2} taken together, {:.2} one call each",
        inside as f64 / n as f64,
        alone_inside as f64 / n as f64
    );
    assert!(
        inside * 10 < alone_inside * 8,
        "taken together, the joins run at least a fifth fewer commands: {inside} against {alone_inside}"
    );
}

#[tokio::test]
async fn a_frozen_store_fails_the_joins_taken_together_and_each_retry_takes_one_place() {
    let redis = RedisServer::start();
    let s = store(&redis, true, 300).await;
    // Two walk in before the freeze, so the rest queue.
    for i in 0..2 {
        assert_eq!(
            s.join("r", &v(i)).await.unwrap().state,
            VisitorState::Admitted
        );
    }
    redis.pause();
    let n = 40;
    let during = join_all((2..n).map(|i| {
        let s = s.clone();
        async move { s.join("r", &v(i)).await }
    }))
    .await;
    // One more, given up half-way: it must not hold the room's later joins.
    let given_up = tokio::spawn({
        let s = s.clone();
        async move { s.join("r", &v(n)).await }
    });
    given_up.abort();
    let _ = given_up.await;
    redis.resume();
    for r in &during {
        assert!(
            matches!(r, Err(StoreError::Unavailable(_))),
            "a join to the frozen store fails: {r:?}"
        );
    }
    // Each retries (the calls that timed out may have run once Redis woke): one place each.
    let again = wait_until(Duration::from_secs(10), "the joins to go through", || {
        let s = s.clone();
        async move {
            let r = join_all((2..=n).map(|i| {
                let s = s.clone();
                async move { s.join("r", &v(i)).await }
            }))
            .await;
            r.into_iter().collect::<Result<Vec<_>, _>>().ok()
        }
    })
    .await;
    assert!(again.iter().all(|x| x.state == VisitorState::Queued));
    let mut positions: Vec<u64> = again.iter().map(|x| x.position).collect();
    positions.sort_unstable();
    assert_eq!(positions, (1..=(n as u64 - 1)).collect::<Vec<_>>());
    let stats = s.stats("r").await.unwrap();
    assert_eq!(
        (stats.active, stats.queue_length),
        (2, n as u64 - 1),
        "every visitor holds exactly one place"
    );
}
