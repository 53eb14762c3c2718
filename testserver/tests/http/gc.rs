use serde_json::{Value, json};

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn owner_and_dependents(api: &Api) -> Value {
    let (_, owner) = api.post(DEPLOYS, &deployment("owner")).await;
    for n in ["d1", "d2"] {
        let mut dep = cm(n, json!({}));
        dep["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": "owner",
            "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true, "controller": true
        }]);
        assert_eq!(api.post(CMS, &dep).await.0, 201);
    }
    owner
}

#[tokio::test]
async fn background_deletion_collects_dependents() {
    let (_s, api) = server().await;
    owner_and_dependents(&api).await;
    let opts = json!({"propagationPolicy": "Background"});
    assert_eq!(
        api.delete(&format!("{DEPLOYS}/owner"), Some(&opts)).await.0,
        200
    );
    assert_eq!(api.get(&format!("{DEPLOYS}/owner")).await.0, 404);
    assert_eq!(api.get(&format!("{CMS}/d1")).await.0, 404);
    assert_eq!(api.get(&format!("{CMS}/d2")).await.0, 404);
}

#[tokio::test]
async fn foreground_deletion_removes_dependents_before_the_owner() {
    let (_s, api) = server().await;
    owner_and_dependents(&api).await;
    // a finalizer on one dependent keeps the owner waiting
    let (_, d1) = api.get(&format!("{CMS}/d1")).await;
    let mut held = d1.clone();
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    api.put(&format!("{CMS}/d1"), &held).await;
    let mut w = api
        .watch(&format!("{DEPLOYS}?watch=1&resourceVersion=0"))
        .await;
    w.next_change().await.unwrap();
    let opts = json!({"propagationPolicy": "Foreground"});
    let (code, owner) = api.delete(&format!("{DEPLOYS}/owner"), Some(&opts)).await;
    assert_eq!(code, 200);
    assert!(
        owner["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!("foregroundDeletion"))
    );
    assert_eq!(api.get(&format!("{CMS}/d2")).await.0, 404);
    assert_eq!(
        api.get(&format!("{DEPLOYS}/owner")).await.0,
        200,
        "waits for d1"
    );
    let (_, d1) = api.get(&format!("{CMS}/d1")).await;
    let mut release = d1.clone();
    release["metadata"]["finalizers"] = json!([]);
    api.put(&format!("{CMS}/d1"), &release).await;
    assert_eq!(api.get(&format!("{CMS}/d1")).await.0, 404);
    assert_eq!(api.get(&format!("{DEPLOYS}/owner")).await.0, 404);
    assert_eq!(w.next_change().await.unwrap()["type"], "MODIFIED");
    assert_eq!(w.next_change().await.unwrap()["type"], "DELETED");
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_without_the_owner_reference() {
    let (_s, api) = server().await;
    owner_and_dependents(&api).await;
    let (code, _) = api
        .delete(&format!("{DEPLOYS}/owner?propagationPolicy=Orphan"), None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(api.get(&format!("{DEPLOYS}/owner")).await.0, 404);
    let (code, d1) = api.get(&format!("{CMS}/d1")).await;
    assert_eq!(code, 200);
    assert!(
        d1["metadata"]["ownerReferences"]
            .as_array()
            .is_none_or(|r| r.is_empty())
    );
}

#[tokio::test]
async fn an_object_created_for_an_owner_that_is_gone_is_collected() {
    let (_s, api) = server().await;
    let (_, owner) = api.post(DEPLOYS, &deployment("owner")).await;
    let uid = owner["metadata"]["uid"].clone();
    assert_eq!(api.delete(&format!("{DEPLOYS}/owner"), None).await.0, 200);
    // A controller acting on a stale cache recreates the dependent of the deleted owner.
    let mut late = cm("late", json!({}));
    late["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "owner", "uid": uid,
        "controller": true
    }]);
    assert_eq!(
        api.post(CMS, &late).await.0,
        201,
        "the create itself succeeds"
    );
    assert_eq!(
        api.get(&format!("{CMS}/late")).await.0,
        404,
        "then it is collected"
    );
}

#[tokio::test]
async fn a_dangling_reference_beside_a_live_owner_is_dropped() {
    let (_s, api) = server().await;
    let (_, live) = api.post(DEPLOYS, &deployment("live")).await;
    let mut dep = cm("dep", json!({}));
    dep["metadata"]["ownerReferences"] = json!([
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "live",
         "uid": live["metadata"]["uid"]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone", "uid": "no-such-uid"}
    ]);
    assert_eq!(api.post(CMS, &dep).await.0, 201);
    let (code, dep) = api.get(&format!("{CMS}/dep")).await;
    assert_eq!(code, 200, "a live owner keeps it");
    let names: Vec<_> = dep["metadata"]["ownerReferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("live")]);
}

#[tokio::test]
async fn delete_collection_removes_only_selected_objects() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({"x": "1"}))).await;
    api.post(CMS, &cm("b", json!({"x": "1"}))).await;
    api.post(CMS, &cm("c", json!({"x": "2"}))).await;
    let (code, _) = api
        .delete(&format!("{CMS}?labelSelector=x%3D1"), None)
        .await;
    assert_eq!(code, 200);
    let (_, l) = api.get(CMS).await;
    let items = l["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"]["name"], "c");
    let (code, _) = api.delete(&format!("{CMS}?dryRun=All"), None).await;
    assert_eq!(code, 200);
    assert_eq!(api.get(CMS).await.1["items"].as_array().unwrap().len(), 1);
}
