//! Joins taken together (group commit): while an instance has its most calls for a room
//! in flight (two), the joins to that room that arrive meanwhile wait, and go to the store
//! together in the next call, in arrival order. Nothing waits on a timer: a join that
//! finds a call free goes at once, alone, so a quiet room answers as fast as before, and
//! under load each call carries what arrived while the others ran. The store's work per
//! join shrinks because the room's settings, the clock and the reply's room-wide figures
//! are read once per call, and the per-call overhead is paid once. Two calls, not one,
//! so the store always has the next batch in hand when it finishes one (with one, Redis
//! sat idle for each round trip: 63-72 % busy at the 16-core machine's best figure)
//! ([design](../../docs/design.md#joins-taken-together)).
//!
//! The calls are made by a spawned task, not by the request that happened to start them,
//! so a request given up half-way (a client that hung up) never strands the joins that
//! wait behind it; that one task sends them in the order their items arrived. A call
//! that fails fails every join it carried, and, when the store is unreachable, the joins
//! waiting too: they would have gone to the same store (each join is idempotent, so the
//! retry that follows is safe).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{oneshot, Notify};

use super::{StoreError, StoreResult};

/// What one call gives back: a result per item, in the items' order, or one error for
/// all of them when the call itself failed (`Unavailable` also fails the items waiting
/// for the call).
pub type BatchFuture<O> = Pin<Box<dyn Future<Output = StoreResult<Vec<StoreResult<O>>>> + Send>>;

/// The call that takes one batch of a room's items.
type Run<I, O> = dyn Fn(String, Vec<I>) -> BatchFuture<O> + Send + Sync;

struct Waiter<I, O> {
    item: I,
    tx: oneshot::Sender<StoreResult<O>>,
}

/// A room with a driver: the items waiting, how many calls are in flight, and how to
/// tell the driver that an item came while a call could start.
struct Room<I, O> {
    waiting: Vec<Waiter<I, O>>,
    in_flight: usize,
    wake: Arc<Notify>,
}

struct Inner<I, O> {
    rooms: Mutex<HashMap<String, Room<I, O>>>,
    max: usize,
    calls: usize,
    run: Box<Run<I, O>>,
}

impl<I, O> Inner<I, O> {
    fn rooms(&self) -> std::sync::MutexGuard<'_, HashMap<String, Room<I, O>>> {
        self.rooms.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Takes items per room in batches of at most `max`, at most `calls` calls in flight per
/// room. Clones share the batches.
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
    /// `run(room, items)` takes one batch (1 to `max` items); at most `calls` of them run
    /// at once for one room, started in the order their items arrived.
    pub fn new(
        max: usize,
        calls: usize,
        run: impl Fn(String, Vec<I>) -> BatchFuture<O> + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                rooms: Mutex::new(HashMap::new()),
                max: max.max(1),
                calls: calls.max(1),
                run: Box::new(run),
            }),
        }
    }

    /// `item`'s result, from a call for `room`.
    pub async fn submit(&self, room: &str, item: I) -> StoreResult<O> {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter { item, tx };
        let start = {
            let mut rooms = self.inner.rooms();
            match rooms.get_mut(room) {
                Some(r) => {
                    r.waiting.push(waiter);
                    if r.in_flight < self.inner.calls {
                        r.wake.notify_one();
                    }
                    None
                }
                None => {
                    let wake = Arc::new(Notify::new());
                    rooms.insert(
                        room.to_string(),
                        Room {
                            waiting: vec![waiter],
                            in_flight: 0,
                            wake: wake.clone(),
                        },
                    );
                    Some(wake)
                }
            }
        };
        if let Some(wake) = start {
            tokio::spawn(drive(self.inner.clone(), room.to_string(), wake));
        }
        rx.await
            .unwrap_or_else(|_| Err(StoreError::Unavailable("the join's call was lost".into())))
    }
}

/// A call in flight, with the senders of the items it carries.
type Call<O> =
    Pin<Box<dyn Future<Output = (CallResult<O>, Vec<oneshot::Sender<StoreResult<O>>>)> + Send>>;
type CallResult<O> = StoreResult<Vec<StoreResult<O>>>;

/// Makes the room's calls until nobody waits and none is in flight: whenever fewer than
/// `calls` are in flight, the items waiting (at most `max`) go in a new one. One task
/// starts them all, each polled once as it is made (which sends it), so they reach the
/// store in the order their items arrived.
async fn drive<I: Send + 'static, O: Send + 'static>(
    inner: Arc<Inner<I, O>>,
    room: String,
    wake: Arc<Notify>,
) {
    let mut guard = Forget {
        inner: &inner,
        room: &room,
        armed: true,
    };
    let mut calls: FuturesUnordered<Call<O>> = FuturesUnordered::new();
    loop {
        // Start what may start; finish when nothing waits and nothing is in flight.
        loop {
            let batch = {
                let mut rooms = inner.rooms();
                let Some(r) = rooms.get_mut(&room) else {
                    guard.armed = false;
                    return;
                };
                if r.waiting.is_empty() || calls.len() >= inner.calls {
                    if calls.is_empty() {
                        rooms.remove(&room);
                        guard.armed = false;
                        return;
                    }
                    r.in_flight = calls.len();
                    break;
                }
                let take = r.waiting.len().min(inner.max);
                let batch: Vec<_> = r.waiting.drain(..take).collect();
                r.in_flight = calls.len() + 1;
                batch
            };
            let (items, txs): (Vec<I>, Vec<_>) = batch.into_iter().map(|w| (w.item, w.tx)).unzip();
            let run = (inner.run)(room.clone(), items);
            let mut call: Call<O> = Box::pin(async move { (run.await, txs) });
            // Polled once now, so it is sent before any call started after it.
            match futures_util::poll!(call.as_mut()) {
                Poll::Ready((result, txs)) => finish(&inner, &room, result, txs),
                Poll::Pending => calls.push(call),
            }
        }
        tokio::select! {
            Some((result, txs)) = calls.next() => finish(&inner, &room, result, txs),
            _ = wake.notified() => {}
        }
    }
}

/// Hands a call's results to its items. A call that found the store unreachable fails
/// its items and the items waiting (they would go to the same store): they are told at
/// once rather than after timeouts of their own.
fn finish<I, O>(
    inner: &Inner<I, O>,
    room: &str,
    result: CallResult<O>,
    txs: Vec<oneshot::Sender<StoreResult<O>>>,
) {
    match result {
        Ok(results) if results.len() == txs.len() => {
            for (tx, r) in txs.into_iter().zip(results) {
                let _ = tx.send(r);
            }
        }
        Ok(_) => fail_all(txs, &StoreError::Protocol("a batch's reply count".into())),
        Err(e) => {
            fail_all(txs, &e);
            if matches!(e, StoreError::Unavailable(_)) {
                let waited = inner
                    .rooms()
                    .get_mut(room)
                    .map(|r| std::mem::take(&mut r.waiting))
                    .unwrap_or_default();
                fail_all(waited.into_iter().map(|w| w.tx), &e);
            }
        }
    }
}

fn fail_all<O>(txs: impl IntoIterator<Item = oneshot::Sender<StoreResult<O>>>, e: &StoreError) {
    for tx in txs {
        let _ = tx.send(Err(e.clone()));
    }
}

/// Should the driver panic, the room is freed and its waiting items are told (their
/// senders dropped), so later items start afresh.
struct Forget<'a, I, O> {
    inner: &'a Inner<I, O>,
    room: &'a str,
    armed: bool,
}

impl<I, O> Drop for Forget<'_, I, O> {
    fn drop(&mut self) {
        if self.armed {
            self.inner.rooms().remove(self.room);
        }
    }
}

#[cfg(test)]
impl<I, O> Batcher<I, O> {
    /// How many items wait for `room`'s calls (None: the room has no driver).
    fn waiting(&self, room: &str) -> Option<usize> {
        self.inner.rooms().get(room).map(|r| r.waiting.len())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::Semaphore;
    use tokio::task::JoinHandle;

    use super::*;

    /// A batcher whose calls record their items as they start and then wait for a permit
    /// of `gate` (permits go to the calls in the order they asked);
    /// `answer` gives a call's reply from its items.
    struct Rig {
        batcher: Batcher<u32, u32>,
        calls: Arc<Mutex<Vec<Vec<u32>>>>,
        gate: Arc<Semaphore>,
    }

    fn rig(
        max: usize,
        in_flight: usize,
        answer: fn(&[u32]) -> StoreResult<Vec<StoreResult<u32>>>,
    ) -> Rig {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new(Semaphore::new(0));
        let (c, g) = (calls.clone(), gate.clone());
        let batcher = Batcher::new(max, in_flight, move |_room: String, items: Vec<u32>| {
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

        /// `first` sent to room "a", then, once its call has started, `rest` one at a
        /// time, each once the one before waits: the handles of `first` and of `rest`.
        async fn busy_with(
            &self,
            first: u32,
            rest: &[u32],
        ) -> (
            JoinHandle<StoreResult<u32>>,
            Vec<JoinHandle<StoreResult<u32>>>,
        ) {
            let calls = self.calls().len();
            let h = self.submit("a", first);
            self.until("the first call", |r| r.calls().len() == calls + 1)
                .await;
            (h, self.queue_up("a", rest).await)
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
        let r = rig(64, 1, tens);
        r.gate.add_permits(1);
        assert_eq!(r.batcher.submit("a", 7).await.unwrap(), 70);
        assert_eq!(r.calls(), vec![vec![7]]);
        r.until("the room to be free", |r| r.batcher.waiting("a").is_none())
            .await;
    }

    #[tokio::test]
    async fn items_arriving_during_a_call_go_together_in_the_next_in_arrival_order() {
        let r = rig(64, 1, tens);
        let (first, rest) = r.busy_with(1, &[2, 3, 4, 5, 6]).await;
        assert_eq!(r.calls(), vec![vec![1]], "nothing else sent meanwhile");
        r.gate.add_permits(2);
        assert_eq!(first.await.unwrap().unwrap(), 10);
        assert_eq!(ok(&results(rest).await), [20, 30, 40, 50, 60]);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3, 4, 5, 6]]);
    }

    #[tokio::test]
    async fn a_call_carries_at_most_max_items() {
        let r = rig(2, 1, tens);
        let (first, rest) = r.busy_with(1, &[2, 3, 4, 5, 6]).await;
        r.gate.add_permits(4);
        first.await.unwrap().unwrap();
        assert_eq!(ok(&results(rest).await), [20, 30, 40, 50, 60]);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3], vec![4, 5], vec![6]]);
    }

    #[tokio::test]
    async fn an_unreachable_store_fails_the_carried_and_the_waiting_at_once() {
        let r = rig(64, 1, |_| Err(StoreError::Unavailable("gone".into())));
        let (first, rest) = r.busy_with(1, &[2, 3]).await;
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
        let r = rig(64, 1, |items| {
            if items == [1] {
                Err(StoreError::NoSuchRoom)
            } else {
                tens(items)
            }
        });
        let (first, rest) = r.busy_with(1, &[2, 3]).await;
        r.gate.add_permits(2);
        assert!(matches!(first.await.unwrap(), Err(StoreError::NoSuchRoom)));
        assert_eq!(ok(&results(rest).await), [20, 30]);
        assert_eq!(r.calls(), vec![vec![1], vec![2, 3]]);
    }

    #[tokio::test]
    async fn a_reply_of_the_wrong_length_is_an_error_for_each_item() {
        let r = rig(64, 1, |_| Ok(vec![Ok(1)]));
        let (first, rest) = r.busy_with(1, &[2, 3]).await;
        r.gate.add_permits(2);
        assert_eq!(first.await.unwrap().unwrap(), 1, "one item, one reply");
        for res in results(rest).await {
            assert!(matches!(res, Err(StoreError::Protocol(_))), "{res:?}");
        }
    }

    #[tokio::test]
    async fn a_caller_that_gives_up_strands_nobody() {
        let r = rig(64, 1, tens);
        let (first, rest) = r.busy_with(1, &[2, 3]).await;
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
    async fn with_two_calls_a_second_starts_at_once_and_the_rest_wait_for_a_free_one() {
        let r = rig(64, 2, tens);
        let one = r.submit("a", 1);
        r.until("the first call", |r| r.calls().len() == 1).await;
        let two = r.submit("a", 2);
        r.until("the second call", |r| r.calls().len() == 2).await;
        let rest = r.queue_up("a", &[3, 4, 5]).await;
        assert_eq!(r.calls(), vec![vec![1], vec![2]], "two calls at most");
        r.gate.add_permits(1);
        assert_eq!(one.await.unwrap().unwrap(), 10);
        r.until("the third call", |r| r.calls().len() == 3).await;
        assert_eq!(r.calls()[2], [3, 4, 5], "what waited goes next, in order");
        r.gate.add_permits(2);
        assert_eq!(two.await.unwrap().unwrap(), 20);
        assert_eq!(ok(&results(rest).await), [30, 40, 50]);
        r.until("the room to be free", |r| r.batcher.waiting("a").is_none())
            .await;
    }

    #[tokio::test]
    async fn rooms_do_not_wait_for_each_other() {
        let r = rig(64, 1, tens);
        let a = r.submit("a", 1);
        r.until("room a's call", |r| r.calls().len() == 1).await;
        // Room a's call is still in flight (no permit yet): b's starts beside it.
        let b = r.submit("b", 2);
        r.until("room b's call", |r| r.calls().len() == 2).await;
        assert_eq!(r.calls(), vec![vec![1], vec![2]]);
        r.gate.add_permits(2);
        assert_eq!(b.await.unwrap().unwrap(), 20);
        assert_eq!(a.await.unwrap().unwrap(), 10);
    }
}
