//! `watch`: a stream of changes (kube-apiserver's `handlers/watch.go`); a watch of a
//! name is a watch of the collection with a `metadata.name` field selector.

use super::super::{
    context::RequestContext,
    options, render,
    reply::{self, Reply},
    scope::Scope,
    watch::WatchStream,
};
use crate::errors::ApiResult;

/// Opens the watch and encodes its events as they come.
pub(crate) fn watch(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<Reply> {
    let stream = open(scope, cx)?;
    encode(scope, cx, stream)
}

/// The registry step: the stream of JSON event lines of the addressed collection (or
/// name), in `scope.rt`'s version.
pub(super) fn open(scope: &Scope<'_>, cx: &mut RequestContext) -> ApiResult<WatchStream> {
    let mut opts = options::watch(&scope.query)?;
    if let Some(name) = &scope.target.name {
        let by_name = format!("metadata.name={name}");
        opts.field_selector = Some(match opts.field_selector.take() {
            Some(f) if !f.is_empty() => format!("{f},{by_name}"),
            _ => by_name,
        });
    }
    let mut target = scope.target.clone();
    target.name = None;
    cx.trail.enter("registry")?;
    crate::endpoints::watch::watch(
        scope.engine(),
        &target,
        &opts,
        scope.shared.faults.watch_faults(),
        scope.shared.shutdown.child_token(),
    )
}

/// The encode step: the JSON event lines in the negotiated output, shaped for
/// `scope.rt`.
pub(super) fn encode(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    stream: WatchStream,
) -> ApiResult<Reply> {
    cx.trail.enter("encode")?;
    let (stream, content_type) = render::watch(
        scope.engine(),
        &scope.rt,
        scope.negotiated,
        scope.include,
        stream,
    );
    Ok(reply::stream(stream, content_type))
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use serde_json::{Value, json};

    use super::super::testing::send;
    use crate::InProcess;

    #[tokio::test]
    async fn a_watch_of_a_name_sees_only_that_object() {
        let server = InProcess::new();
        let cms = "/api/v1/namespaces/default/configmaps";
        let request = http::Request::builder()
            .uri(format!("{cms}/b?watch=true&timeoutSeconds=5"))
            .body(Vec::new())
            .expect("request");
        let reply = server.serve(request).await;
        assert_eq!(reply.status(), 200);
        let mut events = reply.into_body();
        for name in ["a", "b"] {
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
            assert_eq!(send(&server, "POST", cms, Some(cm)).await.0, 201);
        }
        let chunk = events.next().await.expect("an event").expect("bytes");
        let event: Value = serde_json::from_slice(&chunk).expect("one JSON event");
        assert_eq!(
            (
                event["type"].as_str(),
                event["object"]["metadata"]["name"].as_str()
            ),
            (Some("ADDED"), Some("b"))
        );
    }
}
