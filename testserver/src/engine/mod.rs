//! The API semantics, independent of HTTP: the generic store of kube-apiserver
//! (`apiserver/pkg/registry/generic/registry/store.go`) over the [`Store`], for any
//! [`ResourceType`] in the [`Registry`], split by verb: `create`, `read` (get, list),
//! `update` (update and the patch core) and `delete`.
//!
//! Type-specific behaviour comes from the registry entry's strategy
//! ([`crate::strategy`]); the controllers (garbage collector, CRD establishment, namespace
//! lifecycle) are [`Controller`] hooks registered where the server is assembled
//! ([`crate::apiserver`]); the engine knows none of them by name. Both fronts (the HTTP
//! server and the in-process transport) call into one [`Engine`].

mod admission;
mod create;
mod delete;
mod hooks;
mod read;
mod update;

pub use admission::{BodyOrigin, FieldCheck, Warnings};
pub use hooks::{Change, Controller};

use std::{sync::Arc, time::Duration};

use serde_json::{Map, Value};

use crate::{
    clock::Entropy,
    errors::{ApiError, ApiResult},
    meta,
    registry::{GroupResource, Registry, ResourceType},
    store::{ObjKey, Store, WriteOutcome},
};

/// Tunables of the engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// How many change events are kept for watch resume and consistent continue tokens.
    pub history_limit: usize,
    /// How often a watch with `allowWatchBookmarks` gets a BOOKMARK.
    pub bookmark_interval: Duration,
    /// Create a missing namespace on first write into it instead of answering 404, as
    /// client-go's fake object tracker (which ignores namespaces) behaves. Off for the
    /// HTTP server; on for [`crate::fake::Fake`].
    pub auto_create_namespaces: bool,
    /// Enforce schemas as kube-apiserver does (on by default): `fieldValidation` for every
    /// kind with a schema (unknown and duplicate fields), and for custom resources
    /// pruning, defaulting, OpenAPI value validation and CEL rules. Off is the old
    /// permissive mode: objects are stored as sent. CRDs are validated either way.
    pub schema_validation: bool,
    /// Seed generated names and uids (`None`: random), so that two runs with the same
    /// inputs write the same objects (see `crate::clock`).
    pub seed: Option<u64>,
    /// Delete gracefully what a kubelet must finish (a scheduled, running pod keeps its
    /// deletionTimestamp until its kubelet deletes it with grace period 0), as
    /// kube-apiserver does. On when the cluster runs kubelets
    /// (`crate::controllers::ClusterConfig`); with none, nothing would finish such a
    /// deletion, so objects are deleted at once.
    pub graceful_deletion: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            history_limit: 100_000,
            bookmark_interval: Duration::from_secs(5),
            auto_create_namespaces: false,
            schema_validation: true,
            seed: None,
            graceful_deletion: false,
        }
    }
}

impl EngineConfig {
    /// Sets the history size.
    pub fn history_limit(mut self, n: usize) -> Self {
        self.history_limit = n;
        self
    }

    /// Sets the bookmark interval.
    pub fn bookmark_interval(mut self, d: Duration) -> Self {
        self.bookmark_interval = d;
        self
    }

    /// Turns schema enforcement on (the default) or off (see the field).
    pub fn schema_validation(mut self, on: bool) -> Self {
        self.schema_validation = on;
        self
    }

    /// Seeds generated names and uids (see the field).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Creates missing namespaces on first write (see the field).
    pub fn auto_create_namespaces(mut self, on: bool) -> Self {
        self.auto_create_namespaces = on;
        self
    }
}

/// What a request addresses: a resource type, and optionally a namespace, a name and a
/// subresource.
#[derive(Debug, Clone)]
pub struct Target {
    /// The resource type (in the version the request used).
    pub rt: Arc<ResourceType>,
    /// The namespace from the path, if any.
    pub namespace: Option<String>,
    /// The object name from the path, if any.
    pub name: Option<String>,
    /// `status`, `scale`, ... from the path.
    pub subresource: Option<String>,
}

impl Target {
    fn gr(&self) -> GroupResource {
        self.rt.group_resource()
    }

    fn key(&self) -> ApiResult<ObjKey> {
        let name = self
            .name
            .clone()
            .ok_or_else(|| ApiError::bad_request("a name is required"))?;
        Ok((self.ns_key(), name))
    }

    /// The namespace part of the target's key (`""` for a cluster-scoped resource).
    pub(crate) fn ns_key(&self) -> String {
        if self.rt.namespaced {
            self.namespace.clone().unwrap_or_default()
        } else {
            String::new()
        }
    }

    fn name_or_empty(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    fn not_found(&self) -> ApiError {
        ApiError::not_found(&self.rt.group, &self.rt.plural, self.name_or_empty())
    }
}

/// List parameters (metav1.ListOptions).
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit`.
    pub limit: Option<usize>,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
}

/// Watch parameters.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// `sendInitialEvents`.
    pub send_initial_events: Option<bool>,
    /// `timeoutSeconds`.
    pub timeout: Option<Duration>,
}

/// Options of writes (create, update, patch).
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `force` (server-side apply).
    pub force: bool,
    /// `fieldValidation`, the body's duplicate fields and where warnings go.
    pub fields: FieldCheck,
    /// A check of the object about to be stored, run after a patch is applied and before
    /// the strategy (RBAC's escalation check, `crate::authz::rbac::escalation`).
    pub guard: Option<WriteGuard>,
    /// What a create must use instead of generating: the name (for `generateName`) and
    /// uid that admission webhooks saw in the dry run before it (kube-apiserver resolves
    /// them once, before its validating admission; here the dry run runs the strategy).
    pub preset: Option<Preset>,
    /// The server's own precondition (not the user's): an update or patch applies only
    /// to the object at this resourceVersion, the one admission saw (kube-apiserver's
    /// `GuaranteedUpdate` retries its `tryUpdate`, admission included, on a conflict).
    pub admitted_rv: Option<String>,
}

/// The name and uid a create uses instead of generating them ([`WriteOptions::preset`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preset {
    /// The name to use when the object has only `generateName`.
    pub name: String,
    /// The uid.
    pub uid: String,
}

/// A check the registry runs on the object a create or main-resource update is about to
/// store, given the new object and (on update) the current one — kube's policy-based
/// storages wrap their registry with such checks (`rest.ValidateObjectFunc`). On update
/// it runs under the store's lock, so it must not read the store then (what it needs is
/// read before); on create (`old` is `None`) it runs before the lock is taken.
#[derive(Clone)]
pub struct WriteGuard(Arc<GuardFn>);

/// The function of a [`WriteGuard`].
type GuardFn = dyn Fn(&Value, Option<&Value>) -> ApiResult<()> + Send + Sync;

impl WriteGuard {
    /// A guard running `check`.
    pub fn new(
        check: impl Fn(&Value, Option<&Value>) -> ApiResult<()> + Send + Sync + 'static,
    ) -> Self {
        WriteGuard(Arc::new(check))
    }

    /// Runs the check on `new` (replacing `old`, on update).
    pub fn check(&self, new: &Value, old: Option<&Value>) -> ApiResult<()> {
        (self.0)(new, old)
    }
}

impl std::fmt::Debug for WriteGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteGuard")
    }
}

/// Options of deletes (metav1.DeleteOptions plus `dryRun`).
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `Background`, `Foreground` or `Orphan`.
    pub propagation: Option<String>,
    /// `gracePeriodSeconds`: how long a graceful deletion (a scheduled pod's) may take.
    pub grace_period_seconds: Option<i64>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_rv: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The server's own precondition (not the user's): the resourceVersion of the object
    /// admission saw ([`WriteOptions::admitted_rv`]).
    pub admitted_rv: Option<String>,
}

/// A list result, serialised lazily so large lists are not copied into one `Value`.
#[derive(Debug)]
pub struct ListResult {
    /// `kind` of the list.
    pub list_kind: String,
    /// `apiVersion` of the list.
    pub api_version: String,
    /// Items in key order.
    pub items: Vec<Arc<Value>>,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// `metadata.continue`.
    pub continue_token: Option<String>,
    /// `metadata.remainingItemCount`: objects after this page (pages with `continue` and
    /// no selector).
    pub remaining_item_count: Option<u64>,
}

impl ListResult {
    /// The list as JSON bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.items.len() * 256);
        out.extend_from_slice(b"{\"kind\":");
        push_json(&mut out, &Value::String(self.list_kind.clone()));
        out.extend_from_slice(b",\"apiVersion\":");
        push_json(&mut out, &Value::String(self.api_version.clone()));
        let mut metadata = Map::new();
        metadata.insert(
            "resourceVersion".into(),
            Value::String(self.resource_version.clone()),
        );
        if let Some(c) = &self.continue_token {
            metadata.insert("continue".into(), Value::String(c.clone()));
        }
        if let Some(n) = self.remaining_item_count {
            metadata.insert("remainingItemCount".into(), Value::from(n));
        }
        out.extend_from_slice(b",\"metadata\":");
        push_json(&mut out, &Value::Object(metadata));
        out.extend_from_slice(b",\"items\":[");
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_json(&mut out, item);
        }
        out.extend_from_slice(b"]}");
        out
    }
}

fn push_json(out: &mut Vec<u8>, v: &Value) {
    // Serialising a `Value` into a Vec cannot fail.
    if serde_json::to_writer(&mut *out, v).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// The engine: registry + store + the rules, and the controllers told about changes.
pub struct Engine {
    registry: Registry,
    store: Store,
    config: EngineConfig,
    controllers: Vec<Arc<dyn Controller>>,
    entropy: Entropy,
}

impl Engine {
    /// An engine with the built-in types, an empty store and `controllers` told about
    /// every committed change. `crate::apiserver::new_engine` assembles the standard
    /// one (with the controllers and the system namespaces).
    pub fn with_controllers(
        config: EngineConfig,
        controllers: Vec<Arc<dyn Controller>>,
    ) -> Arc<Self> {
        crate::clock::init();
        Arc::new(Engine {
            entropy: config.seed.map(Entropy::seeded).unwrap_or_default(),
            registry: Registry::with_builtins(),
            store: Store::new(config.history_limit),
            config,
            controllers,
        })
    }

    /// The registry of served types.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The object store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// A target for `group/version/plural` (a placeholder type when not served).
    pub(crate) fn target(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Target {
        let rt = self
            .registry
            .get(group, version, plural)
            .unwrap_or_else(|| Arc::new(placeholder_type(group, version, plural)));
        Target {
            rt,
            namespace: namespace.map(str::to_string),
            name: name.map(str::to_string),
            subresource: None,
        }
    }

    /// Rewrites `apiVersion`/`kind` to the version the request was served in, and adds
    /// defaults the schema gained since the object was written (`read_back`).
    pub fn present(&self, rt: &ResourceType, obj: Arc<Value>) -> Arc<Value> {
        let obj = self.read_back(rt, obj);
        let api_version = rt.api_version();
        let fits = obj.get("apiVersion").and_then(Value::as_str) == Some(api_version.as_str())
            && obj.get("kind").and_then(Value::as_str) == Some(rt.kind.as_str());
        if fits {
            obj
        } else {
            let mut v = (*obj).clone();
            let m = meta::ensure_object(&mut v);
            m.insert("apiVersion".into(), Value::String(api_version));
            m.insert("kind".into(), Value::String(rt.kind.clone()));
            Arc::new(v)
        }
    }

    /// Tells every controller about a committed change.
    fn notify(&self, rt: &ResourceType, change: Change, obj: &Arc<Value>) {
        for c in &self.controllers {
            c.observe(self, rt, change, obj);
        }
    }

    /// Tells the controllers about the event of a committed write (nothing for no-ops and
    /// dry runs).
    fn after_write(&self, rt: &ResourceType, out: &WriteOutcome) {
        let change = match out.event {
            Some(crate::store::EventType::Added) => Change::Added,
            Some(crate::store::EventType::Modified) => Change::Modified,
            Some(crate::store::EventType::Deleted) => {
                rt.strategy.after_delete(&out.object);
                Change::Deleted
            }
            None => return,
        };
        self.notify(rt, change, &out.object);
    }

    // ---------------------------------------------------------------- validation

    fn check_body(&self, target: &Target, body: &Value, creating: bool) -> ApiResult<()> {
        let rt = &target.rt;
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        }
        if target.subresource.as_deref() == Some("scale") {
            // The body is an autoscaling/v1 Scale, not the resource's kind.
            return check_scale_body(body);
        }
        if let Some(kind) = body.get("kind")
            && kind.as_str() != Some(rt.kind.as_str())
        {
            return Err(ApiError::bad_request(format!(
                "the kind of the provided object ({}) does not match the kind of the resource ({})",
                kind.as_str().unwrap_or_default(),
                rt.kind
            )));
        }
        if let Some(api_version) = body.get("apiVersion") {
            let ok = api_version.as_str().is_some_and(|av| {
                av == rt.api_version()
                    || self
                        .registry
                        .versions(&rt.group)
                        .iter()
                        .any(|v| av == api_version_of(&rt.group, v))
            });
            if !ok {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({}) does not match the expected API version ({})",
                    api_version.as_str().unwrap_or_default(),
                    rt.api_version()
                )));
            }
        }
        if let Some(m) = body.get("metadata")
            && !m.is_object()
            && !m.is_null()
        {
            return Err(ApiError::bad_request("metadata must be an object"));
        }
        let body_ns = meta::namespace(body);
        if rt.namespaced
            && !body_ns.is_empty()
            && let Some(ns) = &target.namespace
            && ns != body_ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if !creating && let Some(name) = &target.name {
            let body_name = meta::name(body);
            if !body_name.is_empty() && body_name != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
        }
        let causes = crate::validation::validate_labels(body);
        if !causes.is_empty() {
            return Err(ApiError::invalid(
                &rt.group,
                &rt.kind,
                meta::name(body),
                causes,
            ));
        }
        Ok(())
    }

    /// NamespaceLifecycle admission (plugin/pkg/admission/namespace/lifecycle): the
    /// namespace of a create must exist and not be terminating.
    fn require_namespace(&self, target: &Target, name: &str) -> ApiResult<()> {
        if !target.rt.namespaced {
            return Ok(());
        }
        let ns = target.namespace.as_deref().unwrap_or_default();
        if ns.is_empty() {
            return Err(ApiError::bad_request(
                "the server could not find the requested resource: a namespace is required",
            ));
        }
        let key = (String::new(), ns.to_string());
        match self.store.get(&GroupResource::new("", "namespaces"), &key) {
            None if self.config.auto_create_namespaces => self.create_namespace(ns),
            None => Err(ApiError::not_found("", "namespaces", ns)),
            Some(obj) if meta::is_deleting(&obj) => Err(ApiError::forbidden(format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                qualified(&target.rt.group, &target.rt.plural)
            ))),
            Some(_) => Ok(()),
        }
    }

    fn create_namespace(&self, ns: &str) -> ApiResult<()> {
        let rt = self
            .registry()
            .get("", "v1", "namespaces")
            .ok_or_else(|| ApiError::internal("the namespaces resource is not registered"))?;
        let target = Target {
            rt,
            namespace: None,
            name: None,
            subresource: None,
        };
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": ns},
        });
        match self.create(&target, body, &WriteOptions::default()) {
            Ok(_) => Ok(()),
            // Created concurrently by another request.
            Err(e) if e.code == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn api_version_of(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn placeholder_type(group: &str, version: &str, plural: &str) -> ResourceType {
    ResourceType {
        group: group.into(),
        version: version.into(),
        kind: String::new(),
        list_kind: String::new(),
        plural: plural.into(),
        singular: String::new(),
        short_names: Vec::new(),
        categories: Vec::new(),
        namespaced: false,
        status_subresource: false,
        scale: None,
        verbs: Vec::new(),
        generation: false,
        builtin: false,
        name_rule: crate::registry::NameRule::Subdomain,
        field_labels: Vec::new(),
        storage_version: version.into(),
        strategy: crate::strategy::StrategyRef::new(crate::strategy::Generic::default()),
        columns: &[],
        schema: None,
        read_defaults_through: 0,
    }
}

/// `plural.group`, or `plural` for the core group, as errors name resources.
fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

/// Parses a resourceVersion parameter.
pub fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s:?}")))
}

/// Resolves `group/version/plural` to a target, or 404 with a Status.
pub fn resolve(
    engine: &Engine,
    group: &str,
    version: &str,
    plural: &str,
) -> ApiResult<Arc<ResourceType>> {
    engine.registry.get(group, version, plural).ok_or_else(|| {
        ApiError::new(
            404,
            crate::errors::Reason::NotFound,
            "the server could not find the requested resource",
        )
    })
}

/// A PUT to `/scale` carries an `autoscaling/v1` Scale.
pub(crate) fn check_scale_body(body: &Value) -> ApiResult<()> {
    let kind_ok = body.get("kind").is_none_or(|k| k.as_str() == Some("Scale"));
    let version_ok = body
        .get("apiVersion")
        .is_none_or(|v| v.as_str() == Some("autoscaling/v1"));
    if kind_ok && version_ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "a scale subresource takes an autoscaling/v1 Scale",
        ))
    }
}
