//! Type-erased informers and listers, looked up by group-version-resource.

use std::{any::Any, fmt, sync::Arc};

use kube_core::{DynamicObject, GroupVersionResource};

use crate::{
    Cacheable,
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

/// A factory informer with its type's names, erased.
pub(crate) struct Erased<K: Cacheable> {
    informer: SharedIndexInformer<K>,
    api_version: String,
    kind: String,
    group_resource: String,
}

impl<K: Cacheable> Erased<K> {
    pub(crate) fn new(informer: SharedIndexInformer<K>, dyntype: &K::DynamicType) -> Self {
        Self {
            informer,
            api_version: K::api_version(dyntype).into_owned(),
            kind: K::kind(dyntype).into_owned(),
            group_resource: crate::cache::store::lister::group_resource::<K>(dyntype),
        }
    }

    /// The object as a `DynamicObject`: a clone when it is one (a dynamic informer's),
    /// otherwise serialized, with `apiVersion` and `kind` filled in for types that do not
    /// serialize them.
    fn to_dynamic(&self, obj: &K) -> Result<DynamicObject, serde_json::Error> {
        if let Some(dynamic) = (obj as &dyn Any).downcast_ref::<DynamicObject>() {
            return Ok(dynamic.clone());
        }
        let mut value = serde_json::to_value(obj)?;
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion")
                .or_insert_with(|| self.api_version.clone().into());
            map.entry("kind")
                .or_insert_with(|| self.kind.clone().into());
        }
        serde_json::from_value(value)
    }
}

impl<K: Cacheable> ErasedInformer for Erased<K> {
    fn has_synced(&self) -> bool {
        self.informer.has_synced()
    }

    fn list(&self) -> Vec<Result<DynamicObject, serde_json::Error>> {
        self.informer
            .indexer()
            .list()
            .iter()
            .map(|o| self.to_dynamic(o.as_ref()))
            .collect()
    }

    fn get(&self, key: &str) -> Option<Result<DynamicObject, serde_json::Error>> {
        self.informer
            .indexer()
            .get_by_key(key)
            .map(|o| self.to_dynamic(o.as_ref()))
    }

    fn as_any(&self) -> &dyn Any {
        &self.informer
    }

    fn resource(&self) -> String {
        self.group_resource.clone()
    }
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
    pub fn downcast<K: Cacheable>(&self) -> Option<SharedIndexInformer<K>> {
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
