//! [`Defaulter`]: typed defaulting (controller-runtime's `admission.Defaulter`), answered
//! as a JSONPatch from the object the API server sent to the defaulted one.

use std::marker::PhantomData;

use futures::future::BoxFuture;
use json_patch::{Patch, PatchOperation};
use kube_core::admission::{AdmissionResponse, Operation};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{
    admit::Admit,
    review::{self, Decoded},
    validator::Denied,
};

/// Sets defaults on objects of type `K` (controller-runtime's `admission.Defaulter[T]`).
/// Change `obj` in place; the webhook answers with the JSONPatch between the object as sent
/// and `obj` re-serialised. An `Err` denies the request. Implement with `async fn`.
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Defaults `obj` (a CREATE's or an UPDATE's new object).
    fn default(&self, obj: &mut K) -> impl Future<Output = Result<(), Denied>> + Send;
}

/// How a defaulting webhook builds its patch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaulterOptions {
    /// Also remove what the Rust type drops when it re-serialises the object: fields it
    /// does not know (an older type than the CRD) and values it omits (controller-runtime's
    /// `DefaulterRemoveUnknownOrOmitableFields`). Off by default: such removals are left
    /// out of the patch, only the defaulter's own changes are sent.
    pub remove_unknown_or_omittable_fields: bool,
}

/// The patch a defaulting webhook answers with: the diff from `raw` (the object as the API
/// server sent it) to `defaulted`. Unless `options` says otherwise, `remove` operations that
/// merely undo what the type's own round trip (`raw` → `original`, the decoded object
/// before defaulting, re-serialised) dropped are left out.
pub fn default_patch(
    raw: &Value,
    original: &Value,
    defaulted: &Value,
    options: DefaulterOptions,
) -> Patch {
    let Patch(mut operations) = json_patch::diff(raw, defaulted);
    let is_remove = |op: &PatchOperation| matches!(op, PatchOperation::Remove(_));
    if !options.remove_unknown_or_omittable_fields && operations.iter().any(is_remove) {
        let Patch(by_type) = json_patch::diff(raw, original);
        let removed_by_type: Vec<&PatchOperation> =
            by_type.iter().filter(|op| is_remove(op)).collect();
        operations.retain(|op| !(is_remove(op) && removed_by_type.contains(&op)));
    }
    Patch(operations)
}

/// A [`Defaulter`] as an admission route.
pub(crate) struct DefaultingHandler<K, D> {
    defaulter: D,
    options: DefaulterOptions,
    _object: PhantomData<fn() -> K>,
}

impl<K, D> DefaultingHandler<K, D> {
    pub(crate) fn new(defaulter: D, options: DefaulterOptions) -> Self {
        Self {
            defaulter,
            options,
            _object: PhantomData,
        }
    }
}

impl<K, D> DefaultingHandler<K, D>
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    D: Defaulter<K>,
{
    async fn default_object(&self, decoded: &Decoded) -> AdmissionResponse {
        let request = &decoded.request;
        if matches!(request.operation, Operation::Delete | Operation::Connect) {
            return review::allowed(request);
        }
        let mut obj = match decoded.typed::<K>("object") {
            Ok(obj) => obj,
            Err(error) => return review::errored(request, 400, error.to_string()),
        };
        let original = match self.options.remove_unknown_or_omittable_fields {
            true => Value::Null,
            false => match serde_json::to_value(&obj) {
                Ok(value) => value,
                Err(error) => return review::errored(request, 500, error.to_string()),
            },
        };
        if let Err(denied) = self.defaulter.default(&mut obj).await {
            return denied.respond(request);
        }
        let defaulted = match serde_json::to_value(&obj) {
            Ok(value) => value,
            Err(error) => return review::errored(request, 500, error.to_string()),
        };
        let raw = decoded.object.as_ref().unwrap_or(&Value::Null);
        let patch = default_patch(raw, &original, &defaulted, self.options);
        if patch.0.is_empty() {
            return review::allowed(request);
        }
        match review::allowed(request).with_patch(patch) {
            Ok(response) => response,
            Err(error) => review::errored(request, 500, error.to_string()),
        }
    }
}

impl<K, D> Admit for DefaultingHandler<K, D>
where
    K: Serialize + DeserializeOwned + Send + Sync + 'static,
    D: Defaulter<K>,
{
    fn admit(&self, decoded: Decoded) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(async move { self.default_object(&decoded).await })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn patch_carries_the_defaults_and_not_the_type_s_removals() {
        let raw =
            json!({"metadata": {"name": "x", "creationTimestamp": null}, "spec": {"unknown": 1}});
        // what the type keeps of it
        let original = json!({"metadata": {"name": "x"}, "spec": {}});
        let defaulted = json!({"metadata": {"name": "x"}, "spec": {"replicas": 1}});
        let patch = default_patch(&raw, &original, &defaulted, DefaulterOptions::default());
        let mut applied = raw.clone();
        json_patch::patch(&mut applied, &patch).expect("patch applies");
        assert_eq!(
            applied,
            json!({"metadata": {"name": "x", "creationTimestamp": null}, "spec": {"unknown": 1, "replicas": 1}})
        );

        let pruning = DefaulterOptions {
            remove_unknown_or_omittable_fields: true,
        };
        let patch = default_patch(&raw, &Value::Null, &defaulted, pruning);
        let mut applied = raw;
        json_patch::patch(&mut applied, &patch).expect("patch applies");
        assert_eq!(applied, defaulted);
    }

    #[test]
    fn nothing_changed_is_an_empty_patch() {
        let raw = json!({"a": 1});
        let patch = default_patch(&raw, &raw, &raw, DefaulterOptions::default());
        assert!(patch.0.is_empty());
    }
}
