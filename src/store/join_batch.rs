//! Joins taken together (group commit): while one call for a room is in flight from this
//! instance, the joins to that room that arrive meanwhile wait, and go to the store
//! together in the next call, in arrival order. Nothing waits on a timer: a join that
//! finds no call in flight goes at once, alone, so a quiet room answers as fast as
//! before, and under load each call carries what arrived during the previous one. The
//! store's work per join shrinks because the room's settings, the clock and the reply's
//! room-wide figures are read once per call, and the per-call overhead is paid once
//! ([design](../../docs/design.md#joins-taken-together)).
//!
//! Each call is driven by a spawned task, not by the request that happened to start it,
//! so a request given up half-way (a client that hung up) never strands the joins that
//! wait behind it. A call that fails fails every join it carried, and the joins that
//! were waiting for it too: they would have gone to the same unreachable store (each
//! join is idempotent, so the retry that follows is safe).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::{StoreError, StoreResult};

/// What one call gives back: a result per item, in the items' order, or one error for
/// all of them when the call itself failed (`Unavailable` also fails the items waiting
/// for the call).
pub type BatchFuture<O> = Pin<Box<dyn Future<Output = StoreResult<Vec<StoreResult<O>>>> + Send>>;

/// The call that takes one batch of a room's items.
type Run<I, O> = dyn Fn(String, Vec<I>) -> BatchFuture<O> + Send + Sync;

/// Per room, the items waiting for the call in flight (present only while one is).
type Waiting<I, O> = Mutex<HashMap<String, Vec<Waiter<I, O>>>>;

struct Waiter<I, O> {
    item: I,
    tx: oneshot::Sender<StoreResult<O>>,
}

struct Inner<I, O> {
    rooms: Waiting<I, O>,
    max: usize,
    run: Box<Run<I, O>>,
}

/// Takes items per room in batches of at most `max`, one call in flight per room. Clones
/// share the batches.
pub struct Batcher<I, O> {
    inner: Arc<Inner<I, O>>,
}

impl<I, O> Clone for Batcher<I, O> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<I: Send + 'static, O: Send + 'static> Batcher<I, O> {
    /// `run(room, items)` takes one batch (1 to `max` items).
    pub fn new(
        max: usize,
        run: impl Fn(String, Vec<I>) -> BatchFuture<O> + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                rooms: Mutex::new(HashMap::new()),
                max: max.max(1),
                run: Box::new(run),
            }),
        }
    }

    /// `item`'s result, from the next call for `room`.
    pub async fn submit(&self, room: &str, item: I) -> StoreResult<O> {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter { item, tx };
        let lead = {
            let mut rooms = self.inner.rooms.lock().unwrap_or_else(|e| e.into_inner());
            match rooms.get_mut(room) {
                Some(waiting) => {
                    waiting.push(waiter);
                    None
                }
                None => {
                    rooms.insert(room.to_string(), Vec::new());
                    Some(waiter)
                }
            }
        };
        if let Some(waiter) = lead {
            tokio::spawn(drive(self.inner.clone(), room.to_string(), vec![waiter]));
        }
        rx.await
            .unwrap_or_else(|_| Err(StoreError::Unavailable("the join's call was lost".into())))
    }
}

/// Makes the room's calls until nobody waits: the batch in hand, then each time what
/// arrived meanwhile (at most `max`).
async fn drive<I, O>(inner: Arc<Inner<I, O>>, room: String, mut batch: Vec<Waiter<I, O>>) {
    let mut guard = Forget {
        inner: &inner,
        room: &room,
        armed: true,
    };
    loop {
        let (items, txs): (Vec<I>, Vec<_>) = batch.into_iter().map(|w| (w.item, w.tx)).unzip();
        let unreachable = match (inner.run)(room.clone(), items).await {
            Ok(results) if results.len() == txs.len() => {
                for (tx, r) in txs.into_iter().zip(results) {
                    let _ = tx.send(r);
                }
                None
            }
            Ok(_) => {
                fail_all(txs, &StoreError::Protocol("a batch's reply count".into()));
                None
            }
            Err(e) => {
                fail_all(txs, &e);
                matches!(e, StoreError::Unavailable(_)).then_some(e)
            }
        };
        let mut rooms = inner.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let Some(waiting) = rooms.get_mut(&room) else {
            guard.armed = false;
            return;
        };
        if let Some(e) = unreachable {
            // The joins that waited for this call would go to the same unreachable store:
            // they are told at once rather than after a timeout of their own.
            let waited = std::mem::take(waiting);
            rooms.remove(&room);
            drop(rooms);
            guard.armed = false;
            fail_all(waited.into_iter().map(|w| w.tx), &e);
            return;
        }
        if waiting.is_empty() {
            rooms.remove(&room);
            guard.armed = false;
            return;
        }
        let take = waiting.len().min(inner.max);
        batch = waiting.drain(..take).collect();
    }
}

fn fail_all<O>(txs: impl IntoIterator<Item = oneshot::Sender<StoreResult<O>>>, e: &StoreError) {
    for tx in txs {
        let _ = tx.send(Err(e.clone()));
    }
}

/// Should a call panic, the room is freed and its waiting joins are told (their senders
/// dropped), so later joins to it start afresh.
struct Forget<'a, I, O> {
    inner: &'a Inner<I, O>,
    room: &'a str,
    armed: bool,
}

impl<I, O> Drop for Forget<'_, I, O> {
    fn drop(&mut self) {
        if self.armed {
            let mut rooms = self.inner.rooms.lock().unwrap_or_else(|e| e.into_inner());
            rooms.remove(self.room);
        }
    }
}

#[cfg(test)]
impl<I, O> Batcher<I, O> {
    /// How many items wait for `room`'s call in flight (None: no call in flight).
    fn waiting(&self, room: &str) -> Option<usize> {
        let rooms = self.inner.rooms.lock().unwrap();
        rooms.get(room).map(Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::Semaphore;
    use tokio::task::JoinHandle;

    use super::*;

    /// A batcher whose calls record their items and then wait for a permit of `gate`;
    /// `answer` gives a call's reply from its items.
    struct Rig {
        batcher: Batcher<u32, u32>,
        calls: Arc<Mutex<Vec<Vec<u32>>>>,
        gate: Arc<Semaphore>,
    }

    fn rig(max: usize, answer: fn(&[u32]) -> StoreResult<Vec<StoreResult<u32>>>) -> Rig {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new(Semaphore::new(0));
        let (c, g) = (calls.clone(), gate.clone());
        let batcher = Batcher::new(max, move |_room: String, items: Vec<u32>| {
            let (c, g) = (c.clone(), g.clone());
            Box::pin(async move {
                c.lock().unwrap().push(items.clone());
                g.acquire().await.unwrap().forget();
                answer(&items)
            }) as BatchFuture<u32>
        });
        Rig {
            batcher,
            calls,
            gate,
        }
    }

    /// Each item's reply is the item times ten.
    fn tens(items: &[u32]) -> StoreResult<Vec<StoreResult<u32>>> {
        Ok(items.iter().map(|i| Ok(i * 10)).collect())
    }

    impl Rig {
        fn submit(&self, room: &'static str, item: u32) -> JoinHandle<StoreResult<u32>> {
            let b = self.batcher.clone();
            tokio::spawn(async move { b.submit(room, item).await })
        }

        fn calls(&self) -> Vec<Vec<u32>> {
            self.calls.lock().unwrap().clone()
        }

        /// Waits (deadline 5 s) until `what` holds.
        async fn until(&self, what: &str, f: impl Fn(&Self) -> bool) {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            while !f(self) {
                assert!(tokio::time::Instant::now() < deadline, "waited for {what}");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }

        /// Submits `items` to `room` one at a time, each once the one before waits.
        async fn queue_up(
            &self,
            room: &'static str,
            items: &[u32],
        ) -> Vec<JoinHandle<StoreResult<u32>>> {
            let before = self.batcher.waiting(room).unwrap_or(0);
            let mut out = Vec::new();
            for (k, &i) in items.iter().enumerate() {
                out.push(self.submit(room, i));
                self.until("the item to wait", |r| {
                    r.batcher.waiting(room) == Some(before + k + 1)
                })
                .await;
            }
            out
        }
    }

    async fn results(hs: Vec<JoinHandle<StoreResult<u32>>>) -> Vec<StoreResult<u32>> {
        let mut out = Vec::new();
        for h in hs {
            out.push(h.await.unwrap());
        }
        out
    }

    fn ok(v: &[StoreResult<u32>]) -> Vec<u32> {
        v.iter().map(|r| *r.as_ref().unwrap()).collect()
    }

    #[tokio::test]
    async fn a_lone_item_goes_at_once_alone_and_frees_the_room() {
        let r = rig(64, tens);
        r.gate.add_permits(1);
        assert_eq!(r.batcher.submit("a", 7).await.unwrap(), 70);
        assert_eq!(r.calls(), vec![vec![7]]);
        r.until("the room to be free", |r| r.batcher.waiting("a").is_none())
            .await;
    }

    #[tokio::test]
    async fn items_arriving_during_a_call_go_together_in_the_next_in_arrival_order() {
        let r = rig(64, tens);
        let first = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let rest = r.queue_up("a", &[2, 3, 4, 5, 6]).await;
        assert_eq!(r.calls(), vec![vec![1]], "nothing else sent meanwhile");
        r.gate.add_permits(2);
        assert_eq!(first.await.unwrap().unwrap(), 10);
        assert_eq!(ok(&results(rest).await), [20, 30, 40, 50, 60]);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3, 4, 5, 6]]);
    }

    #[tokio::test]
    async fn a_call_carries_at_most_max_items() {
        let r = rig(2, tens);
        let first = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let rest = r.queue_up("a", &[2, 3, 4, 5, 6]).await;
        r.gate.add_permits(4);
        first.await.unwrap().unwrap();
        assert_eq!(ok(&results(rest).await), [20, 30, 40, 50, 60]);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3], vec![4, 5], vec![6]]);
    }

    #[tokio::test]
    async fn an_unreachable_store_fails_the_carried_and_the_waiting_at_once() {
        let r = rig(64, |_| Err(StoreError::Unavailable("gone".into())));
        let first = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let rest = r.queue_up("a", &[2, 3]).await;
        r.gate.add_permits(1);
        assert!(matches!(
            first.await.unwrap(),
            Err(StoreError::Unavailable(_))
        ));
        for res in results(rest).await {
            assert!(matches!(res, Err(StoreError::Unavailable(ref m)) if m == "gone"));
        }
        assert_eq!(r.calls(), vec![vec![1]], "the waiting were not sent");
        // The room is free again: the next item goes at once.
        r.gate.add_permits(1);
        let next = r.submit("a", 4);
        assert!(next.await.unwrap().is_err());
        assert_eq!(r.calls(), vec![vec![1], vec![4]]);
    }

    #[tokio::test]
    async fn a_call_refused_fails_only_what_it_carried() {
        let r = rig(64, |items| {
            if items == [1] {
                Err(StoreError::NoSuchRoom)
            } else {
                tens(items)
            }
        });
        let first = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let rest = r.queue_up("a", &[2, 3]).await;
        r.gate.add_permits(2);
        assert!(matches!(first.await.unwrap(), Err(StoreError::NoSuchRoom)));
        assert_eq!(ok(&results(rest).await), [20, 30]);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3]]);
    }

    #[tokio::test]
    async fn a_reply_of_the_wrong_length_is_an_error_for_each_item() {
        let r = rig(64, |_| Ok(vec![Ok(1)]));
        let first = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let rest = r.queue_up("a", &[2, 3]).await;
        r.gate.add_permits(2);
        assert_eq!(first.await.unwrap().unwrap(), 1, "one item, one reply");
        for res in results(rest).await {
            assert!(matches!(res, Err(StoreError::Protocol(_))), "{res:?}");
        }
    }

    #[tokio::test]
    async fn a_caller_that_gives_up_strands_nobody() {
        let r = rig(64, tens);
        let first = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let rest = r.queue_up("a", &[2, 3]).await;
        // The request that started the call is dropped, and so is one that waits.
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        let mut rest = rest.into_iter();
        let two = rest.next().unwrap();
        two.abort();
        let _ = two.await;
        r.gate.add_permits(2);
        assert_eq!(rest.next().unwrap().await.unwrap().unwrap(), 30);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3]]);
        r.until("the room to be free", |r| r.batcher.waiting("a").is_none())
            .await;
    }

    #[tokio::test]
    async fn rooms_do_not_wait_for_each_other() {
        let r = rig(64, tens);
        let a = r.submit("a", 1);
        r.until("room a's call", |r| r.calls().len() == 1).await;
        r.gate.add_permits(1);
        // Room a's call may take this permit first; b is not held behind a either way.
        let b = r.submit("b", 2);
        r.gate.add_permits(1);
        assert_eq!(b.await.unwrap().unwrap(), 20);
        assert_eq!(a.await.unwrap().unwrap(), 10);
        assert_eq!(r.calls().len(), 2);
    }
}
