//! kube-rs (kube-client's `Api`, kube-runtime's `watcher`) as an independent client
//! against the test server.

#![allow(clippy::unwrap_used)]

use std::{collections::BTreeMap, time::Duration};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use kubegen_testserver::TestServer;

async fn client(server: &TestServer) -> Client {
    let config = Config::new(server.url().parse().unwrap());
    Client::try_from(config).unwrap()
}

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".into(), "kube".into())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".into(), "v".into())])),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn kube_api_crud_and_typed_errors() {
    let server = TestServer::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client(&server).await, "default");
    let created = api.create(&PostParams::default(), &cm("a")).await.unwrap();
    assert!(created.metadata.uid.is_some());
    let err = api
        .create(&PostParams::default(), &cm("a"))
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists")),
        other => panic!("unexpected {other:?}"),
    }
    let mut stale = created.clone();
    let mut fresh = created.clone();
    fresh.data = Some(BTreeMap::from([("k".into(), "1".into())]));
    api.replace("a", &PostParams::default(), &fresh)
        .await
        .unwrap();
    stale.data = Some(BTreeMap::from([("k".into(), "2".into())]));
    match api
        .replace("a", &PostParams::default(), &stale)
        .await
        .unwrap_err()
    {
        kube::Error::Api(s) => assert_eq!(s.code, 409),
        other => panic!("unexpected {other:?}"),
    }
    let applied = api
        .patch(
            "b",
            &PatchParams::apply("kube-test"),
            &Patch::Apply(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, "data": {"x": "1"}
            })),
        )
        .await
        .unwrap();
    assert_eq!(applied.data.unwrap()["x"], "1");
    let list = api
        .list(&ListParams::default().labels("app=kube"))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    let page = api.list(&ListParams::default().limit(1)).await.unwrap();
    assert!(page.metadata.continue_.is_some());
    api.delete("a", &DeleteParams::default()).await.unwrap();
    match api.get("a").await.unwrap_err() {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (404, "NotFound")),
        other => panic!("unexpected {other:?}"),
    }
    let deploys: Api<Deployment> = Api::namespaced(client(&server).await, "default");
    assert!(
        deploys
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

async fn watcher_sees_changes(config: watcher::Config) {
    let server = TestServer::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client(&server).await, "default");
    api.create(&PostParams::default(), &cm("before"))
        .await
        .unwrap();
    let mut events = watcher(api.clone(), config).applied_objects().boxed();
    let first = tokio::time::timeout(Duration::from_secs(10), events.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.metadata.name.as_deref(), Some("before"));
    api.create(&PostParams::default(), &cm("after"))
        .await
        .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(10), events.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(next.metadata.name.as_deref(), Some("after"));
}

#[tokio::test]
async fn kube_runtime_watcher_lists_then_watches() {
    watcher_sees_changes(watcher::Config::default()).await;
}

#[tokio::test]
async fn kube_runtime_watcher_with_streaming_lists() {
    watcher_sees_changes(watcher::Config::default().streaming_lists()).await;
}

#[tokio::test]
async fn kube_runtime_watcher_recovers_from_dropped_watches() {
    let server = TestServer::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client(&server).await, "default");
    let mut events = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    api.create(&PostParams::default(), &cm("one"))
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), events.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.metadata.name.as_deref(), Some("one"));
    server.drop_watches();
    server.compact();
    api.create(&PostParams::default(), &cm("two"))
        .await
        .unwrap();
    let mut seen = Vec::new();
    while !seen.contains(&"two".to_string()) {
        let obj = tokio::time::timeout(Duration::from_secs(20), events.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push(obj.metadata.name.unwrap());
    }
}

#[tokio::test]
async fn kube_client_over_tls_with_token_from_the_written_kubeconfig() {
    let server = TestServer::builder()
        .tls(true)
        .token("t0ken")
        .start()
        .await
        .unwrap();
    assert!(server.url().starts_with("https://"));
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
    let config =
        Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
            .await
            .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(Client::try_from(config).unwrap(), "default");
    api.create(&PostParams::default(), &cm("secure"))
        .await
        .unwrap();
    assert_eq!(
        api.get("secure").await.unwrap().metadata.name.as_deref(),
        Some("secure")
    );
    // without the token: 401 Unauthorized
    let mut anonymous = Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap(),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    anonymous.auth_info = kube::config::AuthInfo::default();
    let api: Api<ConfigMap> = Api::namespaced(Client::try_from(anonymous).unwrap(), "default");
    match api.get("secure").await.unwrap_err() {
        kube::Error::Api(s) => assert_eq!(s.code, 401),
        other => panic!("unexpected {other:?}"),
    }
}
