//! The admission request as the policy plugins read it: an `admission.k8s.io/v1`
//! AdmissionRequest in JSON (what the admission chain builds for webhooks too).

use serde_json::Value;

use crate::errors::{ApiError, ApiResult};

/// The fields of an AdmissionRequest matching and messages need, borrowed from the JSON.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    /// The whole request (the CEL `request` variable is built from it).
    pub(crate) raw: &'a Value,
    /// `operation`: CREATE, UPDATE, DELETE or CONNECT.
    pub(crate) operation: &'a str,
    /// `resource.group`.
    pub(crate) group: &'a str,
    /// `resource.version`.
    pub(crate) version: &'a str,
    /// `resource.resource`.
    pub(crate) resource: &'a str,
    /// `subResource`.
    pub(crate) subresource: &'a str,
    /// `name`.
    pub(crate) name: &'a str,
    /// `namespace`.
    pub(crate) namespace: &'a str,
    /// `object` (`None` when absent or null).
    pub(crate) object: Option<&'a Value>,
    /// `oldObject` (`None` when absent or null).
    pub(crate) old_object: Option<&'a Value>,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn non_null(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

impl<'a> Request<'a> {
    /// Reads the request; one without an operation or a resource is a bad request.
    pub(crate) fn parse(raw: &'a Value) -> ApiResult<Self> {
        let operation = str_at(raw, "/operation");
        let resource = str_at(raw, "/resource/resource");
        if operation.is_empty() || resource.is_empty() {
            return Err(ApiError::internal(
                "admission policy: the admission request has no operation or resource",
            ));
        }
        Ok(Request {
            raw,
            operation,
            group: str_at(raw, "/resource/group"),
            version: str_at(raw, "/resource/version"),
            resource,
            subresource: str_at(raw, "/subResource"),
            name: str_at(raw, "/name"),
            namespace: str_at(raw, "/namespace"),
            object: non_null(raw.get("object")),
            old_object: non_null(raw.get("oldObject")),
        })
    }

    /// Whether the request is about a Namespace object itself (kube-apiserver treats its
    /// `namespace` attribute, the namespace's own name, as no namespace).
    pub(crate) fn is_namespace_object(&self) -> bool {
        self.group.is_empty() && self.resource == "namespaces"
    }

    /// The namespace whose object is `namespaceObject` (none for cluster-scoped
    /// resources and for Namespace objects: `dispatcher.go`'s special case).
    pub(crate) fn namespace_for_object(&self) -> Option<&'a str> {
        (!self.namespace.is_empty() && !self.is_namespace_object()).then_some(self.namespace)
    }

    /// The CEL `request` variable: the request without `object` and `oldObject` (bound
    /// as their own variables).
    pub(crate) fn cel_request(&self) -> Value {
        let mut r = self.raw.clone();
        if let Some(m) = r.as_object_mut() {
            m.remove("object");
            m.remove("oldObject");
        }
        r
    }

    /// `<resource>[.<group>]` as `NewForbidden` names it.
    pub(crate) fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_owned()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// The name `admission.NewForbidden` puts in a denial: the object's name, else its
    /// generateName, else the request's name, else `Unknown`.
    pub(crate) fn object_name(&self) -> String {
        let from_object = |key: &str| {
            self.object
                .and_then(|o| o.pointer(&format!("/metadata/{key}")))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        from_object("name")
            .or_else(|| from_object("generateName"))
            .or((!self.name.is_empty()).then_some(self.name))
            .unwrap_or("Unknown")
            .to_owned()
    }
}
