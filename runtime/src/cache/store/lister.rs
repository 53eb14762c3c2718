//! Listers: read-only, typed views of an informer's cache (client-go's listers).
//!
//! Listers never call the API server: they read the cache ([`ReadOnlyIndexer`]), so they are only as
//! fresh as the informer, and they return shared `Arc<K>` objects that must not be
//! mutated (use `DeepCopy` to get an owned copy to change).

use std::{fmt, sync::Arc};

use kube_core::{Resource, Selector, SelectorExt};

use crate::Cacheable;
use crate::cache::{NAMESPACE_INDEX, ReadOnlyIndexer};

/// A lister lookup failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListerError {
    /// No cached object has this name (client-go's `errors.NewNotFound(resource, name)`).
    #[error("{resource} {name:?} not found")]
    NotFound {
        /// The group-resource, e.g. `deployments.apps` or `pods`.
        resource: String,
        /// The name looked up.
        name: String,
    },
}

impl ListerError {
    /// Whether this is a NotFound error.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }
}

/// `plural.group`, or `plural` for the core group, of the type `dyntype` describes.
pub(crate) fn group_resource<K: Resource>(dyntype: &K::DynamicType) -> String {
    let (plural, group) = (K::plural(dyntype), K::group(dyntype));
    if group.is_empty() {
        plural.into_owned()
    } else {
        format!("{plural}.{group}")
    }
}

fn labels_match<K: Resource>(obj: &K, selector: &Selector) -> bool {
    selector.selects_all()
        || selector.matches(obj.meta().labels.as_ref().unwrap_or(&Default::default()))
}

/// Lists and gets cached objects across all namespaces.
pub struct Lister<K> {
    indexer: ReadOnlyIndexer<K>,
    /// The group-resource named in NotFound errors.
    resource: Arc<str>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
            resource: self.resource.clone(),
        }
    }
}

impl<K> fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl<K: Cacheable<DynamicType: Default>> Lister<K> {
    /// A lister over `indexer`, for a type whose names are known at compile time.
    pub fn new(indexer: impl Into<ReadOnlyIndexer<K>>) -> Self {
        Self::new_with(indexer, &K::DynamicType::default())
    }
}

impl<K: Cacheable> Lister<K> {
    /// A lister over `indexer` of the type `dyntype` describes (for
    /// `DynamicObject`, its `ApiResource`).
    pub fn new_with(indexer: impl Into<ReadOnlyIndexer<K>>, dyntype: &K::DynamicType) -> Self {
        Self {
            indexer: indexer.into(),
            resource: group_resource::<K>(dyntype).into(),
        }
    }

    pub(crate) fn from_parts(indexer: ReadOnlyIndexer<K>, resource: Arc<str>) -> Self {
        Self { indexer, resource }
    }

    /// Every cached object whose labels match `selector` (use `Selector::default()` for all).
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.indexer
            .list()
            .into_iter()
            .filter(|o| labels_match(o.as_ref(), selector))
            .collect()
    }

    /// The cached object named `name`; for cluster-scoped types.
    pub fn get(&self, name: &str) -> Result<Arc<K>, ListerError> {
        self.indexer
            .get_by_key(name)
            .ok_or_else(|| ListerError::NotFound {
                resource: self.resource.to_string(),
                name: name.to_owned(),
            })
    }

    /// A lister restricted to `namespace`.
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: self.indexer.clone(),
            resource: self.resource.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The indexer behind this lister.
    pub fn indexer(&self) -> &ReadOnlyIndexer<K> {
        &self.indexer
    }
}

/// Lists and gets cached objects of one namespace.
pub struct NamespaceLister<K> {
    indexer: ReadOnlyIndexer<K>,
    resource: Arc<str>,
    namespace: String,
}

impl<K> Clone for NamespaceLister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

impl<K> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl<K: Cacheable> NamespaceLister<K> {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Every cached object of the namespace whose labels match `selector`. Uses the
    /// namespace index when the informer has one, and a scan otherwise.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let candidates = match self.indexer.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(objs) => objs,
            Err(_) => self
                .indexer
                .list()
                .into_iter()
                .filter(|o| o.meta().namespace.as_deref().unwrap_or("") == self.namespace)
                .collect(),
        };
        candidates
            .into_iter()
            .filter(|o| labels_match(o.as_ref(), selector))
            .collect()
    }

    /// The cached object `name` of the namespace, or a NotFound error.
    pub fn get(&self, name: &str) -> Result<Arc<K>, ListerError> {
        self.indexer
            .get_by_key(&format!("{}/{name}", self.namespace))
            .ok_or_else(|| ListerError::NotFound {
                resource: self.resource.to_string(),
                name: name.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};

    use super::*;
    use crate::cache::{
        Indexer, namespace_indexers,
        testing::{cm, cm_with, node},
    };

    fn lister() -> Lister<ConfigMap> {
        let indexer = Indexer::new(namespace_indexers());
        indexer
            .add(Arc::new(cm_with("a", "x", "1", &[("app", "web")])))
            .unwrap();
        indexer
            .add(Arc::new(cm_with("a", "y", "1", &[("app", "db")])))
            .unwrap();
        indexer
            .add(Arc::new(cm_with("b", "x", "1", &[("app", "web")])))
            .unwrap();
        Lister::new(indexer)
    }

    fn names(objs: Vec<Arc<ConfigMap>>) -> Vec<String> {
        let mut v: Vec<String> = objs
            .iter()
            .map(|o| {
                format!(
                    "{}/{}",
                    o.metadata.namespace.as_deref().unwrap_or(""),
                    o.metadata.name.as_deref().unwrap_or("")
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn list_filters_by_label_selector_across_namespaces() {
        let web: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(names(lister().list(&web)), vec!["a/x", "b/x"]);
        assert_eq!(lister().list(&Selector::default()).len(), 3);
    }

    #[test]
    fn namespace_lister_lists_only_its_namespace() {
        let l = lister().namespaced("a");
        assert_eq!(names(l.list(&Selector::default())), vec!["a/x", "a/y"]);
        let db: Selector = [("app", "db")].into_iter().collect();
        assert_eq!(names(l.list(&db)), vec!["a/y"]);
    }

    #[test]
    fn namespace_lister_works_without_a_namespace_index() {
        let indexer: Indexer<ConfigMap> = Indexer::default();
        indexer.add(Arc::new(cm("a", "x"))).unwrap();
        indexer.add(Arc::new(cm("b", "x"))).unwrap();
        assert_eq!(
            names(
                Lister::new(indexer)
                    .namespaced("b")
                    .list(&Selector::default())
            ),
            vec!["b/x"]
        );
    }

    #[test]
    fn get_of_a_missing_object_is_not_found_naming_the_group_resource() {
        let err = lister().namespaced("a").get("nope").unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err.to_string(), "configmaps \"nope\" not found");
        let deployments: Lister<Deployment> = Lister::new(Indexer::default());
        let err = deployments.namespaced("a").get("web").unwrap_err();
        assert_eq!(
            err,
            ListerError::NotFound {
                resource: "deployments.apps".into(),
                name: "web".into()
            }
        );
    }

    #[test]
    fn get_finds_namespaced_and_cluster_scoped_objects() {
        assert!(lister().namespaced("b").get("x").is_ok());
        let nodes = Indexer::default();
        nodes.add(Arc::new(node("n1"))).unwrap();
        assert!(Lister::new(nodes).get("n1").is_ok());
    }
}
