//! Type-erased informers and listers, looked up by group-version-resource.

use std::{any::Any, fmt, sync::Arc};

use kube_core::{DynamicObject, GroupVersionResource};

use crate::{
    Object,
    cache::{ListerError, SharedIndexInformer},
};

/// What the factory needs from an informer without knowing its type.
pub(crate) trait ErasedInformer: Send + Sync {
    fn has_synced(&self) -> bool;
    fn list(&self) -> Vec<Result<DynamicObject, serde_json::Error>>;
    fn get(&self, key: &str) -> Option<Result<DynamicObject, serde_json::Error>>;
    fn as_any(&self) -> &dyn Any;
    fn resource(&self) -> String;
}

impl<K: Object> ErasedInformer for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }

    fn list(&self) -> Vec<Result<DynamicObject, serde_json::Error>> {
        self.indexer()
            .list()
            .iter()
            .map(|o| to_dynamic(o.as_ref()))
            .collect()
    }

    fn get(&self, key: &str) -> Option<Result<DynamicObject, serde_json::Error>> {
        self.indexer()
            .get_by_key(key)
            .map(|o| to_dynamic(o.as_ref()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn resource(&self) -> String {
        crate::cache::lister::group_resource::<K>()
    }
}

/// Serializes a typed object into a `DynamicObject`, filling in `apiVersion` and `kind`
/// for types that do not serialize them.
fn to_dynamic<K: Object>(obj: &K) -> Result<DynamicObject, serde_json::Error> {
    let mut value = serde_json::to_value(obj)?;
    if let Some(map) = value.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| K::api_version(&()).into_owned().into());
        map.entry("kind")
            .or_insert_with(|| K::kind(&()).into_owned().into());
    }
    serde_json::from_value(value)
}

/// An informer found by group-version-resource (client-go's `GenericInformer`).
#[derive(Clone)]
pub struct GenericInformer {
    pub(crate) gvr: GroupVersionResource,
    pub(crate) inner: Arc<dyn ErasedInformer>,
}

impl fmt::Debug for GenericInformer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericInformer")
            .field("resource", &self.gvr.resource)
            .field("group", &self.gvr.group)
            .finish_non_exhaustive()
    }
}

impl GenericInformer {
    /// The resource this informer watches.
    pub fn gvr(&self) -> &GroupVersionResource {
        &self.gvr
    }

    /// Whether the informer's first list has been fully processed.
    pub fn has_synced(&self) -> bool {
        self.inner.has_synced()
    }

    /// The typed informer, if it is for `K`.
    pub fn downcast<K: Object>(&self) -> Option<SharedIndexInformer<K>> {
        self.inner
            .as_any()
            .downcast_ref::<SharedIndexInformer<K>>()
            .cloned()
    }

    /// A lister returning `DynamicObject`s.
    pub fn lister(&self) -> GenericLister {
        GenericLister {
            inner: self.inner.clone(),
        }
    }
}

/// Lists an informer's cache as `DynamicObject`s (client-go's `GenericLister`).
#[derive(Clone)]
pub struct GenericLister {
    inner: Arc<dyn ErasedInformer>,
}

impl fmt::Debug for GenericLister {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenericLister").finish_non_exhaustive()
    }
}

impl GenericLister {
    /// Every cached object; objects that cannot be represented are skipped (logged).
    pub fn list(&self) -> Vec<DynamicObject> {
        self.inner
            .list()
            .into_iter()
            .filter_map(|r| {
                r.map_err(|error| tracing::warn!(%error, "object not representable"))
                    .ok()
            })
            .collect()
    }

    /// The cached object `namespace/name` (empty namespace for cluster-scoped objects).
    pub fn get(&self, namespace: &str, name: &str) -> Result<DynamicObject, ListerError> {
        let key = if namespace.is_empty() {
            name.to_owned()
        } else {
            format!("{namespace}/{name}")
        };
        let not_found = || ListerError::NotFound {
            resource: self.inner.resource(),
            name: name.to_owned(),
        };
        match self.inner.get(&key) {
            Some(Ok(obj)) => Ok(obj),
            Some(Err(error)) => {
                tracing::warn!(%error, key, "object not representable");
                Err(not_found())
            }
            None => Err(not_found()),
        }
    }
}
