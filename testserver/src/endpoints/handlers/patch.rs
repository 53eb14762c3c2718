//! `patch`: a JSON, merge, strategic-merge or apply patch of one object or its
//! subresource (kube-apiserver's `handlers/patch.go`).

use std::sync::Arc;

use http::header;
use serde_json::Value;

use super::{
    super::{
        context::RequestContext,
        options,
        reply::{self, Reply},
        scope::Scope,
    },
    admit, escalation_guard,
};
use crate::{
    engine::{BodyOrigin, Engine, Target, WriteOptions},
    errors::{ApiError, ApiResult},
    patch::{PatchType, apply_json_or_merge},
    schema::{go_print, parse_with_duplicates},
};

/// Reads the patch type, admits the request, patches the object and encodes the result
/// (201 for an apply that created it).
pub(crate) async fn patch(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    if scope.target.name.is_none() {
        return Err(Scope::method_not_allowed());
    }
    let ct = cx
        .parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let patch_type = PatchType::from_content_type(ct)?;
    let apply = matches!(patch_type, PatchType::Apply);
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "PatchOptions",
        &cx.parts.headers,
        apply,
    )?;
    cx.trail.enter("decode")?;
    opts.fields.origin = match patch_type {
        PatchType::Merge | PatchType::Json => BodyOrigin::JsonPatch,
        PatchType::Strategic => BodyOrigin::StrategicPatch(
            serde_json::from_slice::<Value>(&cx.body)
                .map(|p| go_print(&p))
                .unwrap_or_default(),
        ),
        PatchType::Apply => BodyOrigin::Object,
    };
    // Duplicates of a merge, strategic or (JSON) apply patch are the object's: the
    // patch has the object's shape (`patch.go` decodes it strictly).
    if patch_type != PatchType::Json
        && let Ok((_, dups)) = parse_with_duplicates(&cx.body)
    {
        opts.fields.duplicates = dups;
    }
    // The patched object exists only inside the registry's update: the built-in plugins
    // see the request; the dynamic ones (webhooks, policies) see the patched object
    // (`admitted::patch`).
    admit(scope, cx, opts.dry_run, None)?;
    opts.guard = escalation_guard(scope, cx, None)?;
    cx.trail.enter("registry")?;
    let (code, obj) = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::patch(scope, cx, patch_type, &cx.body, &opts).await?
    } else {
        apply_patch(scope.engine(), &scope.target, patch_type, &cx.body, &opts)?
    };
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(code, &obj)?,
        &opts.fields.warnings,
    ))
}

/// Applies a PATCH of any type.
pub(super) fn apply_patch(
    engine: &Engine,
    target: &Target,
    patch_type: PatchType,
    body: &[u8],
    opts: &WriteOptions,
) -> ApiResult<(u16, Arc<Value>)> {
    let rt = &target.rt;
    match patch_type {
        PatchType::Apply => crate::apply::apply(engine, target, body, opts),
        PatchType::Strategic if !rt.builtin => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        )),
        _ => {
            let sub = target.subresource.clone();
            let rt2 = rt.clone();
            let obj = engine.replace_with(target, opts, move |old| {
                let base: Value = if sub.as_deref() == Some("scale") {
                    (*crate::scale::to_scale(&rt2, old)?).clone()
                } else {
                    old.clone()
                };
                let patched = apply_json_or_merge(&base, patch_type, body)?;
                if !patched.is_object() {
                    return Err(ApiError::bad_request("the patch produced a non-object"));
                }
                let name = crate::meta::name(&patched);
                if sub.is_none() && name != crate::meta::name(old) {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({name}) does not match the name on the URL ({})",
                        crate::meta::name(old)
                    )));
                }
                if sub.is_none() {
                    let causes = crate::meta::validate_labels(&patched);
                    if !causes.is_empty() {
                        return Err(ApiError::invalid(
                            &rt2.group,
                            &rt2.kind,
                            crate::meta::name(old),
                            causes,
                        ));
                    }
                }
                let rv = crate::meta::resource_version(&patched).to_string();
                let rv = if rv == crate::meta::resource_version(old) {
                    String::new()
                } else {
                    rv
                };
                Ok(Some((patched, rv)))
            })?;
            Ok((200, obj))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::InProcess;

    async fn patch(server: &InProcess, uri: &str, content_type: &str, body: &str) -> (u16, Value) {
        let request = http::Request::builder()
            .method("PATCH")
            .uri(uri)
            .header("content-type", content_type)
            .body(body.as_bytes().to_vec())
            .expect("request");
        let reply = server.serve(request).await;
        let code = reply.status().as_u16();
        let bytes = reply.into_body().collect().await.unwrap_or_default();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    #[tokio::test]
    async fn merge_json_and_apply_patches() {
        let server = InProcess::new();
        let cm = "/api/v1/namespaces/default/configmaps/a";
        let (code, created) = patch(
            &server,
            &format!("{cm}?fieldManager=test"),
            "application/apply-patch+yaml",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"1"}}"#,
        )
        .await;
        assert_eq!((code, created["data"]["k"].as_str()), (201, Some("1")));
        let (code, merged) = patch(
            &server,
            cm,
            "application/merge-patch+json",
            r#"{"data":{"m":"2"}}"#,
        )
        .await;
        assert_eq!((code, merged["data"]["m"].as_str()), (200, Some("2")));
        let (code, jsoned) = patch(
            &server,
            cm,
            "application/json-patch+json",
            r#"[{"op":"remove","path":"/data/k"}]"#,
        )
        .await;
        assert_eq!((code, jsoned["data"].get("k")), (200, None));
        let (code, _) = patch(&server, cm, "text/plain", "{}").await;
        assert_eq!(code, 415);
    }
}
