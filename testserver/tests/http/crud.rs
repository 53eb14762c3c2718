use serde_json::json;

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn discovery_serves_groups_versions_and_resources() {
    let (_s, api) = server().await;
    let (code, v) = api.get("/api").await;
    assert_eq!((code, v["versions"][0].as_str()), (200, Some("v1")));
    let (_, core) = api.get("/api/v1").await;
    let names: Vec<&str> = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for n in [
        "pods",
        "pods/status",
        "configmaps",
        "namespaces",
        "nodes",
        "events",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    let (_, groups) = api.get("/apis").await;
    let gnames: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    for g in [
        "apps",
        "batch",
        "coordination.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(gnames.contains(&g), "{g}");
    }
    let (_, apps) = api.get("/apis/apps").await;
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
    let (_, appsv1) = api.get("/apis/apps/v1").await;
    assert!(
        appsv1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "deployments/scale")
    );
    let (code, version) = api.get("/version").await;
    assert_eq!(code, 200);
    assert_eq!(version["major"], "1");
    let (code, status) = api.get("/apis/nope.example.com/v1").await;
    assert_eq!((code, status["kind"].as_str()), (404, Some("Status")));
}

#[tokio::test]
async fn system_namespaces_exist() {
    let (_s, api) = server().await;
    let (_, list) = api.get("/api/v1/namespaces").await;
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    assert_eq!(list["items"][0]["status"]["phase"], "Active");
}

#[tokio::test]
async fn create_returns_201_with_uid_timestamp_and_generation() {
    let (_s, api) = server().await;
    let (code, obj) = api.post(CMS, &cm("a", json!({}))).await;
    assert_eq!(code, 201);
    assert!(!obj["metadata"]["uid"].as_str().unwrap().is_empty());
    assert!(
        obj["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(obj["metadata"]["namespace"], "default");
    let (code, dep) = api
        .post(
            "/apis/apps/v1/namespaces/default/deployments",
            &deployment("web"),
        )
        .await;
    assert_eq!(code, 201);
    assert_eq!(dep["metadata"]["generation"], 1);
    let (code, got) = api.get(&format!("{CMS}/a")).await;
    assert_eq!(code, 200);
    assert_eq!(got, obj);
}

#[tokio::test]
async fn create_twice_is_409_already_exists_status() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let (code, status) = api.post(CMS, &cm("a", json!({}))).await;
    assert_eq!(code, 409);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "AlreadyExists");
    assert_eq!(status["details"]["name"], "a");
    assert_eq!(status["details"]["kind"], "configmaps");
}

#[tokio::test]
async fn get_missing_is_404_not_found_status() {
    let (_s, api) = server().await;
    let (code, status) = api.get(&format!("{CMS}/missing")).await;
    assert_eq!(code, 404);
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["message"], "configmaps \"missing\" not found");
}

#[tokio::test]
async fn generate_name_appends_a_random_suffix() {
    let (_s, api) = server().await;
    let body = json!({"metadata": {"generateName": "job-"}, "data": {}});
    let (code, a) = api.post(CMS, &body).await;
    let (_, b) = api.post(CMS, &body).await;
    assert_eq!(code, 201);
    let (na, nb) = (
        a["metadata"]["name"].as_str().unwrap(),
        b["metadata"]["name"].as_str().unwrap(),
    );
    assert!(na.starts_with("job-") && na.len() == 9);
    assert_ne!(na, nb);
}

#[tokio::test]
async fn update_with_stale_resource_version_is_409_conflict() {
    let (_s, api) = server().await;
    let (_, obj) = api.post(CMS, &cm("a", json!({}))).await;
    let mut first = obj.clone();
    first["data"]["k"] = json!("1");
    let (code, updated) = api.put(&format!("{CMS}/a"), &first).await;
    assert_eq!(code, 200);
    assert!(rv(&updated) > rv(&obj));
    let mut stale = obj.clone();
    stale["data"]["k"] = json!("2");
    let (code, status) = api.put(&format!("{CMS}/a"), &stale).await;
    assert_eq!(code, 409);
    assert_eq!(status["reason"], "Conflict");
    let (_, now) = api.get(&format!("{CMS}/a")).await;
    assert_eq!(now["data"]["k"], "1");
}

#[tokio::test]
async fn update_without_resource_version_is_unconditional() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let mut body = cm("a", json!({}));
    body["data"]["k"] = json!("x");
    let (code, obj) = api.put(&format!("{CMS}/a"), &body).await;
    assert_eq!(code, 200);
    assert_eq!(obj["data"]["k"], "x");
}

#[tokio::test]
async fn noop_update_keeps_the_resource_version() {
    let (_s, api) = server().await;
    let (_, obj) = api.post(CMS, &cm("a", json!({}))).await;
    let (_, same) = api.put(&format!("{CMS}/a"), &obj).await;
    assert_eq!(rv(&same), rv(&obj));
}

#[tokio::test]
async fn status_subresource_splits_spec_from_status() {
    let (_s, api) = server().await;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let mut d = deployment("web");
    d["status"] = json!({"replicas": 5});
    let (_, created) = api.post(path, &d).await;
    assert!(
        created.get("status").is_none(),
        "status is dropped on create"
    );
    // main resource: status changes ignored, spec change bumps generation
    let mut upd = created.clone();
    upd["status"] = json!({"replicas": 3});
    upd["spec"]["replicas"] = json!(2);
    let (code, after) = api.put(&format!("{path}/web"), &upd).await;
    assert_eq!(code, 200);
    assert!(after.get("status").is_none());
    assert_eq!(after["metadata"]["generation"], 2);
    // status subresource: only status changes, generation stays
    let mut st = after.clone();
    st["status"] = json!({"replicas": 2});
    st["spec"]["replicas"] = json!(9);
    let (code, after2) = api.put(&format!("{path}/web/status"), &st).await;
    assert_eq!(code, 200);
    assert_eq!(after2["status"]["replicas"], 2);
    assert_eq!(after2["spec"]["replicas"], 2);
    assert_eq!(after2["metadata"]["generation"], 2);
    // labels-only change does not bump generation
    let mut lab = after2.clone();
    lab["metadata"]["labels"] = json!({"x": "y"});
    let (_, after3) = api.put(&format!("{path}/web"), &lab).await;
    assert_eq!(after3["metadata"]["generation"], 2);
}

#[tokio::test]
async fn bad_input_is_rejected_and_nothing_is_stored() {
    let (_s, api) = server().await;
    let (code, status) = api
        .send("POST", CMS, Some(b"{not json".to_vec()), "application/json")
        .await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
    let (code, _) = api
        .post(
            CMS,
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(code, 400, "kind mismatch");
    let (code, _) = api
        .post(
            CMS,
            &json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(code, 400, "apiVersion mismatch");
    let (code, _) = api
        .post(
            CMS,
            &json!({"metadata": {"name": "x", "namespace": "kube-system"}}),
        )
        .await;
    assert_eq!(code, 400, "namespace mismatch");
    let (code, status) = api
        .post(CMS, &json!({"metadata": {"name": "Not_Valid"}}))
        .await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
    let (code, _) = api.post(CMS, &json!({"metadata": {}})).await;
    assert_eq!(code, 422, "missing name");
    let (code, _) = api
        .post(CMS, &json!({"metadata": {"name": "x", "labels": {"a": 1}}}))
        .await;
    assert_eq!(code, 422, "non-string label");
    api.post(CMS, &cm("real", json!({}))).await;
    let (code, _) = api
        .put(&format!("{CMS}/real"), &cm("other", json!({})))
        .await;
    assert_eq!(code, 400, "name mismatch with URL");
    let (code, _) = api
        .send("POST", CMS, Some(b"[1,2]".to_vec()), "application/json")
        .await;
    assert_eq!(code, 400);
    let (code, _) = api
        .send(
            "POST",
            CMS,
            Some(b"x".to_vec()),
            "application/vnd.kubernetes.protobuf",
        )
        .await;
    // apimachinery protobuf.go: "provided data does not appear to be a protobuf message"
    assert_eq!(code, 400);
    let (code, _) = api
        .send("POST", CMS, Some(b"x".to_vec()), "text/plain")
        .await;
    assert_eq!(code, 415);
    let (_, list) = api.get(CMS).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn create_in_a_missing_namespace_is_404() {
    let (_s, api) = server().await;
    let (code, status) = api
        .post("/api/v1/namespaces/nope/configmaps", &cm("a", json!({})))
        .await;
    assert_eq!(code, 404);
    assert_eq!(status["details"]["kind"], "namespaces");
}

#[tokio::test]
async fn finalizers_hold_deletion_until_the_last_one_is_removed() {
    let (_s, api) = server().await;
    let mut body = cm("f", json!({}));
    body["metadata"]["finalizers"] = json!(["example.com/a", "example.com/b"]);
    api.post(CMS, &body).await;
    let (code, obj) = api.delete(&format!("{CMS}/f"), None).await;
    assert_eq!(code, 200);
    assert!(obj["metadata"]["deletionTimestamp"].is_string());
    let (code, still) = api.get(&format!("{CMS}/f")).await;
    assert_eq!(code, 200);
    let mut upd = still.clone();
    upd["metadata"]["finalizers"] = json!(["example.com/b", "example.com/new"]);
    let (code, _) = api.put(&format!("{CMS}/f"), &upd).await;
    assert_eq!(code, 422, "no new finalizers while deleting");
    upd["metadata"]["finalizers"] = json!(["example.com/b"]);
    let (code, after) = api.put(&format!("{CMS}/f"), &upd).await;
    assert_eq!(code, 200);
    upd = after.clone();
    upd["metadata"]["finalizers"] = json!([]);
    let (code, _) = api.put(&format!("{CMS}/f"), &upd).await;
    assert_eq!(code, 200);
    let (code, _) = api.get(&format!("{CMS}/f")).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn delete_preconditions_and_missing_objects() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let pre =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "wrong"}});
    let (code, status) = api.delete(&format!("{CMS}/a"), Some(&pre)).await;
    assert_eq!((code, status["reason"].as_str()), (409, Some("Conflict")));
    let (code, _) = api.delete(&format!("{CMS}/a"), None).await;
    assert_eq!(code, 200);
    let (code, _) = api.delete(&format!("{CMS}/a"), None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn dry_run_changes_nothing() {
    let (s, api) = server().await;
    let before = s.engine().store().current_rv();
    let (code, obj) = api
        .post(&format!("{CMS}?dryRun=All"), &cm("d", json!({})))
        .await;
    assert_eq!(code, 201);
    assert_eq!(obj["metadata"]["name"], "d");
    let (code, _) = api.get(&format!("{CMS}/d")).await;
    assert_eq!(code, 404);
    api.post(CMS, &cm("d", json!({}))).await;
    let (code, _) = api.delete(&format!("{CMS}/d?dryRun=All"), None).await;
    assert_eq!(code, 200);
    let (code, _) = api.get(&format!("{CMS}/d")).await;
    assert_eq!(code, 200);
    assert_eq!(s.engine().store().current_rv(), before + 1);
    let (code, _) = api
        .post(&format!("{CMS}?dryRun=Bogus"), &cm("e", json!({})))
        .await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn cluster_scoped_resources_ignore_namespaces() {
    let (_s, api) = server().await;
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
    let (code, obj) = api.post("/api/v1/nodes", &node).await;
    assert_eq!(code, 201);
    assert!(obj["metadata"].get("namespace").is_none());
    let (code, _) = api.get("/api/v1/nodes/n1").await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn deleting_a_namespace_removes_its_objects() {
    let (_s, api) = server().await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tmp"}});
    assert_eq!(api.post("/api/v1/namespaces", &ns).await.0, 201);
    api.post("/api/v1/namespaces/tmp/configmaps", &cm("a", json!({})))
        .await;
    let (code, _) = api.delete("/api/v1/namespaces/tmp", None).await;
    assert_eq!(code, 200);
    assert_eq!(api.get("/api/v1/namespaces/tmp").await.0, 404);
    assert_eq!(api.get("/api/v1/namespaces/tmp/configmaps/a").await.0, 404);
}

#[tokio::test]
async fn unsupported_methods_are_405_method_not_allowed() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    let (code, status) = api.post(&format!("{CMS}/a"), &cm("a", json!({}))).await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
    let (code, _) = api.put(CMS, &cm("a", json!({}))).await;
    assert_eq!(code, 405);
}

#[tokio::test]
async fn dry_run_updates_and_patches_change_nothing() {
    let (_s, api) = server().await;
    let (_, obj) = api.post(CMS, &cm("a", json!({}))).await;
    let mut upd = obj.clone();
    upd["data"]["k"] = json!("dry");
    let (code, shown) = api.put(&format!("{CMS}/a?dryRun=All"), &upd).await;
    assert_eq!((code, shown["data"]["k"].as_str()), (200, Some("dry")));
    // Nothing was written, so the answer carries the current resourceVersion
    // (apiserver `pkg/registry/generic/registry/dryrun.go` GuaranteedUpdate); `kubectl
    // diff` shows no resourceVersion change.
    let rv = &obj["metadata"]["resourceVersion"];
    assert_eq!(&shown["metadata"]["resourceVersion"], rv);
    let (code, shown) = api
        .patch(
            &format!("{CMS}/a?dryRun=All"),
            "application/merge-patch+json",
            r#"{"data":{"k":"dry2"}}"#,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(&shown["metadata"]["resourceVersion"], rv);
    // Server-side apply under dryRun=All (`kubectl apply --server-side --dry-run=server`).
    let (code, shown) = api
        .patch(
            &format!("{CMS}/a?dryRun=All&fieldManager=tester&force=true"),
            "application/apply-patch+yaml",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"applied"}}"#,
        )
        .await;
    assert_eq!((code, shown["data"]["k"].as_str()), (200, Some("applied")));
    assert!(
        shown["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["manager"] == "tester" && m["operation"] == "Apply"),
        "{shown}"
    );
    let (_, now) = api.get(&format!("{CMS}/a")).await;
    assert_eq!(now, obj);
}
