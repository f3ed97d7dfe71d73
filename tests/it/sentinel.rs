//! Redis Sentinel: a real master, one replica and three sentinels. The master is killed
//! (SIGKILL) under a running Anteroom: it follows the promotion without a restart, every
//! place taken before the kill is still there in the same order, and the time to recover
//! is printed (RELIABILITY.md quotes it). A sentinel URL with no sentinel answering stops
//! start-up with an error naming `redis_url`.

use std::time::{Duration, Instant};

use crate::helpers::{room, spawn_app, test_settings, wait_until, RedisSentinel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_is_followed_without_a_restart_and_loses_no_place() {
    let mut rs = RedisSentinel::start();
    let old_master = rs.master.port;
    let app = spawn_app(test_settings(
        Some(rs.url()),
        &crate::helpers::prefix(),
        vec![room("r", 1)],
    ))
    .await;
    let holder = app.join("r").await;
    assert_eq!(holder.state(), "admitted");
    let mut queued = Vec::new();
    for i in 0..20 {
        let r = app.join("r").await;
        assert_eq!(r.body["position"], i + 1, "{:?}", r.body);
        queued.push(r.token());
    }
    // Every acknowledged write is on the replica (so the figure below is the failover's,
    // not asynchronous replication's; a write in flight at the kill could be lost).
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2000)
        .query(&mut rs.master.conn())
        .unwrap();
    assert_eq!(acked, 1);

    let killed = Instant::now();
    rs.master.kill();
    // Joins fail (503) until the sentinels promote the replica; then a new visitor gets
    // a place again, through the same running instance.
    let newcomer = wait_until(
        Duration::from_secs(30),
        "a join to succeed after the failover",
        || async {
            let r = app.join("r").await;
            (r.status == 200).then_some(r)
        },
    )
    .await;
    let recovered = killed.elapsed();
    assert_ne!(
        rs.master_port(),
        Some(old_master),
        "the replica was promoted"
    );
    assert_eq!(newcomer.body["position"], 21, "{:?}", newcomer.body);
    // Every place is there, in order; the holder's session too.
    let mut lost = 0;
    for (i, t) in queued.iter().enumerate() {
        let s = app.status("r", t).await;
        if s.body["position"] != i as u64 + 1 {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "places lost in the failover");
    // The instance counts the failover once its keeper has seen it (and put back the
    // sessions it knew of).
    wait_until(
        Duration::from_secs(10),
        "the failover to be counted",
        || async {
            let m = app.get("/metrics").await.body;
            let counted = m.as_str().unwrap_or_default().lines().any(|l| {
                l.strip_prefix("anteroom_store_failovers_total ")
                    .and_then(|n| n.trim().parse::<f64>().ok())
                    .is_some_and(|n| n >= 1.0)
            });
            counted.then_some(())
        },
    )
    .await;
    assert_eq!(app.status("r", &holder.token()).await.state(), "admitted");
    // Admissions go on: the holder leaves, the first in line is let in.
    let released = app.release("r", &holder.token()).await;
    assert!(
        released.status / 100 == 2,
        "{} {:?}",
        released.status,
        released.body
    );
    let first = app.status("r", &queued[0]).await;
    assert_eq!(
        first.state(),
        "admitted",
        "release: {:?}; first in line: {:?}",
        released.body,
        first.body
    );
    eprintln!(
        "sentinel failover: master killed, joins answered again after {:.1} s; {} of {} places lost",
        recovered.as_secs_f64(),
        lost,
        queued.len() + 1
    );
}

#[tokio::test]
async fn a_sentinel_url_with_no_sentinel_answering_stops_start_up_naming_the_field() {
    let port = crate::helpers::free_port();
    let mut s = test_settings(None, &crate::helpers::prefix(), vec![]);
    s.redis_url = Some(format!("redis+sentinel://127.0.0.1:{port}/anteroom"));
    s.store.connect_timeout_ms = 300;
    let err = match anteroom::startup::open_store(&s).await {
        Ok(_) => panic!("started without a sentinel"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.starts_with("redis_url:"), "{err}");
    // A sentinel URL without the master's name is refused when the file is read.
    s.redis_url = Some(format!("redis+sentinel://127.0.0.1:{port}"));
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains("redis_url") && err.contains("master-name"),
        "{err}"
    );
}

/// Replication is asynchronous: writes the old master had not passed on are lost in a
/// failover. A proxy between the replica and the master is cut before five visitors
/// join (their places reach the master only), then the master is killed. The new master
/// lacks those five places (counted); the instance treats the failover as a possible
/// loss, and their receipts put them back in their original order (presented in reverse
/// order), ahead of a newcomer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn places_lost_in_a_failover_come_back_with_their_receipts() {
    let mut hole = None;
    let mut rs = RedisSentinel::start_linked(|master| {
        let h = crate::faults::Blackhole::start(master);
        let port = h.port;
        hole = Some(h);
        port
    });
    let hole = hole.unwrap();
    let app = spawn_app(test_settings(
        Some(rs.url()),
        &crate::helpers::prefix(),
        vec![anteroom::room::RoomConfig {
            paused: true,
            ..room("r", 1)
        }],
    ))
    .await;
    let mut early = Vec::new();
    for i in 0..10 {
        let r = app.join("r").await;
        assert_eq!(r.body["position"], i + 1, "{:?}", r.body);
        early.push(r.token());
    }
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2000)
        .query(&mut rs.master.conn())
        .unwrap();
    assert_eq!(acked, 1, "the first ten are on the replica");
    hole.set(true);
    let mut late = Vec::new();
    for i in 0..5 {
        let r = app.join("r").await;
        assert_eq!(r.body["position"], 11 + i, "{:?}", r.body);
        late.push((
            r.token(),
            r.body["place_receipt"].as_str().unwrap().to_string(),
        ));
    }
    let killed = Instant::now();
    rs.master.kill();
    wait_until(
        Duration::from_secs(30),
        "the instance to follow the failover",
        || async {
            let s = app.status("r", &early[0]).await;
            let m = app.get("/metrics").await.body;
            (s.body["position"] == 1 && m.as_str()?.contains("anteroom_store_failovers_total 1"))
                .then_some(())
        },
    )
    .await;
    let recovered = killed.elapsed();
    let mut lost = 0;
    for (t, _) in &late {
        if app.status("r", t).await.state() == "not_queued" {
            lost += 1;
        }
    }
    assert_eq!(lost, 5, "the writes the replica never got are gone");
    for (t, receipt) in late.iter().rev() {
        let r = app.join_with_receipt("r", t, receipt).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    for (i, (t, _)) in late.iter().enumerate() {
        assert_eq!(
            app.status("r", t).await.body["position"],
            11 + i,
            "visitor {i}"
        );
    }
    assert_eq!(
        app.join("r").await.body["position"],
        16,
        "a newcomer behind"
    );
    eprintln!(
        "sentinel failover with a lagging replica: recovered after {:.1} s; {lost} places lost by replication, {lost} put back from receipts in order",
        recovered.as_secs_f64()
    );
}
