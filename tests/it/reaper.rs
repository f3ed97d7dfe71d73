//! The reaper's lease and passes, on a real Redis.

use std::sync::Arc;
use std::time::Duration;

use crate::helpers::{redis_store, room, wait_until, RedisServer};
use anteroom::config::ReaperSettings;
use anteroom::reaper::{lease_name, reap_once};
use anteroom::room::RoomConfig;
use anteroom::store::prelude::*;
use anteroom::store::{Store, VisitorState};

fn cfg(lease_ms: u64) -> ReaperSettings {
    ReaperSettings {
        lease_ms,
        batch_size: 2,
        ..ReaperSettings::default()
    }
}

async fn store(r: &RedisServer) -> Arc<dyn Store> {
    Arc::new(redis_store(&r.url(), &crate::helpers::prefix()).await)
}

#[tokio::test]
async fn two_racing_reapers_reap_a_room_once() {
    let r = RedisServer::start();
    let s = store(&r).await;
    s.put_room(&room("r", 1), true).await.unwrap();
    let c = cfg(10_000);
    let (a, b) = tokio::join!(
        reap_once(s.as_ref(), "A", &c),
        reap_once(s.as_ref(), "B", &c)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.rooms_reaped + b.rooms_reaped, 1, "{a:?} {b:?}");
    assert_eq!(a.rooms_skipped + b.rooms_skipped, 1);
    // The winner keeps the room on its next pass; the loser keeps skipping.
    let winner = if a.rooms_reaped == 1 { "A" } else { "B" };
    let loser = if winner == "A" { "B" } else { "A" };
    assert_eq!(
        reap_once(s.as_ref(), winner, &c)
            .await
            .unwrap()
            .rooms_reaped,
        1
    );
    assert_eq!(
        reap_once(s.as_ref(), loser, &c)
            .await
            .unwrap()
            .rooms_skipped,
        1
    );
    // A non-holder cannot release the lease.
    assert!(!s.release_lease(&lease_name("r"), loser).await.unwrap());
    assert_eq!(
        reap_once(s.as_ref(), loser, &c)
            .await
            .unwrap()
            .rooms_skipped,
        1
    );
}

#[tokio::test]
async fn a_crashed_holders_lease_expires_and_another_instance_takes_over() {
    let r = RedisServer::start();
    let s = store(&r).await;
    s.put_room(
        &RoomConfig {
            heartbeat_timeout_secs: 1,
            ..room("r", 1)
        },
        true,
    )
    .await
    .unwrap();
    for i in 0..4 {
        s.join("r", &format!("{i:032x}")).await.unwrap();
    }
    // A takes the lease for 300 ms and then "crashes" (never runs again).
    assert_eq!(
        reap_once(s.as_ref(), "A", &cfg(300))
            .await
            .unwrap()
            .rooms_reaped,
        1
    );
    // B reaps once the lease is gone, and drops the three silent queued visitors (in
    // batches of at most 2) as their heartbeats go stale.
    let dropped = std::sync::atomic::AtomicU64::new(0);
    wait_until(
        Duration::from_secs(10),
        "B to take over and reap",
        || async {
            let o = reap_once(s.as_ref(), "B", &cfg(300)).await.unwrap();
            let total =
                dropped.fetch_add(o.dropped, std::sync::atomic::Ordering::SeqCst) + o.dropped;
            (o.rooms_reaped == 1 && total >= 3).then_some(())
        },
    )
    .await;
    assert_eq!(dropped.into_inner(), 3);
    assert_eq!(
        s.status("r", &format!("{:032x}", 1)).await.unwrap().state,
        VisitorState::NotQueued
    );
}

#[tokio::test]
async fn a_pass_promotes_after_pruning_expired_sessions() {
    let r = RedisServer::start();
    let s = store(&r).await;
    s.put_room(
        &RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        },
        true,
    )
    .await
    .unwrap();
    s.join("r", &format!("{:032x}", 0)).await.unwrap();
    s.join("r", &format!("{:032x}", 1)).await.unwrap();
    let o = wait_until(Duration::from_secs(10), "the session to expire", || async {
        let o = reap_once(s.as_ref(), "A", &cfg(10_000)).await.unwrap();
        (o.expired > 0).then_some(o)
    })
    .await;
    assert_eq!(o.expired, 1);
    assert_eq!(
        o.admitted,
        vec![("r".to_string(), vec![format!("{:032x}", 1)])]
    );
}

#[tokio::test]
async fn the_background_tasks_admit_the_next_visitor_after_expiry() {
    let r = RedisServer::start();
    let app = crate::helpers::spawn_app(crate::helpers::test_settings(
        Some(r.url()),
        &crate::helpers::prefix(),
        vec![RoomConfig {
            session_ttl_secs: 1,
            ..room("r", 1)
        }],
    ))
    .await;
    app.join("r").await;
    let b = app.join("r").await.token();
    // Only b's own status polls happen; admission comes from the promoter.
    wait_until(
        Duration::from_secs(5),
        "the promoter to admit b",
        || async {
            let s = app.store_state("r", &b).await;
            (s == "admitted").then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn a_room_that_fails_does_not_stop_the_others_being_reaped() {
    let r = RedisServer::start();
    let prefix = crate::helpers::prefix();
    let s: Arc<dyn Store> = Arc::new(redis_store(&r.url(), &prefix).await);
    let quick = |id: &str| RoomConfig {
        heartbeat_timeout_secs: 1,
        ..room(id, 1)
    };
    for id in ["a", "b", "c"] {
        s.put_room(&quick(id), true).await.unwrap();
        // One admitted, one queued: the queued one goes silent.
        s.join(id, &format!("{:032x}", 1)).await.unwrap();
        s.join(id, &format!("{:032x}", 2)).await.unwrap();
    }
    // Room b's heartbeat set is broken (a string where a ZSET belongs): its reap fails.
    let _: () = redis::cmd("SET")
        .arg(format!("{prefix}:room:{{b}}:hb"))
        .arg("broken")
        .query(&mut r.conn())
        .unwrap();
    // a and c may go stale in different passes (each pass reads the clock per room), so
    // count the drops over the passes; every pass must report b as failed.
    let dropped = std::sync::atomic::AtomicU64::new(0);
    let out = wait_until(Duration::from_secs(10), "a and c to be reaped", || async {
        let o = reap_once(s.as_ref(), "A", &cfg(10_000)).await.unwrap();
        assert_eq!(o.failed.len(), 1, "{o:?}");
        let total = dropped.fetch_add(o.dropped, std::sync::atomic::Ordering::Relaxed) + o.dropped;
        (total >= 2).then_some(o)
    })
    .await;
    assert_eq!(out.failed.len(), 1, "{out:?}");
    assert_eq!(out.failed[0].0, "b");
    for id in ["a", "c"] {
        let st = s.status(id, &format!("{:032x}", 2)).await.unwrap();
        assert_eq!(st.state, VisitorState::NotQueued, "room {id}");
    }
}

/// A queued visitor who polls again within a step of the heartbeat costs Redis no write:
/// the join puts the heartbeat a step ahead, the polls before that time leave it there,
/// and the server's count of changes since the last save does not move. Repeated if the
/// step ran out meanwhile (a step here is 200 s).
#[tokio::test]
async fn a_poll_within_a_heartbeat_step_writes_nothing() {
    let r = RedisServer::start();
    let prefix = crate::helpers::prefix();
    let s = redis_store(&r.url(), &prefix).await;
    let hb_secs = 3_200;
    let step = anteroom::store::heartbeat_step(hb_secs * 1000);
    s.put_room(
        &RoomConfig {
            heartbeat_timeout_secs: hb_secs,
            ..room("r", 1)
        },
        true,
    )
    .await
    .unwrap();
    s.join("r", &format!("{:032x}", 0)).await.unwrap(); // holds the slot
    let mut c = r.conn();
    let redis_ms = |c: &mut redis::Connection| -> u64 {
        let (s, us): (u64, u64) = redis::cmd("TIME").query(c).unwrap();
        s * 1000 + us / 1000
    };
    let changes = |c: &mut redis::Connection| -> u64 {
        let info: String = redis::cmd("INFO").arg("persistence").query(c).unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let hb_key = format!("{prefix}:room:{{r}}:hb");
    for i in 1.. {
        assert!(i < 5, "a 200 s step ran out four times in a row");
        let v = format!("{i:032x}");
        let before = redis_ms(&mut c);
        assert_eq!(s.join("r", &v).await.unwrap().state, VisitorState::Queued);
        let after = redis_ms(&mut c);
        let ahead: u64 = redis::cmd("ZSCORE")
            .arg(&hb_key)
            .arg(&v)
            .query(&mut c)
            .unwrap();
        assert!(
            (before + step..=after + step).contains(&ahead),
            "joined between {before} and {after}, heartbeat {ahead}"
        );
        let written = changes(&mut c);
        for _ in 0..3 {
            assert_eq!(s.status("r", &v).await.unwrap().state, VisitorState::Queued);
        }
        if redis_ms(&mut c) >= ahead {
            continue; // the step ran out: a poll may rightly have moved it
        }
        assert_eq!(changes(&mut c), written, "a poll within the step wrote");
        let again: u64 = redis::cmd("ZSCORE")
            .arg(&hb_key)
            .arg(&v)
            .query(&mut c)
            .unwrap();
        assert_eq!(again, ahead);
        break;
    }
}
