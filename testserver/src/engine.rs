//! The API semantics, independent of HTTP: create, get, list, update (with the status
//! subresource rules), delete (finalizers, propagation), patch and watch over the
//! [`Store`], for any [`ResourceType`] in the [`Registry`].
//!
//! Both fronts (the HTTP server and the in-process transport) call into one [`Engine`].

use std::{sync::Arc, time::Duration};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::{
    errors::{ApiError, ApiResult, Cause},
    meta,
    registry::{GroupResource, Registry, ResourceType},
    selectors::{FieldSelector, LabelSelector},
    store::{ObjKey, Store, Write, WriteOutcome},
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
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            history_limit: 100_000,
            bookmark_interval: Duration::from_secs(5),
            auto_create_namespaces: false,
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

    fn ns_key(&self) -> String {
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
}

/// Options of deletes (metav1.DeleteOptions plus `dryRun`).
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `Background`, `Foreground` or `Orphan`.
    pub propagation: Option<String>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_rv: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
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

/// The engine: registry + store + the rules.
pub struct Engine {
    registry: Registry,
    store: Store,
    config: EngineConfig,
}

const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

impl Engine {
    /// A fresh engine with the built-in types and the system namespaces.
    pub fn new(config: EngineConfig) -> Arc<Self> {
        let engine = Arc::new(Engine {
            registry: Registry::with_builtins(),
            store: Store::new(config.history_limit),
            config,
        });
        for ns in SYSTEM_NAMESPACES {
            let created = engine.create(
                &engine.target("", "v1", "namespaces", None, None),
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                &WriteOptions::default(),
            );
            if let Err(err) = created {
                tracing::error!(%err, "creating system namespace");
            }
        }
        engine
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

    fn target(
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

    /// Rewrites `apiVersion`/`kind` to the version the request was served in.
    pub fn present(&self, rt: &ResourceType, obj: Arc<Value>) -> Arc<Value> {
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
        let causes = meta::validate_labels(body);
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

    fn require_namespace(&self, target: &Target) -> ApiResult<()> {
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
                "unable to create new content in namespace {ns} because it is being terminated"
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

    // ---------------------------------------------------------------- create

    /// Creates an object (201), or reports AlreadyExists / Invalid / BadRequest.
    pub fn create(
        &self,
        target: &Target,
        body: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Arc<Value>> {
        let rt = target.rt.clone();
        if target.subresource.is_some() {
            return Err(ApiError::method_not_allowed(
                "create is not supported on this subresource",
            ));
        }
        self.check_body(target, &body, true)?;
        let mut obj = body;
        if !meta::resource_version(&obj).is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let ns = target.ns_key();
        {
            let m = meta::meta_mut(&mut obj);
            if rt.namespaced {
                m.insert("namespace".into(), Value::String(ns.clone()));
            } else {
                m.remove("namespace");
            }
            let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
            if name.is_empty()
                && let Some(base) = m.get("generateName").and_then(Value::as_str)
            {
                let generated = format!("{base}{}", meta::generate_suffix());
                m.insert("name".into(), Value::String(generated));
            }
        }
        let name = meta::name(&obj).to_string();
        if name.is_empty() {
            return Err(ApiError::invalid(
                &rt.group,
                &rt.kind,
                "",
                vec![Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value: name or generateName is required".into(),
                    field: "metadata.name".into(),
                }],
            ));
        }
        let causes = meta::validate_name(&name, rt.name_rule, "metadata.name");
        if !causes.is_empty() {
            return Err(ApiError::invalid(&rt.group, &rt.kind, &name, causes));
        }
        if let Some(path_name) = &target.name
            && *path_name != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({path_name})"
            )));
        }
        self.require_namespace(target)?;
        self.validate_type_specific(&rt, &obj)?;
        {
            let api_version = rt.api_version();
            let root = meta::ensure_object(&mut obj);
            root.insert("apiVersion".into(), Value::String(api_version));
            root.insert("kind".into(), Value::String(rt.kind.clone()));
            if rt.status_subresource && rt.plural != "namespaces" {
                root.remove("status");
            }
            let m = meta::meta_mut(&mut obj);
            m.insert("uid".into(), Value::String(meta::new_uid()));
            m.insert(
                "creationTimestamp".into(),
                Value::String(meta::now_rfc3339()),
            );
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
            m.remove("selfLink");
            if rt.generation {
                m.insert("generation".into(), json!(1));
            } else {
                m.remove("generation");
            }
        }
        self.default_on_create(&rt, &mut obj);
        if let Some(manager) = &opts.field_manager {
            crate::apply::record_update(
                &mut obj,
                None,
                manager,
                &rt.api_version(),
                None,
                rt.builtin,
            );
        }
        let key = (ns, name.clone());
        let out = self
            .store
            .write(&rt.group_resource(), &key, opts.dry_run, |current| {
                if current.is_some() {
                    Err(ApiError::already_exists(&rt.group, &rt.plural, &name))
                } else {
                    Ok(Write::Put(obj))
                }
            })?;
        self.after_write(&rt, &out);
        Ok(self.present(&rt, out.object))
    }

    fn default_on_create(&self, rt: &ResourceType, obj: &mut Value) {
        let root = meta::ensure_object(obj);
        match (rt.group.as_str(), rt.plural.as_str()) {
            ("", "namespaces") => {
                root.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
                root.insert("status".into(), json!({"phase": "Active"}));
            }
            ("", "pods") => {
                root.insert("status".into(), json!({"phase": "Pending"}));
            }
            _ => {}
        }
    }

    fn validate_type_specific(&self, rt: &ResourceType, obj: &Value) -> ApiResult<()> {
        if rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions" {
            crate::crd::validate(obj)?;
        }
        Ok(())
    }

    /// Side effects of a committed write: CRD (un)registration, namespace cleanup and
    /// garbage collection.
    fn after_write(&self, rt: &ResourceType, out: &WriteOutcome) {
        if out.event.is_none() {
            return;
        }
        if rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions" {
            crate::crd::on_crd_write(self, out);
        }
        match out.event {
            Some(crate::store::EventType::Deleted) => {
                if rt.group.is_empty() && rt.plural == "namespaces" {
                    self.purge_namespace(meta::name(&out.object));
                }
                crate::gc::on_deleted(self, rt, &out.object);
            }
            Some(crate::store::EventType::Added | crate::store::EventType::Modified) => {
                crate::gc::on_written(self, rt, &out.object);
            }
            _ => {}
        }
    }

    /// Removes every object in a deleted namespace (the namespace controller's job).
    fn purge_namespace(&self, namespace: &str) {
        for gr in self.store.resources_in_namespace(namespace) {
            let Some(rt) = self.registry.any_version(&gr.group, &gr.resource) else {
                continue;
            };
            for key in self.store.keys(&gr, Some(namespace)) {
                let t = Target {
                    rt: rt.clone(),
                    namespace: Some(key.0.clone()),
                    name: Some(key.1.clone()),
                    subresource: None,
                };
                let cleared = self.replace_with(&t, &WriteOptions::default(), |old| {
                    let mut new = old.clone();
                    meta::meta_mut(&mut new).remove("finalizers");
                    Ok(Some((new, String::new())))
                });
                if let Err(err) = cleared.and_then(|_| self.delete(&t, &DeleteOptions::default()))
                    && err.code != 404
                {
                    tracing::warn!(%err, "purging namespace");
                }
            }
        }
    }

    // ---------------------------------------------------------------- read

    /// Reads one object (or its status / scale subresource).
    pub fn get(&self, target: &Target) -> ApiResult<Arc<Value>> {
        let key = target.key()?;
        let obj = self
            .store
            .get(&target.gr(), &key)
            .ok_or_else(|| target.not_found())?;
        match target.subresource.as_deref() {
            None | Some("status") => Ok(self.present(&target.rt, obj)),
            Some("scale") => crate::scale::to_scale(&target.rt, &obj),
            Some(other) => Err(ApiError::not_found(
                &target.rt.group,
                &format!("{}/{other}", target.rt.plural),
                target.name_or_empty(),
            )),
        }
    }

    fn selectors(
        &self,
        rt: &ResourceType,
        label: Option<&str>,
        field: Option<&str>,
    ) -> ApiResult<(LabelSelector, FieldSelector)> {
        let labels = LabelSelector::parse(label.unwrap_or_default())
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse(field.unwrap_or_default(), &rt.field_labels)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok((labels, fields))
    }

    /// Lists objects with selectors, paging and resourceVersion semantics.
    pub fn list(&self, target: &Target, opts: &ListOptions) -> ApiResult<ListResult> {
        let rt = &target.rt;
        let (labels, fields) = self.selectors(
            rt,
            opts.label_selector.as_deref(),
            opts.field_selector.as_deref(),
        )?;
        let namespace = if rt.namespaced {
            target.namespace.clone().filter(|n| !n.is_empty())
        } else {
            None
        };
        let current = self.store.current_rv();
        let rv_param = opts.resource_version.as_deref().filter(|s| !s.is_empty());
        let (at_rv, start_after) = match &opts.continue_token {
            Some(token) if !token.is_empty() => {
                if rv_param.is_some_and(|r| r != "0") {
                    return Err(ApiError::bad_request(
                        "specifying resource version is not allowed when using continue",
                    ));
                }
                let (rv, key) = decode_continue(token)?;
                (Some(rv), Some(key))
            }
            _ => {
                let at = match (rv_param, opts.resource_version_match.as_deref()) {
                    (None, Some(m)) if !m.is_empty() => {
                        return Err(ApiError::bad_request(
                            "resourceVersionMatch is forbidden unless resourceVersion is provided",
                        ));
                    }
                    (None, _) | (Some("0"), _) => None,
                    (Some(r), m) => {
                        let n = parse_rv(r)?;
                        match m.unwrap_or("NotOlderThan") {
                            "Exact" => Some(n),
                            "NotOlderThan" | "" => {
                                if n > current {
                                    return Err(too_large_rv(n));
                                }
                                None
                            }
                            other => {
                                return Err(ApiError::bad_request(format!(
                                    "unsupported resourceVersionMatch {other:?}"
                                )));
                            }
                        }
                    }
                };
                if at.is_some_and(|n| n > current) {
                    return Err(too_large_rv(at.unwrap_or_default()));
                }
                (at, None)
            }
        };
        let filter = |obj: &Value| labels.matches_object(obj) && fields.matches_object(obj);
        let page = self.store.list(
            &rt.group_resource(),
            namespace.as_deref(),
            at_rv,
            start_after.as_ref(),
            opts.limit.filter(|l| *l > 0),
            &filter,
        )?;
        let items = page
            .items
            .into_iter()
            .map(|o| self.present(rt, o))
            .collect();
        Ok(ListResult {
            list_kind: rt.list_kind.clone(),
            api_version: rt.api_version(),
            items,
            resource_version: page.rv.to_string(),
            continue_token: page.next.map(|k| encode_continue(page.rv, &k)),
        })
    }

    // ---------------------------------------------------------------- update

    /// Replaces an object (PUT), honouring the resourceVersion precondition and the
    /// status subresource split.
    pub fn update(
        &self,
        target: &Target,
        body: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Arc<Value>> {
        self.check_body(target, &body, false)?;
        let expected_rv = meta::resource_version(&body).to_string();
        self.replace_with(target, opts, move |_old| Ok(Some((body, expected_rv))))
    }

    /// Core of update and patch: `build` turns the current object into the requested one
    /// plus the resourceVersion precondition; `None` from `build` leaves the object as it is.
    pub(crate) fn replace_with<F>(
        &self,
        target: &Target,
        opts: &WriteOptions,
        build: F,
    ) -> ApiResult<Arc<Value>>
    where
        F: FnOnce(&Value) -> ApiResult<Option<(Value, String)>>,
    {
        let rt = target.rt.clone();
        let key = target.key()?;
        let sub = target.subresource.clone();
        if let Some(s) = sub.as_deref() {
            let allowed = match s {
                "status" => rt.status_subresource,
                "scale" => rt.scale.is_some(),
                _ => false,
            };
            if !allowed {
                return Err(ApiError::not_found(
                    &rt.group,
                    &format!("{}/{s}", rt.plural),
                    target.name_or_empty(),
                ));
            }
        }
        let manager = opts.field_manager.clone();
        let name = key.1.clone();
        let out = self.store.write(&rt.group_resource(), &key, opts.dry_run, |current| {
            let Some(old) = current else {
                return Err(ApiError::not_found(&rt.group, &rt.plural, &name));
            };
            let Some((body, expected_rv)) = build(old)? else {
                return Ok(Write::Unchanged);
            };
            if !expected_rv.is_empty() && expected_rv != meta::resource_version(old) {
                return Err(ApiError::conflict(
                    &rt.group,
                    &rt.plural,
                    &name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
            let new = match sub.as_deref() {
                Some("status") => status_update(old, &body),
                Some("scale") => crate::scale::apply_scale(&rt, old, &body)?,
                _ => main_update(&rt, old, body)?,
            };
            let mut new = new;
            if let Some(m) = &manager {
                crate::apply::record_update(&mut new, Some(old), m, &rt.api_version(), sub.as_deref(), rt.builtin);
            }
            finish_update(&rt, old, new)
        })?;
        self.after_write(&rt, &out);
        if target.subresource.as_deref() == Some("scale") {
            return crate::scale::to_scale(&rt, &out.object);
        }
        Ok(self.present(&rt, out.object))
    }

    // ---------------------------------------------------------------- delete

    /// Deletes an object: immediately, or by setting deletionTimestamp while finalizers
    /// remain.
    pub fn delete(&self, target: &Target, opts: &DeleteOptions) -> ApiResult<Arc<Value>> {
        let rt = target.rt.clone();
        if target.subresource.is_some() {
            return Err(ApiError::method_not_allowed(
                "delete is not supported on this subresource",
            ));
        }
        let key = target.key()?;
        let name = key.1.clone();
        let propagation = opts.propagation.clone();
        if let Some(p) = &propagation
            && !matches!(p.as_str(), "Background" | "Foreground" | "Orphan")
        {
            return Err(ApiError::invalid(
                "",
                "DeleteOptions",
                "",
                vec![Cause::invalid(
                    "propagationPolicy",
                    format!("Unsupported value: {p:?}"),
                )],
            ));
        }
        let has_dependents = self
            .store
            .get(&rt.group_resource(), &key)
            .is_some_and(|o| !self.store.dependents_of(meta::uid(&o)).is_empty());
        let out = self.store.write(&rt.group_resource(), &key, opts.dry_run, |current| {
            let Some(old) = current else {
                return Err(ApiError::not_found(&rt.group, &rt.plural, &name));
            };
            if let Some(uid) = &opts.precondition_uid
                && uid != meta::uid(old) {
                    return Err(ApiError::conflict(
                        &rt.group,
                        &rt.plural,
                        &name,
                        &format!(
                            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                            meta::uid(old)
                        ),
                    ));
                }
            if let Some(rv) = &opts.precondition_rv
                && rv != meta::resource_version(old) {
                    return Err(ApiError::conflict(
                        &rt.group,
                        &rt.plural,
                        &name,
                        &format!(
                            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                            meta::resource_version(old)
                        ),
                    ));
                }
            let mut finalizers = meta::finalizers(old);
            match propagation.as_deref() {
                Some("Orphan") if has_dependents => push_unique(&mut finalizers, "orphan"),
                Some("Foreground") if has_dependents => {
                    push_unique(&mut finalizers, "foregroundDeletion")
                }
                _ => {}
            }
            if finalizers.is_empty() {
                return Ok(Write::Delete);
            }
            let mut new = (**old).clone();
            let m = meta::meta_mut(&mut new);
            m.insert(
                "finalizers".into(),
                Value::Array(finalizers.into_iter().map(Value::String).collect()),
            );
            if !m.contains_key("deletionTimestamp") {
                m.insert(
                    "deletionTimestamp".into(),
                    Value::String(meta::now_rfc3339()),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
                if let Some(g) = m.get("generation").and_then(Value::as_i64) {
                    m.insert("generation".into(), json!(g + 1));
                }
            }
            if new == **old {
                Ok(Write::Unchanged)
            } else {
                Ok(Write::Put(new))
            }
        })?;
        self.after_write(&rt, &out);
        if out.event == Some(crate::store::EventType::Modified) {
            crate::gc::on_deleting(self, &rt, &out.object);
        }
        if let Some(obj) = self.store.get(&rt.group_resource(), &key) {
            return Ok(self.present(&rt, obj));
        }
        Ok(self.present(&rt, out.object))
    }

    /// Deletes every object a list with `list_opts` would return.
    pub fn delete_collection(
        &self,
        target: &Target,
        list_opts: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<ListResult> {
        let mut all = list_opts.clone();
        all.limit = None;
        all.continue_token = None;
        let listed = self.list(target, &all)?;
        let mut deleted = Vec::new();
        for item in &listed.items {
            let t = Target {
                rt: target.rt.clone(),
                namespace: Some(meta::namespace(item).to_string()),
                name: Some(meta::name(item).to_string()),
                subresource: None,
            };
            match self.delete(&t, opts) {
                Ok(obj) => deleted.push(obj),
                Err(err) if err.code == 404 => {}
                Err(err) => return Err(err),
            }
        }
        Ok(ListResult {
            list_kind: listed.list_kind,
            api_version: listed.api_version,
            items: deleted,
            resource_version: self.store.current_rv().to_string(),
            continue_token: None,
        })
    }
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|f| f == item) {
        list.push(item.to_string());
    }
}

/// Main-resource update: keeps server-owned metadata and, with a status subresource, the
/// old status.
fn main_update(rt: &ResourceType, old: &Value, body: Value) -> ApiResult<Value> {
    let mut new = body;
    let old_meta = old.get("metadata").cloned().unwrap_or_else(|| json!({}));
    {
        let root = meta::ensure_object(&mut new);
        root.insert(
            "apiVersion".into(),
            old.get("apiVersion").cloned().unwrap_or(Value::Null),
        );
        root.insert("kind".into(), Value::String(rt.kind.clone()));
        if rt.status_subresource {
            match old.get("status") {
                Some(s) => root.insert("status".into(), s.clone()),
                None => root.remove("status"),
            };
        }
    }
    let m = meta::meta_mut(&mut new);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(field) {
            Some(v) => m.insert(field.into(), v.clone()),
            None => m.remove(field),
        };
    }
    if !m.contains_key("managedFields")
        && let Some(mf) = old_meta.get("managedFields")
    {
        m.insert("managedFields".into(), mf.clone());
    }
    m.remove("resourceVersion");
    if meta::is_deleting(old) {
        let old_f = meta::finalizers(old);
        let added: Vec<String> = meta::finalizers(&new)
            .into_iter()
            .filter(|f| !old_f.contains(f))
            .collect();
        if !added.is_empty() {
            return Err(ApiError::invalid(
                &rt.group,
                &rt.kind,
                meta::name(old),
                vec![Cause {
                    reason: "FieldValueForbidden".into(),
                    message:
                        "Forbidden: no new finalizers can be added if the object is being deleted"
                            .into(),
                    field: "metadata.finalizers".into(),
                }],
            ));
        }
    }
    let causes = meta::validate_labels(&new);
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            &rt.group,
            &rt.kind,
            meta::name(old),
            causes,
        ));
    }
    Ok(new)
}

/// `/status` update: only the status changes.
fn status_update(old: &Value, body: &Value) -> Value {
    let mut new = old.clone();
    let root = meta::ensure_object(&mut new);
    match body.get("status") {
        Some(s) => root.insert("status".into(), s.clone()),
        None => root.remove("status"),
    };
    if let Some(mf) = body.pointer("/metadata/managedFields") {
        meta::meta_mut(&mut new).insert("managedFields".into(), mf.clone());
    }
    new
}

/// Generation bump, no-op detection and finalizer-driven removal.
fn finish_update(rt: &ResourceType, old: &Value, mut new: Value) -> ApiResult<Write> {
    if rt.generation && spec_changed(rt, old, &new) {
        let g = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta::meta_mut(&mut new).insert("generation".into(), json!(g + 1));
    }
    let mut old_cmp = old.clone();
    meta::meta_mut(&mut old_cmp).remove("resourceVersion");
    let mut new_cmp = new.clone();
    meta::meta_mut(&mut new_cmp).remove("resourceVersion");
    strip_managed_times(&mut old_cmp);
    strip_managed_times(&mut new_cmp);
    if old_cmp == new_cmp {
        return Ok(Write::Unchanged);
    }
    if meta::is_deleting(&new) && meta::finalizers(&new).is_empty() {
        return Ok(Write::Delete);
    }
    Ok(Write::Put(new))
}

fn strip_managed_times(obj: &mut Value) {
    if let Some(Value::Array(entries)) = obj.pointer_mut("/metadata/managedFields") {
        for e in entries {
            if let Some(m) = e.as_object_mut() {
                m.remove("time");
            }
        }
    }
}

fn spec_changed(rt: &ResourceType, old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("apiVersion");
            m.remove("kind");
            if rt.status_subresource {
                m.remove("status");
            }
        }
        v
    };
    strip(old) != strip(new)
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
    }
}

/// Parses a resourceVersion parameter.
pub fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s:?}")))
}

fn too_large_rv(n: u64) -> ApiError {
    let mut err = ApiError::new(
        504,
        crate::errors::Reason::Timeout,
        format!("Too large resource version: {n}, current: unavailable"),
    );
    err.details.causes = vec![Cause {
        reason: "ResourceVersionTooLarge".into(),
        message: "Too large resource version".into(),
        field: String::new(),
    }];
    err.details.retry_after_seconds = Some(1);
    err
}

fn encode_continue(rv: u64, key: &ObjKey) -> String {
    let raw = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": [key.0, key.1]}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn decode_continue(token: &str) -> ApiResult<(u64, ObjKey)> {
    let bad = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let ns = v
        .pointer("/start/0")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    let name = v
        .pointer("/start/1")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    Ok((rv, (ns.to_string(), name.to_string())))
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
fn check_scale_body(body: &Value) -> ApiResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let key = ("ns".to_string(), "a".to_string());
        let t = encode_continue(42, &key);
        assert_eq!(decode_continue(&t).unwrap(), (42, key));
        assert_eq!(decode_continue("!!").unwrap_err().code, 400);
    }
}
