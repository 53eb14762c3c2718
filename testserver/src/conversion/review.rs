//! One ConversionReview round trip and the checks kube-apiserver makes of its answer
//! (apiextensions-apiserver `pkg/apiserver/conversion/webhook_converter.go`
//! `createConversionReviewObjects`, `getConvertedObjectsFromResponse`, and the per-object
//! checks `validateConvertedObject` / `restoreObjectMeta`).

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::webhook::{CallError, ClientConfig, Services, post_json};

/// Why a conversion failed. Displays as kube-apiserver's error does; the handler answers
/// it as a 500 whose message is this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// `conversionReviewVersions` names neither `v1` nor `v1beta1`.
    #[error("no supported conversion review versions")]
    NoReviewVersion,
    /// The call failed (connection, TLS, HTTP status, timeout, not JSON).
    #[error("conversion webhook for {gvk} failed: {source}")]
    Call {
        /// The converted objects' group, version and kind, as Go prints a GVK.
        gvk: String,
        /// The call's error (`Post "https://...": ...`).
        source: CallError,
    },
    /// The review's answer is not a successful one for this request.
    #[error("conversion webhook for {gvk} failed: {message}")]
    Response {
        /// The converted objects' group, version and kind.
        gvk: String,
        /// `result.message`, or what is wrong with the answer.
        message: String,
    },
    /// The answer has another number of objects than were sent.
    #[error("conversion webhook for {gvk} returned {got} objects, expected {want}")]
    Count {
        /// The converted objects' group, version and kind.
        gvk: String,
        /// How many came back.
        got: usize,
        /// How many were sent.
        want: usize,
    },
    /// A converted object is not the object sent, in the desired version.
    #[error(
        "conversion webhook for {gvk} returned invalid converted object at index {index}: {reason}"
    )]
    Invalid {
        /// The converted objects' group, version and kind.
        gvk: String,
        /// The object's index among those sent.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A converted object's metadata is unusable.
    #[error(
        "conversion webhook for {gvk} returned invalid metadata in object at index {index}: {reason}"
    )]
    Metadata {
        /// The converted objects' group, version and kind.
        gvk: String,
        /// The object's index among those sent.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Go's `GroupVersionKind.String()`: `example.com/v1, Kind=Foo`.
fn gvk_of(obj: &Value) -> String {
    let api_version = str_at(obj, "/apiVersion");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={}", str_at(obj, "/kind"))
}

/// Converts `objects` to `desired` through the webhook at `client` (see
/// [`super::convert`]).
pub(crate) async fn convert(
    client: &ClientConfig,
    review_versions: &[String],
    services: &Services,
    mut objects: Vec<Value>,
    desired: &str,
    timeout: Duration,
) -> Result<Vec<Value>, ConversionError> {
    let positions: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| str_at(o, "/apiVersion") != desired)
        .map(|(i, _)| i)
        .collect();
    let Some(&first) = positions.first() else {
        return Ok(objects);
    };
    let gvk = gvk_of(&objects[first]);
    let review_version = review_versions
        .iter()
        .find(|v| matches!(v.as_str(), "v1" | "v1beta1"))
        .ok_or(ConversionError::NoReviewVersion)?;
    let uid = uuid::Uuid::new_v4().to_string();
    let sent: Vec<Value> = positions.iter().map(|&i| objects[i].clone()).collect();
    let review = json!({
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent},
    });
    tracing::debug!(%gvk, desired, objects = sent.len(), %uid, "calling the conversion webhook");
    let answer = post_json(client, services, &review, timeout)
        .await
        .map_err(|source| ConversionError::Call {
            gvk: gvk.clone(),
            source,
        })?;
    let converted = converted_objects(&answer, review_version, &uid).map_err(|message| {
        ConversionError::Response {
            gvk: gvk.clone(),
            message,
        }
    })?;
    if converted.len() != sent.len() {
        return Err(ConversionError::Count {
            gvk,
            got: converted.len(),
            want: sent.len(),
        });
    }
    for (index, (mut out, original)) in converted.into_iter().zip(&sent).enumerate() {
        // Go numbers the index after incrementing it (converter.go).
        let invalid = |reason: String| ConversionError::Invalid {
            gvk: gvk.clone(),
            index: index + 1,
            reason,
        };
        let got = str_at(&out, "/apiVersion");
        if got != desired {
            return Err(invalid(format!(
                "invalid groupVersion (expected {desired}, received {got})"
            )));
        }
        let (want_kind, got_kind) = (str_at(original, "/kind"), str_at(&out, "/kind"));
        if want_kind != got_kind {
            return Err(invalid(format!(
                "invalid kind (expected {want_kind}, received {got_kind})"
            )));
        }
        for (field, what) in [
            ("/metadata/name", "name"),
            ("/metadata/namespace", "namespace"),
            ("/metadata/uid", "UID"),
        ] {
            let (a, b) = (str_at(original, field), str_at(&out, field));
            if a != b {
                return Err(invalid(format!("must have the same {what}: {a} != {b}")));
            }
        }
        restore_object_meta(original, &mut out).map_err(|reason| ConversionError::Metadata {
            gvk: gvk.clone(),
            index: index + 1,
            reason,
        })?;
        objects[positions[index]] = out;
    }
    Ok(objects)
}

/// `getConvertedObjectsFromResponse`: the answer must be a ConversionReview of the version
/// sent with a `response` (v1: for this uid) whose `result.status` is `Success`.
fn converted_objects(
    answer: &Value,
    review_version: &str,
    uid: &str,
) -> Result<Vec<Value>, String> {
    if review_version == "v1" {
        let (api_version, kind) = (str_at(answer, "/apiVersion"), str_at(answer, "/kind"));
        if (api_version, kind) != ("apiextensions.k8s.io/v1", "ConversionReview") {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {group}/{version}, Kind={kind}"
            ));
        }
    }
    let response = answer
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("no response provided")?;
    let got_uid = str_at(response, "/uid");
    if review_version == "v1" && got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let status = str_at(response, "/result/status");
    if status != "Success" {
        let message = str_at(response, "/result/message");
        return Err(if message.is_empty() {
            format!("response.result.status was '{status}', not 'Success'")
        } else {
            message.to_owned()
        });
    }
    Ok(response
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// `restoreObjectMeta`: the converted object keeps the original's metadata, with the
/// labels and annotations the webhook returned (string values only).
fn restore_object_meta(original: &Value, converted: &mut Value) -> Result<(), String> {
    let returned = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".to_owned()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ));
        }
    };
    let mut meta = match original.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    for field in ["labels", "annotations"] {
        match returned.get(field) {
            None | Some(Value::Null) => {
                meta.remove(field);
            }
            Some(Value::Object(values)) => {
                if let Some((k, v)) = values.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(
                        "metadata.{field}[{k}] must be a string, but is {} in converted object",
                        go_type(v)
                    ));
                }
                meta.insert(field.to_owned(), Value::Object(values.clone()));
            }
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ));
            }
        }
    }
    if let Some(obj) = converted.as_object_mut() {
        obj.insert("metadata".to_owned(), Value::Object(meta));
    }
    Ok(())
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// webhook_converter.go `getConvertedObjectsFromResponse`: the v1 answer's kind, its
    /// `response`, uid and `result.status` are checked, with kube-apiserver's texts.
    #[test]
    fn answer_checks() {
        let ok = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Success"}, "convertedObjects": [{"a": 1}]}});
        assert_eq!(converted_objects(&ok, "v1", "u"), Ok(vec![json!({"a": 1})]));
        assert_eq!(
            converted_objects(&ok, "v1", "other"),
            Err("expected response.uid=\"other\", got \"u\"".to_owned())
        );
        let failed = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Failure", "message": "no way"}}});
        assert_eq!(
            converted_objects(&failed, "v1", "u"),
            Err("no way".to_owned())
        );
        let bare = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Failure"}}});
        assert_eq!(
            converted_objects(&bare, "v1", "u"),
            Err("response.result.status was 'Failure', not 'Success'".to_owned())
        );
        assert_eq!(
            converted_objects(&json!({"kind": "Nope"}), "v1", "u"),
            Err("expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind=Nope".to_owned())
        );
        assert_eq!(
            converted_objects(
                &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}),
                "v1",
                "u"
            ),
            Err("no response provided".to_owned())
        );
    }

    /// converter.go `restoreObjectMeta`: metadata is the original's, labels and
    /// annotations are the webhook's.
    #[test]
    fn metadata_restored_but_labels_taken() {
        let original = json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "5", "labels": {"x": "1"}}});
        let mut converted = json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "9",
            "labels": {"y": "2"}, "generation": 7}});
        restore_object_meta(&original, &mut converted).expect("valid");
        assert_eq!(
            converted["metadata"],
            json!({"name": "a", "uid": "u", "resourceVersion": "5", "labels": {"y": "2"}})
        );
        let mut bad = json!({"metadata": {"labels": {"y": 2}}});
        assert_eq!(
            restore_object_meta(&original, &mut bad),
            Err("metadata.labels[y] must be a string, but is int64 in converted object".to_owned())
        );
        assert_eq!(
            gvk_of(&json!({"apiVersion": "example.com/v2", "kind": "Foo"})),
            "example.com/v2, Kind=Foo"
        );
    }
}
