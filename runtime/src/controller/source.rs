//! A controller's sources: the informers it consumes, each with the event handler that
//! feeds the controller's queue, registered when the controller runs and removed when it
//! stops.

use std::sync::Arc;

use futures::{FutureExt, future::BoxFuture};

use super::{
    Predicate, Request,
    handler::{EnqueueHandler, MapFn},
};
use crate::{
    Object,
    cache::{CacheSynced, Dispatch, HandlerOptions, InformerError, SharedIndexInformer},
    workqueue::RateLimitingQueue,
};

/// A source's event handler, registered with its informer.
pub(super) struct Registered {
    /// The informer has synced and the handler has seen its first list.
    pub(super) synced: Box<dyn Fn() -> bool + Send + Sync>,
    /// Removes the handler (waiting for a callback in flight).
    pub(super) remove: Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send + Sync>,
}

/// Registers a source's handler, feeding the controller's queue.
type Register =
    Box<dyn FnOnce(RateLimitingQueue<Request>) -> Result<Registered, InformerError> + Send>;

/// An informer the controller consumes, not yet registered.
pub(super) struct Source {
    pub(super) type_name: &'static str,
    pub(super) register: Register,
}

/// A source registering `handler` with `informer`: the registration's sync and removal.
pub(super) fn source<W: Object>(
    informer: SharedIndexInformer<W>,
    map: MapFn<W>,
    predicate: Arc<dyn Predicate<W>>,
) -> Source {
    Source {
        type_name: std::any::type_name::<W>(),
        register: Box::new(move |queue| {
            // Predicates, map functions and the enqueue never block: a task of the
            // informer's runtime, not a thread per watched type.
            let registration = informer.add_event_handler_with_options(
                EnqueueHandler::new(queue, map, predicate),
                HandlerOptions::new().dispatch(Dispatch::Task),
            )?;
            let synced = {
                let (informer, registration) = (informer.clone(), registration.clone());
                Box::new(move || informer.has_synced() && registration.has_synced())
                    as Box<dyn Fn() -> bool + Send + Sync>
            };
            let remove = Box::new(move || -> BoxFuture<'static, ()> {
                async move {
                    if let Err(error) = informer.remove_event_handler(&registration).await {
                        tracing::debug!(%error, "event handler already removed");
                    }
                }
                .boxed()
            });
            Ok::<_, InformerError>(Registered { synced, remove })
        }),
    }
}

impl CacheSynced for Registered {
    fn has_synced(&self) -> bool {
        (self.synced)()
    }
}
