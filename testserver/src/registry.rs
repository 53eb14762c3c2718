//! Resource types the server knows: the built-in table and CustomResourceDefinitions
//! registered at runtime.
//!
//! The server is type-agnostic: objects are `serde_json::Value`s, and everything the
//! engine needs to know about a kind (group, version, plural, scope, subresources) lives in
//! a [`ResourceType`].

use std::{collections::BTreeMap, sync::Arc};

use kubegen::catalog::Verb;
use parking_lot::RwLock;

/// The storage identity of a resource: objects of all served versions of one group and
/// plural live together.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// API group, `""` for the core group.
    pub group: String,
    /// Plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// Builds a group-resource pair.
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.to_string(),
            resource: resource.to_string(),
        }
    }
}

use crate::schema::SchemaRef;
use crate::strategy::StrategyRef;
pub use crate::validation::NameRule;

/// The scale subresource of a custom resource (JSON paths inside the object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSpec {
    /// e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// e.g. `.status.replicas`.
    pub status_replicas_path: String,
    /// e.g. `.status.selector`.
    pub label_selector_path: Option<String>,
}

/// One column of a built-in's Table (printers.go's `TableColumnDefinition` with the
/// cell it prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrinterColumn {
    /// The header (`Ready`).
    pub name: &'static str,
    /// The OpenAPI type (`string`, `integer`, `boolean`, `date`).
    pub ty: &'static str,
    /// 0: shown by default; 1: with `-o wide`.
    pub priority: u8,
    /// How the cell is read from the object.
    pub cell: Cell,
}

/// How a [`PrinterColumn`]'s cell is read from an object.
#[derive(Clone, Copy)]
pub enum Cell {
    /// A JSONPath (the path CRD `additionalPrinterColumns` take): the value as it is,
    /// an absent field as the column type's zero (`""`, `0`).
    Path(&'static str),
    /// A JSONPath whose absent or empty value prints as `<none>`.
    PathOrNone(&'static str),
    /// A JSONPath to a count: an absent field is `0`.
    Number(&'static str),
    /// A computed cell (a pod's status, an age, a selector).
    Computed(fn(&serde_json::Value) -> serde_json::Value),
}

impl std::fmt::Debug for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Path(p) => write!(f, "Path({p})"),
            Cell::PathOrNone(p) => write!(f, "PathOrNone({p})"),
            Cell::Number(p) => write!(f, "Number({p})"),
            Cell::Computed(_) => f.write_str("Computed"),
        }
    }
}

impl PartialEq for Cell {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Cell::Path(a), Cell::Path(b))
            | (Cell::PathOrNone(a), Cell::PathOrNone(b))
            | (Cell::Number(a), Cell::Number(b)) => a == b,
            (Cell::Computed(a), Cell::Computed(b)) => std::ptr::fn_addr_eq(*a, *b),
            _ => false,
        }
    }
}

impl Eq for Cell {}

/// Everything the server knows about one served resource in one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group, `""` for core.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// List kind, e.g. `PodList`.
    pub list_kind: String,
    /// Plural resource name, e.g. `pods`.
    pub plural: String,
    /// Singular name, e.g. `pod`.
    pub singular: String,
    /// Short names (`po`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Has a `/status` subresource.
    pub status_subresource: bool,
    /// Has a `/scale` subresource: `None` or where the replicas live.
    pub scale: Option<ScaleSpec>,
    /// Verbs served, in the order discovery lists them.
    pub verbs: Vec<Verb>,
    /// Whether `metadata.generation` is maintained.
    pub generation: bool,
    /// Built-in type (strategic merge patch allowed) rather than a custom resource.
    pub builtin: bool,
    /// How names are validated.
    pub name_rule: NameRule,
    /// Field selector labels supported beyond `metadata.name` / `metadata.namespace`.
    pub field_labels: Vec<String>,
    /// The storage version of this resource (the one other versions share objects with).
    pub storage_version: String,
    /// What the resource does beyond the generic store rules.
    pub strategy: StrategyRef,
    /// A built-in's Table columns (a custom resource's come from its CRD: empty here).
    pub columns: &'static [PrinterColumn],
    /// The schema writes are admitted against (`crate::engine` admission): a CRD
    /// version's `openAPIV3Schema`, or a built-in kind's definitions for its unknown
    /// fields; `None` admits anything (types registered without a schema).
    pub schema: Option<SchemaRef>,
    /// Objects stored at or before this resourceVersion may predate the schema's
    /// defaults and are defaulted when read; later ones were defaulted when written, so
    /// reads skip them (0: every object was written under this schema).
    pub read_defaults_through: u64,
}

impl ResourceType {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The storage identity.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// The served verbs as discovery spells them.
    pub fn verb_names(&self) -> Vec<&'static str> {
        self.verbs.iter().map(|v| v.as_str()).collect()
    }
}

/// The set of served resource types, shared by the engine and discovery.
#[derive(Default)]
pub struct Registry {
    inner: RwLock<BTreeMap<(String, String, String), Arc<ResourceType>>>,
    /// Group order as served by `/apis` (insertion order).
    groups: RwLock<Vec<String>>,
}

impl Registry {
    /// Adds or replaces a served type.
    pub fn insert(&self, rt: ResourceType) {
        let mut groups = self.groups.write();
        if !rt.group.is_empty() && !groups.contains(&rt.group) {
            groups.push(rt.group.clone());
        }
        self.inner.write().insert(
            (rt.group.clone(), rt.version.clone(), rt.plural.clone()),
            Arc::new(rt),
        );
    }

    /// Stops serving every version of `group`/`plural`.
    pub fn remove(&self, group: &str, plural: &str) {
        self.inner
            .write()
            .retain(|(g, _, p), _| !(g == group && p == plural));
        let still: bool = self.inner.read().keys().any(|(g, _, _)| g == group);
        if !still {
            self.groups.write().retain(|g| g != group);
        }
    }

    /// The type served at `/apis/group/version/plural` (or `/api/v1/plural`).
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.inner
            .read()
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Every type served in one group-version, in plural order.
    pub fn in_group_version(&self, group: &str, version: &str) -> Vec<Arc<ResourceType>> {
        self.inner
            .read()
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, rt)| rt.clone())
            .collect()
    }

    /// Served versions of a group, preferred (storage) version first.
    pub fn versions(&self, group: &str) -> Vec<String> {
        let inner = self.inner.read();
        let mut versions: Vec<String> = Vec::new();
        let mut preferred: Option<String> = None;
        for ((g, v, _), rt) in inner.iter() {
            if g == group && !versions.contains(v) {
                versions.push(v.clone());
                if preferred.is_none() && rt.storage_version == *v {
                    preferred = Some(v.clone());
                }
            }
        }
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        if let Some(p) = preferred {
            versions.retain(|v| *v != p);
            versions.insert(0, p);
        }
        versions
    }

    /// Served API groups other than core, in registration order.
    pub fn groups(&self) -> Vec<String> {
        self.groups.read().clone()
    }

    /// Any served version of `group`/`plural`.
    pub fn any_version(&self, group: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.inner
            .read()
            .iter()
            .find(|((g, _, p), _)| g == group && p == plural)
            .map(|(_, rt)| rt.clone())
    }

    /// Every served type (all versions).
    pub fn all(&self) -> Vec<Arc<ResourceType>> {
        self.inner.read().values().cloned().collect()
    }
}

/// Kubernetes version ordering: GA > beta > alpha, higher numbers first.
pub(crate) fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let major: u32 = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        (3, major, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, major, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, major, n.parse().unwrap_or(0))
    } else {
        (0, major, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_include_the_issue_kinds() {
        let r = Registry::with_builtins();
        for (g, p) in [
            ("", "namespaces"),
            ("", "pods"),
            ("apps", "deployments"),
            ("batch", "jobs"),
            ("coordination.k8s.io", "leases"),
            ("apiextensions.k8s.io", "customresourcedefinitions"),
        ] {
            assert!(r.any_version(g, p).is_some(), "{g}/{p}");
        }
        assert!(!r.get("", "v1", "nodes").unwrap().namespaced);
    }

    #[test]
    fn versions_put_ga_before_beta_before_alpha() {
        let mut v = vec!["v1alpha1", "v2beta1", "v1", "v1beta2", "v2"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(v, vec!["v2", "v1", "v2beta1", "v1beta2", "v1alpha1"]);
    }
}
