//! `patch`: a JSON, merge, strategic-merge or apply patch of one object or its
//! subresource (kube-apiserver's `handlers/patch.go`).

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
    engine::BodyOrigin,
    errors::ApiResult,
    patch::PatchType,
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
    if let Some(json) = crate::patch::apply_cbor_as_json(ct, &cx.body)? {
        cx.body = json;
    }
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
        let body = cx.body.clone();
        super::admitted::patch(scope, cx, patch_type, &body, &opts).await?
    } else {
        super::patching::apply_patch(scope.engine(), &scope.target, patch_type, &cx.body, &opts)?
    };
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(code, &obj)?,
        &opts.fields.warnings,
    ))
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
