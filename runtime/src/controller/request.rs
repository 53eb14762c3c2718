//! [`Request`]: the key of an object to reconcile (controller-runtime's
//! `reconcile.Request`), the item of a controller's queue.

use std::fmt;

use kube_core::Resource;

/// The namespace and name of an object to reconcile.
///
/// A controller queues requests, not objects: by the time a worker takes a request the
/// object may have changed again, so the reconcile reads the latest cached version.
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

/// Written out so `clone_from` reuses both strings' buffers: the controller's queue hands
/// out each request as a copy written into a request it let go of (the derive's
/// `clone_from` would allocate afresh).
impl Clone for Request {
    fn clone(&self) -> Self {
        Self {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.namespace.clone_from(&source.namespace);
        self.name.clone_from(&source.name);
    }
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
    fn clone_from_copies_into_the_existing_strings() {
        let source = Request {
            namespace: Some("default".into()),
            name: "web".into(),
        };
        let mut target = Request {
            namespace: Some(String::with_capacity(64)),
            name: String::with_capacity(64),
        };
        let buffer = target.name.as_ptr();
        target.clone_from(&source);
        assert_eq!(target, source);
        assert_eq!(target.name.as_ptr(), buffer, "the name's buffer was reused");
        let mut cluster_scoped = Request {
            namespace: None,
            name: "n".into(),
        };
        cluster_scoped.clone_from(&source);
        assert_eq!(cluster_scoped, source);
        target.clone_from(&Request {
            namespace: None,
            name: "node-1".into(),
        });
        assert_eq!(target.namespace, None);
        assert_eq!(target.name, "node-1");
    }

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
