//! `get`: one object (kube-apiserver's `handlers/get.go` `GetResource`).

use super::super::{context::RequestContext, reply::Reply, scope::Scope};
use crate::errors::ApiResult;

/// Reads the addressed object and encodes it.
pub(crate) fn get(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    cx.trail.enter("registry")?;
    let obj = scope.engine().get(&scope.target)?;
    cx.trail.enter("encode")?;
    scope.encode(200, &obj)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::send;
    use crate::InProcess;

    #[tokio::test]
    async fn gets_an_object_or_404() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        assert_eq!(send(&server, "POST", cms, Some(cm)).await.0, 201);
        let (code, body) = send(&server, "GET", &format!("{cms}/a"), None).await;
        assert_eq!((code, body["metadata"]["name"].as_str()), (200, Some("a")));
        let (code, body) = send(&server, "GET", &format!("{cms}/b"), None).await;
        assert_eq!((code, body["reason"].as_str()), (404, Some("NotFound")));
    }
}
