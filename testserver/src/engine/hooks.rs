//! Controller hooks: what kube-controller-manager and the apiextensions controllers do
//! asynchronously against a real server, run here synchronously after each committed
//! change. The engine only tells the registered [`Controller`]s; it knows none by name.

use std::sync::Arc;

use serde_json::Value;

use super::Engine;
use crate::registry::ResourceType;

/// A committed change a controller hears about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The object was created.
    Added,
    /// The object was updated (including finalizer removals on a deleting object).
    Modified,
    /// A DELETE set (or kept) the object's deletionTimestamp: finalizers, propagation
    /// finalizers or a strategy hold keep it for now.
    DeletionStarted,
    /// The object was removed from the store.
    Deleted,
}

/// A controller hook: told about every committed change of every resource, and free to
/// write through the engine in response (writes it makes are reported to all controllers
/// in turn).
pub trait Controller: Send + Sync {
    /// A name for logs.
    fn name(&self) -> &'static str;

    /// Reacts to `change` of `obj` (of type `rt`, in the version the write used).
    fn observe(&self, engine: &Engine, rt: &ResourceType, change: Change, obj: &Arc<Value>);
}

#[cfg(test)]
mod tests {
    use parking_lot::Mutex;
    use serde_json::json;

    use super::*;
    use crate::engine::{DeleteOptions, EngineConfig, WriteOptions};

    #[derive(Default)]
    struct Recorder(Mutex<Vec<(String, Change)>>);

    impl Controller for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }

        fn observe(&self, _: &Engine, rt: &ResourceType, change: Change, obj: &Arc<Value>) {
            let name = crate::meta::name(obj);
            self.0
                .lock()
                .push((format!("{}/{name}", rt.plural), change));
        }
    }

    #[test]
    fn controllers_hear_committed_changes_only() {
        let rec = Arc::new(Recorder::default());
        let engine = Engine::with_controllers(EngineConfig::default(), vec![rec.clone()]);
        let t = engine.target("", "v1", "namespaces", None, None);
        let ns = json!({"metadata": {"name": "a", "finalizers": ["x/y"]}});
        let dry = WriteOptions {
            dry_run: true,
            ..WriteOptions::default()
        };
        engine.create(&t, ns.clone(), &dry).expect("dry-run create");
        assert!(rec.0.lock().is_empty(), "dry runs are not changes");
        engine
            .create(&t, ns, &WriteOptions::default())
            .expect("create");
        let named = engine.target("", "v1", "namespaces", None, Some("a"));
        engine
            .delete(&named, &DeleteOptions::default())
            .expect("delete");
        let seen = rec.0.lock().clone();
        assert_eq!(
            seen,
            vec![
                ("namespaces/a".to_string(), Change::Added),
                ("namespaces/a".to_string(), Change::DeletionStarted),
            ]
        );
    }
}
