//! The `admission.k8s.io/v1` AdmissionRequest of a write: what dynamic admission (the
//! webhooks and the policies) is told (kube-apiserver's `admission.Attributes` and
//! `request/admissionreview.go` `CreateAdmissionObjects`).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::{authn::UserInfo, registry::ResourceType};

/// The operation of an admission request (`admission.Operation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// A create (POST, or an apply that creates).
    Create,
    /// An update, patch or apply of an existing object.
    Update,
    /// A delete.
    Delete,
}

impl Operation {
    /// The name in rules and reviews.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// A write as dynamic admission sees it (kube-apiserver's `admission.Attributes`).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The operation.
    pub(crate) operation: Operation,
    /// The resource type, in the version of the request.
    pub(crate) rt: Arc<ResourceType>,
    /// `status`, `scale`, ... (empty for the main resource).
    pub(crate) subresource: String,
    /// The namespace (empty for cluster-scoped objects).
    pub(crate) namespace: String,
    /// The object's name (empty on a create with `generateName` before the registry).
    pub(crate) name: String,
    /// Who writes.
    pub(crate) user: UserInfo,
    /// `dryRun=All`.
    pub(crate) dry_run: bool,
    /// The CreateOptions, UpdateOptions or DeleteOptions sent.
    pub(crate) options: Value,
    /// The object written (none for a delete), in the request's version.
    pub(crate) object: Option<Value>,
    /// The current object (update, delete), in the request's version.
    pub(crate) old_object: Option<Value>,
    /// The audit annotations the webhooks and policies added (`<hook>/<key>`), for the
    /// request's audit event.
    pub(crate) audit_annotations: Arc<parking_lot::Mutex<Vec<(String, String)>>>,
}

impl Request {
    /// The kind of the object a (sub)resource request carries: a Scale for `scale`.
    pub(crate) fn kind_of(&self, rt: &ResourceType) -> Value {
        if self.subresource == "scale" {
            json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
        } else {
            json!({"group": rt.group, "version": rt.version, "kind": rt.kind})
        }
    }

    /// The `admission.k8s.io/v1` AdmissionRequest, as the hook matched in `as_rt` (an
    /// equivalent version under `matchPolicy: Equivalent`) is sent it, with `uid`.
    pub(crate) fn to_json(&self, uid: &str, as_rt: &ResourceType) -> Value {
        let resource = |rt: &ResourceType| json!({"group": rt.group, "version": rt.version, "resource": rt.plural});
        let converted = |obj: &Option<Value>| match obj {
            Some(obj) => convert(obj.clone(), &self.rt, as_rt, &self.subresource),
            None => Value::Null,
        };
        let mut req = json!({
            "uid": uid,
            "kind": self.kind_of(as_rt),
            "resource": resource(as_rt),
            "requestKind": self.kind_of(&self.rt),
            "requestResource": resource(&self.rt),
            "name": self.name,
            "operation": self.operation.as_str(),
            "userInfo": user_json(&self.user),
            "object": converted(&self.object),
            "oldObject": converted(&self.old_object),
            "dryRun": self.dry_run,
            "options": self.options,
        });
        if let Some(m) = req.as_object_mut() {
            if !self.namespace.is_empty() {
                m.insert("namespace".into(), json!(self.namespace));
            }
            if !self.subresource.is_empty() {
                m.insert("subResource".into(), json!(self.subresource));
                m.insert("requestSubResource".into(), json!(self.subresource));
            }
        }
        req
    }
}

/// An object of `from`'s version as `to`'s (the versions of a custom resource without a
/// conversion webhook differ only in `apiVersion`); a Scale stays a Scale.
pub(crate) fn convert(mut obj: Value, from: &ResourceType, to: &ResourceType, sub: &str) -> Value {
    if from.version != to.version
        && sub != "scale"
        && let Some(m) = obj.as_object_mut()
    {
        m.insert("apiVersion".into(), json!(to.api_version()));
    }
    obj
}

/// `authentication.k8s.io/v1` UserInfo.
fn user_json(user: &UserInfo) -> Value {
    let mut u = json!({"username": user.name, "groups": user.groups});
    if let Some(m) = u.as_object_mut() {
        if !user.uid.is_empty() {
            m.insert("uid".into(), json!(user.uid));
        }
        if !user.extra.is_empty() {
            m.insert("extra".into(), json!(user.extra));
        }
    }
    u
}
