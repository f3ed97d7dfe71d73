use super::RankIndex;
use std::collections::BTreeMap;

#[test]
fn rank_index_matches_a_plain_count_through_rebuilds() {
    let mut q = BTreeMap::new();
    let mut r = RankIndex::default();
    let mut next = 1u64;
    for round in 0..50u64 {
        for _ in 0..7 {
            q.insert(next, String::new());
            if r.fits(next) {
                r.add(next, 1);
            } else {
                r.rebuild(&q);
            }
            next += 1;
        }
        // Remove a few from the head and the middle.
        let remove: Vec<u64> = q
            .keys()
            .copied()
            .filter(|t| (t + round) % 3 == 0)
            .take(4)
            .collect();
        for t in remove {
            q.remove(&t);
            r.add(t, -1);
        }
        for t in q.keys() {
            assert_eq!(r.rank(*t), q.range(..=*t).count() as u64, "ticket {t}");
        }
    }
    assert!(
        r.tree.len() < 1024,
        "memory follows the queue span: {}",
        r.tree.len()
    );
}

#[test]
fn a_rebuilt_rank_index_is_the_one_adds_would_build() {
    // Tickets with gaps (places that left), over several rebuild sizes.
    for n in [1u64, 2, 3, 17, 64, 1000] {
        let q: BTreeMap<u64, String> = (0..n)
            .map(|i| (100 + i * 3 - i % 2, String::new()))
            .collect();
        let mut built = RankIndex::default();
        built.rebuild(&q);
        let mut added = RankIndex {
            base: built.base,
            tree: vec![0; built.tree.len()],
        };
        for t in q.keys() {
            added.add(*t, 1);
        }
        assert_eq!(built.tree, added.tree, "{n} tickets");
    }
}
