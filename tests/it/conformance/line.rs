//! The line log and holds a hub counts its sockets' positions from (docs/design.md#socket-updates),
//! run by the `conformance!` macro against every backend like the rest of the suite.

use std::collections::HashMap;
use std::time::Duration;

use anteroom::hub::count::{recount, Counted};
use anteroom::room::RoomConfig;
use anteroom::store::{LineCursor, Store, TickRequest, VisitorState};

use super::{store_time_passes, v, Backend};
use crate::helpers::{room, wait_until};

/// A hub as `src/hub.rs` keeps one room: its cursor and its sockets' counted places.
#[derive(Default)]
struct Hub {
    cursor: Option<LineCursor>,
    sockets: HashMap<String, Counted>,
    to_hold: Vec<String>,
}

impl Hub {
    fn open(&mut self, visitor: String) {
        self.sockets.insert(visitor.clone(), Counted::default());
        self.to_hold.push(visitor);
    }

    /// One tick, as `Hub::tick_room` does it; returns how many sockets had to be read
    /// with `places` and how many moved by the local count alone.
    async fn tick(&mut self, s: &dyn Store) -> (usize, usize) {
        let before = self.sockets.clone();
        let hold = std::mem::take(&mut self.to_hold);
        let t = s
            .tick(
                "r",
                &TickRequest {
                    instance: "hub-a",
                    since: self.cursor.as_ref(),
                    hold: &hold,
                    unhold: &[],
                },
            )
            .await
            .unwrap();
        assert!(t.exact, "a room without lanes is counted locally");
        for (visitor, p) in hold.iter().zip(&t.placed) {
            self.sockets
                .get_mut(visitor)
                .unwrap()
                .place_at(p, t.cursor.seq);
        }
        match &t.changes {
            Some(changes) => recount(&mut self.sockets, changes, t.cursor.seq),
            None => {
                for (visitor, c) in self.sockets.iter_mut() {
                    if !hold.contains(visitor) {
                        c.synced = false;
                    }
                }
            }
        }
        self.cursor = Some(t.cursor);
        let moved = self
            .sockets
            .iter()
            .filter(|(v, c)| c.synced && before[*v].synced && before[*v].position != c.position)
            .count();
        let unsynced: Vec<String> = self
            .sockets
            .iter()
            .filter(|(_, c)| !c.synced)
            .map(|(v, _)| v.clone())
            .collect();
        if !unsynced.is_empty() {
            let (_, placed, at) = s.places("r", &unsynced).await.unwrap();
            for (visitor, p) in unsynced.iter().zip(&placed) {
                self.sockets.get_mut(visitor).unwrap().place_at(p, at.seq);
            }
        }
        (unsynced.len(), moved)
    }

    /// Every socket's counted position against the store's own status.
    async fn check(&self, s: &dyn Store, step: &str) {
        for (visitor, c) in &self.sockets {
            let snap = s.status("r", visitor).await.unwrap();
            let want = if snap.state == VisitorState::Admitted {
                0
            } else {
                snap.position
            };
            let got = if c.ticket == 0 { 0 } else { c.position };
            assert_eq!(got, want, "{step}: visitor {visitor} counted at {got}");
        }
    }
}

/// A small deterministic generator (xorshift), so a failing seed can be replayed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Random joins, releases, admissions, reaps and places put back: after each tick every
/// socket's locally counted position is the store's, and only sockets whose own place
/// changed are read again.
pub(super) async fn a_hub_counts_every_position_from_the_line_log(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            heartbeat_timeout_secs: 1,
            ..room("r", 3)
        })
        .await;
    let s = b.store.as_ref();
    let mut hub = Hub::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut next = 0;
    // (visitor, ticket, joined) of places released while queued: put back later.
    let mut released: Vec<(String, u64, u64)> = Vec::new();
    let mut queued: Vec<(String, u64, u64)> = Vec::new();
    let mut admitted: Vec<String> = Vec::new();
    let mut moved_total = 0;
    for step in 0..120 {
        let what = match step {
            40 | 80 => 9, // a reap after silence
            _ => rng.below(8),
        };
        let label = format!("step {step} (op {what})");
        // Visitors whose own place this step changed: the only sockets to read again.
        let mut touched: Vec<String> = Vec::new();
        match what {
            0..=2 => {
                next += 1;
                let snap = s.join("r", &v(next)).await.unwrap();
                queued.retain(|(q, _, _)| !snap.promoted.contains(q));
                touched.extend(snap.promoted.iter().cloned());
                admitted.extend(snap.promoted.iter().filter(|p| **p != v(next)).cloned());
                match snap.state {
                    VisitorState::Queued => queued.push((v(next), snap.ticket, snap.joined_at_ms)),
                    _ => admitted.push(v(next)),
                }
                if what < 2 {
                    hub.open(v(next));
                }
            }
            3 if !queued.is_empty() => {
                let (gone, ticket, joined) = queued.remove(rng.below(queued.len()));
                let (_, promoted) = s.release("r", &gone).await.unwrap();
                queued.retain(|(q, _, _)| !promoted.contains(q));
                touched.push(gone.clone());
                touched.extend(promoted.iter().cloned());
                admitted.extend(promoted);
                released.push((gone, ticket, joined));
            }
            4 | 5 if !admitted.is_empty() => {
                let done = admitted.remove(rng.below(admitted.len()));
                let (_, promoted) = s.release("r", &done).await.unwrap();
                queued.retain(|(q, _, _)| !promoted.contains(q));
                touched.extend(promoted.iter().cloned());
                admitted.extend(promoted);
            }
            6 if !released.is_empty() => {
                let (back, ticket, joined) = released.remove(rng.below(released.len()));
                let snap = s.restore_place("r", &back, ticket, joined).await.unwrap();
                touched.push(back.clone());
                if snap.state == VisitorState::Queued {
                    queued.push((back, ticket, joined));
                }
            }
            9 => {
                // Every place without a socket goes silent and is dropped; the held ones
                // stay (their hub's lease vouches for them).
                store_time_passes(s, "r", 1100).await;
                let batch = s.reap("r", 1000).await.unwrap();
                let held: Vec<&String> = queued
                    .iter()
                    .map(|(q, _, _)| q)
                    .filter(|q| hub.sockets.contains_key(*q))
                    .collect();
                assert_eq!(
                    batch.dropped as usize,
                    queued.len() - held.len(),
                    "{label}: only places without a socket are dropped"
                );
                queued.retain(|(q, _, _)| hub.sockets.contains_key(q));
            }
            _ => {}
        }
        let changed_own = touched
            .iter()
            .filter(|t| hub.sockets.contains_key(*t))
            .count();
        let (read, moved) = hub.tick(s).await;
        moved_total += moved;
        assert!(
            read <= changed_own,
            "{label}: read {read} sockets, {changed_own} changed"
        );
        hub.check(s, &label).await;
    }
    assert!(
        moved_total >= 10,
        "the run moved only {moved_total} positions by counting"
    );
}

/// An instance's lease on the visitors it holds sockets for keeps them from the reaper
/// however silent they look; a visitor let go, or held by an instance whose lease lapsed,
/// is back on heartbeats.
pub(super) async fn a_held_visitor_is_kept_until_its_hub_lets_go_or_its_lease_lapses(b: Backend) {
    let b = b
        .with_room(RoomConfig {
            heartbeat_timeout_secs: 1,
            ..room("r", 1)
        })
        .await;
    let s = b.store.as_ref();
    s.join("r", &v(0)).await.unwrap(); // holds the slot
    for i in 1..=3 {
        s.join("r", &v(i)).await.unwrap();
    }
    let tick = |hold: Vec<String>, unhold: Vec<String>| async move {
        s.tick(
            "r",
            &TickRequest {
                instance: "hub-a",
                since: None,
                hold: &hold,
                unhold: &unhold,
            },
        )
        .await
        .unwrap()
    };
    assert!(
        tick(vec![v(1), v(2)], vec![]).await.rehold,
        "held nothing yet"
    );
    // A status puts v(1) back on heartbeats too: the reaper must vouch for it.
    s.status("r", &v(1)).await.unwrap();
    store_time_passes(s, "r", 1100).await;
    let batch = s.reap("r", 1000).await.unwrap();
    assert_eq!((batch.dropped, batch.vouched), (1, 1), "only v(3) dropped");
    assert_eq!(
        s.status("r", &v(3)).await.unwrap().state,
        VisitorState::NotQueued
    );
    // Let go: v(2) is on heartbeats again, from now.
    assert!(!tick(vec![], vec![v(2)]).await.rehold, "the lease holds");
    assert_eq!(s.reap("r", 1000).await.unwrap().dropped, 0);
    store_time_passes(s, "r", 1100).await;
    assert_eq!(s.reap("r", 1000).await.unwrap().dropped, 1);
    assert_eq!(
        s.status("r", &v(2)).await.unwrap().state,
        VisitorState::NotQueued
    );
    // The hub stops ticking (killed): once its lease lapses, v(1) is dropped.
    assert_eq!(s.reap("r", 1000).await.unwrap().dropped, 0);
    wait_until(
        Duration::from_secs(20),
        "the lapsed hold to be reaped",
        || async { (s.reap("r", 1000).await.unwrap().dropped == 1).then_some(()) },
    )
    .await;
    assert_eq!(
        s.status("r", &v(1)).await.unwrap().state,
        VisitorState::NotQueued
    );
    // A hub that comes back after its lease lapsed is told to hold its visitors again.
    assert!(tick(vec![], vec![]).await.rehold);
}

/// A flush starts the line log afresh: a hub's cursor from before says nothing.
pub(super) async fn a_flush_starts_a_new_line_log_epoch(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    for i in 0..3 {
        s.join("r", &v(i)).await.unwrap();
    }
    let req = |since| TickRequest {
        instance: "hub-a",
        since,
        hold: &[],
        unhold: &[],
    };
    let first = s.tick("r", &req(None)).await.unwrap();
    assert_eq!(first.changes, None, "no cursor, nothing to count from");
    s.release("r", &v(2)).await.unwrap();
    let t = s.tick("r", &req(Some(&first.cursor))).await.unwrap();
    let changes = t.changes.expect("the log covers the cursor");
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].visitor.as_str(), changes[0].back),
        (v(2).as_str(), false)
    );
    assert_eq!(t.cursor.seq, first.cursor.seq + 1);
    s.flush("r").await.unwrap();
    let after = s.tick("r", &req(Some(&t.cursor))).await.unwrap();
    assert_ne!(after.cursor.epoch, t.cursor.epoch);
    assert_eq!(after.changes, None);
}

/// A queued visitor's reply says how long its heartbeat holds (a sign of life before then
/// writes nothing) and the line log's cursor its position is exact at: what an instance
/// needs to answer that visitor's next statuses itself (`domain::line_view`).
pub(super) async fn a_queued_reply_carries_its_heartbeat_and_the_line_cursor(b: Backend) {
    let cfg = room("r", 1);
    let step = anteroom::store::heartbeat_step(cfg.heartbeat_timeout_secs * 1000);
    let b = b.with_room(cfg).await;
    let s = b.store.as_ref();
    let admitted = s.join("r", &v(0)).await.unwrap();
    assert_eq!(
        (admitted.state, admitted.heartbeat_ms),
        (VisitorState::Admitted, 0)
    );
    s.join("r", &v(1)).await.unwrap();
    let joined = s.join("r", &v(2)).await.unwrap();
    assert_eq!(joined.position, 2);
    assert_eq!(joined.heartbeat_ms, joined.now_ms + step, "a new place");
    // Before any hub asked, the log has no epoch: nothing to count from yet.
    assert_eq!(joined.line.epoch, "");
    let t = s
        .tick(
            "r",
            &TickRequest {
                instance: "hub-a",
                since: None,
                hold: &[],
                unhold: &[],
            },
        )
        .await
        .unwrap();
    let st = s.status_placed("r", &v(2)).await.unwrap();
    assert_eq!(st.line, t.cursor, "the cursor the tick saw");
    assert_eq!(
        st.heartbeat_ms, joined.heartbeat_ms,
        "still ahead of the clock: not moved"
    );
    assert_eq!(
        (st.ticket, st.joined_at_ms),
        (joined.ticket, joined.joined_at_ms)
    );
    s.release("r", &v(1)).await.unwrap();
    let st = s.status("r", &v(2)).await.unwrap();
    assert_eq!(st.position, 1);
    assert_eq!(st.line.seq, t.cursor.seq + 1, "one place left the line");
    assert_eq!(st.line.epoch, t.cursor.epoch);
    let none = s.status("r", &v(9)).await.unwrap();
    assert_eq!(
        (none.state, none.heartbeat_ms),
        (VisitorState::NotQueued, 0)
    );
}
