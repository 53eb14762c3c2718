//! The informer event handlers a controller registers (controller-runtime's
//! `pkg/handler`): each turns an event on a watched object into requests for the objects
//! to reconcile, through a predicate, into the controller's queue.
//!
//! * the primary type's events request the object itself;
//! * an owned type's events request the object's controller owner, when that owner is of
//!   the primary type (`EnqueueRequestForOwner` with `OnlyControllerOwner`);
//! * a watched type's events request whatever a mapping function returns
//!   (`EnqueueRequestsFromMapFunc`).
//!
//! An update requests the mapping of both the old and the new object (a Deployment moved
//! to another owner wakes both owners). Events that carry nothing new, the objects of the
//! first list and resyncs (old and new at the same resourceVersion), are queued at
//! [`LOW_PRIORITY`](super::LOW_PRIORITY), behind fresh events (controller-runtime's
//! `LowPriorityWhenUnchanged`).

use std::{marker::PhantomData, sync::Arc};

use kube_core::Resource;

use super::{LOW_PRIORITY, Predicate, Request};
use crate::cache::{DeletedObject, ResourceEventHandler};
use crate::workqueue::RateLimitingQueue;

/// Maps an object of a watched type to the requests it causes.
pub(crate) type MapFn<W> = Arc<dyn Fn(&W) -> Vec<Request> + Send + Sync>;

/// Queues the requests `map` gives for the events `predicate` lets through.
pub(crate) struct EnqueueHandler<W> {
    queue: RateLimitingQueue<Request>,
    map: MapFn<W>,
    predicate: Arc<dyn Predicate<W>>,
    _w: PhantomData<fn(W)>,
}

impl<W: Resource + 'static> EnqueueHandler<W> {
    pub(crate) fn new(
        queue: RateLimitingQueue<Request>,
        map: MapFn<W>,
        predicate: Arc<dyn Predicate<W>>,
    ) -> Self {
        Self {
            queue,
            map,
            predicate,
            _w: PhantomData,
        }
    }

    fn enqueue(&self, obj: &W, priority: i32) {
        for request in (self.map)(obj) {
            self.queue.at_priority(priority).add(request);
        }
    }
}

impl<W: Resource + Send + Sync + 'static> ResourceEventHandler<W> for EnqueueHandler<W> {
    fn on_add(&self, obj: &Arc<W>, is_in_initial_list: bool) {
        if self.predicate.allow_create(obj) {
            self.enqueue(obj, if is_in_initial_list { LOW_PRIORITY } else { 0 });
        }
    }

    fn on_update(&self, old: &Arc<W>, new: &Arc<W>) {
        if !self.predicate.allow_update(old, new) {
            return;
        }
        let unchanged = old.meta().resource_version == new.meta().resource_version;
        let priority = if unchanged { LOW_PRIORITY } else { 0 };
        let mut requests = (self.map)(new);
        for request in (self.map)(old) {
            if !requests.contains(&request) {
                requests.push(request);
            }
        }
        for request in requests {
            self.queue.at_priority(priority).add(request);
        }
    }

    fn on_delete(&self, obj: &DeletedObject<W>) {
        // A tombstone without a last known state names no object to map.
        if let Some(obj) = obj.object()
            && self.predicate.allow_delete(obj)
        {
            self.enqueue(obj, 0);
        }
    }
}

/// The request for the object itself.
pub(crate) fn map_self<W: Resource>() -> MapFn<W> {
    Arc::new(|obj: &W| Request::for_object(obj).into_iter().collect())
}

/// The request for the object's controller owner, if that owner is a `K` (same API group
/// and kind; the version may differ). A cluster-scoped owner is requested without a
/// namespace, a namespaced one in the object's namespace (owners never cross namespaces).
pub(crate) fn map_owner<K: Resource<DynamicType = ()>, W: Resource>(
    owner_namespaced: bool,
) -> MapFn<W> {
    let kind = K::kind(&()).into_owned();
    let group = K::group(&()).into_owned();
    Arc::new(move |obj: &W| {
        let Some(owner) = crate::controllerutil::controller_of(obj) else {
            return Vec::new();
        };
        let owner_group = crate::controllerutil::group_of(&owner.api_version);
        if owner.kind != kind || owner_group != group {
            return Vec::new();
        }
        let namespace = obj.meta().namespace.as_deref().filter(|_| owner_namespaced);
        vec![Request::new(namespace, &owner.name)]
    })
}
