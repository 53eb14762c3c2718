//! `update`: a replacement of one object or its subresource (kube-apiserver's
//! `handlers/update.go`).

use super::{
    super::{
        context::RequestContext,
        decode, options,
        reply::{self, Reply},
        scope::Scope,
    },
    admit, escalation_guard,
};
use crate::errors::ApiResult;

/// Decodes the body, admits it, replaces the object and encodes the stored one.
pub(crate) async fn update(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    if scope.target.name.is_none() {
        return Err(Scope::method_not_allowed());
    }
    let builtin = scope.rt.builtin || scope.target.subresource.as_deref() == Some("scale");
    let mut opts = options::write(
        scope.engine(),
        &scope.query,
        "UpdateOptions",
        &cx.parts.headers,
        false,
    )?;
    cx.trail.enter("decode")?;
    let mut value = decode::object(&cx.parts.headers, &cx.body, builtin, &mut opts)?;
    admit(scope, cx, opts.dry_run, Some(&mut value))?;
    opts.guard = escalation_guard(scope, cx, Some(&value))?;
    cx.trail.enter("registry")?;
    let obj = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::update(scope, cx, value, &opts).await?
    } else {
        scope.engine().update(&scope.target, value, &opts)?
    };
    cx.trail.enter("encode")?;
    Ok(reply::with_warnings(
        scope.encode(200, &obj)?,
        &opts.fields.warnings,
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::send;
    use crate::InProcess;

    #[tokio::test]
    async fn updates_with_optimistic_concurrency() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let (_, created) = send(&server, "POST", cms, Some(cm)).await;
        let mut changed = created.clone();
        changed["data"] = json!({"k": "v"});
        let (code, body) = send(&server, "PUT", &format!("{cms}/a"), Some(changed.clone())).await;
        assert_eq!((code, body["data"]["k"].as_str()), (200, Some("v")));
        // the same resourceVersion again is stale
        assert_eq!(
            send(&server, "PUT", &format!("{cms}/a"), Some(changed))
                .await
                .0,
            409
        );
        assert_eq!(send(&server, "PUT", cms, Some(created)).await.0, 405);
    }
}
