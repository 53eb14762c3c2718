//! Every `ResourceClient` verb against the in-memory API server over HTTP.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;

use futures::StreamExt;
use k8s_openapi::api::{
    apps::v1::{Deployment, DeploymentSpec, DeploymentStatus},
    core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec},
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube_core::{
    ObjectMeta, WatchEvent,
    params::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
};
use kubegen::client::{DeleteResponse, ResourceClient};
use kubegen_testserver::TestServer;
use serde_json::json;

fn deployment(name: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".into(),
                        image: Some("nginx:1".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

#[tokio::test]
async fn typed_verbs_round_trip_through_the_test_server() {
    // An API server alone: this test writes the Deployment's status itself, which the
    // cluster's Deployment controller would overwrite.
    let server = TestServer::builder()
        .cluster(kubegen_testserver::ClusterConfig::none())
        .start()
        .await
        .unwrap();
    let api: ResourceClient<Deployment> =
        ResourceClient::namespaced(server.client().unwrap(), "default");

    let created = api
        .create(&PostParams::default(), &deployment("web"))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert!(
        api.create(&PostParams::default(), &deployment("web"))
            .await
            .unwrap_err()
            .is_already_exists()
    );
    assert!(api.get("nope").await.unwrap_err().is_not_found());

    // update with a stale resourceVersion conflicts; with the current one it succeeds
    let mut stale = created.clone();
    let mut fresh = api.get("web").await.unwrap();
    fresh.spec.replicas = Some(2);
    let updated = api.update(&PostParams::default(), &fresh).await.unwrap();
    stale.spec.replicas = Some(5);
    assert!(
        api.update(&PostParams::default(), &stale)
            .await
            .unwrap_err()
            .is_conflict()
    );

    // status subresource
    let mut with_status = updated.clone();
    with_status.status = Some(DeploymentStatus {
        available_replicas: Some(2),
        ..DeploymentStatus::default()
    });
    let after_status = api
        .update_status(&PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(after_status.status.unwrap().available_replicas, Some(2));
    let patched = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"readyReplicas": 2}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.status.unwrap().ready_replicas, Some(2));

    // patches of every kind
    let merged = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"m": "1"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        merged.metadata.labels.unwrap().get("m").map(String::as_str),
        Some("1")
    );
    let json_patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]))
            .unwrap();
    let jp = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::<()>::Json(json_patch),
        )
        .await
        .unwrap();
    assert_eq!(jp.spec.replicas, Some(3));
    let strategic = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}})),
        )
        .await
        .unwrap();
    let containers = strategic.spec.template.spec.unwrap().containers;
    assert_eq!(
        containers
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        vec!["web", "sidecar"],
        "merged by name"
    );

    // server-side apply creates, then merges, recording the manager
    let cms: ResourceClient<ConfigMap> =
        ResourceClient::namespaced(server.client().unwrap(), "default");
    let mut desired = ConfigMap {
        metadata: ObjectMeta {
            name: Some("applied".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("a".to_owned(), "1".to_owned())])),
        ..ConfigMap::default()
    };
    let applied = cms.apply(&desired, "kubegen-test", true).await.unwrap();
    assert!(
        applied
            .metadata
            .managed_fields
            .unwrap()
            .iter()
            .any(|m| m.manager.as_deref() == Some("kubegen-test"))
    );
    desired
        .data
        .as_mut()
        .unwrap()
        .insert("b".into(), "2".into());
    let reapplied = cms.apply(&desired, "kubegen-test", true).await.unwrap();
    assert_eq!(reapplied.data.unwrap().len(), 2);

    // list, list_all with pages, watch from a version
    for i in 0..7 {
        cms.create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta {
                    name: Some(format!("page-{i}")),
                    labels: Some(BTreeMap::from([("page".to_owned(), "yes".to_owned())])),
                    ..ObjectMeta::default()
                },
                ..ConfigMap::default()
            },
        )
        .await
        .unwrap();
    }
    let paged = ListParams {
        limit: Some(3),
        label_selector: Some("page=yes".into()),
        ..ListParams::default()
    };
    let first = cms.list(&paged).await.unwrap();
    assert_eq!(first.items.len(), 3);
    assert!(first.metadata.continue_.is_some());
    assert_eq!(cms.list_all(&paged).await.unwrap().items.len(), 7);

    let rv = first.metadata.resource_version.clone().unwrap();
    let mut watch = cms
        .watch(&WatchParams::default().labels("page=yes").timeout(5), &rv)
        .await
        .unwrap();
    cms.delete("page-0", &DeleteParams::default())
        .await
        .unwrap();
    let event = watch.next().await.unwrap().unwrap();
    assert!(
        matches!(event, WatchEvent::Deleted(ref c) if c.metadata.name.as_deref() == Some("page-0")),
        "{event:?}"
    );

    // delete_collection by selector, then delete with a finalizer returns the object
    let gone = cms
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("page=yes"),
        )
        .await
        .unwrap();
    assert!(
        matches!(gone, DeleteResponse::Object(ref l) if l.items.len() == 6)
            || matches!(gone, DeleteResponse::Status(_))
    );
    assert!(
        cms.list(&ListParams::default().labels("page=yes"))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let mut held = api.get("web").await.unwrap();
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.update(&PostParams::default(), &held).await.unwrap();
    match api.delete("web", &DeleteParams::default()).await.unwrap() {
        DeleteResponse::Object(d) => assert!(d.metadata.deletion_timestamp.is_some()),
        DeleteResponse::Status(s) => panic!("expected the object while finalizers run, got {s:?}"),
    }
}
