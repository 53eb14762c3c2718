//! [`IdleWatch`]: tells a silent watch from a busy one without a timer per event.
//!
//! A watch that stays silent longer than its timeout plus a margin is a dead connection
//! (the reflector drops and re-opens it). Wrapping every `next()` in
//! `tokio::time::timeout` says that, but it registers a timer with the runtime's wheel
//! (and removes it) for every event that is not already waiting: per event of a busy
//! watch, two trips through the timer driver's lock. Here one timer lives as long as the
//! watch: each event only records when it came, and when the timer fires early (events
//! came meanwhile) it is re-armed for the last event's time plus the idle limit. The
//! timeout is the same — no event for `idle` — and it follows tokio's clock, so a paused
//! clock drives it in tests.

use std::{pin::Pin, time::Duration};

use futures::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};

/// The idle limit of one watch stream; see the module docs.
pub(crate) struct IdleWatch {
    idle: Duration,
    last_event: Instant,
    timer: Pin<Box<Sleep>>,
}

/// The watch stayed silent for its idle limit.
#[derive(Debug)]
pub(crate) struct Silent;

impl IdleWatch {
    /// Starts counting now.
    pub(crate) fn new(idle: Duration) -> Self {
        let now = Instant::now();
        Self {
            idle,
            last_event: now,
            timer: Box::pin(tokio::time::sleep_until(now + idle)),
        }
    }

    /// The stream's next item, or [`Silent`] once nothing arrived for the idle limit.
    pub(crate) async fn next<S: Stream + Unpin>(
        &mut self,
        stream: &mut S,
    ) -> Result<Option<S::Item>, Silent> {
        loop {
            tokio::select! {
                biased;
                item = stream.next() => {
                    self.last_event = Instant::now();
                    return Ok(item);
                }
                () = self.timer.as_mut() => {
                    let deadline = self.last_event + self.idle;
                    if Instant::now() >= deadline {
                        return Err(Silent);
                    }
                    self.timer.as_mut().reset(deadline);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_keeps_delivering_is_never_silent() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let mut rx = tokio_stream_of(rx);
        let mut watch = IdleWatch::new(Duration::from_secs(10));
        tokio::spawn(async move {
            for i in 0..5 {
                tokio::time::sleep(Duration::from_secs(6)).await;
                let _ = tx.send(i);
            }
        });
        for i in 0..5 {
            assert_eq!(watch.next(&mut rx).await.unwrap(), Some(i));
        }
        // 30 s have passed, more than the idle limit, but never 10 s without an event.
    }

    #[tokio::test(start_paused = true)]
    async fn silence_for_the_idle_limit_after_the_last_event_is_reported() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let mut rx = tokio_stream_of(rx);
        let mut watch = IdleWatch::new(Duration::from_secs(10));
        tx.send(1).unwrap();
        tokio::time::sleep(Duration::from_secs(7)).await;
        assert_eq!(watch.next(&mut rx).await.unwrap(), Some(1));
        let started = Instant::now();
        assert!(watch.next(&mut rx).await.is_err());
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(10),
            "silent from the last event on, not from the start"
        );
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn the_end_of_the_stream_is_not_silence() {
        let mut ended = stream::empty::<u32>();
        let mut watch = IdleWatch::new(Duration::from_secs(10));
        assert_eq!(watch.next(&mut ended).await.unwrap(), None);
    }

    fn tokio_stream_of<T: Send + 'static>(
        mut rx: tokio::sync::mpsc::UnboundedReceiver<T>,
    ) -> impl Stream<Item = T> + Unpin {
        Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }
}
