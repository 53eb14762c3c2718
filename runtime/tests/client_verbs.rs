//! The typed and dynamic verbs against a scripted local HTTP server, through the HTTP
//! transport: what goes on the wire, and how answers are decoded.
#![allow(clippy::unwrap_used)] // test helpers may unwrap, like the tests

mod client_support;

use client_support::*;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube_core::{
    DynamicObject, WatchEvent,
    discovery::{ApiResource, Scope},
    gvk::GroupVersionKind,
    params::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
};
use kubegen::client::{
    Client, Config, DEFAULT_RETRY, DeleteResponse, Discovery, DynamicClient, ResourceClient,
    retry_on_conflict,
};
use serde_json::json;

async fn setup(replies: Vec<Reply>) -> (Fixture, Client) {
    let fx = Fixture::start(Script::new(replies)).await;
    let client = Client::try_from_config(Config::new(fx.url()).with_rate_limit(-1.0, 0)).unwrap();
    (fx, client)
}

#[tokio::test]
async fn create_adds_api_version_and_kind_missing_from_the_serialized_object() {
    let (fx, client) = setup(vec![Reply::json(201, foo_json("a", "5", 3))]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let created = foos
        .create(&PostParams::default(), &foo("a", 3))
        .await
        .unwrap();
    assert_eq!(created.metadata.resource_version.as_deref(), Some("5"));

    let req = &fx.script.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(
        req.path(),
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns1/foos"
    );
    assert_eq!(
        req.header("content-type").as_deref(),
        Some("application/json")
    );
    let body = req.json();
    assert_eq!(body["apiVersion"], "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(body["kind"], "Foo");
    assert_eq!(body["spec"]["replicas"], 3);
}

#[tokio::test]
async fn get_of_a_missing_object_is_a_typed_not_found() {
    let (fx, client) = setup(vec![Reply::status(404, "NotFound")]).await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let err = cms.get("nope").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(!err.is_conflict());
    assert_eq!(err.status().unwrap().message, "NotFound happened");
    assert_eq!(
        fx.script.requests()[0].path(),
        "/api/v1/namespaces/default/configmaps/nope"
    );
}

#[tokio::test]
async fn get_with_resource_version_sends_it() {
    let (fx, client) = setup(vec![Reply::json(200, foo_json("a", "9", 1))]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    foos.get_with("a", &GetParams::any()).await.unwrap();
    assert_eq!(
        fx.script.requests()[0].query(),
        vec![("resourceVersion".to_string(), "0".to_string())]
    );
}

#[tokio::test]
async fn cluster_scoped_and_all_namespaces_paths() {
    let (fx, client) = setup(vec![
        Reply::json(
            200,
            json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}),
        ),
        Reply::json(
            200,
            json!({"apiVersion":"v1","kind":"ConfigMapList","metadata":{},"items":[]}),
        ),
    ])
    .await;
    let nss: ResourceClient<Namespace> = ResourceClient::cluster(client.clone());
    nss.get("x").await.unwrap();
    let cms: ResourceClient<ConfigMap> = ResourceClient::all(client);
    assert!(
        cms.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let reqs = fx.script.requests();
    assert_eq!(reqs[0].path(), "/api/v1/namespaces/x");
    assert_eq!(reqs[1].path(), "/api/v1/configmaps");
}

#[tokio::test]
async fn list_sends_selectors_and_limit() {
    let (fx, client) = setup(vec![Reply::json(200, foo_list(&["a"], "10", Some("tok")))]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let page = foos
        .list(
            &ListParams::default()
                .labels("app=x")
                .fields("metadata.name=a")
                .limit(1),
        )
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.metadata.continue_.as_deref(), Some("tok"));
    let q = fx.script.requests()[0].query();
    assert!(
        q.contains(&("labelSelector".into(), "app=x".into())),
        "{q:?}"
    );
    assert!(q.contains(&("fieldSelector".into(), "metadata.name=a".into())));
    assert!(q.contains(&("limit".into(), "1".into())));
}

#[tokio::test]
async fn list_all_follows_continue_tokens() {
    let (fx, client) = setup(vec![
        Reply::json(200, foo_list(&["a", "b"], "10", Some("c1"))),
        Reply::json(200, foo_list(&["c", "d"], "10", Some("c2"))),
        Reply::json(200, foo_list(&["e"], "10", None)),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let all = foos
        .list_all(&ListParams::default().limit(2))
        .await
        .unwrap();
    let names: Vec<_> = all
        .items
        .iter()
        .map(|f| f.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    assert_eq!(all.metadata.resource_version.as_deref(), Some("10"));
    assert!(all.metadata.continue_.is_none());
    let conts: Vec<Option<String>> = fx
        .script
        .requests()
        .iter()
        .map(|r| {
            r.query()
                .into_iter()
                .find(|(k, _)| k == "continue")
                .map(|(_, v)| v)
        })
        .collect();
    assert_eq!(conts, [None, Some("c1".into()), Some("c2".into())]);
}

#[tokio::test]
async fn list_all_restarts_when_the_continue_token_expires() {
    let (fx, client) = setup(vec![
        Reply::json(200, foo_list(&["a"], "10", Some("c1"))),
        Reply::status(410, "Expired"),
        Reply::json(200, foo_list(&["a"], "20", Some("c9"))),
        Reply::json(200, foo_list(&["b"], "20", None)),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let all = foos
        .list_all(&ListParams::default().limit(1))
        .await
        .unwrap();
    let names: Vec<_> = all
        .items
        .iter()
        .map(|f| f.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        ["a", "b"],
        "items from before the restart are dropped"
    );
    assert_eq!(all.metadata.resource_version.as_deref(), Some("20"));
    let reqs = fx.script.requests();
    assert_eq!(reqs.len(), 4);
    assert!(
        !reqs[2].query().iter().any(|(k, _)| k == "continue"),
        "restart from the top"
    );
}

#[tokio::test]
async fn update_conflict_is_retried_with_a_fresh_get() {
    let (fx, client) = setup(vec![
        Reply::json(200, foo_json("a", "1", 1)),
        Reply::status(409, "Conflict"),
        Reply::json(200, foo_json("a", "2", 1)),
        Reply::json(200, foo_json("a", "3", 5)),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let updated = retry_on_conflict(DEFAULT_RETRY, || async {
        let mut f = foos.get("a").await?;
        f.spec.replicas = 5;
        foos.update(&PostParams::default(), &f).await
    })
    .await
    .unwrap();
    assert_eq!(updated.spec.replicas, 5);
    let reqs = fx.script.requests();
    let methods: Vec<_> = reqs.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "PUT", "GET", "PUT"]);
    assert_eq!(reqs[3].json()["metadata"]["resourceVersion"], "2");
    assert_eq!(reqs[3].json()["kind"], "Foo");
}

#[tokio::test]
async fn update_status_and_patch_status_target_the_status_subresource() {
    let (fx, client) = setup(vec![
        Reply::json(200, foo_json("a", "2", 1)),
        Reply::json(200, foo_json("a", "3", 1)),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let mut f = foo("a", 1);
    f.status = Some(FooStatus { ready: 1 });
    foos.update_status(&PostParams::default(), &f)
        .await
        .unwrap();
    foos.patch_status(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"status":{"ready":2}})),
    )
    .await
    .unwrap();
    let reqs = fx.script.requests();
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path().as_str()),
        (
            "PUT",
            "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns1/foos/a/status"
        )
    );
    assert_eq!(reqs[0].json()["status"]["ready"], 1);
    assert_eq!(
        (reqs[1].method.as_str(), reqs[1].path().as_str()),
        (
            "PATCH",
            "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns1/foos/a/status"
        )
    );
}

#[tokio::test]
async fn patch_kinds_set_their_content_types() {
    let replies = (0..4)
        .map(|_| Reply::json(200, foo_json("a", "2", 1)))
        .collect();
    let (fx, client) = setup(replies).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let pp = PatchParams::default();
    foos.patch("a", &pp, &Patch::Merge(json!({"spec":{"replicas":2}})))
        .await
        .unwrap();
    foos.patch("a", &pp, &Patch::Strategic(json!({"spec":{"replicas":2}})))
        .await
        .unwrap();
    let jp: json_patch::Patch =
        serde_json::from_value(json!([{"op":"replace","path":"/spec/replicas","value":2}]))
            .unwrap();
    foos.patch("a", &pp, &Patch::<()>::Json(jp)).await.unwrap();
    foos.patch(
        "a",
        &PatchParams::apply("mgr").force(),
        &Patch::Apply(json!({"spec":{"replicas":2}})),
    )
    .await
    .unwrap();
    let reqs = fx.script.requests();
    let cts: Vec<_> = reqs
        .iter()
        .map(|r| r.header("content-type").unwrap())
        .collect();
    assert_eq!(
        cts,
        [
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/json-patch+json",
            "application/apply-patch+yaml",
        ]
    );
    assert!(reqs[2].json().is_array());
    // the apply body gets apiVersion and kind, and the query carries the manager and force
    assert_eq!(reqs[3].json()["kind"], "Foo");
    let q = reqs[3].query();
    assert!(q.contains(&("fieldManager".into(), "mgr".into())), "{q:?}");
    assert!(q.contains(&("force".into(), "true".into())));
    // a merge patch is sent as given
    assert!(reqs[0].json().get("kind").is_none());
}

#[tokio::test]
async fn apply_and_apply_status_send_the_object_as_an_apply_patch() {
    let (fx, client) = setup(vec![
        Reply::json(200, foo_json("a", "2", 4)),
        Reply::json(200, foo_json("a", "3", 4)),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let applied = foos.apply(&foo("a", 4), "ctrl", false).await.unwrap();
    assert_eq!(applied.spec.replicas, 4);
    foos.apply_status(&foo("a", 4), "ctrl", true).await.unwrap();
    let reqs = fx.script.requests();
    assert_eq!(reqs[0].method, "PATCH");
    assert_eq!(
        reqs[0].json()["apiVersion"],
        "samplecontroller.k8s.io/v1alpha1"
    );
    assert!(
        reqs[0]
            .query()
            .contains(&("fieldManager".into(), "ctrl".into()))
    );
    assert!(!reqs[0].query().iter().any(|(k, _)| k == "force"));
    assert!(reqs[1].path().ends_with("/foos/a/status"));
    assert!(reqs[1].query().contains(&("force".into(), "true".into())));
}

#[tokio::test]
async fn update_without_a_name_is_rejected_before_sending() {
    let (fx, client) = setup(vec![]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let err = foos
        .update(&PostParams::default(), &Foo::default())
        .await
        .unwrap_err();
    assert!(matches!(err, kubegen::client::Error::Request(_)), "{err}");
    assert!(fx.script.requests().is_empty());
}

#[tokio::test]
async fn delete_returns_the_object_while_finalizers_run_or_a_status() {
    let mut pending = foo_json("a", "7", 1);
    pending["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z".into();
    pending["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
    let (fx, client) = setup(vec![
        Reply::json(200, pending),
        Reply::json(
            200,
            json!({"kind":"Status","apiVersion":"v1","status":"Success","details":{"name":"b"}}),
        ),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    match foos.delete("a", &DeleteParams::foreground()).await.unwrap() {
        DeleteResponse::Object(f) => assert!(f.metadata.deletion_timestamp.is_some()),
        DeleteResponse::Status(s) => panic!("unexpected {s:?}"),
    }
    let r = foos.delete("b", &DeleteParams::default()).await.unwrap();
    assert!(r.status().unwrap().is_success());
    let reqs = fx.script.requests();
    assert_eq!(reqs[0].method, "DELETE");
    assert_eq!(reqs[0].json()["propagationPolicy"], "Foreground");
}

#[tokio::test]
async fn delete_collection_sends_selectors_and_returns_the_list() {
    let (fx, client) = setup(vec![Reply::json(200, foo_list(&["a", "b"], "8", None))]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let r = foos
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("app=x"),
        )
        .await
        .unwrap();
    assert_eq!(r.object().unwrap().items.len(), 2);
    let req = &fx.script.requests()[0];
    assert_eq!(req.method, "DELETE");
    assert_eq!(
        req.path(),
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns1/foos"
    );
    assert!(
        req.query()
            .contains(&("labelSelector".into(), "app=x".into()))
    );
}

fn watch_line(ty: &str, name: &str, rv: &str) -> Vec<u8> {
    let mut v = serde_json::to_vec(&json!({"type": ty, "object": foo_json(name, rv, 1)})).unwrap();
    v.push(b'\n');
    v
}

#[tokio::test]
async fn watch_decodes_events_split_across_chunks_and_carries_error_status() {
    let mut body = Vec::new();
    body.extend(watch_line("ADDED", "a", "11"));
    body.extend(watch_line("MODIFIED", "a", "12"));
    body.extend(b"{garbage\n");
    body.extend(br#"{"type":"BOOKMARK","object":{"kind":"Foo","apiVersion":"samplecontroller.k8s.io/v1alpha1","metadata":{"resourceVersion":"13"}}}"#);
    body.push(b'\n');
    body.extend(watch_line("DELETED", "a", "14"));
    body.extend(br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old","reason":"Expired","code":410}}"#);
    body.push(b'\n');
    // awkward chunking: 7-byte pieces, so every event straddles chunks
    let chunks: Vec<Vec<u8>> = body.chunks(7).map(<[u8]>::to_vec).collect();
    let (fx, client) = setup(vec![Reply::chunked(200, chunks)]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let events: Vec<_> = foos
        .watch(&WatchParams::default().timeout(30), "10")
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.len(), 6);
    assert!(
        matches!(&events[0], Ok(WatchEvent::Added(f)) if f.metadata.resource_version.as_deref() == Some("11"))
    );
    assert!(matches!(&events[1], Ok(WatchEvent::Modified(_))));
    assert!(matches!(&events[2], Err(kubegen::client::Error::Decode(_))));
    assert!(
        matches!(&events[3], Ok(WatchEvent::Bookmark(b)) if b.metadata.resource_version == "13")
    );
    assert!(matches!(&events[4], Ok(WatchEvent::Deleted(_))));
    match &events[5] {
        Ok(WatchEvent::Error(s)) => assert_eq!((s.code, s.reason.as_str()), (410, "Expired")),
        other => panic!("unexpected {other:?}"),
    }
    let q = fx.script.requests()[0].query();
    assert!(q.contains(&("watch".into(), "true".into())), "{q:?}");
    assert!(q.contains(&("resourceVersion".into(), "10".into())));
    assert!(q.contains(&("allowWatchBookmarks".into(), "true".into())));
}

#[tokio::test]
async fn watch_refused_by_the_server_is_an_api_error() {
    let (_fx, client) = setup(vec![Reply::status(403, "Forbidden")]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let err = foos
        .watch(&WatchParams::default(), "0")
        .await
        .err()
        .unwrap();
    assert!(err.is_forbidden());
}

#[tokio::test]
async fn metadata_list_and_watch_ask_for_partial_object_metadata() {
    let meta_list = json!({"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadataList",
        "metadata":{"resourceVersion":"5"},
        "items":[{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":{"name":"a","labels":{"x":"y"}}}]});
    let meta_event = format!(
        "{}\n",
        json!({"type":"ADDED","object":{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":{"name":"b"}}})
    );
    let (fx, client) = setup(vec![
        Reply::json(200, meta_list),
        Reply::chunked(200, vec![meta_event.into_bytes()]),
    ])
    .await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    let list = foos.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("a"));
    let evs: Vec<_> = foos
        .watch_metadata(&WatchParams::default(), "5")
        .await
        .unwrap()
        .collect()
        .await;
    assert!(matches!(&evs[0], Ok(WatchEvent::Added(m)) if m.metadata.name.as_deref() == Some("b")));
    let reqs = fx.script.requests();
    assert!(
        reqs[0]
            .header("accept")
            .unwrap()
            .contains("as=PartialObjectMetadataList")
    );
    assert!(
        reqs[1]
            .header("accept")
            .unwrap()
            .contains("as=PartialObjectMetadata")
    );
}

#[tokio::test]
async fn gzip_responses_are_decompressed() {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&serde_json::to_vec(&foo_json("z", "3", 9)).unwrap())
        .unwrap();
    let gz = enc.finish().unwrap();
    let reply = Reply::chunked(200, vec![gz]).header("content-encoding", "gzip");
    let (fx, client) = setup(vec![reply]).await;
    let foos: ResourceClient<Foo> = ResourceClient::namespaced(client, "ns1");
    assert_eq!(foos.get("z").await.unwrap().spec.replicas, 9);
    assert!(
        fx.script.requests()[0]
            .header("accept-encoding")
            .unwrap()
            .contains("gzip")
    );
}

#[tokio::test]
async fn dynamic_client_runs_the_same_verbs() {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("samplecontroller.k8s.io", "v1alpha1", "Foo"),
        "foos",
    );
    let (fx, client) = setup(vec![
        Reply::json(201, foo_json("d", "1", 2)),
        Reply::json(200, foo_list(&["d"], "1", None)),
        Reply::json(
            200,
            json!({"kind":"Status","apiVersion":"v1","status":"Success"}),
        ),
    ])
    .await;
    let dc = DynamicClient::namespaced(client, &ar, "ns1");
    let obj = DynamicObject::new("d", &ar).data(json!({"spec": {"replicas": 2}}));
    let mut untyped = obj.clone();
    untyped.types = None;
    let created = dc.create(&PostParams::default(), &untyped).await.unwrap();
    assert_eq!(created.data["spec"]["replicas"], 2);
    assert_eq!(
        dc.list_all(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert!(
        dc.delete("d", &DeleteParams::default())
            .await
            .unwrap()
            .status()
            .is_some()
    );
    let reqs = fx.script.requests();
    assert_eq!(reqs[0].json()["kind"], "Foo");
    assert_eq!(
        reqs[0].path(),
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns1/foos"
    );
}

fn discovery_replies() -> Vec<Reply> {
    vec![
        Reply::json(
            200,
            json!({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}),
        ),
        Reply::json(
            200,
            json!({"kind":"APIGroupList","apiVersion":"v1","groups":[
            {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],
             "preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
            {"name":"samplecontroller.k8s.io","versions":[
                {"groupVersion":"samplecontroller.k8s.io/v1","version":"v1"},
                {"groupVersion":"samplecontroller.k8s.io/v1alpha1","version":"v1alpha1"}],
             "preferredVersion":{"groupVersion":"samplecontroller.k8s.io/v1","version":"v1"}}]}),
        ),
    ]
}

#[tokio::test]
async fn discovery_reports_version_groups_and_preferred_versions() {
    let mut replies = vec![Reply::json(
        200,
        json!({"major":"1","minor":"31","gitVersion":"v1.31.0",
        "gitCommit":"abc","gitTreeState":"clean","buildDate":"2024-01-01T00:00:00Z",
        "goVersion":"go1.22","compiler":"gc","platform":"linux/amd64"}),
    )];
    replies.extend(discovery_replies());
    replies.extend(discovery_replies());
    let (fx, client) = setup(replies).await;
    let d = Discovery::new(client);
    assert_eq!(d.server_version().await.unwrap().git_version, "v1.31.0");
    let groups = d.groups().await.unwrap();
    let names: Vec<_> = groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["", "apps", "samplecontroller.k8s.io"]);
    assert_eq!(
        d.preferred_version("samplecontroller.k8s.io")
            .await
            .unwrap(),
        "v1"
    );
    let paths: Vec<_> = fx.script.requests().iter().map(Recorded::path).collect();
    assert_eq!(paths, ["/version", "/api", "/apis", "/api", "/apis"]);
}

#[tokio::test]
async fn discovery_maps_a_gvk_to_its_resource_and_scope() {
    let resources = json!({"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
        {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get","list"]},
        {"name":"deployments/status","singularName":"","namespaced":true,"kind":"Deployment","verbs":["get"]},
        {"name":"controllerrevisions","singularName":"","namespaced":true,"kind":"ControllerRevision","verbs":["get"]}]});
    let core = json!({"kind":"APIResourceList","groupVersion":"v1","resources":[
        {"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get"]}]});
    let (fx, client) = setup(vec![
        Reply::json(200, resources),
        Reply::json(200, core),
        Reply::status(404, "NotFound"),
    ])
    .await;
    let d = Discovery::new(client.clone());
    let (ar, scope) = d
        .resolve_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment"))
        .await
        .unwrap();
    assert_eq!(
        (ar.plural.as_str(), ar.api_version.as_str(), scope),
        ("deployments", "apps/v1", Scope::Namespaced)
    );
    let (ar, scope) = d
        .resolve_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"))
        .await
        .unwrap();
    assert_eq!(
        (ar.plural.as_str(), ar.api_version.as_str(), scope),
        ("namespaces", "v1", Scope::Cluster)
    );
    let err = d
        .resolve_gvk(&GroupVersionKind::gvk("nope.io", "v1", "Thing"))
        .await
        .unwrap_err();
    assert!(matches!(err, kubegen::client::Error::Discovery(_)), "{err}");
    let paths: Vec<_> = fx.script.requests().iter().map(Recorded::path).collect();
    assert_eq!(paths, ["/apis/apps/v1", "/api/v1", "/apis/nope.io/v1"]);
}
