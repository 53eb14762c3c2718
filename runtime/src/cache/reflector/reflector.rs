//! [`Reflector`]: keeps a [`ReflectorSink`](crate::cache::ReflectorSink) in step with the API server by listing, then watching.
//!
//! The state machine, as client-go runs it:
//!
//! 1. **List** at resourceVersion `"0"` the first time (any cached state will do), at the
//!    last synced version afterwards, and at `""` (a fresh, consistent read) once the server
//!    said that version is gone (410 Expired) or too large; in pages of 500 by default. A
//!    relist at a version asks `resourceVersionMatch=NotOlderThan`: with a `limit` and no
//!    match a non-zero resourceVersion is an Exact read of that old snapshot (API Concepts,
//!    "Resource versions", the legacy rule), and relists while the watch keeps failing
//!    would keep restoring the same stale state. (client-go's reflector drops the `limit`
//!    there instead unless given a page size; paging keeps a relist bounded here.) An
//!    expired continue token falls back to one unpaginated list at the same version. The
//!    store is replaced with the result; a paged store ([`DeltaFifo`](crate::cache::DeltaFifo),
//!    [`RealFifo`](crate::cache::RealFifo)) takes it page by page, and the next page is fetched only
//!    once fewer than two pages wait in it (backpressure: a relist holds little more than
//!    the cache itself).
//! 2. **Watch** from the list's resourceVersion with bookmarks and a random timeout in
//!    `[min_watch_timeout, 2 × min_watch_timeout)`. Each event moves the store and the last
//!    synced resourceVersion; a bookmark only moves the resourceVersion. A watch silent for
//!    longer than its timeout plus `watch_idle_margin` is a dead connection (the server
//!    would have closed it): it is dropped and re-opened from the last resourceVersion
//!    (kube-rs #1945).
//! 3. A watch that closes cleanly is re-opened from the last resourceVersion, **without**
//!    relisting. Connection refused and 429 retry the watch after a backoff (a 429's
//!    `Retry-After` is waited at least). A 410, an `ERROR` event, or a watch that ends
//!    within a second without events goes back to 1 after the backoff (800 ms doubling to
//!    30 s, with jitter, reset after 2 minutes); the first relist after a 410 that followed
//!    progress goes at once.
//!
//! In streaming-list mode, step 1 is a watch with `sendInitialEvents=true`: the initial
//! `ADDED` events are gathered until the bookmark annotated `k8s.io/initial-events-end`,
//! then replace the store, and the same watch goes on as step 2. Re-watches never ask for
//! initial events again. If the server refuses streaming, the reflector lists instead.
//!
//! An event whose object cannot be decoded is reported and skipped: the reflector keeps
//! running and the store keeps everything else.

use std::{
    collections::HashMap,
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use kube_core::{
    WatchEvent,
    params::{ListParams, VersionMatch, WatchParams},
};
use parking_lot::Mutex;
use rand::Rng;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cache::{
    BackoffConfig, CacheError, ListerWatcher, ReflectorSink, WatchStream, meta_namespace_key,
    reflector::backoff::Backoff, reflector::watch_idle::IdleWatch,
};
use crate::{Cacheable, client::Error as ClientError};

/// The annotation on the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// How the reflector gets its initial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitialListStrategy {
    /// A paginated LIST, then a WATCH.
    ListWatch,
    /// A WATCH with `sendInitialEvents=true`, the default as client-go's `WatchListClient`
    /// is since 1.35 (falls back to [`InitialListStrategy::ListWatch`] when the server
    /// refuses it, for good, or when a streaming list fails, for that round). A store
    /// that takes pages gets the initial events page by page, as a paged list does.
    #[default]
    StreamingList,
}

/// Reflector settings.
#[derive(Debug, Clone)]
pub struct ReflectorConfig {
    /// Items per list page; 0 lists in one request.
    pub page_size: u32,
    /// How often the store's `resync` is considered; zero disables resync.
    pub resync_period: Duration,
    /// The shortest server-side watch timeout; each watch picks one at random in
    /// `[min_watch_timeout, 2 × min_watch_timeout)` to spread reconnects.
    pub min_watch_timeout: Duration,
    /// How the initial state is fetched.
    pub initial_list: InitialListStrategy,
    /// Backoff between failed list/watch rounds.
    pub backoff: BackoffConfig,
    /// How much longer than the timeout it asked the server for a watch may stay silent
    /// before it is taken for a dead connection, dropped and re-opened (kube-rs uses 5 s).
    pub watch_idle_margin: Duration,
}

impl Default for ReflectorConfig {
    fn default() -> Self {
        Self {
            page_size: 500,
            resync_period: Duration::ZERO,
            min_watch_timeout: Duration::from_secs(300),
            initial_list: InitialListStrategy::default(),
            backoff: BackoffConfig::default(),
            watch_idle_margin: Duration::from_secs(5),
        }
    }
}

/// What went wrong in one list/watch round; handed to the watch error handler.
#[derive(Debug, thiserror::Error)]
pub enum ReflectorError {
    /// Listing failed.
    #[error("list failed: {0}")]
    List(#[source] ClientError),
    /// Opening or reading a watch failed, or the server sent an ERROR event.
    #[error("watch failed: {0}")]
    Watch(#[source] ClientError),
    /// A watch closed within a second without delivering anything.
    #[error("very short watch: watch lasted less than a second and no items received")]
    VeryShortWatch,
    /// A watch stayed silent past its timeout plus the idle margin: the connection is
    /// taken for dead and the watch re-opened.
    #[error("watch silent for {0:?}, longer than its timeout: dropping the connection")]
    WatchIdle(Duration),
    /// One watch event could not be decoded; it was skipped.
    #[error("skipped an undecodable watch event: {0}")]
    Decode(#[source] ClientError),
    /// The store refused an update (an index function failed); the object was skipped.
    #[error("store update failed: {0}")]
    Store(#[source] CacheError),
    /// The periodic resync failed; the watch is restarted.
    #[error("resync failed: {0}")]
    Resync(#[source] CacheError),
    /// A streaming list ended before its initial events were complete.
    #[error("streaming list ended before the initial-events-end bookmark")]
    StreamingListIncomplete,
    /// A streaming list sent a delete among its initial events (kube-apiserver sends only
    /// ADDED events before the end bookmark); the reflector relists.
    #[error("streaming list sent a delete before the initial-events-end bookmark")]
    UnexpectedInitialEvent,
}

impl ReflectorError {
    /// Whether the server said the resourceVersion asked for is gone (410 / expired).
    pub fn is_gone(&self) -> bool {
        match self {
            Self::List(e) | Self::Watch(e) => e.is_gone_or_expired(),
            _ => false,
        }
    }

    /// How long the server asked us to wait (`Retry-After` of a 429 or 503), if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::List(e) | Self::Watch(e) => e.retry_after(),
            _ => None,
        }
    }
}

/// Decides, each resync tick, whether to resync (the informer asks its handlers).
pub type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;
/// Called with every error the reflector recovers from.
pub type WatchErrorHandler = Arc<dyn Fn(&ReflectorError) + Send + Sync>;

#[derive(Debug, Default)]
struct VersionState {
    last_sync: String,
    unavailable: bool,
    streaming_refused: bool,
}

/// How one list/watch round ended.
enum RoundEnd {
    Stopped,
    Relist(Option<ReflectorError>),
}

/// Lists and watches through a [`ListerWatcher`] into a [`ReflectorSink`](crate::cache::ReflectorSink); see the module docs.
pub struct Reflector<K: Clone> {
    name: String,
    lister_watcher: Arc<dyn ListerWatcher<K>>,
    store: Arc<dyn ReflectorSink<K>>,
    config: ReflectorConfig,
    versions: Mutex<VersionState>,
    /// Watch events received so far (a round that received any made progress).
    events_seen: AtomicU64,
    should_resync: Option<ShouldResync>,
    error_handler: Option<WatchErrorHandler>,
}

impl<K: Clone> fmt::Debug for Reflector<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("versions", &*self.versions.lock())
            .finish_non_exhaustive()
    }
}

impl<K: Cacheable> Reflector<K> {
    /// A reflector feeding `store` from `lister_watcher`.
    pub fn new(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        store: Arc<dyn ReflectorSink<K>>,
        config: ReflectorConfig,
    ) -> Self {
        Self {
            name: format!("reflector for {}", short_type_name::<K>()),
            lister_watcher,
            store,
            config,
            versions: Mutex::new(VersionState::default()),
            events_seen: AtomicU64::new(0),
            should_resync: None,
            error_handler: None,
        }
    }

    /// The name it logs under (`reflector for <type>` by default).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Consulted on every resync tick; without it every tick resyncs.
    #[must_use]
    pub fn with_should_resync(mut self, should_resync: ShouldResync) -> Self {
        self.should_resync = Some(should_resync);
        self
    }

    /// Called with every error the reflector recovers from (client-go's
    /// `WatchErrorHandler`); errors are also logged.
    #[must_use]
    pub fn with_error_handler(mut self, handler: WatchErrorHandler) -> Self {
        self.error_handler = Some(handler);
        self
    }

    /// The resourceVersion of the last list, event or bookmark seen.
    pub fn last_sync_resource_version(&self) -> String {
        self.versions.lock().last_sync.clone()
    }

    fn set_last_sync(&self, rv: &str) {
        if !rv.is_empty() {
            // In place: the buffer is reused, no allocation per event.
            self.versions.lock().last_sync.replace_range(.., rv);
        }
    }

    fn report(&self, error: &ReflectorError) {
        tracing::warn!(reflector = %self.name, %error, "list/watch problem");
        if let Some(handler) = &self.error_handler {
            handler(error);
        }
    }

    /// Runs list-and-watch rounds with backoff until `stop` is cancelled.
    ///
    /// A round that ends because the watched resourceVersion is gone (410) relists at once
    /// when the round before made progress (its watch delivered events): the server only
    /// compacted past us, nothing is failing. Only repeated failures wait for the backoff.
    pub async fn run(&self, stop: CancellationToken) {
        let mut backoff = Backoff::new(self.config.backoff.clone());
        let mut relisted_at_once = false;
        loop {
            if stop.is_cancelled() {
                return;
            }
            let events_before = self.events_seen.load(Ordering::Relaxed);
            let mut retry_after = None;
            let gone = match self.list_and_watch(&stop).await {
                RoundEnd::Stopped => return,
                RoundEnd::Relist(error) => {
                    let gone = error.as_ref().is_some_and(ReflectorError::is_gone);
                    if let Some(error) = error {
                        retry_after = error.retry_after();
                        self.report(&error);
                    }
                    gone
                }
            };
            if self.events_seen.load(Ordering::Relaxed) != events_before {
                relisted_at_once = false;
            }
            if gone && !relisted_at_once {
                tracing::debug!(reflector = %self.name, "resourceVersion gone: relisting at once");
                relisted_at_once = true;
                continue;
            }
            // A server that said when to come back (429/503 `Retry-After`) is not asked
            // sooner than that.
            let delay = backoff.next_delay().max(retry_after.unwrap_or_default());
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// The resourceVersion to list at: "0" first, then the last synced one, "" once that
    /// is unavailable.
    fn relist_resource_version(&self) -> String {
        let v = self.versions.lock();
        if v.unavailable {
            String::new()
        } else if v.last_sync.is_empty() {
            "0".to_owned()
        } else {
            v.last_sync.clone()
        }
    }

    async fn list_and_watch(&self, stop: &CancellationToken) -> RoundEnd {
        let streaming = self.config.initial_list == InitialListStrategy::StreamingList
            && !self.versions.lock().streaming_refused;
        let mut first_watch: Option<(WatchStream<K>, Duration)> = None;
        if streaming {
            tokio::select! {
                biased;
                () = stop.cancelled() => return RoundEnd::Stopped,
                result = self.streaming_list() => match result {
                    Ok(stream) => first_watch = Some(stream),
                    Err(error) => {
                        tracing::warn!(reflector = %self.name, %error, "streaming list failed; falling back to list + watch");
                        self.report(&error);
                    }
                },
            }
        }
        if first_watch.is_none() {
            tokio::select! {
                biased;
                () = stop.cancelled() => return RoundEnd::Stopped,
                result = self.list() => if let Err(error) = result {
                    return RoundEnd::Relist(Some(error));
                },
            }
        }
        tokio::select! {
            biased;
            () = stop.cancelled() => RoundEnd::Stopped,
            end = self.watch_loop(first_watch, stop) => end,
            error = self.resync_loop() => RoundEnd::Relist(Some(error)),
        }
    }

    /// Lists every page into the store and records the list's resourceVersion.
    async fn list(&self) -> Result<(), ReflectorError> {
        let rv = self.relist_resource_version();
        let list_rv = match self.list_into_store(&rv).await {
            Err(ReflectorError::List(e))
                if e.is_gone_or_expired() || is_too_large_resource_version(&e) =>
            {
                // The version is gone or from the future: a fresh, consistent list
                // (client-go retries `pager.List` at `relistResourceVersion`).
                self.versions.lock().unavailable = true;
                self.list_into_store("").await?
            }
            other => other?,
        };
        let mut v = self.versions.lock();
        v.unavailable = false;
        if !list_rv.is_empty() {
            #[cfg(feature = "planted-bugs")]
            if crate::planted_bugs::RELIST_KEEPS_STALE_RESOURCE_VERSION
                .load(std::sync::atomic::Ordering::Relaxed)
                && !v.last_sync.is_empty()
            {
                return Ok(());
            }
            v.last_sync = list_rv;
        }
        Ok(())
    }

    /// Lists page by page. A store that takes pages (a `DeltaFifo`) gets each page as it
    /// arrives, so the full list is never held here and the consumer replaces cached objects
    /// while later pages are fetched; the next page is requested only once fewer than two
    /// pages wait in the store (backpressure: its consumer must be popping); other stores get one `replace` at the end. An expired
    /// continue token falls back to one full list at the same version. Returns the list's
    /// resourceVersion.
    async fn list_into_store(&self, rv: &str) -> Result<String, ReflectorError> {
        let paged = self.store.paged_replace();
        let mut buffered: Vec<Arc<K>> = Vec::new();
        if let Some(p) = paged {
            p.replace_begin();
        }
        let deliver = |items: Vec<K>, buffered: &mut Vec<Arc<K>>| -> Result<(), ReflectorError> {
            let items = items.into_iter().map(Arc::new);
            match paged {
                Some(p) => p
                    .replace_page(items.collect())
                    .map_err(ReflectorError::Store),
                None => {
                    buffered.extend(items);
                    Ok(())
                }
            }
        };
        // "0" and "" as client-go asks them (no resourceVersionMatch); a version with an
        // explicit NotOlderThan, which the limit would otherwise turn into Exact.
        let first = ListParams {
            limit: (self.config.page_size > 0).then_some(self.config.page_size),
            resource_version: Some(rv.to_owned()).filter(|r| !r.is_empty()),
            version_match: (!rv.is_empty() && rv != "0").then_some(VersionMatch::NotOlderThan),
            ..ListParams::default()
        };
        let backlog_limit = 2 * usize::try_from(self.config.page_size)
            .unwrap_or(usize::MAX)
            .max(1);
        let mut page = self
            .lister_watcher
            .list(first.clone())
            .await
            .map_err(ReflectorError::List)?;
        let list_rv = loop {
            let token = page.metadata.continue_.clone().filter(|t| !t.is_empty());
            let page_rv = page.metadata.resource_version.clone().unwrap_or_default();
            deliver(page.items, &mut buffered)?;
            let Some(token) = token else { break page_rv };
            if let Some(p) = paged {
                // Backpressure: the next page is fetched once the consumer is within two
                // pages of the producer, so a relist holds little more than the cache.
                p.wait_for_backlog_below(backlog_limit).await;
            }
            let next = ListParams {
                limit: first.limit,
                continue_token: Some(token),
                ..ListParams::default()
            };
            page = match self.lister_watcher.list(next).await {
                Ok(page) => page,
                Err(e) if e.is_gone_or_expired() => {
                    // The continue token expired mid-list: one full list at the same version.
                    if let Some(p) = paged {
                        p.replace_begin();
                    }
                    buffered.clear();
                    let full = ListParams {
                        limit: None,
                        ..first.clone()
                    };
                    let full = self
                        .lister_watcher
                        .list(full)
                        .await
                        .map_err(ReflectorError::List)?;
                    let full_rv = full.metadata.resource_version.clone().unwrap_or_default();
                    deliver(full.items, &mut buffered)?;
                    break full_rv;
                }
                Err(e) => return Err(ReflectorError::List(e)),
            };
        };
        match paged {
            Some(p) => p.replace_finish(&list_rv),
            None => self.store.replace(buffered, &list_rv),
        }
        .map_err(ReflectorError::Store)?;
        Ok(list_rv)
    }

    /// A watch's parameters and how long it may stay silent: its timeout plus the margin.
    fn watch_params(&self, send_initial_events: bool) -> (WatchParams, Duration) {
        let min = self.config.min_watch_timeout.as_secs().max(1);
        let timeout = rand::rng().random_range(min..2 * min);
        let params = WatchParams {
            timeout: Some(u32::try_from(timeout).unwrap_or(u32::MAX)),
            bookmarks: true,
            send_initial_events,
            ..WatchParams::default()
        };
        (
            params,
            Duration::from_secs(timeout) + self.config.watch_idle_margin,
        )
    }

    /// A streaming list: gathers the initial events, replaces the store at the end
    /// bookmark, and returns the still-open watch.
    async fn streaming_list(&self) -> Result<(WatchStream<K>, Duration), ReflectorError> {
        let rv = if self.versions.lock().unavailable {
            String::new()
        } else {
            self.last_sync_resource_version()
        };
        let (params, idle) = self.watch_params(true);
        let mut stream = match self.lister_watcher.watch(params, rv).await {
            Ok(stream) => stream,
            Err(e) => {
                let mut v = self.versions.lock();
                if e.is_gone_or_expired() {
                    v.unavailable = true;
                } else if e.status().is_some() {
                    // The server answered and refused: don't ask again.
                    v.streaming_refused = true;
                }
                return Err(ReflectorError::Watch(e));
            }
        };
        // A store that takes pages gets the initial events page by page, paced to its
        // consumer, so the initial state is never held here in full; others get one
        // `replace` of the gathered objects at the end bookmark.
        let paged = self.store.paged_replace();
        let page_size = usize::try_from(self.config.page_size.max(1)).unwrap_or(usize::MAX);
        let mut page: Vec<Arc<K>> = Vec::new();
        let mut initial: HashMap<String, Arc<K>> = HashMap::new();
        if let Some(p) = paged {
            p.replace_begin();
        }
        let mut silence = IdleWatch::new(idle);
        loop {
            let Ok(next) = silence.next(&mut stream).await else {
                return Err(ReflectorError::WatchIdle(idle));
            };
            let Some(event) = next else { break };
            match event {
                Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj)) => match paged {
                    Some(p) => {
                        page.push(Arc::new(obj));
                        if page.len() >= page_size {
                            p.replace_page(std::mem::take(&mut page))
                                .map_err(ReflectorError::Store)?;
                            p.wait_for_backlog_below(2 * page_size).await;
                        }
                    }
                    None => {
                        if let Ok(key) = meta_namespace_key(&obj) {
                            initial.insert(key, Arc::new(obj));
                        }
                    }
                },
                Ok(WatchEvent::Deleted(obj)) => {
                    if paged.is_some() {
                        // kube-apiserver sends the initial state as ADDED events only
                        // (a snapshot); a delete before the end bookmark cannot be applied
                        // to pages already handed over.
                        return Err(ReflectorError::UnexpectedInitialEvent);
                    }
                    if let Ok(key) = meta_namespace_key(&obj) {
                        initial.remove(&key);
                    }
                }
                Ok(WatchEvent::Bookmark(bookmark)) => {
                    let end = bookmark
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END_ANNOTATION)
                        .is_some_and(|v| v == "true");
                    if end {
                        let rv = bookmark.metadata.resource_version;
                        match paged {
                            Some(p) => {
                                if !page.is_empty() {
                                    p.replace_page(std::mem::take(&mut page))
                                        .map_err(ReflectorError::Store)?;
                                }
                                p.replace_finish(&rv)
                            }
                            None => self
                                .store
                                .replace(std::mem::take(&mut initial).into_values().collect(), &rv),
                        }
                        .map_err(ReflectorError::Store)?;
                        let mut v = self.versions.lock();
                        v.unavailable = false;
                        if !rv.is_empty() {
                            v.last_sync = rv;
                        }
                        return Ok((stream, idle));
                    }
                }
                Ok(WatchEvent::Error(status)) => {
                    if status.code == 410 {
                        self.versions.lock().unavailable = true;
                    }
                    return Err(ReflectorError::Watch(ClientError::Api(status)));
                }
                Err(e @ (ClientError::Decode(_) | ClientError::DecodeCbor(_))) => {
                    self.report(&ReflectorError::Decode(e));
                }
                Err(e) => return Err(ReflectorError::Watch(e)),
            }
        }
        Err(ReflectorError::StreamingListIncomplete)
    }

    /// Watches, re-watching from the last resourceVersion after clean closes, until a
    /// relist is needed or `stop` fires.
    async fn watch_loop(
        &self,
        mut open: Option<(WatchStream<K>, Duration)>,
        stop: &CancellationToken,
    ) -> RoundEnd {
        let mut backoff = Backoff::new(self.config.backoff.clone());
        loop {
            if stop.is_cancelled() {
                return RoundEnd::Stopped;
            }
            let started = Instant::now();
            let (stream, idle) = match open.take() {
                Some(open) => open,
                None => {
                    let rv = self.last_sync_resource_version();
                    let (params, idle) = self.watch_params(false);
                    match self.lister_watcher.watch(params, rv).await {
                        Ok(stream) => (stream, idle),
                        Err(e) if is_watch_retriable(&e) => {
                            let error = ReflectorError::Watch(e);
                            let delay = backoff
                                .next_delay()
                                .max(error.retry_after().unwrap_or_default());
                            self.report(&error);
                            tokio::select! {
                                biased;
                                () = stop.cancelled() => return RoundEnd::Stopped,
                                () = tokio::time::sleep(delay) => continue,
                            }
                        }
                        Err(e) => return RoundEnd::Relist(Some(ReflectorError::Watch(e))),
                    }
                }
            };
            match self.handle_watch(stream, idle).await {
                Ok(events) => {
                    if events == 0 && started.elapsed() < Duration::from_secs(1) {
                        return RoundEnd::Relist(Some(ReflectorError::VeryShortWatch));
                    }
                }
                Err(error @ ReflectorError::WatchIdle(_)) => {
                    // A dead connection, not a server verdict: re-watch from where we are.
                    self.report(&error);
                }
                Err(error) => {
                    if let ReflectorError::Watch(e) = &error
                        && e.is_too_many_requests()
                    {
                        // client-go: a 429 ERROR event backs off and re-watches, no relist.
                        let delay = backoff
                            .next_delay()
                            .max(error.retry_after().unwrap_or_default());
                        self.report(&error);
                        tokio::select! {
                            biased;
                            () = stop.cancelled() => return RoundEnd::Stopped,
                            () = tokio::time::sleep(delay) => continue,
                        }
                    }
                    return RoundEnd::Relist(Some(error));
                }
            }
        }
    }

    /// Applies one watch's events to the store; returns how many arrived once it closes
    /// cleanly, or the error that ended it ([`ReflectorError::WatchIdle`] once nothing,
    /// not even a bookmark, arrived for `idle`).
    async fn handle_watch(
        &self,
        mut stream: WatchStream<K>,
        idle: Duration,
    ) -> Result<usize, ReflectorError> {
        let mut events = 0;
        let mut silence = IdleWatch::new(idle);
        loop {
            let Ok(next) = silence.next(&mut stream).await else {
                return Err(ReflectorError::WatchIdle(idle));
            };
            let Some(event) = next else { break };
            let event = match event {
                Ok(event) => event,
                Err(e @ (ClientError::Decode(_) | ClientError::DecodeCbor(_))) => {
                    self.report(&ReflectorError::Decode(e));
                    continue;
                }
                Err(ClientError::Transport(e)) => {
                    // The body broke off: like a close, re-watch from where we are.
                    tracing::debug!(reflector = %self.name, error = %e, "watch stream broke off");
                    break;
                }
                Err(e) => return Err(ReflectorError::Watch(e)),
            };
            events += 1;
            if !matches!(event, WatchEvent::Error(_)) {
                self.events_seen.fetch_add(1, Ordering::Relaxed);
            }
            // The object's resourceVersion is read from the shared object after the store
            // took it (no copy per event; `set_last_sync` reuses its buffer).
            let (result, obj) = match event {
                WatchEvent::Added(obj) => {
                    let obj = Arc::new(obj);
                    (self.store.add(obj.clone()), obj)
                }
                WatchEvent::Modified(obj) => {
                    let obj = Arc::new(obj);
                    (self.store.update(obj.clone()), obj)
                }
                WatchEvent::Deleted(obj) => {
                    let obj = Arc::new(obj);
                    (self.store.delete(&obj), obj)
                }
                WatchEvent::Bookmark(bookmark) => {
                    let rv = bookmark.metadata.resource_version;
                    self.store.bookmark(&rv);
                    self.set_last_sync(&rv);
                    continue;
                }
                WatchEvent::Error(status) => {
                    return Err(ReflectorError::Watch(ClientError::Api(status)));
                }
            };
            if let Err(error) = result {
                self.report(&ReflectorError::Store(error));
            }
            if let Some(rv) = obj.meta().resource_version.as_deref() {
                self.set_last_sync(rv);
            }
        }
        Ok(events)
    }

    /// Ticks every resync period and resyncs the store when asked to; returns only on a
    /// resync error.
    async fn resync_loop(&self) -> ReflectorError {
        if self.config.resync_period.is_zero() {
            return std::future::pending().await;
        }
        // Re-armed after each resync (as client-go does), never on a fixed schedule: a
        // handler's next resync is set from the moment the tick is handled, so a fixed
        // schedule could tick just before it is due and silently double its period.
        let period = self.config.resync_period;
        loop {
            tokio::time::sleep(period).await;
            let due = self.should_resync.as_ref().is_none_or(|f| f());
            if due && let Err(error) = self.store.resync() {
                return ReflectorError::Resync(error);
            }
        }
    }
}

/// Errors after which the watch is retried rather than the list (client-go's
/// `isWatchErrorRetriable`): the server is unreachable or throttling us.
/// The last path segment of `K`'s type name, without generic arguments (`ConfigMap`).
fn short_type_name<K>() -> &'static str {
    let full = std::any::type_name::<K>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

fn is_watch_retriable(e: &ClientError) -> bool {
    match e {
        ClientError::Transport(t) => matches!(t, crate::client::TransportError::Connect(_)),
        other => other.is_too_many_requests(),
    }
}

/// The server refused a resourceVersion newer than it has (client-go's
/// `isTooLargeResourceVersionError`): the `ResourceVersionTooLarge` cause, or the cause
/// message (kube-apiserver 1.17.0–1.18.5) or status message (before 1.17) of the Timeout.
fn is_too_large_resource_version(e: &ClientError) -> bool {
    const MESSAGE: &str = "Too large resource version";
    e.status().is_some_and(|s| {
        s.details.as_ref().is_some_and(|d| {
            d.causes
                .iter()
                .any(|c| c.reason == "ResourceVersionTooLarge" || c.message == MESSAGE)
        }) || s.message.contains(MESSAGE)
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use std::sync::atomic::{AtomicU32, AtomicUsize};

    use kube_core::{Status, response::StatusCause, response::StatusDetails};
    use tokio::task::JoinHandle;

    use super::*;
    use crate::cache::{
        DeltaFifo, DeltaFifoOptions, Indexer, ProcessError,
        testing::{
            cm, cm_with,
            fake_api::{FakeApi, Request, api_error, asked, list_of},
        },
    };

    /// The reflector's settings with a paged LIST for the initial state (the default is a
    /// streaming list): the list/watch behaviours client-go's tests pin down.
    fn listing() -> ReflectorConfig {
        ReflectorConfig {
            initial_list: InitialListStrategy::ListWatch,
            ..ReflectorConfig::default()
        }
    }

    struct Running {
        reflector: Arc<Reflector<ConfigMap>>,
        stop: CancellationToken,
        run: JoinHandle<()>,
        errors: Arc<Mutex<Vec<String>>>,
    }

    impl Running {
        async fn stop(self) {
            self.stop.cancel();
            self.run.await.unwrap();
        }

        fn errors(&self) -> Vec<String> {
            self.errors.lock().clone()
        }
    }

    /// Runs a reflector over `api` into `store`, recording every error it reports.
    fn start(
        api: &FakeApi<ConfigMap>,
        store: Arc<dyn ReflectorSink<ConfigMap>>,
        config: ReflectorConfig,
    ) -> Running {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let recorded = errors.clone();
        let reflector = Arc::new(
            Reflector::new(Arc::new(api.clone()), store, config).with_error_handler(Arc::new(
                move |e: &ReflectorError| recorded.lock().push(e.to_string()),
            )),
        );
        let stop = CancellationToken::new();
        let run = tokio::spawn({
            let (reflector, stop) = (reflector.clone(), stop.clone());
            async move { reflector.run(stop).await }
        });
        Running {
            reflector,
            stop,
            run,
            errors,
        }
    }

    fn internal_error() -> ClientError {
        api_error(500, "InternalError", "etcdserver: no leader")
    }

    fn throttled(retry_after_seconds: u32) -> Status {
        Status {
            code: 429,
            reason: "TooManyRequests".into(),
            message: "too many requests".into(),
            details: Some(details(Vec::new(), retry_after_seconds)),
            ..Status::default()
        }
    }

    fn details(causes: Vec<StatusCause>, retry_after_seconds: u32) -> StatusDetails {
        StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes,
            retry_after_seconds,
        }
    }

    fn cause(reason: &str, message: &str) -> StatusCause {
        StatusCause {
            reason: reason.into(),
            message: message.into(),
            field: String::new(),
        }
    }

    fn sleep(secs: u64) -> tokio::time::Sleep {
        tokio::time::sleep(Duration::from_secs(secs))
    }

    type Asked = (String, u32, String, String);

    fn asked_all(api: &FakeApi<ConfigMap>) -> Vec<Asked> {
        api.list_requests().iter().map(|(p, _)| asked(p)).collect()
    }

    /// A list as asked: resourceVersion, limit, continue, resourceVersionMatch.
    fn ask(rv: &str, limit: u32, continue_: &str, version_match: &str) -> Asked {
        (
            rv.to_owned(),
            limit,
            continue_.to_owned(),
            version_match.to_owned(),
        )
    }

    const NOT_OLDER: &str = "NotOlderThan";

    /// client-go reflector_test.go `TestReflectorListAndWatch` ("UseWatchList disabled") and
    /// `TestReflectorResyncWithResourceVersion`: the first list asks resourceVersion "0" in
    /// pages of 500 with no resourceVersionMatch; the watch asks bookmarks from the list's
    /// version; a clean close re-watches from the last synced version without listing; a
    /// relist asks the last synced version, NotOlderThan (with a limit and no match it
    /// would be an Exact read of that old snapshot, API Concepts "Resource versions";
    /// client-go's `TestReflectorNotPaginatingNotConsistentReads` drops the limit instead);
    /// a 410 on the watch relists at that version first.
    #[tokio::test(start_paused = true)]
    async fn the_list_asks_0_first_then_the_last_synced_version_not_older_than() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.upsert(cm("ns", "b"));
        let store = Indexer::<ConfigMap>::default();
        let r = start(&api, Arc::new(store.clone()), listing());
        sleep(2).await;
        let lists = api.list_requests();
        assert_eq!(lists.len(), 1);
        assert_eq!(asked_all(&api), [ask("0", 500, "", "")]);
        let watches = api.watch_requests();
        assert_eq!(watches.len(), 1);
        let (params, rv, _) = &watches[0];
        assert_eq!(rv, "3", "the watch starts at the list's resourceVersion");
        assert!(
            params.bookmarks && !params.send_initial_events,
            "{params:?}"
        );
        assert!(
            params.timeout.is_some_and(|t| (300..600).contains(&t)),
            "{params:?}"
        );

        api.upsert(cm("ns", "c"));
        sleep(2).await;
        api.drop_watches();
        sleep(2).await;
        assert_eq!(api.lists(), 1, "a clean close does not relist");
        assert_eq!(
            api.watch_requests()[1].1,
            "4",
            "it re-watches from the last event"
        );

        // The re-watch fails (500): relist at the last synced version, NotOlderThan.
        api.fail_next_watch(internal_error());
        api.drop_watches();
        sleep(10).await;
        assert_eq!(asked_all(&api)[1..], [ask("4", 500, "", NOT_OLDER)]);
        assert_eq!(store.len(), 3);

        // A 410 ERROR on the watch: reflector.go does not mark the version unavailable
        // (a LIST at it "already has a semantic that it returns data at least as fresh"),
        // and the first relist after progress goes at once.
        api.upsert(cm("ns", "d"));
        sleep(2).await;
        let gone_at = Instant::now();
        api.send_gone();
        sleep(10).await;
        let lists = api.list_requests();
        assert_eq!(asked(&lists[2].0), ask("5", 500, "", NOT_OLDER));
        assert_eq!(
            lists[2].1, gone_at,
            "no backoff before the first relist after a 410"
        );
        r.stop().await;
    }

    /// A store that takes pages and records their sizes and the list's resourceVersion.
    #[derive(Default)]
    struct Pages {
        pages: Mutex<Vec<usize>>,
        finished: Mutex<Option<String>>,
    }

    impl ReflectorSink<ConfigMap> for Pages {
        fn add(&self, _: Arc<ConfigMap>) -> Result<(), CacheError> {
            Ok(())
        }
        fn update(&self, _: Arc<ConfigMap>) -> Result<(), CacheError> {
            Ok(())
        }
        fn delete(&self, _: &Arc<ConfigMap>) -> Result<(), CacheError> {
            Ok(())
        }
        fn replace(&self, _: Vec<Arc<ConfigMap>>, _: &str) -> Result<(), CacheError> {
            panic!("a paged store gets pages");
        }
        fn resync(&self) -> Result<(), CacheError> {
            Ok(())
        }
        fn paged_replace(&self) -> Option<&dyn crate::cache::PagedReplace<ConfigMap>> {
            Some(self)
        }
    }

    impl crate::cache::PagedReplace<ConfigMap> for Pages {
        fn replace_begin(&self) {
            self.pages.lock().clear();
        }
        fn replace_page(&self, objs: Vec<Arc<ConfigMap>>) -> Result<(), CacheError> {
            self.pages.lock().push(objs.len());
            Ok(())
        }
        fn replace_finish(&self, rv: &str) -> Result<(), CacheError> {
            *self.finished.lock() = Some(rv.to_owned());
            Ok(())
        }
    }

    /// Issue 18 item 3: a streaming list (the default) hands a paged store its initial
    /// events page by page, as a paged LIST does, so the reflector never holds them all.
    #[tokio::test(start_paused = true)]
    async fn a_streaming_list_hands_a_paged_store_its_initial_events_in_pages() {
        let api = FakeApi::new();
        for i in 0..7 {
            api.upsert(cm("ns", &format!("o{i}")));
        }
        let store = Arc::new(Pages::default());
        let config = ReflectorConfig {
            page_size: 3,
            ..ReflectorConfig::default()
        };
        assert_eq!(config.initial_list, InitialListStrategy::StreamingList);
        let r = start(&api, store.clone(), config);
        sleep(2).await;
        assert_eq!(api.lists(), 0);
        assert_eq!(*store.pages.lock(), [3, 3, 1]);
        assert_eq!(store.finished.lock().as_deref(), Some("8"));
        r.stop().await;
    }

    /// client-go `TestReflectorListAndWatch` ("UseWatchList enabled"): a streaming list is
    /// one watch asking `sendInitialEvents` with bookmarks from resourceVersion "" (and no
    /// list); the watch after it asks no initial events again. A server that refuses
    /// streaming (an API error) gets a list at "0" in the same round, and lists from then on.
    #[tokio::test(start_paused = true)]
    async fn a_streaming_list_asks_initial_events_once_and_falls_back_when_refused() {
        let streaming = || ReflectorConfig {
            initial_list: InitialListStrategy::StreamingList,
            ..listing()
        };
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let store = Indexer::<ConfigMap>::default();
        let r = start(&api, Arc::new(store.clone()), streaming());
        sleep(2).await;
        let watches = api.watch_requests();
        assert_eq!(watches.len(), 1);
        assert!(watches[0].0.send_initial_events && watches[0].0.bookmarks);
        assert_eq!(watches[0].1, "");
        assert_eq!(api.lists(), 0);
        assert!(store.get_by_key("ns/a").is_some());
        api.drop_watches();
        sleep(2).await;
        let watches = api.watch_requests();
        assert!(!watches[1].0.send_initial_events);
        assert_eq!(watches[1].1, "2");
        r.stop().await;

        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        api.fail_next_watch(api_error(
            400,
            "BadRequest",
            "sendInitialEvents is forbidden",
        ));
        let r = start(&api, Arc::new(Indexer::default()), streaming());
        sleep(2).await;
        // A failing watch makes it relist: with a list, not a streaming watch.
        api.fail_next_watch(internal_error());
        api.drop_watches();
        sleep(10).await;
        let asked: Vec<(bool, String)> = api
            .requests()
            .into_iter()
            .map(|r| match r {
                Request::List(p, _) => (false, asked(&p).0),
                Request::Watch(p, rv, _) => (p.send_initial_events, format!("watch {rv}")),
            })
            .collect();
        assert_eq!(
            asked,
            [
                (true, "watch ".to_owned()),
                (false, "0".to_owned()),
                (false, "watch 2".to_owned()),
                (false, "watch 2".to_owned()),
                (false, "2".to_owned()),
                (false, "watch 2".to_owned()),
            ]
        );
        r.stop().await;
    }

    /// client-go `TestReflectorExpiredExactResourceVersion` and
    /// `TestReflectorFullListIfTooLarge`: a relist refused with 410 Expired or "too large
    /// resource version" (the `ResourceVersionTooLarge` cause, the cause message of
    /// kube-apiserver 1.17.0–1.18.5, the status message before 1.17) is retried at once at
    /// resourceVersion "" (a consistent read).
    #[tokio::test(start_paused = true)]
    async fn an_expired_or_too_large_relist_falls_back_to_a_consistent_list() {
        let api = FakeApi::<ConfigMap>::new();
        let version = Arc::new(AtomicU32::new(10));
        let too_large = |cause: Option<StatusCause>, message: &str| {
            ClientError::Api(Box::new(Status {
                code: 504,
                reason: "Timeout".into(),
                message: message.into(),
                details: Some(details(cause.into_iter().collect(), 1)),
                ..Status::default()
            }))
        };
        api.script_lists(move |p| {
            Some(match p.resource_version.as_deref().unwrap_or_default() {
                "0" => Ok(list_of("10", vec![], None)),
                "10" => Err(api_error(410, "Expired", "too old resource version")),
                "" => {
                    let v = version.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok(list_of(&v.to_string(), vec![], None))
                }
                "11" => Err(too_large(
                    Some(cause("ResourceVersionTooLarge", "")),
                    "Timeout: Too large resource version: 11, current: 10",
                )),
                "12" => Err(too_large(
                    Some(cause("", "Too large resource version")),
                    "Timeout",
                )),
                "13" => Err(too_large(None, "Timeout: Too large resource version")),
                other => Err(api_error(400, "BadRequest", other)),
            })
        });
        for _ in 0..4 {
            api.fail_next_watch(internal_error());
        }
        let r = start(&api, Arc::new(Indexer::default()), listing());
        sleep(120).await;
        let rvs: Vec<String> = asked_all(&api).into_iter().map(|a| a.0).collect();
        assert_eq!(rvs, ["0", "10", "", "11", "", "12", "", "13", ""]);
        assert_eq!(
            asked_all(&api)[1..3],
            [ask("10", 500, "", NOT_OLDER), ask("", 500, "", "")]
        );
        assert_eq!(r.reflector.last_sync_resource_version(), "14");
        assert_eq!(api.watch_requests().last().unwrap().1, "14");
        r.stop().await;
    }

    /// A bookmark moves the resourceVersion and nothing else (client-go `handleWatch`:
    /// `watch.Bookmark` only calls `setLastSyncResourceVersion`); the next watch starts there.
    #[tokio::test(start_paused = true)]
    async fn a_bookmark_only_advances_the_resource_version() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let store = Indexer::<ConfigMap>::default();
        let r = start(&api, Arc::new(store.clone()), listing());
        sleep(2).await;
        assert_eq!(r.reflector.last_sync_resource_version(), "2");
        api.send_bookmark("42");
        sleep(2).await;
        assert_eq!(r.reflector.last_sync_resource_version(), "42");
        assert_eq!(store.len(), 1);
        let a = store.get_by_key("ns/a").unwrap();
        assert_eq!(a.metadata.resource_version.as_deref(), Some("2"));
        api.drop_watches();
        sleep(2).await;
        assert_eq!(api.watch_requests().last().unwrap().1, "42");
        assert_eq!(api.lists(), 1);
        r.stop().await;
    }

    /// client-go `TestReflectorHandleWatchResultChanClosedBefore` ("very short watch"): a
    /// watch that ends within a second without events is an error; the reflector relists,
    /// after the backoff.
    #[tokio::test(start_paused = true)]
    async fn a_very_short_watch_relists_after_the_backoff() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        let watches = Arc::new(AtomicUsize::new(0));
        api.script_watches(move |_, _| {
            (watches.fetch_add(1, Ordering::SeqCst) == 0).then(|| Ok(vec![]))
        });
        let r = start(&api, Arc::new(Indexer::default()), listing());
        sleep(10).await;
        assert_eq!(
            asked_all(&api),
            [ask("0", 500, "", ""), ask("2", 500, "", NOT_OLDER)]
        );
        let closed_at = api.watch_requests()[0].2;
        let relisted_at = api.list_requests()[1].1;
        assert!(
            relisted_at - closed_at >= Duration::from_millis(800),
            "relisted after {:?}",
            relisted_at - closed_at
        );
        assert!(r.errors().iter().any(|e| e.contains("very short watch")));
        r.stop().await;
    }

    /// client-go `TestReflectorFullListIfExpired`: the continue token of a paged relist
    /// expires on the second page; the reflector lists once more, unpaginated, at the same
    /// resourceVersion, and the store gets the full result.
    #[tokio::test(start_paused = true)]
    async fn an_expired_continue_token_falls_back_to_one_full_list() {
        let api = FakeApi::<ConfigMap>::new();
        let pods: Vec<ConfigMap> = (0..8)
            .map(|i| cm_with("ns", &format!("pod-{i}"), &i.to_string(), &[]))
            .collect();
        api.script_lists(move |p| {
            let asked = asked(p);
            Some(match (asked.0.as_str(), asked.1, asked.2.as_str()) {
                ("0", 4, "") => Ok(list_of("10", pods[0..4].to_vec(), None)),
                ("10", 4, "") => Ok(list_of("11", pods[0..4].to_vec(), Some("C1"))),
                ("", 4, "C1") => Err(api_error(410, "Expired", "continue token expired")),
                ("10", 0, "") => Ok(list_of("11", pods.clone(), None)),
                _ => Err(api_error(
                    400,
                    "BadRequest",
                    &format!("unexpected {asked:?}"),
                )),
            })
        });
        api.fail_next_watch(internal_error());
        let store = Indexer::<ConfigMap>::default();
        let config = ReflectorConfig {
            page_size: 4,
            ..listing()
        };
        let r = start(&api, Arc::new(store.clone()), config);
        sleep(10).await;
        assert_eq!(
            asked_all(&api),
            [
                ask("0", 4, "", ""),
                ask("10", 4, "", NOT_OLDER),
                ask("", 4, "C1", ""),
                ask("10", 0, "", NOT_OLDER)
            ]
        );
        assert_eq!(store.len(), 8);
        assert_eq!(r.reflector.last_sync_resource_version(), "11");
        r.stop().await;
    }

    /// A paged store gets the full list after an expired continue token too, without the
    /// pages before the expiry twice.
    #[tokio::test(start_paused = true)]
    async fn an_expired_continue_token_restarts_a_paged_replace() {
        let api = FakeApi::<ConfigMap>::new();
        let pods: Vec<ConfigMap> = (0..6)
            .map(|i| cm_with("ns", &format!("pod-{i}"), &i.to_string(), &[]))
            .collect();
        api.script_lists(move |p| {
            let asked = asked(p);
            Some(match (asked.1, asked.2.as_str()) {
                (2, "") => Ok(list_of("10", pods[0..2].to_vec(), Some("C1"))),
                (2, "C1") => Err(api_error(410, "Expired", "continue token expired")),
                (0, "") => Ok(list_of("12", pods.clone(), None)),
                _ => Err(api_error(
                    400,
                    "BadRequest",
                    &format!("unexpected {asked:?}"),
                )),
            })
        });
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        let config = ReflectorConfig {
            page_size: 2,
            ..listing()
        };
        let r = start(&api, Arc::new(fifo.clone()), config);
        sleep(2).await;
        assert_eq!(
            asked_all(&api),
            [
                ask("0", 2, "", ""),
                ask("", 2, "C1", ""),
                ask("0", 0, "", "")
            ]
        );
        let mut keys: Vec<String> = fifo
            .list()
            .iter()
            .map(|o| o.metadata.name.clone().unwrap())
            .collect();
        keys.sort();
        assert_eq!(keys.len(), 6, "{keys:?}");
        r.stop().await;
    }

    /// client-go `TestNoRelistOnTooManyRequests` and `TestBackoffOnTooManyRequests`: a 429
    /// opening a watch, or as its ERROR event, backs off and re-watches without relisting;
    /// the server's `Retry-After` is waited at least (the first backoff is 0.8–1.6 s).
    #[tokio::test(start_paused = true)]
    async fn a_429_watch_waits_for_retry_after_and_rewatches_without_relisting() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        for _ in 0..4 {
            api.fail_next_watch(ClientError::Api(Box::new(throttled(5))));
        }
        let r = start(&api, Arc::new(Indexer::default()), listing());
        sleep(120).await;
        let watches = api.watch_requests();
        assert_eq!(watches.len(), 5);
        assert_eq!(api.lists(), 1);
        for pair in watches.windows(2) {
            assert!(pair[1].2 - pair[0].2 >= Duration::from_secs(5), "{pair:?}");
        }
        assert!(watches.iter().all(|w| w.1 == "2"), "{watches:?}");

        let sent = Instant::now();
        api.send_error(&throttled(7));
        sleep(60).await;
        let watches = api.watch_requests();
        assert_eq!(watches.len(), 6);
        assert!(watches[5].2 - sent >= Duration::from_secs(7));
        assert_eq!(api.lists(), 1, "a 429 never relists");
        r.stop().await;
    }

    /// A list refused with 429 is retried no sooner than its `Retry-After`.
    #[tokio::test(start_paused = true)]
    async fn a_429_list_waits_for_retry_after() {
        let api = FakeApi::<ConfigMap>::new();
        api.fail_next_list(ClientError::Api(Box::new(throttled(7))));
        let r = start(&api, Arc::new(Indexer::default()), listing());
        sleep(30).await;
        let lists = api.list_requests();
        assert_eq!(lists.len(), 2);
        assert!(lists[1].1 - lists[0].1 >= Duration::from_secs(7));
        assert_eq!(asked(&lists[1].0), ask("0", 500, "", ""));
        r.stop().await;
    }

    /// kube-rs #1945: a watch connection that stays open but silent (no events, no
    /// bookmarks) past the timeout the reflector asked the server for, plus the margin, is
    /// dead; the reflector drops it and re-watches from the last resourceVersion, without
    /// relisting, and sees later writes.
    #[tokio::test(start_paused = true)]
    async fn a_silent_watch_is_dropped_after_its_timeout_plus_the_margin() {
        let api = FakeApi::new();
        api.upsert(cm("ns", "a"));
        // The first watch is a half-dead connection: open, never a byte, never closed.
        api.stall_next_watch();
        let store = Indexer::<ConfigMap>::default();
        let config = ReflectorConfig {
            min_watch_timeout: Duration::from_secs(10),
            watch_idle_margin: Duration::from_secs(5),
            ..listing()
        };
        let r = start(&api, Arc::new(store.clone()), config);
        sleep(2).await;
        api.upsert(cm("ns", "b"));
        sleep(60).await;
        let watches = api.watch_requests();
        // The resumed watch, silent again after "b", is dropped in turn (the fake's
        // watches never close by themselves).
        assert!(watches.len() >= 2, "{watches:?}");
        let asked = u64::from(watches[0].0.timeout.unwrap());
        let silent = watches[1].2 - watches[0].2;
        assert!(
            silent >= Duration::from_secs(asked + 5) && silent < Duration::from_secs(asked + 6),
            "re-watched after {silent:?} for a {asked} s watch"
        );
        assert_eq!(watches[1].1, "2", "resumed from the last resourceVersion");
        assert_eq!(api.lists(), 1, "no relist");
        assert!(
            store.get_by_key("ns/b").is_some(),
            "the resumed watch sees later writes"
        );
        assert!(
            r.errors().iter().any(|e| e.contains("watch silent")),
            "{:?}",
            r.errors()
        );
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_paged_list_fetches_the_next_page_only_once_the_consumer_catches_up() {
        let api = FakeApi::new();
        for i in 0..1000 {
            api.upsert(cm("ns", &format!("cm-{i:04}")));
        }
        let fifo = DeltaFifo::<ConfigMap>::new(DeltaFifoOptions::default());
        let reflector = Arc::new(Reflector::new(
            Arc::new(api.clone()),
            Arc::new(fifo.clone()),
            ReflectorConfig {
                page_size: 100,
                ..listing()
            },
        ));
        let stop = CancellationToken::new();
        let run = tokio::spawn({
            let (reflector, stop) = (reflector.clone(), stop.clone());
            async move { reflector.run(stop).await }
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        // Nobody pops yet: the reflector stops fetching once two pages wait.
        assert_eq!(api.lists(), 2);
        assert_eq!(fifo.len(), 200);
        // Every pop that takes the backlog under two pages must let the next page in; a
        // lost wake-up would stall the list here (and fail the timeout, not hang).
        tokio::time::timeout(Duration::from_secs(60), async {
            for _ in 0..1000 {
                fifo.pop::<()>(|_, _| Ok::<(), ProcessError<()>>(()))
                    .await
                    .unwrap();
            }
        })
        .await
        .expect("the paged list stalled: a pop did not wake the reflector");
        assert_eq!(api.lists(), 10);
        assert!(fifo.has_synced());
        assert_eq!(reflector.last_sync_resource_version(), "1001");
        stop.cancel();
        run.await.unwrap();
    }
}
