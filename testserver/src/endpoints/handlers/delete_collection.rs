//! `deletecollection`: every object of a collection a selector picks (kube-apiserver's
//! `handlers/delete.go` `DeleteCollection`); answers with the deleted objects' list.

use super::{
    super::{
        context::RequestContext,
        options, render,
        reply::{self, Reply},
        scope::Scope,
    },
    admit,
};
use crate::errors::ApiResult;

/// Deletes the selected objects and encodes their list.
pub(crate) async fn delete_collection(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
) -> ApiResult<Reply> {
    cx.trail.enter("decode")?;
    let opts = options::delete(&scope.query, &cx.parts.headers, &cx.body)?;
    let list_opts = options::list(&scope.query)?;
    admit(scope, cx, opts.dry_run, None)?;
    cx.trail.enter("registry")?;
    let list = if crate::admission::dynamic::configured(scope.engine()) {
        super::admitted::delete_collection(scope, cx, &list_opts, &opts).await?
    } else {
        scope
            .engine()
            .delete_collection(&scope.target, &list_opts, &opts)?
    };
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
    async fn deletes_what_the_selector_picks() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        for (name, app) in [("a", "web"), ("b", "db")] {
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"app": app}}});
            send(&server, "POST", cms, Some(cm)).await;
        }
        let (code, deleted) = send(
            &server,
            "DELETE",
            &format!("{cms}?labelSelector=app%3Dweb"),
            None,
        )
        .await;
        assert_eq!(code, 200);
        assert_eq!(deleted["items"][0]["metadata"]["name"], "a");
        assert_eq!(send(&server, "GET", &format!("{cms}/a"), None).await.0, 404);
        assert_eq!(send(&server, "GET", &format!("{cms}/b"), None).await.0, 200);
    }
}
