//! The FIFO audit: how far a room's admission order strayed from its ticket order.
//!
//! Every admission from the line is written to the room's event stream with the ticket
//! it held ([`RoomEvent::ticket`]); walk-ins (nobody waiting) hold none and are left
//! out. Read in stream order, the tickets should rise: each pair of admissions whose
//! tickets are the other way round is a *discordant pair*, and their count is the
//! Kendall-tau distance between the two orders. It is counted as the inversions of the
//! ticket sequence with a merge sort, in O(n log n) (the stream keeps about 10,000
//! events, so the n² pairs would be 50 million comparisons).
//!
//! What to expect: 0 in a `fifo` room, with or without priority lanes (a lane's place is
//! in its tickets: the line is ordered by ticket, so letting a priority visitor in first
//! is still ticket order). `random` mode draws among those waiting, so about half of all
//! pairs are discordant (normalised ≈ 0.5). A drop's shuffle at `opens_at` gives the
//! pre-queue its tickets in the shuffled order, so it does not show here either: the
//! shuffle is checked against its published seed instead (`/api/rooms/{room}/fairness`).

use serde::Serialize;
use utoipa::ToSchema;

use super::admission::Engine;
use crate::domain::error::DomainError;
use crate::store::{RoomEvent, STREAM_KEEP};

/// How far back the audit looks.
pub const AUDIT_WINDOW_MS: u64 = 60 * 60 * 1000;
/// Events read per call to [`crate::store::Store::events`].
const PAGE: u32 = 1_000;

/// The audit of one room over the last hour.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct FifoAudit {
    /// Admissions from the line (with a ticket) in the window.
    pub admissions: u64,
    /// Pairs of admissions let in the other way round from their tickets: the
    /// Kendall-tau distance between admission order and ticket order.
    pub discordant_pairs: u64,
    /// `discordant_pairs` over all `n (n - 1) / 2` pairs: 0 is first come first served,
    /// 1 the exact reverse, about 0.5 a random order.
    pub normalised: f64,
    /// The window, in seconds.
    pub window_secs: u64,
}

impl FifoAudit {
    /// The audit of tickets in admission order.
    pub fn of_tickets(tickets: &[u64]) -> Self {
        let n = tickets.len() as u64;
        let discordant = discordant_pairs(tickets);
        let pairs = n * n.saturating_sub(1) / 2;
        FifoAudit {
            admissions: n,
            discordant_pairs: discordant,
            normalised: if pairs == 0 {
                0.0
            } else {
                discordant as f64 / pairs as f64
            },
            window_secs: AUDIT_WINDOW_MS / 1000,
        }
    }

    /// The audit of a room's events (in stream order): admissions with a ticket.
    pub fn of_events(events: &[RoomEvent]) -> Self {
        let tickets: Vec<u64> = events
            .iter()
            .filter(|e| e.kind == "admission")
            .filter_map(|e| e.ticket)
            .collect();
        Self::of_tickets(&tickets)
    }
}

/// Pairs `i < j` with `xs[i] > xs[j]` (equal values are not discordant), by merge sort.
pub fn discordant_pairs(xs: &[u64]) -> u64 {
    let mut a = xs.to_vec();
    let mut buf = vec![0; a.len()];
    sort_counting(&mut a, &mut buf)
}

/// Sorts `a` (using `buf`, as long), answering how many inversions it had.
fn sort_counting(a: &mut [u64], buf: &mut [u64]) -> u64 {
    let n = a.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut count = {
        let (left, right) = a.split_at_mut(mid);
        let (bl, br) = buf.split_at_mut(mid);
        sort_counting(left, bl) + sort_counting(right, br)
    };
    // Merge: each time the right half's head is strictly smaller, it jumps over every
    // element left in the left half.
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < mid && j < n {
        if a[j] < a[i] {
            buf[k] = a[j];
            count += (mid - i) as u64;
            j += 1;
        } else {
            buf[k] = a[i];
            i += 1;
        }
        k += 1;
    }
    buf[k..k + mid - i].copy_from_slice(&a[i..mid]);
    k += mid - i;
    buf[k..k + n - j].copy_from_slice(&a[j..n]);
    a.copy_from_slice(&buf[..n]);
    count
}

/// The audit of `room` over the last hour, read from its event stream.
pub async fn audit(engine: &Engine, room: &str) -> Result<FifoAudit, DomainError> {
    let since = crate::clock::wall_ms().saturating_sub(AUDIT_WINDOW_MS);
    // Stream ids are `<ms>-<seq>`: everything after the last id of the millisecond
    // before the window.
    let mut after = format!("{}-{}", since.saturating_sub(1), u64::MAX);
    let mut events = Vec::new();
    while (events.len() as u64) < STREAM_KEEP * 2 {
        let page = engine
            .store
            .events(room, &after, PAGE)
            .await
            .map_err(|e| engine.store_failed("fifo_audit", room, e))?;
        let Some(last) = page.last() else { break };
        after = last.id.clone();
        let full = page.len() as u32 == PAGE;
        events.extend(page);
        if !full {
            break;
        }
    }
    Ok(FifoAudit::of_events(&events))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The O(n²) definition, to check the merge sort against.
    fn by_pairs(xs: &[u64]) -> u64 {
        let mut n = 0;
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                if xs[i] > xs[j] {
                    n += 1;
                }
            }
        }
        n
    }

    #[test]
    fn ticket_order_has_no_discordant_pairs() {
        let a = FifoAudit::of_tickets(&[1, 2, 3, 10, 20, 21]);
        assert_eq!(a.admissions, 6);
        assert_eq!(a.discordant_pairs, 0);
        assert_eq!(a.normalised, 0.0);
    }

    #[test]
    fn the_reverse_order_is_every_pair() {
        let a = FifoAudit::of_tickets(&[5, 4, 3, 2, 1]);
        assert_eq!(a.discordant_pairs, 10);
        assert_eq!(a.normalised, 1.0);
    }

    #[test]
    fn one_swap_is_one_pair_and_ties_are_not_discordant() {
        assert_eq!(discordant_pairs(&[1, 3, 2, 4]), 1);
        assert_eq!(discordant_pairs(&[2, 2, 2]), 0);
        assert_eq!(discordant_pairs(&[]), 0);
        assert_eq!(FifoAudit::of_tickets(&[7]).normalised, 0.0);
    }

    #[test]
    fn merge_sort_counts_as_the_definition_does() {
        // A small deterministic generator (xorshift): many shapes, with repeats.
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        for len in 0..200 {
            let xs: Vec<u64> = (0..len)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    s % 50
                })
                .collect();
            assert_eq!(discordant_pairs(&xs), by_pairs(&xs), "{xs:?}");
        }
    }

    #[test]
    fn a_large_reversed_run_is_counted_quickly() {
        let xs: Vec<u64> = (0..100_000).rev().collect();
        assert_eq!(discordant_pairs(&xs), 100_000 * 99_999 / 2);
    }

    #[test]
    fn only_admissions_with_a_ticket_count() {
        let ev = |kind: &str, ticket: Option<u64>| RoomEvent {
            id: "1-0".into(),
            kind: kind.into(),
            visitor: Some("v".into()),
            serial: Some(1),
            ticket,
        };
        let events = [
            ev("admission", Some(2)),
            ev("admission", None), // a walk-in
            ev("release", Some(1)),
            ev("admission", Some(1)),
        ];
        let a = FifoAudit::of_events(&events);
        assert_eq!(a.admissions, 2);
        assert_eq!(a.discordant_pairs, 1);
    }
}
