//! Object keys: `namespace/name` for namespaced objects, `name` for cluster-scoped ones.
//!
//! Two key functions exist because the two queues of an informer see different things
//! (client-go's `MetaNamespaceKeyFunc` and `DeletionHandlingMetaNamespaceKeyFunc`): the
//! [`DeltaFifo`](crate::cache::DeltaFifo) sees real API objects, while the informer's
//! [`Indexer`](crate::cache::Indexer) can be told to delete a
//! [`DeletedFinalStateUnknown`](crate::cache::DeletedFinalStateUnknown) tombstone, whose key was
//! recorded when it was made.

use std::sync::Arc;

use kube_core::Resource;

use crate::cache::{DeletedObject, store::index::StoreKey};

/// A key could not be computed for an object, or a key string could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The object has no `metadata.name`.
    #[error("object has no name")]
    MissingName,
    /// A key has more than two `/`-separated segments or an empty segment.
    #[error("unexpected key format: {0:?}")]
    Malformed(String),
}

/// A function computing an object's key; used by [`DeltaFifo`](crate::cache::DeltaFifo) options.
pub type KeyFunc<K> = Arc<dyn Fn(&K) -> Result<String, KeyError> + Send + Sync>;

/// The key of an object: `namespace/name`, or `name` when it has no namespace.
pub fn meta_namespace_key<K: Resource>(obj: &K) -> Result<String, KeyError> {
    Ok(match key_parts(obj)? {
        (Some(ns), name) => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            push_key(&mut key, ns, name);
            key
        }
        (None, name) => name.to_owned(),
    })
}

/// [`meta_namespace_key`] as a shared key, with one allocation (the key is assembled in a
/// per-thread buffer, then copied once into the shared string); what the informer's queue
/// keys every change with.
pub(crate) fn meta_namespace_store_key<K: Resource>(obj: &K) -> Result<StoreKey, KeyError> {
    Ok(match key_parts(obj)? {
        (Some(ns), name) => KEY_BUFFER.with_borrow_mut(|key| {
            key.clear();
            push_key(key, ns, name);
            StoreKey::from(key.as_str())
        }),
        (None, name) => StoreKey::from(name),
    })
}

/// An object's namespace (`None` when it has none or an empty one) and its name.
fn key_parts<K: Resource>(obj: &K) -> Result<(Option<&str>, &str), KeyError> {
    let meta = obj.meta();
    let name = meta
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or(KeyError::MissingName)?;
    Ok((meta.namespace.as_deref().filter(|ns| !ns.is_empty()), name))
}

/// Appends `namespace/name` to `key`.
fn push_key(key: &mut String, namespace: &str, name: &str) {
    key.push_str(namespace);
    key.push('/');
    key.push_str(name);
}

thread_local! {
    /// Where [`meta_namespace_store_key`] assembles keys.
    static KEY_BUFFER: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The key of an object handed to a delete handler: a tombstone's recorded key, or
/// [`meta_namespace_key`] of the object.
pub fn deletion_handling_meta_namespace_key<K: Resource>(
    obj: &DeletedObject<K>,
) -> Result<String, KeyError> {
    match obj {
        DeletedObject::Object(obj) => meta_namespace_key(obj.as_ref()),
        DeletedObject::Tombstone(tombstone) => Ok(tombstone.key.clone()),
    }
}

/// Splits a key into `(namespace, name)`; the namespace is empty for a one-segment key.
pub fn split_meta_namespace_key(key: &str) -> Result<(&str, &str), KeyError> {
    let malformed = || KeyError::Malformed(key.to_owned());
    let mut parts = key.split('/');
    let (first, second, rest) = (parts.next(), parts.next(), parts.next());
    match (first, second, rest) {
        (Some(name), None, None) if !name.is_empty() => Ok(("", name)),
        (Some(ns), Some(name), None) if !ns.is_empty() && !name.is_empty() => Ok((ns, name)),
        _ => Err(malformed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::DeletedFinalStateUnknown;
    use crate::cache::testing::{cm, node};

    #[test]
    fn the_shared_key_is_the_same_key() {
        for obj in [cm("ns1", "a"), cm("", "b"), cm("a-long-namespace", "c")] {
            assert_eq!(
                &*meta_namespace_store_key(&obj).unwrap(),
                meta_namespace_key(&obj).unwrap()
            );
        }
        assert_eq!(&*meta_namespace_store_key(&node("n")).unwrap(), "n");
        assert_eq!(
            meta_namespace_store_key(&cm("ns1", "")),
            Err(KeyError::MissingName)
        );
    }

    #[test]
    fn namespaced_object_key_is_namespace_slash_name() {
        assert_eq!(meta_namespace_key(&cm("ns1", "a")).unwrap(), "ns1/a");
    }

    #[test]
    fn cluster_scoped_object_key_is_the_name() {
        assert_eq!(meta_namespace_key(&node("n1")).unwrap(), "n1");
    }

    #[test]
    fn object_without_a_name_has_no_key() {
        assert_eq!(
            meta_namespace_key(&cm("ns1", "")),
            Err(KeyError::MissingName)
        );
    }

    #[test]
    fn tombstone_key_is_its_recorded_key_not_the_objects() {
        let tombstone = DeletedObject::Tombstone(DeletedFinalStateUnknown {
            key: "recorded/key".into(),
            obj: Some(Arc::new(cm("other", "name"))),
        });
        assert_eq!(
            deletion_handling_meta_namespace_key(&tombstone).unwrap(),
            "recorded/key"
        );
        let plain = DeletedObject::Object(Arc::new(cm("ns", "x")));
        assert_eq!(
            deletion_handling_meta_namespace_key(&plain).unwrap(),
            "ns/x"
        );
    }

    #[test]
    fn split_accepts_one_or_two_segments() {
        assert_eq!(split_meta_namespace_key("name").unwrap(), ("", "name"));
        assert_eq!(split_meta_namespace_key("ns/name").unwrap(), ("ns", "name"));
    }

    #[test]
    fn split_rejects_other_shapes() {
        for bad in ["", "a/b/c", "/name", "ns/", "/"] {
            assert!(
                split_meta_namespace_key(bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn split_inverts_key() {
        for obj in [cm("ns", "a"), cm("", "b")] {
            let key = meta_namespace_key(&obj).unwrap();
            let (ns, name) = split_meta_namespace_key(&key).unwrap();
            assert_eq!(ns, obj.metadata.namespace.as_deref().unwrap_or(""));
            assert_eq!(Some(name), obj.metadata.name.as_deref());
        }
    }
}
