//! Adding and removing an informer's handlers: [`HandlerRegistration`], and the replay of
//! the cache to a handler added while the informer runs (client-go's
//! `AddEventHandlerWithOptions` and `RemoveEventHandler`).

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crate::Cacheable;
use crate::cache::{
    CacheSynced, HandlerOptions, ResourceEventHandler,
    informer::processor::{Listener, MINIMUM_RESYNC_PERIOD, Notification, determine_resync_period},
};
use crate::cache::{InformerError, SharedIndexInformer};

/// The handle returned when a handler is added; used to remove it and to ask whether it
/// has received every initial notification.
#[derive(Clone)]
pub struct HandlerRegistration {
    id: u64,
    synced: Arc<dyn Fn() -> bool + Send + Sync>,
    pending: Arc<AtomicUsize>,
}

impl fmt::Debug for HandlerRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerRegistration")
            .field("id", &self.id)
            .finish()
    }
}

impl HandlerRegistration {
    /// True once the informer has synced and this handler has handled every add of the
    /// initial list (or of its replay, for a handler added after start).
    pub fn has_synced(&self) -> bool {
        (self.synced)()
    }

    /// Notifications given to the handler and not yet handled: buffered, or in its
    /// callback now. Zero when the handler has caught up with the informer.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}

impl CacheSynced for HandlerRegistration {
    fn has_synced(&self) -> bool {
        HandlerRegistration::has_synced(self)
    }
}

impl<K: Cacheable> SharedIndexInformer<K> {
    /// Adds a handler with the informer's default resync period, called on a thread of
    /// its own.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<HandlerRegistration, InformerError> {
        self.add_event_handler_with_options(handler, HandlerOptions::new())
    }

    /// Adds a handler that also wants a resync every `resync`; see
    /// [`add_event_handler_with_options`](Self::add_event_handler_with_options).
    pub fn add_event_handler_with_resync(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync: Duration,
    ) -> Result<HandlerRegistration, InformerError> {
        self.add_event_handler_with_options(handler, HandlerOptions::new().resync(resync))
    }

    /// Adds a handler as `options` say (client-go's `AddEventHandlerWithOptions`). Its
    /// resync period, when given, follows client-go's rules: at least 1 s; before start a
    /// period shorter than the informer's check period lowers it, after start it is raised
    /// to it; an informer created without resync never resyncs. Its
    /// [`Dispatch`](crate::cache::Dispatch) says whether it runs on a thread of its own or on a
    /// task of the informer's runtime.
    pub fn add_event_handler_with_options(
        &self,
        handler: impl ResourceEventHandler<K>,
        options: HandlerOptions,
    ) -> Result<HandlerRegistration, InformerError> {
        let mut state = self.inner.state.lock();
        if state.stopped {
            return Err(InformerError::Stopped);
        }
        let mut resync = options
            .resync_period()
            .unwrap_or(state.default_handler_resync);
        if !resync.is_zero() {
            if resync < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(?resync, "resync period raised to the 1 s minimum");
                resync = MINIMUM_RESYNC_PERIOD;
            }
            if resync < state.resync_check_period {
                if state.started {
                    tracing::warn!(?resync, check = ?state.resync_check_period,
                        "informer already started: handler resync raised to the check period");
                    resync = state.resync_check_period;
                } else {
                    state.resync_check_period = resync;
                    self.inner
                        .processor
                        .lock()
                        .resync_check_period_changed(resync);
                }
            }
        }
        let effective = determine_resync_period(resync, state.resync_check_period);
        let listener = Listener::new(
            Arc::new(handler),
            resync,
            effective,
            options.dispatch_kind(),
        );
        let registration = self.registration(&listener);
        if !state.started {
            self.inner.processor.lock().add_listener(listener);
            return Ok(registration);
        }
        drop(state);
        // Join a running informer: stop delta processing, register, replay the cache.
        let _block = self.inner.block_deltas.lock();
        self.inner.processor.lock().add_listener(listener.clone());
        // In (namespace, name) order: the same cache replays the same way (a seeded
        // simulation repeats itself), for one sort of what is about to be delivered anyway.
        let mut cached = self.inner.indexer.list();
        cached.sort_unstable_by(|a, b| {
            (a.meta().namespace.as_deref(), a.meta().name.as_deref())
                .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
        });
        for obj in cached {
            listener.notify(Notification::Add {
                obj,
                is_in_initial_list: true,
            });
        }
        Ok(registration)
    }

    fn registration(&self, listener: &Arc<Listener<K>>) -> HandlerRegistration {
        let informer = Arc::downgrade(&self.inner);
        let weak_listener = Arc::downgrade(listener);
        HandlerRegistration {
            id: listener.id,
            pending: listener.pending_counter(),
            synced: Arc::new(move || {
                let upstream = informer
                    .upgrade()
                    .is_some_and(|inner| inner.fifo.get().is_some_and(|q| q.has_synced()));
                upstream
                    && weak_listener
                        .upgrade()
                        .is_some_and(|l| l.initial_delivered())
            }),
        }
    }

    /// Removes a handler: its buffered notifications are dropped, and this returns once a
    /// callback in flight has returned (client-go's `ShutDownEventHandler` semantics), so
    /// afterwards the handler is never called again. Called from the handler's own
    /// callback it returns at once (it cannot wait for itself).
    pub async fn remove_event_handler(
        &self,
        registration: &HandlerRegistration,
    ) -> Result<(), InformerError> {
        let removed = self.inner.processor.lock().remove_listener(registration.id);
        match removed {
            None => Err(InformerError::UnknownHandler),
            Some(done) => {
                if let Some(done) = done {
                    // An error means the thread has gone already.
                    let _ = done.await;
                }
                Ok(())
            }
        }
    }

    /// Whether `registration` is still registered here.
    pub fn is_registered(&self, registration: &HandlerRegistration) -> bool {
        self.inner.processor.lock().is_registered(registration.id)
    }
}
