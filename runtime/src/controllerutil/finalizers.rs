//! The finalizer list in an object's metadata (controller-runtime's `AddFinalizer`,
//! `RemoveFinalizer`, `ContainsFinalizer`).
//!
//! These change a local copy only; write it back with an update or patch (or let the
//! controller's `finalizer` flow manage one finalizer for a reconciler). Each returns
//! whether the list changed, so a caller writes only when it must.

use kube_core::Resource;

/// Adds `finalizer` to `object`'s finalizers unless it is already there; whether it was
/// added.
pub fn add_finalizer(object: &mut impl Resource, finalizer: &str) -> bool {
    let finalizers = object.meta_mut().finalizers.get_or_insert_with(Vec::new);
    if finalizers.iter().any(|f| f == finalizer) {
        return false;
    }
    finalizers.push(finalizer.to_owned());
    true
}

/// Removes every occurrence of `finalizer` from `object`'s finalizers; whether one was
/// there. An emptied list becomes `None` (the API server drops an empty list, so a copy
/// compared with what the server returns stays equal).
pub fn remove_finalizer(object: &mut impl Resource, finalizer: &str) -> bool {
    let meta = object.meta_mut();
    let Some(finalizers) = meta.finalizers.as_mut() else {
        return false;
    };
    let before = finalizers.len();
    finalizers.retain(|f| f != finalizer);
    let removed = finalizers.len() != before;
    if removed && finalizers.is_empty() {
        meta.finalizers = None;
    }
    removed
}

/// Whether `object` carries `finalizer`.
pub fn contains_finalizer(object: &impl Resource, finalizer: &str) -> bool {
    object
        .meta()
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == finalizer)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    /// controller-runtime `controllerutil_test.go`, "Finalizers": AddFinalizer adds once and
    /// reports whether it changed the list; RemoveFinalizer removes duplicates too.
    #[test]
    fn add_is_idempotent_and_remove_takes_every_copy() {
        let mut cm = ConfigMap::default();
        assert!(!contains_finalizer(&cm, "example.com/cleanup"));
        assert!(!remove_finalizer(&mut cm, "example.com/cleanup"));
        assert!(add_finalizer(&mut cm, "example.com/cleanup"));
        assert!(!add_finalizer(&mut cm, "example.com/cleanup"));
        assert!(contains_finalizer(&cm, "example.com/cleanup"));
        assert_eq!(
            cm.metadata.finalizers.as_deref(),
            Some(&["example.com/cleanup".to_owned()][..])
        );

        cm.metadata.finalizers = Some(vec![
            "a".into(),
            "example.com/cleanup".into(),
            "b".into(),
            "example.com/cleanup".into(),
        ]);
        assert!(remove_finalizer(&mut cm, "example.com/cleanup"));
        assert_eq!(
            cm.metadata.finalizers,
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        assert!(remove_finalizer(&mut cm, "a"));
        assert!(remove_finalizer(&mut cm, "b"));
        assert_eq!(cm.metadata.finalizers, None, "an emptied list is dropped");
    }
}
