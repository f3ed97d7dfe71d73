//! A socket's mailbox: what the hub pushes to one socket. A tokio mpsc channel costs each
//! socket a cache-padded channel header and a 32-slot block up front (1,312 bytes measured
//! with heaptrack, `bench/heap_sockets.sh`); the hub sends a socket a message or two a
//! tick, so a queue behind a mutex and a [`Notify`] does, at about 200 bytes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::Push;

struct Inner {
    queue: Mutex<VecDeque<Push>>,
    notify: Notify,
    /// Live [`Sender`]s: none left and the queue empty ends the mailbox.
    senders: AtomicUsize,
    /// The socket's end is still there.
    open: AtomicBool,
}

/// The hub's end.
pub struct Sender(Arc<Inner>);

/// The socket's end.
pub struct Mailbox(Arc<Inner>);

/// A new mailbox and its sender.
pub fn mailbox() -> (Sender, Mailbox) {
    let inner = Arc::new(Inner {
        queue: Mutex::new(VecDeque::new()),
        notify: Notify::new(),
        senders: AtomicUsize::new(1),
        open: AtomicBool::new(true),
    });
    (Sender(inner.clone()), Mailbox(inner))
}

impl Sender {
    /// Queues `p`; `false` when the socket's end is gone.
    pub fn send(&self, p: Push) -> bool {
        if !self.0.open.load(Ordering::SeqCst) {
            return false;
        }
        // unwrap: the lock is only held to push or pop, which cannot panic.
        self.0.queue.lock().unwrap().push_back(p);
        self.0.notify.notify_one();
        true
    }
}

impl Clone for Sender {
    fn clone(&self) -> Self {
        self.0.senders.fetch_add(1, Ordering::SeqCst);
        Self(self.0.clone())
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if self.0.senders.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.notify.notify_one();
        }
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        self.0.open.store(false, Ordering::SeqCst);
        // unwrap: as in `send`. What was queued is not read any more.
        self.0.queue.lock().unwrap().clear();
    }
}

impl Mailbox {
    /// The next message, or `None` once every sender is gone and the queue is empty.
    /// Cancel-safe: a message is only taken when it is returned.
    pub async fn recv(&mut self) -> Option<Push> {
        loop {
            // unwrap: as in `send`.
            if let Some(p) = self.0.queue.lock().unwrap().pop_front() {
                return Some(p);
            }
            if self.0.senders.load(Ordering::SeqCst) == 0 {
                return None;
            }
            // A send between the checks above and this wait left a permit: no lost wakeup.
            self.0.notify.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_arrive_in_order_then_the_end_once_the_senders_are_gone() {
        let (tx, mut rx) = mailbox();
        let tx2 = tx.clone();
        assert!(tx.send(Push::Text("a".into())));
        assert!(tx2.send(Push::Close));
        drop(tx);
        assert!(matches!(rx.recv().await, Some(Push::Text(t)) if t == "a"));
        assert!(matches!(rx.recv().await, Some(Push::Close)));
        let waiting = tokio::spawn(async move { rx.recv().await.is_none() });
        tokio::task::yield_now().await;
        drop(tx2);
        assert!(waiting.await.unwrap(), "the end after the last sender left");
    }

    #[tokio::test]
    async fn a_send_to_a_closed_mailbox_says_so() {
        let (tx, rx) = mailbox();
        drop(rx);
        assert!(!tx.send(Push::Close));
    }

    #[tokio::test]
    async fn a_waiting_socket_wakes_for_a_message() {
        let (tx, mut rx) = mailbox();
        let got = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        tx.send(Push::Text("x".into()));
        assert!(matches!(got.await.unwrap(), Some(Push::Text(t)) if t == "x"));
    }
}
