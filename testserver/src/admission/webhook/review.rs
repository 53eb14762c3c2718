//! The AdmissionReview a hook is sent, and the checks of its answer (kube-apiserver's
//! `request/admissionreview.go` `CreateAdmissionObjects` and `VerifyAdmissionResponse`).

use base64::Engine as _;
use serde_json::{Value, json};

/// What a hook answered, once checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Answer {
    /// `response.allowed`.
    pub(crate) allowed: bool,
    /// `response.status` (a `metav1.Status`), if any.
    pub(crate) status: Option<Value>,
    /// `response.patch`, decoded from base64 (a JSONPatch).
    pub(crate) patch: Option<Value>,
    /// `response.warnings`.
    pub(crate) warnings: Vec<String>,
    /// `response.auditAnnotations`.
    pub(crate) audit_annotations: Vec<(String, String)>,
}

/// The review around an AdmissionRequest.
pub(crate) fn review(request: Value) -> Value {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// Checks a hook's answer to the review of `uid` (the error's text is kube-apiserver's).
pub(crate) fn verify(uid: &str, mutating: bool, body: &Value) -> Result<Answer, String> {
    let api_version = body.get("apiVersion").and_then(Value::as_str);
    let kind = body.get("kind").and_then(Value::as_str);
    if api_version != Some("admission.k8s.io/v1") || kind != Some("AdmissionReview") {
        let group_version = api_version.unwrap_or_default();
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {group_version}, Kind={}",
            kind.unwrap_or_default()
        ));
    }
    let Some(response) = body.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".to_string());
    };
    let got = response
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let patch = response
        .get("patch")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    let patch_type = response
        .get("patchType")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    match (patch, patch_type) {
        (Some(_), None) => {
            return Err("webhook returned response.patch but not response.patchType".into());
        }
        (None, Some(_)) => {
            return Err("webhook returned response.patchType but not response.patch".into());
        }
        _ => {}
    }
    if !mutating && patch.is_some() {
        return Err("validating webhook may not return response.patch".into());
    }
    if let Some(pt) = patch_type
        && pt != "JSONPatch"
    {
        return Err(format!("expected patchType \"JSONPatch\", got {pt:?}"));
    }
    let patch = match patch {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|err| format!("received undecodable patch in webhook response: {err}"))?;
            Some(
                serde_json::from_slice::<Value>(&bytes).map_err(|err| {
                    format!("received undecodable patch in webhook response: {err}")
                })?,
            )
        }
        None => None,
    };
    Ok(Answer {
        allowed: response
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        warnings: response
            .get("warnings")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        audit_annotations: response
            .get("auditAnnotations")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_uid_and_patches() {
        // request/admissionreview.go VerifyAdmissionResponse
        let ok = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "a", "allowed": true, "warnings": ["w"]}});
        let answer = verify("a", false, &ok).expect("valid");
        assert!(answer.allowed);
        assert_eq!(answer.warnings, ["w"]);
        assert_eq!(
            verify("b", false, &ok).expect_err("wrong uid"),
            "expected response.uid=\"b\", got \"a\""
        );
        let patched = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "a", "allowed": true, "patchType": "JSONPatch",
                "patch": base64::engine::general_purpose::STANDARD.encode(b"[]")}});
        assert_eq!(
            verify("a", false, &patched).expect_err("validating patch"),
            "validating webhook may not return response.patch"
        );
        assert_eq!(
            verify("a", true, &patched).expect("mutating").patch,
            Some(json!([]))
        );
    }
}
