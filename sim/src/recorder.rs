//! A recording event handler: replays every notification onto a map (what the handler
//! believes the world is) and notes each notification that breaks client-go's promises
//! to a handler (`tools/cache/shared_informer.go`, `ResourceEventHandler`): an update or
//! delete for a key it was never given, an add for a key it already has, an object older
//! than the one it was last given (per key, notifications arrive in order), an update
//! whose old object is not the one it was last given.

use std::{
    collections::BTreeMap,
    sync::{Arc, Condvar, Mutex},
};

use kube_core::Resource;
use kubegen::cache::{DeletedObject, ResourceEventHandler};

/// What a handler was last given for a key: resourceVersion and uid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seen {
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// `metadata.uid`.
    pub uid: String,
}

impl Seen {
    /// What `obj` is, as compared with the server.
    pub fn of<K: Resource>(obj: &K) -> Seen {
        let meta = obj.meta();
        Seen {
            resource_version: meta.resource_version.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
        }
    }

    fn version(&self) -> u64 {
        self.resource_version.parse().unwrap_or(0)
    }
}

/// The key of `obj` (`namespace/name`).
pub fn key_of<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    match &meta.namespace {
        Some(ns) => format!("{ns}/{}", meta.name.as_deref().unwrap_or_default()),
        None => meta.name.clone().unwrap_or_default(),
    }
}

#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<String, Seen>,
    violations: Vec<String>,
    /// Keys and uids of the tombstones delivered.
    tombstones: Vec<(String, String)>,
    events: usize,
    /// Every notification in the order handled: `add key rv`, `update key rv`,
    /// `delete key rv` or `tombstone key`.
    trace: Vec<String>,
}

/// A gate a handler waits at while it is closed: a slow handler, deterministically slow
/// for a stretch of steps.
#[derive(Debug, Default)]
pub struct Gate {
    closed: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    /// Closes or opens the gate.
    pub fn set_closed(&self, closed: bool) {
        if let Ok(mut c) = self.closed.lock() {
            *c = closed;
        }
        self.opened.notify_all();
    }

    /// Whether the gate is closed.
    pub fn is_closed(&self) -> bool {
        self.closed.lock().map(|c| *c).unwrap_or(false)
    }

    fn wait_open(&self) {
        let Ok(mut closed) = self.closed.lock() else {
            return;
        };
        while *closed {
            closed = match self.opened.wait(closed) {
                Ok(c) => c,
                Err(_) => return,
            };
        }
    }
}

/// A handler recording what it is told. Cheap to clone; clones share state.
#[derive(Debug, Clone)]
pub struct Recorder {
    name: &'static str,
    state: Arc<Mutex<State>>,
    gate: Option<Arc<Gate>>,
}

impl Recorder {
    /// A recorder named `name` (in violations), waiting at `gate` if given.
    pub fn new(name: &'static str, gate: Option<Arc<Gate>>) -> Recorder {
        Recorder {
            name,
            state: Arc::default(),
            gate,
        }
    }

    /// The handler's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> Option<T> {
        self.state.lock().ok().map(|mut s| f(&mut s))
    }

    /// What the handler believes the world is.
    pub fn objects(&self) -> BTreeMap<String, Seen> {
        self.with(|s| s.objects.clone()).unwrap_or_default()
    }

    /// Broken promises so far.
    pub fn violations(&self) -> Vec<String> {
        self.with(|s| s.violations.clone())
            .unwrap_or_else(|| vec![format!("{}: state poisoned", self.name)])
    }

    /// The (key, uid) of every tombstone delivered.
    pub fn tombstones(&self) -> Vec<(String, String)> {
        self.with(|s| s.tombstones.clone()).unwrap_or_default()
    }

    /// Every notification handled, in order (what a replay of the seed must repeat).
    pub fn trace(&self) -> Vec<String> {
        self.with(|s| s.trace.clone()).unwrap_or_default()
    }

    /// How many notifications were handled.
    pub fn events(&self) -> usize {
        self.with(|s| s.events).unwrap_or(0)
    }

    fn wait(&self) {
        if let Some(gate) = &self.gate {
            gate.wait_open();
        }
    }

    fn record(&self, f: impl FnOnce(&mut State, &'static str)) {
        let name = self.name;
        self.with(|s| {
            s.events += 1;
            f(s, name);
        });
    }
}

impl<K: Resource + Send + Sync + 'static> ResourceEventHandler<K> for Recorder {
    fn on_add(&self, obj: &Arc<K>, _: bool) {
        self.wait();
        let (key, seen) = (key_of(obj.as_ref()), Seen::of(obj.as_ref()));
        self.record(|s, name| {
            s.trace.push(format!("add {key} {}", seen.resource_version));
            if let Some(had) = s.objects.get(&key) {
                s.violations.push(format!(
                    "{name}: add for {key} it already has (had rv {}, got rv {})",
                    had.resource_version, seen.resource_version
                ));
            }
            s.objects.insert(key, seen);
        });
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        self.wait();
        let key = key_of(new.as_ref());
        let (old, new) = (Seen::of(old.as_ref()), Seen::of(new.as_ref()));
        self.record(|s, name| {
            s.trace
                .push(format!("update {key} {}", new.resource_version));
            match s.objects.get(&key) {
                None => s
                    .violations
                    .push(format!("{name}: update for {key}, never added")),
                Some(had) => {
                    if new.version() < had.version() {
                        s.violations.push(format!(
                            "{name}: {key} went back from rv {} to rv {}",
                            had.resource_version, new.resource_version
                        ));
                    } else if *had != old {
                        s.violations.push(format!(
                            "{name}: update of {key} from rv {}, but it was last given rv {}",
                            old.resource_version, had.resource_version
                        ));
                    }
                }
            }
            s.objects.insert(key, new);
        });
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        self.wait();
        let (key, tombstone) = match obj {
            DeletedObject::Object(o) => (key_of(o.as_ref()), None),
            DeletedObject::Tombstone(t) => (
                t.key.clone(),
                Some(t.obj.as_ref().map(|o| Seen::of(o.as_ref()).uid)),
            ),
        };
        self.record(|s, name| {
            s.trace.push(match &tombstone {
                Some(_) => format!("tombstone {key}"),
                None => format!("delete {key}"),
            });
            if s.objects.remove(&key).is_none() {
                s.violations
                    .push(format!("{name}: delete for {key}, never added"));
            }
            if let Some(uid) = tombstone {
                s.tombstones.push((key, uid.unwrap_or_default()));
            }
        });
    }
}
