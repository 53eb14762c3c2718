//! Event handlers: what an informer calls when the cache changes.

use std::{fmt, sync::Arc, time::Duration};

use crate::cache::DeletedObject;

/// Receives an informer's notifications. Every method has an empty default.
///
/// Notifications for one handler arrive in order, one at a time, from the handler's own
/// thread (or task, see [`Dispatch`]); they may be older than the cache (an update can be followed by a delete before
/// the handler looks). Resyncs arrive as `on_update` with identical old and new objects.
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object appeared; `is_in_initial_list` is true for objects of the informer's
    /// first list (and for the cache replayed to a handler added after start).
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }
    /// An object changed (or a resync re-delivered it: then `old` and `new` are equal).
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }
    /// An object was deleted; a tombstone when the delete event itself was missed.
    fn on_delete(&self, obj: &DeletedObject<K>) {
        let _ = obj;
    }
}

/// How an informer calls a handler ([`HandlerOptions::dispatch`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// On a thread of the handler's own (the default): the handler may block, and a slow
    /// one only grows its own buffer.
    #[default]
    Thread,
    /// On a task of the async runtime the informer runs on: for handlers that never block
    /// (that enqueue, notify or count, as the controller's do). No thread per handler, and
    /// under a paused clock (tokio's `test-util`) the handler runs on the runtime's
    /// schedule, so a simulation replays exactly. A handler that blocks here stalls the
    /// runtime's worker.
    Task,
}

/// How to add a handler (client-go's `HandlerOptions`): its resync period and how it is
/// called.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandlerOptions {
    resync: Option<Duration>,
    dispatch: Dispatch,
}

impl HandlerOptions {
    /// The informer's default resync period, called on a thread of its own.
    pub fn new() -> Self {
        Self::default()
    }

    /// A resync every `period` (client-go's rules; see
    /// [`SharedIndexInformer::add_event_handler_with_resync`](crate::cache::SharedIndexInformer::add_event_handler_with_resync)).
    #[must_use]
    pub fn resync(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// How the handler is called.
    #[must_use]
    pub fn dispatch(mut self, dispatch: Dispatch) -> Self {
        self.dispatch = dispatch;
        self
    }

    /// The resync period asked for; `None` for the informer's default.
    pub fn resync_period(&self) -> Option<Duration> {
        self.resync
    }

    /// How the handler is called.
    pub fn dispatch_kind(&self) -> Dispatch {
        self.dispatch
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&DeletedObject<K>) + Send + Sync>;

/// A [`ResourceEventHandler`] made of closures; unset ones do nothing.
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> fmt::Debug for ResourceEventHandlerFuncs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEventHandlerFuncs")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// No callbacks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `f` on adds (client-go's `AddFunc`).
    #[must_use]
    pub fn add_func(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Calls `f` on updates (client-go's `UpdateFunc`).
    #[must_use]
    pub fn update_func(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Calls `f` on deletes (client-go's `DeleteFunc`).
    #[must_use]
    pub fn delete_func(mut self, f: impl Fn(&DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list);
        }
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}

/// Passes on only the notifications of objects that pass `filter`, keeping the inner
/// handler's view consistent: an update whose object stops passing becomes a delete, one
/// whose object starts passing becomes an add. A tombstone without a last known state is
/// passed on.
pub struct FilteringResourceEventHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    handler: H,
}

impl<K, H> FilteringResourceEventHandler<K, H> {
    /// Wraps `handler` behind `filter`.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, handler: H) -> Self {
        Self {
            filter: Box::new(filter),
            handler,
        }
    }
}

impl<K, H> fmt::Debug for FilteringResourceEventHandler<K, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FilteringResourceEventHandler")
    }
}

impl<K: Send + Sync + 'static, H: ResourceEventHandler<K>> ResourceEventHandler<K>
    for FilteringResourceEventHandler<K, H>
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (true, false) => self.handler.on_delete(&DeletedObject::Object(old.clone())),
            (false, true) => self.handler.on_add(new, false),
            (false, false) => {}
        }
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        if obj.object().is_none_or(|o| (self.filter)(o)) {
            self.handler.on_delete(obj);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Record(Mutex<Vec<String>>);

    impl ResourceEventHandler<i32> for Arc<Record> {
        fn on_add(&self, obj: &Arc<i32>, initial: bool) {
            self.0.lock().unwrap().push(format!("add {obj} {initial}"));
        }
        fn on_update(&self, old: &Arc<i32>, new: &Arc<i32>) {
            self.0.lock().unwrap().push(format!("update {old}->{new}"));
        }
        fn on_delete(&self, obj: &DeletedObject<i32>) {
            self.0
                .lock()
                .unwrap()
                .push(format!("delete {:?}", obj.object().map(|o| **o)));
        }
    }

    #[test]
    fn filtering_handler_turns_leaving_and_entering_updates_into_delete_and_add() {
        let record = Arc::new(Record::default());
        let h = FilteringResourceEventHandler::new(|n: &i32| n % 2 == 0, record.clone());
        h.on_add(&Arc::new(1), true);
        h.on_add(&Arc::new(2), true);
        h.on_update(&Arc::new(2), &Arc::new(4));
        h.on_update(&Arc::new(4), &Arc::new(5));
        h.on_update(&Arc::new(5), &Arc::new(6));
        h.on_update(&Arc::new(7), &Arc::new(9));
        h.on_delete(&DeletedObject::Object(Arc::new(3)));
        h.on_delete(&DeletedObject::Object(Arc::new(8)));
        assert_eq!(
            *record.0.lock().unwrap(),
            vec![
                "add 2 true",
                "update 2->4",
                "delete Some(4)",
                "add 6 false",
                "delete Some(8)"
            ]
        );
    }

    #[test]
    fn funcs_call_only_what_is_set() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let h = ResourceEventHandlerFuncs::new().update_func({
            let seen = seen.clone();
            move |old: &Arc<i32>, new: &Arc<i32>| seen.lock().unwrap().push((**old, **new))
        });
        h.on_add(&Arc::new(1), false);
        h.on_update(&Arc::new(1), &Arc::new(2));
        h.on_delete(&DeletedObject::Object(Arc::new(2)));
        assert_eq!(*seen.lock().unwrap(), vec![(1, 2)]);
    }
}
