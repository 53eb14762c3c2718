//! Event filters (controller-runtime's `pkg/predicate`): which informer events of a watched
//! type reach the controller's queue.
//!
//! A [`Predicate`] answers per event kind; every answer defaults to "let it through". The
//! built-in ones compare what an update changed ([`GenerationChanged`],
//! [`ResourceVersionChanged`], [`LabelsChanged`], [`AnnotationsChanged`]) or test the object
//! ([`LabelSelector`], [`from_fn`]); `.and`, `.or`, `.not` (or the functions [`and`],
//! [`or`], [`not`] for predicates of your own) combine them:
//! `GenerationChanged.or(LabelsChanged)`.
//! Resyncs arrive as updates whose old and new objects are the same version, so
//! [`ResourceVersionChanged`] (and [`GenerationChanged`]) drop them.

use std::sync::Arc;

use kube_core::{Resource, Selector, SelectorExt};

/// Decides whether an event on a `K` is queued.
pub trait Predicate<K>: Send + Sync + 'static {
    /// An object appeared (also for the objects of the first list).
    fn allow_create(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }
    /// An object changed (or a resync re-delivered it: `old` and `new` are the same).
    fn allow_update(&self, old: &K, new: &K) -> bool {
        let _ = (old, new);
        true
    }
    /// An object was deleted (`obj` is its last known state).
    fn allow_delete(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }
}

impl<K: 'static> Predicate<K> for Arc<dyn Predicate<K>> {
    fn allow_create(&self, obj: &K) -> bool {
        (**self).allow_create(obj)
    }
    fn allow_update(&self, old: &K, new: &K) -> bool {
        (**self).allow_update(old, new)
    }
    fn allow_delete(&self, obj: &K) -> bool {
        (**self).allow_delete(obj)
    }
}

/// Lets every event through.
#[derive(Debug, Clone, Copy, Default)]
pub struct Always;

impl<K> Predicate<K> for Always {}

/// Updates only when `metadata.generation` changed, which the API server bumps for spec
/// changes but not for status or metadata-only changes: a controller that writes its own
/// status is not woken by that write. Creates and deletes pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct GenerationChanged;

impl<K: Resource> Predicate<K> for GenerationChanged {
    fn allow_update(&self, old: &K, new: &K) -> bool {
        old.meta().generation != new.meta().generation
    }
}

/// Updates only when `metadata.resourceVersion` changed: drops resyncs. Creates and
/// deletes pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourceVersionChanged;

impl<K: Resource> Predicate<K> for ResourceVersionChanged {
    fn allow_update(&self, old: &K, new: &K) -> bool {
        match (&old.meta().resource_version, &new.meta().resource_version) {
            (Some(old), Some(new)) => old != new,
            _ => false,
        }
    }
}

/// Updates only when the labels changed. Creates and deletes pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct LabelsChanged;

impl<K: Resource> Predicate<K> for LabelsChanged {
    fn allow_update(&self, old: &K, new: &K) -> bool {
        old.meta().labels != new.meta().labels
    }
}

/// Updates only when the annotations changed. Creates and deletes pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotationsChanged;

impl<K: Resource> Predicate<K> for AnnotationsChanged {
    fn allow_update(&self, old: &K, new: &K) -> bool {
        old.meta().annotations != new.meta().annotations
    }
}

/// Every event of an object whose labels match the selector (for updates, the new
/// object's labels).
#[derive(Debug, Clone)]
pub struct LabelSelector(pub Selector);

impl LabelSelector {
    fn matches(&self, obj: &impl Resource) -> bool {
        let empty = Default::default();
        self.0.matches(obj.meta().labels.as_ref().unwrap_or(&empty))
    }
}

impl<K: Resource> Predicate<K> for LabelSelector {
    fn allow_create(&self, obj: &K) -> bool {
        self.matches(obj)
    }
    fn allow_update(&self, _old: &K, new: &K) -> bool {
        self.matches(new)
    }
    fn allow_delete(&self, obj: &K) -> bool {
        self.matches(obj)
    }
}

/// A predicate from a test of one object, applied to every event (for updates, to the new
/// object): controller-runtime's `NewPredicateFuncs`.
pub fn from_fn<K, F>(test: F) -> FromFn<F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    FromFn(test)
}

/// See [`from_fn`].
#[derive(Debug, Clone, Copy)]
pub struct FromFn<F>(F);

impl<K, F> Predicate<K> for FromFn<F>
where
    F: Fn(&K) -> bool + Send + Sync + 'static,
{
    fn allow_create(&self, obj: &K) -> bool {
        (self.0)(obj)
    }
    fn allow_update(&self, _old: &K, new: &K) -> bool {
        (self.0)(new)
    }
    fn allow_delete(&self, obj: &K) -> bool {
        (self.0)(obj)
    }
}

/// Both predicates pass (see [`and`]).
#[derive(Debug, Clone, Copy)]
pub struct And<A, B>(A, B);

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for And<A, B> {
    fn allow_create(&self, obj: &K) -> bool {
        self.0.allow_create(obj) && self.1.allow_create(obj)
    }
    fn allow_update(&self, old: &K, new: &K) -> bool {
        self.0.allow_update(old, new) && self.1.allow_update(old, new)
    }
    fn allow_delete(&self, obj: &K) -> bool {
        self.0.allow_delete(obj) && self.1.allow_delete(obj)
    }
}

/// Either predicate passes (see [`or`]).
#[derive(Debug, Clone, Copy)]
pub struct Or<A, B>(A, B);

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Or<A, B> {
    fn allow_create(&self, obj: &K) -> bool {
        self.0.allow_create(obj) || self.1.allow_create(obj)
    }
    fn allow_update(&self, old: &K, new: &K) -> bool {
        self.0.allow_update(old, new) || self.1.allow_update(old, new)
    }
    fn allow_delete(&self, obj: &K) -> bool {
        self.0.allow_delete(obj) || self.1.allow_delete(obj)
    }
}

/// The predicate's opposite (see [`not`]).
#[derive(Debug, Clone, Copy)]
pub struct Not<A>(A);

impl<K, A: Predicate<K>> Predicate<K> for Not<A> {
    fn allow_create(&self, obj: &K) -> bool {
        !self.0.allow_create(obj)
    }
    fn allow_update(&self, old: &K, new: &K) -> bool {
        !self.0.allow_update(old, new)
    }
    fn allow_delete(&self, obj: &K) -> bool {
        !self.0.allow_delete(obj)
    }
}

/// Both predicates pass (controller-runtime's `predicate.And`).
pub fn and<A, B>(a: A, b: B) -> And<A, B> {
    And(a, b)
}

/// Either predicate passes (`predicate.Or`).
pub fn or<A, B>(a: A, b: B) -> Or<A, B> {
    Or(a, b)
}

/// The predicate's opposite (`predicate.Not`).
pub fn not<A>(a: A) -> Not<A> {
    Not(a)
}

/// `.and`, `.or` and `.not` on the predicates of this module (for your own predicates, the
/// functions [`and`], [`or`] and [`not`]).
macro_rules! combinators {
    ($($ty:ident $(<$($param:ident),+>)?),* $(,)?) => {$(
        impl$(<$($param),+>)? $ty$(<$($param),+>)? {
            /// Passes when this one and `other` pass.
            pub fn and<B>(self, other: B) -> And<Self, B> {
                And(self, other)
            }
            /// Passes when this one or `other` passes.
            pub fn or<B>(self, other: B) -> Or<Self, B> {
                Or(self, other)
            }
            /// Passes when this one does not.
            #[allow(clippy::should_implement_trait)]
            pub fn not(self) -> Not<Self> {
                Not(self)
            }
        }
    )*};
}

combinators!(
    Always,
    GenerationChanged,
    ResourceVersionChanged,
    LabelsChanged,
    AnnotationsChanged,
    LabelSelector,
    FromFn<F>,
    And<A, C>,
    Or<A, C>,
    Not<A>,
);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube_core::{Expression, ObjectMeta};

    use super::*;

    fn cm(generation: i64, rv: &str, labels: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("x".into()),
                generation: Some(generation),
                resource_version: Some(rv.into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect::<BTreeMap<_, _>>(),
                ),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    /// controller-runtime `predicate_test.go`, "GenerationChangedPredicate": a status
    /// update (same generation) is filtered, a spec update passes, creates and deletes pass.
    #[test]
    fn generation_changed_filters_status_updates() {
        let p = GenerationChanged;
        assert!(!Predicate::<ConfigMap>::allow_update(
            &p,
            &cm(1, "1", &[]),
            &cm(1, "2", &[])
        ));
        assert!(p.allow_update(&cm(1, "1", &[]), &cm(2, "2", &[])));
        assert!(p.allow_create(&cm(1, "1", &[])) && p.allow_delete(&cm(1, "1", &[])));
    }

    /// "ResourceVersionChangedPredicate": a resync (same version) is filtered.
    #[test]
    fn resource_version_changed_filters_resyncs() {
        let p = ResourceVersionChanged;
        assert!(!Predicate::<ConfigMap>::allow_update(
            &p,
            &cm(1, "5", &[]),
            &cm(1, "5", &[])
        ));
        assert!(p.allow_update(&cm(1, "5", &[]), &cm(1, "6", &[])));
        let mut no_rv = cm(1, "5", &[]);
        no_rv.metadata.resource_version = None;
        assert!(
            !p.allow_update(&no_rv, &cm(1, "6", &[])),
            "nothing to compare"
        );
    }

    #[test]
    fn labels_and_annotations_changed_compare_their_maps() {
        let (old, new) = (cm(1, "1", &[("a", "1")]), cm(1, "2", &[("a", "2")]));
        assert!(LabelsChanged.allow_update(&old, &new));
        assert!(!LabelsChanged.allow_update(&old, &cm(1, "2", &[("a", "1")])));
        assert!(!Predicate::<ConfigMap>::allow_update(
            &AnnotationsChanged,
            &old,
            &new
        ));
        let mut annotated = new.clone();
        annotated.metadata.annotations = Some(BTreeMap::from([("n".into(), "v".into())]));
        assert!(AnnotationsChanged.allow_update(&new, &annotated));
    }

    #[test]
    fn a_label_selector_tests_the_new_object() {
        let p = LabelSelector(Selector::from(Expression::Equal(
            "app".into(),
            "web".into(),
        )));
        assert!(p.allow_create(&cm(1, "1", &[("app", "web")])));
        assert!(!p.allow_create(&cm(1, "1", &[("app", "db")])));
        assert!(p.allow_update(
            &cm(1, "1", &[("app", "db")]),
            &cm(1, "2", &[("app", "web")])
        ));
        assert!(!p.allow_delete(&cm(1, "1", &[])));
    }

    #[test]
    fn predicates_combine() {
        let spec_or_labels = GenerationChanged.or(LabelsChanged);
        let status_only = (cm(1, "1", &[("a", "1")]), cm(1, "2", &[("a", "1")]));
        let relabel = (cm(1, "1", &[("a", "1")]), cm(1, "2", &[("a", "2")]));
        assert!(!spec_or_labels.allow_update(&status_only.0, &status_only.1));
        assert!(spec_or_labels.allow_update(&relabel.0, &relabel.1));
        let named_x = from_fn(|c: &ConfigMap| c.metadata.name.as_deref() == Some("x"));
        let both = GenerationChanged.and(named_x);
        assert!(both.allow_update(&cm(1, "1", &[]), &cm(2, "2", &[])));
        let not_x = from_fn(|c: &ConfigMap| c.metadata.name.as_deref() == Some("x")).not();
        assert!(!Predicate::<ConfigMap>::allow_create(
            &not(Always),
            &cm(1, "1", &[])
        ));
        assert!(or(Always, not(Always)).allow_delete(&cm(1, "1", &[])));
        assert!(!not_x.allow_create(&cm(1, "1", &[])));
        let boxed: Arc<dyn Predicate<ConfigMap>> = Arc::new(Always);
        assert!(boxed.allow_update(&cm(1, "1", &[]), &cm(1, "1", &[])));
    }
}
