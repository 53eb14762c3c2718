//! [`SeriesWriter`]: what an `events.k8s.io/v1` sink's tasks share (client-go's
//! `tools/events` `StartRecordingToSink` machinery): the sink, the series cache, the
//! retry settings — and those tasks' work: writing what the cache answers, refreshing
//! every series, finishing the series no longer observed, flushing unwritten counts at
//! shutdown.

use std::sync::Arc;

use k8s_openapi::{api::events::v1::Event, jiff::Timestamp};
use parking_lot::Mutex;
use serde_json::json;
use tokio::time::{Duration, Instant, Interval};
use tokio_util::sync::CancellationToken;

use super::{
    keys::isomorphic_key,
    series::{Pending, SeriesCache},
};
use crate::record::{
    BroadcasterConfig, EventSink,
    write::{Rules, write},
};

/// A sink with its series cache.
pub(crate) struct SeriesWriter<S> {
    sink: S,
    /// The last event under each isomorphic key.
    cache: Mutex<SeriesCache>,
    config: BroadcasterConfig,
    /// Cancelled at shutdown: ends the periodic loops and the retry pauses.
    cancel: CancellationToken,
}

impl<S: EventSink<Event>> SeriesWriter<S> {
    /// A writer to `sink` with an empty cache.
    pub(crate) fn new(sink: S, config: BroadcasterConfig, cancel: CancellationToken) -> Self {
        Self {
            sink,
            cache: Mutex::new(SeriesCache::default()),
            config,
            cancel,
        }
    }

    /// Observes `event` at `now` in the cache ([`SeriesCache::observe`], `admit` being the
    /// spam filter): the event to write now, if any.
    pub(crate) fn observe(
        &self,
        event: Event,
        now: Instant,
        admit: impl FnOnce(&Event) -> bool,
    ) -> Option<Event> {
        self.cache
            .lock()
            .observe(event, now, Timestamp::now(), admit)
    }

    /// Writes a cached event (a series is patched, a single event created) and tells the
    /// cache which series count the server has.
    pub(crate) async fn write(&self, event: Event) {
        let key = isomorphic_key(&event);
        let count = event.series.as_ref().map(|s| s.count);
        // the two-way strategic merge patch of the event without and with its series
        let patch = count.map(|_| json!({ "series": event.series }));
        let stored = write(
            &self.sink,
            event,
            patch.as_ref(),
            Rules::Events,
            &self.config,
            &self.cancel,
        )
        .await;
        if let (Some(count), Some(_)) = (count, &stored) {
            self.cache.lock().written(&key, count);
        }
    }

    /// Writes each of `events`.
    async fn write_all(&self, events: Vec<Pending>) {
        for (_, event) in events {
            self.write(event).await;
        }
    }

    /// At shutdown: the counts the server has not seen yet get one attempt each.
    pub(crate) async fn flush(&self) {
        let unwritten = self.cache.lock().unwritten();
        self.write_all(unwritten).await;
    }

    /// Writes every series again every `period` until shutdown (client-go's
    /// `refreshExistingEventSeries`).
    pub(crate) async fn refresh_loop(self: Arc<Self>, period: Duration) {
        let mut tick = ticks(period);
        while self.tick(&mut tick).await {
            let all = self.cache.lock().series();
            self.write_all(all).await;
        }
    }

    /// Every `finish`, until shutdown, writes the final count of the series not observed
    /// for as long and forgets them, and forgets the single events as old (client-go's
    /// `finishSeries`).
    pub(crate) async fn finish_loop(self: Arc<Self>, finish: Duration) {
        let mut tick = ticks(finish);
        while self.tick(&mut tick).await {
            let now = Instant::now();
            let done = self.cache.lock().finished(now, finish);
            for (key, event) in done {
                // written or abandoned, the series is over (unless it was observed again)
                self.write(event).await;
                self.cache.lock().forget(&key, now);
            }
        }
    }

    /// Waits for the next tick: false once the broadcaster shuts down.
    async fn tick(&self, tick: &mut Interval) -> bool {
        tokio::select! {
            () = self.cancel.cancelled() => false,
            _ = tick.tick() => true,
        }
    }
}

/// Ticks every `period`, the first one period from now.
fn ticks(period: Duration) -> Interval {
    tokio::time::interval_at(Instant::now() + period, period)
}
