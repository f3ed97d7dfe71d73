//! The places-per-network cap (`max_places_per_ip`) against an exact count, run by the
//! `conformance!` macro against every backend like the rest of the suite.

use anteroom::store::{PlaceLimit, StoreError};

use super::{v, Backend};
use crate::helpers::room;

/// Over a generated run of new places and ends (leaving the line, a session released, the
/// next let in), `join_limited` refuses a new place exactly when the group's live places
/// (in line or admitted) have reached its cap: the stores read a group's places only when
/// it has taken `max` since it was last pruned (join_one.lua), which must not change an
/// answer.
pub(super) async fn the_places_per_group_cap_agrees_with_an_exact_count(b: Backend) {
    const MAX: usize = 4;
    let b = b.with_room(room("r", 2)).await;
    let s = &b.store;
    let g = PlaceLimit {
        group: "198.51.100.7".into(),
        max: MAX as u64,
    };
    // The group's visitors holding a place or a session, by the model.
    let mut live: Vec<usize> = Vec::new();
    let (mut next, mut refused, mut ended) = (0usize, 0, 0);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for step in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x % 5 < 3 || live.is_empty() {
            let i = next;
            next += 1;
            let r = s.join_limited("r", &v(i), Some(&g)).await;
            if live.len() < MAX {
                assert!(
                    r.is_ok(),
                    "step {step}: {} live, refused: {r:?}",
                    live.len()
                );
                live.push(i);
            } else {
                assert!(
                    matches!(r, Err(StoreError::TooManyPlaces)),
                    "step {step}: {} live of {MAX}, yet {r:?}",
                    live.len()
                );
                refused += 1;
            }
        } else {
            let i = live.swap_remove((x / 5) as usize % live.len());
            s.release("r", &v(i)).await.unwrap();
            ended += 1;
        }
    }
    assert!(
        refused > 20 && ended > 20,
        "{refused} refused, {ended} ended"
    );
}
