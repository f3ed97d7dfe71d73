//! No-shows (docs/outflow.md#no-shows): a room with `claim_timeout_secs` gives each
//! admission a deadline to present its pass at the origin; `present` clears it, and
//! `reap_no_shows` ends the sessions past theirs. Run by the `conformance!` macro against
//! every backend like the rest of the suite.

use anteroom::room::RoomConfig;
use anteroom::store::{Store, VisitorState};

use super::{store_time_passes, v, Backend};
use crate::helpers::room;

/// One slot, a 1 s claim timeout, a 60 s session.
fn claiming(capacity: u64) -> RoomConfig {
    RoomConfig {
        claim_timeout_secs: 1,
        ..room("r", capacity)
    }
}

async fn serial_of(s: &dyn Store, visitor: &str) -> u64 {
    let snap = s.status("r", visitor).await.unwrap();
    assert_eq!(snap.state, VisitorState::Admitted, "{visitor}");
    snap.admission.unwrap().serial
}

/// Not presented in time: the session ends (its pass no longer live), the visitor is
/// told `no_show`, it is counted and in the stream, and the slot goes to the next in line.
pub(super) async fn a_pass_not_presented_in_time_is_a_no_show_and_frees_the_slot(b: Backend) {
    let b = b.with_room(claiming(1)).await;
    let s = b.store.as_ref();
    s.join("r", &v(0)).await.unwrap();
    let serial = serial_of(s, &v(0)).await;
    assert_eq!(
        s.join("r", &v(1)).await.unwrap().state,
        VisitorState::Queued
    );
    // Before the deadline nothing is due.
    assert!(s.reap_no_shows("r", 100).await.unwrap().is_empty());
    store_time_passes(s, "r", 1_050).await;
    let ended = s.reap_no_shows("r", 100).await.unwrap();
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0].0, v(0));
    assert_eq!(ended[0].1.serial, serial);
    assert!(ended[0].1.expires_at_ms > ended[0].1.issued_at_ms + 50_000);
    // Once only.
    assert!(s.reap_no_shows("r", 100).await.unwrap().is_empty());
    assert!(!s.session_live("r", &v(0), serial).await.unwrap());
    assert!(!s.present("r", &v(0), serial).await.unwrap());
    assert_eq!(
        s.status("r", &v(0)).await.unwrap().state,
        VisitorState::NoShow
    );
    assert_eq!(s.no_shows("r").await.unwrap(), 1);
    let kinds: Vec<(String, Option<String>)> = s
        .events("r", "0", 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.kind, e.visitor))
        .collect();
    assert!(
        kinds.contains(&("no_show".to_string(), Some(v(0)))),
        "{kinds:?}"
    );
    // The slot is free: the next in line is let in.
    assert_eq!(s.promote("r", 10).await.unwrap(), vec![v(1)]);
    // And no recovery puts the no-show's session back.
    let a = ended[0].1.clone();
    assert!(!s.restore_session("r", &v(0), &a).await.unwrap());
}

/// Presented once: the deadline is gone for good; the session runs on past it.
pub(super) async fn a_presented_pass_keeps_its_session_past_the_claim_timeout(b: Backend) {
    let b = b.with_room(claiming(2)).await;
    let s = b.store.as_ref();
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    let (s0, s1) = (serial_of(s, &v(0)).await, serial_of(s, &v(1)).await);
    assert!(s.present("r", &v(0), s0).await.unwrap());
    // A wrong serial presents nothing.
    assert!(!s.present("r", &v(1), s1 + 100).await.unwrap());
    store_time_passes(s, "r", 1_050).await;
    let ended = s.reap_no_shows("r", 100).await.unwrap();
    assert_eq!(
        ended.iter().map(|e| e.0.clone()).collect::<Vec<_>>(),
        vec![v(1)]
    );
    assert!(s.session_live("r", &v(0), s0).await.unwrap());
    assert_eq!(
        s.status("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
}

/// A no-show who comes back joins at the back of the line (behind those who joined while
/// they were away), is queued, not `no_show`, and once let in again has a fresh deadline.
pub(super) async fn a_no_show_rejoins_at_the_back(b: Backend) {
    let b = b.with_room(claiming(1)).await;
    let s = b.store.as_ref();
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    store_time_passes(s, "r", 1_050).await;
    assert_eq!(s.reap_no_shows("r", 100).await.unwrap().len(), 1);
    assert_eq!(s.promote("r", 10).await.unwrap(), vec![v(1)]);
    s.join("r", &v(2)).await.unwrap();
    let back = s.join("r", &v(0)).await.unwrap();
    assert_eq!(back.state, VisitorState::Queued);
    assert_eq!(back.position, 2, "behind v2, who joined while v0 was away");
    assert_eq!(
        s.status("r", &v(0)).await.unwrap().state,
        VisitorState::Queued
    );
    // v1 leaves, v2 is let in; v2 leaves, v0 is let in again with a deadline of its own.
    s.release("r", &v(1)).await.unwrap();
    s.release("r", &v(2)).await.unwrap();
    let serial = serial_of(s, &v(0)).await;
    store_time_passes(s, "r", 1_050).await;
    let ended = s.reap_no_shows("r", 100).await.unwrap();
    assert_eq!(ended.len(), 1);
    assert_eq!((ended[0].0.clone(), ended[0].1.serial), (v(0), serial));
    assert_eq!(s.no_shows("r").await.unwrap(), 2);
}

/// Without a claim timeout nothing is ever a no-show, and a released session's deadline
/// is no no-show either.
pub(super) async fn without_a_claim_timeout_or_after_a_release_nothing_is_taken_back(b: Backend) {
    let b = b.with_room(room("r", 1)).await;
    let s = b.store.as_ref();
    s.join("r", &v(0)).await.unwrap();
    let mut c = claiming(1);
    c.id = "c".into();
    assert!(s.put_room(&c, true).await.unwrap());
    s.join("c", &v(1)).await.unwrap();
    s.release("c", &v(1)).await.unwrap();
    store_time_passes(s, "r", 1_050).await;
    assert!(s.reap_no_shows("r", 100).await.unwrap().is_empty());
    assert!(s.reap_no_shows("c", 100).await.unwrap().is_empty());
    assert_eq!(
        s.status("c", &v(1)).await.unwrap().state,
        VisitorState::NotQueued
    );
    assert_eq!(s.no_shows("c").await.unwrap(), 0);
    assert_eq!(
        s.status("r", &v(0)).await.unwrap().state,
        VisitorState::Admitted
    );
}

/// The ETA's basis: a quiet session (let in from the line, never seen since) holds its
/// slot to its no-show deadline, not to its expiry.
pub(super) async fn a_quiet_session_ends_at_its_no_show_deadline_for_the_eta(b: Backend) {
    let cfg = RoomConfig {
        claim_timeout_secs: 2,
        heartbeat_timeout_secs: 1,
        ..room("r", 1)
    };
    let b = b.with_room(cfg).await;
    let s = b.store.as_ref();
    s.join("r", &v(0)).await.unwrap();
    s.join("r", &v(1)).await.unwrap();
    s.release("r", &v(0)).await.unwrap();
    // v1 is let in from the line, unclaimed: quiet after half the heartbeat timeout.
    let admitted = s.eta_basis("r").await.unwrap();
    assert_eq!(admitted.active, 1);
    store_time_passes(s, "r", 600).await;
    let basis = s.eta_basis("r").await.unwrap();
    assert_eq!(basis.quiet.len(), 1, "{basis:?}");
    assert!(basis.sessions.is_empty());
    // Its deadline (issue + 2 s) is at most 1.4 s ahead; its expiry (issue + 60 s) 59 s.
    assert!(
        basis.quiet[0] > basis.now_ms && basis.quiet[0] <= basis.now_ms + 2_000,
        "the quiet session ends at its deadline, not its expiry: {} vs now {}",
        basis.quiet[0],
        basis.now_ms
    );
}
