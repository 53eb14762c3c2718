//! The kinds a ring shards, type-erased for the sharder: each lists and watches its
//! objects' metadata only, kept as a [`ShardView`] (the sharder reads names, versions, its
//! labels and owners, never specs), indexes them by controller owner, and patches their
//! labels.

use std::{marker::PhantomData, sync::Arc};

use futures::{FutureExt, future::BoxFuture};
use kube_core::{
    ObjectMeta,
    params::{Patch, PatchParams},
};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::view::{Placement, ShardView};
use crate::{
    Object,
    cache::{
        CacheSynced, IndexFunc, Indexers, ListWatch, MetadataListWatch, ReadOnlyIndexer,
        ResourceEventHandlerFuncs, SharedIndexInformer, UnstartedInformer,
        split_meta_namespace_key,
    },
    client::{Client, Error as ClientError, ResourceClient},
};

/// The index of a kind's objects by the uid of their controller owner.
pub(crate) const BY_CONTROLLER_UID: &str = "shard.kubegen.io/controller-uid";

/// Whether a kind's objects are reconciled (primary) or follow their owner (owned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Primary,
    Owned,
}

/// One kind of a ring, before the sharder watches it.
pub(crate) trait ShardedKind: Send + Sync + 'static {
    /// `Kind.group` (`Foo.example.com`, `Deployment.apps`), for logs and metrics.
    fn name(&self) -> String;
    /// The group and kind an owner reference names.
    fn group_kind(&self) -> (String, String);
    /// A cache of the kind's objects in `namespace` (all when `None`), not started.
    fn watch(&self, client: &Client, namespace: Option<&str>) -> Arc<dyn KindCache>;
}

/// A watched kind: its metadata cache and its label writes.
pub(crate) trait KindCache: Send + Sync + 'static {
    fn get(&self, key: &str) -> Option<Placement>;
    fn keys(&self) -> Vec<String>;
    fn owned_by(&self, uid: &str) -> Vec<String>;
    fn synced(&self) -> &dyn CacheSynced;
    /// Starts the cache (once; `None` if it was started before).
    fn spawn(&self, stop: CancellationToken) -> Option<JoinHandle<()>>;
    /// Calls `f` with what is kept of every cached object.
    fn for_each(&self, f: &mut dyn FnMut(&Placement));
    /// Calls `changed` with the key of every object added, changed or deleted.
    fn on_change(&self, changed: Arc<dyn Fn(String) + Send + Sync>);
    /// Merge-patches the object `key` (`body` carries the resourceVersion precondition).
    fn patch(
        &self,
        key: &str,
        body: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), ClientError>>;
}

/// The sharded kind `K`.
pub(crate) struct Kind<K>(PhantomData<fn() -> K>);

impl<K> Kind<K> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<K: Object> ShardedKind for Kind<K> {
    fn name(&self) -> String {
        let group = K::group(&());
        if group.is_empty() {
            K::kind(&()).into_owned()
        } else {
            format!("{}.{group}", K::kind(&()))
        }
    }

    fn group_kind(&self) -> (String, String) {
        (K::group(&()).into_owned(), K::kind(&()).into_owned())
    }

    fn watch(&self, client: &Client, namespace: Option<&str>) -> Arc<dyn KindCache> {
        let by_owner: IndexFunc<ShardView<K>> = Arc::new(|obj| {
            Ok(obj
                .metadata()
                .owner_references
                .iter()
                .flatten()
                .filter(|r| r.controller == Some(true))
                .map(|r| r.uid.clone())
                .collect())
        });
        let unstarted =
            SharedIndexInformer::builder(MetadataListWatch::<K, ShardView<K>>::decoding(
                ListWatch::new(ResourceClient::<K>::scoped(client.clone(), namespace)),
            ))
            .indexers(Indexers::from([(BY_CONTROLLER_UID.to_owned(), by_owner)]))
            .build();
        let informer = unstarted.handle();
        Arc::new(Watched {
            indexer: informer.indexer(),
            informer,
            unstarted: Mutex::new(Some(unstarted)),
            client: client.clone(),
        })
    }
}

struct Watched<K: Object> {
    informer: SharedIndexInformer<ShardView<K>>,
    unstarted: Mutex<Option<UnstartedInformer<ShardView<K>>>>,
    indexer: ReadOnlyIndexer<ShardView<K>>,
    client: Client,
}

impl<K: Object> KindCache for Watched<K> {
    fn get(&self, key: &str) -> Option<Placement> {
        self.indexer.get_by_key(key).map(|o| o.placement().clone())
    }

    fn keys(&self) -> Vec<String> {
        // Sorted: the store's order is its hash map's, which differs from run to run (the
        // simulation replays a seed only if the sharder queues objects in a fixed order).
        let mut keys = self.indexer.list_keys();
        keys.sort_unstable();
        keys
    }

    fn owned_by(&self, uid: &str) -> Vec<String> {
        let mut keys = self
            .indexer
            .index_keys(BY_CONTROLLER_UID, uid)
            .unwrap_or_default();
        keys.sort_unstable();
        keys
    }

    fn synced(&self) -> &dyn CacheSynced {
        &self.informer
    }

    fn spawn(&self, stop: CancellationToken) -> Option<JoinHandle<()>> {
        let unstarted = self.unstarted.lock().take()?;
        Some(unstarted.spawn(stop).1)
    }

    fn for_each(&self, f: &mut dyn FnMut(&Placement)) {
        for obj in self.indexer.list() {
            f(obj.placement());
        }
    }

    fn on_change(&self, changed: Arc<dyn Fn(String) + Send + Sync>) {
        let key = |meta: &ObjectMeta| match &meta.namespace {
            Some(ns) => format!("{ns}/{}", meta.name.clone().unwrap_or_default()),
            None => meta.name.clone().unwrap_or_default(),
        };
        let (on_add, on_update, on_delete) = (changed.clone(), changed.clone(), changed);
        let handler = ResourceEventHandlerFuncs::<ShardView<K>>::new()
            .add_func(move |obj, _| on_add(key(obj.metadata())))
            .update_func(move |_, new| on_update(key(new.metadata())))
            .delete_func(move |obj| {
                if let Some(obj) = obj.object() {
                    on_delete(key(obj.metadata()));
                }
            });
        if let Err(error) = self.informer.add_event_handler_with_options(
            handler,
            crate::cache::HandlerOptions::new().dispatch(crate::cache::Dispatch::Task),
        ) {
            tracing::error!(%error, "the sharder's informer refused its handler");
        }
    }

    fn patch(
        &self,
        key: &str,
        body: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), ClientError>> {
        let (namespace, name) = split_meta_namespace_key(key)
            .map(|(ns, name)| (ns.to_owned(), name.to_owned()))
            .unwrap_or_else(|_| (String::new(), key.to_owned()));
        let client = ResourceClient::<K>::scoped(
            self.client.clone(),
            (!namespace.is_empty()).then_some(namespace.as_str()),
        );
        async move {
            client
                .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                .await
                .map(drop)
        }
        .boxed()
    }
}

/// The object key a rendezvous pick hashes: `group/Kind/namespace/name` of the object, so
/// the same name in two kinds spreads independently.
pub(crate) fn hash_key(group_kind: &(String, String), key: &str) -> String {
    format!("{}/{}/{key}", group_kind.0, group_kind.1)
}

/// The group of an owner reference's `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
pub(crate) fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}
