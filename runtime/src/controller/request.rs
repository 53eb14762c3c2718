//! [`Request`]: the key of an object to reconcile (controller-runtime's
//! `reconcile.Request`), the item of a controller's queue.

use std::fmt;

use kube_core::Resource;

/// The namespace and name of an object to reconcile.
///
/// A controller queues requests, not objects: by the time a worker takes a request the
/// object may have changed again, so the reconcile reads the latest cached version.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl Request {
    /// The request for `name` in `namespace` (`None`: cluster-scoped).
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        Self {
            namespace: namespace.filter(|ns| !ns.is_empty()).map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// The request for `obj`; `None` if it has no name.
    pub fn for_object(obj: &impl Resource) -> Option<Self> {
        let meta = obj.meta();
        Some(Self::new(meta.namespace.as_deref(), meta.name.as_deref()?))
    }

    /// The object's cache key: `namespace/name`, or `name` when cluster-scoped.
    pub fn cache_key(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube_core::ObjectMeta;

    use super::*;

    #[test]
    fn the_cache_key_is_the_informers_key() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("default".into()),
                name: Some("web".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let request = Request::for_object(&cm).expect("named");
        assert_eq!(request.cache_key(), "default/web");
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some("team-a".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        assert_eq!(
            Request::for_object(&ns).expect("named").cache_key(),
            "team-a"
        );
        assert_eq!(Request::new(Some(""), "x").namespace, None);
        assert!(Request::for_object(&ConfigMap::default()).is_none());
    }
}
