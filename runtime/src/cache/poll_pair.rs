//! [`join_pair`]: two futures of one task — an informer's reflector, which fills its queue,
//! and its delta loop, which drains it — polled together, each only when it was woken, the
//! producer first.
//!
//! The delta loop sleeps on the queue when it is empty; the reflector's next push wakes it.
//! Both run in one task, so that wake comes while the task is being polled. Under
//! `tokio::join!` it marks the whole task to run again: on a quiet watch (events arriving
//! one at a time) every event cost a second poll of the task, and every poll polled both
//! futures — the reflector's stream, its idle timer and its cancellation futures (each a
//! lock) for nothing. Here each future gets a waker of its own that records it is due; a
//! wake during a pass (the reflector's push) is seen later in that same pass, since the
//! delta loop is polled after the reflector. Only a wake from outside a pass (from another
//! task or thread, or one a future leaves for itself) wakes the task. (client-go runs the
//! two as goroutines joined by the queue's condition variable; this is the same hand-off
//! without a second scheduling.)

use std::{
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
};

use futures::task::AtomicWaker;

/// What the two futures' wakers share.
struct Pass {
    /// The pair is being polled: a wake now is seen before the pass ends.
    polling: AtomicBool,
    /// The task's own waker, as of the last pass.
    task: AtomicWaker,
}

/// One future's waker: marks it due, and wakes the task unless a pass will see that.
struct Due {
    due: AtomicBool,
    pass: Arc<Pass>,
}

impl Wake for Due {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SeqCst pairs with the pass's end: either the pass sees `due`, or this sees the
        // pass over and wakes the task.
        self.due.store(true, Ordering::SeqCst);
        if !self.pass.polling.load(Ordering::SeqCst) {
            self.pass.task.wake();
        }
    }
}

/// One of the pair (boxed, so the pair moves freely), with its waker; `None` once it has
/// completed.
struct Side<'a> {
    future: Option<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>,
    due: Arc<Due>,
    waker: Waker,
}

impl<'a> Side<'a> {
    fn new(future: impl Future<Output = ()> + Send + 'a, pass: &Arc<Pass>) -> Self {
        let due = Arc::new(Due {
            // Polled in the first pass.
            due: AtomicBool::new(true),
            pass: pass.clone(),
        });
        Self {
            future: Some(Box::pin(future)),
            waker: Waker::from(due.clone()),
            due,
        }
    }

    /// Polls the future if it is due; true once it has completed.
    fn poll_if_due(&mut self) -> bool {
        let Some(future) = self.future.as_mut() else {
            return true;
        };
        if !self.due.due.swap(false, Ordering::SeqCst) {
            return false;
        }
        let done = future
            .as_mut()
            .poll(&mut Context::from_waker(&self.waker))
            .is_ready();
        if done {
            self.future = None;
        }
        done
    }

    fn is_due(&self) -> bool {
        self.future.is_some() && self.due.due.load(Ordering::SeqCst)
    }
}

/// Runs `producer` and `consumer` to completion in the calling task (both, as
/// `tokio::join!` does), each polled only when woken, `producer` first in every pass.
pub(crate) async fn join_pair(
    producer: impl Future<Output = ()> + Send,
    consumer: impl Future<Output = ()> + Send,
) {
    let pass = Arc::new(Pass {
        polling: AtomicBool::new(false),
        task: AtomicWaker::new(),
    });
    let mut producer = Side::new(producer, &pass);
    let mut consumer = Side::new(consumer, &pass);
    std::future::poll_fn(|cx| {
        pass.task.register(cx.waker());
        pass.polling.store(true, Ordering::SeqCst);
        let producer_done = producer.poll_if_due();
        let consumer_done = consumer.poll_if_due();
        pass.polling.store(false, Ordering::SeqCst);
        if producer_done && consumer_done {
            return Poll::Ready(());
        }
        // Woken during the pass after its poll (by itself, or from another thread): the
        // wake did not reach the task, so the task asks for another pass.
        if producer.is_due() || consumer.is_due() {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    })
    .await;
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[tokio::test]
    async fn both_run_to_completion_and_a_push_wakes_the_consumer_in_the_same_pass() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let received = Arc::new(AtomicUsize::new(0));
        let producer = async move {
            for i in 0..100 {
                tx.send(i).unwrap();
                if i % 7 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        };
        let consumer = {
            let received = received.clone();
            async move {
                while rx.recv().await.is_some() {
                    received.fetch_add(1, Ordering::SeqCst);
                }
            }
        };
        join_pair(producer, consumer).await;
        assert_eq!(received.load(Ordering::SeqCst), 100);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wake_from_another_thread_reaches_the_task() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let sender = std::thread::spawn(move || {
            for i in 0..1000 {
                tx.send(i).unwrap();
            }
        });
        let mut got = 0;
        join_pair(async {}, async {
            while rx.recv().await.is_some() {
                got += 1;
            }
        })
        .await;
        sender.join().unwrap();
        assert_eq!(got, 1000);
    }

    #[tokio::test]
    async fn a_future_that_wakes_itself_is_polled_again() {
        // `yield_now` wakes its own waker during the poll: the pair must ask for a pass.
        let mut yields = 0;
        join_pair(
            async {
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
            },
            async {
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                    yields += 1;
                }
            },
        )
        .await;
        assert_eq!(yields, 10);
    }
}
