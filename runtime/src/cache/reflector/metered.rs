//! [`MeteredListerWatcher`]: client-go's reflector metrics, recorded around any
//! [`ListerWatcher`] (so the reflector's state machine stays free of them): lists and their
//! duration and size, watches (streaming lists among them), their duration and size, short
//! watches, and the last resourceVersion seen.

use std::{
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Instant,
};

use futures::{FutureExt, Stream, future::BoxFuture};
use kube_core::{
    ObjectList, WatchEvent,
    params::{ListParams, WatchParams},
};

use crate::cache::{ListerWatcher, WatchStream};
use crate::{Cacheable, client::Error as ClientError, metrics::ReflectorMetrics};

/// A watch that ends within this long having delivered nothing is a "short watch"
/// (client-go's reflector: a watch closing in under a second with no items).
const SHORT_WATCH: std::time::Duration = std::time::Duration::from_secs(1);

/// Wraps a [`ListerWatcher`] and records [`ReflectorMetrics`] for what goes through it.
pub struct MeteredListerWatcher<K> {
    inner: Arc<dyn ListerWatcher<K>>,
    metrics: Arc<ReflectorMetrics>,
}

impl<K> std::fmt::Debug for MeteredListerWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeteredListerWatcher")
            .finish_non_exhaustive()
    }
}

impl<K: Cacheable> MeteredListerWatcher<K> {
    /// Records `metrics` for every list and watch of `inner`.
    pub fn new(inner: Arc<dyn ListerWatcher<K>>, metrics: ReflectorMetrics) -> Self {
        Self {
            inner,
            metrics: Arc::new(metrics),
        }
    }
}

impl<K: Cacheable> ListerWatcher<K> for MeteredListerWatcher<K> {
    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<ObjectList<K>, ClientError>> {
        let metrics = self.metrics.clone();
        let list = self.inner.list(params);
        async move {
            metrics.lists.inc();
            let start = Instant::now();
            let result = list.await;
            metrics.list_duration.observe(start.elapsed().as_secs_f64());
            if let Ok(page) = &result {
                metrics.items_in_list.observe(page.items.len() as f64);
                if let Some(rv) = &page.metadata.resource_version {
                    metrics.last_resource_version(rv);
                }
            }
            result
        }
        .boxed()
    }

    fn watch(
        &self,
        params: WatchParams,
        resource_version: String,
    ) -> BoxFuture<'static, Result<WatchStream<K>, ClientError>> {
        let metrics = self.metrics.clone();
        let streaming = params.send_initial_events;
        let watch = self.inner.watch(params, resource_version);
        async move {
            metrics.watches.inc();
            if streaming {
                metrics.watch_lists.inc();
            }
            let stream = watch.await?;
            let metered: WatchStream<K> = Box::pin(MeteredWatch {
                inner: stream,
                metrics,
                opened: Instant::now(),
                items: 0,
            });
            Ok(metered)
        }
        .boxed()
    }
}

/// A watch stream counting its events; records its duration and size when dropped.
struct MeteredWatch<K> {
    inner: WatchStream<K>,
    metrics: Arc<ReflectorMetrics>,
    opened: Instant,
    items: u64,
}

impl<K: Cacheable> Stream for MeteredWatch<K> {
    type Item = <WatchStream<K> as Stream>::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(Ok(event))) = &polled {
            let rv = match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    self.items += 1;
                    o.meta().resource_version.clone()
                }
                WatchEvent::Bookmark(b) => Some(b.metadata.resource_version.clone()),
                WatchEvent::Error(_) => None,
            };
            if let Some(rv) = rv {
                self.metrics.last_resource_version(&rv);
            }
        }
        polled
    }
}

impl<K> Drop for MeteredWatch<K> {
    fn drop(&mut self) {
        let lasted = self.opened.elapsed();
        self.metrics.watch_duration.observe(lasted.as_secs_f64());
        self.metrics.items_in_watch.observe(self.items as f64);
        if lasted < SHORT_WATCH && self.items == 0 {
            self.metrics.short_watches.inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::{
        cache::testing::{cm, fake_api::FakeApi},
        metrics::{CounterMetric, HistogramMetric, ReflectorMetricsProvider, SettableGaugeMetric},
    };

    /// Every handle adds what it is given to one shared number per metric.
    #[derive(Default)]
    struct Sums(parking_lot::Mutex<std::collections::BTreeMap<&'static str, Arc<Sum>>>);
    #[derive(Default)]
    struct Sum(AtomicU64);
    impl CounterMetric for Sum {
        fn inc(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    impl HistogramMetric for Sum {
        fn observe(&self, v: f64) {
            self.0.fetch_add(v as u64, Ordering::SeqCst);
        }
    }
    impl SettableGaugeMetric for Sum {
        fn set(&self, v: f64) {
            self.0.store(v as u64, Ordering::SeqCst);
        }
    }
    impl Sums {
        fn get(&self, name: &'static str) -> Arc<Sum> {
            self.0.lock().entry(name).or_default().clone()
        }
        fn value(&self, name: &'static str) -> u64 {
            self.get(name).0.load(Ordering::SeqCst)
        }
    }
    impl ReflectorMetricsProvider for Sums {
        fn new_lists_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
            self.get("lists")
        }
        fn new_list_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
            self.get("list_duration")
        }
        fn new_items_in_list_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
            self.get("items_in_list")
        }
        fn new_watch_lists_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
            self.get("watch_lists")
        }
        fn new_watches_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
            self.get("watches")
        }
        fn new_short_watches_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
            self.get("short_watches")
        }
        fn new_watch_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
            self.get("watch_duration")
        }
        fn new_items_in_watch_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
            self.get("items_in_watch")
        }
        fn new_last_resource_version_metric(&self, _: &str) -> Arc<dyn SettableGaugeMetric> {
            self.get("last_rv")
        }
    }

    /// client-go's reflector: a watch that ends at once with nothing is a short watch; one
    /// that delivered events is not; streaming lists count as watchLists.
    #[tokio::test]
    async fn lists_watches_and_short_watches_are_counted() {
        let api: FakeApi<ConfigMap> = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.upsert(cm("ns", "b"));
        let sums = Sums::default();
        let lw =
            MeteredListerWatcher::new(Arc::new(api.clone()), ReflectorMetrics::new("cms", &sums));
        let page = lw.list(ListParams::default()).await.expect("list");
        assert_eq!(page.items.len(), 2);
        assert_eq!((sums.value("lists"), sums.value("items_in_list")), (1, 2));
        assert_eq!(sums.value("last_rv"), 3);

        let short = lw
            .watch(WatchParams::default(), "3".into())
            .await
            .expect("watch");
        drop(short);
        assert_eq!(sums.value("short_watches"), 1);

        let params = WatchParams {
            send_initial_events: true,
            ..WatchParams::default()
        };
        let mut stream = lw.watch(params, "3".into()).await.expect("watch");
        api.upsert(cm("ns", "c"));
        let event = stream.next().await.expect("an event").expect("ok");
        assert!(matches!(event, WatchEvent::Added(_)));
        drop(stream);
        assert_eq!(sums.value("watches"), 2);
        assert_eq!(sums.value("watch_lists"), 1);
        assert_eq!(
            sums.value("short_watches"),
            1,
            "a watch with events is not short"
        );
        assert_eq!(sums.value("items_in_watch"), 1);
        assert_eq!(
            sums.value("last_rv"),
            2,
            "the streaming list's first event: ns/a"
        );
    }
}
