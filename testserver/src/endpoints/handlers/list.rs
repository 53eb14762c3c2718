//! `list`: a collection, paginated and filtered (kube-apiserver's `handlers/get.go`
//! `ListResource` without `watch`).

use super::super::{
    context::RequestContext,
    options, render,
    reply::{self, Reply},
    scope::Scope,
};
use crate::errors::ApiResult;

/// Lists the addressed collection and encodes the list.
pub(crate) fn list(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    let opts = options::list(&scope.query)?;
    cx.trail.enter("registry")?;
    let list = scope.engine().list(&scope.target, &opts)?;
    cx.trail.enter("encode")?;
    render::list(
        scope.engine(),
        &scope.rt,
        scope.negotiated,
        scope.include,
        &list,
    )
    .map(reply::rendered)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::send;
    use crate::InProcess;

    #[tokio::test]
    async fn lists_with_a_selector_and_a_limit() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        for (name, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"app": app}}});
            assert_eq!(send(&server, "POST", cms, Some(cm)).await.0, 201);
        }
        let (code, list) = send(
            &server,
            "GET",
            &format!("{cms}?labelSelector=app%3Dweb&limit=1"),
            None,
        )
        .await;
        assert_eq!(code, 200);
        assert_eq!(list["kind"], "ConfigMapList");
        assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
        assert!(list["metadata"]["continue"].is_string());
        let (code, _) = send(&server, "GET", &format!("{cms}?limit=-1"), None).await;
        assert_eq!(code, 400);
    }
}
