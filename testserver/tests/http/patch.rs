use serde_json::json;

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";
const MERGE: &str = "application/merge-patch+json";
const JSONP: &str = "application/json-patch+json";
const SMP: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

#[tokio::test]
async fn merge_patch_sets_and_removes_fields() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({"x": "1"}))).await;
    let (code, obj) = api
        .patch(
            &format!("{CMS}/a"),
            MERGE,
            r#"{"data":{"k":null,"n":"2"},"metadata":{"labels":{"y":"2"}}}"#,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(obj["data"], json!({"n": "2"}));
    assert_eq!(obj["metadata"]["labels"], json!({"x": "1", "y": "2"}));
    let (code, _) = api.patch(&format!("{CMS}/missing"), MERGE, "{}").await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn json_patch_applies_ops_and_a_failing_test_is_422() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let (code, obj) = api
        .patch(&format!("{CMS}/a"), JSONP, r#"[{"op":"test","path":"/data/k","value":"v"},{"op":"replace","path":"/data/k","value":"w"}]"#)
        .await;
    assert_eq!(code, 200);
    assert_eq!(obj["data"]["k"], "w");
    let (code, status) = api
        .patch(
            &format!("{CMS}/a"),
            JSONP,
            r#"[{"op":"test","path":"/data/k","value":"nope"},{"op":"remove","path":"/data"}]"#,
        )
        .await;
    assert_eq!((code, status["kind"].as_str()), (422, Some("Status")));
    let (_, now) = api.get(&format!("{CMS}/a")).await;
    assert_eq!(now["data"]["k"], "w", "nothing applied");
    let (code, _) = api.patch(&format!("{CMS}/a"), JSONP, "{bad").await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn strategic_merge_merges_containers_by_name() {
    let (_s, api) = server().await;
    api.post(DEPLOYS, &deployment("web")).await;
    let patch =
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}"#;
    let (code, obj) = api.patch(&format!("{DEPLOYS}/web"), SMP, patch).await;
    assert_eq!(code, 200);
    let containers = obj["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(containers.len(), 2, "sidecar kept");
    assert_eq!(containers[0]["image"], "nginx:2");
    assert_eq!(obj["metadata"]["generation"], 2);
    let del =
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}"#;
    let (_, obj) = api.patch(&format!("{DEPLOYS}/web"), SMP, del).await;
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // the same list under merge patch is replaced whole
    let (_, obj) = api
        .patch(
            &format!("{DEPLOYS}/web"),
            MERGE,
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"new","image":"x"}]}}}}"#,
        )
        .await;
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"][0]["name"],
        "new"
    );
}

#[tokio::test]
async fn unknown_patch_content_type_is_415() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let (code, status) = api.patch(&format!("{CMS}/a"), "text/plain", "{}").await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
}

#[tokio::test]
async fn server_side_apply_creates_then_merges_and_records_managers() {
    let (_s, api) = server().await;
    let intent = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","labels":{"a":"1"}},"data":{"x":"1","y":"2"}}"#;
    let (code, obj) = api
        .patch(&format!("{CMS}/s?fieldManager=alice"), APPLY, intent)
        .await;
    assert_eq!(code, 201);
    let mf = &obj["metadata"]["managedFields"][0];
    assert_eq!(mf["manager"], "alice");
    assert_eq!(mf["operation"], "Apply");
    assert!(mf["fieldsV1"]["f:data"]["f:x"].is_object());
    // YAML intent dropping y: alice's field is removed
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  x: \"3\"\n";
    let (code, obj) = api
        .patch(&format!("{CMS}/s?fieldManager=alice"), APPLY, yaml)
        .await;
    assert_eq!(code, 200);
    assert_eq!(obj["data"], json!({"x": "3"}));
    assert!(obj["metadata"].get("labels").is_none());
    // bob changing alice's field conflicts, unless forced
    let bob =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"bob"}}"#;
    let (code, status) = api
        .patch(&format!("{CMS}/s?fieldManager=bob"), APPLY, bob)
        .await;
    assert_eq!((code, status["reason"].as_str()), (409, Some("Conflict")));
    assert!(status["message"].as_str().unwrap().contains("alice"));
    let (code, obj) = api
        .patch(&format!("{CMS}/s?fieldManager=bob&force=true"), APPLY, bob)
        .await;
    assert_eq!(code, 200);
    assert_eq!(obj["data"]["x"], "bob");
    let managers: Vec<&str> = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["bob"], "alice lost her only field");
    let (code, _) = api.patch(&format!("{CMS}/s"), APPLY, bob).await;
    assert_eq!(code, 400, "fieldManager is required");
}

#[tokio::test]
async fn apply_merges_containers_by_name_for_builtin_types() {
    let (_s, api) = server().await;
    api.post(
        &format!("{DEPLOYS}?fieldManager=creator"),
        &deployment("web"),
    )
    .await;
    let intent = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "extra", "image": "e:1"}]}}}});
    let (code, obj) = api
        .patch(
            &format!("{DEPLOYS}/web?fieldManager=other"),
            APPLY,
            &intent.to_string(),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn patching_status_and_scale_subresources() {
    let (_s, api) = server().await;
    api.post(DEPLOYS, &deployment("web")).await;
    let (code, obj) = api
        .patch(
            &format!("{DEPLOYS}/web/status"),
            MERGE,
            r#"{"status":{"replicas":1},"spec":{"replicas":7}}"#,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(obj["status"]["replicas"], 1);
    assert_eq!(obj["spec"]["replicas"], 1);
    let (code, scale) = api.get(&format!("{DEPLOYS}/web/scale")).await;
    assert_eq!(code, 200);
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 1);
    assert_eq!(scale["status"]["selector"], "app=web");
    let (code, scale) = api
        .patch(
            &format!("{DEPLOYS}/web/scale"),
            MERGE,
            r#"{"spec":{"replicas":4}}"#,
        )
        .await;
    assert_eq!((code, scale["spec"]["replicas"].as_i64()), (200, Some(4)));
    let (_, d) = api.get(&format!("{DEPLOYS}/web")).await;
    assert_eq!(d["spec"]["replicas"], 4);
    let (code, _) = api
        .get("/api/v1/namespaces/default/configmaps/x/status")
        .await;
    assert_eq!(code, 404);
}
