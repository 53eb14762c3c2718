//! `delete`: one object (kube-apiserver's `handlers/delete.go` `DeleteResource`).

use super::{
    super::{
        context::RequestContext,
        options,
        reply::{self, Reply},
        scope::Scope,
    },
    admit,
};
use crate::errors::ApiResult;

/// Deletes the object: a completed deletion answers with a `Success` Status unless the
/// resource's store returns the deleted object; one held by finalizers answers with the
/// object (registry/store.go `Delete`).
pub(crate) async fn delete(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    cx.trail.enter("decode")?;
    let opts = options::delete(&scope.query, &cx.parts.headers, &cx.body)?;
    admit(scope, cx, opts.dry_run, None)?;
    cx.trail.enter("registry")?;
    let obj = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::delete(scope, cx, &scope.target, &opts).await?
    } else {
        scope.engine().delete(&scope.target, &opts)?
    };
    cx.trail.enter("encode")?;
    if crate::meta::is_deleting(&obj) || scope.rt.strategy.returns_deleted_object() {
        scope.encode(200, &obj)
    } else {
        Ok(reply::json(200, &reply::deleted_status(&scope.rt, &obj)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::send;
    use crate::InProcess;

    #[tokio::test]
    async fn a_completed_delete_is_a_success_status_a_finalized_one_the_object() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        let plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let held = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "b", "finalizers": ["example.com/hold"]}});
        send(&server, "POST", cms, Some(plain)).await;
        send(&server, "POST", cms, Some(held)).await;
        let (code, status) = send(&server, "DELETE", &format!("{cms}/a"), None).await;
        assert_eq!(
            (code, status["kind"].as_str(), status["status"].as_str()),
            (200, Some("Status"), Some("Success"))
        );
        let (code, obj) = send(&server, "DELETE", &format!("{cms}/b"), None).await;
        assert_eq!((code, obj["kind"].as_str()), (200, Some("ConfigMap")));
        assert!(obj["metadata"]["deletionTimestamp"].is_string());
        assert_eq!(
            send(&server, "DELETE", &format!("{cms}/a"), None).await.0,
            404
        );
    }
}
