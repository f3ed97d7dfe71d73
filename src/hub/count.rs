//! Counting a socket's position locally from the line log (docs/design.md#socket-updates).
//!
//! In a room without lanes every new place is at the back, so between two reads of the
//! log a place moves only for entries ahead of it: each place that left the line with a
//! lower ticket moves it up one, each place put back with a lower ticket moves it down
//! one. [`Shifts`] sorts the tickets of the entries after one cursor once, so each
//! socket's new position is two binary searches.

use std::collections::HashMap;

use crate::store::{LineChange, Placed, WatchEntry};

/// One socket's place as the hub counts it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// The place's ticket (0: no place).
    pub ticket: u64,
    pub position: u64,
    /// The line log's seq these are exact at.
    pub at: u64,
    /// Read from the store since connecting (or since the log last lost track of it).
    pub synced: bool,
}

impl Counted {
    /// Where the visitor stands, read from the store, exact at log seq `at`.
    pub fn place_at(&mut self, p: &Placed, at: u64) {
        self.synced = true;
        self.at = at;
        (self.ticket, self.position) = match p.entry {
            WatchEntry::Queued { position } => (p.ticket, position),
            WatchEntry::Admitted(_) | WatchEntry::Gone => (0, 0),
        };
    }
}

/// Something that holds a [`Counted`] place; `None` when it needs no counting (a socket
/// already told of its admission).
pub trait Counts {
    fn counted(&mut self) -> Option<&mut Counted>;
}

impl Counts for Counted {
    fn counted(&mut self) -> Option<&mut Counted> {
        Some(self)
    }
}

/// Applies the line log's `changes` (every entry after the room's last cursor, up to
/// `seq`) to each socket's position; a socket whose own place is in the log is marked
/// unsynced, to be read again.
pub fn recount<T: Counts>(sockets: &mut HashMap<String, T>, changes: &[LineChange], seq: u64) {
    for c in changes {
        if let Some(w) = sockets.get_mut(&c.visitor).and_then(Counts::counted) {
            if c.seq > w.at {
                w.synced = false;
            }
        }
    }
    // Sockets read at different cursors (most share the last one): one Shifts each.
    let mut shifts: Vec<Shifts> = Vec::new();
    for w in sockets.values_mut().filter_map(Counts::counted) {
        if !w.synced {
            continue;
        }
        if w.ticket > 0 && w.at < seq {
            let i = match shifts.iter().position(|s| s.at == w.at) {
                Some(i) => i,
                None => {
                    shifts.push(Shifts::after(changes, w.at));
                    shifts.len() - 1
                }
            };
            w.position = shifts[i].apply(w.position, w.ticket);
        }
        w.at = w.at.max(seq);
    }
}

/// The entries of the log after `at`, as sorted tickets.
pub struct Shifts {
    pub at: u64,
    left: Vec<u64>,
    back: Vec<u64>,
}

impl Shifts {
    pub fn after(changes: &[LineChange], at: u64) -> Self {
        let mut left = Vec::new();
        let mut back = Vec::new();
        for c in changes.iter().filter(|c| c.seq > at) {
            if c.back {
                back.push(c.ticket);
            } else {
                left.push(c.ticket);
            }
        }
        left.sort_unstable();
        back.sort_unstable();
        Self { at, left, back }
    }

    /// The new position of the place `ticket` that stood at `position` at cursor `at`.
    pub fn apply(&self, position: u64, ticket: u64) -> u64 {
        let ahead_left = self.left.partition_point(|t| *t < ticket) as u64;
        let ahead_back = self.back.partition_point(|t| *t < ticket) as u64;
        (position + ahead_back).saturating_sub(ahead_left).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(seq: u64, ticket: u64, back: bool) -> LineChange {
        LineChange {
            seq,
            ticket,
            visitor: format!("v{ticket}"),
            back,
        }
    }

    #[test]
    fn only_entries_after_the_cursor_and_ahead_of_the_place_count() {
        let log = [
            change(1, 1000, false), // before the cursor: already counted
            change(2, 2000, false),
            change(3, 9000, false), // behind the place
            change(4, 1500, true),
            change(5, 3000, false),
        ];
        let s = Shifts::after(&log, 1);
        // Place 5000 at position 5: 2000 and 3000 left ahead of it, 1500 came back.
        assert_eq!(s.apply(5, 5000), 4);
        // Place 2500 at position 3: 2000 left, 1500 came back.
        assert_eq!(s.apply(3, 2500), 3);
    }
}
