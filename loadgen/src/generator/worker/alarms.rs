//! The turns of a worker's sessions that wait for their due time, each woken by the worker's
//! one pacer when it is due (so a turn's schedule lag is measured like a single request's).

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use tokio::sync::{oneshot, Notify};

/// Turns waiting for their due time, earliest first, each woken by the worker's pacer.
#[derive(Debug, Default)]
pub(super) struct Alarms {
    due: RefCell<BinaryHeap<Reverse<(u64, u64)>>>,
    waiting: RefCell<HashMap<u64, oneshot::Sender<u64>>>,
    next_id: Cell<u64>,
    /// An earlier due time, or a session that ended, for the pacer to look again.
    pub(super) changed: Notify,
    /// The run stopped: no turn waits any more.
    stopped: Cell<bool>,
}

impl Alarms {
    /// Resolves at `due_ns` with when the pacer got to it; `Err` when the run stopped first.
    pub(super) async fn at(&self, due_ns: u64) -> Result<u64, oneshot::error::RecvError> {
        if self.stopped.get() {
            // A dropped sender: the same answer as a turn that was waiting when the run stopped.
            let (tx, rx) = oneshot::channel::<u64>();
            drop(tx);
            return rx.await;
        }
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().insert(id, tx);
        self.due.borrow_mut().push(Reverse((due_ns, id)));
        self.changed.notify_one();
        rx.await
    }

    pub(super) fn earliest(&self) -> Option<u64> {
        self.due.borrow().peek().map(|Reverse((due, _))| *due)
    }

    /// Wakes every turn due by `now_ns`.
    pub(super) fn fire(&self, now_ns: u64) {
        let mut due = self.due.borrow_mut();
        while let Some(Reverse((at, id))) = due.peek().copied() {
            if at > now_ns {
                break;
            }
            due.pop();
            if let Some(tx) = self.waiting.borrow_mut().remove(&id) {
                let _ = tx.send(now_ns);
            }
        }
    }

    /// Wakes no one again: every waiting turn learns the run stopped.
    pub(super) fn stop(&self) {
        self.stopped.set(true);
        self.due.borrow_mut().clear();
        self.waiting.borrow_mut().clear();
    }
}
